/**
 * What TLS costs: the service on one Redis over plain HTTP and redis:// against the same service over
 * HTTPS (TLS_CERT_FILE) and over rediss:// (a redis-server speaking TLS only), acquire + release on
 * distinct keys, 16 keep-alive connections. Each figure is a ratio to plain, in the same repetition:
 * throughput, p50, and CPU per request of the service and of Redis (where TLS work lands).
 */
import { rm } from 'node:fs/promises'
import { makeTlsCerts } from '../../harness/tls-certs.js'
import { acquireRelease } from '../lib/flows.js'
import type { Scenario } from '../lib/scenario.js'
import { fmtMs, fmtNumber, fmtRatio, roundAll } from '../lib/stats.js'
import { compareEach } from '../lib/summary.js'

const CONNECTIONS = [16] as const

const scenario: Scenario = {
  id: 'tls',
  title: 'TLS overhead: HTTPS vs HTTP, rediss:// vs redis://',
  description:
    'Each connection loops POST /locks/:key then DELETE on a new key every cycle (keep-alive: one handshake per connection). ' +
    'plain = HTTP + redis://; https = TLS_CERT_FILE; rediss = a TLS-only redis-server with REDIS_TLS_CA_FILE. × plain = ÷ plain, same repetition.',
  async run(ctx) {
    const certs = await makeTlsCerts()
    try {
      const https = { certFile: certs.server.certFile, keyFile: certs.server.keyFile, ca: certs.ca }
      const redis = { certFile: certs.server.certFile, keyFile: certs.server.keyFile, caFile: certs.caFile }
      const [plain, overHttps, overRediss] = await Promise.all([
        ctx.service({ nodes: 1 }),
        ctx.service({ nodes: 1, tls: { https } }),
        ctx.service({ nodes: 1, tls: { redis } }),
      ])
      const { rows, figures, notes } = await compareEach(
        ctx,
        { plain, https: overHttps, rediss: overRediss },
        { connections: CONNECTIONS, flow: acquireRelease },
        (cmp, name) => {
          const m = {
            requestsPerSec: cmp.median(name, (r) => r.requestsPerSec),
            p50Ms: cmp.median(name, (r) => r.latencyMs.p50),
            serverUsPerRequest: cmp.median(name, (r) => r.cpu.serverUsPerRequest),
            redisUsPerRequest: cmp.median(name, (r) => r.cpu.redisUsPerRequest),
          }
          const x = {
            requestsPerSec: cmp.ratio(name, 'plain', (r) => r.requestsPerSec),
            p50Ms: cmp.ratio(name, 'plain', (r) => r.latencyMs.p50),
            serverUsPerRequest: cmp.ratio(name, 'plain', (r) => r.cpu.serverUsPerRequest),
            redisUsPerRequest: cmp.ratio(name, 'plain', (r) => r.cpu.redisUsPerRequest),
          }
          const cells = [
            fmtNumber(m.requestsPerSec),
            fmtRatio(x.requestsPerSec),
            fmtMs(m.p50Ms),
            fmtRatio(x.p50Ms),
            fmtNumber(m.serverUsPerRequest),
            fmtRatio(x.serverUsPerRequest),
            fmtNumber(m.redisUsPerRequest),
            fmtRatio(x.redisUsPerRequest),
          ]
          return { cells, figures: { median: roundAll(m), ratioToPlain: roundAll(x), runs: cmp.of(name) } }
        },
      )
      return {
        columns: ['link', 'conns', 'req/s', '× plain', 'p50 ms', '× plain', 'server CPU µs/req', '× plain', 'Redis CPU µs/req', '× plain'],
        rows,
        figures,
        notes,
      }
    } finally {
      await rm(certs.dir, { recursive: true, force: true })
    }
  },
}

export default scenario
