#!/usr/bin/env bash
# `npm run serve`: installs what is missing, builds when the sources changed, and starts the service
# on 127.0.0.1:${PORT:-8080} (set HOST to listen elsewhere).
#
# Redis: REDIS_URLS / REDIS_URL when set. Otherwise 127.0.0.1:${LOCAL_REDIS_PORT:-6379}: a Redis
# already there is used if it answers PING with PONG (a Redis that wants a password stops serve
# with the reason); otherwise serve starts a redis-server there (no persistence, files in
# .redis-dev/PORT, removed after) and stops it again with the service. If that redis-server cannot
# start (the port is taken by something else, ...), serve stops with its reason.
#
# SIGTERM or SIGINT — to this script or to the npm process running it (package.json runs it with
# exec, so npm's forwarded signal arrives here), or npm dying — stop the service (it drains), then
# the redis-server serve started. Every variable this reads is listed in docs/getting-started.md.
set -euo pipefail
cd "$(dirname "$0")/.."

say() { echo "serve: $*" >&2; }
die() {
  say "$*"
  exit 1
}

export HOST="${HOST:-127.0.0.1}"
parent=$PPID
redis_pid=""
service_pid=""
watchdog_pid=""
dir=""

stop_all() {
  trap - EXIT INT TERM
  if [ -n "$service_pid" ] && kill -0 "$service_pid" 2>/dev/null; then
    kill -TERM "$service_pid" 2>/dev/null || true
    wait "$service_pid" 2>/dev/null || true
  fi
  if [ -n "$redis_pid" ] && kill -0 "$redis_pid" 2>/dev/null; then
    say "stopping the redis-server it started (pid $redis_pid)"
    kill -TERM "$redis_pid" 2>/dev/null || true
    wait "$redis_pid" 2>/dev/null || true
  fi
  if [ -n "$dir" ]; then
    rm -rf "$dir"
    rmdir "$PWD/.redis-dev" 2>/dev/null || true
  fi
  if [ -n "$watchdog_pid" ]; then kill "$watchdog_pid" 2>/dev/null || true; fi
}
trap stop_all EXIT
trap 'stop_all; exit 143' TERM
trap 'stop_all; exit 130' INT

# npm killed outright (no signal forwarded): stop as if it had sent SIGTERM.
(
  while kill -0 "$parent" 2>/dev/null; do sleep 1; done
  kill -TERM $$ 2>/dev/null
) &
watchdog_pid=$!

bash scripts/ensure-deps.sh

if [ -z "${REDIS_URLS:-}" ] && [ -z "${REDIS_URL:-}" ]; then
  port="${LOCAL_REDIS_PORT:-6379}"
  [[ "$port" =~ ^[0-9]+$ ]] || die "LOCAL_REDIS_PORT must be a port number (got \"$port\")"
  export REDIS_URLS="redis://127.0.0.1:${port}"
  answer="$(timeout 3 redis-cli -h 127.0.0.1 -p "$port" ping 2>&1 || true)"
  if [ "$answer" = "PONG" ]; then
    say "using the Redis that answers on 127.0.0.1:${port}"
  elif [[ "$answer" =~ ^(NOAUTH|WRONGPASS|ERR|NOPERM) ]]; then
    die "the Redis on 127.0.0.1:${port} refuses PING (${answer}); give its password in REDIS_URLS (redis://:PASSWORD@127.0.0.1:${port}), or set LOCAL_REDIS_PORT to a free port"
  else
    dir="$PWD/.redis-dev/${port}"
    mkdir -p "$dir"
    log="$dir/redis-server.log"
    redis-server --port "$port" --bind 127.0.0.1 --save "" --appendonly no --dir "$dir" --logfile "" --loglevel warning >"$log" 2>&1 &
    redis_pid=$!
    answer=""
    for _ in $(seq 50); do
      kill -0 "$redis_pid" 2>/dev/null || break
      answer="$(timeout 1 redis-cli -h 127.0.0.1 -p "$port" ping 2>&1 || true)"
      [ "$answer" = "PONG" ] && break
      sleep 0.1
    done
    if [ "$answer" != "PONG" ]; then
      if kill -0 "$redis_pid" 2>/dev/null; then
        reason="it does not answer PING with PONG within 5 s (${answer:-no answer})"
      else
        wait "$redis_pid" 2>/dev/null || true
        reason="$(grep -v '^\s*$' "$log" | tail -n 3 | tr '\n' ' ')"
        redis_pid=""
      fi
      die "could not start a redis-server on 127.0.0.1:${port}: ${reason:-it exited}. Is the port taken? Set LOCAL_REDIS_PORT to a free port, or REDIS_URLS to your Redis"
    fi
    say "started a local redis-server on 127.0.0.1:${port} (pid ${redis_pid}; stopped with the service)"
  fi
fi

# Build when anything the build reads is newer than its output.
if [ ! -f dist/server.js ] || [ ! -f clients/typescript/dist/index.js ] ||
  [ -n "$(find src scripts clients/typescript/src tsconfig.json tsconfig.build.json package-lock.json -newer dist/server.js -print -quit)" ]; then
  say "building"
  npm run --silent build
fi

node --max-semi-space-size=32 dist/server.js &
service_pid=$!
status=0
wait "$service_pid" || status=$?
service_pid=""
exit "$status"
