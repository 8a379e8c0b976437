"""Rich renderings for a person at a terminal. Unstable by design: never parse them."""

from __future__ import annotations

import shlex
from typing import TYPE_CHECKING

from rich.console import Group, RenderableType
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from funes.commands import no_support_line
from funes.plurals import counted
from funes.render.agent import session_label
from funes.traces import one_line, strip_terminal_controls

if TYPE_CHECKING:  # annotations only: rendering one verb loads no other verb's module
    from funes.commands import GetOutcome, RecallOutcome, SessionsOutcome, StatusReport


def recall(outcome: RecallOutcome, *, weak: bool = False) -> Group:
    """One panel per hit: where it comes from, the passage, its neighbours, the get command.
    When no passage supports the query, the miss line alone (`weak`: then the candidates)."""
    hits = outcome.result.hits
    if not hits:
        return Group(Text("no results", style="dim"))
    parts: list[RenderableType] = []
    if not outcome.result.supported:
        parts.append(Text(no_support_line(outcome, weak=weak), style="yellow"))
        if not weak:
            return Group(*parts)
    if outcome.owner:
        parts.append(
            Text(
                f"⚠ {outcome.memory} belongs to {outcome.owner}: passages written by others",
                style="yellow",
            )
        )
    for rank, hit in enumerate(hits, 1):
        c = hit.chunk
        body = Text(strip_terminal_controls(c.text))
        for n in hit.neighbors:
            preview = " ".join(strip_terminal_controls(n.text).split())[:160]
            body.append(f"\n  ~ {n.role} {n.block_type}: {preview}", style="dim")
        when = c.ts[:16].replace("T", " ") or "no time"
        # the score first: a narrow terminal cuts a panel title's tail, never its head
        fields = (c.harness, c.block_type, c.cwd or c.workdir)  # a foreign memory's: anything
        title = f"{rank}. {hit.score:.2f} · {one_line(when)} · " + " · ".join(map(one_line, fields))
        label = outcome.memory_of(c.id)
        short = session_label(c.session_label, c.session_id)
        command = f"funes get {shlex.quote(short)} {shlex.quote(c.turn_id)}" + (
            f" --memory {shlex.quote(label)}" if label != "local" else ""
        )
        # Text, not str: rich would read `[...]` in a path as markup
        parts.append(Panel(body, title=Text(title), title_align="left"))
        # below the panel (a border title or subtitle is cut to fit), on one line however
        # narrow the terminal: a line rich folded was copied with a line break inside the
        # command; one longer than the terminal is wrapped by the terminal, and copies whole
        parts.append(Text(f"  → {command}", style="dim", no_wrap=True, overflow="ignore"))
    return Group(*parts)


def get(outcome: GetOutcome, *, highlight: str | None = None) -> Group:
    parts = []
    for turn in outcome.turns:
        body = Text(strip_terminal_controls("\n\n".join(turn.blocks)))
        if highlight:
            body.highlight_words(highlight.split(), style="reverse", case_sensitive=False)
        title = f"{turn.ts[:16].replace('T', ' ')} · {turn.role} · seq{turn.seq}"
        style = "bold" if turn.turn_id == outcome.turn_id else "dim"
        parts.append(Panel(body, title=Text(title), title_align="left", border_style=style))
    return Group(*parts)


