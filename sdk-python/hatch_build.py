"""Wheel build hook: puts the agentfs engine into the wheel and tags the
wheel for the platform that engine runs on.

Where the engine comes from, first match wins:
  1. AGENTFS_WHEEL_ENGINE=/path/to/agentfs[.exe]: a prebuilt binary, for any
     target (sdk-python/scripts/build-dists.sh passes each of
     scripts/build-engines.sh's binaries this way).
  2. A checkout (../cli/cmd/agentfs beside sdk-python/) with Go: `go build`
     of the working tree, for this machine.
  3. An sdist with Go: `go install
     github.com/agentfs-go/agentfs/cli/cmd/agentfs@vVERSION`, the engine
     of exactly this release through the user's GOPROXY (checksummed by
     the Go checksum database), for this machine.
  4. Otherwise the build fails with one message saying what to install.

The wheel's platform tag is read from the binary itself (ELF machine and
the glibc symbol versions it needs, Mach-O CPU and minimum macOS, PE
machine), so a wheel can never claim a platform its engine does not run
on. AGENTFS_WHEEL_PLATFORM=TAG overrides it (a tag or a dot-joined tag set).
The binary goes to agentfs/_bin/agentfs (agentfs.exe for a Windows one).
Editable installs skip all of this (they find the engine through
AGENTFS_BIN or PATH).
"""

from __future__ import annotations

import os
import shutil
import struct
import subprocess
from pathlib import Path
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

MODULE = "github.com/agentfs-go/agentfs/cli/cmd/agentfs"


class CustomBuildHook(BuildHookInterface):  # type: ignore[type-arg]
    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        if self.target_name != "wheel" or version == "editable":
            return
        engine = self._engine()
        plat = os.environ.get("AGENTFS_WHEEL_PLATFORM") or platform_tag(engine)
        name = "agentfs.exe" if plat.startswith("win") else "agentfs"
        if not os.access(engine, os.X_OK) and os.name != "nt":
            engine.chmod(engine.stat().st_mode | 0o111)
        build_data["force_include"][str(engine)] = f"agentfs/_bin/{name}"
        build_data["pure_python"] = False
        build_data["tag"] = f"py3-none-{plat}"
        self.app.display_info(f"agentfs wheel: engine {engine}, platform {plat}")

    def _engine(self) -> Path:
        prebuilt = os.environ.get("AGENTFS_WHEEL_ENGINE")
        if prebuilt:
            p = Path(prebuilt)
            if not p.is_file():
                raise RuntimeError(f"agentfs wheel: AGENTFS_WHEEL_ENGINE={prebuilt} is not a file")
            return p
        go = shutil.which("go")
        out = Path(self.root) / "build" / "engine"  # gitignored; not in any package
        exe = out / ("agentfs.exe" if os.name == "nt" else "agentfs")
        cli = Path(self.root).resolve().parent / "cli"
        if go and (cli / "cmd" / "agentfs").is_dir():
            self.app.display_info(f"agentfs wheel: building the engine from {cli}")
            out.mkdir(parents=True, exist_ok=True)
            subprocess.run(
                [go, "build", "-trimpath", "-ldflags=-s -w", "-o", str(exe), "./cmd/agentfs"],
                cwd=cli,
                check=True,
            )
            return exe
        version = self.metadata.version
        if not go:
            raise RuntimeError(
                f"agentfs {version}: no prebuilt wheel matches this platform, so pip is "
                "building it from source, which compiles the engine with Go. Install Go 1.26 "
                "or newer (https://go.dev/dl/) and retry, or build the engine yourself and "
                "point the build at it: AGENTFS_WHEEL_ENGINE=/path/to/agentfs pip install agentfs"
            )
        self.app.display_info(f"agentfs wheel: go install {MODULE}@v{version}")
        out.mkdir(parents=True, exist_ok=True)
        env = dict(os.environ, GOBIN=str(out), GOFLAGS=os.environ.get("GOFLAGS", "") + " -buildvcs=false")
        try:
            subprocess.run(
                [go, "install", "-trimpath", "-ldflags=-s -w", f"{MODULE}@v{version}"], env=env, check=True
            )
        except subprocess.CalledProcessError as e:
            raise RuntimeError(
                f"agentfs {version}: `go install {MODULE}@v{version}` failed (exit "
                f"{e.returncode}, its output is above): check that the go command reaches "
                "a module proxy (GOPROXY) and that Go is 1.26 or newer"
            ) from None
        return exe


