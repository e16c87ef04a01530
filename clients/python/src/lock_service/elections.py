"""Leader election: /elections/:name. ``client.elections`` has every route; ``with client.while_leader(name, candidate)
as leadership:`` campaigns, keeps the term alive and signals its loss like ``client.lock()``; ``client.observe(name)``
follows who leads (an iterator, or a callback on a daemon thread)."""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, Callable, Dict, Iterator, Mapping, Optional, Union

from . import _validate as check
from ._sse import EventStream
from .errors import InvalidArgument, LockLost, LockServiceError
from .hold import DEFAULT_RELEASE_TIMEOUT_MS, DEFAULT_TTL_MS, KeptSession, _Lease
from .types import FenceCheck, Page, WatchEvent, parse_time, time_of

if TYPE_CHECKING:  # pragma: no cover
    from .client import Client

log = logging.getLogger("lock_service")


@dataclass(frozen=True)
class Leader:
    candidate: str
    value: Optional[str]
    term: int
    revision: int
    since: datetime
    remaining_ms: Optional[int] = None

    @classmethod
    def of(cls, b: Mapping[str, Any]) -> "Leader":
        return cls(b["candidate"], b.get("value"), b["term"], b["revision"], time_of(b["since"]), b.get("remainingMs"))


@dataclass(frozen=True)
class Term:
    """A campaign's answer: leadership of ``name`` for ``term`` (the fence). ``created``: 201 (elected now) or 200 (the
    leader's own token again); ``sent_at``: the local monotonic clock when the request that won was sent."""

    name: str
    term: int
    token: str = field(repr=False)
    candidate: str
    value: Optional[str]
    revision: int
    since: datetime
    ttl_ms: int
    validity_ms: int
    expires_at: datetime
    created: bool = True
    sent_at: float = 0.0

    @property
    def valid_until(self) -> float:
        return self.sent_at + self.validity_ms / 1000.0

    @classmethod
    def of(cls, b: Mapping[str, Any], created: bool, sent_at: float) -> "Term":
        return cls(
            b["name"],
            b["term"],
            b["token"],
            b["candidate"],
            b.get("value"),
            b["revision"],
            time_of(b["since"]),
            b["ttlMs"],
            b["validityMs"],
            time_of(b["expiresAt"]),
            created,
            sent_at,
        )


@dataclass(frozen=True)
class TermRenewed:
    name: str
    term: int
    ttl_ms: int
    validity_ms: int
    expires_at: datetime
    sent_at: float = 0.0

    @classmethod
    def of(cls, b: Mapping[str, Any], sent_at: float) -> "TermRenewed":
        return cls(b["name"], b["term"], b["ttlMs"], b["validityMs"], time_of(b["expiresAt"]), sent_at)


@dataclass(frozen=True)
class Proclaimed:
    name: str
    term: int
    revision: int
    value: str


@dataclass(frozen=True)
class ElectionInfo:
    name: str
    leader: Optional[Leader]
    term: int
    candidates: int
    transitions: int

    @classmethod
    def of(cls, b: Mapping[str, Any]) -> "ElectionInfo":
        leader = Leader.of(b["leader"]) if b.get("leader") else None
        return cls(b["name"], leader, b["term"], b["candidates"], b["transitions"])


@dataclass(frozen=True)
class Observation:
    """A long poll's answer: the election as it is (``changed`` False: the wait ran out on what the caller saw)."""

    name: str
    term: int
    revision: int
    leader: Optional[Leader]
    changed: bool
    reason: Optional[str] = None

    @classmethod
    def of(cls, b: Mapping[str, Any]) -> "Observation":
        leader = Leader.of(b["leader"]) if b.get("leader") else None
        return cls(b["name"], b["term"], b["revision"], leader, b["changed"], b.get("reason"))


