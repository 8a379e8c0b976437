"""The agent format: the stable, line-oriented output coding agents parse (see AGENTS.md).

Byte-stable and golden-tested. Per recall hit:

    [<ts>] <harness> <workdir>/<session8> <block_type>  score=<s.sss>
      → get <session_id> <turn_id> --memory <label>
    <the full chunk text>
      ~ [<role> <block_type> seq<N>] <neighbor text, first 160 characters, on one line>
    ---

The `→ get` arguments are shell-quoted (`shlex.quote`): ordinary ids and labels print as they
are, and an id holding spaces, quotes or `$(…)` pastes into a shell as one inert argument.
`no results` when nothing matched. Per `get` turn:

    [<ts>] <role> seq<N> turn=<turn_id>
    <blocks, separated by blank lines>
    ---
"""

from __future__ import annotations

import shlex

from funes.commands import BindingStatus, GetOutcome, RecallOutcome, StatusReport
from funes.traces import strip_terminal_controls

NEIGHBOR_CHARS = 160


def _one_line(text: str) -> str:
    return " ".join(text.split())


def recall(outcome: RecallOutcome) -> str:
    hits = outcome.result.hits
    if not hits:
        return "no results\n"
    lines: list[str] = []
    for hit in hits:
        c = hit.chunk
        lines.append(
            f"[{c.ts}] {c.harness} {c.workdir}/{c.session_id[:8]} {c.block_type}  score={hit.score:.3f}"
        )
        label = outcome.memory_of(c.id)
        args = " ".join(map(shlex.quote, (c.session_id, c.turn_id, "--memory", label)))
        lines.append(f"  → get {args}")
        lines.append(strip_terminal_controls(c.text))
        for n in hit.neighbors:
            preview = _one_line(strip_terminal_controls(n.text))[:NEIGHBOR_CHARS]
            lines.append(f"  ~ [{n.role} {n.block_type} seq{n.seq}] {preview}")
        lines.append("---")
    return "\n".join(lines) + "\n"


def get(outcome: GetOutcome) -> str:
    if not outcome.turns:
        return ""
    lines: list[str] = []
    for turn in outcome.turns:
        lines.append(f"[{turn.ts}] {turn.role} seq{turn.seq} turn={turn.turn_id}")
        # Rows stored before control sequences were stripped at index time are cleaned here too.
        lines.append(strip_terminal_controls("\n\n".join(turn.blocks)))
        lines.append("---")
    return "\n".join(lines) + "\n"


def not_found(outcome: GetOutcome) -> str:
    return f"turn {outcome.turn_id} not found in session {outcome.session_id}"


def _binding_line(b: BindingStatus) -> str:
    """`binding <agent>: <memory>; …` (see AGENTS.md, status)."""
    line = f"binding {b.agent}: {b.memory}"
    if not b.shared:
        return line
    if b.last_push_at:
        line += (
            f"; last push {b.last_push_at} commit {(b.last_push_commit or '?')[:12]} "
            f"({b.last_pushed} chunks sent, {b.last_held_back} held back)"
        )
    else:
        line += "; never pushed"
    if b.pending_chunks is not None:
        line += f"; {b.pending_chunks} chunks in {b.pending_sessions} sessions not pushed"
    if b.state == "parked":
        line += f"; parked: {b.reason}; fix: {b.fix}"
    elif b.state == "retrying":
        line += f"; retrying (attempt {b.attempts + 1} at {b.next_try_at}): {b.reason}"
    elif b.state == "waiting":
        line += "; push waiting"
    return line


def status(report: StatusReport) -> str:
    lines = [f"memory: {report.memory}"]
    stats = report.stats
    if not report.exists or stats is None:
        lines.append("chunks: 0  sessions: 0  (no memory yet)")
    else:
        lines.append(f"chunks: {stats.chunks}  sessions: {stats.sessions}")
        for harness, (sessions, chunks) in sorted(stats.per_harness.items()):
            lines.append(f"  {harness}: {sessions} sessions, {chunks} chunks")
        lines.append(f"last indexed: {stats.last_indexed or 'never'}")
        vectors = stats.vector_element or "none"
        lines.append(f"embedder: {stats.model_id or 'none'}  (vectors: {vectors})")
        lines.append(f"size: {stats.file_bytes} bytes")
        if report.push_held_back is not None:
            lines.append(f"push: {report.push_held_back} chunks held back by the secrets gate")
    lines.append(f"reranker: {report.reranker}")
    for source in report.sources:
        lines.append(
            f"source {source.harness}: {source.units} session files, {source.owed} not indexed"
        )
    for a in report.agents:
        hook = "installed" if a.hook_installed else "not installed"
        mcp = "registered" if a.mcp_registered else "not registered"
        lines.append(
            f"agent {a.agent}: hook {hook}, last fired {a.last_fired or 'never'}, "
            f"waiting {a.waiting}, failed {a.failed}, mcp {mcp}"
        )
    for b in report.bindings:
        lines.append(_binding_line(b))
    for c in report.curation:
        lines.append(
            f"project {c.project} → {c.memory}: {c.included} sessions included, "
            f"{c.excluded} excluded, {c.pending} waiting for review"
        )
    for push in report.pushes:
        lines.append(
            f"pushed to {push.remote}: {push.published} chunks as of commit {push.commit[:12]} "
            f"({push.checked_at}); {push.pending_chunks} chunks in {push.pending_sessions} sessions not pushed"
        )
    for item in report.attention:
        lines.append(f"attention: {item}")
    for step in report.next_steps:
        lines.append(f"next: {step}")
    return "\n".join(lines) + "\n"
