"""`funes remove <agent>`: take funes out of an agent (the memory and transcripts stay)."""

from __future__ import annotations

import click

from funes.cli.common import err_console, pass_runtime, report_changes
from funes.commands import run_remove
from funes.memory import Runtime
from funes.wiring import agent_harness


@click.command()
@click.argument("agent")
@pass_runtime
def remove(rt: Runtime, agent: str) -> None:
    """Take funes out of AGENT's configuration (the memory and transcripts stay)."""
    changes = run_remove(rt, agent_harness(agent))
    report_changes(err_console(), changes, verb="removed from")
