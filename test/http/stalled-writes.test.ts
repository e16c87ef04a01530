/**
 * Connections whose client stopped reading its answers are closed (src/http/stalled-writes.ts), and
 * nothing else is: a client reading slowly, a parked request with nothing to send, an idle keep-alive
 * connection all stay open. The service's sockets carry no timer of their own.
 */
import http from 'node:http'
import https from 'node:https'
import net from 'node:net'
import tls from 'node:tls'
import { setTimeout as sleep } from 'node:timers/promises'
import t from 'tap'
import { closeStalledWrites } from '../../src/http/stalled-writes.js'
import { startApp } from '../../harness/app.js'
import { startRedis } from '../../harness/redis-server.js'
import { makeTlsCerts } from '../../harness/tls-certs.js'

const STALL_MS = 600
const BIG = Buffer.alloc(256 * 1024, 'x')

/**
 * A server answering GET /big with 256 KiB, GET /park never, anything else with a short body; swept
 * with STALL_MS. `closedAfter(client)`: when the server closed its side of that client's connection,
 * ms after it connected (a paused client sees no close until it reads what came before).
 */
async function startServer(t: { teardown(fn: () => unknown): void }) {
  const server = http.createServer((req, res) => {
    if (req.url === '/park') return
    res.end(req.url === '/big' ? BIG : 'ok')
  })
  const closed = new Map<number, number>()
  server.on('connection', (socket: net.Socket) => {
    const started = Date.now()
    const remotePort = socket.remotePort ?? 0
    socket.on('close', () => closed.set(remotePort, Date.now() - started))
  })
  const stop = closeStalledWrites(server, STALL_MS)
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => {
    stop()
    server.closeAllConnections()
    server.close()
  })
  return {
    port: (server.address() as net.AddressInfo).port,
    closedAfter: (c: { localPort: number }) => closed.get(c.localPort),
  }
}

/**
 * A connection that sends `request` and then reads: always (`reading` 1), never (0), or in bursts,
 * 5 ms of every 150 (0.03: a client that falls behind and catches up, as a slow consumer does).
 */
function client(port: number, request: string, reading: 0 | 0.03 | 1) {
  const socket = net.connect(port, '127.0.0.1')
  let received = 0
  socket.on('data', (chunk: Buffer) => (received += chunk.length))
  socket.on('error', () => undefined)
  if (reading !== 1) socket.pause()
  socket.write(request)
  const reader =
    reading === 0.03
      ? setInterval(() => {
          socket.resume()
          setTimeout(() => socket.pause(), 5)
        }, 150)
      : undefined
  return {
    get localPort() {
      return socket.localPort ?? -1
    },
    get received() {
      return received
    },
    end() {
      clearInterval(reader)
      socket.destroy()
    },
  }
}

const bigRequests = 'GET /big HTTP/1.1\r\nHost: x\r\n\r\n'.repeat(40)

t.test('a client that stops reading its answers is disconnected once nothing moved for the stall time', async (t) => {
  const server = await startServer(t)
  const stuck = client(server.port, bigRequests, 0)
  t.teardown(() => stuck.end())
  await sleep(STALL_MS * 4)
  const closedAfter = server.closedAfter(stuck)
  t.not(closedAfter, undefined, 'closed')
  t.ok((closedAfter ?? 0) >= STALL_MS, `not before the stall time (${closedAfter} ms)`)
})

t.test('over TLS too: the TLS socket is the one whose writes back up', async (t) => {
  const certs = await makeTlsCerts({ t })
  const server = https.createServer({ cert: certs.server.cert, key: certs.server.key }, (_req, res) => res.end(BIG))
  const stop = closeStalledWrites(server, STALL_MS)
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const started = Date.now()
  let closedAfter: number | undefined
  server.on('secureConnection', (socket: tls.TLSSocket) => socket.on('close', () => (closedAfter = Date.now() - started)))
  const stuck = tls.connect({ port: (server.address() as net.AddressInfo).port, host: '127.0.0.1', ca: certs.ca }, () => {
    stuck.write(bigRequests)
    stuck.pause()
  })
  stuck.on('error', () => undefined)
  t.teardown(() => {
    stop()
    stuck.destroy()
    server.closeAllConnections()
    server.close()
  })
  await sleep(STALL_MS * 4)
  t.not(closedAfter, undefined, 'closed')
  t.ok((closedAfter ?? 0) >= STALL_MS, `not before the stall time (${closedAfter} ms)`)
})

t.test('a client that reads slowly, a parked request and an idle keep-alive connection stay open', async (t) => {
  const server = await startServer(t)
  const slow = client(server.port, bigRequests.repeat(10), 0.03)
  const parked = client(server.port, 'GET /park HTTP/1.1\r\nHost: x\r\n\r\n', 1)
  const idle = client(server.port, 'GET /small HTTP/1.1\r\nHost: x\r\n\r\n', 1)
  t.teardown(() => [slow, parked, idle].forEach((c) => c.end()))
  await sleep(STALL_MS * 4)
  t.equal(server.closedAfter(slow), undefined, 'the slow reader is still connected')
  t.ok(slow.received > 256 * 1024 && slow.received < BIG.length * 400, `and still receiving (${slow.received} bytes so far)`)
  t.equal(server.closedAfter(parked), undefined, 'the parked request is still connected')
  t.equal(server.closedAfter(idle), undefined, 'the idle keep-alive connection is still connected')
  t.ok(idle.received > 0, 'which had its answer')
})

t.test("the service's connections carry no timer of their own, parked waiters' included", async (t) => {
  const redis = await startRedis({ t })
  const { app } = await startApp(t, [redis.url])
  const sockets: net.Socket[] = []
  app.server.on('connection', (s: net.Socket) => sockets.push(s))
  await app.listen({ port: 0, host: '127.0.0.1' })
  const port = (app.server.address() as net.AddressInfo).port
  const holder = await app.inject({ method: 'POST', url: '/locks/parked?ttl=10s' })
  t.equal(holder.statusCode, 201)
  const waiter = client(port, 'POST /locks/parked?wait=5s HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n', 1)
  t.teardown(() => waiter.end())
  for (let i = 0; i < 100 && (await app.inject({ method: 'GET', url: '/locks/parked' })).json().waiters !== 1; i++) await sleep(20)
  t.equal(sockets.length, 1, 'one connection')
  const timeout = (sockets[0] as net.Socket & { timeout?: number }).timeout
  t.notOk(timeout, `no socket timeout (${timeout})`)
  t.notOk(sockets[0]?.destroyed, 'the waiter is parked, connected')
})
