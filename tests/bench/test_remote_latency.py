"""The bench's remote-recall figure: what it measures (run for real on a tiny memory against the
loopback Hub stand-in, in a fresh process) and how the table reports it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from support.claude import write_claude_session

from bench.remote_latency import run_isolated
from bench.report import remote_rows


@pytest.mark.hub
@pytest.mark.models
def test_warm_hub_recall_makes_no_request_within_the_ttl_and_one_head_check_at_ttl_0(
    tmp_path: Path, funes_env: dict[str, str]
) -> None:
    write_claude_session(
        Path(funes_env["HOME"]) / ".claude",
        [
            ("user", "where are the avocet deploy keys kept?"),
            ("assistant", "Avocet deploy keys live in the ops vault, folder avocet."),
        ],
    )
    done = subprocess.run(
        [sys.executable, "-m", "funes", "index", "--yes"],
        env=funes_env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    memory = Path(os.environ["FUNES_HOME"]) / "data" / "memory.db"
    queries = tmp_path / "queries.txt"
    queries.write_text("avocet deploy keys\nops vault folder\n", encoding="utf-8")

    result = run_isolated(memory, queries, via="hub", repeats=2, ttls=(600.0, 0.0))

    assert "error" not in result, result
    assert result["pushed"] == 2 and result["held_back"] == 0
    within_ttl, every_call = result["runs"]
    assert within_ttl["remote_calls"] == every_call["remote_calls"] == 4
    assert within_ttl["hub_requests"] == 0  # warm, within the TTL: no HTTP at all
    assert every_call["hub_requests"] == 4  # TTL 0: the head check (GET …/refs) per call
    assert within_ttl["local_ms"] > 0 and within_ttl["remote_ms"] > 0


def _run(ttl: float, ratio: float, hub_requests: int | None) -> dict[str, object]:
    return {
        "ttl_s": ttl,
        "local_ms": 40.0,
        "remote_ms": 40.0 * ratio,
        "ratio": ratio,
        "overhead_ms": 40.0 * (ratio - 1),
        "local_p95_ms": 50.0,
        "remote_p95_ms": 55.0,
        "remote_calls": 116,
        "hub_requests": hub_requests,
    }


def test_remote_rows_compare_each_run_with_the_target_and_show_failures() -> None:
    rows = remote_rows(
        {
            "target_ratio": 1.2,
            "dir": {"runs": [_run(60.0, 1.05, None)]},
            "hub": {"runs": [_run(60.0, 1.1, 0), _run(0.0, 1.3, 116)]},
        }
    )
    by_label = {r[0].strip(): r for r in rows[1:]}
    assert set(by_label) == {
        "directory remote, TTL 60 s",
        "Hub stand-in (loopback), TTL 60 s",
        "Hub stand-in (loopback), TTL 0 s",
    }
    assert "met" in by_label["directory remote, TTL 60 s"][4]
    assert "0 Hub requests in 116 calls" in by_label["Hub stand-in (loopback), TTL 60 s"][2]
    every_call = by_label["Hub stand-in (loopback), TTL 0 s"]
    assert "1.30×" in every_call[1] and "missed" in every_call[4]
    assert "every call" in every_call[2]

    failed = remote_rows({"target_ratio": 1.2, "hub": {"via": "hub", "error": "exit 1: boom"}})
    assert failed[1][1] == "failed" and "boom" in failed[1][2]
    assert remote_rows(None) == []
