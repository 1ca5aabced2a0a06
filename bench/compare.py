#!/usr/bin/env python3
"""Compare one run of workloads.mjs (agentfs-sdk) with agentfs-bench (Go).

    compare.py --ref REF.txt --engine ENGINE.txt [--engine-full FULL.txt]

Each file is the raw output of one side: human lines, one or more
"JSON {...}" lines (medians are taken when there are several) and, when the
run was wrapped in /usr/bin/time -v, its "Maximum resident set size". Prints
a Markdown report on stdout. Any side may be missing.
"""
import argparse
import json
import re
import statistics
import sys

MiB = 1024 * 1024


def load(path):
    if not path:
        return None
    try:
        with open(path, encoding="utf-8") as f:
            txt = f.read()
    except OSError as e:
        print(f"compare.py: {e}", file=sys.stderr)
        return None
    runs = [json.loads(l[5:]) for l in txt.splitlines() if l.startswith("JSON ")]
    if not runs:
        print(f"compare.py: no JSON line in {path} (did the run fail?)", file=sys.stderr)
        return None
    peaks = [int(m) for m in re.findall(r"Maximum resident set size \(kbytes\): (\d+)", txt)]
    return {"runs": runs, "peak_kb": peaks, "path": path}


def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def op(side, name, field):
    if not side:
        return None
    return med([r["ops"].get(name, {}).get(field) for r in side["runs"]])


def size(side, label, field):
    if not side:
        return None
    return med([r.get("sizes", {}).get(label, {}).get(field) for r in side["runs"]])


def num(x, d=1):
    if x is None:
        return "-"
    if abs(x) >= 1000:
        return f"{x:,.0f}"
    return f"{x:,.{d}f}"


def msfmt(x):
    if x is None:
        return "-"
    if x >= 1000:
        return f"{x / 1000:.2f} s"
    if x >= 10:
        return f"{x:.1f} ms"
    return f"{x:.3f} ms"


def ratio(ref, go, higher_better=True):
    if ref is None or go is None or ref == 0 or go == 0:
        return "-"
    r = go / ref if higher_better else ref / go
    return f"{r:,.1f}x" if r >= 10 else f"{r:.2f}x"


def keys(sides, field):
    out = []
    for s in sides:
        if s:
            for k in s["runs"][0].get(field, {}):
                if k not in out:
                    out.append(k)
    return out


def metric(name, side):
    """The figure a row shows: MiB/s for one-shot big transfers, time per
    call for the repeated (x5) queries, else ops/s."""
    if "(x5)" in name:
        total, n = op(side, name, "total_ms"), op(side, name, "n")
        return (total / n if total is not None and n else None), "ms/call"
    if op(side, name, "n") == 1 and op(side, name, "mib_s") is not None:
        return op(side, name, "mib_s"), "MiB/s"
    return op(side, name, "ops_s"), "ops/s"


