"""`funes index [PATH]`: index agent sessions into the local memory."""

from __future__ import annotations

import sys
from pathlib import Path

import click
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from funes.cli.common import HarnessType, err_console, memory_option, pass_runtime, resumable
from funes.commands import IndexOutcome, IndexRequest, run_index
from funes.errors import UsageError
from funes.ingest import Progress as IndexProgress
from funes.memory import MemoryKind, MemoryRef, Runtime, parse_memory
from funes.plurals import counted, plural
from funes.settings import INDEX
from funes.traces import MAX_BLOCK_CHARS, STALE_TAIL_S, Harness

TIER_NAMES = ("text", "tool calls", "tool output")


@click.command()
@click.argument("path", required=False)
@click.option(
    "--harness",
    type=HarnessType(),
    help="Only this agent: claude, codex, pi or hermes (parquet: a folder's agent-traces parquet files).",
)
@click.option("--limit", type=click.IntRange(min=0), default=None, help="Index at most N sessions.")
@click.option("--no-thinking", is_flag=True, help="Do not index thinking blocks.")
@click.option("--yes", "-y", is_flag=True, help="No time budget: index everything owed now.")
@click.option(
    "--wait",
    "wait_s",
    type=click.FloatRange(min=0),
    default=INDEX.lock_wait_s,
    show_default=True,
    help="Seconds to wait for another funes process writing the memory (a hook's worker).",
)
@memory_option
@pass_runtime
def index(
    rt: Runtime,
    path: str | None,
    harness: Harness | None,
    limit: int | None,
    no_thinking: bool,
    yes: bool,
    wait_s: float,
    memory: str | None,
) -> None:
    """Index agent sessions (all agents found, or PATH) into the memory.

    Without PATH, sweeps Claude Code, Codex, pi and Hermes sessions (honouring
    CLAUDE_CONFIG_DIR, CODEX_HOME, PI_CODING_AGENT_DIR, HERMES_HOME), prose first, then tool
    calls, then tool output, within about a minute unless --yes. PATH may be a transcript,
    a directory of transcripts, a Hermes state.db, an agent-traces .parquet file, or a Hugging
    Face dataset of agent-traces Parquet files (org/repo or hf://datasets/org/repo[@commit]:
    fetched into the HF cache; a file already indexed is not read again).
    """
    console = err_console()
    local, dataset = _source(rt, path)
    request = IndexRequest(
        path=local,
        dataset=dataset,
        harness=harness,
        limit=limit,
        include_thinking=not no_thinking,
        unbudgeted=yes,
        lock_wait_s=wait_s,
    )
    ref = parse_memory(memory, rt)
    # each unit is recorded once its chunks are committed, and vectors stay owed until written
    # (funes.ingest.indexing): the next run reads and embeds only what is left
    again = "the same `funes index` again resumes where it stopped"
    with (
        resumable(again),
        Progress(
            TextColumn("[progress.description]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=console,
            transient=True,
            disable=not console.is_terminal,
        ) as bar,
    ):
        tasks: dict[int | str, object] = {}

        def on_progress(event: IndexProgress) -> None:
            if event.tier not in tasks:
                tasks[event.tier] = bar.add_task(
                    f"indexing {TIER_NAMES[min(event.tier, 2)]}", total=event.total
                )
            bar.update(tasks[event.tier], completed=event.done)  # type: ignore[arg-type]

        def on_vectors(done: int, total: int) -> None:
            if "vectors" not in tasks:
                tasks["vectors"] = bar.add_task("embedding", total=total)
            bar.update(tasks["vectors"], completed=done)  # type: ignore[arg-type]

        def on_reembed(done: int, total: int) -> None:
            if "reembed" not in tasks:
                tasks["reembed"] = bar.add_task("re-embedding stored chunks", total=total)
            bar.update(tasks["reembed"], completed=done)  # type: ignore[arg-type]

        def on_wait(wait_s: float) -> None:
            console.print(
                f"another funes process (a hook's worker?) is writing to {ref.label}: waiting up "
                f"to {wait_s:g} s for it (--wait)…",
                highlight=False,
            )

        outcome = run_index(
            rt,
            ref,
            request,
            progress=on_progress,
            vector_progress=on_vectors,
            reembed_progress=on_reembed,
            on_wait=on_wait,
        )
    _summary(console, outcome)
    report = outcome.report
    if report.model_unavailable is not None:  # after what it stored: exit 1, why and what to do
        raise report.model_unavailable
    if path is not None and report.failures and report.units_indexed == 0:
        sys.exit(1)  # nothing of what was asked for could be read


def _source(rt: Runtime, value: str | None) -> tuple[Path | None, MemoryRef | None]:
    """PATH as a local path (when it exists, even as a broken or looping symlink, or looks
    like one) or a Hub dataset."""
    if value is None:
        return None, None
    path = Path(value).expanduser()
    if path.exists() or path.is_symlink() or value.startswith((".", "/", "~")):
        return path, None
    try:
        ref = parse_memory(value, rt)
    except UsageError:
        return path, None
    if ref.kind is MemoryKind.REMOTE:
        return None, ref
    return path, None


def _summary(console: Console, outcome: IndexOutcome) -> None:
    r = outcome.report
    if r.units_seen == 0:
        console.print(
            "no agent sessions found (Claude Code, Codex, pi, Hermes, in their usual homes or "
            "the CLAUDE_CONFIG_DIR / CODEX_HOME / PI_CODING_AGENT_DIR / HERMES_HOME they name); "
            "nothing to index. `funes index PATH` reads a transcript file or folder"
        )
        _reembed_summary(console, outcome)
        return
    parts = [
        f"indexed {counted(r.chunks_written, 'new chunk')} from {r.units_indexed} of "
        f"{counted(r.units_seen, 'session file')}",
        f"({r.units_unchanged} unchanged, {counted(r.turns, 'turn')} read) in {r.elapsed_s:.1f}s",
    ]
    console.print(" ".join(parts), highlight=False)
    if r.per_harness:
        console.print(
            # by the kind of file read (a Parquet export holds several agents' sessions;
            # `funes status` counts the memory's chunks by agent)
            "  new chunks by source format: "
            + ", ".join(f"{h} {n}" for h, n in sorted(r.per_harness.items())),
            highlight=False,
        )
    skipped = r.read
    bad = {
        "corrupt record": skipped.corrupt_records,
        "unknown record": skipped.unknown_records,
        "oversized line": skipped.oversized_records,
    }
    noted = ", ".join(counted(n, what) for what, n in bad.items() if n)
    if noted:
        console.print(f"  skipped: {noted}", highlight=False)
    if skipped.invalid_utf8:
        console.print(
            f"  kept {counted(skipped.invalid_utf8, 'line')} with "
            "invalid UTF-8 (the bad bytes read as �)",
            highlight=False,
        )
    if skipped.cut_blocks:
        console.print(
            f"  cut {counted(skipped.cut_blocks, 'block')} longer than {MAX_BLOCK_CHARS:,} "
            f"characters to the first {MAX_BLOCK_CHARS:,} (the cut is marked in the text)",
            highlight=False,
        )
    if outcome.passed_over:
        n = len(outcome.passed_over)
        console.print(
            f"  passed over {counted(n, '.jsonl file')} that "
            f"{plural(n, 'holds', 'hold')} no transcript funes can read "
            f"(empty, not JSON, or no agent's records): {outcome.passed_over[0]}"
            + (f" and {n - 1} more" if n > 1 else ""),
            highlight=False,
        )
    if skipped.truncated_tail:
        console.print(
            "  a transcript was still being written: its last line is picked up next time",
            highlight=False,
        )
    if skipped.cut_off_files:
        n = skipped.cut_off_files
        console.print(
            f"  {counted(n, 'transcript')} {plural(n, 'ends', 'end')} in a cut-off line, "
            f"unchanged for over {STALE_TAIL_S / 3600:g} h (truncated: a crash or a cut copy): "
            "that line is skipped, the turns before it are indexed",
            highlight=False,
        )
    if r.redactions:
        console.print(f"  redacted {counted(r.redactions, 'secret')}", highlight=False)
    if r.forgotten:
        console.print(
            f"  skipped {counted(r.forgotten, 'chunk')} of forgotten sessions (funes forget)",
            highlight=False,
        )
    if r.vectors_backfilled or r.vectors_owed:
        left = (
            f"; {r.vectors_owed} still owed a vector (the next runs embed them: prose first, "
            "tool calls last)"
            if r.vectors_owed
            else ""
        )
        console.print(
            f"  embedded {counted(r.vectors_backfilled, 'chunk')} that had no vector{left}",
            highlight=False,
        )
    for failure in r.failures:
        console.print(
            f"  [yellow]failed[/]: {failure.key}: {failure.error} (retried next run)",
            highlight=False,
        )
    if r.budget_exhausted:
        left = (
            f"{counted(r.units_pending, 'session file')} not fully indexed yet (prose comes "
            "first, tool calls and output later)"
            if r.units_pending
            else f"every session file is read; {counted(r.vectors_owed, 'chunk')} "
            f"still {plural(r.vectors_owed, 'owes', 'owe')} a vector"
        )
        console.print(
            f"  time budget reached: {left}; run `funes index --yes` to finish",
            highlight=False,
        )
    _reembed_summary(console, outcome)
    drain = outcome.drain
    if drain is not None and (drain.entries or drain.parked or drain.busy):
        line = (
            f"  spool: {counted(drain.acked, 'hook entry', 'hook entries')} done, "
            f"{drain.retried + drain.released} left, {drain.parked} failed"
        )
        console.print(
            line + (" (a hook worker is draining it)" if drain.busy else ""), highlight=False
        )
    if not outcome.vectors:
        console.print(
            f"  [yellow]warning[/]: vector search unavailable ({outcome.vectors_note}); lexical only",
            highlight=False,
        )


def _reembed_summary(console: Console, outcome: IndexOutcome) -> None:
    upgraded = outcome.reembed
    if upgraded is None:
        return
    state = (
        f"the memory now embeds with `{upgraded.target}`"
        if upgraded.finished
        else f"{upgraded.pending} left: the next `funes index` goes on (or `funes index --yes`)"
    )
    console.print(
        f"  re-embedded {counted(upgraded.chunks, 'stored chunk')} from the `{upgraded.source}` "
        "recipe of an "
        f"older funes in {upgraded.elapsed_s:.1f}s; {state}",
        highlight=False,
    )
