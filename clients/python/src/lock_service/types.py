"""The service's answers as typed values: exactly the fields it sends, in snake_case, times as datetimes."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Dict, Generic, List, Mapping, Optional, TypeVar

T = TypeVar("T")


def time_of(value: str) -> datetime:
    """An ISO 8601 time from the service (`…Z`) as an aware datetime (3.9's fromisoformat does not take `Z`)."""
    return datetime.fromisoformat(value[:-1] + "+00:00" if value.endswith("Z") else value)


def parse_time(value: Optional[str]) -> Optional[datetime]:
    """The same for a time the service may leave out."""
    return None if value is None else time_of(value)


@dataclass(frozen=True)
class Grant:
    """A hold granted (201 new, 200 re-acquire) or renewed. ``sent_at``: the library's monotonic clock when the
    request that granted it was sent; act only until ``valid_until`` (sent_at + validity)."""

    key: str
    mode: str
    token: str = field(repr=False)
    fence: int
    ttl_ms: int
    validity_ms: int
    expires_at: datetime
    hold_count: int
    permits: Optional[int] = None
    limit: Optional[int] = None
    created: bool = True
    sent_at: float = 0.0

    @property
    def valid_until(self) -> float:
        return self.sent_at + self.validity_ms / 1000.0

    @classmethod
    def of(cls, body: Mapping[str, Any], created: bool, sent_at: float) -> "Grant":
        return cls(
            key=body["key"],
            mode=body["mode"],
            token=body["token"],
            fence=int(body["fence"]),
            ttl_ms=body["ttlMs"],
            validity_ms=body["validityMs"],
            expires_at=time_of(body["expiresAt"]),
            hold_count=body["holdCount"],
            permits=body.get("permits"),
            limit=body.get("limit"),
            created=created,
            sent_at=sent_at,
        )


@dataclass(frozen=True)
class FenceCheck:
    """A fence check's answer, a snapshot: ``current`` only while a live hold carries exactly the fence asked about;
    ``fence`` is then that fence, else the live hold's (None when nothing is held); ``held``: anything is held."""

    current: bool
    fence: Optional[int]
    held: bool

    @classmethod
    def of(cls, body: Mapping[str, Any]) -> "FenceCheck":
        fence = body.get("fence")
        return cls(current=bool(body["current"]), fence=None if fence is None else int(fence), held=bool(body["held"]))


@dataclass(frozen=True)
class Released:
    key: str
    released: bool
    hold_count: int

    @classmethod
    def of(cls, body: Mapping[str, Any]) -> "Released":
        return cls(body["key"], body["released"], body["holdCount"])


@dataclass(frozen=True)
class LockInfo:
    key: str
    mode: str
    fence: int
    remaining_ms: int
    hold_count: int
    waiters: int
    owner: Optional[str] = None

    @classmethod
    def of(cls, b: Mapping[str, Any]) -> "LockInfo":
        return cls(b["key"], b["mode"], b["fence"], b["remainingMs"], b["holdCount"], b["waiters"], b.get("owner"))


@dataclass(frozen=True)
class HoldInfo:
    """One hold as an admin view lists it (a reader of an rwlock, a holder of a semaphore, the writer)."""

    fence: int
    remaining_ms: int
    hold_count: Optional[int] = None
    permits: Optional[int] = None
    owner: Optional[str] = None

    @classmethod
    def of(cls, b: Mapping[str, Any]) -> "HoldInfo":
        return cls(b["fence"], b["remainingMs"], b.get("holdCount"), b.get("permits"), b.get("owner"))


@dataclass(frozen=True)
class RwLockInfo:
    key: str
    writer: Optional[HoldInfo]
    readers: int
    writer_waiting: bool
    waiters: int
    owners: Optional[List[str]] = None
    reader_holds: Optional[List[HoldInfo]] = None

    @classmethod
    def of(cls, b: Mapping[str, Any]) -> "RwLockInfo":
        holds = b.get("readerHolds")
        return cls(
            b["key"],
            HoldInfo.of(b["writer"]) if b.get("writer") else None,
            b["readers"],
            b["writerWaiting"],
            b["waiters"],
            b.get("owners"),
            [HoldInfo.of(h) for h in holds] if holds is not None else None,
        )


@dataclass(frozen=True)
class SemaphoreInfo:
    key: str
    limit: int
    permits_in_use: int
    holders: int
    waiters: int
    owners: Optional[List[str]] = None
    holds: Optional[List[HoldInfo]] = None

    @classmethod
    def of(cls, b: Mapping[str, Any]) -> "SemaphoreInfo":
        holds = b.get("holds")
        return cls(
            b["key"],
            b["limit"],
            b["permitsInUse"],
            b["holders"],
            b["waiters"],
            b.get("owners"),
            [HoldInfo.of(h) for h in holds] if holds is not None else None,
        )


@dataclass(frozen=True)
class Page(Generic[T]):
    """One page of an admin listing; pass ``cursor`` to the next call (None: the last page)."""

    items: List[T]
    cursor: Optional[str]


@dataclass(frozen=True)
class Session:
    id: str = field(repr=False)
    ttl_ms: int
    expires_at: datetime
    owner: Optional[str] = None
    lock_delay_ms: int = 0

    @classmethod
    def of(cls, b: Mapping[str, Any]) -> "Session":
        return cls(b["id"], b["ttlMs"], time_of(b["expiresAt"]), b.get("owner"), b.get("lockDelayMs", 0))


@dataclass(frozen=True)
class SessionHold:
    key: str
    kind: str
    fence: Optional[int] = None
    remaining_ms: Optional[int] = None
    released: Optional[bool] = None

    @classmethod
    def of(cls, b: Mapping[str, Any]) -> "SessionHold":
        return cls(b["key"], b["kind"], b.get("fence"), b.get("remainingMs"), b.get("released"))


@dataclass(frozen=True)
class Keepalive:
    ttl_ms: int
    expires_at: datetime
    validity_ms: int
    holds: List[SessionHold]
    lost: List[SessionHold]
    sent_at: float = 0.0

    @classmethod
    def of(cls, b: Mapping[str, Any], sent_at: float) -> "Keepalive":
        return cls(
            b["ttlMs"],
            time_of(b["expiresAt"]),
            b["validityMs"],
            [SessionHold.of(h) for h in b["holds"]],
            [SessionHold.of(h) for h in b["lost"]],
            sent_at,
        )


@dataclass(frozen=True)
class SessionInfo:
    ttl_ms: int
    expires_at: datetime
    remaining_ms: int
    holds: List[SessionHold]
    owner: Optional[str] = None

    @classmethod
    def of(cls, b: Mapping[str, Any]) -> "SessionInfo":
        holds = [SessionHold.of(h) for h in b["holds"]]
        return cls(b["ttlMs"], time_of(b["expiresAt"]), b["remainingMs"], holds, b.get("owner"))


@dataclass(frozen=True)
class SessionClosed:
    closed: bool
    holds: List[SessionHold]

    @classmethod
    def of(cls, b: Mapping[str, Any]) -> "SessionClosed":
        return cls(b["closed"], [SessionHold.of(h) for h in b["holds"]])


@dataclass(frozen=True)
class WatchEvent:
    """``held=True`` with ``remaining_ms`` (still held when the wait ran out, or a renewal seen on a stream), or
    ``held=False`` with ``reason`` (expired, released, force_released, session_lost) and ``at``."""

    held: bool
    remaining_ms: Optional[int] = None
    reason: Optional[str] = None
    at: Optional[datetime] = None

    @classmethod
    def of(cls, b: Mapping[str, Any]) -> "WatchEvent":
        return cls(b["held"], b.get("remainingMs"), b.get("reason"), parse_time(b.get("at")))


@dataclass(frozen=True)
class Readiness:
    ready: bool
    majority: int
    nodes: List[Dict[str, Any]]

    @classmethod
    def of(cls, b: Mapping[str, Any]) -> "Readiness":
        return cls(b["ready"], b["majority"], list(b["nodes"]))
