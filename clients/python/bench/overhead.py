"""The library's overhead: acquire+release cycles through lock_service against the same through raw http.client.

    python3 clients/python/bench/overhead.py [--duration S] [--concurrency C] [--url URL --api-key KEY]

Each of C threads loops acquire+release on a key of its own (token chosen by the client), in alternating rounds of
the library and of raw http.client (one keep-alive connection per thread; the library's pool keeps as many).
Without --url it starts the conformance environment (node, from the repository root) and uses its service.
Prints one JSON line: {"language": "python", "library": cycles/s, "raw": cycles/s, "ratio": library/raw}.
"""

from __future__ import annotations

import argparse
import http.client
import json
import secrets
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Callable, Dict, List, Optional
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "clients/python/src"))

from lock_service import Client  # noqa: E402


def library_cycle(client: Client, key: str) -> Callable[[], None]:
    def cycle() -> None:
        grant = client.locks.acquire(key, ttl_ms=10_000)
        client.locks.release(key, grant.token)

    return cycle


def raw_cycle(url: str, api_key: Optional[str], key: str) -> Callable[[], None]:
    parts = urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=10)
    auth = {"Authorization": f"Bearer {api_key}"} if api_key else {}

    def cycle() -> None:
        token = secrets.token_urlsafe(24)
        body = json.dumps({"token": token, "ttlMs": 10_000})
        conn.request("POST", f"/locks/{key}", body=body, headers={**auth, "Content-Type": "application/json"})
        response = conn.getresponse()
        granted = json.loads(response.read())
        if response.status != 201:
            raise RuntimeError(f"acquire answered {response.status}: {granted}")
        conn.request("DELETE", f"/locks/{key}", headers={**auth, "Lock-Token": token})
        response = conn.getresponse()
        released = json.loads(response.read())
        if response.status != 200:
            raise RuntimeError(f"release answered {response.status}: {released}")

    return cycle


def round_of(cycles: List[Callable[[], None]], seconds: float) -> int:
    """Runs every thread's cycle in a loop for ``seconds``; the cycles done."""
    done = [0] * len(cycles)
    end = time.monotonic() + seconds

    def worker(i: int) -> None:
        while time.monotonic() < end:
            cycles[i]()
            done[i] += 1

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(len(cycles))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return sum(done)


def measure(url: str, api_key: Optional[str], duration: float, concurrency: int) -> Dict[str, object]:
    run = secrets.token_hex(3)
    client = Client(url, api_key=api_key)
    library = [library_cycle(client, f"bench-py-{run}-lib-{i}") for i in range(concurrency)]
    raw = [raw_cycle(url, api_key, f"bench-py-{run}-raw-{i}") for i in range(concurrency)]
    round_of(library, 0.2)  # warm up: connections open, code paths hot
    round_of(raw, 0.2)
    rounds = max(2, int(duration * 2))  # half-second rounds, alternating (the machine's load changes under both alike)
    counts = {"library": 0, "raw": 0}
    for r in range(rounds):
        for name, cycles in (
            (("library", library), ("raw", raw)) if r % 2 == 0 else (("raw", raw), ("library", library))
        ):
            counts[name] += round_of(cycles, duration / (2 * rounds))
    per_side = duration / 2
    lib, rw = counts["library"] / per_side, counts["raw"] / per_side
    return {"language": "python", "library": round(lib, 1), "raw": round(rw, 1), "ratio": round(lib / rw, 3)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--duration", type=float, default=10.0, help="seconds in all (half library, half raw)")
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument("--url", help="a running service (default: start the conformance environment)")
    parser.add_argument("--api-key")
    args = parser.parse_args()
    environment = None
    url, api_key = args.url, args.api_key
    if url is None:
        environment = subprocess.Popen(
            ["node", "--import", "tsx", "clients/conformance/environment.ts"],
            cwd=ROOT,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
        )
        assert environment.stdout is not None
        env = json.loads(environment.stdout.readline())
        url, api_key = env["service"], env["adminKey"]
    try:
        print(json.dumps(measure(url, api_key, args.duration, args.concurrency)))
    finally:
        if environment is not None:
            assert environment.stdin is not None
            environment.stdin.close()
            environment.wait(30)


if __name__ == "__main__":
    main()