def platform_tag(binary: Path) -> str:
    """The wheel platform tag (or tag set) a binary runs on, from its headers."""
    with open(binary, "rb") as f:
        head = f.read(64)
        if head[:4] == b"\x7fELF":
            return _elf_tag(f, head)
        if head[:4] == b"\xcf\xfa\xed\xfe":
            return _macho_tag(f, head)
        if head[:2] == b"MZ":
            return _pe_tag(f, head)
    raise RuntimeError(f"agentfs wheel: {binary} is not an ELF, Mach-O 64 or PE executable")


def _elf_tag(f: Any, head: bytes) -> str:
    if head[4] != 2 or head[5] != 1:
        raise RuntimeError("agentfs wheel: only 64-bit little-endian ELF engines are packaged")
    machine = struct.unpack_from("<H", head, 18)[0]
    arch = {0x3E: "x86_64", 0xB7: "aarch64"}.get(machine)
    if arch is None:
        raise RuntimeError(f"agentfs wheel: unsupported ELF machine {machine:#x}")
    phoff, shoff = struct.unpack_from("<QQ", head, 32)
    phentsize, phnum, shentsize, shnum = struct.unpack_from("<HHHH", head, 54)
    f.seek(phoff)
    phdrs = f.read(phentsize * phnum)
    dynamic = any(struct.unpack_from("<I", phdrs, i * phentsize)[0] == 3 for i in range(phnum))  # PT_INTERP
    if not dynamic:
        # A static binary (Go with CGO_ENABLED=0) needs no libc at all: it
        # runs on every manylinux and musllinux system.
        return f"manylinux_2_17_{arch}.manylinux2014_{arch}.musllinux_1_1_{arch}"
    # Dynamic: the newest GLIBC_2.N symbol version it needs (the
    # SHT_GNU_verneed section) is the manylinux_2_N it satisfies.
    f.seek(shoff)
    shdrs = [struct.unpack_from("<IIQQQQIIQQ", f.read(shentsize)) for _ in range(shnum)]
    newest = 17
    for sh in shdrs:
        if sh[1] != 0x6FFFFFFE:  # SHT_GNU_verneed
            continue
        strtab = shdrs[sh[6]]
        f.seek(strtab[4])
        strs = f.read(strtab[5])
        f.seek(sh[4])
        data = f.read(sh[5])
        off = 0
        for _ in range(sh[8]):  # sh_info: number of Verneed entries
            _, cnt, _, aux, nxt = struct.unpack_from("<HHIII", data, off)
            a = off + aux
            for _ in range(cnt):
                _, _, _, name, anext = struct.unpack_from("<IHHII", data, a)
                s = strs[name : strs.index(b"\0", name)].decode()
                if s.startswith("GLIBC_2."):
                    newest = max(newest, int(s.split(".")[1]))
                a += anext
            off += nxt
    tag = f"manylinux_2_{newest}_{arch}"
    return tag + (f".manylinux2014_{arch}" if newest == 17 else "")


def _macho_tag(f: Any, head: bytes) -> str:
    cputype, _, _, ncmds, _ = struct.unpack_from("<iiiII", head, 4)
    arch = {0x01000007: "x86_64", 0x0100000C: "arm64"}.get(cputype)
    if arch is None:
        raise RuntimeError(f"agentfs wheel: unsupported Mach-O CPU type {cputype:#x}")
    f.seek(32)
    minos = None
    for _ in range(ncmds):
        cmd, size = struct.unpack("<II", f.read(8))
        body = f.read(size - 8)
        if cmd == 0x32:  # LC_BUILD_VERSION: platform, minos, ...
            minos = struct.unpack_from("<I", body, 4)[0]
        elif cmd == 0x24:  # LC_VERSION_MIN_MACOSX: version, sdk
            minos = struct.unpack_from("<I", body, 0)[0]
    if minos is None:
        raise RuntimeError("agentfs wheel: the Mach-O engine has no minimum macOS version")
    major, minor = minos >> 16, (minos >> 8) & 0xFF
    if major >= 11:
        # From macOS 11 on, wheel tags name major versions only (X_0).
        major, minor = (major + 1, 0) if minor else (major, 0)
    return f"macosx_{major}_{minor}_{arch}"


def _pe_tag(f: Any, head: bytes) -> str:
    (lfanew,) = struct.unpack_from("<I", head, 0x3C)
    f.seek(lfanew)
    sig, machine = struct.unpack("<4sH", f.read(6))
    arch = {0x8664: "win_amd64", 0xAA64: "win_arm64"}.get(machine) if sig == b"PE\0\0" else None
    if arch is None:
        raise RuntimeError(f"agentfs wheel: unsupported PE machine {machine:#x}")
    return arch
