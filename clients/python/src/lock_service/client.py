"""The client: every route of the service as a method, typed answers and errors, safe acquire retries."""

from __future__ import annotations

import random
import re
import secrets
import ssl
import threading
import time
from typing import TYPE_CHECKING, Any, Callable, Dict, Mapping, Optional, Tuple, TypeVar, Union

from . import _validate as check
from ._sse import EventStream, open_stream
from ._transport import Answer, Transport
from .errors import (
    BackendUnavailable,
    InvalidArgument,
    LockLost,
    LockServiceError,
    TooMany,
    TransportError,
    error_from_answer,
)
from .types import (
    FenceCheck,
    Grant,
    Keepalive,
    LockInfo,
    Page,
    Readiness,
    Released,
    RwLockInfo,
    SemaphoreInfo,
    Session,
    SessionClosed,
    SessionInfo,
    WatchEvent,
)

if TYPE_CHECKING:  # pragma: no cover
    from .elections import ElectionEvent, Leadership, Observer
    from .hold import Hold, KeptSession

T = TypeVar("T")

DEFAULT_TIMEOUT_MS = 10_000
DEFAULT_RETRY_BUDGET_MS = 10_000
_SESSION_IN_PATH = re.compile(r"/sessions/[^/?]+")
# The resource whose fence check answers for each kind of hold.
_FENCED = {"exclusive": "locks", "read": "rwlocks", "write": "rwlocks", "permit": "semaphores", "leader": "elections"}


def new_token() -> str:
    """A random owner token: 192 bits, URL-safe (32 characters)."""
    return secrets.token_urlsafe(24)


def hold_path(mode: str, key: str) -> str:
    """The route of a kind of hold: exclusive (a lock), read or write (an rwlock), permit (a semaphore)."""
    if mode == "exclusive":
        return f"/locks/{key}"
    if mode in ("read", "write"):
        return f"/rwlocks/{key}/{mode}"
    if mode == "permit":
        return f"/semaphores/{key}"
    raise InvalidArgument("mode", "must be exclusive, read, write or permit")


def _ssl_context(
    given: Optional[ssl.SSLContext], ca_file: Optional[str], cert_file: Optional[str], key_file: Optional[str]
) -> Optional[ssl.SSLContext]:
    if given is not None:
        if ca_file or cert_file or key_file:
            raise InvalidArgument("ssl_context", "give either ssl_context or ca_file/cert_file/key_file, not both")
        return given
    if (cert_file is None) != (key_file is None):
        raise InvalidArgument("cert_file", "cert_file and key_file go together")
    if ca_file is None and cert_file is None:
        return None
    context = ssl.create_default_context(cafile=ca_file)
    if cert_file is not None:
        context.load_cert_chain(cert_file, key_file)
    return context


