"""The one-call helper's rules, one by one, against the real service."""

from __future__ import annotations

import socket
import threading
import time
from typing import Any, Dict

from ._env import Recorder, TestCase, admin, control, environment, key

from lock_service import BackendUnavailable, Client, LockHeld, LockLost, Timeout, Unreachable


class Watchdog(TestCase):
    def test_reanchors_a_grant_that_came_after_a_wait(self) -> None:
        k = key("reanchor")
        self.client.locks.acquire(k, ttl_ms=700)  # lapses by itself: the waiter is handed the lock
        with self.client.lock(k, ttl_ms=1000, wait_ms=3000) as hold:
            assert hold.grant is not None
            self.assertTrue(hold.reanchored)
            self.assertGreater(hold.valid_until - hold.grant.valid_until, 0.5, "counted from the renew's send time")
            self.assertGreater(hold.remaining_ms, 800)

    def test_a_fast_grant_is_not_reanchored(self) -> None:
        with self.client.lock(key("no-reanchor"), ttl_ms=5000) as hold:
            self.assertFalse(hold.reanchored)

    def test_renew_answering_not_owner_loses_the_hold_and_stops_renewing(self) -> None:
        k = key("not-owner")
        with self.client.lock(k, ttl_ms=600, watch=False) as hold:
            self.client.locks.force_release(k)
            other = self.client.locks.acquire(k, ttl_ms=5000)
            self.assertTrue(hold.lost.wait(1.0))
            self.assertEqual(hold.lost_reason, "not_held")
            renewals = hold.renewals
            time.sleep(0.5)
            self.assertEqual(hold.renewals, renewals, "never renews again")
        info = self.client.locks.inspect(k)
        assert info is not None
        self.assertEqual(info.fence, other.fence, "the exit did not release the other holder's lock")
        self.assertIsNone(hold.release_error)

    def test_renew_answering_not_found_loses_the_hold(self) -> None:
        k = key("not-found")
        with self.client.lock(k, ttl_ms=600, watch=False) as hold:
            self.client.locks.force_release(k)
            self.assertTrue(hold.lost.wait(1.0))
            self.assertEqual(hold.lost_reason, "not_held")

    def test_renewals_keep_their_rhythm_and_outlast_a_busy_caller(self) -> None:
        k = key("busy")
        with self.client.lock(k, ttl_ms=600) as hold:
            end = time.monotonic() + 1.5  # 2.5 TTLs without a sleep
            while time.monotonic() < end:
                pass
            self.assertFalse(hold.lost.is_set())
            self.assertTrue(5 <= hold.renewals <= 9, f"every ttl/3 ± 10 % (7.5 in 1.5 s): {hold.renewals}")
            info = self.client.locks.inspect(k)
            assert info is not None
            self.assertEqual(info.fence, hold.fence)

    def test_a_c_call_holding_the_gil_past_the_validity_is_a_loss_once_it_returns(self) -> None:
        """What the library cannot do: no thread runs while a C call holds the GIL (here builtins.sum over a range),
        so no renewal either; the loss is signalled by the time the call returns, and check() says so."""
        started = time.monotonic()
        sum(range(1_000_000))
        n = int(1_000_000 * 1.2 / max(1e-4, time.monotonic() - started))  # about 1.2 s of one C call
        k = key("c-call")
        # watch=False: the service's own "expired" may otherwise come first; this is about what the library does alone
        with self.client.lock(k, ttl_ms=600, watch=False) as hold:
            sum(range(n))
            with self.assertRaises(LockLost) as raised:
                hold.check()
            # the guard (or check() itself) saw the deadline pass, or the renewer, first to run, was told it is gone
            self.assertIn(raised.exception.reason, ("validity_exhausted", "not_held"))
            self.assertIsNone(self.client.locks.inspect(k), "no renewal ran during the call: the hold lapsed")

    def test_a_session_bound_hold_is_renewed_by_its_sessions_keepalive(self) -> None:
        k = key("bound")
        with self.client.session(ttl_ms=900) as session:
            with self.client.lock(k, session=session) as hold:
                time.sleep(2.0)
                self.assertEqual(hold.ttl_ms, 900, "the session's TTL sets the rhythm")
                self.assertFalse(hold.lost.is_set())
                self.assertGreaterEqual(hold.renewals, 4)
                info = self.client.sessions.inspect(session.id)
                assert info is not None
                self.assertEqual([(h.key, h.fence) for h in info.holds], [(k, hold.fence)])
            self.assertIsNone(self.client.locks.inspect(k), "released on exit")
            self.assertFalse(session.lost.is_set())

    def test_release_after_a_loss_answering_not_found_is_not_an_error(self) -> None:
        k = key("late-release")
        with self.client.lock(k, ttl_ms=300, max_hold_ms=300, watch=False) as hold:
            self.assertTrue(hold.lost.wait(1.0))
            self.assertEqual(hold.lost_reason, "max_hold")
            time.sleep(0.6)  # it lapses: no renewals after the cap
            self.assertIsNone(self.client.locks.inspect(k))
        self.assertIsNone(hold.release_error)

    def test_max_hold_renews_no_further_than_the_cap(self) -> None:
        k = key("cap")
        with self.client.lock(k, ttl_ms=900, max_hold_ms=1000, watch=False) as hold:
            self.assertTrue(hold.lost.wait(2))
            assert hold.grant is not None and hold.lost_at is not None
            self.assertEqual(hold.lost_reason, "max_hold")
            self.assertAlmostEqual(hold.lost_at - hold.grant.sent_at, 1.0, delta=0.15)
            while self.client.locks.inspect(k) is not None:
                # the renewal due at 0.9 s asks for what is left to the cap (plus the margin), not 900 ms more
                self.assertLess(time.monotonic() - hold.lost_at, 0.4, "lapses a safety margin after the cap")
                time.sleep(0.02)

    def test_on_lost_is_called_once_with_the_reason(self) -> None:
        k = key("on-lost")
        seen = []
        called = threading.Event()

        def on_lost(err: LockLost) -> None:
            seen.append((err.reason, threading.current_thread().name))
            called.set()

        with self.client.lock(k, ttl_ms=5000, on_lost=on_lost) as hold:
            self.assertTrue(hold.watching.wait(2))
            self.client.locks.force_release(k)
            self.assertTrue(hold.lost.wait(2))
            self.assertTrue(called.wait(1))
            time.sleep(0.3)
        self.assertEqual(len(seen), 1)
        self.assertEqual(seen[0], ("force_released", "lock_service-watcher"), "called on the thread that noticed")