@dataclass(frozen=True)
class ElectionEvent:
    """One change seen by an observer. ``kind``: ``elected`` (a new term: candidate, value, since), ``proclaimed``
    (the leader's new value), ``vacant`` (term ``term`` ended; ``reason``), ``resync`` (the stream may have missed
    something: ``leader`` is the state now, None when vacant)."""

    kind: str
    term: int
    revision: int
    candidate: Optional[str] = None
    value: Optional[str] = None
    since: Optional[datetime] = None
    reason: Optional[str] = None
    leader: Optional[Leader] = None

    @property
    def has_leader(self) -> bool:
        return self.kind in ("elected", "proclaimed") or (self.kind == "resync" and self.leader is not None)

    @classmethod
    def of(cls, kind: str, b: Mapping[str, Any]) -> "ElectionEvent":
        leader = Leader.of(b["leader"]) if b.get("leader") else None
        return cls(
            kind,
            b["term"],
            b["revision"],
            b.get("candidate"),
            b.get("value"),
            parse_time(b.get("since")),
            b.get("reason"),
            leader,
        )


def _name(name: object) -> str:
    return check.key(name, "name")


def _candidate(candidate: object) -> str:
    if not isinstance(candidate, str) or not 1 <= len(candidate) <= 200 or not candidate.isprintable():
        raise InvalidArgument("candidate", "must be 1-200 printable characters")
    return candidate


def _value(value: object) -> Optional[str]:
    if value is not None and (not isinstance(value, str) or len(value.encode()) > 4096):
        raise InvalidArgument("value", "must be a string of at most 4096 bytes of UTF-8")
    return value


class Elections:
    """Every route of /elections."""

    def __init__(self, client: "Client") -> None:
        self._client = client

    def campaign(
        self,
        name: str,
        candidate: str,
        *,
        value: Optional[str] = None,
        ttl_ms: Optional[int] = None,
        wait_ms: Optional[int] = None,
        session: Optional[str] = None,
        token: Optional[str] = None,
        retry_budget_ms: Optional[int] = None,
    ) -> Term:
        """Campaign: elected (201), or wait in line up to ``wait_ms``; ``LockHeld`` (its ``details["leader"]``) when
        another candidate leads. Retried like an acquire (one token, so a retry is the leader's own campaign: 200)."""
        from .client import new_token

        base: Dict[str, Any] = {
            "candidate": _candidate(candidate),
            "token": check.token(token) if token is not None else new_token(),
        }
        if _value(value) is not None:
            base["value"] = value
        if check.ttl_ms(ttl_ms) is not None:
            base["ttlMs"] = ttl_ms
        check.wait_ms(wait_ms)
        if session is not None:
            base["session"] = check.session_id(session)
        answer, sent = self._client._post_retrying(
            f"/elections/{_name(name)}/campaign", base, wait_ms or 0, retry_budget_ms, idempotent=True
        )
        return Term.of(answer.body, answer.status == 201, sent)

    def proclaim(self, name: str, token: str, value: str) -> Proclaimed:
        if value is None:
            raise InvalidArgument("value", "a proclaim needs a value")
        body = {"token": check.token(token), "value": _value(value)}
        b = self._client._call("PUT", f"/elections/{_name(name)}/proclaim", body=body).body
        return Proclaimed(b["name"], b["term"], b["revision"], b["value"])

    def renew(
        self, name: str, token: str, *, ttl_ms: Optional[int] = None, timeout_s: Optional[float] = None
    ) -> TermRenewed:
        body: Dict[str, Any] = {"token": check.token(token)}
        if check.ttl_ms(ttl_ms) is not None:
            body["ttlMs"] = ttl_ms
        sent = time.monotonic()
        return TermRenewed.of(
            self._client._call("PUT", f"/elections/{_name(name)}/renew", body=body, timeout_s=timeout_s).body, sent
        )

    def resign(self, name: str, token: str, *, timeout_s: Optional[float] = None) -> bool:
        """Ends the term (the next candidate in line is elected at once). ``LockNotFound`` when it had ended already."""
        path = f"/elections/{_name(name)}"
        return bool(
            self._client._call("DELETE", path, token=check.token(token), timeout_s=timeout_s, idempotent=False).body[
                "resigned"
            ]
        )

    def force_resign(self, name: str) -> bool:
        """Admin: ends whoever's term."""
        path = f"/elections/{_name(name)}"
        return bool(self._client._call("DELETE", path, query={"force": "true"}, idempotent=False).body["resigned"])

    def check_fence(self, name: str, term: int) -> FenceCheck:
        """Is ``term`` the election's live term (the leader's fence) right now? The answer's ``fence`` is the term."""
        return self._client._fence_check(f"/elections/{_name(name)}", term, "term")

    def inspect(self, name: str) -> Optional[ElectionInfo]:
        """Who leads, or None with neither a leader nor candidates."""
        return self._client._inspect(f"/elections/{_name(name)}", ElectionInfo.of)

    def list(
        self, *, prefix: Optional[str] = None, limit: Optional[int] = None, cursor: Optional[str] = None
    ) -> Page[ElectionInfo]:
        """Admin: the elections that have a leader."""
        return self._client._list("/elections", ElectionInfo.of, prefix, limit, cursor)

    def observe(
        self, name: str, *, after: Optional[int] = None, revision: Optional[int] = None, wait_ms: Optional[int] = None
    ) -> Observation:
        """Long poll: answers at once when the election is not as the caller saw it (``after`` term, ``revision``),
        else as soon as it changes, else when the wait runs out."""
        check.wait_ms(wait_ms)
        query = {"after": after, "revision": revision, "wait": f"{wait_ms}ms" if wait_ms is not None else None}
        timeout_s = self._client._timeout_s(wait_ms if wait_ms is not None else 30_000)
        return Observation.of(
            self._client._call("GET", f"/elections/{_name(name)}/observe", query=query, timeout_s=timeout_s).body
        )

    def observe_stream(
        self, name: str, *, after: Optional[int] = None, revision: Optional[int] = None, wait_ms: Optional[int] = None
    ) -> EventStream[ElectionEvent]:
        """The same as a stream of ``ElectionEvent``s: the current state first, then every change, until the wait runs
        out. ``client.observe()`` reconnects for you."""
        query = {"after": after, "revision": revision}
        return self._client._stream(f"/elections/{_name(name)}/observe", None, query, wait_ms, ElectionEvent.of)

    def watch(self, name: str, token: str, *, wait_ms: Optional[int] = None) -> WatchEvent:
        """The leader's own lost-leadership signal (a watch of its hold)."""
        return self._client._watch(f"/elections/{_name(name)}", token, wait_ms)

    def watch_stream(self, name: str, token: str, *, wait_ms: Optional[int] = None) -> EventStream[WatchEvent]:
        return self._client._watch_stream(f"/elections/{_name(name)}", token, wait_ms)


