"""The small-file workloads through the asyncio API of this SDK and of
Turso's agentfs-sdk 0.6.4 for Python, with the same code: only the import
differs (agentfs.aio vs agentfs_sdk; open, method names and arguments are
the same).

    python sdk-python/bench/compare_turso.py            # both, prints a table
    python compare_turso.py --sdk agentfs|turso --n N   # one side, prints JSON

The driver installs agentfs-sdk==0.6.4 into sdk-python/bench/.venv-turso
(pip, once) and runs this file there for the Turso side; this SDK's side runs
under the current interpreter (needs AGENTFS_BIN or the bundled engine).
Each side gets a fresh database in a temporary directory; reads are checked.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent


async def timed(out: dict[str, Any], name: str, items: Sequence[Any], fn: Callable[[Any], Awaitable[Any]]) -> None:
    lat = []
    t0 = time.perf_counter()
    for it in items:
        s = time.perf_counter_ns()
        await fn(it)
        lat.append(time.perf_counter_ns() - s)
    total = time.perf_counter() - t0
    lat.sort()
    out[name] = {
        "ops_s": len(items) / total,
        "p50_us": lat[len(lat) // 2] / 1e3,
        "p99_us": lat[min(len(lat) - 1, int(len(lat) * 0.99))] / 1e3,
    }


async def run(sdk: str, n: int) -> dict[str, Any]:
    if sdk == "turso":
        from agentfs_sdk import AgentFS, AgentFSOptions
    else:
        from agentfs.aio import AgentFS, AgentFSOptions  # type: ignore[assignment]

    rng = random.Random(42)
    data = [rng.randbytes(1024) for _ in range(n)]
    order = [rng.randrange(n) for _ in range(n)]
    out: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        agent = await AgentFS.open(AgentFSOptions(path=os.path.join(tmp, "bench.db")))
        await agent.fs.write_file("/hello.txt", "hello")
        out["open + first write_file (ms)"] = (time.perf_counter() - t0) * 1e3
        fs, kv, tools = agent.fs, agent.kv, agent.tools

        def fpath(i: int) -> str:
            return f"/d{i % 100}/f{i}.bin"

        for d in range(100):
            await fs.mkdir(f"/d{d}")
        await timed(out, "write_file 1 KiB", range(n), lambda i: fs.write_file(fpath(i), data[i]))

        async def read(i: int) -> None:
            if await fs.read_file(fpath(i), encoding=None) != data[i]:
                raise AssertionError("read_file: wrong content")

        await timed(out, "read_file 1 KiB random", order, read)
        await timed(out, "stat random", order, lambda i: fs.stat(fpath(i)))
        await timed(out, "kv.set", range(n), lambda i: kv.set(f"key:{i}", {"i": i}))

        async def kget(i: int) -> None:
            if await kv.get(f"key:{i}") != {"i": i}:
                raise AssertionError("kv.get: wrong value")

        await timed(out, "kv.get random", order, kget)
        now = int(time.time())
        await timed(out, "tools.record", range(n), lambda i: tools.record("t", now - 1, now, {"i": i}, {"ok": 1}))
        await agent.close()
    return out


def driver(n: int) -> None:
    venv = HERE / ".venv-turso"
    py = venv / "bin" / "python"
    if not py.exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run([str(py), "-m", "pip", "install", "-q", "agentfs-sdk==0.6.4"], check=True)
    turso = json.loads(subprocess.run([str(py), __file__, "--sdk", "turso", "--n", str(n)], check=True,
                                      capture_output=True, text=True).stdout)
    ours = json.loads(subprocess.run([sys.executable, __file__, "--sdk", "agentfs", "--n", str(n)], check=True,
                                     capture_output=True, text=True).stdout)
    print(f"- n={n}, python {sys.version.split()[0]}, one caller, sequential awaits")
    print()
    print("| workload | agentfs-sdk 0.6.4 (Python) | agentfs (this SDK, stdio) | ratio | p50 0.6.4 | p50 this |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, t in turso.items():
        o = ours[name]
        if isinstance(t, float):
            print(f"| {name} | {t:,.1f} ms | {o:,.1f} ms | {t / o:.1f}x | | |")
            continue
        print(
            f"| {name} | {t['ops_s']:,.0f} ops/s | {o['ops_s']:,.0f} ops/s | {o['ops_s'] / t['ops_s']:.1f}x "
            f"| {t['p50_us']:,.0f} µs | {o['p50_us']:,.0f} µs |"
        )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sdk", choices=["agentfs", "turso"])
    ap.add_argument("--n", type=int, default=5000)
    a = ap.parse_args()
    if a.sdk is None:
        driver(a.n)
    else:
        print(json.dumps(asyncio.run(run(a.sdk, a.n))))


if __name__ == "__main__":
    main()
