"""Wheel build hook: puts the agentfs engine into the wheel.

The engine binary (cli/cmd/agentfs of this repository, built with `go build`
for the machine that builds the wheel) goes to agentfs/_bin/agentfs, and the
wheel is tagged for that platform (py3-none-linux_x86_64 on linux x64).
AGENTFS_WHEEL_ENGINE=/path/to/agentfs uses a prebuilt binary instead.
Editable installs skip it (they find the engine through AGENTFS_BIN/PATH).
Build with `python -m build --wheel` from sdk-python/ (a wheel built from
the sdist has no Go sources beside it and fails with a message).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sysconfig
from pathlib import Path
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface


class CustomBuildHook(BuildHookInterface):  # type: ignore[type-arg]
    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        if self.target_name != "wheel" or version == "editable":
            return
        out = Path(self.root) / "src" / "agentfs" / "_bin" / "agentfs"
        out.parent.mkdir(parents=True, exist_ok=True)
        prebuilt = os.environ.get("AGENTFS_WHEEL_ENGINE")
        cli = Path(self.root).parent / "cli"
        if prebuilt:
            shutil.copy2(prebuilt, out)
        elif (cli / "cmd" / "agentfs").is_dir() and shutil.which("go"):
            self.app.display_info(f"building the agentfs engine from {cli} into the wheel")
            subprocess.run(["go", "build", "-o", str(out), "./cmd/agentfs"], cwd=cli, check=True)
        else:
            raise RuntimeError(
                "agentfs wheel: no engine to bundle; build from a checkout with Go "
                "(python -m build --wheel in sdk-python/) or set AGENTFS_WHEEL_ENGINE"
            )
        out.chmod(0o755)
        build_data["force_include"][str(out)] = "agentfs/_bin/agentfs"
        build_data["pure_python"] = False
        plat = sysconfig.get_platform().replace("-", "_").replace(".", "_")
        build_data["tag"] = f"py3-none-{plat}"
