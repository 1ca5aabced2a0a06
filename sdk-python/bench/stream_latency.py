"""Latency of a process's output over `agentfs serve http`: long-poll
(StartProcess + ReadProcess, as before StreamProcess) beside the Connect
server stream (StreamProcess), interleaved in one run.

    sdk-python/.venv/bin/python sdk-python/bench/stream_latency.py [--n 200]

Two measures, per mode, in microseconds (p50, p90):
- first byte: spawn("echo x") until read() returns the first output;
- turnaround: write() a line to a running `while read` loop until read()
  returns its echo (the interactive case: output of a process already
  running).

Uses AGENTFS_BIN (else the bundled engine or PATH). Prints a Markdown
table with the load average, since numbers on a shared machine move.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable

import agentfs
from agentfs import _sync


def serve(engine: str, data: str) -> tuple[subprocess.Popen[str], str]:
    env = dict(os.environ)
    env.pop("AGENTFS_TOKEN", None)
    proc = subprocess.Popen(
        [engine, "serve", "http", "--listen", "127.0.0.1:0", "--data", data, "--quiet"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env, text=True,
    )
    assert proc.stdout is not None
    for line in proc.stdout:
        m = re.search(r"at (http://127\.0\.0\.1:\d+)", line)
        if m:
            threading.Thread(target=proc.stdout.read, daemon=True).start()
            return proc, m.group(1)
    raise SystemExit("agentfs serve http did not start")


def long_poll(on: bool) -> None:
    """Makes spawn long-poll (the SDK's path before StreamProcess over
    HTTP, still the detached one's) or stream again."""
    _sync.can_stream = (lambda t, d: False) if on else _can_stream  # type: ignore[attr-defined]


_can_stream = _sync.can_stream


def first_byte(a: agentfs.AgentFS) -> int:
    t0 = time.perf_counter_ns()
    p = a.spawn("echo x")
    chunks, _ = p.read()
    while not chunks:
        chunks, _ = p.read()
    t = time.perf_counter_ns() - t0
    p.wait()
    return t


def turnaround(p: agentfs.Process) -> int:
    t0 = time.perf_counter_ns()
    p.write("x\n")
    chunks, _ = p.read()
    while not chunks:
        chunks, _ = p.read()
    return time.perf_counter_ns() - t0


def pct(v: list[int], q: float) -> float:
    v = sorted(v)
    return v[min(len(v) - 1, int(len(v) * q))] / 1e3


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=200)
    args = ap.parse_args()
    engine = os.environ.get("AGENTFS_BIN") or shutil.which("agentfs") or "agentfs"
    data = tempfile.mkdtemp(prefix="agentfs-stream-lat-")
    srv, url = serve(engine, data)
    try:
        with agentfs.AgentFS.open(url=url, id="lat") as a:
            res: dict[str, dict[str, list[int]]] = {m: {"first": [], "turn": []} for m in ("long-poll", "stream")}
            loops: dict[str, agentfs.Process] = {}
            for mode in res:
                long_poll(mode == "long-poll")
                loops[mode] = a.spawn("while read -r l; do echo $l; done", keep_stdin_open=True)
                for _ in range(5):  # warm up
                    first_byte(a)
                    turnaround(loops[mode])
            for _ in range(args.n):
                for mode in res:  # interleaved: both see the same load
                    long_poll(mode == "long-poll")
                    res[mode]["first"].append(first_byte(a))
                    res[mode]["turn"].append(turnaround(loops[mode]))
            long_poll(False)
            for p in loops.values():
                p.close_stdin()
                p.wait()
        load = os.getloadavg()
        print(f"agentfs serve http on loopback, n={args.n} each, load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}\n")
        print("| measure | long-poll p50 µs | long-poll p90 µs | stream p50 µs | stream p90 µs | p50 ratio |")
        print("|---|---:|---:|---:|---:|---:|")
        for key, name in (("first", "spawn to first byte"), ("turn", "write to echoed output")):
            lp, st = res["long-poll"][key], res["stream"][key]
            print(
                f"| {name} | {pct(lp, .5):.0f} | {pct(lp, .9):.0f} | {pct(st, .5):.0f} | {pct(st, .9):.0f} "
                f"| {statistics.median(lp) / statistics.median(st):.2f}x |"
            )
    finally:
        srv.terminate()
        srv.wait()
        shutil.rmtree(data, ignore_errors=True)


if __name__ == "__main__":
    main()
