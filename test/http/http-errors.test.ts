/**
 * What the framework and Node's HTTP parser refuse comes back in the service's error shape too:
 * 405 with Allow for a known path, 414 / 431 for what is too long, 400 for what is not HTTP.
 * Over a real socket, since Node's parser answers before fastify (and inject) is involved.
 */
import net from 'node:net'
import t from 'tap'
import { errorSchema } from '../../src/http/schemas/errors.js'
import { startApp } from '../../harness/app.js'
import { startRedis } from '../../harness/redis-server.js'

interface Raw {
  status: number
  headers: Record<string, string>
  body: string
}

/** Send `text` as is; the answer up to the server closing (or 2 s). */
function raw(port: number, text: string): Promise<Raw> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () => socket.write(text))
    let out = ''
    socket.on('data', (d: Buffer) => (out += d.toString()))
    socket.on('error', reject)
    const timer = setTimeout(() => socket.destroy(), 2000)
    socket.on('close', () => {
      clearTimeout(timer)
      const [head = '', body = ''] = out.split('\r\n\r\n')
      const [statusLine = '', ...lines] = head.split('\r\n')
      const headers = Object.fromEntries(lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]))
      resolve({ status: Number(statusLine.split(' ')[1]), headers, body })
    })
  })
}

t.test('framework-made errors in the one error shape', async (t) => {
  const redis = await startRedis({ t })
  const { app, logText } = await startApp(t, [redis.url])
  await app.listen({ port: 0, host: '127.0.0.1' })
  const port = (app.server.address() as net.AddressInfo).port
  const request = (line: string, headers = '') => raw(port, `${line}\r\nHost: x\r\nConnection: close\r\n${headers}\r\n`)

  const cases: [string, Promise<Raw>, number, string][] = [
    ['a URL over the request-line limit', request(`GET /locks/${'a'.repeat(20_000)} HTTP/1.1`), 414, 'uri_too_long'],
    ['a path segment over maxParamLength', request(`GET /locks/${'a'.repeat(2000)} HTTP/1.1`), 414, 'uri_too_long'],
    ['headers over the limit', request('GET /healthz HTTP/1.1', `X-Big: ${'a'.repeat(20_000)}\r\n`), 431, 'headers_too_large'],
    ['a bad %-escape', request('GET /locks/%zz HTTP/1.1'), 400, 'invalid_request'],
    ['not HTTP at all', raw(port, 'HELLO THERE\r\n\r\n'), 400, 'invalid_request'],
    [
      'a bad Content-Length',
      request('POST /locks/k HTTP/1.1', 'Content-Type: application/json\r\nContent-Length: abc\r\n'),
      400,
      'invalid_request',
    ],
    [
      'a bad chunk',
      raw(
        port,
        'POST /locks/k HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n',
      ),
      400,
      'invalid_request',
    ],
    ['PATCH on a lock', request('PATCH /locks/k HTTP/1.1'), 405, 'method_not_allowed'],
    ['an unknown method on a lock', request('PROPFIND /locks/k HTTP/1.1'), 405, 'method_not_allowed'],
  ]
  for (const [what, pending, status, code] of cases) {
    const res = await pending
    t.equal(res.status, status, `${what}: ${status}`)
    t.match(res.headers['content-type'], /^application\/json/, `${what}: JSON`)
    const body = JSON.parse(res.body) as unknown
    t.ok(errorSchema.safeParse(body).success, `${what}: the error shape`)
    t.equal((body as { error: string }).error, code, `${what}: ${code}`)
  }
  t.notMatch(logText(), /"level":50/, 'no error logged')
})

t.test('405 method_not_allowed lists the methods of the path, in Allow and in the body', async (t) => {
  const redis = await startRedis({ t })
  const { app } = await startApp(t, [redis.url])
  const cases: [string, string, string][] = [
    ['PATCH', '/locks/k', 'GET, HEAD, POST, DELETE'],
    ['PUT', '/locks/k', 'GET, HEAD, POST, DELETE'],
    ['GET', '/locks/k/renew', 'PUT'],
    ['POST', '/locks', 'GET, HEAD'],
    ['GET', '/rwlocks/k/read', 'POST, DELETE'],
    ['DELETE', '/rwlocks/k', 'GET, HEAD'],
    ['POST', '/healthz', 'GET, HEAD'],
    ['DELETE', '/readyz', 'GET, HEAD'],
    ['PUT', '/metrics', 'GET, HEAD'],
    ['POST', '/openapi.yaml', 'GET, HEAD'],
  ]
  for (const [method, url, allow] of cases) {
    const res = await app.inject({ method: method as 'GET', url })
    t.equal(res.statusCode, 405, `${method} ${url}: 405`)
    t.equal(res.headers.allow, allow, `Allow: ${allow}`)
    t.same(res.json().allow, allow.split(', '))
    t.equal(res.json().error, 'method_not_allowed')
  }
  const unknown = await app.inject({ method: 'GET', url: '/locks/a/b' })
  t.same(
    [unknown.statusCode, unknown.json().error, unknown.headers.allow],
    [404, 'route_not_found', undefined],
    'an unknown path stays 404',
  )
})
