import { performance } from 'node:perf_hooks'
import type { Redis } from 'ioredis'
import { keyCountOf, type ScriptName, type Script } from './scripts.js'
import type { VoteState } from '../contract/words.js'
import type { Metrics } from '../metrics.js'
import { ClockWatch, type ClockStatus } from './clock.js'
import { NodeHealth, quietClient, type NodeLastError } from './health.js'
import { createClient, isCluster, topologyAddress, topologySecrets, type RedisClient, type Topology } from './topology.js'
import { sampleMasterClocks, scanCluster } from './cluster.js'
import { WriteCoalescer } from './coalesce.js'
import { loadedScript, runScript, type LoadedScript } from './script-call.js'

export interface NodeStatus {
  index: number
  address: string
  up: boolean
  latencyMs: number | null
  /** Whether this node's answers count toward a majority now, and if not, why (the vote rule, VoteState). */
  vote: VoteState
  /** ms until a node that restarted empty counts toward grants again (0: it counts) */
  quarantineMs: number
  clock: ClockStatus
  /** The latest failure talking to this node (kept after it recovers), or null */
  lastError: NodeLastError | null
}

/** What the node said about itself on connecting (INFO), for the restart check. */
export interface Identity {
  runId: string
  uptimeMs: number
  /** The run_id this replica saw before on this node, if any. */
  previousRunId: string | undefined
}

/** Whether a newly identified node may count, and from when (see src/redis/restarts.ts). */
export type RestartVerdict = { counts: true; quarantineUntil: number; restarted: boolean } | { counts: false; retryInMs: number }

export interface NodeOptions {
  timeoutMs: number
  /** The Lua scripts, settings included (loadScripts). */
  scripts: ReadonlyMap<ScriptName, string>
  driftFactor: number
  /** How long a misbehaving clock must behave before it counts again (MAX_TTL_MS). */
  clockProbationMs: number
  /** Unanswered commands from which new ones are held back to go out together (src/redis/coalesce.ts). */
  holdBehind: number
  /** REDIS_WAIT_REPLICAS: writes that answer a client wait for this many replicas (0: no WAIT). */
  waitReplicas?: number
  log?: NodeLog
}

/** The part of a pino logger a node writes to. */
export interface NodeLog {
  warn(obj: object, msg: string): void
  info(obj: object, msg: string): void
}

export type NodeFailure = 'timeout' | 'unavailable' | 'error'

export class NodeError extends Error {
  constructor(
    readonly reason: NodeFailure,
    message: string,
  ) {
    super(message)
    this.name = 'NodeError'
  }
}

export interface Subscription {
  close(): Promise<void>
}

/** "host:port" of a Redis URL: what logs, metrics and bodies may show (never the password). */
export function redisAddress(url: string): string {
  const u = new URL(url)
  return `${u.hostname}:${u.port || '6379'}`
}

/** A script defined on an ioredis client or pipeline (defineCommand), called with its keys and arguments. */
type DefinedScript = (...args: (string | number)[]) => Promise<unknown>

/**
 * Scripts whose effect a client is told of: with REDIS_WAIT_REPLICAS they are answered only once
 * `WAIT n` on the same connection confirms them (see `runConfirmed`), and when they changed nothing
 * (a refusal) no confirmation is needed.
 */
const CONFIRMED: ReadonlyMap<ScriptName, (reply: unknown) => boolean> = new Map([
  ['acquire', (reply: unknown) => firstCode(reply) > 0],
  ['renew', (reply: unknown) => firstCode(reply) > 0],
  ['fence_commit', (reply: unknown) => firstCode(reply) === 1],
])

function firstCode(reply: unknown): number {
  return Array.isArray(reply) && typeof reply[0] === 'number' ? reply[0] : 0
}

/**
 * One voter: a Redis master (standalone), or a whole Redis Cluster, or the primary Sentinel names
 * (src/redis/topology.ts). Commands fail fast instead of queueing while the node is down, time out
 * after `timeoutMs`, and are never re-sent after a reconnect: an acquire that ran late could
 * otherwise grant a lock nobody is waiting for.
 */
