"""`funes add <agent> [memory]`: index every turn automatically."""

from __future__ import annotations

import sys

import click

from funes.cli.common import err_console, pass_runtime, report_changes
from funes.commands import IndexRequest, run_add, run_index
from funes.memory import MemoryKind, Runtime, parse_memory
from funes.wiring import agent_harness


@click.command()
@click.argument("agent")
@click.argument("memory", required=False)
@click.option(
    "--yes", "-y", is_flag=True, help="Do not ask: build the first index now (for scripts)."
)
@click.option(
    "--no-index", is_flag=True, help="Only install; build the index later with `funes index`."
)
@click.option(
    "--force",
    is_flag=True,
    help="Prepare the agent's configuration even when the agent is not on this machine.",
)
@pass_runtime
def add(
    rt: Runtime, agent: str, memory: str | None, yes: bool, no_index: bool, force: bool
) -> None:
    """Index every turn of AGENT (claude, codex, pi, hermes) as it completes, and give it recall.

    Installs a hook that notes each finished turn (indexed in the background), registers the
    `funes mcp` server (recall, get, sessions, status) with the agent, and builds the first index of the
    agent's past sessions. MEMORY binds the MCP server (and, for a local path, the hooks) to it.
    Every file it creates, edits or pre-approves (Hermes' hook allowlist) is named. On a
    machine without the agent (no home folder, no program on PATH) it changes nothing unless
    --force.
    """
    harness = agent_harness(agent)
    console = err_console()
    changes = run_add(rt, harness, memory, force=force)
    report_changes(console, changes, verb="added to")
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
