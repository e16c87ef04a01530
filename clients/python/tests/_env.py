"""What every test module shares: the library importable from src/, the conformance environment (started once per
run unless LOCK_SERVICE_CONFORMANCE holds its line), keys unique to the run, a per-test time limit."""

from __future__ import annotations

import atexit
import faulthandler
import json
import logging
import os
import secrets
import subprocess
import sys
import threading
import unittest
import urllib.request
from pathlib import Path
from typing import Any, Dict, List, Optional

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
sys.path.insert(0, str(HERE.parent / "src"))

from lock_service import Client  # noqa: E402
from lock_service._transport import Transport  # noqa: E402

RUN = secrets.token_hex(3)


class _Kept(logging.Handler):
    """The library's warnings (a renewal failed, a release failed on exit) kept for the tests, not printed."""

    def __init__(self) -> None:
        super().__init__()
        self.records: List[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


LOGGED = _Kept()
logging.getLogger("lock_service").addHandler(LOGGED)
logging.getLogger("lock_service").propagate = False
_lock = threading.Lock()
_env: Optional[Dict[str, Any]] = None
_process: Optional["subprocess.Popen[bytes]"] = None


def environment() -> Dict[str, Any]:
    global _env, _process
    with _lock:
        if _env is None:
            line = os.environ.get("LOCK_SERVICE_CONFORMANCE")
            if not line:
                _process = subprocess.Popen(
                    ["node", "--import", "tsx", "clients/conformance/environment.ts"],
                    cwd=ROOT,
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                )
                atexit.register(_stop)
                assert _process.stdout is not None
                line = _process.stdout.readline().decode()
                if not line:
                    raise RuntimeError("the conformance environment did not start (see its stderr)")
            _env = json.loads(line)
        return _env


def _stop() -> None:
    if _process is not None and _process.poll() is None:
        assert _process.stdin is not None
        _process.stdin.close()
        try:
            _process.wait(20)
        except subprocess.TimeoutExpired:
            _process.kill()


def control(action: str) -> Dict[str, Any]:
    request = urllib.request.Request(environment()["control"] + action, method="POST", data=b"")
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.loads(response.read())  # type: ignore[no-any-return]


def admin(url: Optional[str] = None, **options: Any) -> Client:
    env = environment()
    return Client(url or env["service"], api_key=env["adminKey"], **options)


def key(name: str) -> str:
    return f"py-{RUN}-{name}"


class Recorder:
    """Wraps a client's transport to record every request it sends (method, path, body)."""

    def __init__(self, client: Client) -> None:
        self.requests: List[Dict[str, Any]] = []
        transport: Transport = client._transport
        original = transport.request

        def request(method: str, path: str, **kwargs: Any) -> Any:
            self.requests.append({"method": method, "path": path, "body": kwargs.get("body")})
            return original(method, path, **kwargs)

        transport.request = request  # type: ignore[method-assign]

    def count(self, method: str) -> int:
        return sum(1 for r in self.requests if r["method"] == method)


class TestCase(unittest.TestCase):
    """A test that fails (the whole run stops with a traceback) when it runs longer than ``time_limit`` seconds."""

    time_limit = 20.0

    def setUp(self) -> None:
        faulthandler.dump_traceback_later(self.time_limit, exit=True)
        self.client = admin()

    def tearDown(self) -> None:
        faulthandler.cancel_dump_traceback_later()
        self.client.close()