class Observer:
    """Follows an election for as long as it is open: iterate it for every ``ElectionEvent`` (it reconnects when a
    stream's wait runs out or breaks, passing what it saw, so nothing is missed silently: the service sends
    ``resync`` when it might have), or give ``on_change`` to ``client.observe()`` to be called on a daemon thread.
    ``leader`` is the latest state seen; ``close()`` (or the ``with`` block's end) stops it."""

    def __init__(self, client: "Client", name: str, on_change: Optional[Callable[[ElectionEvent], Any]] = None) -> None:
        self._elections = client.elections
        self.name = _name(name)
        self._on_change = on_change
        self._closed = threading.Event()
        self._lock = threading.Lock()
        self._stream: Optional[EventStream[ElectionEvent]] = None
        self._thread: Optional[threading.Thread] = None
        self.term: Optional[int] = None
        self.revision: Optional[int] = None
        #: The last event with a leader (None after a vacancy).
        self.leader: Optional[ElectionEvent] = None

    def __enter__(self) -> "Observer":
        return self.start() if self._on_change is not None else self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def start(self) -> "Observer":
        if self._on_change is None:
            raise InvalidArgument(
                "on_change", "start() calls on_change for each event; without it, iterate the observer"
            )
        on_change = self._on_change

        def run() -> None:
            for event in self:
                try:
                    on_change(event)
                except Exception:  # noqa: BLE001 - one bad call must not stop the observer
                    log.exception("lock_service: on_change failed")

        self._thread = threading.Thread(target=run, name="lock_service-observer", daemon=True)
        self._thread.start()
        return self

    def close(self) -> None:
        self._closed.set()
        with self._lock:
            stream = self._stream
        if stream is not None:
            stream.close()

    def __iter__(self) -> Iterator[ElectionEvent]:
        seen = None
        while not self._closed.is_set():
            try:
                stream = self._elections.observe_stream(self.name, after=self.term, revision=self.revision)
            except LockServiceError:
                if self._closed.wait(1.0):
                    return
                continue
            with self._lock:
                self._stream = stream
            if self._closed.is_set():
                stream.close()
                return
            try:
                for event in stream:
                    self.term, self.revision = event.term, event.revision
                    self.leader = event if event.has_leader else None
                    if (event.kind, event.term, event.revision) == seen:
                        continue  # a reconnect's first state, already told
                    seen = (event.kind, event.term, event.revision)
                    yield event
            except LockServiceError:
                if self._closed.wait(0.5):
                    return
            finally:
                stream.close()
                with self._lock:
                    self._stream = None


