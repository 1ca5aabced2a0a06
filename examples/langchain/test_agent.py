"""Runs the example as a user would, then checks what the agent left: the
report (read by pandas through agentfs://), the kv summary, and one
tool-call record per step."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import fsspec
import pandas as pd

from agentfs import AgentFS

HERE = Path(__file__).resolve().parent


def test_langchain_agent(tmp_path: Path) -> None:
    db = str(tmp_path / "analyst.db")
    out = subprocess.run([sys.executable, str(HERE / "agent.py"), db], check=True, capture_output=True, text=True).stdout
    assert "answer: Saved /reports/revenue_by_region.csv" in out

    df = pd.read_csv("agentfs://analyst/reports/revenue_by_region.csv", storage_options={"path": db})
    assert df.to_dict("records") == [
        {"region": "north", "revenue": 350},
        {"region": "east", "revenue": 200},
        {"region": "south", "revenue": 120},
    ]
    # fsspec lists the agent's directories as well.
    fs = fsspec.filesystem("agentfs", path=db)
    assert fs.ls("/reports", detail=False) == ["/reports/revenue_by_region.csv"]

    with AgentFS.open(path=db, create=False) as agent:
        assert agent.kv.get("report:revenue") == {"path": "/reports/revenue_by_region.csv", "top_region": "north", "top_revenue": 350}
        calls = list(reversed(agent.tools.get_recent(0)))
        assert [(c.name, c.status) for c in calls] == [
            ("list", "success"),
            ("bash", "success"),
            ("write_file", "success"),
            ("kv_set", "success"),
        ]
        assert calls[1].result["stdout"] == "north,350\neast,200\nsouth,120\n"
