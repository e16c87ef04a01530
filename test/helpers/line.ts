import { performance } from 'node:perf_hooks'
import type { Test } from 'tap'
import { request, type HttpResult } from '../../harness/http.js'
import { until } from './until.js'

/**
 * A line across two service replicas: a holder on `a`, a first waiter on `b`, a second on `a`. The
 * holder's release on `a` must reach the first waiter (on the other replica) by the push, then the
 * first's release the second. Returns both grants for the caller's own checks.
 */
export async function lineAcrossReplicas(
  t: Test,
  a: string,
  b: string,
  path: string,
  tok: (name: string) => string,
): Promise<{ first: HttpResult; second: HttpResult }> {
  t.equal((await request(a, 'POST', `${path}?ttl=30s`, { token: tok('holder') })).status, 201, 'the holder has it')
  const firstAsk = request(b, 'POST', `${path}?wait=10s`, { token: tok('first') })
  await until(async () => (await request(a, 'GET', path)).body.waiters === 1, 'first waiter in line')
  const secondAsk = request(a, 'POST', `${path}?wait=10s`, { token: tok('second') })
  await until(async () => (await request(a, 'GET', path)).body.waiters === 2, 'second waiter in line')
  const released = performance.now()
  await request(a, 'DELETE', path, { token: tok('holder') })
  const first = await firstAsk
  t.equal(first.status, 201, `${path}: the first waiter (on the other replica) got it`)
  t.ok(performance.now() - released < 2000, 'by the push, not a timeout')
  await request(b, 'DELETE', path, { token: tok('first') })
  const second = await secondAsk
  t.equal(second.status, 201, `${path}: then the second`)
  return { first, second }
}