class Client:
    """A client of one lock-service. Safe to share between threads (a pool of keep-alive connections).

    ``timeout_ms`` bounds each request (a waiting acquire's bound is its wait plus this); ``retry_budget_ms`` is how
    long an acquire keeps retrying after a transport error, a 503 or a 429, on top of its wait.

    An https:// service: ``ca_file`` is the CA (PEM) that signed its certificate (default: the system's CAs);
    ``cert_file`` and ``key_file`` a client certificate for a service that requires one. Or give an
    ``ssl_context`` of your own instead of the three.
    """

    def __init__(
        self,
        base_url: str,
        *,
        api_key: Optional[str] = None,
        timeout_ms: int = DEFAULT_TIMEOUT_MS,
        retry_budget_ms: int = DEFAULT_RETRY_BUDGET_MS,
        user_agent: Optional[str] = None,
        ssl_context: Optional[ssl.SSLContext] = None,
        ca_file: Optional[str] = None,
        cert_file: Optional[str] = None,
        key_file: Optional[str] = None,
    ) -> None:
        headers = {"User-Agent": user_agent or "lock-service-python/0.1"}
        if api_key is not None:
            headers["Authorization"] = f"Bearer {api_key}"
        context = _ssl_context(ssl_context, ca_file, cert_file, key_file)
        self._transport = Transport(base_url, headers, ssl_context=context)
        self.timeout_ms = check.positive(timeout_ms, "timeout_ms") or DEFAULT_TIMEOUT_MS
        self.retry_budget_ms = retry_budget_ms
        self.locks = Locks(self)
        self.rwlocks = RwLocks(self)
        self.semaphores = Semaphores(self)
        self.sessions = Sessions(self)
        from .elections import Elections

        self.elections = Elections(self)

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Closes the idle connections (holds still kept by ``lock()`` keep their own)."""
        self._transport.close()

    # --- the one-call helpers -------------------------------------------------------------------------

    def lock(
        self,
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
        release_timeout_ms: int = 2_000,
        safety_margin_ms: Optional[int] = None,
        on_lost: Optional[Callable[[LockLost], Any]] = None,
        watch: bool = True,
    ) -> "Hold":
        """``with client.lock(key, ttl_ms=…) as hold:`` — acquire, keep alive, signal loss, release. See ``Hold``."""
        from .hold import Hold

        return Hold(
            self,
            key,
            mode=mode,
            ttl_ms=ttl_ms,
            wait_ms=wait_ms,
            owner=owner,
            session=session,
            limit=limit,
            permits=permits,
            lock_delay_ms=lock_delay_ms,
            max_hold_ms=max_hold_ms,
            retry_budget_ms=retry_budget_ms,
            release_timeout_ms=release_timeout_ms,
            safety_margin_ms=safety_margin_ms,
            on_lost=on_lost,
            watch=watch,
        )

    def session(
        self,
        ttl_ms: Optional[int] = None,
        *,
        owner: Optional[str] = None,
        release_timeout_ms: int = 2_000,
        safety_margin_ms: Optional[int] = None,
        on_lost: Optional[Callable[[LockLost], Any]] = None,
        watch: bool = True,
    ) -> "KeptSession":
        """``with client.session(ttl_ms=…) as session:`` — open a session and keep it alive; closed on exit."""
        from .hold import KeptSession

        return KeptSession(
            self,
            ttl_ms=ttl_ms,
            owner=owner,
            release_timeout_ms=release_timeout_ms,
            safety_margin_ms=safety_margin_ms,
            on_lost=on_lost,
            watch=watch,
        )

    def while_leader(
        self,
        name: str,
        candidate: str,
        *,
        value: Optional[str] = None,
        ttl_ms: Optional[int] = None,
        wait_ms: int = 0,
        session: Union[str, "KeptSession", None] = None,
        max_hold_ms: Optional[int] = None,
        retry_budget_ms: Optional[int] = None,
        release_timeout_ms: int = 2_000,
        safety_margin_ms: Optional[int] = None,
        on_lost: Optional[Callable[[LockLost], Any]] = None,
        watch: bool = True,
    ) -> "Leadership":
        """``with client.while_leader(name, candidate) as leadership:`` — campaign (waiting up to ``wait_ms``), keep the
        term alive, signal its loss (``leadership.lost``, ``check()``), resign on exit. The term is the fence."""
        from .elections import Leadership

        return Leadership(
            self,
            name,
            candidate,
            value=value,
            ttl_ms=ttl_ms,
            wait_ms=wait_ms,
            session=session,
            max_hold_ms=max_hold_ms,
            retry_budget_ms=retry_budget_ms,
            release_timeout_ms=release_timeout_ms,
            safety_margin_ms=safety_margin_ms,
            on_lost=on_lost,
            watch=watch,
        )

    def observe(self, name: str, on_change: Optional[Callable[["ElectionEvent"], Any]] = None) -> "Observer":
        """Follows who leads ``name``: iterate the Observer for each change, or pass ``on_change`` and use it as a
        context manager (called on a daemon thread until the block ends)."""
        from .elections import Observer

        return Observer(self, name, on_change)

    # --- fence checks -------------------------------------------------------------------------------

    def check_fence(self, key: str, fence: int, *, kind: str = "exclusive") -> FenceCheck:
        """Is ``fence`` a live hold's fence on ``key`` right now? ``kind``: exclusive (a lock), read or write (the
        rwlock), permit (the semaphore), leader (the election ``key``; the fence is its term). A snapshot: pair it
        with the resource's own write window."""
        if kind not in _FENCED:
            raise InvalidArgument("kind", "must be exclusive, read, write, permit or leader")
        return self._fence_check(f"/{_FENCED[kind]}/{check.key(key, 'name' if kind == 'leader' else 'key')}", fence)

    # --- health -------------------------------------------------------------------------------------

    def health(self) -> Dict[str, Any]:
        return self._call("GET", "/healthz").body  # type: ignore[no-any-return]

    def readiness(self) -> Readiness:
        """GET /readyz: 200 and 503 both carry the per-node detail (``ready`` says which)."""
        answer = self._call("GET", "/readyz", ok=(200, 503))
        if not isinstance(answer.body, dict) or "ready" not in answer.body:
            raise self._error(answer)
        return Readiness.of(answer.body)

    # --- plumbing shared by the resources -----------------------------------------------------------

    def _timeout_s(self, extra_ms: int = 0) -> float:
        return (self.timeout_ms + extra_ms) / 1000.0

    def _error(self, answer: Answer) -> LockServiceError:
        return error_from_answer(answer.status, answer.body, answer.request_id, answer.retry_after)

    def _call(
        self,
        method: str,
        path: str,
        *,
        ok: Tuple[int, ...] = (200,),
        query: Optional[Mapping[str, Any]] = None,
        body: Optional[Mapping[str, Any]] = None,
        token: Optional[str] = None,
        timeout_s: Optional[float] = None,
        idempotent: bool = True,
    ) -> Answer:
        answer = self._transport.request(
            method,
            path,
            timeout_s=timeout_s if timeout_s is not None else self._timeout_s(),
            query=query,
            body=body,
            headers={"Lock-Token": token} if token is not None else None,
            idempotent=idempotent,
            label=f"{method} {_SESSION_IN_PATH.sub('/sessions/[redacted]', path)}",
        )
        if answer.status not in ok:
            raise self._error(answer)
        return answer

    def _acquire(
        self,
        mode: str,
        key: str,
        *,
        ttl_ms: Optional[int] = None,
        wait_ms: Optional[int] = None,
        token: Optional[str] = None,
        owner: Optional[str] = None,
        reentrant: bool = False,
        session: Optional[str] = None,
        limit: Optional[int] = None,
        permits: Optional[int] = None,
        lock_delay_ms: Optional[int] = None,
        retry_budget_ms: Optional[int] = None,
        stop: Optional[threading.Event] = None,
    ) -> Grant:
        check.key(key)
        path = hold_path(mode, key)
        check.ttl_ms(ttl_ms)
        check.wait_ms(wait_ms)
        token = check.token(token) if token is not None else new_token()
        check.owner(owner)
        if session is not None:
            check.session_id(session)
        if mode == "permit":
            if limit is None:
                raise InvalidArgument("limit", "a semaphore's limit is required")
            check.positive(limit, "limit")
            check.permits(permits, limit)
        elif limit is not None or permits is not None:
            raise InvalidArgument(
                "limit" if limit is not None else "permits", "only a semaphore takes limit and permits"
            )
        check.wait_ms(lock_delay_ms, "lock_delay_ms")
        base: Dict[str, Any] = {"token": token}
        for name, value in (
            ("ttlMs", ttl_ms),
            ("owner", owner),
            ("session", session),
            ("limit", limit),
            ("permits", permits),
            ("lockDelayMs", lock_delay_ms),
        ):
            if value is not None:
                base[name] = value
        if reentrant:
            base["reentrant"] = True
        answer, sent = self._post_retrying(
            path, base, wait_ms or 0, retry_budget_ms, idempotent=not reentrant, stop=stop
        )
        return Grant.of(answer.body, created=answer.status == 201, sent_at=sent)

    def _post_retrying(
        self,
        path: str,
        base: Mapping[str, Any],
        wait: int,
        retry_budget_ms: Optional[int],
        *,
        idempotent: bool,
        stop: Optional[threading.Event] = None,
    ) -> Tuple[Answer, float]:
        """POSTs an acquire (or a campaign) whose body carries the caller's token, retrying what is safe to retry
        within the wait plus the retry budget; the 200/201 answer and the send time of the request that got it."""
        budget = self.retry_budget_ms if retry_budget_ms is None else retry_budget_ms
        wait_until = time.monotonic() + wait / 1000.0
        give_up = wait_until + budget / 1000.0
        attempt = 0
        while True:
            body = dict(base)
            left_ms = wait if attempt == 0 else max(0, int((wait_until - time.monotonic()) * 1000))
            if left_ms:
                body["waitMs"] = left_ms
            sent = time.monotonic()
            try:
                answer = self._call(
                    "POST", path, ok=(200, 201), body=body, timeout_s=self._timeout_s(left_ms), idempotent=idempotent
                )
                return answer, sent
            except TransportError:
                # The same token makes a retried POST a re-acquire (200, same fence) — unless it adds a hold.
                if not idempotent:
                    raise
                delay = min(1.0, 0.05 * 2**attempt) * random.uniform(0.5, 1.0)
                if not self._may_retry(delay, give_up, stop):
                    raise
            except (BackendUnavailable, TooMany) as err:
                after = err.retry_after_ms
                delay = (after / 1000.0 if after is not None else min(1.0, 0.05 * 2**attempt)) * random.uniform(
                    1.0, 1.2
                )
                if not self._may_retry(delay, give_up, stop):
                    raise
            attempt += 1

    @staticmethod
    def _may_retry(delay: float, give_up: float, stop: Optional[threading.Event]) -> bool:
        if time.monotonic() + delay >= give_up:
            return False
        if stop is not None:
            return not stop.wait(delay)
        time.sleep(delay)
        return True

    def _renew(self, path: str, token: str, ttl_ms: Optional[int] = None, timeout_s: Optional[float] = None) -> Grant:
        check.token(token)
        check.ttl_ms(ttl_ms)
        body: Dict[str, Any] = {"token": token}
        if ttl_ms is not None:
            body["ttlMs"] = ttl_ms
        sent = time.monotonic()
        answer = self._call("PUT", f"{path}/renew", body=body, timeout_s=timeout_s)
        return Grant.of(answer.body, created=False, sent_at=sent)

    def _release(self, path: str, token: str, timeout_s: Optional[float] = None) -> Released:
        check.token(token)
        return Released.of(self._call("DELETE", path, token=token, timeout_s=timeout_s, idempotent=False).body)

    def _force_release(self, path: str, fence: Optional[int] = None) -> Released:
        query: Dict[str, Any] = {"force": "true"}
        if fence is not None:
            query["fence"] = check.positive(fence, "fence")
        return Released.of(self._call("DELETE", path, query=query, idempotent=False).body)

    def _fence_check(self, path: str, fence: int, argument: str = "fence") -> FenceCheck:
        return FenceCheck.of(self._call("GET", f"{path}/fence/{check.fence(fence, argument)}").body)

    def _inspect(
        self, path: str, of: Callable[[Mapping[str, Any]], T], query: Optional[Mapping[str, Any]] = None
    ) -> Optional[T]:
        answer = self._call("GET", path, ok=(200, 404), query=query)
        if answer.status == 404:
            if isinstance(answer.body, dict) and answer.body.get("error") in ("lock_not_found", "session_not_found"):
                return None
            raise self._error(answer)
        return of(answer.body)

    def _list(
        self,
        path: str,
        of: Callable[[Mapping[str, Any]], T],
        prefix: Optional[str],
        limit: Optional[int],
        cursor: Optional[str],
    ) -> Page[T]:
        check.positive(limit, "limit")
        answer = self._call("GET", path, query={"prefix": prefix, "limit": limit, "cursor": cursor})
        return Page([of(item) for item in answer.body["items"]], answer.body.get("cursor"))

    def _watch(
        self, path: str, token: Optional[str], wait_ms: Optional[int], timeout_s: Optional[float] = None
    ) -> WatchEvent:
        check.wait_ms(wait_ms)
        if token is not None:
            check.token(token)
        query = {"wait": f"{wait_ms}ms"} if wait_ms is not None else None
        bound = timeout_s if timeout_s is not None else self._timeout_s(wait_ms if wait_ms is not None else 30_000)
        return WatchEvent.of(self._call("GET", f"{path}/watch", query=query, token=token, timeout_s=bound).body)

    def _watch_stream(self, path: str, token: Optional[str], wait_ms: Optional[int]) -> "EventStream[WatchEvent]":
        if token is not None:
            check.token(token)
        return self._stream(f"{path}/watch", token, {}, wait_ms, lambda event, body: WatchEvent.of(body))

    def _stream(
        self,
        path: str,
        token: Optional[str],
        query: Mapping[str, Any],
        wait_ms: Optional[int],
        parse: Callable[[str, Any], T],
    ) -> "EventStream[T]":
        check.wait_ms(wait_ms)
        headers = self._transport.headers({"Lock-Token": token} if token is not None else None)
        url = self._transport.path(path, {**query, "wait": f"{wait_ms}ms" if wait_ms is not None else None})
        timeout_s = self._timeout_s(wait_ms if wait_ms is not None else 30_000)
        label = f"GET {_SESSION_IN_PATH.sub('/sessions/[redacted]', path)}"
        return open_stream(self._transport.connect, url, headers, timeout_s, label, parse)


