import { buildApp } from './app.js'
import { ConfigError, loadConfig } from './config.js'

/** config → buildApp → listen; SIGTERM/SIGINT drain in-flight requests, then close Redis. */
async function main(): Promise<void> {
  let config
  try {
    config = loadConfig()
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`lock-service: ${err.message}\n`)
      process.exit(2)
    }
    throw err
  }

  const app = await buildApp(config)
  let stopping = false
  const stop = async (signal: string) => {
    if (stopping) return
    stopping = true
    app.log.info({ signal }, 'shutting down')
    const force = setTimeout(() => {
      app.log.error('shutdown took too long; exiting')
      process.exit(1)
    }, 10_000)
    force.unref()
    await app.close()
    process.exit(0)
  }
  process.on('SIGTERM', () => void stop('SIGTERM'))
  process.on('SIGINT', () => void stop('SIGINT'))

  await app.listen({ port: config.port, host: config.host })
  const mode = config.redisUrls.length === 1 ? 'single' : 'quorum'
  const up = app.quorum.nodes.filter((n) => n.up)
  if (up.length >= app.quorum.majority) {
    app.log.info({ nodes: app.quorum.nodes.map((n) => n.address), mode }, 'lock-service ready')
  } else {
    // Listening (so /readyz can say why), but every lock call answers 503 until a majority is up.
    const nodes = app.quorum.nodes.map((n) => ({ index: n.index, address: n.address, up: n.up, lastError: n.health.lastError }))
    const why = nodes
      .filter((n) => !n.up)
      .map((n) => `node ${n.index} at ${n.address}: ${n.lastError ? `${n.lastError.reason}: ${n.lastError.message}` : 'not connected yet'}`)
      .join('; ')
    app.log.warn({ nodes, mode }, `lock-service listening, but cannot grant locks: ${up.length} of ${nodes.length} Redis nodes up, ${app.quorum.majority} needed (${why})`)
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`lock-service: failed to start: ${err instanceof Error ? err.message : String(err)}\n`)
  process.exit(1)
})
