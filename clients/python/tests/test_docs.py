"""The Python examples of docs/clients/python.md run against the service (the watch example is only compiled: it
waits for a loss)."""

from __future__ import annotations

import contextlib
import io
import re
from typing import Any, Dict, List

from ._env import ROOT, TestCase, environment

DOC = ROOT / "docs/clients/python.md"


def python_blocks() -> List[str]:
    return re.findall(r"^```python\n(.*?)^```", DOC.read_text(), flags=re.S | re.M)


class DocExamples(TestCase):
    def test_the_examples_run(self) -> None:
        env = environment()
        blocks = python_blocks()
        self.assertGreaterEqual(len(blocks), 3)
        written: List[Any] = []
        namespace: Dict[str, Any] = {
            "batches": lambda: [1, 2, 3],
            "write": lambda batch, fence: written.append((batch, fence)),
        }
        for block in blocks:
            compile(block, str(DOC), "exec")
            if "watch_stream" in block:
                continue
            with contextlib.redirect_stdout(io.StringIO()):
                exec(compile(self._here(block, env), str(DOC), "exec"), namespace)
        self.assertEqual([b for b, _ in written], [1, 2, 3])
        self.assertEqual(len({f for _, f in written}), 1, "one fence for the whole block")

    @staticmethod
    def _here(block: str, env: Dict[str, Any]) -> str:
        return block.replace('"http://localhost:8080"', repr(env["service"])).replace(
            "api_key=None", f"api_key={env['adminKey']!r}"
        )