class _Holds:
    """The verbs every kind of hold shares."""

    def __init__(self, client: Client) -> None:
        self._client = client


class Locks(_Holds):
    """Exclusive locks: /locks/:key."""

    def acquire(
        self,
        key: str,
        *,
        ttl_ms: Optional[int] = None,
        wait_ms: Optional[int] = None,
        token: Optional[str] = None,
        owner: Optional[str] = None,
        reentrant: bool = False,
        session: Optional[str] = None,
        lock_delay_ms: Optional[int] = None,
    ) -> Grant:
        """Acquire (optionally waiting in line). The token is the caller's or a random one chosen here, so a retry
        after a timeout, a reset, a 503 or a 429 is a re-acquire (same fence). A 409 is never retried."""
        c = self._client
        return c._acquire(
            "exclusive",
            key,
            ttl_ms=ttl_ms,
            wait_ms=wait_ms,
            token=token,
            owner=owner,
            reentrant=reentrant,
            session=session,
            lock_delay_ms=lock_delay_ms,
        )

    def renew(self, key: str, token: str, *, ttl_ms: Optional[int] = None) -> Grant:
        return self._client._renew(hold_path("exclusive", check.key(key)), token, ttl_ms)

    def release(self, key: str, token: str) -> Released:
        return self._client._release(hold_path("exclusive", check.key(key)), token)

    def inspect(self, key: str) -> Optional[LockInfo]:
        """The lock's state, or None when it is free."""
        return self._client._inspect(hold_path("exclusive", check.key(key)), LockInfo.of)

    def list(
        self, *, prefix: Optional[str] = None, limit: Optional[int] = None, cursor: Optional[str] = None
    ) -> Page[LockInfo]:
        """Admin: the held locks, one page at a time."""
        return self._client._list("/locks", LockInfo.of, prefix, limit, cursor)

    def check_fence(self, key: str, fence: int) -> FenceCheck:
        """Is ``fence`` the lock's live fence right now?"""
        return self._client._fence_check(hold_path("exclusive", check.key(key)), fence)

    def force_release(self, key: str) -> Released:
        """Admin: drop the hold whoever holds it."""
        return self._client._force_release(hold_path("exclusive", check.key(key)))

    def watch(self, key: str, token: str, *, wait_ms: Optional[int] = None) -> WatchEvent:
        """Long poll: answers as soon as the hold is lost, or ``held=True`` when the wait (default 30 s) runs out."""
        return self._client._watch(hold_path("exclusive", check.key(key)), token, wait_ms)

    def watch_stream(self, key: str, token: str, *, wait_ms: Optional[int] = None) -> "EventStream[WatchEvent]":
        """The same as a stream of events (iterate it; close it to stop)."""
        return self._client._watch_stream(hold_path("exclusive", check.key(key)), token, wait_ms)


