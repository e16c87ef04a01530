"""HTTP over http.client: a pool of keep-alive connections guarded by a lock, timeouts per request, typed transport errors."""

from __future__ import annotations

import http.client
import json
import socket
import ssl
import threading
import time
from dataclasses import dataclass
from typing import Any, Dict, List, Mapping, Optional, Tuple
from urllib.parse import urlencode, urlsplit

from .errors import Timeout, Unreachable

# A reused connection the server already closed fails at once with one of these.
_STALE = (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError, http.client.CannotSendRequest)
# The service closes a keep-alive connection idle for 72 s; one idle this long is not reused.
MAX_IDLE_S = 50.0


@dataclass
class Answer:
    status: int
    body: Any
    request_id: Optional[str]
    retry_after: Optional[str]


class Transport:
    def __init__(
        self, base_url: str, headers: Mapping[str, str], max_idle: int = 16, ssl_context: Optional[ssl.SSLContext] = None
    ) -> None:
        parts = urlsplit(base_url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"base_url must be http(s)://host[:port][/path], not {base_url!r}")
        self._https = parts.scheme == "https"
        if ssl_context is not None and not self._https:
            raise ValueError(f"TLS settings are only for an https:// base_url, not {base_url!r}")
        self._ssl_context = ssl_context
        self._host = parts.hostname
        self._port = parts.port or (443 if self._https else 80)
        self._prefix = parts.path.rstrip("/")
        self._headers = dict(headers)
        self._idle: List[Tuple[http.client.HTTPConnection, float]] = []
        self._lock = threading.Lock()
        self._max_idle = max_idle
        self._closed = False

    def connect(self, timeout_s: float) -> http.client.HTTPConnection:
        if self._https:
            return http.client.HTTPSConnection(self._host, self._port, timeout=timeout_s, context=self._ssl_context)
        return http.client.HTTPConnection(self._host, self._port, timeout=timeout_s)

    def _take(self) -> Tuple[http.client.HTTPConnection, bool]:
        stale: List[http.client.HTTPConnection] = []
        found: Optional[http.client.HTTPConnection] = None
        with self._lock:
            now = time.monotonic()
            while self._idle:
                conn, since = self._idle.pop()
                if now - since < MAX_IDLE_S:
                    found = conn
                    break
                stale.append(conn)
        for conn in stale:
            conn.close()
        return (found, True) if found is not None else (self.connect(10.0), False)

    def _give_back(self, conn: http.client.HTTPConnection) -> None:
        with self._lock:
            if not self._closed and len(self._idle) < self._max_idle:
                self._idle.append((conn, time.monotonic()))
                return
        conn.close()

    def __del__(self) -> None:
        if hasattr(self, "_lock"):  # not when __init__ refused the URL
            self.close()

    def close(self) -> None:
        with self._lock:
            self._closed = True
            idle, self._idle = self._idle, []
        for conn, _ in idle:
            conn.close()

    def path(self, path: str, query: Optional[Mapping[str, Any]] = None) -> str:
        q = {k: v for k, v in (query or {}).items() if v is not None}
        return self._prefix + path + ("?" + urlencode(q) if q else "")

    def headers(self, extra: Optional[Mapping[str, str]] = None, body: bool = False) -> Dict[str, str]:
        h = dict(self._headers)
        if body:
            h["Content-Type"] = "application/json"
        if extra:
            h.update(extra)
        return h

    def request(
        self,
        method: str,
        path: str,
        *,
        timeout_s: float,
        query: Optional[Mapping[str, Any]] = None,
        body: Optional[Mapping[str, Any]] = None,
        headers: Optional[Mapping[str, str]] = None,
        idempotent: bool = True,
        label: str = "",
    ) -> Answer:
        """One request on a pooled connection. An idempotent request whose reused connection turns out closed is sent
        once more on a fresh one (the server may close an idle connection just as it is reused)."""
        url = self.path(path, query)
        label = label or f"{method} request"
        data = json.dumps(body).encode() if body is not None else None
        all_headers = self.headers(headers, body is not None)
        for attempt in (0, 1):
            conn, reused = self._take() if attempt == 0 else (self.connect(timeout_s), False)
            try:
                conn.timeout = timeout_s
                if conn.sock is not None:
                    conn.sock.settimeout(timeout_s)
                conn.request(method, url, body=data, headers=all_headers)
                response = conn.getresponse()
                raw = response.read()
            except _STALE as err:
                conn.close()
                if reused and idempotent:
                    continue
                raise Unreachable(f"{label}: the connection broke before an answer ({type(err).__name__})") from None
            except socket.timeout:
                conn.close()
                raise Timeout(f"{label}: no answer within {timeout_s:.3g} s") from None
            except (OSError, http.client.HTTPException) as err:
                conn.close()
                raise Unreachable(f"{label}: {type(err).__name__}: {err}") from None
            if response.will_close:
                conn.close()
            else:
                self._give_back(conn)
            return Answer(
                response.status, _decode(raw), response.getheader("x-request-id"), response.getheader("retry-after")
            )
        raise AssertionError("unreachable")  # pragma: no cover


def _decode(raw: bytes) -> Any:
    if not raw:
        return None
    try:
        return json.loads(raw)
    except ValueError:
        return raw.decode("utf-8", "replace")
