/**
 * The conformance environment: a service on its own redis-server (with API keys), the same service behind a TCP
 * proxy that can drop an answer, and a fault stack (another redis-server and service) that a suite may kill,
 * pause and reset. Prints one JSON line with the addresses once all of it answers; stops everything when its
 * stdin closes or on SIGTERM/SIGINT. The protocol is in README.md beside this file.
 */
import { rm } from 'node:fs/promises'
import http from 'node:http'
import { once } from 'node:events'
import { startRedis, stopAll, type RedisProcess } from '../../harness/redis-server.js'
import { startService, type ServiceProcess } from '../../harness/service-process.js'
import { startProxy } from '../../harness/tcp-proxy.js'
import { makeTlsCerts } from '../../harness/tls-certs.js'
import { writeAuthFile } from '../../test/helpers/auth-file.js'
import { buildApp } from '../../src/app.js'
import { loadConfig } from '../../src/config.js'

const ADMIN_KEY = 'conformance-admin-key-000000000001'
const SCOPED_KEY = 'conformance-scoped-key-00000000001'
const SCOPED_PREFIX = 'scoped:'
const READ_ONLY_KEY = 'conformance-readonly-key-000000001'
const MAX_WAITERS = 3

const authFile = writeAuthFile([
  { name: 'admin', secret: ADMIN_KEY, prefixes: [], admin: true },
  { name: 'scoped', secret: SCOPED_KEY, prefixes: [SCOPED_PREFIX] },
  { name: 'read-only', secret: READ_ONLY_KEY, prefixes: [], admin: true, readOnly: true },
])
const serviceEnv = { AUTH_FILE: authFile, MAX_WAITERS: String(MAX_WAITERS) }

interface Stack {
  readonly redis: RedisProcess
  readonly service: ServiceProcess
}

async function startStack(): Promise<Stack> {
  const redis = await startRedis()
  const service = await startService({ ...serviceEnv, REDIS_URL: redis.url })
  return { redis, service }
}

async function stopStack(stack: Stack | undefined): Promise<void> {
  if (!stack) return
  stack.redis.resume() // a paused server would otherwise keep the service's shutdown waiting
  await Promise.all([stack.service.stop('SIGKILL'), stack.redis.kill()])
}

const main = await startStack()
const proxy = await startProxy({ port: Number(new URL(main.service.url).port) })
// The same service over HTTPS requiring client certificates (in this process: no extra start-up), for the
// clients' TLS tests. Its logs go to stderr: stdout carries the one JSON line.
const certs = await makeTlsCerts()
const tlsService = await buildApp(
  loadConfig({
    ...serviceEnv,
    REDIS_URL: main.redis.url,
    LOG_LEVEL: 'error',
    TLS_CERT_FILE: certs.server.certFile,
    TLS_KEY_FILE: certs.server.keyFile,
    TLS_CLIENT_CA_FILE: certs.caFile,
  }),
  { logStream: process.stderr },
)
const tlsUrl = await tlsService.listen({ port: 0, host: '127.0.0.1' })
let fault: Stack | undefined

function faultStack(): Stack {
  if (!fault) throw new Error('no fault stack: POST /fault/reset first')
  return fault
}

const actions: Record<string, () => Promise<Record<string, unknown>>> = {
  '/proxy/drop-next-response': async () => {
    proxy.dropNextResponse()
    return {}
  },
  '/fault/reset': async () => {
    const old = fault
    fault = undefined
    await stopStack(old)
    fault = await startStack()
    return { service: fault.service.url }
  },
  '/fault/redis/kill': async () => {
    await faultStack().redis.kill()
    return {}
  },
  '/fault/redis/pause': async () => {
    faultStack().redis.pause()
    return {}
  },
  '/fault/redis/resume': async () => {
    faultStack().redis.resume()
    return {}
  },
}

function answer(res: http.ServerResponse, status: number, body: Record<string, unknown>): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body))
}

const control = http.createServer((req, res) => {
  const action = actions[req.url ?? '']
  if (req.method !== 'POST' || !action) return answer(res, 404, { error: `no such control action: ${req.method} ${req.url}` })
  req.resume()
  action().then(
    (body) => answer(res, 200, body),
    (err: unknown) => answer(res, 500, { error: err instanceof Error ? err.message : String(err) }),
  )
})
control.listen(0, '127.0.0.1')
await once(control, 'listening')
const address = control.address()
if (!address || typeof address !== 'object') throw new Error('control server has no address')

let stopping: Promise<void> | undefined
function shutdown(): Promise<void> {
  stopping ??= (async () => {
    control.close()
    await tlsService.close()
    await rm(certs.dir, { recursive: true, force: true })
    await proxy.close()
    await Promise.all([stopStack(main), stopStack(fault)])
    await stopAll()
    process.exit(0)
  })()
  return stopping
}
process.once('SIGTERM', () => void shutdown())
process.once('SIGINT', () => void shutdown())
process.stdin.on('end', () => void shutdown())
process.stdin.on('close', () => void shutdown())
process.stdin.resume()

process.stdout.write(
  JSON.stringify({
    service: main.service.url,
    proxied: `http://127.0.0.1:${proxy.port}`,
    control: `http://127.0.0.1:${address.port}`,
    adminKey: ADMIN_KEY,
    scopedKey: SCOPED_KEY,
    scopedPrefix: SCOPED_PREFIX,
    readOnlyKey: READ_ONLY_KEY,
    maxWaiters: MAX_WAITERS,
    tls: {
      service: tlsUrl,
      caFile: certs.caFile,
      certFile: certs.client.certFile,
      keyFile: certs.client.keyFile,
      otherCaFile: certs.otherCaFile,
    },
  }) + '\n',
)
