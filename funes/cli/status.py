"""`funes status [memory | --memory M]`: what the memory holds and what to run next."""

from __future__ import annotations

import os

import click
from rich.console import Console

from funes.cli.common import (
    format_option,
    json_option,
    offline_option,
    output_mode,
    pass_runtime,
)
from funes.commands import run_status
from funes.memory import MemoryRef, Runtime, parse_memory
from funes.render import agent as agent_render


@click.command()
@click.argument("memory", required=False)
@click.option(
    "--memory",
    "memory_flag",
    default=None,
    metavar="MEMORY",
    help="local (default), a path to a memory, org/repo, or hf://datasets/org/repo (or give "
    "it as the argument).",
)
@format_option
@json_option
@offline_option
@pass_runtime
def status(
    rt: Runtime,
    memory: str | None,
    fmt: str | None,
    as_json: bool,
    offline: bool,
    memory_flag: str | None,
) -> None:
    """What the memory holds, what needs attention, and what to run next.

    The memory is named as every other verb takes it (`--memory M`) or as the argument."""
    ref = parse_memory(memory if memory is not None else memory_flag, rt)
    if memory is not None and memory_flag is not None:
        other = parse_memory(memory_flag, rt)
        if not _same_memory(ref, other):
            raise click.UsageError(f"two memories named: {memory!r} and --memory {memory_flag!r}")
    rt.offline = rt.offline or offline
    mode = output_mode(fmt, as_json)
    report = run_status(rt, ref)
    if mode == "json":
        from funes.render import json_format

        click.echo(json_format.status(report), nl=False)
    elif mode == "human":
        from funes.render import human

        Console().print(human.status(report))
    else:
        click.echo(agent_render.status(report), nl=False)


def _same_memory(a: MemoryRef, b: MemoryRef) -> bool:
    """Whether two parsed memory names are one memory however written (`local` and the path of
    the local memory file, a path through a symlink, `org/repo` and `hf://datasets/org/repo`)."""
    if a.path is not None and b.path is not None:
        return os.path.realpath(a.path) == os.path.realpath(b.path)
    return (a.kind, a.repo, a.revision) == (b.kind, b.repo, b.revision)
