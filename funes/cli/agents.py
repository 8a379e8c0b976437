"""`funes add <agent> [memory]`, `funes remove <agent>`: index every turn automatically."""

from __future__ import annotations

import sys
from pathlib import Path

import click
from rich.console import Console

from funes.cli.common import err_console, pass_runtime
from funes.commands.agents import AgentChanges, agent_harness, run_add, run_remove
from funes.commands.index import IndexRequest, run_index
from funes.commands.memory import MemoryKind, parse_memory
from funes.commands.runtime import Runtime


@click.command()
@click.argument("agent")
@click.argument("memory", required=False)
@click.option(
    "--yes", "-y", is_flag=True, help="Do not ask: build the first index now (for scripts)."
)
@click.option(
    "--no-index", is_flag=True, help="Only install; build the index later with `funes index`."
)
@pass_runtime
def add(rt: Runtime, agent: str, memory: str | None, yes: bool, no_index: bool) -> None:
    """Index every turn of AGENT (claude, codex, pi, hermes) as it completes, and give it recall.

    Installs a hook that notes each finished turn (indexed in the background), registers the
    `funes mcp` server (recall, get, status) with the agent, and builds the first index of the
    agent's past sessions. MEMORY binds the MCP server (and, for a local path, the hooks) to it.
    """
    harness = agent_harness(agent)
    console = err_console()
    changes = run_add(rt, harness, memory)
    _report(console, changes, verb="added to")
    if no_index:
        return
    ref = parse_memory(memory, rt) if memory else parse_memory(None, rt)
    target = ref if ref.kind is not MemoryKind.REMOTE else parse_memory(None, rt)
    if not yes:
        if not (sys.stdin.isatty() and sys.stderr.isatty()):
            console.print(
                f"  next: funes index --harness {harness.agent_name} --yes   (build the first index)",
                highlight=False,
            )
            return
        if not click.confirm(
            f"Index {harness.agent_name}'s past sessions now?", default=True, err=True
        ):
            return
    outcome = run_index(rt, target, IndexRequest(harness=harness, unbudgeted=True))
    r = outcome.report
    console.print(
        f"indexed {r.chunks_written} chunks from {r.units_indexed} sessions into {outcome.memory}",
        highlight=False,
    )


@click.command()
@click.argument("agent")
@pass_runtime
def remove(rt: Runtime, agent: str) -> None:
    """Take funes out of AGENT's configuration (the memory and transcripts stay)."""
    changes = run_remove(rt, agent_harness(agent))
    _report(err_console(), changes, verb="removed from")


def _report(console: Console, changes: AgentChanges, *, verb: str) -> None:
    if changes.changed:
        console.print(f"funes {verb} {changes.agent}:", highlight=False)
        for path in changes.changed:
            console.print(
                f"  {'updated' if Path(path).exists() else 'removed'} {path}", highlight=False
            )
    else:
        console.print(f"{changes.agent}: nothing to change", highlight=False)
    for warning in changes.warnings:
        console.print(f"  [yellow]warning[/]: {warning}", highlight=False)
    for note in changes.notes:
        console.print(f"  note: {note}", highlight=False)
