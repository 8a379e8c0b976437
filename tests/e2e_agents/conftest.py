"""The real-agent layer (marker `agent_e2e`): timings of every agent run, printed at the end."""

from __future__ import annotations

import pytest
from e2e_agents.support.harness import TIMINGS


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if not TIMINGS:
        return
    terminalreporter.section("agent e2e timings (wall seconds per agent run)")
    for agent, what, wall_s, rc in TIMINGS:
        terminalreporter.write_line(f"{agent:7} {what:32} {wall_s:7.1f}s  rc={rc}")
    terminalreporter.write_line(f"total   {'':32} {sum(t[2] for t in TIMINGS):7.1f}s")
