import type { Client } from '@lock-service/client'
import type { Options } from './args.js'
import { call } from './answers.js'
import type { Print } from './commands.js'
import { CliError, EXIT } from './exit.js'

/** The service's answer to a fence check. */
interface FenceCheck {
  current: boolean
  fence: number | null
  held: boolean
}

/**
 * `lockctl check KEY FENCE`: GET /locks/KEY/fence/FENCE (/rwlocks with --rw, /semaphores with
 * --semaphore); prints the answer as JSON and exits 0 when the fence is a live hold's, 1 when not.
 * Through the client library's transport: the library has no fence check of its own yet.
 */
export async function check(client: Client, o: Options, print: Print): Promise<number> {
  const namespace = o.rw ? 'rwlocks' : o.semaphore ? 'semaphores' : 'locks'
  const context = `check ${o.lockKey} ${o.fence}${o.rw ? ' (rw)' : o.semaphore ? ' (semaphore)' : ''}`
  const path = `/${namespace}/${encodeURIComponent(o.lockKey)}/fence/${o.fence}`
  const answer = await call(context, () => client.transport.json<FenceCheck>({ method: 'GET', path }))
  if (typeof answer.current !== 'boolean') throw new CliError(EXIT.protocol, `${context}: the answer lacks current`)
  print(JSON.stringify(answer))
  return answer.current ? EXIT.ok : EXIT.failed
}