class RwLocks(_Holds):
    """Read-write locks: /rwlocks/:key/{read,write}. ``mode`` is "read" or "write"."""

    def acquire(
        self,
        key: str,
        mode: str,
        *,
        ttl_ms: Optional[int] = None,
        wait_ms: Optional[int] = None,
        token: Optional[str] = None,
        owner: Optional[str] = None,
        reentrant: bool = False,
        session: Optional[str] = None,
        lock_delay_ms: Optional[int] = None,
    ) -> Grant:
        c = self._client
        return c._acquire(
            _rw(mode),
            key,
            ttl_ms=ttl_ms,
            wait_ms=wait_ms,
            token=token,
            owner=owner,
            reentrant=reentrant,
            session=session,
            lock_delay_ms=lock_delay_ms,
        )

    def acquire_read(self, key: str, **options: Any) -> Grant:
        return self.acquire(key, "read", **options)

    def acquire_write(self, key: str, **options: Any) -> Grant:
        return self.acquire(key, "write", **options)

    def renew(self, key: str, mode: str, token: str, *, ttl_ms: Optional[int] = None) -> Grant:
        return self._client._renew(hold_path(_rw(mode), check.key(key)), token, ttl_ms)

    def release(self, key: str, mode: str, token: str) -> Released:
        return self._client._release(hold_path(_rw(mode), check.key(key)), token)

    def inspect(self, key: str, *, readers: bool = False) -> Optional[RwLockInfo]:
        """The rwlock's state, or None when nobody holds it; ``readers=True`` (admin) adds each read hold."""
        query = {"readers": "true"} if readers else None
        return self._client._inspect(f"/rwlocks/{check.key(key)}", RwLockInfo.of, query)

    def list(
        self, *, prefix: Optional[str] = None, limit: Optional[int] = None, cursor: Optional[str] = None
    ) -> Page[RwLockInfo]:
        return self._client._list("/rwlocks", RwLockInfo.of, prefix, limit, cursor)

    def check_fence(self, key: str, fence: int) -> FenceCheck:
        """Is ``fence`` the live fence of the write hold or of any one read hold?"""
        return self._client._fence_check(f"/rwlocks/{check.key(key)}", fence)

    def force_release(self, key: str, mode: str, *, fence: Optional[int] = None) -> Released:
        """Admin: drop the writer, or the read hold with ``fence``."""
        if _rw(mode) == "read" and fence is None:
            raise InvalidArgument("fence", "force-releasing a read hold needs its fence")
        return self._client._force_release(hold_path(mode, check.key(key)), fence)

    def watch(self, key: str, mode: str, token: str, *, wait_ms: Optional[int] = None) -> WatchEvent:
        return self._client._watch(hold_path(_rw(mode), check.key(key)), token, wait_ms)

    def watch_stream(
        self, key: str, mode: str, token: str, *, wait_ms: Optional[int] = None
    ) -> "EventStream[WatchEvent]":
        return self._client._watch_stream(hold_path(_rw(mode), check.key(key)), token, wait_ms)


