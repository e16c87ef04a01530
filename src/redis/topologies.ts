import type { Config } from '../config.js'
import type { Topology } from './topology.js'

/** The voters REDIS_MODE asks for: one per standalone URL, or one for the whole cluster / Sentinel set. */
export function topologiesOf(config: Pick<Config, 'redisMode' | 'redisUrls' | 'sentinel' | 'redisTls'>): Topology[] {
  const tls = config.redisTls ? { tlsFiles: config.redisTls } : {}
  if (config.redisMode === 'cluster') return [{ mode: 'cluster', seeds: config.redisUrls, ...tls }]
  if (config.redisMode === 'sentinel') {
    const s = config.sentinel
    if (!s) throw new Error('REDIS_MODE=sentinel needs REDIS_SENTINELS and REDIS_SENTINEL_NAME')
    return [
      {
        mode: 'sentinel',
        sentinels: s.sentinels,
        name: s.name,
        password: s.password,
        sentinelPassword: s.sentinelPassword,
        tls: s.tls,
        ...tls,
      },
    ]
  }
  return config.redisUrls.map((url) => ({ mode: 'standalone', url, ...tls }))
}