class Leadership(_Lease):
    """The term kept by ``with client.while_leader(name, candidate, …) as leadership:``: ``term`` (also ``fence``: pass
    it with every write the leader makes), ``token``, ``lost`` / ``check()`` / ``lost_reason`` as for a hold,
    ``proclaim(value)``. Resigned on exit (the next candidate in line is elected at once)."""

    def __init__(
        self,
        client: "Client",
        name: str,
        candidate: str,
        *,
        value: Optional[str] = None,
        ttl_ms: Optional[int] = None,
        wait_ms: int = 0,
        session: Union[str, KeptSession, None] = None,
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
        self._client = client
        self.name = _name(name)
        self.candidate = _candidate(candidate)
        self.session_id = session.id if isinstance(session, KeptSession) else session
        if ttl_ms is None and self.session_id is None:
            ttl_ms = DEFAULT_TTL_MS
        self._options: Dict[str, Any] = dict(
            value=_value(value),
            ttl_ms=check.ttl_ms(ttl_ms),
            wait_ms=check.wait_ms(wait_ms),
            retry_budget_ms=retry_budget_ms,
        )
        if self.session_id is not None:
            self._options["session"] = check.session_id(self.session_id)
        self.won: Optional[Term] = None
        self.value = value

    @property
    def term(self) -> int:
        assert self.won is not None, "not elected yet"
        return self.won.term

    fence = term

    @property
    def token(self) -> str:
        assert self.won is not None, "not elected yet"
        return self.won.token

    def __repr__(self) -> str:
        state = f"lost: {self.lost_reason}" if self.lost.is_set() else "leading"
        return f"<Leadership {self.name!r} term={self.won.term if self.won else None} {state}>"

    def __enter__(self) -> "Leadership":
        if self._entered:
            raise RuntimeError("a Leadership is entered once; call client.while_leader() again")
        self._entered = True
        won = self._client.elections.campaign(self.name, self.candidate, **self._options)
        self.won = won
        self._begin(won.sent_at, won.validity_ms, won.ttl_ms, bool(self._options["wait_ms"]))
        return self

    def __exit__(self, exc_type: Any, exc: Optional[BaseException], tb: Any) -> None:
        self._finish(exc)

    def proclaim(self, value: str) -> Proclaimed:
        """Publishes a new value for observers (the term stays)."""
        self.check()
        proclaimed = self._client.elections.proclaim(self.name, self.token, value)
        self.value = value
        return proclaimed

    def _client_timeout_s(self) -> float:
        return self._client._timeout_s()

    def _renew_once(self, timeout_s: float) -> int:
        return self._client.elections.renew(
            self.name, self.token, ttl_ms=self._capped_ttl_ms(), timeout_s=timeout_s
        ).validity_ms

    def _open_watch(self) -> EventStream[WatchEvent]:
        return self._client.elections.watch_stream(self.name, self.token)

    def _release_once(self, timeout_s: float) -> None:
        self._client.elections.resign(self.name, self.token, timeout_s=timeout_s)

    def _describe(self) -> str:
        return f"leadership of {self.name!r}"
