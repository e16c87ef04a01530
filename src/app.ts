import type { Writable } from 'node:stream'
import Fastify, { type FastifyInstance } from 'fastify'
import { jsonSchemaTransform, jsonSchemaTransformObject } from 'fastify-type-provider-zod'
import type { Config } from './config.js'
import { clientErrorHandler, frameworkErrors, installErrorHandling } from './http/errors.js'
import { installAuth } from './http/auth.js'
import { httpsOptions, logHandshakeFailures } from './http/https.js'
import { installLimits } from './http/limits.js'
import { closeStalledWrites } from './http/stalled-writes.js'
import { requestLogFactory } from './http/request-log.js'
import { RequestLifecycle } from './http/request-lifecycle.js'
import { BODY_LIMIT, installJsonParser } from './http/body.js'
import { validatorCompiler } from './http/validation.js'
import { lockRoutes, rwlockRoutes } from './http/locks.js'
import { semaphoreRoutes } from './http/semaphores.js'
import { sessionRoutes } from './http/sessions.js'
import { SessionEngine } from './locks/sessions.js'
import { opsRoutes } from './http/ops.js'
import { apiDocsRoutes } from './http/api-docs.js'
import { LockEngine } from './locks/engine.js'
import { WAITER_LEASE_MS, WaitRoom, wakePrefix } from './locks/waiting.js'
import { GONE_MEMORY_MS } from './locks/keys.js'
import { lostChannel, Watchers } from './locks/watch.js'
import { watchRoutes } from './http/watch.js'
import { electionRoutes } from './http/elections.js'
import { Elections } from './locks/elections.js'
import { ElectionFeeds } from './locks/election-feeds.js'
import { fenceCheckRoutes } from './http/fence-check.js'
import { loadScripts } from './redis/scripts.js'
import { Observed } from './locks/observe.js'
import { createMetrics, zeroSeries, type DocumentedRoute, type Metrics } from './metrics.js'
import { createQuorum, type Quorum } from './redis/quorum.js'
import { topologiesOf } from './redis/topologies.js'
import { sequentialIds } from './random.js'

export interface AppOptions {
  /** Where pino writes its JSON lines (default stdout). */
  logStream?: Writable
  /** Register @fastify/swagger so that `app.swagger()` can regenerate openapi.yaml. */
  documentation?: boolean
}

export interface App extends FastifyInstance {
  quorum: Quorum
  metrics: Metrics
  engine: LockEngine
  sessions: SessionEngine
  watchers: Watchers
  waitRoom: WaitRoom
  elections: Elections
  feeds: ElectionFeeds
}

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,64}$/
/** A request without an id of its own gets this process's prefix and a counter (`Nf3kQ9xb2LwA-1a2`). */
const nextRequestId = sequentialIds(9, '-')
export const openapiPath = new URL('../openapi.yaml', import.meta.url)

