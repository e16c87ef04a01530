import { performance } from 'node:perf_hooks'
import type { Redis } from 'ioredis'
import { keyCountOf, type ScriptName, type Script } from './scripts.js'
import type { Metrics } from '../metrics.js'
import type { ClockStatus } from './clock.js'
import { NodeClock } from './node-clock.js'
import { NodeHealth, quietClient, type NodeLastError, type NodeLog } from './health.js'
import { createClient, topologyAddress, topologySecrets, type RedisClient, type Topology } from './topology.js'
import { WriteCoalescer, type Coalescing, type HoldRule } from './coalesce.js'
import { callArgs, loadedScript, runScript, runScriptPublicly, type CallArgs, type LoadedScript } from './script-call.js'
import { runConfirmed } from './confirmed-writes.js'
import { classifyRedisError, NodeError, nodeErrorOf } from './errors.js'
import type { VoteState } from '../contract/words.js'
import { VoteRule, type Identity, type RestartVerdict } from './vote-rule.js'
import { scanKeys, subscribe, type Subscription } from './pubsub-scan.js'

export { NodeError, type NodeFailure } from './errors.js'
export type { NodeLog } from './health.js'
export type { Identity, RestartVerdict } from './vote-rule.js'
export { allSubscribed, type Subscription } from './pubsub-scan.js'

export interface NodeStatus {
  index: number
  address: string
  up: boolean
  latencyMs: number | null
  /** Whether this node's answers count toward a majority now, and if not, why (the vote rule, VoteState). */
  vote: VoteState
  /** ms until a node that restarted empty counts toward grants again (0: it counts) */
  quarantineMs: number
  /** When the node last started anew since this replica met it (ISO 8601; its run_id changed), or null */
  restartedAt: string | null
  clock: ClockStatus
  /** The latest failure talking to this node (kept after it recovers), or null */
  lastError: NodeLastError | null
}

