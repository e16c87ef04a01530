"""A watch's Server-Sent Events stream on a connection of its own, closable from another thread."""

from __future__ import annotations

import http.client
import json
import socket
import threading
from typing import Any, Callable, Dict, Generic, Iterator, Optional, TypeVar

from .errors import LockServiceError, Timeout, Unreachable, error_from_answer

T = TypeVar("T")


class EventStream(Generic[T]):
    """Iterate to get each event: for a watch, a ``WatchEvent`` (``held`` at first and after each renewal the service
    sees, then ``lost``); for an election's observe, an ``ElectionEvent``. The iteration ends when the stream does
    (the hold was lost, or the wait ran out). ``close()`` from any thread ends it."""

    def __init__(
        self, conn: http.client.HTTPConnection, response: http.client.HTTPResponse, parse: Callable[[str, Any], T]
    ) -> None:
        self._conn = conn
        self._response = response
        self._parse = parse
        self._closed = threading.Event()

    def __enter__(self) -> "EventStream[T]":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self._closed.is_set():
            return
        self._closed.set()
        sock = self._conn.sock
        if sock is not None:
            try:
                sock.shutdown(socket.SHUT_RDWR)  # wakes a reader blocked in recv on another thread
            except OSError:
                pass
        self._conn.close()

    @property
    def closed(self) -> bool:
        return self._closed.is_set()

    def __iter__(self) -> Iterator[T]:
        event, data = "message", ""
        try:
            for text in self._lines():
                if text == "":
                    if data:
                        yield self._event(event, data)
                    event, data = "message", ""
                elif text.startswith("event:"):
                    event = text[6:].strip()
                elif text.startswith("data:"):
                    data += text[5:].strip()
        finally:
            self.close()

    def _lines(self) -> Iterator[str]:
        while not self._closed.is_set():
            try:
                line = self._response.readline()
            except Exception as err:  # noqa: BLE001 - http.client fails in odd ways when closed from another thread
                if self._closed.is_set():
                    return
                if isinstance(err, socket.timeout):
                    raise Timeout("the event stream went silent") from None
                raise Unreachable(f"the event stream broke: {type(err).__name__}") from None
            if not line:
                return
            yield line.decode("utf-8", "replace").rstrip("\r\n")

    def _event(self, event: str, data: str) -> T:
        body: Any = json.loads(data)
        if event == "error":
            raise error_from_answer(503, body, self._response.getheader("x-request-id"), None)
        return self._parse(event, body)


def open_stream(
    connect: Callable[[float], http.client.HTTPConnection],
    path: str,
    headers: Dict[str, str],
    timeout_s: float,
    label: str,
    parse: Callable[[str, Any], T],
) -> EventStream[T]:
    """GET ``path`` asking for an event stream; a refusal (the first look failed) raises its typed error."""
    conn = connect(timeout_s)
    try:
        conn.request("GET", path, headers={**headers, "Accept": "text/event-stream"})
        response = conn.getresponse()
    except socket.timeout:
        conn.close()
        raise Timeout(f"{label}: no answer within {timeout_s:.3g} s") from None
    except (OSError, http.client.HTTPException) as err:
        conn.close()
        raise Unreachable(f"{label}: {type(err).__name__}: {err}") from None
    if response.status != 200 or "text/event-stream" not in (response.getheader("content-type") or ""):
        raw = response.read()
        conn.close()
        try:
            body: Optional[Any] = json.loads(raw) if raw else None
        except ValueError:
            body = None
        refused: LockServiceError = error_from_answer(
            response.status, body, response.getheader("x-request-id"), response.getheader("retry-after")
        )
        raise refused
    return EventStream(conn, response, parse)
