"""`funes get <session> <turn>`: a turn and the turns around it."""

from __future__ import annotations

import sys

import click
from rich.console import Console

from funes.cli.common import (
    format_option,
    json_option,
    memory_option,
    offline_option,
    output_mode,
    pass_runtime,
    scope_options,
)
from funes.commands import Scope, run_get
from funes.memory import Runtime, parse_memory
from funes.render import agent as agent_render


@click.command()
@click.argument("session_id")
@click.argument("turn_id")
@click.option(
    "--window",
    type=click.IntRange(min=0),
    default=3,
    show_default=True,
    help="Turns shown on each side.",
)
@click.option("--highlight", default=None, help="Mark this text (human format only).")
@memory_option
@format_option
@json_option
@offline_option
@scope_options(session=False)
@pass_runtime
def get(
    rt: Runtime,
    session_id: str,
    turn_id: str,
    window: int,
    highlight: str | None,
    memory: str | None,
    fmt: str | None,
    as_json: bool,
    offline: bool,
    scope: Scope,
) -> None:
    """Print a turn and the turns around it, blocks reassembled.

    SESSION_ID may be a prefix of the id, or the label a recall header shows, when it names one
    session.
    --project and --since/--until restrict which turns are shown and counted in the window.
    """
    rt.offline = rt.offline or offline
    mode = output_mode(fmt, as_json)
    outcome = run_get(rt, parse_memory(memory, rt), session_id, turn_id, window=window, scope=scope)
    if mode == "json":
        from funes.render import json_format

        click.echo(json_format.get(outcome), nl=False)
        sys.exit(0 if outcome.turns else 1)
    if not outcome.turns:
        click.echo(agent_render.not_found(outcome))
        if not outcome.session_found:
            listing = agent_render.sessions_command(outcome.memory)
            click.echo(f"funes: `{listing}` lists the sessions this memory holds", err=True)
        sys.exit(1)
    if mode == "human":
        from funes.render import human

        Console().print(human.get(outcome, highlight=highlight))
    else:
        click.echo(agent_render.get(outcome), nl=False)