export class RedisNode {
  readonly address: string
  readonly client: RedisClient
  private readonly scripts: ReadonlyMap<ScriptName, LoadedScript>
  /** Scripts sent behind a backlog of unanswered ones go out together (src/redis/coalesce.ts). */
  private readonly writes: WriteCoalescer
  readonly topology: Topology
  readonly health: NodeHealth
  private lastLatencyMs: number | null = null
  private readonly timeoutMs: number
  private runId: string | undefined
  private role: string | undefined
  /** Set once the restart check let this connection's answers count (reset on every reconnect). */
  private checked = false
  /** performance.now() until which the node is in its delayed-restart quarantine. */
  private quarantinedUntil = 0
  /**
   * The clock's samplesTaken when the vote rule last found the quarantine over and the clock
   * trusted, or -1: until the next sample or identification those time-bound parts stay as they
   * were (quarantine and probation only end, and only a sample or an identification starts them),
   * so the rule does not read the time again for every answer.
   */
  private timeChecksPassedAt = -1
  /** Bumped on every connection change, so a slow identification of an old connection is dropped. */
  private connection = 0
  clock: ClockWatch
  /** A cluster's: one clock watch per master ("host:port"); every one must be trusted. */
  private readonly masterClocks = new Map<string, ClockWatch>()
  /** A cluster's: rounds of master clock samples taken (what `timeChecksPassedAt` compares with there). */
  private masterRounds = 0
  /** INFO said cluster_enabled:1 (a standalone URL that points into a Redis Cluster is refused at start). */
  clusterEnabled = false
  /** This node's series of redis_node_command_duration_seconds (made once: no label lookup per command). */
  private readonly commandDuration: { observe(seconds: number): void }
  /** Set by the quorum: decides whether a newly identified node may count (src/redis/restarts.ts). */
  restartCheck: ((node: RedisNode, identity: Identity) => Promise<RestartVerdict>) | undefined

  constructor(
    readonly index: number,
    target: string | Topology,
    private readonly options: NodeOptions,
    private readonly metrics: Metrics,
  ) {
    const timeoutMs = options.timeoutMs
    this.timeoutMs = timeoutMs
    this.topology = typeof target === 'string' ? { mode: 'standalone', url: target } : target
    this.address = topologyAddress(this.topology)
    this.commandDuration = metrics.nodeCommandDuration.series({ node: String(index) })
    this.clock = new ClockWatch(options.driftFactor, options.clockProbationMs)
    this.client = createClient(this.topology, { timeoutMs })
    this.writes = new WriteCoalescer(this.client, options.holdBehind)
    this.health = new NodeHealth(index, this.address, topologySecrets(this.topology), metrics, options.log)
    quietClient(this.client as Redis, (notice) =>
      options.log?.warn({ node: index, address: this.address }, `Redis node ${index} at ${this.address}: ${notice}`),
    )
    // Connection errors also surface as failed commands and as `up` = false; ioredis reconnects by itself.
    this.client.on('error', (err) => this.health.connectionFailed(err))
    this.client.on('ready', () => {
      this.metrics.nodeUp.set({ node: String(index) }, 1)
      this.connection++
      void this.identify(this.connection)
    })
    this.client.on('close', () => {
      this.metrics.nodeUp.set({ node: String(index) }, 0)
      this.connection++
      this.role = undefined
      this.checked = false
      this.health.closed()
    })
    this.metrics.nodeUp.set({ node: String(index) }, 0)
    const scripts = new Map<ScriptName, LoadedScript>()
    for (const [name, lua] of options.scripts) {
      const loaded = loadedScript(lua, keyCountOf(name))
      scripts.set(name, loaded)
      // runConfirmed's pipeline runs these as ioredis' own script commands: ioredis loads a
      // pipeline's scripts before it sends them.
      if ((options.waitReplicas ?? 0) > 0 && CONFIRMED.has(name)) {
        this.client.defineCommand(name, { numberOfKeys: loaded.keyCount, lua })
      }
    }
    this.scripts = scripts
  }

