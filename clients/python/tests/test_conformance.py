"""clients/conformance/scenarios.json: one test per scenario id (test_<id>), and a test that fails when an id has none."""

from __future__ import annotations

import json
import socket
import threading
import time
import unittest
from typing import Any, Dict, List

from ._env import LOGGED, ROOT, Recorder, TestCase, admin, control, environment, key

from lock_service import (
    Client,
    Forbidden,
    InvalidArgument,
    LimitMismatch,
    LockDelayed,
    LockHeld,
    LockLost,
    LockNotFound,
    NotOwner,
    SessionNotFound,
    TooManyWaiters,
    Unauthorized,
)

SCENARIOS: List[Dict[str, Any]] = json.loads((ROOT / "clients/conformance/scenarios.json").read_text())["scenarios"]


class Conformance(TestCase):
    def test_acquire_release(self) -> None:
        k = key("acquire-release")
        grant = self.client.locks.acquire(k, ttl_ms=5000)
        self.assertGreaterEqual(len(grant.token), 16)
        self.assertIsInstance(grant.fence, int)
        self.assertGreater(grant.fence, 0)
        self.assertTrue(0 < grant.validity_ms <= 5000)
        self.assertEqual(grant.ttl_ms, 5000)
        self.assertIsNotNone(grant.expires_at.tzinfo)
        info = self.client.locks.inspect(k)
        assert info is not None
        self.assertEqual(info.fence, grant.fence)
        released = self.client.locks.release(k, grant.token)
        self.assertTrue(released.released)
        self.assertEqual(released.hold_count, 0)
        self.assertIsNone(self.client.locks.inspect(k), "free after the release")

    def test_contention_owners(self) -> None:
        k = key("contention")
        self.client.locks.acquire(k, ttl_ms=5000, owner="worker-a")
        b = admin()
        recorder = Recorder(b)
        started = time.monotonic()
        with self.assertRaises(LockHeld) as refused:
            b.locks.acquire(k, ttl_ms=5000)
        self.assertLess(time.monotonic() - started, 1.0)
        self.assertGreater(refused.exception.retry_after_ms or 0, 0)
        self.assertIn("worker-a", refused.exception.owners)
        self.assertEqual(recorder.count("POST"), 1, "a 409 without wait is not retried")

    def test_waiting_handoff(self) -> None:
        k = key("handoff")
        a = self.client.locks.acquire(k, ttl_ms=5000)
        granted: Dict[str, Any] = {}

        def wait_in_line() -> None:
            granted["grant"] = admin().locks.acquire(k, ttl_ms=5000, wait_ms=5000)
            granted["at"] = time.monotonic()

        waiter = threading.Thread(target=wait_in_line)
        waiter.start()
        time.sleep(0.3)
        self.client.locks.release(k, a.token)
        released_at = time.monotonic()
        waiter.join(5)
        b = granted["grant"]
        self.assertLess(granted["at"] - released_at, 1.0)
        self.assertGreater(b.fence, a.fence)
        info = self.client.locks.inspect(k)
        assert info is not None
        self.assertEqual(info.fence, b.fence)

    def test_renew_keeps_fence(self) -> None:
        k = key("renew")
        grant = self.client.locks.acquire(k, ttl_ms=1000)
        time.sleep(0.6)
        renewed = self.client.locks.renew(k, grant.token, ttl_ms=2000)
        self.assertEqual(renewed.fence, grant.fence)
        self.assertTrue(1000 < renewed.validity_ms <= 2000)
        time.sleep(0.6)
        info = self.client.locks.inspect(k)
        assert info is not None
        self.assertEqual(info.fence, grant.fence)

    def test_watchdog_keeps_hold(self) -> None:
        k = key("watchdog")
        with self.client.lock(k, ttl_ms=1000) as hold:
            time.sleep(3.5)
            info = self.client.locks.inspect(k)
            assert info is not None
            self.assertEqual(info.fence, hold.fence)
            self.assertFalse(hold.lost.is_set())
        self.assertFalse(hold.lost.is_set())
        self.assertIsNone(self.client.locks.inspect(k))

    def test_starved_caller(self) -> None:
        k = key("starved")
        with self.client.lock(k, ttl_ms=1500) as hold:
            renewals = hold.renewals
            end = time.monotonic() + 1.2
            spins = 0
            while time.monotonic() < end:  # holds the GIL but for CPython's switch interval (5 ms)
                spins += 1
            info = self.client.locks.inspect(k)
            self.assertFalse(hold.lost.is_set())
            assert info is not None
            self.assertEqual(info.fence, hold.fence)
            self.assertGreaterEqual(
                hold.renewals - renewals, 1, "the watchdog renewed while the caller spun (due every 0.5 s)"
            )
            self.assertGreater(hold.remaining_ms, 0)

    def test_force_release_signal(self) -> None:
        k = key("force-release")
        called: List[LockLost] = []
        callback = threading.Event()

        def on_lost(err: LockLost) -> None:
            called.append(err)
            callback.set()

        with self.client.lock(k, ttl_ms=10_000, on_lost=on_lost) as hold:
            time.sleep(0.3)
            self.client.locks.force_release(k)
            answered = time.monotonic()
            self.assertTrue(hold.lost.wait(2))
            assert hold.lost_at is not None
            self.assertLess(hold.lost_at - answered, 0.2)
            self.assertEqual(hold.lost_reason, "force_released")
            with self.assertRaises(LockLost) as raised:
                hold.check()
            self.assertEqual(raised.exception.reason, "force_released")
            self.assertTrue(callback.wait(1))
        self.assertIsNone(hold.release_error, "no release error on exit after the loss")
        self.assertEqual([err.reason for err in called], ["force_released"], "on_lost was called once")

    def test_redis_killed_signal(self) -> None:
        fault = admin(control("/fault/reset")["service"])
        k = key("redis-killed")
        with self.assertRaises(LockLost) as raised:
            with fault.lock(k, ttl_ms=2000, release_timeout_ms=300) as hold:
                time.sleep(0.3)
                control("/fault/redis/kill")
                self.assertTrue(hold.lost.wait(5))
                hold.check()
        assert hold.grant is not None and hold.lost_at is not None
        self.assertLess(
            hold.lost_at, hold.grant.sent_at + hold.grant.validity_ms / 1000.0, "before the local validity deadline"
        )
        self.assertIn(raised.exception.reason, ("validity_exhausted", "expired", "not_held"))

    def test_dropped_response_retry(self) -> None:
        proxied = admin(environment()["proxied"])
        k = key("dropped")
        control("/proxy/drop-next-response")
        recorder = Recorder(proxied)
        grant = proxied.locks.acquire(k, ttl_ms=10_000)
        info = self.client.locks.inspect(k)
        assert info is not None
        self.assertEqual(info.fence, grant.fence)
        self.assertFalse(grant.created, "the retry answered 200: a re-acquire of the same token")
        self.assertEqual(recorder.count("POST"), 2)
        tokens = {r["body"]["token"] for r in recorder.requests}
        self.assertEqual(len(tokens), 1, "one token for the logical acquire")

    def test_caller_error_surfaces(self) -> None:
        class CallerError(Exception):
            pass

        k = key("caller-error")
        with self.assertRaises(CallerError) as raised:
            with self.client.lock(k, ttl_ms=5000):
                raise CallerError("the caller's own")
        self.assertEqual(str(raised.exception), "the caller's own")
        self.assertIsNone(self.client.locks.inspect(k))

    def test_release_bounded(self) -> None:
        fault = admin(control("/fault/reset")["service"])
        k = key("release-bounded")
        try:
            with fault.lock(k, ttl_ms=5000, release_timeout_ms=300) as hold:
                control("/fault/redis/pause")
                result = "the block's result"
                returned = time.monotonic()
            took = time.monotonic() - returned
        finally:
            control("/fault/redis/resume")
        self.assertLess(took, 0.3 + 0.7)
        self.assertEqual(result, "the block's result")
        self.assertIsNotNone(hold.release_error, "the release failure is attached")
        self.assertTrue(
            any("could not release" in r.getMessage() and k in r.getMessage() for r in LOGGED.records), "and logged"
        )

    def test_max_hold(self) -> None:
        k = key("max-hold")
        with self.client.lock(k, ttl_ms=1000, max_hold_ms=1500) as hold:
            self.assertTrue(hold.lost.wait(4))
            assert hold.grant is not None and hold.lost_at is not None
            self.assertTrue(1.3 <= hold.lost_at - hold.grant.sent_at <= 2.6, hold.lost_at - hold.grant.sent_at)
            self.assertEqual(hold.lost_reason, "max_hold")
            while self.client.locks.inspect(k) is not None:
                self.assertLess(time.monotonic() - hold.lost_at, 1.1, "K is free within 1.1 s of the signal")
                time.sleep(0.02)

    def test_session_two_holds(self) -> None:
        k1, k2 = key("session-1"), key("session-2")
        watched: Dict[str, Any] = {}
        with self.client.session(ttl_ms=1000) as session:
            g1 = self.client.locks.acquire(k1, session=session.id)
            g2 = self.client.rwlocks.acquire_write(k2, session=session.id)

            def watch() -> None:
                watched["event"] = admin().locks.watch(k1, g1.token, wait_ms=10_000)

            watcher = threading.Thread(target=watch)
            watcher.start()
            time.sleep(2.5)
            i1, i2 = self.client.locks.inspect(k1), self.client.rwlocks.inspect(k2)
            assert i1 is not None and i2 is not None and i2.writer is not None
            self.assertEqual(i1.fence, g1.fence)
            self.assertEqual(i2.writer.fence, g2.fence)
            self.assertFalse(session.lost.is_set())
        self.assertIsNone(self.client.locks.inspect(k1))
        self.assertIsNone(self.client.rwlocks.inspect(k2))
        watcher.join(5)
        self.assertFalse(watched["event"].held)
        self.assertEqual(watched["event"].reason, "session_lost")

    def test_semaphore_weights(self) -> None:
        s = key("semaphore")
        sem = self.client.semaphores
        self.assertEqual(sem.acquire(s, limit=3, permits=2).permits, 2)
        self.assertEqual(sem.acquire(s, limit=3, permits=1).permits, 1)
        with self.assertRaises(LockHeld):
            sem.acquire(s, limit=3, permits=1)
        with self.assertRaises(LimitMismatch) as mismatch:
            sem.acquire(s, limit=5, permits=1)
        self.assertEqual(mismatch.exception.limit, 3)
        info = sem.inspect(s)
        assert info is not None
        self.assertEqual((info.permits_in_use, info.limit), (3, 3))

    def test_rwlock_readers_writer(self) -> None:
        r = key("rwlock")
        rw = self.client.rwlocks
        first, second = rw.acquire_read(r), rw.acquire_read(r)
        self.assertNotEqual(first.token, second.token)
        with self.assertRaises(LockHeld):
            rw.acquire_write(r)
        rw.release(r, "read", first.token)
        rw.release(r, "read", second.token)
        self.assertEqual(rw.acquire_write(r).mode, "write")

    def test_watch(self) -> None:
        k = key("watch")
        grant = self.client.locks.acquire(k, ttl_ms=10_000)
        polled = self.client.locks.watch(k, grant.token, wait_ms=1000)
        self.assertTrue(polled.held)
        self.assertGreater(polled.remaining_ms or 0, 0)
        events: List[Any] = []
        stream = self.client.locks.watch_stream(k, grant.token, wait_ms=10_000)

        def read() -> None:
            for event in stream:
                events.append((time.monotonic(), event))

        reader = threading.Thread(target=read)
        reader.start()
        time.sleep(0.2)
        self.client.locks.release(k, grant.token)
        released = time.monotonic()
        reader.join(5)
        at, last = events[-1]
        self.assertFalse(last.held)
        self.assertEqual(last.reason, "released")
        self.assertLess(at - released, 0.5)

    def test_inspect_and_list(self) -> None:
        prefix = key("list") + ":"
        for name in ("a", "b"):
            self.client.locks.acquire(prefix + name, ttl_ms=10_000)
        self.assertEqual(
            sorted(i.key for i in self.client.locks.list(prefix=prefix).items), [prefix + "a", prefix + "b"]
        )
        self.assertTrue(self.client.locks.force_release(prefix + "a").released)
        self.assertEqual([i.key for i in self.client.locks.list(prefix=prefix).items], [prefix + "b"])

    def test_typed_errors(self) -> None:
        env = environment()
        k = key("typed")
        held = self.client.locks.acquire(k, ttl_ms=10_000)
        errors = []
        with self.assertRaises(NotOwner) as not_owner:
            self.client.locks.renew(k, "another-token-000000000001")
        errors.append(not_owner.exception)
        with self.assertRaises(LockNotFound) as not_found:
            self.client.locks.release(key("typed-free"), "another-token-000000000001")
        errors.append(not_found.exception)
        with self.assertRaises(Unauthorized) as unauthorized:
            Client(env["service"], retry_budget_ms=0).locks.acquire(k)
        errors.append(unauthorized.exception)
        with self.assertRaises(Forbidden) as forbidden:
            Client(env["service"], api_key=env["scopedKey"], retry_budget_ms=0).locks.acquire(k)
        errors.append(forbidden.exception)

        waiters = [threading.Thread(target=self._wait_then_release, args=(k,)) for _ in range(env["maxWaiters"])]
        for waiter in waiters:
            waiter.start()
        while (self.client.locks.inspect(k) or held).waiters < env["maxWaiters"]:  # type: ignore[union-attr]
            time.sleep(0.02)
        with self.assertRaises(TooManyWaiters) as too_many:
            admin(retry_budget_ms=0).locks.acquire(k, wait_ms=500)
        errors.append(too_many.exception)
        self.client.locks.release(k, held.token)
        for waiter in waiters:
            waiter.join(10)

        with self.assertRaises(SessionNotFound) as no_session:
            self.client.sessions.keepalive("s." + "A" * 22)
        errors.append(no_session.exception)
        for err in errors:
            self.assertTrue(err.message, f"{err.code} carries the service's message")
            self.assertTrue(err.request_id, f"{err.code} carries the request id")
            self.assertIsNotNone(err.status)

    @staticmethod
    def _wait_then_release(k: str) -> None:
        client = admin()
        grant = client.locks.acquire(k, ttl_ms=5000, wait_ms=8000)
        client.locks.release(k, grant.token)

    def test_bad_arguments(self) -> None:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        closed = Client(f"http://127.0.0.1:{port}")
        calls = [
            ("key", lambda: closed.locks.acquire("")),
            ("key", lambda: closed.locks.acquire("a key")),
            ("ttl_ms", lambda: closed.locks.acquire("k", ttl_ms=50)),
            ("permits", lambda: closed.semaphores.acquire("k", limit=3, permits=0)),
            ("permits", lambda: closed.semaphores.acquire("k", limit=3, permits=4)),
            ("token", lambda: closed.locks.acquire("k", token="abc")),
            ("key", lambda: closed.lock("a key").__enter__()),
            ("ttl_ms", lambda: closed.lock("k", ttl_ms=50).__enter__()),
            ("permits", lambda: closed.lock("k", limit=2, permits=3).__enter__()),
        ]
        for argument, call in calls:
            with self.assertRaises(InvalidArgument) as raised:
                call()
            self.assertEqual(raised.exception.argument, argument)

    def test_fence_check(self) -> None:
        k = key("fence-check")
        grant = self.client.locks.acquire(k, ttl_ms=10_000)
        checked = self.client.locks.check_fence(k, grant.fence)
        self.assertEqual((checked.current, checked.fence, checked.held), (True, grant.fence, True))
        older = self.client.check_fence(k, grant.fence - 1)
        self.assertEqual((older.current, older.fence, older.held), (False, grant.fence, True), "fence - 1")
        self.client.locks.release(k, grant.token)
        after = self.client.locks.check_fence(k, grant.fence)
        self.assertEqual((after.current, after.fence, after.held), (False, None, False), "after the release")
        read_only = Client(environment()["service"], api_key=environment()["readOnlyKey"])
        seen = read_only.locks.check_fence(k, grant.fence)
        self.assertEqual((seen.current, seen.fence, seen.held), (False, None, False), "the read-only key checks")
        with self.assertRaises(Forbidden):
            read_only.locks.acquire(k)
        closed = Client("http://127.0.0.1:1")
        for fence in (0, -1, 1.5, True, 2**53):
            with self.assertRaises(InvalidArgument) as raised:
                closed.locks.check_fence(k, fence)  # type: ignore[arg-type]
            self.assertEqual(raised.exception.argument, "fence")

    def test_lock_delay(self) -> None:
        k = key("conformance-lock-delay")
        sent = time.monotonic()
        self.client.locks.acquire(k, ttl_ms=300, lock_delay_ms=1000)
        time.sleep(0.4)
        with self.assertRaises(LockDelayed) as refused:
            self.client.locks.acquire(k)
        self.assertGreater(refused.exception.retry_after_ms or 0, 0)
        self.assertIsNotNone(refused.exception.delayed_until)
        self.client.locks.acquire(k, wait_ms=2000)
        granted_after = time.monotonic() - sent
        self.assertTrue(1.3 <= granted_after < 2.3, f"the waiter was granted {granted_after:.3f} s after the acquire")


class EveryScenario(unittest.TestCase):
    def test_every_scenario_has_a_test(self) -> None:
        missing = [s["id"] for s in SCENARIOS if not callable(getattr(Conformance, f"test_{s['id']}", None))]
        self.assertEqual(missing, [], "scenarios without a test")
        self.assertGreaterEqual(len(SCENARIOS), 21)


if __name__ == "__main__":
    unittest.main()
