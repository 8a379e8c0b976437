"""`funes forget [SESSION]…`: remove sessions from the memory for good (and from remotes if asked)."""

from __future__ import annotations

import sys

import click
from rich.console import Console

from funes.cli.common import err_console, memory_option, pass_runtime
from funes.commands import ForgetPlan, ForgetRequest, plan_forget, run_forget
from funes.errors import UsageError
from funes.memory import Runtime, parse_memory
from funes.plurals import counted

SHOWN = 10  # sessions listed before asking


@click.command()
@click.argument("sessions", nargs=-1, metavar="[SESSION]...")
@click.option(
    "--before",
    metavar="WHEN",
    help="Also every session started before WHEN (2026-01-01, 30d, …), now and later.",
)
@click.option(
    "--project",
    metavar="PATH|NAME",
    help="Also every session run in this project, now and later (with --before: both).",
)
@click.option(
    "--remote",
    "remotes",
    multiple=True,
    metavar="REMOTE",
    help="Also delete every forgotten session from REMOTE (org/repo or a directory) in a new commit.",
)
@click.option("--yes", "-y", is_flag=True, help="Do not ask (for scripts).")
@memory_option
@pass_runtime
def forget(
    rt: Runtime,
    sessions: tuple[str, ...],
    before: str | None,
    project: str | None,
    remotes: tuple[str, ...],
    yes: bool,
    memory: str | None,
) -> None:
    """Delete SESSION(s) from the memory and never index them again.

    A SESSION is an id, a prefix of one, or the label a recall header shows. --before and --project
    forget every stored session they match and keep the rule, so later index runs, sweeps and
    hooks skip the sessions it catches. Transcripts are not touched. A remote is changed only
    with --remote; `funes status` says which remote copies remain.
    """
    request = ForgetRequest(sessions, before, project, remotes)
    plan = plan_forget(rt, parse_memory(memory, rt), request)
    console = err_console()
    _describe(console, plan)
    if not yes:
        if not (sys.stdin.isatty() and sys.stderr.isatty()):
            raise UsageError(
                "forget deletes for good and nobody is here to confirm",
                hint="run it at a terminal, or add --yes",
            )
        if not click.confirm("Forget them for good?", default=False, err=True):
            click.echo("nothing forgotten", err=True)
            return
    outcome = run_forget(rt, plan)
    click.echo(
        f"forgot {counted(len(plan.sessions), 'session')} "
        f"({counted(outcome.chunks_deleted, 'chunk')}) in {plan.memory.label}"
    )
    if plan.rule is not None:
        click.echo(f"rule kept: later sessions {plan.rule.label} are never stored")
    for report in outcome.remote_reports:
        if report.commit is None:
            click.echo(f"{report.remote} holds none of the forgotten sessions")
        else:
            click.echo(
                f"deleted {counted(report.rows_deleted, 'chunk')} on {report.remote} (commit "
                f"{report.commit[:12]}; {counted(report.remote_chunks, 'chunk')} there now)"
            )
    for remote, (n, chunks) in sorted(outcome.copies_left.items()):
        click.echo(
            f"{remote} still holds {counted(n, 'forgotten session')} ({counted(chunks, 'chunk')}): "
            f"funes forget --remote {remote}",
        )


def _describe(console: Console, plan: ForgetPlan) -> None:
    for session in plan.sessions[:SHOWN]:
        console.print(f"  {session}", highlight=False, markup=False)
    if len(plan.sessions) > SHOWN:
        console.print(f"  … and {len(plan.sessions) - SHOWN} more", highlight=False)
    console.print(
        f"forget {counted(len(plan.sessions), 'session')} ({counted(plan.chunks, 'chunk')}) "
        f"from {plan.memory.label}",
        highlight=False,
        markup=False,
    )
    if plan.already:
        console.print(
            f"  already forgotten: {', '.join(plan.already)}", highlight=False, markup=False
        )
    if plan.rule is not None:
        console.print(f"  and every later session {plan.rule.label}", highlight=False, markup=False)
    held = {remote for _, remote, _ in plan.copies}
    for label in sorted(held - {r.label for r in plan.remotes}):
        n = sum(1 for _, r, _ in plan.copies if r == label)
        console.print(
            f"  {label} holds {n} of them and is not changed (add --remote to delete there)",
            highlight=False,
            markup=False,
        )
    for remote in plan.remotes:
        console.print(
            f"  and a new commit on {remote.label} deletes every forgotten session there",
            highlight=False,
            markup=False,
        )