  get up(): boolean {
    return this.client.status === 'ready'
  }

  /** The vote rule (see VoteState). */
  get vote(): VoteState {
    if (!this.up) return 'down'
    if (this.role !== undefined && this.role !== 'master') return 'replica'
    if (this.role === undefined || !this.checked) return 'identifying'
    if (this.timeChecksPassedAt === this.clockSamples) return 'counts'
    const now = performance.now()
    if (now < this.quarantinedUntil) return 'quarantined'
    if (!this.clockTrusted(now)) return 'clock_untrusted'
    this.timeChecksPassedAt = this.clockSamples
    return 'counts'
  }

  /** What changes with every clock sample: the watch's count, or a cluster's rounds over all masters. */
  private get clockSamples(): number {
    return isCluster(this.client) ? this.masterRounds : this.clock.samplesTaken
  }

  /** A cluster's clock counts while every master's does (a lock's expiry is decided by its slot's master). */
  private clockTrusted(now: number): boolean {
    if (!isCluster(this.client)) return this.clock.trusted(now)
    if (this.masterClocks.size === 0) return false
    for (const watch of this.masterClocks.values()) if (!watch.trusted(now)) return false
    return true
  }

  /** Whether this node's answers count toward a majority now. */
  get mayVote(): boolean {
    return this.vote === 'counts'
  }

  get isReplica(): boolean {
    return this.role !== undefined && this.role !== 'master'
  }

  /** The run_id of the identified node, while connected and identified. */
  get identifiedRunId(): string | undefined {
    return this.checked ? this.runId : undefined
  }

  /**
   * On every (re)connection: who is this (INFO: role, run_id, uptime), a first clock sample, then the
   * restart check. Until all three are done its answers do not count.
   */
  private async identify(connection: number): Promise<void> {
    const retry = (ms: number) =>
      setTimeout(() => {
        if (connection === this.connection) void this.identify(connection)
      }, ms).unref()
    try {
      const info = await this.client.info('server', 'replication', 'cluster')
      const runId = /^run_id:(\w+)/m.exec(info)?.[1] ?? ''
      const role = /^role:(\w+)/m.exec(info)?.[1]
      const uptimeMs = Number(/^uptime_in_seconds:(\d+)/m.exec(info)?.[1] ?? 0) * 1000
      if (connection !== this.connection) return
      this.clusterEnabled = /^cluster_enabled:1/m.test(info)
      // Sentinel: a failover puts another server behind this voter; its clock is another clock.
      if (this.topology.mode === 'sentinel' && this.runId !== undefined && runId !== this.runId) {
        this.clock = new ClockWatch(this.options.driftFactor, this.options.clockProbationMs)
        this.timeChecksPassedAt = -1
      }
      this.role = role
      this.health.identified(role)
      if (role !== 'master') return
      await this.sampleClock()
      const verdict = (await this.restartCheck?.(this, { runId, uptimeMs, previousRunId: this.runId })) ?? {
        counts: true,
        quarantineUntil: 0,
        restarted: false,
      }
      if (connection !== this.connection) return
      if (!verdict.counts) return void retry(verdict.retryInMs)
      this.runId = runId
      if (verdict.quarantineUntil > performance.now()) {
        this.quarantinedUntil = verdict.quarantineUntil
        this.timeChecksPassedAt = -1
        if (verdict.restarted) this.metrics.nodeRestarts.inc({ node: String(this.index) })
        this.options.log?.warn(
          { node: this.index, address: this.address, quarantineMs: Math.round(verdict.quarantineUntil - performance.now()) },
          'redis node restarted recently and may have lost locks: its votes do not count until its quarantine ends',
        )
      }
      this.checked = true
    } catch {
      // Not identified yet: its answers do not count until it is.
      retry(500)
    }
  }