export interface NodeOptions {
  timeoutMs: number
  /** The Lua scripts, settings included (loadScripts). */
  scripts: ReadonlyMap<ScriptName, string>
  driftFactor: number
  /** How long a misbehaving clock must behave before it counts again (MAX_TTL_MS + MAX_LOCK_DELAY_MS). */
  clockProbationMs: number
  /** When writes are held back to go out together (src/redis/coalesce.ts). */
  holdRule: HoldRule
  /** Whether the node is one of several asked the same calls (a quorum): they share each call's arguments. */
  sharesCalls?: boolean
  /** Who batches writes: ours (the default) or ioredis' auto-pipelining, for the bench only (src/redis/coalesce.ts). */
  coalescing?: Coalescing
  /** REDIS_WAIT_REPLICAS: writes that answer a client wait for this many replicas (0: no WAIT). */
  waitReplicas?: number
  log?: NodeLog
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
  /** Scripts sent in one turn go out together (src/redis/coalesce.ts); none when ioredis batches, or nothing does (the bench). */
  private readonly writes: WriteCoalescer | undefined
  readonly topology: Topology
  readonly health: NodeHealth
  private readonly clock: NodeClock
  private readonly rule: VoteRule
  private lastLatencyMs: number | null = null
  private readonly timeoutMs: number
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
    const { timeoutMs, log } = options
    this.timeoutMs = timeoutMs
    this.topology = typeof target === 'string' ? { mode: 'standalone', url: target } : target
    this.address = topologyAddress(this.topology)
    this.commandDuration = metrics.nodeCommandDuration.series({ node: String(index) })
    const autoPipelining = options.coalescing === 'auto'
    this.client = createClient(this.topology, { timeoutMs, ...(autoPipelining ? { autoPipelining } : {}) })
    this.writes = (options.coalescing ?? 'ours') === 'ours' ? new WriteCoalescer(this.client, options.holdRule) : undefined
    this.health = new NodeHealth(index, this.address, topologySecrets(this.topology), metrics, log)
    this.clock = new NodeClock(
      { index, address: this.address, client: this.client, metrics, log },
      options.driftFactor,
      options.clockProbationMs,
    )
    this.rule = new VoteRule({
      index,
      address: this.address,
      topology: this.topology,
      client: this.client,
      clock: this.clock,
      sampleClock: () => this.sampleClock(),
      health: this.health,
      metrics,
      log,
      restartCheck: (identity) => this.restartCheck?.(this, identity),
    })
    quietClient(this.client as Redis, (notice) =>
      log?.warn({ node: index, address: this.address }, `Redis node ${index} at ${this.address}: ${notice}`),
    )
    // Connection errors also surface as failed commands and as `up` = false; ioredis reconnects by itself.
    this.client.on('error', (err) => this.health.connectionFailed(err))
    this.client.on('ready', () => {
      this.metrics.nodeUp.set({ node: String(index) }, 1)
      this.rule.connected()
    })
    this.client.on('close', () => {
      this.metrics.nodeUp.set({ node: String(index) }, 0)
      this.rule.disconnected()
      this.health.closed()
    })
    this.metrics.nodeUp.set({ node: String(index) }, 0)
    this.scripts = new Map([...options.scripts].map(([name, lua]) => [name, loadedScript(lua, keyCountOf(name))]))
  }

  get up(): boolean {
    return this.client.status === 'ready'
  }

  /** The vote rule (see VoteState). */
  get vote(): VoteState {
    return this.rule.vote(this.up)
  }

  /** Whether this node's answers count toward a majority now. */
  get mayVote(): boolean {
    return this.vote === 'counts'
  }

  get isReplica(): boolean {
    return this.rule.isReplica
  }

  /** INFO said cluster_enabled:1 (a standalone URL that points into a Redis Cluster is refused at start). */
  get clusterEnabled(): boolean {
    return this.rule.clusterEnabled
  }

  /** The run_id of the identified node, while connected and identified. */
  get identifiedRunId(): string | undefined {
    return this.rule.identifiedRunId
  }

  /** One TIME sample for the clock check; never rejects. */
  async sampleClock(): Promise<void> {
    if (this.up) await this.clock.sample()
  }

  /** Resolves once connected and allowed to vote, or after `withinMs`, whichever comes first; never rejects. */
  async waitUntilReady(withinMs: number): Promise<boolean> {
    const deadline = Date.now() + withinMs
    const connected = await this.waitForConnection(withinMs)
    while (connected && this.rule.identifying && Date.now() < deadline) {
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
      quarantineMs: this.rule.quarantineMs(now),
      restartedAt: this.rule.restartedAt === undefined ? null : new Date(this.rule.restartedAt).toISOString(),
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
    if (err) throw nodeErrorOf(classifyRedisError(err, this.timeoutMs))
    return members as string[]
  }

  /**
   * Run one script and decode its reply (src/locks/scripts/); rejects with a NodeError saying whether
   * the node was down, slow or broken.
   */
  call<In, Out>(script: Script<In, Out>, keys: readonly string[], input: In): Promise<Out> {
    const loaded = this.scripts.get(script.name)
    if (!loaded) return Promise.reject(new NodeError('error', `no script ${script.name}`))
    const { confirms } = script
    const changed = confirms && ((reply: unknown) => confirms(script.decode(reply)))
    const args = this.options.sharesCalls ? sharedCallArgs(loaded, script, keys, input) : argsOf(loaded, script, keys, input)
    return this.measure(this.send(loaded, args, changed), script.decode)
  }

  /** The one way a script goes out; `changed`: it is one whose changes replicas confirm (REDIS_WAIT_REPLICAS). */
  private send(loaded: LoadedScript, args: CallArgs, changed: ((reply: unknown) => boolean) | undefined): Promise<unknown> {
    const replicas = this.options.waitReplicas ?? 0
    this.writes?.beforeWrite()
    const reply =
      replicas > 0 && changed
        ? runConfirmed(this.client, loaded, args, { replicas, waitMs: Math.max(1, Math.floor(this.timeoutMs * 0.8)), changed })
        : this.options.coalescing === 'auto'
          ? runScriptPublicly(this.client, loaded, args)
          : runScript(this.client, loaded, args)
    this.writes?.afterWrite()
    return reply
  }

  /** One SCAN step over the keys matching `pattern` (src/redis/pubsub-scan.ts). */
  scanKeys(cursor: string, pattern: string, count: number): Promise<[string, string[]]> {
    return this.measure(scanKeys(this.client, cursor, pattern, count))
  }

  /** A connection of its own listening on `channel` (src/redis/pubsub-scan.ts). */
  subscribe(channel: string, onMessage: (message: string) => void, onReconnect: () => void): Subscription {
    return subscribe(this.client, channel, onMessage, onReconnect)
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
        const classified = classifyRedisError(err, this.timeoutMs)
        this.health.commandFailed(classified)
        throw err instanceof NodeError ? err : nodeErrorOf(classified)
      },
    )
  }

  /**
   * QUIT, then drop the connection whatever came of it: a client still connecting or reconnecting (a
   * sentinel being asked, a TLS handshake refused) may never answer QUIT, and its sockets and timers
   * would keep the process alive after it closed.
   */
  async close(): Promise<void> {
    this.health.close()
    try {
      await withDeadline(this.client.quit(), this.timeoutMs)
    } catch {
      // disconnected below either way
    } finally {
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

/**
 * A call's arguments. A script takes the first of the keys it is given, as many as its `--@keys N`
 * line declares: a lock script written for fewer keys than LockKeys.all has (before `:delay`) still
 * gets its own, not one as an ARGV.
 */
function argsOf<In, Out>(loaded: LoadedScript, script: Script<In, Out>, keys: readonly string[], input: In): CallArgs {
  const own = keys.length > loaded.keyCount ? keys.slice(0, loaded.keyCount) : keys
  return callArgs(loaded, own, script.args(input))
}

/**
 * The call being sent to every node of a quorum. Quorum.ask asks its nodes one after the other in one
 * synchronous loop, with the same script, keys and input: the first node makes the call's arguments
 * (argsOf) and the others reuse them. Forgotten once that loop is over (the next microtask), so that
 * an input object changed later is never mistaken for the same call.
 */
let shared: { script: unknown; keys: readonly string[]; input: unknown; args: CallArgs } | undefined

function sharedCallArgs<In, Out>(loaded: LoadedScript, script: Script<In, Out>, keys: readonly string[], input: In): CallArgs {
  if (shared && shared.script === script && shared.keys === keys && shared.input === input) return shared.args
  if (!shared) queueMicrotask(forgetShared)
  const args = argsOf(loaded, script, keys, input)
  shared = { script, keys, input, args }
  return args
}

function forgetShared(): void {
  shared = undefined
}
