/** lockctl's election commands (elect, leader, observe) and their options, added to the program by args.ts. */
import { type Command, InvalidArgumentError, Option } from 'commander'
import { lockKeyRule, ownerRule } from '../contract/patterns.js'

export type ElectionCommand = 'elect' | 'leader' | 'observe'

/** The most a leader's value may take (the service's limit), in bytes of UTF-8. */
const MAX_VALUE_BYTES = 4096

export const ELECTION_EXIT_CODES = `
  elect exits as run does (CMD's code; 70: leadership lost while CMD ran, CMD stopped; 75: not elected
  within --wait); with --requeue it campaigns again after each term and ends only by a signal
  (128+N) or an error that retrying cannot fix. leader: 1 when there is no leader.
  observe: 0 when stopped by SIGINT or SIGTERM.`

const ELECT = `Campaign to lead the election NAME; run CMD only while leader.
CMD gets LOCK_NAME, LOCK_TERM (the term: a fencing token, pass it to what you write to), LOCK_TOKEN
(the leader token) and LOCK_CANDIDATE in its environment.
The leadership is bound to a session kept alive in the background (every third of its validity) and
watched (GET …/watch), as run does for a lock: when it is lost (force-released, expired, the service
says it is gone, or renewals fail until the validity runs out), CMD's process group gets SIGTERM at
once, then SIGKILL after --grace.
Without --requeue: exits with CMD's code once it ends (after resigning), 70 when leadership was lost,
75 when not elected within --wait. With --requeue: campaigns again (waiting in line up to --wait each
time, retrying while the service is unavailable) whenever CMD ends or leadership is lost; a signal ends
the loop (forwarded to CMD when one runs).`

const LEADER = `Print the leader of NAME as one line: CANDIDATE term=T since=ISO remainingMs=R [value=VALUE]
(value= is the last field and may contain spaces), or with --json the leader as JSON.
Exits 1 (and says so on stderr) when there is no leader.`

const OBSERVE = `Print each change of NAME's leadership as one line, until stopped (SIGINT, SIGTERM):
  elected term=T candidate=C [value=V]     proclaimed term=T [value=V]
  vacant term=T [reason=R]                 resync term=T candidate=C [value=V] | resync term=T vacant
The first line is the current state. A resync replaces what was shown before (the stream may have
missed something). With --json, each event as one line of JSON ({ event, term, ... }). A lost
connection or an unavailable service is retried (said once on stderr).`

type Validate = (value: string) => string

/** Adds elect, leader and observe to lockctl's program through its `command` factory. */
export function addElectionCommands(
  command: (name: string, summary: string) => Command,
  v: { duration: Validate; matching: (rule: { pattern: RegExp; text: string }) => Validate },
): void {
  const withName = (name: string, summary: string) =>
    command(name, summary).argument('<NAME>', `the election (${lockKeyRule.text})`, v.matching(lockKeyRule))
  withName('elect', 'campaign to lead NAME, run CMD while leader, stop it the moment leadership is lost')
    .usage('[options] <NAME> -- CMD [ARGS...]')
    .description(ELECT)
    .allowExcessArguments() // CMD before `--`: said in parse, with the fix
    .addOption(
      new Option('--candidate <id>', `who campaigns, shown to observers (${ownerRule.text})`)
        .argParser(v.matching(ownerRule))
        .makeOptionMandatory(),
    )
    .addOption(new Option('--value <value>', `what the leader announces (at most ${MAX_VALUE_BYTES} bytes)`).argParser(value))
    .addOption(new Option('--ttl <duration>', "the leadership's lease (default: the service's)").argParser(v.duration))
    .addOption(
      new Option('--wait <duration>', 'wait in line up to this long while another leads (default: 0, try once)').argParser(v.duration),
    )
    .addOption(new Option('--requeue', 'campaign again whenever CMD ends or leadership is lost'))
    .addOption(
      new Option('--grace <duration>', 'how long CMD may take to exit after SIGTERM when leadership is lost (default: 3s)').argParser(
        v.duration,
      ),
    )
  withName('leader', "print NAME's leader; exit 1 when there is none").description(LEADER).option('--json', 'print the leader as JSON')
  withName('observe', "print each change of NAME's leadership as one line, until stopped")
    .description(OBSERVE)
    .option('--json', 'print each event as one line of JSON')
}

function value(text: string): string {
  if (Buffer.byteLength(text, 'utf8') > MAX_VALUE_BYTES) throw new InvalidArgumentError(`at most ${MAX_VALUE_BYTES} bytes`)
  return text
}
