"""The rest of the API, beyond the scenarios: every kind of hold's verbs, sessions, listings, health, error mapping."""

from __future__ import annotations

import threading
import time
from typing import Any, List

from ._env import TestCase, key

from lock_service import (
    InvalidArgument,
    LockDelayed,
    LockServiceError,
    NotOwner,
    PermitsMismatch,
    TooManyWatchers,
    TooManyStreams,
    RateLimited,
    UpgradeNotSupported,
)
from lock_service.errors import error_from_answer


class Api(TestCase):
    def test_reentrant_holds_count(self) -> None:
        k = key("reentrant")
        first = self.client.locks.acquire(k, ttl_ms=5000)
        again = self.client.locks.acquire(k, ttl_ms=5000, token=first.token, reentrant=True)
        self.assertEqual((again.hold_count, again.fence, again.created), (2, first.fence, False))
        released = self.client.locks.release(k, first.token)
        self.assertEqual((released.released, released.hold_count), (False, 1))
        self.assertTrue(self.client.locks.release(k, first.token).released)

    def test_rwlock_admin_views_and_force_release_of_a_reader(self) -> None:
        r = key("rw-admin")
        rw = self.client.rwlocks
        reader = rw.acquire_read(r, ttl_ms=5000, owner="reader-1")
        info = rw.inspect(r, readers=True)
        assert info is not None and info.reader_holds is not None
        self.assertEqual((info.readers, info.writer, info.owners), (1, None, ["reader-1"]))
        self.assertEqual(info.reader_holds[0].fence, reader.fence)
        with self.assertRaises(UpgradeNotSupported):
            rw.acquire_write(r, token=reader.token)
        self.assertEqual([i.key for i in rw.list(prefix=r).items], [r])
        with self.assertRaises(InvalidArgument):
            rw.force_release(r, "read")
        self.assertTrue(rw.force_release(r, "read", fence=reader.fence).released)
        self.assertIsNone(rw.inspect(r))

    def test_write_hold_watch_stream_and_renew(self) -> None:
        r = key("rw-watch")
        rw = self.client.rwlocks
        writer = rw.acquire_write(r, ttl_ms=5000)
        self.assertEqual(rw.renew(r, "write", writer.token, ttl_ms=6000).ttl_ms, 6000)
        with self.assertRaises(NotOwner):
            rw.renew(r, "write", "not-the-writer-token-01")
        events: List[Any] = []
        with rw.watch_stream(r, "write", writer.token, wait_ms=5000) as stream:
            for event in stream:
                events.append(event)
                if event.held:
                    rw.release(r, "write", writer.token)
        self.assertEqual([e.held for e in events], [True, False])
        self.assertEqual(events[-1].reason, "released")
        self.assertIsNotNone(events[-1].at)

    def test_semaphore_admin_views_watch_and_force_release(self) -> None:
        s = key("sem-admin")
        sem = self.client.semaphores
        hold = sem.acquire(s, limit=2, permits=2, ttl_ms=5000, owner="batch")
        self.assertEqual((hold.mode, hold.limit, hold.permits), ("permit", 2, 2))
        with self.assertRaises(PermitsMismatch):
            sem.acquire(s, limit=2, permits=1, token=hold.token)
        self.assertEqual(sem.renew(s, hold.token).fence, hold.fence)
        info = sem.inspect(s, holds=True)
        assert info is not None and info.holds is not None
        self.assertEqual((info.holds[0].fence, info.holds[0].permits, info.owners), (hold.fence, 2, ["batch"]))
        self.assertEqual([i.key for i in sem.list(prefix=s).items], [s])
        self.assertTrue(sem.watch(s, hold.token, wait_ms=100).held)
        self.assertTrue(sem.force_release(s, fence=hold.fence).released)
        event = sem.watch(s, hold.token, wait_ms=1000)
        self.assertEqual((event.held, event.reason), (False, "force_released"))

    def test_session_verbs(self) -> None:
        sessions = self.client.sessions
        session = sessions.open(ttl_ms=5000, owner="py-worker", lock_delay_ms=1000)
        self.assertEqual((session.ttl_ms, session.owner, session.lock_delay_ms), (5000, "py-worker", 1000))
        k = key("session-verbs")
        grant = self.client.locks.acquire(k, session=session.id)
        alive = sessions.keepalive(session.id)
        self.assertEqual([(h.key, h.kind, h.fence) for h in alive.holds], [(k, "exclusive", grant.fence)])
        self.assertTrue(0 < alive.validity_ms <= 5000)
        info = sessions.inspect(session.id)
        assert info is not None
        self.assertEqual((info.owner, len(info.holds)), ("py-worker", 1))
        self.assertTrue(sessions.watch(session.id, wait_ms=100).held)
        events: List[Any] = []
        stream = sessions.watch_stream(session.id, wait_ms=5000)
        reader = threading.Thread(target=lambda: events.extend(stream))
        reader.start()
        time.sleep(0.2)
        closed = sessions.close(session.id)
        reader.join(5)
        self.assertTrue(closed.closed)
        self.assertEqual([(h.key, h.released) for h in closed.holds], [(k, True)])
        self.assertEqual(events[-1].reason, "released")
        self.assertIsNone(sessions.inspect(session.id))
        self.assertIsNone(self.client.locks.inspect(k))

    def test_kept_session_signals_its_loss(self) -> None:
        with self.client.session(ttl_ms=2000) as kept:
            self.assertTrue(kept.watching.wait(2))
            self.client.sessions.close(kept.id)
            self.assertTrue(kept.lost.wait(2))
            self.assertEqual(kept.lost_reason, "released")
        self.assertIsNone(kept.release_error)

    def test_listing_pages(self) -> None:
        prefix = key("pages") + ":"
        for name in "abc":
            self.client.locks.acquire(prefix + name, ttl_ms=5000)
        seen: List[str] = []
        cursor = None
        for _ in range(10):
            page = self.client.locks.list(prefix=prefix, limit=1, cursor=cursor)
            seen += [i.key for i in page.items]
            cursor = page.cursor
            if cursor is None:
                break
        self.assertEqual(sorted(seen), [prefix + n for n in "abc"])

    def test_health_and_readiness(self) -> None:
        self.assertEqual(self.client.health(), {"status": "ok"})
        ready = self.client.readiness()
        self.assertTrue(ready.ready)
        self.assertEqual(ready.majority, 1)
        self.assertEqual(len(ready.nodes), 1)

    def test_every_lock_kind_works_with_the_helper(self) -> None:
        for mode, extra in (("read", {}), ("write", {}), ("permit", {"limit": 2, "permits": 2})):
            k = key(f"helper-{mode}")
            with self.client.lock(k, mode=mode, ttl_ms=3000, **extra) as hold:  # type: ignore[arg-type]
                self.assertEqual(hold.grant.mode if hold.grant else None, mode)
                self.assertGreater(hold.fence, 0)
            inspect = self.client.semaphores.inspect(k) if mode == "permit" else self.client.rwlocks.inspect(k)
            self.assertIsNone(inspect, f"the {mode} hold was released")

    def test_lock_delay(self) -> None:
        k = key("lock-delay")
        self.client.locks.acquire(k, ttl_ms=300, lock_delay_ms=1500)  # never released: it lapses
        time.sleep(0.5)
        with self.assertRaises(LockDelayed) as delayed:
            self.client.locks.acquire(k)
        self.assertGreater(delayed.exception.retry_after_ms or 0, 0)
        assert delayed.exception.delayed_until is not None
        self.assertIsNotNone(delayed.exception.delayed_until.tzinfo)
        with self.assertRaises(InvalidArgument):
            self.client.locks.acquire(k, lock_delay_ms=-1)
        granted = self.client.locks.acquire(k, wait_ms=3000)  # a waiter is served when the delay ends
        self.assertTrue(granted.created)

    def test_one_client_shared_by_threads(self) -> None:
        errors: List[BaseException] = []
        fences: List[int] = []

        def work(i: int) -> None:
            try:
                for _ in range(15):
                    grant = self.client.locks.acquire(key(f"threads-{i}"), ttl_ms=5000)
                    fences.append(grant.fence)
                    self.assertTrue(self.client.locks.release(key(f"threads-{i}"), grant.token).released)
            except BaseException as err:  # noqa: BLE001 - reported below
                errors.append(err)

        threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(20)
        self.assertEqual(errors, [])
        self.assertEqual(len(fences), 8 * 15)
        self.assertLessEqual(len(self.client._transport._idle), 8, "the pool keeps at most one connection per thread")

    def test_error_mapping(self) -> None:
        unknown = error_from_answer(418, {"error": "teapot", "message": "short and stout", "extra": 1}, "req-1", None)
        self.assertIs(type(unknown), LockServiceError)
        self.assertEqual(
            (unknown.code, unknown.status, unknown.request_id, unknown.details), ("teapot", 418, "req-1", {"extra": 1})
        )
        watchers = error_from_answer(429, {"error": "too_many_watchers", "message": "m"}, None, "2")
        self.assertIsInstance(watchers, TooManyWatchers)
        self.assertEqual(watchers.retry_after_ms, 2000)  # type: ignore[attr-defined]
        limited = error_from_answer(429, {"error": "rate_limited", "message": "m", "retryAfterMs": 250}, None, "1")
        self.assertIsInstance(limited, RateLimited)
        self.assertEqual(limited.retry_after_ms, 250)  # type: ignore[attr-defined]
        self.assertIsInstance(error_from_answer(429, {"error": "too_many_streams", "message": "m"}, None, None), TooManyStreams)
        bare = error_from_answer(502, "<html>bad gateway</html>", None, None)
        self.assertEqual((bare.code, bare.status), ("http_502", 502))
