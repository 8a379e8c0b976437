"""`funes recall`, `funes get`, `funes status`: the read commands (agent format by default)."""

from __future__ import annotations

import math
import sys
from dataclasses import replace

import click
from rich.console import Console

from funes.cli.common import (
    BlockTypeType,
    HarnessType,
    err_console,
    format_option,
    memory_option,
    pass_runtime,
    wants_human,
)
from funes.commands.memory import parse_memory
from funes.commands.recall import RecallRequest, run_get, run_recall
from funes.commands.runtime import Runtime
from funes.commands.status import run_status
from funes.render import agent as agent_render
from funes.settings import RECALL
from funes.traces import BlockType, Harness

offline_option = click.option(
    "--offline",
    is_flag=True,
    help="A remote memory: read its last cached commit, no network (also HF_HUB_OFFLINE=1).",
)


@click.command()
@click.argument("query", nargs=-1, required=True)
@click.option(
    "-k",
    "k",
    type=click.IntRange(min=1),
    default=RECALL.k,
    show_default=True,
    help="Hits returned.",
)
@click.option(
    "--candidates",
    type=click.IntRange(min=1),
    default=RECALL.candidates,
    show_default=True,
    help="Fused pool size handed to the reranker.",
)
@click.option(
    "--half-life",
    "half_life",
    type=click.FloatRange(min=0),
    default=RECALL.half_life_days,
    show_default=True,
    help="Recency half-life in days; 0 disables.",
)
@click.option(
    "--neighbors",
    type=click.IntRange(min=0),
    default=RECALL.neighbors,
    show_default=True,
    help="Adjacent chunks attached per hit.",
)
@click.option(
    "--type",
    "block_type",
    type=BlockTypeType(),
    default=None,
    help="Only text, thinking, tool_use or tool_result blocks.",
)
@click.option(
    "--harness", type=HarnessType(), default=None, help="Only claude, codex, pi or hermes sessions."
)
@click.option("--no-rerank", is_flag=True, help="Skip the cross-encoder (fused order).")
@memory_option
@offline_option
@pass_runtime
def recall(
    rt: Runtime,
    query: tuple[str, ...],
    k: int,
    candidates: int,
    half_life: float,
    neighbors: int,
    block_type: BlockType | None,
    harness: Harness | None,
    no_rerank: bool,
    memory: str | None,
    offline: bool,
) -> None:
    """Recall raw passages from past agent sessions, with provenance and a `get` line."""
    rt.offline = rt.offline or offline
    params = replace(
        RECALL,
        k=k,
        candidates=candidates,
        half_life_days=half_life,
        neighbors=neighbors,
        rerank=not no_rerank,
    )
    if math.isnan(half_life):  # FloatRange lets NaN through; it would make every score NaN
        raise click.BadParameter("must be a number of days, not nan", param_hint="'--half-life'")
    request = RecallRequest(" ".join(query), params, block_type, harness)
    console = err_console()
    with console.status("recalling…", spinner="dots") if console.is_terminal else _Null():
        outcome = run_recall(rt, parse_memory(memory, rt), request)
    for note in outcome.result.notes:
        click.echo(f"funes: {note}", err=True)
    click.echo(agent_render.recall(outcome), nl=False)


class _Null:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None


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
@offline_option
@pass_runtime
def get(
    rt: Runtime,
    session_id: str,
    turn_id: str,
    window: int,
    highlight: str | None,
    memory: str | None,
    fmt: str | None,
    offline: bool,
) -> None:
    """Print a turn and the turns around it, blocks reassembled."""
    rt.offline = rt.offline or offline
    outcome = run_get(rt, parse_memory(memory, rt), session_id, turn_id, window=window)
    if not outcome.turns:
        click.echo(agent_render.not_found(outcome))
        sys.exit(1)
    if wants_human(fmt):
        from funes.render import human

        Console().print(human.get(outcome, highlight=highlight))
    else:
        click.echo(agent_render.get(outcome), nl=False)


@click.command()
@click.argument("memory", required=False)
@format_option
@offline_option
@pass_runtime
def status(rt: Runtime, memory: str | None, fmt: str | None, offline: bool) -> None:
    """What the memory holds, what needs attention, and what to run next."""
    rt.offline = rt.offline or offline
    report = run_status(rt, parse_memory(memory, rt))
    if wants_human(fmt):
        from funes.render import human

        Console().print(human.status(report))
    else:
        click.echo(agent_render.status(report), nl=False)
