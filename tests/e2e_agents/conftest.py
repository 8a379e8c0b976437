"""The real-agent layer (marker `agent_e2e`): timings of every agent run, printed at the end,
and a loud line when agent tests were skipped (CI fails them instead: FUNES_REQUIRE_AGENTS=1)."""

from __future__ import annotations

import pytest
from e2e_agents.support.harness import TIMINGS


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    skipped = [
        r
        for r in terminalreporter.stats.get("skipped", [])
        if "agent_e2e" in getattr(r, "keywords", {})
    ]
    if skipped:
        reasons = sorted(
            {str(r.longrepr[2]) if isinstance(r.longrepr, tuple) else "" for r in skipped}
        )
        terminalreporter.write_sep(
            "!",
            f"REAL-AGENT LAYER NOT RUN: {len(skipped)} agent_e2e tests skipped (CI fails them: "
            "FUNES_REQUIRE_AGENTS=1)",
            red=True,
            bold=True,
        )
        for reason in reasons[:8]:
            terminalreporter.write_line(f"  {reason}", yellow=True)
    if not TIMINGS:
        return
    terminalreporter.section("agent e2e timings (wall seconds per agent run)")
    for agent, what, wall_s, rc in TIMINGS:
        terminalreporter.write_line(f"{agent:7} {what:32} {wall_s:7.1f}s  rc={rc}")
    terminalreporter.write_line(f"total   {'':32} {sum(t[2] for t in TIMINGS):7.1f}s")
