"""`funes curate MEMORY [OWNER/NAME]`: choose which of this host's sessions a project memory gets."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from funes.cli.common import err_console, pass_runtime
from funes.commands import CurateOutcome, SessionCard, add_target, curate_decide, curate_review
from funes.errors import UsageError
from funes.memory import Runtime
from funes.plurals import counted
from funes.traces import strip_terminal_controls

PROMPT_CHARS = 200  # characters of each opening prompt shown in a review


@click.command()
@click.argument("memory")
@click.argument("project", required=False, metavar="[OWNER/NAME]")
@click.option(
    "--include",
    "include",
    multiple=True,
    metavar="SESSION",
    help="Publish this session to the memory (id or unique prefix; repeat for more).",
)
@click.option(
    "--exclude",
    "exclude",
    multiple=True,
    metavar="SESSION",
    help="Never publish this session to the memory (id or unique prefix; repeat for more).",
)
@pass_runtime
def curate(
    rt: Runtime,
    memory: str,
    project: str | None,
    include: tuple[str, ...],
    exclude: tuple[str, ...],
) -> None:
    """Choose which of this host's sessions the project memory MEMORY receives.

    The sessions whose checkout has a git remote of OWNER/NAME (default: the project this
    memory was curated for, else the git remote of the current directory) are reviewed: at a
    terminal one by one, each with the prompts that opened it; in scripts with --include and
    --exclude. The decisions are this host's, in a text file under funes' data directory;
    from the first `funes curate`, a push to MEMORY (also at a session boundary of an agent
    bound to it) sends only the included sessions. Prints every reviewed session: `<include|exclude|pending> <session id>
    <started> <agent> <cwd>  <first prompt>`.
    """
    ref = add_target(rt, memory)
    if not ref.shared:
        raise UsageError(
            f"{memory} is a local memory file: a project memory is shared",
            hint="curate org/repo, hf://datasets/org/repo or a shared directory",
        )
    console = err_console()
    outcome = curate_review(rt, ref, project, cwd=Path.cwd())
    decisions = {s: "include" for s in include} | {s: "exclude" for s in exclude}
    if not decisions and outcome.pending and sys.stdin.isatty() and sys.stderr.isatty():
        decisions = _interview(outcome)
    # written even with no decision: from now on the memory is this project's, and a push to
    # it sends nothing that was not reviewed
    outcome = curate_decide(rt, outcome, decisions)
    for card in outcome.cards:
        click.echo(_line(card))
    console.print(
        f"{outcome.project} → {outcome.memory}: {outcome.count('include')} included, "
        f"{outcome.count('exclude')} excluded, {len(outcome.pending)} waiting for review "
        f"(decisions: {outcome.path})",
        highlight=False,
    )
    included = outcome.count("include")
    if outcome.new or not included:
        # the memory's rule, said when it starts to hold and while it keeps everything back
        console.print(
            f"funes: from now on a push to {outcome.memory} (by hand or at a session boundary) "
            f"sends only the sessions of {outcome.project} marked include: {included} of this "
            f"host's {counted(outcome.host_sessions, 'session')}",
            highlight=False,
        )
    if not included and not any(c.attributed for c in outcome.cards):
        console.print(
            f"funes: warning: none of this host's sessions ran in a checkout with a git remote "
            f"of {outcome.project}; include sessions by id with --include <session>",
            highlight=False,
        )
    if outcome.pending or not included:
        console.print(
            f"  next: funes curate {memory} --include <session>  (or --exclude <session>)",
            highlight=False,
        )


def _line(card: SessionCard) -> str:
    first = " ".join(strip_terminal_controls(card.prompts[0]).split())[:120] if card.prompts else ""
    decision = card.decision or "pending"
    return (
        f"{decision} {card.session_id} {card.started or '-'} {card.harness or '-'} "
        f"{card.cwd or '-'}  {first}"
    ).rstrip()


def _interview(outcome: CurateOutcome) -> dict[str, str]:
    """Ask about each pending session at the terminal (y include, n exclude, s skip, q stop)."""
    out: dict[str, str] = {}
    pending = outcome.pending
    for i, card in enumerate(pending, 1):
        click.echo(
            f"\n[{i}/{len(pending)}] {card.started or '-'}  {card.harness}  {card.cwd or '-'}  "
            f"{card.session_id}  ({counted(card.turns, 'turn')})",
            err=True,
        )
        for prompt in card.prompts:
            text = " ".join(strip_terminal_controls(prompt).split())
            click.echo(f"  > {text[:PROMPT_CHARS]}", err=True)
        answer = click.prompt(
            f"Publish this session to {outcome.memory}? [y]es / [n]o / [s]kip / [q]uit",
            type=click.Choice(["y", "n", "s", "q"]),
            default="s",
            show_choices=False,
            err=True,
        )
        if answer == "q":
            break
        if answer in ("y", "n"):
            out[card.session_id] = "include" if answer == "y" else "exclude"
    return out
