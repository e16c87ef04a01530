import type { Options } from './args.js'
import type { LockServiceClient } from './client.js'
import { failure } from './client.js'
import { call, REQUEST_TIMEOUT_MS, type Print } from './commands.js'
import { CliError, EXIT } from './exit.js'

/**
 * `lockctl check KEY FENCE`: GET /locks/KEY/fence/FENCE (/rwlocks with --rw, /semaphores with
 * --semaphore); prints the answer as JSON and exits 0 when the fence is a live hold's, 1 when not.
 */
export async function check(client: LockServiceClient, o: Options, print: Print): Promise<number> {
  const namespace = o.rw ? 'rwlocks' : o.semaphore ? 'semaphores' : 'locks'
  const context = `check ${o.lockKey} ${o.fence}${o.rw ? ' (rw)' : o.semaphore ? ' (semaphore)' : ''}`
  const path = `/${namespace}/${encodeURIComponent(o.lockKey)}/fence/${o.fence}`
  const reply = await call(client, context, 'GET', path, { timeoutMs: REQUEST_TIMEOUT_MS })
  if (reply.status !== 200) throw failure(context, reply)
  if (typeof reply.body.current !== 'boolean') throw new CliError(EXIT.protocol, `${context}: the answer lacks current`)
  print(JSON.stringify(reply.body))
  return reply.body.current ? EXIT.ok : EXIT.failed
}
