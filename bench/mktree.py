#!/usr/bin/env python3
"""Writes a node_modules-like tree: FILES files totalling about MB
megabytes in nested package directories, sizes drawn from a log-normal
distribution (many small files, a long tail of large ones), contents
pseudo-random (incompressible), deterministic for a given seed.

    mktree.py DIR [--files 20000] [--mb 200] [--seed 1]
"""
import argparse
import os
import random


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dir")
    ap.add_argument("--files", type=int, default=20000)
    ap.add_argument("--mb", type=float, default=200)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    r = random.Random(a.seed)
    # Sizes: log-normal around 2 KiB (median) with a long tail, capped at
    # 4 MiB, then scaled so that the total is the requested size.
    sizes = [min(int(r.lognormvariate(7.6, 1.6)), 4 << 20) + 1 for _ in range(a.files)]
    scale = a.mb * 1e6 / sum(sizes)
    sizes = [max(1, int(s * scale)) for s in sizes]
    pool = r.randbytes(8 << 20)  # contents are slices of one random pool
    subdirs = ["", "lib", "dist", "src", "lib/util", "dist/esm", "test"]
    exts = [".js", ".js", ".js", ".d.ts", ".json", ".map", ".md"]
    i = 0
    pkg = 0
    while i < a.files:
        # A package: 2..40 files spread over a few subdirectories, some
        # packages nested in a node_modules of their own.
        base = os.path.join(a.dir, "node_modules", f"pkg{pkg:04d}")
        if pkg % 7 == 3:
            base = os.path.join(a.dir, "node_modules", f"pkg{pkg - 1:04d}", "node_modules", f"dep{pkg:04d}")
        n = min(r.randint(2, 40), a.files - i)
        for j in range(n):
            d = os.path.join(base, subdirs[r.randrange(len(subdirs))] if j else "")
            os.makedirs(d, exist_ok=True)
            name = "package.json" if j == 0 else f"f{j:03d}{exts[r.randrange(len(exts))]}"
            size = sizes[i]
            off = r.randrange(len(pool) - size + 1)
            data = pool[off:off + size]
            with open(os.path.join(d, name), "wb") as f:
                f.write(data)
            i += 1
        pkg += 1


if __name__ == "__main__":
    main()