class AcquireRetries(TestCase):
    def test_a_refusal_after_waiting_is_not_retried(self) -> None:
        k = key("refused-wait")
        self.client.locks.acquire(k, ttl_ms=5000)
        waiter = admin()
        recorder = Recorder(waiter)
        with self.assertRaises(LockHeld) as refused:
            waiter.locks.acquire(k, wait_ms=300)
        self.assertGreaterEqual(refused.exception.waited_ms or 0, 250)
        self.assertEqual(recorder.count("POST"), 1)

    def test_a_retried_waiting_acquire_sends_the_remaining_wait(self) -> None:
        k = key("retry-wait")
        first = self.client.locks.acquire(k, ttl_ms=5000)
        proxied = admin(environment()["proxied"])
        recorder = Recorder(proxied)
        got: Dict[str, Any] = {}
        control("/proxy/drop-next-response")
        waiter = threading.Thread(target=lambda: got.update(grant=proxied.locks.acquire(k, ttl_ms=5000, wait_ms=3000)))
        waiter.start()
        time.sleep(0.5)
        self.client.locks.release(k, first.token)
        waiter.join(5)
        self.assertFalse(got["grant"].created, "the retry re-acquired the hold the dropped answer granted")
        posts = [r["body"] for r in recorder.requests if r["method"] == "POST"]
        self.assertEqual(len(posts), 2)
        self.assertEqual(posts[0]["token"], posts[1]["token"])
        self.assertEqual(posts[0]["waitMs"], 3000)
        self.assertLess(posts[1].get("waitMs", 0), 2600)

    def test_transport_errors_are_typed(self) -> None:
        with socket.socket() as closed:
            closed.bind(("127.0.0.1", 0))
            port = closed.getsockname()[1]
        with self.assertRaises(Unreachable):
            Client(f"http://127.0.0.1:{port}", retry_budget_ms=0).locks.acquire("k")
        with socket.socket() as silent:
            silent.bind(("127.0.0.1", 0))
            silent.listen(1)  # accepts the connection, never answers
            client = Client(f"http://127.0.0.1:{silent.getsockname()[1]}", timeout_ms=200)
            started = time.monotonic()
            with self.assertRaises(Timeout):
                client.locks.inspect("k")
            self.assertLess(time.monotonic() - started, 1.0)

    def test_secrets_stay_out_of_errors_and_reprs(self) -> None:
        grant = self.client.locks.acquire(key("secrets"), ttl_ms=5000)
        self.assertNotIn(grant.token, repr(grant))
        session = self.client.sessions.open(ttl_ms=5000)
        self.assertNotIn(session.id, repr(session))
        with socket.socket() as closed:
            closed.bind(("127.0.0.1", 0))
            port = closed.getsockname()[1]
        with self.assertRaises(Unreachable) as raised:
            Client(f"http://127.0.0.1:{port}").sessions.keepalive(session.id)
        self.assertNotIn(session.id, str(raised.exception))
        self.assertIn("[redacted]", str(raised.exception))


