import { Command, Pipeline } from 'ioredis'
import { NodeError } from './errors.js'
import { runScript, type CallArgs, type LoadedScript, type ScriptSender } from './script-call.js'
import { isCluster, type RedisClient } from './topology.js'

/**
 * The script, then `WAIT replicas waitMs` on the connection it ran on (WAIT counts the replicas
 * that have this connection's writes). A change not confirmed by enough replicas fails like an
 * unreachable node: the engine rolls an attempt back and answers 503.
 */
export async function runConfirmed(
  client: RedisClient,
  script: LoadedScript,
  args: CallArgs,
  confirm: { replicas: number; waitMs: number; changed: (reply: unknown) => boolean },
): Promise<unknown> {
  let waited: Promise<unknown> | undefined
  // After a NOSCRIPT the script is sent again, with a WAIT of its own: the last WAIT is the one that counts.
  const withWait: ScriptSender = (c, call) => {
    const sent = sendWithWait(c, call, confirm.replicas, confirm.waitMs)
    waited = sent.waited
    waited.catch(() => undefined)
    return sent.reply
  }
  const reply = await runScript(client, script, args, withWait)
  if (!confirm.changed(reply)) return reply
  const acked = Number(await (waited ?? Promise.reject(new Error('no reply to WAIT'))))
  if (acked < confirm.replicas) {
    throw new NodeError(
      'unavailable',
      `only ${acked} of ${confirm.replicas} replicas confirmed the write within ${confirm.waitMs} ms (REDIS_WAIT_REPLICAS)`,
    )
  }
  return reply
}

function sendWithWait(
  client: RedisClient,
  call: Command,
  replicas: number,
  waitMs: number,
): { reply: Promise<unknown>; waited: Promise<unknown> } {
  const wait = new Command('wait', [String(replicas), String(waitMs)])
  if (!isCluster(client)) {
    // One Redis client is one connection: commands sent one after the other are written in order.
    void client.sendCommand(call)
    void client.sendCommand(wait)
    return { reply: call.promise, waited: wait.promise }
  }
  // A cluster routes a command by the slot of its keys, and WAIT has none. A pipeline goes to the
  // master of its commands' slot, written in one piece, and follows a MOVED or ASK as a whole.
  const pipeline = new Pipeline(client)
  pipeline.sendCommand(call)
  pipeline.sendCommand(wait)
  const results = (pipeline as unknown as { exec(): Promise<[Error | null, unknown][] | null> }).exec()
  return { reply: results.then((r) => resultAt(r, 0)), waited: results.then((r) => resultAt(r, 1)) }
}

function resultAt(results: [Error | null, unknown][] | null, index: number): unknown {
  const [err, value] = results?.[index] ?? [new Error('no reply')]
  if (err) throw err
  return value
}
