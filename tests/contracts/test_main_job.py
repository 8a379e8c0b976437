"""`make run`'s job (scripts/main-job.sh) on a machine without agent sessions: it indexes the
samples, says that their skipped records are broken on purpose, and answers the query."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

pytestmark = [pytest.mark.slow, pytest.mark.models]


def test_the_main_job_explains_the_samples_skipped_records(
    isolated_env: Path, tmp_path: Path
) -> None:
    env = dict(os.environ)
    env.update(
        FUNES_BIN=str(Path(sys.executable).parent / "funes"),
        PYTHON=sys.executable,
        FUNES_HOME=str(tmp_path / "demo"),
    )
    done = subprocess.run(
        ["sh", "scripts/main-job.sh"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, done.stderr
    lines = done.stderr.splitlines()
    skipped = next(i for i, line in enumerate(lines) if line.strip().startswith("skipped:"))
    explained = next(i for i, line in enumerate(lines) if "broken on purpose" in line)
    assert skipped < explained
    assert "→ get" in done.stdout
