"""Argument checks made before any request, so a bad argument is an InvalidArgument naming it, not a 400 or a connection error."""

from __future__ import annotations

import re
from typing import Optional

from .errors import InvalidArgument

_KEY = re.compile(r"[A-Za-z0-9._:@=+-]{1,200}")
_TOKEN = re.compile(r"[A-Za-z0-9_-]{16,128}")
_SESSION = re.compile(r"s\.[A-Za-z0-9_-]{22}")
MIN_TTL_MS = 100


def key(value: object, argument: str = "key") -> str:
    if not isinstance(value, str) or not _KEY.fullmatch(value):
        raise InvalidArgument(argument, "must be 1-200 characters from A-Z a-z 0-9 . _ - : @ = +")
    return value


def token(value: object, argument: str = "token") -> str:
    if not isinstance(value, str) or not _TOKEN.fullmatch(value):
        raise InvalidArgument(argument, "must be 16-128 characters from A-Z a-z 0-9 _ -")
    return value


def session_id(value: object, argument: str = "session") -> str:
    if not isinstance(value, str) or not _SESSION.fullmatch(value):
        raise InvalidArgument(argument, "must be a session id from open_session (s. and 22 characters)")
    return value


def _integer(value: object, argument: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidArgument(argument, f"must be an integer, not {type(value).__name__}")
    return value


def ttl_ms(value: Optional[object], argument: str = "ttl_ms") -> Optional[int]:
    if value is None:
        return None
    if _integer(value, argument) < MIN_TTL_MS:
        raise InvalidArgument(argument, f"must be at least {MIN_TTL_MS} ms")
    return value  # type: ignore[return-value]


def wait_ms(value: Optional[object], argument: str = "wait_ms") -> Optional[int]:
    if value is None:
        return None
    if _integer(value, argument) < 0:
        raise InvalidArgument(argument, "must be 0 or more")
    return value  # type: ignore[return-value]


def positive(value: Optional[object], argument: str) -> Optional[int]:
    if value is None:
        return None
    if _integer(value, argument) < 1:
        raise InvalidArgument(argument, "must be at least 1")
    return value  # type: ignore[return-value]


MAX_FENCE = 2**53 - 1


def fence(value: object, argument: str = "fence") -> int:
    """A fence (or an election's term): an integer in 1 … 2^53 − 1, what the service hands out."""
    if not 1 <= _integer(value, argument) <= MAX_FENCE:
        raise InvalidArgument(argument, "must be an integer in 1 … 2^53 − 1")
    return value  # type: ignore[return-value]


def permits(value: Optional[object], limit: int) -> Optional[int]:
    checked = positive(value, "permits")
    if checked is not None and checked > limit:
        raise InvalidArgument("permits", f"must be at most the limit ({limit})")
    return checked


def owner(value: Optional[object]) -> Optional[str]:
    if value is None:
        return None
    if not isinstance(value, str) or not 1 <= len(value) <= 200 or not value.isprintable():
        raise InvalidArgument("owner", "must be 1-200 printable characters")
    return value
