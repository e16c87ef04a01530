"""Leader election: the routes, the observer, and while_leader against the real service."""

from __future__ import annotations

import threading
import time
from typing import Any, Dict, List

from ._env import TestCase, admin, key

from lock_service import ElectionEvent, InvalidArgument, LockHeld, LockLost, LockNotFound, NotOwner


class Elections(TestCase):
    def test_campaign_proclaim_renew_resign(self) -> None:
        name = key("election")
        e = self.client.elections
        won = e.campaign(name, "node-1", value="http://10.0.0.1", ttl_ms=5000)
        self.assertEqual((won.candidate, won.value, won.revision, won.created), ("node-1", "http://10.0.0.1", 1, True))
        self.assertGreater(won.term, 0)
        self.assertEqual(
            e.campaign(name, "node-1", token=won.token).term, won.term, "the leader's own campaign again: same term"
        )
        with self.assertRaises(LockHeld) as held:
            e.campaign(name, "node-2")
        self.assertEqual(held.exception.owners, ["node-1"])
        self.assertEqual(held.exception.details["leader"]["term"], won.term)
        proclaimed = e.proclaim(name, won.token, "http://10.0.0.1:9090")
        self.assertEqual((proclaimed.term, proclaimed.revision), (won.term, 2))
        with self.assertRaises(NotOwner):
            e.proclaim(name, "not-the-leader-token-01", "x")
        self.assertEqual(e.renew(name, won.token, ttl_ms=6000).ttl_ms, 6000)
        info = e.inspect(name)
        assert info is not None and info.leader is not None
        self.assertEqual(
            (info.leader.candidate, info.leader.value, info.term), ("node-1", "http://10.0.0.1:9090", won.term)
        )
        self.assertIn(name, [i.name for i in e.list(prefix=name).items])
        self.assertTrue(e.resign(name, won.token))
        with self.assertRaises(LockNotFound):
            e.resign(name, won.token)
        self.assertIsNone(e.inspect(name))
        with self.assertRaises(InvalidArgument):
            e.campaign(name, "")

    def test_observe_long_poll_and_force_resign(self) -> None:
        name = key("observe-poll")
        e = self.client.elections
        won = e.campaign(name, "node-1", ttl_ms=5000)
        now = e.observe(name, wait_ms=100)
        self.assertEqual((now.term, now.revision), (won.term, 1))
        answered: Dict[str, Any] = {}
        poll = threading.Thread(
            target=lambda: answered.update(o=admin().elections.observe(name, after=won.term, revision=1, wait_ms=5000))
        )
        poll.start()
        time.sleep(0.2)
        self.assertTrue(e.force_resign(name))
        poll.join(5)
        o = answered["o"]
        self.assertTrue(o.changed)
        self.assertIsNone(o.leader)
        self.assertEqual((o.revision, o.reason), (0, "force_released"))

    def test_an_observer_follows_every_change(self) -> None:
        name = key("observer")
        e = self.client.elections
        seen: List[ElectionEvent] = []
        vacated = threading.Event()

        def on_change(event: ElectionEvent) -> None:
            seen.append(event)
            if event.kind == "vacant" and len(seen) > 1:
                vacated.set()

        with self.client.observe(name, on_change) as observer:
            time.sleep(0.3)
            won = e.campaign(name, "node-1", value="v1", ttl_ms=5000)
            e.proclaim(name, won.token, "v2")
            time.sleep(0.1)
            self.assertEqual(observer.leader.value if observer.leader else None, "v2")
            e.resign(name, won.token)
            self.assertTrue(vacated.wait(3))
        # States, not every step: a look after the proclaim tells "elected" at revision 2 at once.
        self.assertEqual((seen[0].kind, seen[0].revision), ("vacant", 0))
        self.assertEqual((seen[-1].kind, seen[-1].term, seen[-1].reason), ("vacant", won.term, "resigned"))
        leading = seen[1:-1]
        self.assertEqual(leading[0].kind, "elected")
        self.assertEqual({ev.term for ev in leading}, {won.term})
        self.assertEqual((leading[-1].revision, leading[-1].value), (2, "v2"))
        self.assertEqual([ev.revision for ev in leading], sorted(ev.revision for ev in leading), "never backwards")


class FenceChecks(TestCase):
    def test_every_kind_checks_its_own_resource(self) -> None:
        k = key("fenced")
        read = self.client.rwlocks.acquire_read(k, ttl_ms=10_000)
        permit = self.client.semaphores.acquire(k, limit=2, permits=1, ttl_ms=10_000)
        self.assertTrue(self.client.rwlocks.check_fence(k, read.fence).current)
        self.assertTrue(self.client.check_fence(k, read.fence, kind="write").current, "write checks the rwlock too")
        self.assertTrue(self.client.semaphores.check_fence(k, permit.fence).current)
        self.assertFalse(self.client.check_fence(k, read.fence).held, "the lock of the same key is free")
        won = self.client.elections.campaign(k, "node-1", ttl_ms=10_000)
        self.assertTrue(self.client.elections.check_fence(k, won.term).current)
        self.assertTrue(self.client.check_fence(k, won.term, kind="leader").current)
        self.client.elections.resign(k, won.token)
        gone = self.client.elections.check_fence(k, won.term)
        self.assertEqual((gone.current, gone.fence, gone.held), (False, None, False))
        with self.assertRaises(InvalidArgument) as raised:
            self.client.elections.check_fence(k, 0)
        self.assertEqual(raised.exception.argument, "term")
        with self.assertRaises(InvalidArgument) as raised:
            self.client.check_fence(k, 1, kind="lock")
        self.assertEqual(raised.exception.argument, "kind")


class WhileLeader(TestCase):
    def test_leads_past_three_ttls_and_hands_over_on_exit(self) -> None:
        name = key("while-leader")
        elected: Dict[str, Any] = {}

        def second() -> None:
            with admin().while_leader(name, "node-2", ttl_ms=1000, wait_ms=8000) as leadership:
                elected.update(term=leadership.term, at=time.monotonic(), reanchored=leadership.reanchored)

        with self.client.while_leader(name, "node-1", value="v1", ttl_ms=1000) as leadership:
            self.assertEqual(leadership.fence, leadership.term)
            waiter = threading.Thread(target=second)
            waiter.start()
            time.sleep(3.2)
            info = self.client.elections.inspect(name)
            assert info is not None and info.leader is not None
            self.assertEqual((info.leader.candidate, info.leader.term), ("node-1", leadership.term))
            self.assertFalse(leadership.lost.is_set())
            self.assertEqual(leadership.proclaim("v2").revision, 2)
            left = time.monotonic()
        waiter.join(5)
        self.assertGreater(elected["term"], leadership.term)
        self.assertLess(elected["at"] - left, 1.0, "the waiting candidate is elected at the resignation")
        self.assertTrue(elected["reanchored"], "a term won after a wait is re-anchored")

    def test_a_forced_resignation_is_signalled(self) -> None:
        name = key("deposed")
        with self.assertRaises(LockLost) as raised:
            with self.client.while_leader(name, "node-1", ttl_ms=10_000) as leadership:
                self.assertTrue(leadership.watching.wait(2))
                self.client.elections.force_resign(name)
                answered = time.monotonic()
                self.assertTrue(leadership.lost.wait(2))
                assert leadership.lost_at is not None
                self.assertLess(leadership.lost_at - answered, 0.2)
                leadership.check()
        self.assertEqual(raised.exception.reason, "force_released")
        self.assertIsNone(leadership.release_error)
