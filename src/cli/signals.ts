/** lockctl's own signals during a run, and the exit code a signal means. */
import type { ChildProcess } from 'node:child_process'
import { constants } from 'node:os'
import type { Run } from './lease.js'

/** Signals lockctl passes on to CMD's process group. */
export const FORWARDED_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGQUIT'] as const

export function signalExitCode(signal: NodeJS.Signals | null | undefined): number {
  const n = signal ? constants.signals[signal] : undefined
  return 128 + (n ?? 0)
}

/**
 * lockctl's own signals during a run. Before CMD exists a signal abandons the acquire (`interrupted`;
 * the service rolls back a grant that races a hang-up); afterwards it is forwarded to CMD's process
 * group. SIGTSTP is ignored: Ctrl-Z would stop lockctl (and its renewals) but not CMD, which has its
 * own session, and the lock would lapse under a running CMD. If lockctl itself dies (an unexpected
 * error), CMD's group gets SIGTERM: it must not carry on without renewals.
 */
export class Signals {
  readonly #interrupted = new AbortController()
  readonly interrupted = this.#interrupted.signal
  /** The first signal, when it came before CMD started. */
  first: NodeJS.Signals | undefined
  child: ChildProcess | undefined

  constructor(readonly run: Run) {
    for (const s of FORWARDED_SIGNALS) process.on(s, this.#onSignal)
    process.on('SIGTSTP', this.#onStop)
    process.on('exit', this.#onExit)
  }

  /**
   * Signals CMD's process group; `evenAfterExit`: also when CMD itself has exited, for what is left
   * of its group (its pid, the group id, cannot be reused while any member lives).
   */
  toGroup(signal: NodeJS.Signals, evenAfterExit = false): void {
    const child = this.child
    if (child?.pid === undefined) return
    if (!evenAfterExit && (child.exitCode !== null || child.signalCode !== null)) return
    try {
      process.kill(-child.pid, signal)
    } catch {
      // the group is gone already
    }
  }

  close(): void {
    for (const s of FORWARDED_SIGNALS) process.off(s, this.#onSignal)
    process.off('SIGTSTP', this.#onStop)
    process.off('exit', this.#onExit)
  }

  readonly #onSignal = (signal: NodeJS.Signals): void => {
    if (this.child) {
      this.toGroup(signal)
      return
    }
    this.first ??= signal
    this.#interrupted.abort()
  }

  readonly #onStop = (): void =>
    this.run.warn(`lockctl: ${this.run.context}: ignoring SIGTSTP (CMD runs under a lock that must keep being renewed)`)

  readonly #onExit = (): void => this.toGroup('SIGTERM')
}