  /** One TIME sample for the clock check; never rejects. */
  async sampleClock(): Promise<void> {
    if (!this.up) return
    if (isCluster(this.client)) return this.sampleMasterClocks(this.client)
    const sentAt = performance.now()
    let time: [string, string]
    try {
      time = (await this.client.time()) as unknown as [string, string]
    } catch {
      return
    }
    const receivedAt = performance.now()
    const change = this.clock.add({ sentAt, receivedAt, nodeMs: Number(time[0]) * 1000 + Number(time[1]) / 1000 })
    const node = String(this.index)
    const rate = this.clock.rate()
    if (rate !== null) this.metrics.nodeClockRate.set({ node }, rate)
    if (change === 'distrusted') {
      this.metrics.nodeClockDistrusted.inc({ node })
      this.options.log?.warn(
        { node: this.index, address: this.address, trustedInMs: this.clock.status(receivedAt).trustedInMs, why: this.clock.lastViolation },
        'redis node clock distrusted: its votes do not count until it has behaved for MAX_TTL_MS',
      )
    } else if (change === 'trusted') {
      this.options.log?.info({ node: this.index, address: this.address }, 'redis node clock trusted again')
    }
  }

  /** A cluster: one sample per master, each into its own watch; watches of former masters are dropped. */
  private async sampleMasterClocks(cluster: Parameters<typeof sampleMasterClocks>[0]): Promise<void> {
    const samples = await sampleMasterClocks(cluster)
    const seen = new Set(samples.map((s) => s.address))
    for (const address of this.masterClocks.keys()) if (!seen.has(address)) this.masterClocks.delete(address)
    this.metrics.clusterMasters.set(samples.length)
    for (const { shard, address, sample } of samples) {
      this.metrics.clusterMasterUp.set({ shard: String(shard) }, sample ? 1 : 0)
      if (!sample) continue
      let watch = this.masterClocks.get(address)
      if (!watch) {
        watch = new ClockWatch(this.options.driftFactor, this.options.clockProbationMs)
        this.masterClocks.set(address, watch)
      }
      const change = watch.add(sample)
      const rate = watch.rate()
      if (rate !== null) this.metrics.clusterMasterClockRate.set({ shard: String(shard) }, rate)
      if (change === 'distrusted') {
        this.metrics.nodeClockDistrusted.inc({ node: String(this.index) })
        this.options.log?.warn(
          { node: this.index, master: address, why: watch.lastViolation },
          'redis cluster master clock distrusted: the cluster does not count until it has behaved for MAX_TTL_MS',
        )
      }
    }
    const first = this.masterClocks.values().next().value
    if (first) this.clock = first
    this.masterRounds++
  }

