"""Every error the library raises: one base type, one subtype per service error code a caller handles, and the local ones."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Dict, List, Mapping, Optional, Type


class LockServiceError(Exception):
    """The base of every error raised by this library.

    ``code`` is the service's error code (``lock_held``, ``not_owner``, …) or a local one
    (``invalid_argument``, ``unreachable``, ``timeout``, ``lock_lost``); ``status`` is the HTTP status
    (None for local errors); ``request_id`` the answer's X-Request-Id; ``details`` the rest of the body.
    """

    def __init__(
        self,
        message: str,
        *,
        code: str = "error",
        status: Optional[int] = None,
        request_id: Optional[str] = None,
        details: Optional[Mapping[str, Any]] = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.code = code
        self.status = status
        self.request_id = request_id
        self.details: Dict[str, Any] = dict(details or {})

    def __str__(self) -> str:
        where = f" (HTTP {self.status}, request {self.request_id})" if self.status is not None else ""
        return f"{self.code}: {self.message}{where}"


class LockHeld(LockServiceError):
    """409 lock_held: someone else holds it (after the wait, if the acquire waited)."""

    @property
    def retry_after_ms(self) -> Optional[int]:
        return self.details.get("retryAfterMs")

    @property
    def owners(self) -> List[str]:
        return list(self.details.get("owners") or [])

    @property
    def waited_ms(self) -> Optional[int]:
        return self.details.get("waitedMs")


class LockDelayed(LockServiceError):
    """409 lock_delayed: a hold with a lock-delay ended without its holder's release; nobody gets it until
    ``delayed_until`` (``retry_after_ms``, jittered)."""

    @property
    def retry_after_ms(self) -> Optional[int]:
        return self.details.get("retryAfterMs")

    @property
    def delayed_until(self) -> Optional[datetime]:
        value = self.details.get("delayedUntil")
        return datetime.fromisoformat(value[:-1] + "+00:00" if value.endswith("Z") else value) if value else None


class NotOwner(LockServiceError):
    """409 not_owner: another token holds it; a hold of yours is gone."""


class UpgradeNotSupported(LockServiceError):
    """409 upgrade_not_supported: a write hold asked for by a token holding a read hold."""


class LimitMismatch(LockServiceError):
    """409 limit_mismatch: the semaphore has another limit while anyone holds or waits."""

    @property
    def limit(self) -> Optional[int]:
        return self.details.get("limit")


class PermitsMismatch(LockServiceError):
    """409 permits_mismatch: a holder re-acquiring with another number of permits than it holds."""

    @property
    def permits(self) -> Optional[int]:
        return self.details.get("permits")


class LockNotFound(LockServiceError):
    """404 lock_not_found: nothing held there (expired, released, never held)."""


class SessionNotFound(LockServiceError):
    """404 session_not_found: the session lapsed, was closed, never existed, or is another key's."""


class TooMany(LockServiceError):
    """429: a limit of the replica or key (retry later); the subtypes name which."""

    @property
    def retry_after_ms(self) -> Optional[int]:
        return self.details.get("retryAfterMs")


class TooManyWaiters(TooMany):
    """429 too_many_waiters."""


class TooManyReaders(TooMany):
    """429 too_many_readers."""


class TooManyHolds(TooMany):
    """429 too_many_holds (a session's MAX_SESSION_HOLDS)."""


class TooManySessions(TooMany):
    """429 too_many_sessions."""


class TooManyWatchers(TooMany):
    """429 too_many_watchers."""


class TooManyStreams(TooMany):
    """429 too_many_streams (MAX_STREAMS_PER_KEY: this key's open watches and observes)."""


class RateLimited(TooMany):
    """429 rate_limited (this key's request rate, when the service limits it)."""


class BackendUnavailable(LockServiceError):
    """503 backend_unavailable (or shutting_down): nothing was decided; retry with backoff."""

    @property
    def retry_after_ms(self) -> Optional[int]:
        return self.details.get("retryAfterMs")

    @property
    def nodes(self) -> List[Dict[str, Any]]:
        return list(self.details.get("nodes") or [])


class ShuttingDown(BackendUnavailable):
    """503 shutting_down: this replica is draining; retry on another."""


class Unauthorized(LockServiceError):
    """401 unauthorized: no valid API key."""


class Forbidden(LockServiceError):
    """403 forbidden: the key is outside the API key's prefixes, or an admin action without an admin key."""


class InvalidRequest(LockServiceError):
    """400 invalid_request: the service refused the request's form (``issues`` lists why)."""

    @property
    def issues(self) -> List[Dict[str, Any]]:
        return list(self.details.get("issues") or [])


class InvalidArgument(LockServiceError, ValueError):
    """A bad argument, refused before any request is sent; ``argument`` names it."""

    def __init__(self, argument: str, message: str) -> None:
        super().__init__(f"{argument}: {message}", code="invalid_argument")
        self.argument = argument


class TransportError(LockServiceError):
    """No answer from the service: the base of Unreachable and Timeout."""


class Unreachable(TransportError):
    """The service could not be reached, or the connection broke before an answer."""

    def __init__(self, message: str) -> None:
        super().__init__(message, code="unreachable")


class Timeout(TransportError):
    """No answer within the request's timeout (the request may have been applied)."""

    def __init__(self, message: str) -> None:
        super().__init__(message, code="timeout")


class LockLost(LockServiceError):
    """The hold was lost; ``reason`` is the service's (expired, released, force_released,
    session_lost) or the library's (not_held, validity_exhausted, max_hold)."""

    def __init__(self, reason: str, message: Optional[str] = None) -> None:
        super().__init__(message or f"the hold was lost: {reason}", code="lock_lost")
        self.reason = reason


_BY_CODE: Dict[str, Type[LockServiceError]] = {
    "lock_held": LockHeld,
    "lock_delayed": LockDelayed,
    "not_owner": NotOwner,
    "upgrade_not_supported": UpgradeNotSupported,
    "limit_mismatch": LimitMismatch,
    "permits_mismatch": PermitsMismatch,
    "lock_not_found": LockNotFound,
    "session_not_found": SessionNotFound,
    "too_many_waiters": TooManyWaiters,
    "too_many_readers": TooManyReaders,
    "too_many_holds": TooManyHolds,
    "too_many_sessions": TooManySessions,
    "too_many_watchers": TooManyWatchers,
    "too_many_streams": TooManyStreams,
    "rate_limited": RateLimited,
    "backend_unavailable": BackendUnavailable,
    "shutting_down": ShuttingDown,
    "unauthorized": Unauthorized,
    "forbidden": Forbidden,
    "invalid_request": InvalidRequest,
}


def error_from_answer(
    status: int, body: Any, request_id: Optional[str], retry_after_s: Optional[str]
) -> LockServiceError:
    """The typed error for an error answer; an unknown code is the base type with that code."""
    if not isinstance(body, dict) or not isinstance(body.get("error"), str):
        return LockServiceError(
            f"the service answered HTTP {status}", code=f"http_{status}", status=status, request_id=request_id
        )
    details = {k: v for k, v in body.items() if k not in ("error", "message")}
    if "retryAfterMs" not in details and retry_after_s is not None and retry_after_s.isdigit():
        details["retryAfterMs"] = int(retry_after_s) * 1000
    code = body["error"]
    cls = _BY_CODE.get(code, LockServiceError)
    return cls(str(body.get("message", code)), code=code, status=status, request_id=request_id, details=details)
