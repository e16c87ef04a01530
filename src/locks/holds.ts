import { performance } from 'node:perf_hooks'
import { fail } from '../errors.js'
import { ReplyCode } from '../redis/scripts.js'
import { fenceHint } from './fence-hint.js'
import { grantOf } from './grant.js'
import { keysOf, type LockContext } from './lock-context.js'
import { forceReleaseScript } from './scripts/force_release.js'
import { releaseScript } from './scripts/release.js'
import { renewScript } from './scripts/renew.js'
import { kindOf, type Grant, type LockMode, type Release, type ReleaseRequest, type RenewRequest } from './types.js'
import { validityMs } from './validity.js'
import {
  answeredValues,
  backendUnavailable,
  consensus,
  countedValues,
  notHeld,
  renewalVotes,
  settledByMajority,
  settledForRenewal,
} from './votes.js'

/** Extend a hold of the token that owns it, on a majority. */
export async function renewHold(ctx: LockContext, req: RenewRequest): Promise<Grant> {
  const { quorum, config } = ctx
  const started = performance.now()
  const renewedAt = Date.now()
  const { keys, hold } = keysOf(ctx, req.mode, req.key)
  const input = { hold, token: req.token, ttlMs: req.ttlMs ?? 0 }
  // A semaphore's hold is renewed only where a majority holds it in the same slots (renewalVotes): its
  // slots are what back its validity, so unlike a new hold's in an attempt they never move.
  const tally = await quorum.ask((node) => node.call(renewScript, keys.all, input), settledForRenewal)
  const renewed = renewalVotes(tally)
  if (renewed.length < tally.majority) throw notHeld(quorum, tally, countedValues(tally), req.key, kindOf(req.mode))

  const ttlMs = consensus(renewed.map((r) => r.ttlMs))
  const validity = validityMs(ttlMs, performance.now() - started, config.driftFactor)
  if (validity <= 0) throw backendUnavailable(quorum, tally, 'validity_expired')
  const semaphore =
    req.mode === 'permit' ? { permits: consensus(renewed.map((r) => r.permits)), limit: consensus(renewed.map((r) => r.limit)) } : undefined
  return grantOf(semaphore ? { ...req, semaphore } : req, {
    fence: consensus(renewed.map((r) => r.fence)),
    ttlMs,
    validityMs: validity,
    since: renewedAt,
    holdCount: consensus(renewed.map((r) => r.holdCount)),
    regranted: true,
  })
}

/** Drop one hold of the token that owns it (a reentrant hold: one of its count). */
export async function releaseHold(ctx: LockContext, req: ReleaseRequest): Promise<Release> {
  const { quorum, room } = ctx
  const { keys, hold } = keysOf(ctx, req.mode, req.key)
  // The fence hint, for the hand-off to the next waiter: one value for every node, so they agree.
  const input = { hold, token: req.token, fenceHint: fenceHint(), replicaId: room.replicaId }
  // Each node's reply carries its pushes to this replica's waiters, delivered even after the tally
  // settles (room.lookAgainWhenBack when there is none).
  const tally = await quorum.ask(
    (node) =>
      node.call(releaseScript, keys.all, input).then(
        (reply) => {
          if (reply.code === ReplyCode.RELEASED) for (const push of reply.pushes) room.deliver(node.index, push)
          return reply
        },
        (err: unknown) => {
          room.lookAgainWhenBack(node, keys.holds)
          throw err
        },
      ),
    settledByMajority,
  )
  // Release reads every answer, voting or not: removing a hold is safe whoever reports it.
  const all = answeredValues(tally)
  const done = all.filter((r) => r.code > 0)
  if (done.length < tally.majority) throw notHeld(quorum, tally, all, req.key, kindOf(req.mode))
  const holdCount = consensus(done.map((r) => (r.code === ReplyCode.DECREMENTED ? r.holdCount : 0)))
  return { key: req.key, released: holdCount === 0, holdCount }
}

/** Operators: drop the write hold, or the read or semaphore hold with `fence`, whoever holds it. */
export async function forceRelease(ctx: LockContext, mode: LockMode, key: string, fence: number | undefined): Promise<Release> {
  const { quorum } = ctx
  const { keys, hold } = keysOf(ctx, mode, key)
  const input = { hold, fence: fence ?? 0, fenceHint: fenceHint() }
  const tally = await quorum.ask((node) => node.call(forceReleaseScript, keys.all, input))
  const answered = answeredValues(tally)
  if (answered.length < tally.majority) throw backendUnavailable(quorum, tally, 'no_majority')
  if (!answered.some((r) => r.dropped)) {
    const what = hold === 'write' ? 'write hold' : `${hold === 'read' ? 'read hold' : 'hold'} with fence ${fence}`
    throw fail.notFound(key, `no ${what} on ${kindOf(mode)} "${key}"`)
  }
  return { key, released: true, holdCount: 0 }
}