def _rw(mode: str) -> str:
    if mode not in ("read", "write"):
        raise InvalidArgument("mode", "must be read or write")
    return mode


class Semaphores(_Holds):
    """Counting semaphores: /semaphores/:key, ``limit`` permits at most, a hold takes ``permits`` (default 1)."""

    def acquire(
        self,
        key: str,
        *,
        limit: int,
        permits: Optional[int] = None,
        ttl_ms: Optional[int] = None,
        wait_ms: Optional[int] = None,
        token: Optional[str] = None,
        owner: Optional[str] = None,
        reentrant: bool = False,
        session: Optional[str] = None,
        lock_delay_ms: Optional[int] = None,
    ) -> Grant:
        return self._client._acquire(
            "permit",
            key,
            limit=limit,
            permits=permits,
            ttl_ms=ttl_ms,
            wait_ms=wait_ms,
            token=token,
            owner=owner,
            reentrant=reentrant,
            session=session,
            lock_delay_ms=lock_delay_ms,
        )

    def renew(self, key: str, token: str, *, ttl_ms: Optional[int] = None) -> Grant:
        return self._client._renew(hold_path("permit", check.key(key)), token, ttl_ms)

    def release(self, key: str, token: str) -> Released:
        return self._client._release(hold_path("permit", check.key(key)), token)

    def inspect(self, key: str, *, holds: bool = False) -> Optional[SemaphoreInfo]:
        """The semaphore's state, or None when nobody holds or waits; ``holds=True`` (admin) adds each hold."""
        query = {"holds": "true"} if holds else None
        return self._client._inspect(hold_path("permit", check.key(key)), SemaphoreInfo.of, query)

    def list(
        self, *, prefix: Optional[str] = None, limit: Optional[int] = None, cursor: Optional[str] = None
    ) -> Page[SemaphoreInfo]:
        return self._client._list("/semaphores", SemaphoreInfo.of, prefix, limit, cursor)

    def check_fence(self, key: str, fence: int) -> FenceCheck:
        """Is ``fence`` the live fence of any one permit hold?"""
        return self._client._fence_check(hold_path("permit", check.key(key)), fence)

    def force_release(self, key: str, *, fence: int) -> Released:
        """Admin: drop the hold with ``fence``."""
        return self._client._force_release(hold_path("permit", check.key(key)), fence)

    def watch(self, key: str, token: str, *, wait_ms: Optional[int] = None) -> WatchEvent:
        return self._client._watch(hold_path("permit", check.key(key)), token, wait_ms)

    def watch_stream(self, key: str, token: str, *, wait_ms: Optional[int] = None) -> "EventStream[WatchEvent]":
        return self._client._watch_stream(hold_path("permit", check.key(key)), token, wait_ms)