  /** Resolves once connected and allowed to vote, or after `withinMs`, whichever comes first; never rejects. */
  async waitUntilReady(withinMs: number): Promise<boolean> {
    const deadline = Date.now() + withinMs
    const connected = await this.waitForConnection(withinMs)
    while (connected && (this.role === undefined || (this.role === 'master' && !this.checked)) && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 10))
    }
    return connected
  }

  private waitForConnection(withinMs: number): Promise<boolean> {
    if (this.up) return Promise.resolve(true)
    return new Promise((resolve) => {
      const done = (ready: boolean) => {
        clearTimeout(timer)
        this.client.off('ready', onReady)
        resolve(ready)
      }
      const onReady = () => done(true)
      const timer = setTimeout(() => done(this.up), withinMs)
      this.client.on('ready', onReady)
    })
  }

  status(): NodeStatus {
    const now = performance.now()
    return {
      index: this.index,
      address: this.address,
      up: this.up,
      latencyMs: this.lastLatencyMs,
      vote: this.vote,
      quarantineMs: Math.max(0, Math.ceil(this.quarantinedUntil - now)),
      clock: this.clock.status(now),
      lastError: this.health.lastError,
    }
  }

  /**
   * The restart record of another node kept on this one (src/redis/restarts.ts): the run_ids seen for
   * node `index`. Adds `runId` (after clearing the others when `reset`) and returns the set as it was.
   */
  async recordRun(key: string, runId: string, reset: boolean, ttlMs: number): Promise<string[]> {
    const tx = this.client.multi().smembers(key)
    if (reset) tx.del(key)
    const replies = await this.measure(tx.sadd(key, runId).pexpire(key, ttlMs).exec())
    const [err, members] = replies?.[0] ?? [new Error('no reply')]
    if (err) throw classify(err, this.timeoutMs)
    return members as string[]
  }

  /** Run one script; rejects with a NodeError saying whether the node was down, slow or broken. */
  run(script: ScriptName, keys: readonly string[], args: readonly (string | number)[]): Promise<unknown> {
    const waitReplicas = this.options.waitReplicas ?? 0
    const confirmed = waitReplicas > 0 ? CONFIRMED.get(script) : undefined
    if (confirmed) return this.measure(this.runConfirmed(script, keys, args, waitReplicas, confirmed))
    const loaded = this.scripts.get(script)
    if (!loaded) return Promise.reject(new NodeError('error', `no script ${script}`))
    this.writes.beforeWrite()
    return this.measure(runScript(this.client, loaded, keys, args))
  }

  /**
   * Run one script and decode its reply (src/locks/scripts/); rejects with a NodeError saying whether
   * the node was down, slow or broken.
   */
  call<In, Out>(script: Script<In, Out>, keys: readonly string[], input: In): Promise<Out> {
    const args = script.args(input)
    const waitReplicas = this.options.waitReplicas ?? 0
    const confirms = script.confirms
    if (waitReplicas > 0 && confirms) {
      const changed = (reply: unknown) => confirms(script.decode(reply))
      return this.measure(this.runConfirmed(script.name, keys, args, waitReplicas, changed), script.decode)
    }
    const loaded = this.scripts.get(script.name)
    if (!loaded) return Promise.reject(new NodeError('error', `no script ${script.name}`))
    this.writes.beforeWrite()
    return this.measure(runScript(this.client, loaded, keys, args), script.decode)
  }

  /**
   * REDIS_WAIT_REPLICAS: the script and `WAIT n` in one pipeline on the connection to the master
   * that owns the lock's slot (WAIT counts the replicas that have this connection's writes). A change
   * not confirmed by n replicas within most of the node timeout fails like an unreachable node: the
   * engine rolls an attempt back and answers 503.
   */
  private async runConfirmed(
    script: ScriptName,
    keys: readonly string[],
    args: readonly (string | number)[],
    replicas: number,
    changed: (reply: unknown) => boolean,
  ): Promise<unknown> {
    const waitMs = Math.max(1, Math.floor(this.timeoutMs * 0.8))
    const pipeline = this.client.pipeline()
    ;(pipeline as unknown as Record<ScriptName, DefinedScript>)[script].call(pipeline, ...keys, ...args)
    pipeline.wait(replicas, waitMs)
    const [ran, waited] = (await pipeline.exec()) ?? []
    if (!ran || ran[0]) throw ran?.[0] ?? new Error('no reply')
    const reply = ran[1]
    if (!changed(reply)) return reply
    if (!waited || waited[0]) throw waited?.[0] ?? new Error('no reply to WAIT')
    const acked = Number(waited[1])
    if (acked < replicas) {
      throw new NodeError(
        'unavailable',
        `only ${acked} of ${replicas} replicas confirmed the write within ${waitMs} ms (REDIS_WAIT_REPLICAS)`,
      )
    }
    return reply
  }

  /**
   * One SCAN step over the hash keys matching `pattern`: the next cursor and the keys found. A
   * cluster is scanned master after master (the cursor names the master: src/redis/cluster.ts).
   */
  scanHashes(cursor: string, pattern: string, count: number): Promise<[string, string[]]> {
    if (isCluster(this.client)) return this.measure(scanCluster(this.client, cursor, pattern, count))
    return this.measure(this.client.scan(cursor, 'MATCH', pattern, 'COUNT', count, 'TYPE', 'hash'))
  }

  /**
   * A connection of its own listening on `channel` (pub/sub takes a connection over). It resubscribes
   * by itself after a reconnect; pushes sent meanwhile are lost, so `onReconnect` tells the caller.
   */
  subscribe(channel: string, onMessage: (message: string) => void, onReconnect: () => void): Subscription {
    // Classic SUBSCRIBE, also in a cluster: a PUBLISH on any node reaches the subscribers of every
    // node (the cluster bus), so a replica needs one subscription whatever slot a lock lives in.
    const sub: RedisClient = isCluster(this.client)
      ? this.client.duplicate(undefined, {
          enableOfflineQueue: true,
          redisOptions: { ...this.client.options.redisOptions, commandTimeout: undefined, autoResendUnfulfilledCommands: true },
        })
      : this.client.duplicate({ enableOfflineQueue: true, commandTimeout: undefined, autoResendUnfulfilledCommands: true })
    sub.on('error', () => undefined)
    sub.on('message', (_channel: string, message: string) => onMessage(message))
    let connectedBefore = false
    sub.on('ready', () => {
      if (connectedBefore) onReconnect()
      connectedBefore = true
    })
    sub.subscribe(channel).catch(() => undefined)
    // A subscriber that never got ready (e.g. on a port that accepts and never answers) would queue QUIT forever.
    return {
      close: () =>
        sub.status === 'ready'
          ? sub.quit().then(
              () => undefined,
              () => sub.disconnect(),
            )
          : Promise.resolve(sub.disconnect()),
    }
  }

  ping(): Promise<unknown> {
    return this.measure(this.client.ping())
  }

  // Not an async function: that would cost every command a promise and a microtask more.
  private measure<T>(pending: Promise<T>): Promise<T>
  private measure<T>(pending: Promise<unknown>, decode: (reply: unknown) => T): Promise<T>
  private measure<T>(pending: Promise<unknown>, decode?: (reply: unknown) => T): Promise<T> {
    const started = performance.now()
    // A cluster may hold a command back (redirections, a failover in progress) before any
    // connection's own timeout starts: the node timeout bounds it from here.
    const bounded = this.topology.mode === 'cluster' ? withDeadline(pending, this.timeoutMs) : pending
    return bounded.then(
      (value) => {
        const ms = performance.now() - started
        this.lastLatencyMs = Math.round(ms * 100) / 100
        this.commandDuration.observe(ms / 1000)
        return decode ? decode(value) : (value as T)
      },
      (err: unknown) => {
        const failure = classify(err, this.timeoutMs)
        this.health.commandFailed(err)
        throw failure
      },
    )
  }

  async close(): Promise<void> {
    this.health.close()
    try {
      await this.client.quit()
    } catch {
      this.client.disconnect()
    }
  }
}

function withDeadline<T>(pending: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const late = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error('Command timed out')), ms)
  })
  return Promise.race([pending, late]).finally(() => clearTimeout(timer))
}

function classify(err: unknown, timeoutMs: number): NodeError {
  if (err instanceof NodeError) return err
  const message = err instanceof Error ? err.message : String(err)
  if (/timed out/i.test(message)) return new NodeError('timeout', `no answer within ${timeoutMs} ms`)
  if (/writeable|closed|ECONNREFUSED|ECONNRESET|EPIPE|connect/i.test(message)) return new NodeError('unavailable', 'not connected')
  // A cluster between owners of a slot (failover, resharding): the command ran nowhere.
  if (/\b(CLUSTERDOWN|TRYAGAIN|MOVED|ASK)\b|redirections|slots cache/i.test(message)) return new NodeError('unavailable', message)
  return new NodeError('error', message)
}
