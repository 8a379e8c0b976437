"""`funes push REMOTE`: publish the local memory's new chunks to a Hub dataset or a directory."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import click

from funes.cli.common import pass_runtime
from funes.commands import PushRequest, run_push
from funes.memory import Runtime, parse_memory
from funes.plurals import counted, plural

if TYPE_CHECKING:
    from funes.remote import PushReport


def _ask(question: str) -> bool:
    return click.confirm(question, default=False, err=True)


@click.command()
@click.argument("remote", metavar="REMOTE")
@click.option(
    "--create",
    is_flag=True,
    help="Create the dataset repository (or directory) if it does not exist.",
)
@click.option(
    "--private/--public",
    default=True,
    show_default=True,
    help="Visibility of a repository created by --create.",
)
@click.option(
    "--yes",
    "-y",
    is_flag=True,
    help="Push even to a remote that shares no chunks with this memory.",
)
@pass_runtime
def push(rt: Runtime, remote: str, create: bool, private: bool, yes: bool) -> None:
    """Publish the local memory's new chunks to REMOTE (org/repo, hf://datasets/org/repo, or a directory).

    One commit per push, with the Lance data, a manifest and a dataset card. A secrets gate
    holds back every block in which a secret is detected (exit status 2 when it held back
    everything this push had to send; blocks an earlier push held back only stay local).
    Pushing to a remote that shares no chunks with this memory asks first (--yes skips).
    """
    interactive = sys.stdin.isatty() and sys.stderr.isatty()
    request = PushRequest(create=create, private=private, assume_yes=yes)
    target = parse_memory(remote, rt)

    def on_wait(label: str, wait_s: float) -> None:
        click.echo(
            f"another push to {label} is running on this host (the hooks' worker?): "
            f"waiting up to {wait_s:g} s for it…",
            err=True,
        )

    report = run_push(rt, target, request, confirm=_ask if interactive else None, on_wait=on_wait)
    if report.created:
        click.echo(f"created {report.remote} ({'private' if private else 'public'})", err=True)
    elif _given(click.get_current_context(), "private"):
        click.echo(
            f"funes: note: --{'private' if private else 'public'} sets the visibility of a "
            f"remote --create makes; {report.remote} was there already and keeps its own",
            err=True,
        )
    if report.held_back:
        rules = ", ".join(f"{rule}: {n}" for rule, n in sorted(report.rules.items()))
        click.echo(
            f"funes: warning: held back {counted(report.held_back, 'chunk')} "
            f"({counted(report.dirty_blocks, 'block')}) that "
            f"{plural(report.held_back, 'contains', 'contain')} secrets ({rules}); they stay local",
            err=True,
        )
        click.echo(
            f"  {'nothing new to send; ' if report.up_to_date else ''}`funes status` says how to "
            f"publish {plural(report.held_back, 'it', 'them')}: {report.next_step}",
            err=True,
        )
    # up to date with blocks held back: earlier pushes held back all of them (a new one alone
    # would have been refused, exit 2); they are counted, and status says how to publish them
    held = (
        f"; {counted(report.dirty_blocks, 'block')} held back for secrets "
        f"{plural(report.dirty_blocks, 'stays', 'stay')} local"
        if report.up_to_date and report.held_back
        else ""
    )
    if report.up_to_date and report.left_out:  # a project memory: the notes say what stayed
        click.echo(
            f"{report.remote} holds every session included (commit {(report.commit or '')[:12]}); "
            f"{counted(report.left_out, 'chunk')} in {counted(report.left_out_sessions, 'session')} "
            "not included "
            f"were not sent{held}"
        )
    elif report.up_to_date:
        click.echo(f"{report.remote} is up to date (commit {(report.commit or '')[:12]}){held}")
    else:
        click.echo(
            f"pushed {counted(report.pushed, 'chunk')} to {report.remote} "
            f"(commit {(report.commit or '')[:12]}; "
            f"{counted(report.remote_chunks, 'chunk')} there now)" + _rewritten_part(report)
        )
    for note in report.notes:
        click.echo(f"funes: warning: {note}", err=True)
    if n := report.unembedded:
        click.echo(
            f"  {counted(n, 'chunk')} {plural(n, 'has', 'have')} no vector yet and "
            f"{plural(n, 'was', 'were')} not pushed (run `funes index`)",
            err=True,
        )


def _given(ctx: click.Context, name: str) -> bool:
    """Whether the option `name` was given on the command line (not its default)."""
    return ctx.get_parameter_source(name) is click.core.ParameterSource.COMMANDLINE


def _rewritten_part(report: PushReport) -> str:
    """`; <n> of them replace chunks rewritten here since pushed; <n> deleted there` (the
    rows of the remote this memory rewrote or deleted since: PushReport.replaced/removed)."""
    part = ""
    if report.replaced:
        part += f"; {report.replaced:,} of them replace chunks rewritten here since pushed"
    if report.removed:
        part += (
            f"; {counted(report.removed, 'chunk')} rewritten or deleted here since pushed "
            "deleted there"
        )
    return part