class Sessions(_Holds):
    """Sessions: one lease for many holds (acquire with ``session=<id>``). The id is a secret, like a token."""

    def open(
        self, *, ttl_ms: Optional[int] = None, owner: Optional[str] = None, lock_delay_ms: Optional[int] = None
    ) -> Session:
        """Opens a session; ``lock_delay_ms``: the lock-delay of its holds that give none of their own."""
        check.ttl_ms(ttl_ms)
        check.owner(owner)
        check.wait_ms(lock_delay_ms, "lock_delay_ms")
        fields = (("ttlMs", ttl_ms), ("owner", owner), ("lockDelayMs", lock_delay_ms))
        body = {k: v for k, v in fields if v is not None}
        return Session.of(self._client._call("POST", "/sessions", ok=(201,), body=body, idempotent=False).body)

    def keepalive(self, session_id: str, *, timeout_s: Optional[float] = None) -> Keepalive:
        sent = time.monotonic()
        answer = self._client._call("PUT", f"/sessions/{check.session_id(session_id)}/keepalive", timeout_s=timeout_s)
        return Keepalive.of(answer.body, sent)

    def inspect(self, session_id: str) -> Optional[SessionInfo]:
        """The session, or None when it is unknown, lapsed or closed."""
        return self._client._inspect(f"/sessions/{check.session_id(session_id)}", SessionInfo.of)

    def close(self, session_id: str, *, timeout_s: Optional[float] = None) -> SessionClosed:
        path = f"/sessions/{check.session_id(session_id)}"
        return SessionClosed.of(self._client._call("DELETE", path, timeout_s=timeout_s, idempotent=False).body)

    def watch(self, session_id: str, *, wait_ms: Optional[int] = None) -> WatchEvent:
        return self._client._watch(f"/sessions/{check.session_id(session_id)}", None, wait_ms)

    def watch_stream(self, session_id: str, *, wait_ms: Optional[int] = None) -> "EventStream[WatchEvent]":
        return self._client._watch_stream(f"/sessions/{check.session_id(session_id)}", None, wait_ms)


__all__ = ["Client", "Locks", "RwLocks", "Semaphores", "Sessions", "EventStream", "new_token", "hold_path"]