def show(v, unit):
    if v is None:
        return "-"
    if unit == "ms/call":
        return msfmt(v) + " per call"
    return f"{num(v)} {unit}"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ref")
    ap.add_argument("--engine")
    ap.add_argument("--engine-full")
    ap.add_argument("--ref-label", default="agentfs-sdk")
    a = ap.parse_args()
    ref, eng, full = load(a.ref), load(a.engine), load(a.engine_full)
    RL, GL = a.ref_label, "agentfs-go (engine in-process)"
    out = []
    p = out.append

    def env(s, k):
        return s["runs"][0].get("env", {}).get(k, "?") if s else "-"

    p(f"# AgentFS benchmark: {RL} vs agentfs-go")
    p("")
    p(f"- reference: {RL} on node {env(ref, 'node')}" + ("" if ref else " (not run)"))
    p(f"- agentfs-go: core in-process, {env(eng, 'go')}, {env(eng, 'engine')}, durability {env(eng, 'durability')}")
    p(f"- cpu: {env(eng if eng else ref, 'cpu')}; runs per side: ref {len(ref['runs']) if ref else 0}, go {len(eng['runs']) if eng else 0} (medians if more than one)")
    p("- ratio: how many times faster agentfs-go is (above 1 = faster), from throughput or time per call")
    p("")
    p(f"| workload | {RL} | {GL} | ratio |")
    p("|---|---:|---:|---:|")
    names = [k for k in keys([ref, eng], "ops") if not k.startswith("disk:")]
    for k in names:
        rv, unit = metric(k, ref)
        gv, unit2 = metric(k, eng)
        unit = unit if rv is not None else unit2
        p(f"| {k} | {show(rv, unit)} | {show(gv, unit)} | {ratio(rv, gv, unit != 'ms/call')} |")
    if full:
        for k in keys([full], "ops"):
            if k.startswith("a.") or k == "mkdir":
                rv, unit = metric(k, ref)
                gv, _ = metric(k, full)
                p(f"| {k} (agentfs-go durability=full) | {show(rv, 'ops/s')} | {show(gv, 'ops/s')} | {ratio(rv, gv)} |")

    p("")
    p("Latency per operation (p50 / p99):")
    p("")
    p(f"| workload | {RL} p50 | agentfs-go p50 | {RL} p99 | agentfs-go p99 |")
    p("|---|---:|---:|---:|---:|")
    for k in names:
        p(f"| {k} | {msfmt(op(ref, k, 'p50_ms'))} | {msfmt(op(eng, k, 'p50_ms'))} | {msfmt(op(ref, k, 'p99_ms'))} | {msfmt(op(eng, k, 'p99_ms'))} |")
    if full:
        for k in keys([full], "ops"):
            if k.startswith("a.") or k == "mkdir":
                p(f"| {k} (go durability=full) | {msfmt(op(ref, k, 'p50_ms'))} | {msfmt(op(full, k, 'p50_ms'))} | {msfmt(op(ref, k, 'p99_ms'))} | {msfmt(op(full, k, 'p99_ms'))} |")

    p("")
    p("Database files (db + -wal, MiB) after each phase; \"checkpoint\" is PRAGMA wal_checkpoint(TRUNCATE) on both sides:")
    p("")
    p(f"| after | {RL} db / wal / total | agentfs-go db / wal / total | total ratio ({RL} / go) |")
    p("|---|---:|---:|---:|")

    def trio(s, k):
        v = [size(s, k, f) for f in ("db", "wal", "total")]
        return "-" if v[2] is None else " / ".join(f"{x / MiB:.2f}" for x in v)

    for k in keys([ref, eng], "sizes"):
        rt, gt = size(ref, k, "total"), size(eng, k, "total")
        p(f"| {k} | {trio(ref, k)} | {trio(eng, k)} | {ratio(gt, rt)} |")

    p("")
    p("Cold start (process start to first completed writeFile):")
    p("")

    def cold(s, field, key="cold"):
        if not s:
            return None, None, None
        xs = [c.get(field) for r in s["runs"] for c in r.get(key, []) if c.get(field) is not None]
        return (statistics.median(xs), min(xs), max(xs)) if xs else (None, None, None)

    def coldfmt(t):
        return "-" if t[0] is None else f"{t[0]:.1f} ms (min {t[1]:.1f}, max {t[2]:.1f})"

    p("| process | spawn to write done | in-process | spawn to exit |")
    p("|---|---:|---:|---:|")
    p(f"| {RL}: node process, AgentFS.open + writeFile | {coldfmt(cold(ref, 'spawn_to_write_ms'))} | {coldfmt(cold(ref, 'inproc_ms'))} | {coldfmt(cold(ref, 'exit_ms'))} |")
    cli_err = eng["runs"][0].get("cold_error") if eng else None
    if cli_err:
        p(f"| agentfs-go: `agentfs fs DB write /hello.txt hello` (full CLI process) | not measured: {cli_err.splitlines()[0][:160]} | - | - |")
    else:
        p(f"| agentfs-go: `agentfs fs DB write /hello.txt hello` (full CLI process; exit is the first moment the write is known done) | {coldfmt(cold(eng, 'spawn_to_write_ms'))} | - | {coldfmt(cold(eng, 'exit_ms'))} |")
    p(f"| agentfs-go: minimal engine process (agentfs-bench -cold-child), core.Open + WriteFile | {coldfmt(cold(eng, 'spawn_to_write_ms', 'cold_engine'))} | {coldfmt(cold(eng, 'inproc_ms', 'cold_engine'))} | {coldfmt(cold(eng, 'exit_ms', 'cold_engine'))} |")

    p("")
    p("Peak RSS:")
    p("")

    def peak(s):
        return "-" if not s or not s["peak_kb"] else f"{med(s['peak_kb']) / 1024:.0f} MiB"

    p(f"| measure | {RL} | agentfs-go |")
    p("|---|---:|---:|")
    p(f"| whole run (/usr/bin/time -v: the largest of the process and its cold-start children) | {peak(ref)} | {peak(eng)} |")
    for k in keys([ref, eng], "rss_kb"):
        def rk(s):
            v = med([r.get("rss_kb", {}).get(k) for r in s["runs"]]) if s else None
            return "-" if v is None else f"{v / 1024:.0f} MiB"
        p(f"| in-process peak after phase {k} | {rk(ref)} | {rk(eng)} |")
    if full:
        p(f"| whole run, durability=full small-file phase only | - | {peak(full)} |")

    disk = [k for k in keys([ref, eng], "ops") if k.startswith("disk:")]
    if disk:
        p("")
        p("Disk baseline measured by each run (same code on both sides; a large difference means the machine, not the engine, changed):")
        p("")
        p(f"| disk | during {RL} run | during agentfs-go run |")
        p("|---|---:|---:|")
        for k in disk:
            p(f"| {k} | {num(op(ref, k, 'ops_s'))} ops/s | {num(op(eng, k, 'ops_s'))} ops/s |")
    print("\n".join(out))


if __name__ == "__main__":
    main()
