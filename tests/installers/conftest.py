"""Every agent is "on this machine" for the installer tests: its home folder exists, as after
its first run (`funes add` on a machine without the agent is tested in test_add_missing.py)."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def agent_homes(isolated_env: Path) -> Path:
    for home in (".claude", ".codex", ".hermes", ".pi/agent"):
        (isolated_env / home).mkdir(parents=True, exist_ok=True)
    return isolated_env
