import type { Client } from '@lock-service/client'
import type { Options } from './args.js'
import { call } from './answers.js'
import type { Print } from './commands.js'
import { CliError, EXIT } from './exit.js'

/**
 * `lockctl check KEY FENCE`: GET /locks/KEY/fence/FENCE (/rwlocks with --rw, /semaphores with
 * --semaphore, /elections with --election: FENCE is a term); prints the answer as JSON and exits 0
 * when the fence is a live hold's (the leader's term), 1 when not.
 */
export async function check(client: Client, o: Options, print: Print): Promise<number> {
  const kind = o.election ? 'leader' : o.rw ? 'write' : o.semaphore ? 'permit' : 'exclusive'
  const context = `check ${o.lockKey} ${o.fence}${o.election ? ' (election)' : o.rw ? ' (rw)' : o.semaphore ? ' (semaphore)' : ''}`
  const answer = await call(context, () => client.checkFence(kind, o.lockKey, o.fence ?? 0))
  if (typeof answer.current !== 'boolean') throw new CliError(EXIT.protocol, `${context}: the answer lacks current`)
  print(JSON.stringify(answer))
  return answer.current ? EXIT.ok : EXIT.failed
}
