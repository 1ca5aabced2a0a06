"""Small-file workloads of shared/bench/workloads.mjs from Python, and the
stdio round trip of an empty call.

    sdk-python/.venv/bin/python sdk-python/bench/bench.py [--n 10000] [--transport stdio|http]

Uses AGENTFS_BIN (else the bundled engine or PATH). Every read is checked.
Prints a Markdown table: throughput of one caller, p50/p99 per call, and
throughput with 8 threads (calls in flight at once over one connection).
"""

from __future__ import annotations

import argparse
import os
import random
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

import agentfs

KiB = 1024


def timed(rows: list[tuple[str, ...]], name: str, items: Sequence[Any], fn: Callable[[Any], None]) -> None:
    lat = []
    t0 = time.perf_counter()
    for it in items:
        s = time.perf_counter_ns()
        fn(it)
        lat.append(time.perf_counter_ns() - s)
    total = time.perf_counter() - t0
    lat.sort()
    p50 = lat[len(lat) // 2] / 1e3
    p99 = lat[min(len(lat) - 1, int(len(lat) * 0.99))] / 1e3
    rows.append((name, f"{len(items) / total:,.0f} ops/s", f"{p50:,.1f} µs", f"{p99:,.1f} µs", ""))


def threaded(rows: list[tuple[str, ...]], name: str, items: Sequence[Any], fn: Callable[[Any], None], n: int = 8) -> None:
    chunks = [items[i::n] for i in range(n)]
    errors: list[BaseException] = []

    def run(chunk: Sequence[Any]) -> None:
        try:
            for it in chunk:
                fn(it)
        except BaseException as e:  # noqa: BLE001
            errors.append(e)

    threads = [threading.Thread(target=run, args=(c,)) for c in chunks]
    t0 = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    total = time.perf_counter() - t0
    if errors:
        raise errors[0]
    for i, r in enumerate(rows):
        if r[0] == name:
            rows[i] = (*r[:4], f"{len(items) / total:,.0f} ops/s")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=10_000)
    ap.add_argument("--transport", choices=["stdio", "http"], default="stdio")
    args = ap.parse_args()
    n = args.n
    rng = random.Random(42)
    tmp = tempfile.mkdtemp(prefix="agentfs-pybench-")
    srv = None
    if args.transport == "http":
        engine = agentfs.find_engine()
        srv = subprocess.Popen(
            [engine, "serve", "http", "--listen", "127.0.0.1:0", "--data", tmp, "--quiet"],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        assert srv.stdout is not None
        url = ""
        for line in srv.stdout:
            m = re.search(r"at (http://127\.0\.0\.1:\d+)", line)
            if m:
                url = m.group(1)
                break
        agent = agentfs.AgentFS.open(url=url, id="bench")
    else:
        agent = agentfs.AgentFS.open(path=os.path.join(tmp, "bench.db"))

    rows: list[tuple[str, ...]] = []
    fs, kv, tools = agent.fs, agent.kv, agent.tools
    data = [rng.randbytes(KiB) for _ in range(n)]

    def fpath(i: int) -> str:
        return f"/d{i % 100}/f{i}.bin"

    for d in range(100):
        fs.mkdir(f"/d{d}")

    if isinstance(agent.transport, agentfs.StdioTransport):
        t = agent.transport
        timed(rows, "empty call: Ping/Pong (transport only)", range(n), lambda _: t.ping())
    timed(rows, "smallest call: fs.access(\"/\")", range(n), lambda _: fs.access("/"))
    timed(rows, "a.write_file 1 KiB", range(n), lambda i: fs.write_file(fpath(i), data[i]))
    order = [rng.randrange(n) for _ in range(n)]

    def read(i: int) -> None:
        if fs.read_bytes(fpath(i)) != data[i]:
            raise AssertionError(f"read_file {fpath(i)}: wrong content")

    timed(rows, "b.read_file 1 KiB random", order, read)
    timed(rows, "c.stat random", order, lambda i: fs.stat(fpath(i)))
    timed(rows, "e.kv.set", range(n), lambda i: kv.set(f"key:{i}", {"i": i, "s": "x" * 20}))

    def kget(i: int) -> None:
        if kv.get(f"key:{i}") != {"i": i, "s": "x" * 20}:
            raise AssertionError("kv.get: wrong value")

    timed(rows, "e.kv.get random", order, kget)
    now = int(time.time())
    timed(
        rows,
        "f.tools.record",
        range(n),
        lambda i: tools.record(f"tool{i % 10}", now - 5, now, {"i": i}, {"ok": True}),
    )

    # The same calls from 8 threads at once over the one connection.
    if isinstance(agent.transport, agentfs.StdioTransport):
        threaded(rows, "empty call: Ping/Pong (transport only)", range(n), lambda _: t.ping())
    threaded(rows, "smallest call: fs.access(\"/\")", range(n), lambda _: fs.access("/"))
    threaded(rows, "a.write_file 1 KiB", range(n), lambda i: fs.write_file(fpath(i), data[i]))
    threaded(rows, "b.read_file 1 KiB random", order, read)
    threaded(rows, "c.stat random", order, lambda i: fs.stat(fpath(i)))
    threaded(rows, "e.kv.set", range(n), lambda i: kv.set(f"key:{i}", {"i": i, "s": "x" * 20}))
    threaded(rows, "e.kv.get random", order, kget)
    threaded(
        rows,
        "f.tools.record",
        range(n),
        lambda i: tools.record(f"tool{i % 10}", now - 5, now, {"i": i}, {"ok": True}),
    )

    agent.close()
    if srv is not None:
        srv.terminate()
        srv.wait()

    import google.protobuf

    print(
        f"- python {sys.version.split()[0]}, protobuf {google.protobuf.__version__} "
        f"({_backend()}), transport {args.transport}, n={n}, cpu count {os.cpu_count()}"
    )
    print()
    print("| workload | 1 caller | p50 | p99 | 8 threads |")
    print("|---|---:|---:|---:|---:|")
    for r in rows:
        print("| " + " | ".join(r) + " |")


def _backend() -> str:
    from google.protobuf.internal import api_implementation

    return api_implementation.Type()


if __name__ == "__main__":
    main()
