"""Checks the distributions build-dists.sh wrote, as an index would serve
them: each wheel's tags agree with its WHEEL file and with the engine it
carries (machine by magic bytes and header; glibc symbol versions by
objdump, static by readelf), the engine is executable, the metadata is
complete, and the sdist carries the build hook but no engine.

    python check_dists.py DISTDIR VERSION
"""

from __future__ import annotations

import re
import struct
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from pathlib import Path

dist, version = Path(sys.argv[1]), sys.argv[2]
failures: list[str] = []


def check(ok: bool, what: str) -> None:
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        failures.append(what)


def machine(data: bytes) -> str:
    """The OS and CPU of an executable, from its header alone."""
    if data[:4] == b"\x7fELF":
        return "linux-" + {0x3E: "x86_64", 0xB7: "aarch64"}.get(struct.unpack_from("<H", data, 18)[0], "?")
    if data[:4] == b"\xcf\xfa\xed\xfe":  # Mach-O 64, little-endian
        return "macos-" + {0x01000007: "x86_64", 0x0100000C: "arm64"}.get(struct.unpack_from("<i", data, 4)[0], "?")
    if data[:2] == b"MZ":
        off = struct.unpack_from("<I", data, 0x3C)[0]
        if data[off : off + 4] == b"PE\0\0":
            return "windows-" + {0x8664: "amd64"}.get(struct.unpack_from("<H", data, off + 4)[0], "?")
    return "unknown"


wheels = sorted(dist.glob("*.whl"))
# platform part of the file name -> the executable the wheel must carry
expect = {
    r"manylinux_2_(\d+)_x86_64": "linux-x86_64",
    r"manylinux_2_17_x86_64\.manylinux2014_x86_64\.musllinux_1_1_x86_64": "linux-x86_64",
    r"manylinux_2_17_aarch64\.manylinux2014_aarch64\.musllinux_1_1_aarch64": "linux-aarch64",
    r"macosx_1[1-9]_0_arm64": "macos-arm64",
    r"macosx_1[0-9]_[0-9]+_x86_64": "macos-x86_64",
    r"win_amd64": "windows-amd64",
}
seen = set()
for whl in wheels:
    m = re.fullmatch(rf"agentfs-{re.escape(version)}-py3-none-(.+)\.whl", whl.name)
    check(m is not None, f"{whl.name}: name is agentfs-{version}-py3-none-PLATFORM.whl")
    if not m:
        continue
    plat = m.group(1)
    kind = next((k for k in expect if re.fullmatch(k, plat)), None)
    check(kind is not None, f"{whl.name}: platform {plat} is one of the expected ones")
    if kind is None:
        continue
    seen.add(kind)
    with zipfile.ZipFile(whl) as z:
        names = z.namelist()
        exe = "agentfs/_bin/agentfs.exe" if plat.startswith("win") else "agentfs/_bin/agentfs"
        check(exe in names, f"{whl.name}: carries {exe}")
        check([n for n in names if n.startswith("agentfs/_bin/")] == [exe], f"{whl.name}: and no other engine")
        if exe not in names:
            continue
        check((z.getinfo(exe).external_attr >> 16) & 0o111 != 0, f"{whl.name}: engine is executable")
        data = z.read(exe)
        check(machine(data) == expect[kind], f"{whl.name}: engine is {machine(data)}, want {expect[kind]}")
        wheel = z.read(f"agentfs-{version}.dist-info/WHEEL").decode()
        tags = sorted(l.split(": ", 1)[1] for l in wheel.splitlines() if l.startswith("Tag: "))
        check(tags == sorted(f"py3-none-{p}" for p in plat.split(".")), f"{whl.name}: WHEEL Tag lines {tags}")
        check("Root-Is-Purelib: false" in wheel, f"{whl.name}: not purelib")
        meta = z.read(f"agentfs-{version}.dist-info/METADATA").decode()
        for line in ("License-Expression: MIT", "Requires-Dist: protobuf", "Provides-Extra: fsspec"):
            check(line in meta, f"{whl.name}: METADATA has {line!r}")
        check("agentfs/py.typed" in names and "agentfs/v1/filesystem_pb2.py" in names, f"{whl.name}: package files")
        if plat.startswith(("manylinux", "musllinux")):
            with tempfile.NamedTemporaryFile() as t:
                t.write(data)
                t.flush()
                interp = "INTERP" in subprocess.run(["readelf", "-lW", t.name], capture_output=True, text=True, check=True).stdout
                if "musllinux" in plat:
                    check(not interp, f"{whl.name}: engine is static (no program interpreter): runs on musl and any glibc")
                else:
                    dyn = subprocess.run(["objdump", "-T", t.name], capture_output=True, text=True, check=True).stdout
                    needed = max((int(v) for v in re.findall(r"GLIBC_2\.(\d+)", dyn)), default=0)
                    claimed = int(re.match(r"manylinux_2_(\d+)", plat).group(1))
                    check(interp and needed == claimed, f"{whl.name}: newest GLIBC symbol (objdump -T) is 2.{needed}, tag says 2.{claimed}")
check(seen == set(expect), f"one wheel per platform: missing {sorted(set(expect) - seen)}")

sdists = list(dist.glob("*.tar.gz"))
check([s.name for s in sdists] == [f"agentfs-{version}.tar.gz"], f"one sdist agentfs-{version}.tar.gz")
for s in sdists:
    with tarfile.open(s) as t:
        names = [n.split("/", 1)[1] for n in t.getnames() if "/" in n]
    for f in ("pyproject.toml", "hatch_build.py", "LICENSE", "README.md", "PKG-INFO", "src/agentfs/_engine.py"):
        check(f in names, f"{s.name}: has {f}")
    check(not any("agentfs/_bin/" in n or n.endswith(".go") or n.startswith("build/") for n in names), f"{s.name}: no engine, no Go sources")

sys.exit(1 if failures else 0)
