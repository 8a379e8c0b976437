"""`funes sessions`: list a memory's sessions, newest first, a page at a time."""

from __future__ import annotations

import click
from rich.console import Console

from funes.cli.common import (
    HarnessType,
    format_option,
    json_option,
    memory_option,
    offline_option,
    output_mode,
    pass_runtime,
    scope_options,
)
from funes.commands import Scope, SessionsRequest, run_sessions
from funes.memory import Runtime, parse_memory
from funes.render import agent as agent_render
from funes.traces import Harness


@click.command()
@click.option(
    "--harness",
    type=HarnessType(),
    default=None,
    help="Only claude, codex, pi or hermes sessions (parquet: imported rows of no known agent).",
)
@click.option(
    "--prompt",
    "prompt",
    metavar="TEXT",
    default=None,
    help="Only sessions whose opening prompt contains TEXT.",
)
@click.option(
    "--limit",
    type=click.IntRange(min=1, max=500),
    default=20,
    show_default=True,
    help="Sessions per page.",
)
@click.option(
    "--offset",
    type=click.IntRange(min=0),
    default=0,
    show_default=True,
    help="Sessions to skip (the next page starts where `more: --offset N` says).",
)
@memory_option
@format_option
@json_option
@offline_option
@scope_options(session=False)
@pass_runtime
def sessions(
    rt: Runtime,
    harness: Harness | None,
    prompt: str | None,
    limit: int,
    offset: int,
    memory: str | None,
    fmt: str | None,
    as_json: bool,
    offline: bool,
    scope: Scope,
) -> None:
    """List sessions newest first: agent, project, start and end, turns, host, opening prompt.

    --project and --since/--until keep sessions with at least one turn in them; --prompt
    matches text in the opening prompt. Each entry's `→ get` line opens its first turn.
    """
    rt.offline = rt.offline or offline
    mode = output_mode(fmt, as_json)
    request = SessionsRequest(harness, scope, prompt, limit, offset)
    outcome = run_sessions(rt, parse_memory(memory, rt), request)
    if mode == "json":
        from funes.render import json_format

        click.echo(json_format.sessions(outcome), nl=False)
    elif mode == "human":
        from funes.render import human

        Console().print(human.sessions(outcome))
    else:
        click.echo(agent_render.sessions(outcome), nl=False)
