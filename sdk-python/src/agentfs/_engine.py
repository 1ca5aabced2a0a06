"""Finding the agentfs engine binary."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from ._errors import EngineNotFoundError

# Each platform's wheel carries its engine here (hatch_build.py puts it in):
# agentfs.exe in the win_amd64 wheel, agentfs in the others.
BUNDLED = Path(__file__).with_name("_bin") / ("agentfs.exe" if os.name == "nt" else "agentfs")


def find_engine(explicit: str | os.PathLike[str] | None = None) -> str:
    """Returns the engine to run: `explicit`, then $AGENTFS_BIN, then the
    binary bundled in this package, then `agentfs` on PATH."""
    if explicit:
        return _check(os.fspath(explicit), "the engine option")
    env = os.environ.get("AGENTFS_BIN")
    if env:
        return _check(env, "AGENTFS_BIN")
    if BUNDLED.is_file() and os.access(BUNDLED, os.X_OK):
        return str(BUNDLED)
    found = shutil.which("agentfs")
    if found:
        return found
    raise EngineNotFoundError(
        "agentfs engine not found: pass engine=..., set AGENTFS_BIN, install a wheel "
        "that bundles it, or put agentfs on PATH (go install "
        "github.com/agentfs-go/agentfs/cli/cmd/agentfs@latest, or `go tool task build` "
        "in a checkout, which writes bin/agentfs)"
    )


def _check(path: str, source: str) -> str:
    p = shutil.which(path) if os.sep not in path else path
    if p and os.path.isfile(p) and os.access(p, os.X_OK):
        return p
    raise EngineNotFoundError(f"agentfs engine from {source} is not an executable file: {path}")
