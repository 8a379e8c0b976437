"""pytest fixtures for the source tests: agent homes over fixtures/, Hermes built from SQL."""

from __future__ import annotations

from pathlib import Path

import pytest
from trace_fixtures import FIXTURES, HERMES_LEGACY_SQL, HERMES_SQL, build_db

from funes.traces import AgentHomes, Harness


@pytest.fixture
def hermes_home(tmp_path: Path) -> Path:
    """A HERMES_HOME with the current-schema state.db and a profile on the legacy schema."""
    home = tmp_path / "hermes-home"
    build_db(home / "state.db", HERMES_SQL)
    build_db(home / "profiles" / "studio" / "state.db", HERMES_LEGACY_SQL)
    return home


@pytest.fixture
def homes(tmp_path: Path, hermes_home: Path) -> AgentHomes:
    """Agent homes over the committed fixtures (read-only) and the built Hermes home."""
    return AgentHomes(
        home=tmp_path,
        dirs={
            Harness.CLAUDE_CODE: FIXTURES / "claude",
            Harness.CODEX: FIXTURES / "codex",
            Harness.PI: FIXTURES / "pi",
            Harness.HERMES: hermes_home,
        },
    )
