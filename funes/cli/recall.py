"""`funes recall`: passages from past sessions, in the agent format (AGENTS.md)."""

from __future__ import annotations

import math
import sys
from dataclasses import replace

import click

from funes.cli.common import (
    BlockTypeType,
    HarnessType,
    err_console,
    format_option,
    json_option,
    memory_option,
    offline_option,
    output_mode,
    pass_runtime,
    scope_options,
)
from funes.commands import RecallRequest, Scope, prefetch_query, run_recall
from funes.memory import Runtime, parse_memory
from funes.render import agent as agent_render
from funes.settings import RECALL
from funes.traces import BlockType, Harness


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
    "block_types",
    type=BlockTypeType(),
    multiple=True,
    help="Only text, thinking, tool_use or tool_result blocks; repeat for any of several.",
)
@click.option(
    "--harness",
    type=HarnessType(),
    default=None,
    help="Only claude, codex, pi or hermes sessions (parquet: imported rows of no known agent).",
)
@click.option("--no-rerank", is_flag=True, help="Skip the cross-encoder (evidence order).")
@click.option(
    "--all",
    "show_all",
    is_flag=True,
    help="Show the weak candidates too when no passage supports the query.",
)
@memory_option
@offline_option
@scope_options()
@format_option
@json_option
@pass_runtime
def recall(
    rt: Runtime,
    query: tuple[str, ...],
    k: int,
    candidates: int,
    half_life: float,
    neighbors: int,
    block_types: tuple[BlockType, ...],
    harness: Harness | None,
    no_rerank: bool,
    show_all: bool,
    memory: str | None,
    offline: bool,
    scope: Scope,
    fmt: str | None,
    as_json: bool,
) -> None:
    """Recall raw passages from past agent sessions, with provenance and a `get` line.

    --project, --since/--until and --session restrict the search itself: both the BM25 and
    the vector candidates are drawn only from matching chunks, before the top-k cut.
    """
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
    request = RecallRequest(" ".join(query), params, block_types, harness, scope)
    mode = output_mode(fmt, as_json)
    ref = parse_memory(memory, rt)
    # the query goes to the child process loading the model (funes.inference.prefetch) and
    # is embedded there while this one opens the memory
    prefetched = prefetch_query(rt, request)
    try:
        # rich loads only to draw the spinner at a terminal (agents read stderr from a pipe)
        console = err_console() if sys.stderr.isatty() else None
        with console.status("recalling…", spinner="dots") if console is not None else _Null():
            outcome = run_recall(rt, ref, request)
    finally:
        if prefetched is not None:
            prefetched.cancel_prefetch()
    for note in outcome.result.notes:
        click.echo(f"funes: {note}", err=True)
    if mode == "json":
        from funes.render import json_format

        click.echo(json_format.recall(outcome, request.query, weak=show_all), nl=False)
    elif mode == "human":
        from rich.console import Console

        from funes.render import human

        # crop=False: the get command lines are never cut nor folded (funes.render.human)
        Console().print(human.recall(outcome, weak=show_all), crop=False)
    else:
        click.echo(agent_render.recall(outcome, weak=show_all), nl=False)


class _Null:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None
