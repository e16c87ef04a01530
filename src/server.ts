import { buildApp } from './app.js'
import { type Config, ConfigError, loadConfig } from './config.js'
import { listenForProbes, type ProbeListener } from './http/probe-listener.js'

/** config → buildApp → listen; SIGTERM/SIGINT drain in-flight requests, then close Redis. */
async function main(): Promise<void> {
  let config: Config
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
  let probes: ProbeListener | undefined
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
    // The probe port answers through the drain (readiness 503 shutting_down), then closes.
    await app.close()
    await probes?.close()
    process.exit(0)
  }
  process.on('SIGTERM', () => void stop('SIGTERM'))
  process.on('SIGINT', () => void stop('SIGINT'))

  await app.listen({ port: config.port, host: config.host })
  if (config.probePort !== null) {
    probes = await listenForProbes(app, { port: config.probePort, host: config.host, requestTimeoutMs: config.bodyTimeoutMs })
    app.log.info({ address: probes.address }, 'probe port listening (plain HTTP: /healthz, /readyz, /metrics)')
  }
  const mode = config.redisUrls.length === 1 ? 'single' : 'quorum'
  const voting = app.quorum.nodes.filter((n) => n.mayVote)
  if (voting.length >= app.quorum.majority) {
    app.log.info({ nodes: app.quorum.nodes.map((n) => n.address), mode, ...listening(config) }, 'lock-service ready')
  } else {
    // Listening (so /readyz can say why), but every lock call answers 503 until a majority may vote.
    const nodes = app.quorum.nodes.map((n) => ({ index: n.index, address: n.address, vote: n.vote, lastError: n.health.lastError }))
    const why = nodes
      .filter((n) => n.vote !== 'counts')
      .map(
        (n) =>
          `node ${n.index} at ${n.address}: ${n.lastError && n.vote === 'down' ? `${n.lastError.reason}: ${n.lastError.message}` : n.vote}`,
      )
      .join('; ')
    app.log.warn(
      { nodes, mode, ...listening(config) },
      `lock-service listening, but cannot grant locks: ${voting.length} of ${nodes.length} Redis nodes may vote, ` +
        `${app.quorum.majority} needed (${why})`,
    )
  }
}

/** How clients reach it: HTTPS, and whether client certificates are required. */
function listening(config: Config): { scheme: 'http' | 'https'; clientCertificates: boolean } {
  return { scheme: config.https ? 'https' : 'http', clientCertificates: config.https?.clientCa !== undefined }
}

main().catch((err: unknown) => {
  process.stderr.write(`lock-service: failed to start: ${err instanceof Error ? err.message : String(err)}\n`)
  process.exit(1)
})
