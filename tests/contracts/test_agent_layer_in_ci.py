"""CI cannot drop the real-agent layer silently: with FUNES_REQUIRE_AGENTS=1 (what .ci/run
sets) a missing agent CLI fails its tests; without it they skip and the summary says so."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def _pytest(tmp_path: Path, **env: str) -> subprocess.CompletedProcess[str]:
    run_env = {**os.environ, "AGENTS_DIR": str(tmp_path / "no-agents"), **env}
    if "FUNES_REQUIRE_AGENTS" not in env:
        run_env.pop("FUNES_REQUIRE_AGENTS", None)
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-x",
         "tests/e2e_agents/test_pi.py", "tests/e2e_agents/test_ask_agents.py"],
        cwd=REPO, env=run_env, capture_output=True, text=True, timeout=600,
    )  # fmt: skip


def test_ci_runs_with_the_switch_that_turns_agent_skips_into_failures() -> None:
    script = (REPO / ".ci" / "run").read_text()
    assert "export FUNES_REQUIRE_AGENTS=1" in script
    assert script.index("export FUNES_REQUIRE_AGENTS=1") < script.rindex("\nmake test")


def test_missing_agents_fail_under_the_switch_and_skip_loudly_without_it(tmp_path: Path) -> None:
    required = _pytest(tmp_path, FUNES_REQUIRE_AGENTS="1")
    assert required.returncode == 1, required.stdout[-3000:]
    assert "FUNES_REQUIRE_AGENTS=1: the real-agent layer must run here" in required.stdout
    relaxed = _pytest(tmp_path)
    assert relaxed.returncode == 0, relaxed.stdout[-3000:]
    assert "REAL-AGENT LAYER NOT RUN:" in relaxed.stdout and "skipped" in relaxed.stdout
    assert "pi CLI not installed at" in relaxed.stdout
