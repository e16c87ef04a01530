import { Writable } from 'node:stream'
import { buildApp, type App } from '../src/app.js'
import { configFrom, type Config } from '../src/config.js'
import { listenForProbes } from '../src/http/probe-listener.js'

export interface TestApp {
  app: App
  config: Config
  /** Every log line the app wrote so far, parsed. */
  logs(): Record<string, unknown>[]
  /** The raw log text (for "never contains the token" assertions). */
  logText(): string
}

/** A real app (real Redis, real routes) for `app.inject`, closed at the end of the test. */
export async function startApp(
  t: { teardown(fn: () => unknown): void },
  redisUrls: readonly string[],
  overrides: Partial<Config> = {},
): Promise<TestApp> {
  const lines: string[] = []
  const logStream = new Writable({
    write(chunk: Buffer, _enc, done) {
      lines.push(...chunk.toString().split('\n').filter(Boolean))
      done()
    },
  })
  const config = configFrom({ logLevel: 'info', nodeTimeoutMs: 300, ...overrides, redisUrls })
  const app = await buildApp(config, { logStream })
  t.teardown(() => app.close())
  return {
    app,
    config,
    logs: () => lines.map((l) => JSON.parse(l) as Record<string, unknown>),
    logText: () => lines.join('\n'),
  }
}

/**
 * startApp, also listening on a free loopback port: for clients that speak real HTTP to it. With a
 * `probePort` (0: a free one) the probe port listens too, as src/server.ts starts it: `probeAddress`.
 */
export async function startListening(
  t: { teardown(fn: () => unknown): void },
  redisUrls: readonly string[],
  overrides: Partial<Config> = {},
): Promise<TestApp & { address: string; probeAddress?: string }> {
  const started = await startApp(t, redisUrls, overrides)
  const address = await started.app.listen({ port: 0, host: '127.0.0.1' })
  const { probePort, bodyTimeoutMs } = started.config
  if (probePort === null) return { ...started, address }
  const probes = await listenForProbes(started.app, { port: probePort, host: '127.0.0.1', requestTimeoutMs: bodyTimeoutMs })
  t.teardown(() => probes.close())
  return { ...started, address, probeAddress: probes.address }
}
