#!/usr/bin/env bash
# Overlay benchmark (agentfs init --base + agentfs mount), one run:
#  1. rm -rf of a FILES-file base tree through the FUSE-mounted overlay vs
#     rm -rf of an identical native copy on the same disk (REPS each,
#     alternating; both trees warm in the page cache);
#  2. changing 4 KiB in the middle of a 1 GiB sparse base file through the
#     mount: growth of the database (stored chunk bytes and file size);
#  3. git status in a GIT_FILES-file repository: native, then through a
#     fresh overlay (first run copies the metadata up), then again.
#
#   ./bench/overlay.sh                 FILES=20000 REPS=3
#   FILES=2000 REPS=1 ./bench/overlay.sh   quick
#
# Needs /dev/fuse and root (or fusermount3), python3, dd.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
FILES=${FILES:-20000} REPS=${REPS:-3} GIT_FILES=${GIT_FILES:-5000}
WORK=$ROOT/bench/tmp/overlay-$(date +%Y%m%d-%H%M%S)
mkdir -p "$WORK" bench/bin
trap '[[ ${KEEP:-} == 1 ]] || rm -rf "$WORK"' EXIT
(cd cli && go build -o ../bench/bin/agentfs-overlay ./cmd/agentfs)
A=$ROOT/bench/bin/agentfs-overlay
cd "$WORK"
mkdir mnt

# A tree of FILES files (1-8 KiB) in directories of 100, 3 levels deep.
python3 - "$FILES" <<'PY'
import os, random, sys
n = int(sys.argv[1]); r = random.Random(1); pool = r.randbytes(1 << 16)
for i in range(n):
    d = os.path.join("tree.src", f"a{i // 2000:02d}", f"b{i // 100 % 20:02d}")
    os.makedirs(d, exist_ok=True)
    k = r.randint(1024, 8192); o = r.randrange(len(pool) - k)
    with open(os.path.join(d, f"f{i:05d}.txt"), "wb") as f:
        f.write(pool[o:o + k])
PY

# Both sides start warm (the trees were just copied): the numbers compare
# the cost of the removals, not of reading the disk.
drop() { sync; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.3f", b - a}'; }

echo "rm -rf of $FILES files (seconds):"
for rep in $(seq "$REPS"); do
	rm -rf base native .agentfs
	mkdir base && cp -a tree.src base/tree && cp -a tree.src native
	drop
	t0=$EPOCHREALTIME; rm -rf native; t1=$EPOCHREALTIME
	nat=$(secs "$t0" "$t1")
	"$A" init ov --base base >/dev/null 2>&1
	"$A" mount ov mnt >/dev/null
	drop
	t0=$EPOCHREALTIME; rm -rf mnt/tree; t1=$EPOCHREALTIME
	ovl=$(secs "$t0" "$t1")
	"$A" umount mnt
	left=$(find base/tree -type f | wc -l)
	wh=$("$A" query ov "SELECT COUNT(*) AS n FROM fs_whiteout" --format csv | tail -1)
	echo "  rep $rep: native $nat  overlay $ovl  ratio $(awk -v a="$ovl" -v b="$nat" 'BEGIN {printf "%.1f", a / b}')  (base files left: $left, whiteouts: $wh, db $(du -k .agentfs/ov.db | cut -f1) KiB)"
done

echo "4 KiB change in a 1 GiB sparse base file:"
rm -rf base .agentfs && mkdir base
truncate -s 1G base/big.bin
"$A" init big --base base >/dev/null 2>&1
"$A" mount big mnt >/dev/null
before=$(stat -c %s .agentfs/big.db)
t0=$EPOCHREALTIME
dd if=/dev/urandom of=mnt/big.bin bs=4096 count=1 seek=131000 conv=notrunc status=none
t1=$EPOCHREALTIME
sum=$(md5sum <mnt/big.bin | cut -d' ' -f1)
"$A" umount mnt
after=$(stat -c %s .agentfs/big.db)
stored=$("$A" query big "SELECT COUNT(*) || ' chunks, ' || SUM(length(data)) || ' bytes' AS s FROM fs_data" --format csv | tail -1)
echo "  dd took $(secs "$t0" "$t1") s; fs_data holds $stored; database file $before -> $after bytes (+$((after - before)))"
echo "  $("$A" diff big)   (md5 through the mount: $sum; base size $(stat -c %s base/big.bin), base blocks $(stat -c %b base/big.bin))"

echo "git status in a $GIT_FILES-file repository (seconds):"
rm -rf base .agentfs && mkdir base
python3 - "$GIT_FILES" <<'PY'
import os, sys
n = int(sys.argv[1])
for i in range(n):
    d = os.path.join("base", f"src{i // 500:02d}", f"m{i // 50 % 10}")
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, f"f{i:05d}.go"), "w") as f:
        f.write(f"package m // {i}\n" * 20)
PY
(cd base && git init -q . && git add -A && git -c user.name=b -c user.email=b@example.com commit -q -m base)
gs() { local t0=$EPOCHREALTIME; git -C "$1" status --porcelain >/dev/null; secs "$t0" "$EPOCHREALTIME"; }
nat=$(gs base); nat2=$(gs base)
"$A" init gitov --base base >/dev/null 2>&1
"$A" mount gitov mnt >/dev/null
first=$(gs mnt); second=$(gs mnt); third=$(gs mnt)
"$A" umount mnt
echo "  native $nat, $nat2; overlay first $first (copy-up), then $second, $third; db $(du -k .agentfs/gitov.db | cut -f1) KiB"
