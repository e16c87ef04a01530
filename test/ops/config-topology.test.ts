/**
 * REDIS_MODE and the variables of each mode: what they parse to, and one readable line for every
 * wrong combination (the start errors that need a live Redis are in cluster-features and sentinel).
 */
import t from 'tap'
import { ConfigError, loadConfig } from '../../src/config.js'
import { topologiesOf } from '../../src/redis/topologies.js'

function problems(env: Record<string, string>): string[] {
  try {
    loadConfig(env)
  } catch (err) {
    if (err instanceof ConfigError) return [...err.problems]
    throw err
  }
  return []
}

t.test('cluster: REDIS_URLS are seeds of one cluster, any number of them, TLS or not', async (t) => {
  const config = loadConfig({ REDIS_MODE: 'cluster', REDIS_URLS: 'redis://:pw@a:7000,redis://:pw@b:7001', REDIS_WAIT_REPLICAS: '1' })
  t.equal(config.redisMode, 'cluster')
  t.same(config.redisUrls, ['redis://:pw@a:7000', 'redis://:pw@b:7001'], 'two seeds are fine (no 2/4/6 rule: the cluster is one voter)')
  t.equal(config.waitReplicas, 1)
  t.same(topologiesOf(config), [{ mode: 'cluster', seeds: ['redis://:pw@a:7000', 'redis://:pw@b:7001'] }], 'one voter')
  t.equal(loadConfig({ REDIS_MODE: 'cluster', REDIS_URLS: 'rediss://a:7000' }).redisUrls[0], 'rediss://a:7000', 'TLS')
  t.same(loadConfig({ REDIS_MODE: 'cluster', REDIS_URL: 'redis://a:7000' }).redisUrls, ['redis://a:7000'], 'REDIS_URL works as the alias')
})

t.test('sentinel: REDIS_SENTINELS (host:port, redis:// or rediss://), REDIS_SENTINEL_NAME, passwords', async (t) => {
  const config = loadConfig({
    REDIS_MODE: 'sentinel',
    REDIS_SENTINELS: 's1:26379, s2 ,redis://s3:26380',
    REDIS_SENTINEL_NAME: 'locks',
    REDIS_PASSWORD: 'data-secret',
    REDIS_SENTINEL_PASSWORD: 'sentinel-secret',
  })
  t.equal(config.redisMode, 'sentinel')
  t.same(config.redisUrls, [], 'no data URLs: the sentinels name the primary')
  t.same(config.sentinel, {
    sentinels: [
      { host: 's1', port: 26379 },
      { host: 's2', port: 26379 },
      { host: 's3', port: 26380 },
    ],
    name: 'locks',
    password: 'data-secret',
    sentinelPassword: 'sentinel-secret',
    tls: false,
  })
  t.equal(topologiesOf(config).length, 1, 'one voter')
  const tls = loadConfig({ REDIS_MODE: 'sentinel', REDIS_SENTINELS: 'rediss://:spw@s1:26379', REDIS_SENTINEL_NAME: 'locks' })
  t.equal(tls.sentinel?.tls, true, 'rediss:// sentinels: TLS to sentinels and data nodes')
  t.equal(tls.sentinel?.sentinelPassword, 'spw', 'the password in a sentinel URL')
})

t.test('every wrong combination is one readable line naming the variable', async (t) => {
  const cases: [Record<string, string>, string, RegExp][] = [
    [{ REDIS_MODE: 'replicated' }, 'REDIS_MODE', /standalone, cluster or sentinel/],
    [{ REDIS_URLS: 'redis://a,redis://b' }, 'REDIS_URLS', /2 nodes give no more fault tolerance than 1/],
    [{ REDIS_URLS: Array.from({ length: 9 }, (_, i) => `redis://h${i}`).join(',') }, 'REDIS_URLS', /at most 7 .*REDIS_MODE=cluster/],
    [{ REDIS_SENTINELS: 's1:26379' }, 'REDIS_SENTINELS', /only read with REDIS_MODE=sentinel/],
    [{ REDIS_SENTINEL_NAME: 'locks' }, 'REDIS_SENTINEL_NAME', /only read with REDIS_MODE=sentinel/],
    [{ REDIS_PASSWORD: 'x' }, 'REDIS_PASSWORD', /put the password in REDIS_URLS/],
    [{ REDIS_MODE: 'cluster' }, 'REDIS_URLS', /needs REDIS_URLS/],
    [{ REDIS_MODE: 'cluster', REDIS_URLS: 'redis://:a@h1,redis://:b@h2' }, 'REDIS_URLS', /share one password/],
    [{ REDIS_MODE: 'cluster', REDIS_URLS: 'redis://h1,rediss://h2' }, 'REDIS_URLS', /mixes redis:\/\/ and rediss:\/\//],
    [
      { REDIS_MODE: 'cluster', REDIS_URLS: 'redis://h1', REDIS_SENTINEL_NAME: 'x' },
      'REDIS_SENTINEL_NAME',
      /only read with REDIS_MODE=sentinel/,
    ],
    [{ REDIS_MODE: 'sentinel', REDIS_SENTINEL_NAME: 'locks' }, 'REDIS_SENTINELS', /needs REDIS_SENTINELS/],
    [{ REDIS_MODE: 'sentinel', REDIS_SENTINELS: 's1' }, 'REDIS_SENTINEL_NAME', /needs REDIS_SENTINEL_NAME/],
    [{ REDIS_MODE: 'sentinel', REDIS_SENTINELS: 's1', REDIS_SENTINEL_NAME: 'l', REDIS_URLS: 'redis://h' }, 'REDIS_URLS', /must not be set/],
    [{ REDIS_MODE: 'sentinel', REDIS_SENTINELS: 's1:99999', REDIS_SENTINEL_NAME: 'l' }, 'REDIS_SENTINELS', /host:port/],
    [{ REDIS_MODE: 'sentinel', REDIS_SENTINELS: 's1', REDIS_SENTINEL_NAME: 'has space' }, 'REDIS_SENTINEL_NAME', /1–100 of/],
    [{ REDIS_MODE: 'sentinel', REDIS_SENTINELS: 'redis://s1,rediss://s2', REDIS_SENTINEL_NAME: 'l' }, 'REDIS_SENTINELS', /TLS/],
    [{ REDIS_WAIT_REPLICAS: '-1' }, 'REDIS_WAIT_REPLICAS', /whole number|at least 0/],
    [{ REDIS_WAIT_REPLICAS: '17' }, 'REDIS_WAIT_REPLICAS', /at most 16/],
  ]
  for (const [env, name, message] of cases) {
    const lines = problems(env)
    t.equal(lines.length, 1, `${JSON.stringify(env)}: one line (${JSON.stringify(lines)})`)
    t.ok(lines[0]?.startsWith(`${name}:`), `it names ${name}`)
    t.match(lines[0] ?? '', message)
  }
})

t.test('passwords never show in the error lines', async (t) => {
  const lines = problems({
    REDIS_PASSWORD: 'hunter2-data',
    REDIS_SENTINEL_PASSWORD: 'hunter2-sentinel',
    REDIS_SENTINELS: 'redis://:hunter2-url@s1:1',
  })
  t.ok(lines.length >= 2)
  t.notMatch(lines.join('\n'), /hunter2/)
})
