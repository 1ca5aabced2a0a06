#!/usr/bin/env bash
# Sync benchmarks (one run each, loopback, agentfs serve sync), as a
# Markdown table: push and pull of 10,000 small files (plain, and with
# both local databases encrypted, aegis256), bootstrap of a 100 MiB
# agent, and the bytes on the wire when 4 KiB of a 100 MiB file change.
# A partial bootstrap (1 MiB prefix) of the 100 MiB agent, and reading
# its file on demand after it.
# Usage: bench/sync.sh [AGENTFS_BIN]   (default bin/agentfs)
set -euo pipefail
A=$(realpath "${1:-bin/agentfs}")
# With RESULTS (bench/report.sh), the table is saved there as sync.md too.
MD=/dev/null
if [[ -n ${RESULTS:-} ]]; then MD=$(realpath "$RESULTS")/sync.md; : >"$MD"; fi
W=$(mktemp -d)
trap 'kill $SRV 2>/dev/null || true; rm -rf "$W"' EXIT
cd "$W"
"$A" serve sync --data srv --listen 127.0.0.1:0 --quiet 2> srv.log &
SRV=$!
for _ in $(seq 50); do grep -q 'at http' srv.log 2>/dev/null && break; sleep 0.1; done
URL=http://$(sed -n 's|.*at http://\([^/]*\)/ID.*|\1|p' srv.log)
now() { date +%s.%N; }
row() { echo "$1" | tee -a "$MD"; }
secs() { echo "$2 - $1" | bc; }
stat_field() { "$A" sync "$1" stats | sed -n "s/.*\"$2\":\([0-9]*\).*/\1/p"; }

mkdir -p small && for i in $(seq 10000); do printf 'file %d\n' "$i" > "small/f$i.txt"; done
mkdir -p a b c
(cd a && "$A" init s --sync-remote-url "$URL/s" >/dev/null 2>&1 && "$A" fs s import ../small /small >/dev/null)
(cd b && "$A" init s --sync-remote-url "$URL/s" >/dev/null 2>&1)
t0=$(now); (cd a && "$A" sync s push >/dev/null 2>&1); t1=$(now)
(cd b && "$A" sync s pull >/dev/null 2>&1); t2=$(now)
row "| measure | result |"
row "|---|---|"
row "| push 10,000 small files | $(secs "$t0" "$t1") s |"
row "| pull 10,000 small files | $(secs "$t1" "$t2") s |"

# The same with both local databases encrypted (the base sealed too).
export AGENTFS_KEY=$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')
mkdir -p d e
(cd d && "$A" init s --sync-remote-url "$URL/se" >/dev/null 2>&1 && "$A" fs s import ../small /small >/dev/null)
(cd e && "$A" init s --sync-remote-url "$URL/se" >/dev/null 2>&1)
t0=$(now); (cd d && "$A" sync s push >/dev/null 2>&1); t1=$(now)
(cd e && "$A" sync s pull >/dev/null 2>&1); t2=$(now)
row "| push 10,000 small files, encrypted local (aegis256) | $(secs "$t0" "$t1") s |"
row "| pull 10,000 small files, encrypted local (aegis256) | $(secs "$t1" "$t2") s |"
unset AGENTFS_KEY

head -c $((100 << 20)) /dev/urandom > big.bin
(cd a && "$A" init big --sync-remote-url "$URL/big" >/dev/null 2>&1 && "$A" fs big write /big.bin < ../big.bin)
t0=$(now); (cd a && "$A" sync big push >/dev/null 2>&1); t1=$(now)
(cd c && "$A" init big --sync-remote-url "$URL/big" >/dev/null 2>&1); t2=$(now)
row "| push of a 100 MiB file | $(secs "$t0" "$t1") s |"
row "| bootstrap of the 100 MiB agent | $(secs "$t1" "$t2") s |"

# Partial: a 1 MiB prefix of the same agent, then the whole file read
# lazily (absent pages fetched in 128 KiB segments at the pinned revision).
mkdir -p p
t0=$(now); (cd p && "$A" init big --sync-remote-url "$URL/big" --sync-partial-bootstrap-length 1048576 >/dev/null 2>&1); t1=$(now)
r0=$(cd p && stat_field big network_received_bytes)
same=no
(cd p && "$A" fs big cat /big.bin) | cmp -s - big.bin && same=yes
t2=$(now); r1=$(cd p && stat_field big network_received_bytes)
row "| partial bootstrap (1 MiB prefix) of the 100 MiB agent | $(secs "$t0" "$t1") s, $r0 bytes received |"
row "| then reading the 100 MiB file, fetched on demand | $(secs "$t1" "$t2") s, $((r1 - r0)) bytes received (identical: $same) |"

head -c 4096 /dev/urandom | dd of=big.bin bs=4096 seek=12800 conv=notrunc 2>/dev/null
(cd a && "$A" fs big write /big.bin < ../big.bin)
s0=$(cd a && stat_field big network_sent_bytes); r0=$(cd c && stat_field big network_received_bytes)
(cd a && "$A" sync big push >/dev/null 2>&1)
(cd c && "$A" sync big pull >/dev/null 2>&1)
s1=$(cd a && stat_field big network_sent_bytes); r1=$(cd c && stat_field big network_received_bytes)
same=no
cmp -s <(cd c && "$A" fs big cat /big.bin) big.bin && same=yes
row "| 4 KiB of the 100 MiB file changed: bytes the push sent | $((s1 - s0)) |"
row "| the same: bytes the other client's pull received | $((r1 - r0)) (contents identical after: $same) |"
