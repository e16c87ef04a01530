import { performance } from 'node:perf_hooks'
import { Redis } from 'ioredis'
import { SCRIPT_KEY_COUNT, type ScriptName } from './scripts.js'
import type { Metrics } from '../metrics.js'
import { NodeHealth, quietClient, secretsOf, type NodeLastError, type NodeLogger } from './health.js'

export interface NodeStatus {
  index: number
  address: string
  up: boolean
  latencyMs: number | null
  /** ms until a node that came back empty may count toward grants again (0: it counts) */
  quarantineMs: number
  /** The latest failure talking to this node (kept after it recovers), or null */
  lastError: NodeLastError | null
}

export interface NodeOptions {
  timeoutMs: number
  /**
   * Redlock's delayed restart: after the node is seen to restart (its run_id changed), its "granted"
   * votes do not count for this long (MAX_TTL_MS), so a lock granted before the restart cannot be
   * granted again through it. 0 disables it (a quorum of one has no other node to carry on with).
   */
  quarantineMs: number
  /** The Lua scripts, settings included (loadScripts). */
  scripts: ReadonlyMap<ScriptName, string>
  /** Where node failures and recoveries are logged (warn). */
  log?: NodeLogger
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

/** "host:port" of a Redis URL: what logs, metrics and bodies may show (never the password). */
export function redisAddress(url: string): string {
  const u = new URL(url)
  return `${u.hostname}:${u.port || '6379'}`
}

type ScriptCommand = (...args: (string | number)[]) => Promise<unknown>

/**
 * One Redis master. Commands fail fast instead of queueing while the node is down, time out after
 * `timeoutMs`, and are never re-sent after a reconnect: an acquire that ran late could otherwise
 * grant a lock nobody is waiting for.
 */
export class RedisNode {
  readonly address: string
  readonly client: Redis
  readonly health: NodeHealth
  private lastLatencyMs: number | null = null
  private readonly timeoutMs: number
  private runId: string | undefined
  private role: string | undefined
  private quarantinedUntil = 0

  constructor(
    readonly index: number,
    url: string,
    private readonly options: NodeOptions,
    private readonly metrics: Metrics,
  ) {
    const timeoutMs = options.timeoutMs
    this.timeoutMs = timeoutMs
    this.address = redisAddress(url)
    this.client = new Redis(url, {
      enableOfflineQueue: false,
      autoResendUnfulfilledCommands: false,
      maxRetriesPerRequest: 0,
      commandTimeout: timeoutMs,
      connectTimeout: Math.max(timeoutMs, 1000),
      retryStrategy: (times) => Math.min(50 * times, 1000),
      lazyConnect: false,
    })
    this.health = new NodeHealth(index, this.address, secretsOf(url), metrics, options.log)
    quietClient(this.client, (notice) => options.log?.warn({ node: index, address: this.address }, `Redis node ${index} at ${this.address}: ${notice}`))
    // Connection errors also surface as failed commands and as `up` = false; ioredis reconnects by itself.
    this.client.on('error', (err) => this.health.connectionFailed(err))
    this.client.on('ready', () => {
      this.metrics.nodeUp.set({ node: String(index) }, 1)
      this.identify()
    })
    this.client.on('close', () => {
      this.metrics.nodeUp.set({ node: String(index) }, 0)
      this.role = undefined
      this.health.closed()
    })
    this.metrics.nodeUp.set({ node: String(index) }, 0)
    for (const [name, lua] of options.scripts) {
      this.client.defineCommand(name, { numberOfKeys: SCRIPT_KEY_COUNT, lua })
    }
  }

  get up(): boolean {
    return this.client.status === 'ready'
  }

  /**
   * Whether a "granted" answer from this node counts toward a majority: it is a known master and not
   * quarantined after a restart. Sent on 'ready' before any lock command can be, the INFO reply always
   * arrives before the reply of a lock command on the same connection, so this is current when votes
   * are counted.
   */
  get canGrant(): boolean {
    return this.role === 'master' && Date.now() >= this.quarantinedUntil
  }

  get isReplica(): boolean {
    return this.role !== undefined && this.role !== 'master'
  }

  private identify(): void {
    this.client.info('server', 'replication').then(
      (info) => {
        const runId = /^run_id:(\w+)/m.exec(info)?.[1]
        const role = /^role:(\w+)/m.exec(info)?.[1]
        if (this.runId !== undefined && runId !== this.runId && this.options.quarantineMs > 0) {
          this.quarantinedUntil = Date.now() + this.options.quarantineMs
          this.metrics.nodeRestarts.inc({ node: String(this.index) })
        }
        this.runId = runId
        this.role = role
        this.health.identified(role)
      },
      () => {
        // Not identified yet: its grants do not count until an attempt succeeds.
        setTimeout(() => {
          if (this.up && this.role === undefined) this.identify()
        }, 500).unref()
      },
    )
  }

  /** Resolves once connected and identified, or after `withinMs`, whichever comes first; never rejects. */
  async waitUntilReady(withinMs: number): Promise<boolean> {
    const deadline = Date.now() + withinMs
    const connected = await this.waitForConnection(withinMs)
    while (connected && this.role === undefined && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10))
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
    return {
      index: this.index,
      address: this.address,
      up: this.up,
      latencyMs: this.lastLatencyMs,
      quarantineMs: Math.max(0, this.quarantinedUntil - Date.now()),
      lastError: this.health.lastError,
    }
  }

  /** Run one script; rejects with a NodeError saying whether the node was down, slow or broken. */
  run(script: ScriptName, keys: readonly string[], args: readonly (string | number)[]): Promise<unknown> {
    const command = (this.client as unknown as Record<ScriptName, ScriptCommand>)[script]
    return this.measure(command.call(this.client, ...keys, ...args))
  }

  ping(): Promise<unknown> {
    return this.measure(this.client.ping())
  }

  private async measure<T>(pending: Promise<T>): Promise<T> {
    const started = performance.now()
    const node = String(this.index)
    try {
      const value = await pending
      this.lastLatencyMs = Math.round((performance.now() - started) * 100) / 100
      this.metrics.nodeCommandDuration.observe({ node }, (performance.now() - started) / 1000)
      return value
    } catch (err) {
      const failure = classify(err, this.timeoutMs)
      this.health.commandFailed(err)
      throw failure
    }
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


function classify(err: unknown, timeoutMs: number): NodeError {
  const message = err instanceof Error ? err.message : String(err)
  if (/timed out/i.test(message)) return new NodeError('timeout', `no answer within ${timeoutMs} ms`)
  if (/writeable|closed|ECONNREFUSED|ECONNRESET|EPIPE|connect/i.test(message)) return new NodeError('unavailable', 'not connected')
  return new NodeError('error', message)
}
