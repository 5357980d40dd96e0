"""The README's cache example: the greeter with the react agent, ``--cache``, against a fake model with 1 s latency.

Each round runs the greeter twice with a fresh cache directory: the first run calls the model (7 calls) and
stores the replies, the second is answered from the cache (0 requests). Prints the median wall time of
each over ROUNDS rounds, after one untimed warm-up round, and their ratio. The claim it checks: a cached
re-run takes a fraction of the original's time (what the tests check is that it makes no request and
costs nothing: ``tests/test_model_cache_e2e.py``).

    hatch run hatch-test.all:python bench/bench_model_cache.py
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from agentrig.testing.fake_openai import FakeOpenAIServer
from agentrig.testing.greeter_retries import greeter_reply

REPO = Path(__file__).resolve().parents[1]
LATENCY = 1.0
ROUNDS = 3


def main() -> int:
    reply = greeter_reply(REPO)
    walls: dict[str, list[float]] = {"original": [], "cached": []}
    requests: dict[str, int] = {}
    agentrig = str(Path(sys.executable).with_name("agentrig"))
    with FakeOpenAIServer() as server, tempfile.TemporaryDirectory() as scratch:
        server.respond_with(lambda request: reply(request).model_copy(update={"delay": LATENCY}))
        env: dict[str, Any] = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "AGENTRIG_"))}
        env.update(OPENAI_BASE_URL=server.base_url, OPENAI_API_KEY="sk-bench-not-a-secret")
        for round_ in range(ROUNDS + 1):
            cache = Path(scratch) / f"cache{round_}"
            for kind in ("original", "cached"):
                before = len(server.model_requests)
                start = time.perf_counter()
                subprocess.run(
                    [agentrig, "run", "examples/greeter", "--agent", "react", "--model", "openai/gpt-4o-mini",
                     f"--cache={cache}", "--output", str(Path(scratch) / f"{kind}{round_}"), "-q"],
                    cwd=REPO, env=env, check=True, capture_output=True,
                )
                wall = time.perf_counter() - start
                requests[kind] = len(server.model_requests) - before
                if round_:  # round 0 warms the bytecode and page caches
                    walls[kind].append(wall)
    original, cached = (statistics.median(walls[k]) for k in ("original", "cached"))
    print(f"greeter, react, {requests['original']} model calls of {LATENCY:.1f} s; the cached run made {requests['cached']} requests")
    for kind in ("original", "cached"):
        print(f"{kind:>8}: median {statistics.median(walls[kind]):.2f} s  (runs: {', '.join(f'{w:.2f}' for w in walls[kind])})")
    print(f"cached / original: {cached / original:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
