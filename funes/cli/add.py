"""`funes add <agent> [memory]`: index every turn automatically, and bind the agent to a memory."""

from __future__ import annotations

import sys

import click
from rich.console import Console

from funes.cli.common import err_console, pass_runtime, report_changes, resumable
from funes.commands import (
    IndexRequest,
    PushRequest,
    add_target,
    check_shared,
    create_shared,
    has_hub_token,
    local_chunks,
    personal_memory,
    preflight_agent,
    refuse_missing_agent,
    run_add,
    run_index,
    run_push,
)
from funes.errors import PushRefused, UsageError
from funes.memory import MemoryKind, MemoryRef, Runtime, parse_memory, remote_for
from funes.plurals import counted, plural
from funes.remote import RemoteState
from funes.traces import Harness
from funes.wiring import agent_harness


def _interactive() -> bool:
    return sys.stdin.isatty() and sys.stderr.isatty()


def _ask(question: str) -> bool:
    return click.confirm(question, default=False, err=True)


@click.command()
@click.argument("agent")
@click.argument("memory", required=False)
@click.option(
    "--yes",
    "-y",
    is_flag=True,
    help="Do not ask: build the first index now, and publish to a shared memory that shares "
    "no chunks with this host yet (for scripts).",
)
@click.option(
    "--no-index", is_flag=True, help="Only install; build the index later with `funes index`."
)
@click.option(
    "--create",
    is_flag=True,
    help="Create a shared MEMORY that does not exist yet (a private dataset, or the directory).",
)
@click.option(
    "--force",
    is_flag=True,
    help="Prepare the agent's configuration even when the agent is not on this machine.",
)
@pass_runtime
def add(
    rt: Runtime,
    agent: str,
    memory: str | None,
    yes: bool,
    no_index: bool,
    create: bool,
    force: bool,
) -> None:
    """Index every turn of AGENT (claude, codex, pi, hermes) as it completes, and give it recall.

    Installs a hook that notes each finished turn (indexed in the background), registers the
    `funes mcp` server (recall, get, sessions, status) with the agent, and builds the first
    index of the agent's past sessions. Every file it creates, edits or pre-approves (Hermes'
    hook allowlist) is named. On a machine without the agent (no home folder, no program on
    PATH) it changes nothing unless --force.

    MEMORY binds the agent to a memory. A shared one (org/repo, hf://datasets/org/repo, or a
    shared directory) is checked first (it must exist, or be created with --create, and hold
    this host's embedding model), then receives this host's memory (the first push) and,
    from then on, every session's turns at its end; the agent's recall reads it together with
    this host's turns not published yet. Run the same command on another machine to join it.
    A `*.db` file (or a directory holding memory.db) is a local memory the hooks index into.
    """
    harness = agent_harness(agent)
    console = err_console()
    if not force:
        refuse_missing_agent(rt, harness)
    preflight_agent(rt, harness)
    ref = _target(rt, console, harness, memory)
    if ref is not None and ref.shared:
        _prepare_shared(rt, console, ref, create=create)
    _index(rt, console, harness, ref, yes=yes, no_index=no_index)
    if ref is not None and ref.shared:
        _first_push(rt, console, ref, yes=yes)
    changes = run_add(rt, harness, ref, force=True)
    report_changes(console, changes, verb="added to")
    if ref is not None and ref.kind is not MemoryKind.LOCAL:
        console.print(f"  bound to {ref.label}", highlight=False)
        if ref.shared:
            console.print(
                "  every session's turns are published to it when the session ends "
                "(`funes status` shows the last push)",
                highlight=False,
            )


def _target(
    rt: Runtime, console: Console, harness: Harness, memory: str | None
) -> MemoryRef | None:
    """The memory to bind, or None for the local one (offering a personal Hub memory)."""
    if memory is not None:
        return add_target(rt, memory)
    name = harness.agent_name
    if not has_hub_token():
        console.print(
            "  this memory stays on this machine. To recall it on your other machines: "
            f"`hf auth login`, then `funes add {name} <your user>/funes-memory --create`",
            highlight=False,
        )
        return None
    suggestion = personal_memory(rt) if _interactive() else None
    if suggestion is None:
        console.print(
            "  to recall this memory on your other machines: "
            f"`funes add {name} <your user>/funes-memory --create`",
            highlight=False,
        )
        return None
    if _ask(
        f"Publish this memory to a private Hugging Face dataset {suggestion}, so your agents "
        "recall it on your other machines?"
    ):
        ref = parse_memory(suggestion, rt)
        if check_shared(rt, ref) is RemoteState.MISSING:
            create_shared(rt, ref)
            console.print(f"created {ref.label} (private)", highlight=False)
        return ref
    console.print(
        f"  to share this memory across your machines: `funes add {name} {suggestion} --create`",
        highlight=False,
    )
    return None


