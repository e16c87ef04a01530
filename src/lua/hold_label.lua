-- hold_label.lua — label a hold that was handed to a waiter (include/queue.lua hand_off gives it the
-- waiter's token and TTL only): its owner, and the session it is bound to. An attempt labels its own
-- grants (acquire.lua ARGV[13], ARGV[14]).
--
--@keys 1
-- (the lock's hash; the rest are named from it: include/lock_keys.lua)
--@include lock_keys
-- KEYS[1] lock hash, KEYS[2] readers zset (include/holds.lua), KEYS[3] fence counter,
-- KEYS[4..6] the line (include/queue.lua)
-- ARGV[1] mode: 'read' | 'write' | 'permit'   ARGV[2] token   ARGV[3] owner, ''
-- ARGV[4] session reference, ''
--
-- Returns  { LABELLED }
--          { NOT_FOUND }   this token holds nothing here in this mode
--@include holds
--@include label

--@include plain

local mode, tok = ARGV[1], ARGV[2]
local now = now_ms()
promote(now)
prune(now)
if mode == 'write' then
  if redis.call('HGET', KEYS[1], 'w') ~= tok then return { NOT_FOUND } end
elseif not get_reader(tok) then
  return { NOT_FOUND }
end
label(mode, tok, ARGV[3], ARGV[4])
return { LABELLED }
