"""Runs the Python research assistant, then checks its files, kv and one
tool-call record per function call."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from agentfs import AgentFS

HERE = Path(__file__).resolve().parent


def test_research(tmp_path: Path) -> None:
    db = str(tmp_path / "r.db")
    out = subprocess.run([sys.executable, str(HERE / "research.py"), db], check=True, capture_output=True, text=True).stdout
    assert "answer: Saved notes and sources under /research." in out
    with AgentFS.open(path=db, create=False) as a:
        assert "[SQLite WAL mode](https://sqlite.org/wal.html)" in a.fs.read_file("/research/sources.md")
        assert a.kv.get("research:topic") == {"sources": 2, "mentions": 2}
        calls = list(reversed(a.tools.get_recent(0)))
        assert [(c.name, c.status) for c in calls] == [
            ("write_file", "success"),
            ("write_file", "success"),
            ("search", "success"),
            ("kv_set", "success"),
        ]
        assert calls[2].result["matches"][0]["path"] == "/research/notes.md"
