"""Counts attack probes from `go test -json` output on stdin.

A probe is a leaf test: a TestAttack_* test without subtests, or each
subtest of one; a fuzz target's seed inputs count as one probe per
target. The area is the word after "TestAttack_" (or the fuzz target's
name). Prints a markdown table: area, probes tried, held (passed),
failed, skipped. Exits 1 when any probe failed.
"""
import json
import sys
from collections import defaultdict

results = {}  # (package, test) -> action
for line in sys.stdin:
    line = line.strip()
    if not line.startswith("{"):
        continue
    ev = json.loads(line)
    t = ev.get("Test")
    if t and ev.get("Action") in ("pass", "fail", "skip"):
        results[(ev["Package"], t)] = ev["Action"]

names = set(results)
leaves = [k for k in names if not any(o[0] == k[0] and o[1].startswith(k[1] + "/") for o in names)]

def area(test):
    top = test.split("/")[0]
    if top.startswith("TestAttack_"):
        return top[len("TestAttack_"):].split("_")[0]
    return "fuzz seeds"

rows = defaultdict(lambda: [0, 0, 0, 0])
for pkg, t in leaves:
    if not (t.startswith("TestAttack_") or t.startswith("Fuzz")):
        continue
    r = rows[area(t)]
    r[0] += 1
    r[{"pass": 1, "fail": 2, "skip": 3}[results[(pkg, t)]]] += 1

print("| area | probes tried | held | failed | skipped |")
print("|---|---:|---:|---:|---:|")
tot = [0, 0, 0, 0]
for a in sorted(rows):
    r = rows[a]
    tot = [x + y for x, y in zip(tot, r)]
    print(f"| {a} | {r[0]} | {r[1]} | {r[2]} | {r[3]} |")
print(f"| **total** | **{tot[0]}** | **{tot[1]}** | **{tot[2]}** | **{tot[3]}** |")
failed = sorted(f"{p} {t}" for p, t in leaves if results[(p, t)] == "fail")
if failed:
    print("\nFailed probes:\n" + "\n".join("- " + f for f in failed))
    sys.exit(1)