def _prepare_shared(rt: Runtime, console: Console, ref: MemoryRef, *, create: bool) -> None:
    """Check the shared memory; create it when missing and asked to (nothing installed else)."""
    if check_shared(rt, ref) is not RemoteState.MISSING:
        return
    if not create:
        if not _interactive():
            raise UsageError(
                f"{ref.label} {remote_for(ref).missing}: nothing was installed",
                hint="check the name, or pass --create to create it (private)",
            )
        if not _ask(f"{ref.label} does not exist. Create it (private)?"):
            raise UsageError(f"{ref.label} does not exist: nothing was installed")
    create_shared(rt, ref)
    console.print(f"created {ref.label} (private)", highlight=False)


def _index(
    rt: Runtime,
    console: Console,
    harness: Harness,
    ref: MemoryRef | None,
    *,
    yes: bool,
    no_index: bool,
) -> None:
    if no_index:
        return
    target = ref if ref is not None and not ref.shared else parse_memory(None, rt)
    if (
        not yes
        and _interactive()
        and not click.confirm(
            f"Index {harness.agent_name}'s past sessions now (about a minute)?",
            default=True,
            err=True,
        )
    ):
        return
    # The same first index at a terminal or not: budgeted (prose of every session first, then
    # its vectors, then tool calls and output), never hours; hook workers go on at later turns.
    # before anything is installed (run_add comes after): the same add redoes the rest
    with resumable(
        "nothing was installed yet: the same `funes add` again resumes its indexing where it "
        "stopped"
    ):
        outcome = run_index(rt, target, IndexRequest(harness=harness))
    r = outcome.report
    console.print(
        f"indexed {counted(r.chunks_written, 'chunk')} from "
        f"{counted(r.units_indexed, 'session')} into "
        f"{outcome.memory} in {r.elapsed_s:.0f}s",
        highlight=False,
    )
    missing = r.model_unavailable
    if missing is not None:  # the chunks are stored (BM25 finds them); their vectors wait
        n, it = r.vectors_owed, plural(r.vectors_owed, "it", "them")
        console.print(
            f"  [yellow]warning[/]: no vectors yet: {missing.message}\n"
            f"  {counted(n, 'chunk')} {plural(n, 'has', 'have')} no vector: recall finds {it} "
            f"by {plural(n, 'its', 'their')} words (BM25) now; once the model loads, the hook "
            f"embeds {it} after later turns (`funes index --yes` does it at once)",
            highlight=False,
        )
        if missing.hint:
            console.print(f"  hint: {missing.hint}", highlight=False)
    if r.budget_exhausted or (r.vectors_owed and missing is None):
        console.print(
            f"  {counted(r.units_pending, 'session file')} and {counted(r.vectors_owed, 'vector')} "
            "still to do: the "
            "hook goes on after each turn (`funes index --yes` finishes it now)",
            highlight=False,
        )


def _first_push(rt: Runtime, console: Console, ref: MemoryRef, *, yes: bool) -> None:
    """Publish this host's memory now (the wrong-memory question is asked here, once)."""
    if local_chunks(rt) == 0:
        return
    try:
        report = run_push(
            rt, ref, PushRequest(assume_yes=yes), confirm=_ask if _interactive() else None
        )
    except PushRefused as exc:  # every pending chunk holds a secret: the binding still stands
        console.print(f"  [yellow]warning[/]: {exc.message}", highlight=False)
        if exc.hint:  # what publishes them, as `funes push` says it
            console.print(f"  hint: {exc.hint}", highlight=False)
        return
    if report.held_back:
        n = report.held_back
        console.print(
            f"  [yellow]warning[/]: held back {counted(n, 'chunk')} that "
            f"{plural(n, 'contains', 'contain')} secrets ({plural(n, 'it stays', 'they stay')} "
            f"local; to publish {plural(n, 'it', 'them')}: {report.next_step})",
            highlight=False,
        )
    if report.up_to_date:
        console.print(f"{ref.label} is up to date", highlight=False)
    else:
        console.print(
            f"pushed {counted(report.pushed, 'chunk')} to {ref.label} "
            f"(commit {(report.commit or '')[:12]})",
            highlight=False,
        )
    if report.unembedded:  # a budgeted first index leaves vectors owed: a later push sends them
        n, it = report.unembedded, plural(report.unembedded, "it", "them")
        console.print(
            f"  {counted(n, 'chunk')} {plural(n, 'has', 'have')} no vector yet: the hook embeds "
            f"{it} after later turns and the push at a session's end publishes {it}",
            highlight=False,
        )