def status(report: StatusReport) -> Group:
    table = Table(show_header=False, box=None)
    table.add_row("memory", Text(report.memory))
    stats = report.stats
    if stats is not None:
        table.add_row("chunks", f"{stats.chunks:,}")
        table.add_row("sessions", f"{stats.sessions:,}")
        for harness, (sessions, chunks) in sorted(stats.per_harness.items()):
            table.add_row(
                f"  {harness}",
                f"{counted(sessions, 'session', grouped=True)} · "
                f"{counted(chunks, 'chunk', grouped=True)}",
            )
        table.add_row("last indexed", stats.last_indexed or "never")
        table.add_row("embedder", stats.model_id or "none")
        if report.path:
            table.add_row(
                "path", Text(f"{report.path} ({counted(stats.file_bytes, 'byte', grouped=True)})")
            )
        if report.unembedded:
            table.add_row("without vectors", counted(report.unembedded, "chunk", grouped=True))
        if report.owed is not None and report.owed.total:
            from funes.render.agent import owed_line

            table.add_row("owed", Text(owed_line(report.owed)))
        if report.push_held_back is not None:
            table.add_row(
                "push",
                f"{counted(report.push_held_back, 'chunk', grouped=True)} held back (secrets)",
            )
    elif report.unreadable:
        table.add_row("chunks", "? (the memory cannot be read: see attention)")
    else:
        table.add_row("chunks", "0 (no memory yet)")
    table.add_row("reranker", report.reranker)
    for source in report.sources:
        table.add_row(
            f"source {source.harness}",
            f"{counted(source.units, 'file')} · {source.owed} not indexed",
        )
    for a in report.agents:
        fired = a.last_fired.replace("T", " ")[:16] if a.last_fired else "never"
        hook = "hook ✓" if a.hook_installed else "hook ✗"
        table.add_row(
            f"agent {a.agent}",
            f"{hook} · last fired {fired} · {a.waiting} waiting · {a.failed} failed",
        )
    for b in report.bindings:
        value = b.memory
        if b.shared:
            last = (
                f"last push {b.last_push_at[:16].replace('T', ' ')}"
                if b.last_push_at
                else "never pushed"
            )
            pending = f" · {b.pending_chunks:,} not pushed" if b.pending_chunks is not None else ""
            if b.left_out_chunks:
                pending += f" · {b.left_out_chunks:,} not included"
            if b.held_back_chunks:
                pending += f" · {b.held_back_chunks:,} held back for secrets"
            value += f" · {last}{pending} · {b.state}"
            if b.state == "parked":
                value += f" ({b.reason}; fix: {b.fix})"
        table.add_row(f"bound {b.agent}", value)
    for c in report.curation:
        table.add_row(
            f"project {c.project}",
            f"{c.memory} · {c.included} included · {c.excluded} excluded · {c.pending} to review",
        )
    for push in report.pushes:
        table.add_row(
            f"pushed {push.remote}",
            f"{counted(push.published, 'chunk', grouped=True)} · "
            f"{push.pending_chunks:,} not pushed "
            f"({counted(push.pending_sessions, 'session')})"
            + (
                f" · {push.left_out_chunks:,} not included "
                f"({counted(push.left_out_sessions, 'session')})"
                if push.left_out_chunks
                else ""
            )
            + (
                f" · {push.held_back_chunks:,} held back for secrets"
                if push.held_back_chunks
                else ""
            )
            + (
                f" · {push.rewritten_blocks:,} rewritten since pushed"
                if push.rewritten_blocks
                else ""
            ),
        )
    parts: list[RenderableType] = [table]
    for item in report.attention:
        parts.append(Text(f"⚠ {item}", style="yellow"))
    for step in report.next_steps:
        parts.append(Text(f"→ {step}", style="cyan"))
    return Group(*parts)


def sessions(outcome: SessionsOutcome) -> Group:
    page = outcome.page
    table = Table(box=None, header_style="bold")
    for column in ("started", "agent", "session", "turns", "project", "opening prompt"):
        table.add_column(column, overflow="fold" if column == "opening prompt" else "ellipsis")
    for s in page.sessions:
        table.add_row(  # Text cells: rich would read `[...]` in stored strings as markup
            Text(one_line(s.started[:16].replace("T", " "))),
            Text(one_line(s.harness)),
            Text(one_line(session_label(s.label, s.session_id))),
            str(s.turns),
            Text(one_line(s.cwd or s.workdir)),
            Text(" ".join(strip_terminal_controls(s.opening).split())[:120]),
        )
    parts: list[RenderableType] = []
    if outcome.owner:
        parts.append(Text(f"⚠ {outcome.memory} belongs to {outcome.owner}", style="yellow"))
    shown = f"{page.offset + 1}-{page.offset + len(page.sessions)}" if page.sessions else "none"
    parts += [table, Text(f"{shown} of {counted(page.total, 'session')}", style="dim")]
    if page.more:
        parts.append(Text(f"→ more: --offset {page.offset + len(page.sessions)}", style="cyan"))
    return Group(*parts)