/** The one factory the server, the tests and the benchmarks share. Never reads the environment. */
export async function buildApp(config: Config, options: AppOptions = {}): Promise<App> {
  const serverOptions = {
    headersTimeout: config.bodyTimeoutMs,
    connectionsCheckingInterval: Math.max(50, Math.min(1000, Math.floor(config.bodyTimeoutMs / 4))),
  }
  const metrics = createMetrics()
  const fastify = Fastify({
    // HTTPS when configured (src/http/https.ts); the type stays the plain server's: the routes see no difference.
    ...(httpsOptions(config, serverOptions) as object),
    logger: {
      level: config.logLevel,
      redact: {
        paths: ['req.headers["lock-token"]', 'req.headers.authorization', 'token', '*.token', 'session', '*.session'],
        censor: '[redacted]',
      },
      serializers: {
        req: (req: { method: string; url: string; hostname?: string; ip?: string }) => ({
          method: req.method,
          url: withoutToken(req.url),
          remoteAddress: req.ip,
        }),
      },
      ...(options.logStream ? { stream: options.logStream } : {}),
    },
    // Each request's X-Request-Id, HTTP metrics and one log line (probes at debug): src/http/request-lifecycle.ts.
    logController: new RequestLifecycle(metrics),
    // Each request's logger becomes a pino child only when it writes (src/http/request-log.ts).
    childLoggerFactory: requestLogFactory,
    frameworkErrors,
    clientErrorHandler,
    bodyLimit: BODY_LIMIT,
    routerOptions: { maxParamLength: 1024 },
    // A request (its headers and its body: at most 16 KiB) must arrive within BODY_TIMEOUT_MS, else
    // Node answers 408 through clientErrorHandler. Node checks this every connectionsCheckingInterval:
    // no work per request. Answering may take long (a waiting acquire up to MAX_WAIT_MS, a long-poll
    // watch up to MAX_WATCH_MS, with nothing on the socket meanwhile), so no idle timeout per
    // connection: a client that stops reading its answer is found by closeStalledWrites.
    requestTimeout: config.bodyTimeoutMs,
    http: serverOptions,
    connectionTimeout: 0,
    keepAliveTimeout: 72_000,
    genReqId: (req) => {
      const given = req.headers['x-request-id']
      return typeof given === 'string' && REQUEST_ID.test(given) ? given : nextRequestId()
    },
  })
  const stopStalledWrites = closeStalledWrites(fastify.server)
  fastify.addHook('onClose', async () => stopStalledWrites())
  fastify.setValidatorCompiler(validatorCompiler)
  // Responses are built by our own code from typed values; the zod response schemas document them
  // (and the tests check replies against them) without a validation pass on every reply.
  fastify.setSerializerCompiler(() => (data) => JSON.stringify(data))
  installJsonParser(fastify)
  installErrorHandling(fastify)
  installAuth(fastify, config, metrics)
  logHandshakeFailures(fastify, config, metrics)
  installLimits(fastify, config, metrics)
  if (!config.auth) fastify.log.warn('AUTH_FILE is not set: the service is open to every client that can reach it')

  const scripts = loadScripts({
    FENCE_RETENTION_MS: config.fenceRetentionMs,
    MAX_READERS: config.maxReaders,
    MAX_WAITERS: config.maxWaiters,
    WAITER_LEASE_MS,
    WAKE_PREFIX: wakePrefix(config.keyPrefix),
    GONE_MEMORY_MS,
    LOST_CHANNEL: lostChannel(config.keyPrefix),
    WAKE_COUNTS_RECEIVERS: config.redisMode === 'cluster' ? 0 : 1,
  })
  const quorum = createQuorum(
    topologiesOf(config),
    {
      timeoutMs: config.nodeTimeoutMs,
      maxTtlMs: config.maxTtlMs,
      maxLockDelayMs: config.maxLockDelayMs,
      driftFactor: config.driftFactor,
      keyPrefix: config.keyPrefix,
      scripts,
      waitReplicas: config.waitReplicas,
      log: fastify.log.child({ component: 'redis' }),
    },
    metrics,
  )
  try {
    await quorum.connect(Math.max(config.nodeTimeoutMs, 2000))
  } catch (err) {
    await quorum.close()
    await fastify.close()
    throw err
  }
  const waitRoom = new WaitRoom(quorum, wakePrefix(config.keyPrefix), config.maxWaiters, metrics)
  const subscribed = [waitRoom.start()]
  const engine = new LockEngine(quorum, config, waitRoom, metrics)
  const sessions = new SessionEngine(quorum, config, engine, metrics)
  const watchers = new Watchers(quorum, config, metrics)
  subscribed.push(watchers.start())
  sessions.watchSessionsWith(watchers)
  const elections = new Elections(quorum, config)
  const feeds = new ElectionFeeds(elections, quorum, config, metrics)
  subscribed.push(feeds.start())
  sessions.startCensus()
  // Ready only once every node confirmed the push channels' SUBSCRIBE (a node that does not answer: within
  // the connect timeout): a hand-off pushed before that reaches nobody, and its waiter sleeps to the end of its wait.
  await withinMs(Promise.all(subscribed), Math.max(config.nodeTimeoutMs, 2000))
  const app: App = Object.assign(fastify, { quorum, metrics, engine, sessions, waitRoom, watchers, elections, feeds })
  // SIGTERM: parked waiters answer 503 shutting_down before the server waits for in-flight requests.
  app.addHook('preClose', async () => {
    waitRoom.stopWaiting()
    watchers.stopWatching()
    feeds.stopObserving()
  })
  app.addHook('onClose', async () => {
    sessions.stopCensus()
    await waitRoom.close()
    await watchers.close()
    await feeds.close()
    await quorum.close()
  })

  if (options.documentation) {
    // Loaded only here: a running service serves its contract from openapi.yaml (src/http/api-docs.ts).
    const { default: fastifySwagger } = await import('@fastify/swagger')
    await app.register(fastifySwagger, {
      openapi: {
        openapi: '3.1.0',
        info: {
          title: 'lock-service',
          version: '0.1.0',
          description: 'Distributed locks over HTTP, on Redis Lua scripts: fencing tokens, validity, Redlock quorum.',
          license: { name: 'MIT', identifier: 'MIT' },
        },
        servers: [
          {
            url: 'http://{host}:{port}',
            description: 'A lock-service instance (npm run serve and docker compose listen on 127.0.0.1:8080)',
            variables: {
              host: { default: '127.0.0.1', description: 'Host name or address' },
              port: { default: '8080', description: 'PORT' },
            },
          },
        ],
        tags: [
          { name: 'locks', description: 'Exclusive locks' },
          { name: 'rwlocks', description: 'Read-write locks: shared readers, exclusive writers, no writer starvation' },
          {
            name: 'semaphores',
            description: 'Semaphores: at most `limit` permits held at once, each hold with its own lease, fence and place in line',
          },
          {
            name: 'sessions',
            description: 'Sessions: one lease for many holds; one keepalive renews them all, ending or losing the session frees them all',
          },
          {
            name: 'elections',
            description:
              'Leader election: one leader per name, its term a fencing token; ' +
              'observers told of every change (elected, proclaimed, vacant)',
          },
          { name: 'operations', description: 'Health, readiness, metrics, this contract' },
        ],
        components: {
          securitySchemes: {
            apiKey: { type: 'http', scheme: 'bearer', description: 'An API key secret from AUTH_FILE (when the service runs with one)' },
          },
        },
        security: [{ apiKey: [] }],
      },
      transform: jsonSchemaTransform,
      transformObject: jsonSchemaTransformObject,
    })
  }

  // The routes and the statuses their contract documents: their HTTP series start at 0.
  const documented: DocumentedRoute[] = []
  app.addHook('onRoute', ({ method, url, schema }) => {
    if (schema?.hide) return
    const statuses = Object.keys((schema?.response as Record<string, unknown> | undefined) ?? { 200: null })
    for (const m of [method].flat()) if (m !== 'HEAD') documented.push({ method: m, route: url, statuses })
  })
  const holdOptions = { config, engine, sessions, observed: new Observed(metrics), metrics }
  await app.register(lockRoutes, holdOptions)
  await app.register(rwlockRoutes, holdOptions)
  await app.register(semaphoreRoutes, holdOptions)
  await app.register(sessionRoutes, { config, sessions })
  await app.register(watchRoutes, { config, watchers })
  await app.register(electionRoutes, { ...holdOptions, elections, feeds, watchers, metrics })
  await app.register(fenceCheckRoutes, { engine })
  await app.register(opsRoutes, { quorum, metrics, openapiPath })
  // The generator's app has its own @fastify/swagger (describing the routes); /docs is hidden from it anyway.
  if (!options.documentation) await app.register(apiDocsRoutes, { openapiPath })
  await app.after()
  zeroSeries(metrics, quorum.size, documented)
  return app
}

/** Secrets out of a URL before it is logged: ?token=, ?session= and a session id in the path. */
function withoutToken(url: string): string {
  return url.replace(/([?&](?:token|session)=)[^&#]*/gi, '$1[redacted]').replace(/^(\/sessions\/)[^/?#]+/i, '$1[redacted]')
}

/** `promise` settled, or `ms` passed. */
async function withinMs(promise: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined
  await Promise.race([promise, new Promise((resolve) => (timer = setTimeout(resolve, ms)))])
  clearTimeout(timer)
}
