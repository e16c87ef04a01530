import { spawn } from 'node:child_process'
import { once } from 'node:events'
import readline from 'node:readline'
import t from 'tap'

const entry = new URL('../../clients/conformance/environment.ts', import.meta.url).pathname

interface Environment {
  service: string
  proxied: string
  control: string
  adminKey: string
  scopedKey: string
  scopedPrefix: string
  readOnlyKey: string
  maxWaiters: number
}

async function post(url: string, init: { key?: string; body?: unknown } = {}): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(url, {
    method: 'POST',
    headers: {
      ...(init.key ? { authorization: `Bearer ${init.key}` } : {}),
      ...(init.body ? { 'content-type': 'application/json' } : {}),
    },
    ...(init.body ? { body: JSON.stringify(init.body) } : {}),
  })
  return { status: res.status, body: (await res.json()) as Record<string, unknown> }
}

t.test('the conformance environment: keys, the dropping proxy, the fault stack, and a clean stop on stdin close', async (t) => {
  const child = spawn(process.execPath, ['--import', 'tsx', entry], { stdio: ['pipe', 'pipe', 'inherit'] })
  t.teardown(() => child.kill('SIGKILL'))
  const [line] = (await once(readline.createInterface({ input: child.stdout }), 'line')) as [string]
  const env = JSON.parse(line) as Environment

  t.equal((await post(`${env.service}/locks/conf-env-a`)).status, 401, 'the service wants an API key')
  t.equal((await post(`${env.service}/locks/conf-env-a`, { key: env.scopedKey })).status, 403, 'the scoped key is scoped')
  const granted = await post(`${env.service}/locks/${env.scopedPrefix}a`, { key: env.scopedKey })
  t.equal(granted.status, 201, 'the scoped key works under its prefix')
  const grantedFence = Number(granted.body.fence)
  t.equal((await post(`${env.service}/locks/conf-env-a`, { key: env.readOnlyKey })).status, 403, 'the read-only key may not acquire')
  const checked = await fetch(`${env.service}/locks/${env.scopedPrefix}a/fence/${grantedFence}`, {
    headers: { authorization: `Bearer ${env.readOnlyKey}` },
  })
  t.same(await checked.json(), { current: true, fence: grantedFence, held: true }, 'the read-only key may check a fence on any key')

  t.equal((await post(`${env.control}/proxy/drop-next-response`)).status, 200)
  const token = 'conformance-env-token-0001'
  await t.rejects(post(`${env.proxied}/locks/conf-env-b`, { key: env.adminKey, body: { token } }), 'the answer is dropped')
  const retried = await post(`${env.proxied}/locks/conf-env-b`, { key: env.adminKey, body: { token } })
  t.equal(retried.status, 200, 'the dropped request had been granted: the retry is a re-acquire')

  const reset = await post(`${env.control}/fault/reset`)
  const faultService = String(reset.body.service)
  t.equal((await post(`${faultService}/locks/conf-env-c`, { key: env.adminKey })).status, 201)
  t.equal((await post(`${env.control}/fault/redis/kill`)).status, 200)
  t.equal((await post(`${faultService}/locks/conf-env-d`, { key: env.adminKey })).status, 503, 'the fault stack lost its Redis')
  t.equal((await post(`${env.control}/nothing`)).status, 404)

  child.stdin.end()
  const [code] = (await once(child, 'exit')) as [number | null]
  t.equal(code, 0)
  await t.rejects(fetch(`${env.service}/healthz`), 'the service stopped with the environment')
})