class FaultStack(TestCase):
    """On the environment's fault stack (one per class; the tests run in name order: the last one kills its Redis)."""

    service = ""

    @classmethod
    def setUpClass(cls) -> None:
        cls.service = control("/fault/reset")["service"]

    def test_1_renewals_failing_until_the_validity_runs_out_signal_the_loss(self) -> None:
        fault = admin(self.service)
        try:
            with fault.lock(key("exhausted"), ttl_ms=1000, watch=False, release_timeout_ms=300) as hold:
                control("/fault/redis/pause")
                self.assertTrue(hold.lost.wait(2))
                assert hold.lost_at is not None
                self.assertEqual(hold.lost_reason, "validity_exhausted")
                margin = 0.1  # max(50 ms, ttl/10)
                self.assertLess(hold.lost_at, hold.valid_until)
                self.assertGreaterEqual(hold.lost_at, hold.valid_until - margin - 0.05)
        finally:
            control("/fault/redis/resume")

    def test_2_a_release_failure_is_attached_to_the_callers_error(self) -> None:
        class CallerError(Exception):
            pass

        fault = admin(self.service)
        try:
            with self.assertRaises(CallerError) as raised:
                with fault.lock(key("attached"), ttl_ms=5000, release_timeout_ms=300):
                    control("/fault/redis/pause")
                    raise CallerError("mine")
        finally:
            control("/fault/redis/resume")
        self.assertIsInstance(getattr(raised.exception, "release_error", None), (Timeout, BackendUnavailable))
        self.assertTrue(any("release" in note for note in getattr(raised.exception, "__notes__", [])))

    def test_3_an_acquire_retries_503_after_retry_after_within_its_budget(self) -> None:
        control("/fault/redis/kill")
        fault = admin(self.service, retry_budget_ms=1500)
        recorder = Recorder(fault)
        started = time.monotonic()
        with self.assertRaises(BackendUnavailable):
            fault.locks.acquire(key("unavailable"))
        took = time.monotonic() - started
        self.assertGreaterEqual(recorder.count("POST"), 2, "retried")
        self.assertTrue(1.0 <= took <= 2.5, f"waited Retry-After (1 s) and gave up within the budget: {took:.2f} s")
