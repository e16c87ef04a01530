"""The one-call helper: ``with client.lock(key, …) as hold:`` acquires, keeps the hold alive on daemon threads, signals
its loss the moment it is known, and releases it on exit within a bound. ``with client.session(…)`` does the same for
a session."""

from __future__ import annotations

import logging
import random
import threading
import time
from typing import TYPE_CHECKING, Any, Callable, List, Optional, Union

from . import _validate as check
from ._sse import EventStream
from .errors import (
    BackendUnavailable,
    InvalidArgument,
    LockLost,
    LockNotFound,
    LockServiceError,
    NotOwner,
    SessionNotFound,
    Timeout,
    TooMany,
    TransportError,
)
from .types import Grant, Session, WatchEvent

if TYPE_CHECKING:  # pragma: no cover
    from .client import Client

log = logging.getLogger("lock_service")

DEFAULT_TTL_MS = 30_000
DEFAULT_RELEASE_TIMEOUT_MS = 2_000
# The service's drift allowance (DRIFT_FACTOR 0.01 + 2 ms), used only to anchor a session's first window.
_DRIFT = 0.01


class _Lease:
    """A lease kept alive on daemon threads: a renewer at ttl/3 ± 10 %, a guard that signals loss when the local
    validity deadline (minus a safety margin) or the max-hold cap is reached, and a watcher (an event stream on the
    hold) that signals loss as soon as the service says so."""

    #: The service's words for a hold's loss, plus the library's: not_held, validity_exhausted, max_hold.
    lost: threading.Event

    def __init__(
        self,
        *,
        max_hold_ms: Optional[int],
        release_timeout_ms: int,
        safety_margin_ms: Optional[int],
        on_lost: Optional[Callable[[LockLost], Any]],
        watch: bool,
    ) -> None:
        check.positive(max_hold_ms, "max_hold_ms")
        check.positive(release_timeout_ms, "release_timeout_ms")
        if safety_margin_ms is not None and (not isinstance(safety_margin_ms, int) or safety_margin_ms < 0):
            raise InvalidArgument("safety_margin_ms", "must be an integer, 0 or more")
        self.lost = threading.Event()
        self.lost_reason: Optional[str] = None
        #: time.monotonic() when the loss was signalled.
        self.lost_at: Optional[float] = None
        self.release_error: Optional[BaseException] = None
        self.ttl_ms = 0
        self._max_hold_ms = max_hold_ms
        self._release_timeout_s = release_timeout_ms / 1000.0
        self._margin_ms = safety_margin_ms
        self._on_lost = on_lost
        self._watch = watch
        self._cond = threading.Condition()
        self._deadline = 0.0
        self._started_at = 0.0
        self._stopped = False
        self._gone = False
        self._stream: Optional[EventStream[WatchEvent]] = None
        #: Set once the watch's stream has delivered its first event (the service watches the hold from then on).
        self.watching = threading.Event()
        self._entered = False
        self._capped = False
        #: Renewals done (for tests and metrics): each re-anchored the deadline on its send time.
        self.renewals = 0
        #: Whether the grant was re-anchored by an immediate renew before the block ran (after a wait).
        self.reanchored = False

    # --- what the caller sees ---------------------------------------------------------------------------

    @property
    def valid_until(self) -> float:
        """The local validity deadline on ``time.monotonic()``: the last grant's or renewal's send time + its validityMs."""
        with self._cond:
            return self._deadline

    @property
    def remaining_ms(self) -> int:
        """Milliseconds left before the local validity deadline (0 once lost)."""
        if self.lost.is_set():
            return 0
        return max(0, int((self.valid_until - time.monotonic()) * 1000))

    def check(self) -> None:
        """Raises LockLost when the hold is lost, or when its validity (minus the safety margin) has run out even if no
        thread has noticed yet (a caller that kept the GIL in a C call, for instance)."""
        if not self.lost.is_set() and time.monotonic() >= self._limit():
            self._lose("validity_exhausted", gone=False)
        if self.lost.is_set():
            raise LockLost(self.lost_reason or "not_held")

    # --- the machinery ----------------------------------------------------------------------------------

    def _margin_s(self) -> float:
        margin = self._margin_ms if self._margin_ms is not None else max(50, self.ttl_ms // 10)
        return margin / 1000.0

    def _limit(self) -> float:
        with self._cond:
            return self._deadline - self._margin_s()

    def _cap(self) -> Optional[float]:
        return self._started_at + self._max_hold_ms / 1000.0 if self._max_hold_ms is not None else None

    def _capped_ttl_ms(self) -> Optional[int]:
        """The TTL a renewal asks for when ``max_hold_ms`` is nearer than a TTL: what is left to the cap plus the safety
        margin, so the loss is signalled at the cap and the hold lapses a margin later (not a whole TTL after); None
        otherwise (the hold's own TTL)."""
        cap = self._cap()
        if cap is None:
            return None
        left_ms = int((cap - time.monotonic()) * 1000) + int(self._margin_s() * 1000)
        if left_ms >= self.ttl_ms:
            return None
        self._capped = True
        return max(100, left_ms)

    def _anchor(self, sent: float, validity_ms: int) -> None:
        with self._cond:
            self._deadline = sent + validity_ms / 1000.0
            self._cond.notify_all()

    def _lose(self, reason: str, gone: bool) -> None:
        with self._cond:
            if self.lost.is_set() or self._stopped:
                return
            self.lost_reason = reason
            self.lost_at = time.monotonic()
            self._gone = gone
            self.lost.set()
            self._cond.notify_all()
            stream = self._stream
        if stream is not None:
            stream.close()
        if self._on_lost is not None:
            try:
                self._on_lost(LockLost(reason))
            except Exception:  # noqa: BLE001 - a callback's failure must not stop the signal
                log.exception("lock_service: on_lost callback failed")

    def _start(self) -> None:
        for target, name in ((self._renew_loop, "renewer"), (self._guard_loop, "guard")):
            threading.Thread(target=target, name=f"lock_service-{name}", daemon=True).start()
        if self._watch:
            threading.Thread(target=self._watch_loop, name="lock_service-watcher", daemon=True).start()

    def _stop(self) -> None:
        with self._cond:
            self._stopped = True
            self._cond.notify_all()
            stream = self._stream
        if stream is not None:
            stream.close()

    def _wait(self, seconds: float) -> bool:
        """Sleeps up to ``seconds``; False when the lease stopped or was lost meanwhile."""
        end = time.monotonic() + seconds
        with self._cond:
            while not (self._stopped or self.lost.is_set()):
                left = end - time.monotonic()
                if left <= 0:
                    return True
                self._cond.wait(left)
            return False

    def _next_renewal(self, sent: float) -> float:
        return sent + self.ttl_ms / 3000.0 * random.uniform(0.9, 1.1)

    def _renew_loop(self) -> None:
        due = self._next_renewal(self._deadline - self._validity_s)
        failing = False
        while self._wait(due - time.monotonic()):
            cap = self._cap()
            if cap is not None and time.monotonic() >= cap:
                return  # max_hold: stop renewing; the guard signals it
            sent = time.monotonic()
            timeout = max(0.05, min(self._client_timeout_s(), self._limit() - sent))
            try:
                validity_ms = self._renew_once(timeout)
            except (LockNotFound, NotOwner, SessionNotFound):
                self._lose("not_held", gone=True)  # and never renew again
                return
            except LockServiceError as err:
                left = self._limit() - time.monotonic()
                if not failing:
                    log.warning(
                        "lock_service: %s: renewal failed (%s); retrying for the %d ms left",
                        self._describe(),
                        err,
                        max(0, left * 1000),
                    )
                failing = True
                due = time.monotonic() + min(1.0, max(0.025, left / 4))
                continue
            with self._cond:
                if self._stopped or self.lost.is_set():
                    return
                self.renewals += 1
            self._anchor(sent, validity_ms)
            self._validity_s = validity_ms / 1000.0
            due = self._next_renewal(sent)
            if failing:
                log.warning("lock_service: %s: renewed again", self._describe())
            failing = False

    def _guard_loop(self) -> None:
        while True:
            with self._cond:
                if self._stopped or self.lost.is_set():
                    return
                now = time.monotonic()
                limit = self._deadline - self._margin_s()
                cap = self._cap()
                if cap is not None and now >= cap:
                    reason = "max_hold"
                elif now >= limit:
                    reason = "max_hold" if self._capped else "validity_exhausted"
                else:
                    self._cond.wait(min(limit, cap if cap is not None else limit) - now)
                    continue
            self._lose(reason, gone=False)
            return

    def _watch_loop(self) -> None:
        while True:
            with self._cond:
                if self._stopped or self.lost.is_set():
                    return
            try:
                stream = self._open_watch()
            except (LockNotFound, NotOwner, SessionNotFound):
                self._lose("not_held", gone=True)
                return
            except (TooMany, BackendUnavailable, TransportError, LockServiceError):
                if not self._wait(1.0):
                    return
                continue
            with self._cond:
                if self._stopped or self.lost.is_set():
                    stream.close()
                    return
                self._stream = stream
            try:
                for event in stream:
                    self.watching.set()
                    if not event.held:
                        self._lose(event.reason or "not_held", gone=True)
                        return
            except LockServiceError:
                if not self._wait(0.5):
                    return
            finally:
                stream.close()
                with self._cond:
                    self._stream = None

    def _release_bounded(self) -> Optional[BaseException]:
        """Releases on a daemon thread and waits at most the release timeout for it; the failure, if any."""
        outcome: List[Optional[BaseException]] = [
            Timeout(f"the release did not finish within {self._release_timeout_s:.3g} s")
        ]
        end = time.monotonic() + self._release_timeout_s

        def release() -> None:
            attempt = 0
            while True:
                try:
                    self._release_once(max(0.05, end - time.monotonic()))
                    outcome[0] = None
                    return
                except (LockNotFound, SessionNotFound) as err:
                    outcome[0] = None if self.lost.is_set() else err
                    return
                except (BackendUnavailable, TransportError) as err:
                    outcome[0] = err
                    delay = min(0.5, 0.05 * 2**attempt)
                    if time.monotonic() + delay >= end:
                        return
                    time.sleep(delay)
                    attempt += 1
                except LockServiceError as err:
                    outcome[0] = err
                    return

        worker = threading.Thread(target=release, name="lock_service-release", daemon=True)
        worker.start()
        worker.join(max(0.0, end - time.monotonic()))
        return outcome[0]

    def _finish(self, exc: Optional[BaseException]) -> None:
        self._stop()
        if self._gone:
            return
        err = self._release_bounded()
        if err is None:
            return
        if isinstance(err, LockNotFound) and not self.lost.is_set():
            # Already gone when the block ended: it was lost unnoticed (say so), nothing left to release.
            self.lost_reason = "not_held"
            self.lost_at = time.monotonic()
            self.lost.set()
            return
        self.release_error = err
        log.warning("lock_service: %s: could not release on exit (%s)", self._describe(), err)
        if exc is not None:
            note = f"lock_service: the release on exit failed too: {err}"
            add_note = getattr(exc, "add_note", None)
            if add_note is not None:
                add_note(note)
            else:  # before 3.11: a traceback does not show it, but it is there
                setattr(exc, "__notes__", [*getattr(exc, "__notes__", []), note])
            try:
                setattr(exc, "release_error", err)
            except AttributeError:
                pass

    def _begin(self, sent_at: float, validity_ms: int, ttl_ms: int, may_have_waited: bool) -> None:
        """Anchors the first window on the granting request's send time, re-anchors it when the grant came after a
        wait (or little of the window is left), and starts the threads."""
        self.ttl_ms = ttl_ms
        self._started_at = sent_at
        self._validity_s = validity_ms / 1000.0
        self._anchor(sent_at, validity_ms)
        now = time.monotonic()
        waited = may_have_waited and now - sent_at >= 0.1
        if waited or sent_at + validity_ms / 1000.0 - now < ttl_ms * 2 / 3000.0:
            self._reanchor()
        self._start()

    def _reanchor(self) -> None:
        """After a wait the window counted from the send time may be nearly spent: renew at once (a renew never
        waits) and count from the renew's send time."""
        sent = time.monotonic()
        try:
            validity_ms = self._renew_once(self._client_timeout_s())
        except (LockNotFound, NotOwner, SessionNotFound) as err:
            raise LockLost("not_held", "granted after a wait, but lapsed before it could be used") from err
        except LockServiceError:
            if time.monotonic() < self._limit():
                return  # the first window still holds; the renewer keeps trying
            self._release_bounded()
            raise LockLost("validity_exhausted", "the validity ran out before it could be re-anchored") from None
        self._validity_s = validity_ms / 1000.0
        self._anchor(sent, validity_ms)
        self.reanchored = True

    # --- what a kind of lease defines -------------------------------------------------------------------

    _validity_s = 0.0

    def _client_timeout_s(self) -> float:
        raise NotImplementedError

    def _renew_once(self, timeout_s: float) -> int:
        """Renews once; the validity in ms, counted from the send time."""
        raise NotImplementedError

    def _open_watch(self) -> EventStream[WatchEvent]:
        raise NotImplementedError

    def _release_once(self, timeout_s: float) -> None:
        raise NotImplementedError

    def _describe(self) -> str:
        raise NotImplementedError


class Hold(_Lease):
    """A hold kept by ``with client.lock(key, …) as hold:``.

    Options: ``mode`` (exclusive, read, write, permit — a semaphore also takes ``limit`` and ``permits``),
    ``ttl_ms`` (default 30 s), ``wait_ms``, ``owner``, ``session`` (an id or a ``client.session()``),
    ``max_hold_ms`` (stop renewing after this long and signal ``max_hold``), ``retry_budget_ms`` (the acquire's
    retries on top of its wait), ``release_timeout_ms`` (default 2 s), ``safety_margin_ms`` (default
    max(50 ms, ttl/10)), ``on_lost`` (called with a LockLost on the thread that noticed), ``watch`` (default True).

    Inside the block: ``fence`` (pass it to the resource you protect), ``token``, ``lost`` (a threading.Event),
    ``check()`` (raises LockLost), ``lost_reason``, ``remaining_ms``, ``valid_until``. After it: ``release_error``.
    """

    def __init__(
        self,
        client: "Client",
        key: str,
        *,
        mode: Optional[str] = None,
        ttl_ms: Optional[int] = None,
        wait_ms: int = 0,
        owner: Optional[str] = None,
        session: Union[str, "KeptSession", None] = None,
        limit: Optional[int] = None,
        permits: Optional[int] = None,
        lock_delay_ms: Optional[int] = None,
        max_hold_ms: Optional[int] = None,
        retry_budget_ms: Optional[int] = None,
        release_timeout_ms: int = DEFAULT_RELEASE_TIMEOUT_MS,
        safety_margin_ms: Optional[int] = None,
        on_lost: Optional[Callable[[LockLost], Any]] = None,
        watch: bool = True,
    ) -> None:
        super().__init__(
            max_hold_ms=max_hold_ms,
            release_timeout_ms=release_timeout_ms,
            safety_margin_ms=safety_margin_ms,
            on_lost=on_lost,
            watch=watch,
        )
        from .client import hold_path

        self.key = check.key(key)
        self.mode = mode or ("permit" if limit is not None else "exclusive")
        self._path = hold_path(self.mode, key)
        self._client = client
        self.session_id = session.id if isinstance(session, KeptSession) else session
        if ttl_ms is None and self.session_id is None:
            ttl_ms = DEFAULT_TTL_MS
        self._options = dict(
            ttl_ms=ttl_ms,
            wait_ms=wait_ms,
            owner=owner,
            session=self.session_id,
            limit=limit,
            permits=permits,
            lock_delay_ms=lock_delay_ms,
            retry_budget_ms=retry_budget_ms,
        )
        # Checked here, before any request: a bad argument never reaches the service.
        check.ttl_ms(ttl_ms)
        check.wait_ms(wait_ms)
        check.owner(owner)
        check.wait_ms(lock_delay_ms, "lock_delay_ms")
        if self.session_id is not None:
            check.session_id(self.session_id)
        if self.mode == "permit":
            check.positive(limit, "limit")
            if limit is None:
                raise InvalidArgument("limit", "a semaphore's limit is required")
            check.permits(permits, limit)
        self.grant: Optional[Grant] = None

    @property
    def fence(self) -> int:
        assert self.grant is not None, "the hold is not acquired yet"
        return self.grant.fence

    @property
    def token(self) -> str:
        assert self.grant is not None, "the hold is not acquired yet"
        return self.grant.token

    def __repr__(self) -> str:
        state = f"lost: {self.lost_reason}" if self.lost.is_set() else "held"
        return f"<Hold {self.mode} {self.key!r} fence={self.grant.fence if self.grant else None} {state}>"

    def __enter__(self) -> "Hold":
        if self._entered:
            raise RuntimeError("a Hold is entered once; call client.lock() again for another")
        self._entered = True
        grant = self._client._acquire(self.mode, self.key, **self._options)  # type: ignore[arg-type]
        self.grant = grant
        self._begin(grant.sent_at, grant.validity_ms, grant.ttl_ms, bool(self._options["wait_ms"]))
        return self

    def __exit__(self, exc_type: Any, exc: Optional[BaseException], tb: Any) -> None:
        self._finish(exc)

    def _client_timeout_s(self) -> float:
        return self._client._timeout_s()

    def _renew_once(self, timeout_s: float) -> int:
        assert self.grant is not None
        if self.session_id is not None:
            # The hold's lease is its session's: a keepalive renews it (and every other hold bound to the session).
            try:
                alive = self._client.sessions.keepalive(self.session_id, timeout_s=timeout_s)
                if any(h.key == self.key and h.kind == self.mode and h.fence == self.grant.fence for h in alive.holds):
                    self.ttl_ms = alive.ttl_ms  # the grant's TTL was what was left of the session's lease
                    return alive.validity_ms
            except SessionNotFound:
                pass
            # The session no longer has it: the hold's own renew says why (gone, or not ours).
        return self._client._renew(self._path, self.grant.token, self._capped_ttl_ms(), timeout_s).validity_ms

    def _open_watch(self) -> EventStream[WatchEvent]:
        assert self.grant is not None
        return self._client._watch_stream(self._path, self.grant.token, None)

    def _release_once(self, timeout_s: float) -> None:
        assert self.grant is not None
        self._client._release(self._path, self.grant.token, timeout_s)

    def _describe(self) -> str:
        return f"{self.mode} hold on {self.key!r}"


class KeptSession(_Lease):
    """A session opened and kept alive by ``with client.session(ttl_ms=…) as session:``; closed on exit (which releases
    every hold bound to it). ``id`` goes to ``session=`` of an acquire or of ``client.lock()``. The same signal as a
    hold: ``lost``, ``check()``, ``lost_reason``, ``on_lost``."""

    def __init__(
        self,
        client: "Client",
        *,
        ttl_ms: Optional[int] = None,
        owner: Optional[str] = None,
        release_timeout_ms: int = DEFAULT_RELEASE_TIMEOUT_MS,
        safety_margin_ms: Optional[int] = None,
        on_lost: Optional[Callable[[LockLost], Any]] = None,
        watch: bool = True,
    ) -> None:
        super().__init__(
            max_hold_ms=None,
            release_timeout_ms=release_timeout_ms,
            safety_margin_ms=safety_margin_ms,
            on_lost=on_lost,
            watch=watch,
        )
        check.ttl_ms(ttl_ms)
        check.owner(owner)
        self._client = client
        self._ttl_option = ttl_ms
        self._owner = owner
        self.session: Optional[Session] = None
        self.closed_holds: Optional[List[Any]] = None

    @property
    def id(self) -> str:
        assert self.session is not None, "the session is not open yet"
        return self.session.id

    def __repr__(self) -> str:
        state = f"lost: {self.lost_reason}" if self.lost.is_set() else "alive"
        return f"<KeptSession {state}>"

    def __enter__(self) -> "KeptSession":
        if self._entered:
            raise RuntimeError("a KeptSession is entered once")
        self._entered = True
        sent = time.monotonic()
        self.session = self._client.sessions.open(ttl_ms=self._ttl_option, owner=self._owner)
        self._begin(sent, int(self.session.ttl_ms * (1 - _DRIFT)) - 2, self.session.ttl_ms, False)
        return self

    def __exit__(self, exc_type: Any, exc: Optional[BaseException], tb: Any) -> None:
        self._finish(exc)

    def _client_timeout_s(self) -> float:
        return self._client._timeout_s()

    def _renew_once(self, timeout_s: float) -> int:
        return self._client.sessions.keepalive(self.id, timeout_s=timeout_s).validity_ms

    def _open_watch(self) -> EventStream[WatchEvent]:
        return self._client.sessions.watch_stream(self.id)

    def _release_once(self, timeout_s: float) -> None:
        self.closed_holds = self._client.sessions.close(self.id, timeout_s=timeout_s).holds

    def _describe(self) -> str:
        return "session"
