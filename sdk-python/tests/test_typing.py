"""The package is typed: mypy --strict passes on it, and on code using it
(read_file's result type follows its encoding argument)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

SDK = Path(__file__).resolve().parents[1]

USER_CODE = textwrap.dedent(
    """
    from agentfs import AgentFS, Stats
    from agentfs import aio

    def sync_use() -> None:
        with AgentFS.open(id="x") as a:
            text: str = a.fs.read_file("/a")
            raw: bytes = a.fs.read_file("/a", None)
            st: Stats = a.fs.stat("/a")
            size: int = st.size
            names: list[str] = a.fs.readdir("/")
            with a.fs.open("/a", "r+") as f:
                n: int = f.pwrite(b"x", 0)

    async def async_use() -> None:
        async with aio.AgentFS.open() as a:
            text: str = await a.fs.read_file("/a")
            raw: bytes = await a.fs.read_file("/a", encoding=None)
            call_id: int = await a.tools.start("t")
    """
)


# mypy over the package takes minutes on a loaded machine: more than the
# suite's 120 s per test.
@pytest.mark.timeout(600)
def test_mypy_strict(tmp_path: Path) -> None:
    (tmp_path / "user.py").write_text(USER_CODE)
    r = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-incremental", "src/agentfs", str(tmp_path / "user.py")],
        cwd=SDK,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert r.returncode == 0, r.stdout + r.stderr
