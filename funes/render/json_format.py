"""The JSON format (`--json`): one document per command, for scripts. Versioned, see AGENTS.md.

Every document carries `"schema": "funes.<command>/<version>"`. Within a version, keys are
only ever added, never removed, renamed or given another meaning; a change that would do so
bumps the version. Text is the stored text, verbatim (JSON escaping makes it inert). Outside
ASCII, the characters that reorder or break what a terminal shows (bidirectional overrides and
isolates, U+2028/U+2029) are written as `\\uXXXX` escapes: the same data to a JSON reader,
inert on a terminal. A lone UTF-16 surrogate (a command-line argument that was not UTF-8: its
bytes arrive as surrogate escapes) is written as U+FFFD, as stored text has it: the document is
always valid UTF-8.
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any

from funes.store import StoredChunk
from funes.traces import strip_terminal_controls

if TYPE_CHECKING:  # annotations only: rendering one verb loads no other verb's module
    from funes.commands import GetOutcome, RecallOutcome, SessionsOutcome, StatusReport

RECALL_SCHEMA = "funes.recall/1"
GET_SCHEMA = "funes.get/1"
STATUS_SCHEMA = "funes.status/1"
SESSIONS_SCHEMA = "funes.sessions/1"


_SHOWN_OTHERWISE = re.compile("[\u2028\u2029\u202a-\u202e\u2066-\u2069]")
_SURROGATE = re.compile("[\ud800-\udfff]")


def _dump(document: dict[str, Any]) -> str:
    text = json.dumps(document, ensure_ascii=False, indent=2) + "\n"
    if text.isascii():
        return text
    text = _SURROGATE.sub("\ufffd", text)
    return _SHOWN_OTHERWISE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def _chunk(c: StoredChunk) -> dict[str, Any]:
    return {
        "chunk_id": c.id,
        "session_id": c.session_id,
        "turn_id": c.turn_id,
        "seq": c.seq,
        "ts": c.ts,
        "harness": c.harness,
        "workdir": c.workdir,
        "cwd": c.cwd,
        "git_branch": c.git_branch,
        "host": c.host,
        "role": c.role,
        "block_type": c.block_type,
        "tool_name": c.tool_name,
        "block_idx": c.block_idx,
        "split_idx": c.split_idx,
        "scaffold": c.scaffold,
        "text": strip_terminal_controls(c.text),
    }


def recall(outcome: RecallOutcome, query: str, *, weak: bool = False) -> str:
    """`supported` false: nothing reached the support threshold, and `hits` is empty unless
    `weak` (`--all`) asks for the weak candidates."""
    result = outcome.result
    shown = result.hits if result.supported or weak else []
    hits = []
    for rank, hit in enumerate(shown, 1):
        c = hit.chunk
        hits.append(
            {
                "rank": rank,
                "score": round(hit.score, 6),
                **_chunk(c),
                "session_label": c.session_label,
                "model": c.model,
                "memory": outcome.memory_of(c.id),
                "get": [
                    "funes",
                    "get",
                    c.session_id,
                    c.turn_id,
                    "--memory",
                    outcome.memory_of(c.id),
                ],
                "also": [
                    {"session_id": d.session_id, "turn_id": d.turn_id} for d in hit.duplicates
                ],
                "neighbors": [
                    {k: v for k, v in _chunk(n).items() if k in _NEIGHBOR_KEYS}
                    for n in hit.neighbors
                ],
            }
        )
    return _dump(
        {
            "schema": RECALL_SCHEMA,
            "query": query,
            "memory": outcome.memory,
            "owner": outcome.owner,
            "notes": list(outcome.result.notes),
            "supported": result.supported,
            "support": None if result.support is None else round(result.support, 6),
            "min_support": None if result.min_support is None else round(result.min_support, 6),
            "hits": hits,
        }
    )


_NEIGHBOR_KEYS = ("chunk_id", "turn_id", "seq", "ts", "role", "block_type", "tool_name", "text")


def get(outcome: GetOutcome) -> str:
    return _dump(
        {
            "schema": GET_SCHEMA,
            "memory": outcome.memory,
            "owner": outcome.owner,
            "session_id": outcome.session_id,
            "turn_id": outcome.turn_id,
            "found": bool(outcome.turns),
            "session_found": outcome.session_found,
            "turns": [
                {
                    "turn_id": t.turn_id,
                    "seq": t.seq,
                    "ts": t.ts,
                    "role": t.role,
                    "blocks": [strip_terminal_controls(b) for b in t.blocks],
                }
                for t in outcome.turns
            ],
        }
    )


def sessions(outcome: SessionsOutcome) -> str:
    page = outcome.page
    return _dump(
        {
            "schema": SESSIONS_SCHEMA,
            "memory": outcome.memory,
            "owner": outcome.owner,
            "total": page.total,
            "offset": page.offset,
            "limit": outcome.limit,
            "more": page.more,
            "sessions": [
                {
                    "session_id": s.session_id,
                    "harness": s.harness,
                    "cwd": s.cwd,
                    "workdir": s.workdir,
                    "host": s.host,
                    "started": s.started,
                    "ended": s.ended,
                    "turns": s.turns,
                    "chunks": s.chunks,
                    "first_turn": s.first_turn,
                    "opening": strip_terminal_controls(s.opening),
                }
                for s in page.sessions
            ],
        }
    )


def status(report: StatusReport) -> str:
    stats = report.stats
    return _dump(
        {
            "schema": STATUS_SCHEMA,
            "memory": report.memory,
            "exists": report.exists,
            "unreadable": report.unreadable,
            "chunks": stats.chunks if stats else 0,
            "sessions": stats.sessions if stats else 0,
            "per_harness": {
                h: {"sessions": n_sessions, "chunks": n_chunks}
                for h, (n_sessions, n_chunks) in sorted(
                    (stats.per_harness if stats else {}).items()
                )
            },
            "last_indexed": stats.last_indexed if stats else None,
            "embedder": stats.model_id if stats else None,
            "vector_element": stats.vector_element if stats else None,
            "size_bytes": stats.file_bytes if stats else None,
            "path": report.path,
            "without_vectors": report.unembedded,
            "owed": None
            if report.owed is None
            else {
                "complete": report.owed.complete,
                "chunks": dict(
                    zip(("text", "tool_use", "tool_result"), report.owed.chunks, strict=True)
                ),
                "session_files": dict(
                    zip(("text", "tool_use", "tool_result"), report.owed.units, strict=True)
                ),
            },
            "reranker": report.reranker,
            "remote_commit": report.remote_commit,
            "push_held_back": report.push_held_back,
            "rescan_owed": report.rescan_owed,
            "forgotten": {
                "sessions": report.forgotten,
                "rules": list(report.forget_rules),
                "remote_copies": {
                    remote: {"sessions": n, "chunks": chunks}
                    for remote, (n, chunks) in sorted(report.forgotten_copies.items())
                },
            },
            "sources": [
                {"harness": s.harness, "session_files": s.units, "not_indexed": s.owed}
                for s in report.sources
            ],
            "agents": [
                {
                    "agent": a.agent,
                    "hook_installed": a.hook_installed,
                    "mcp_registered": a.mcp_registered,
                    "last_fired": a.last_fired,
                    "waiting": a.waiting,
                    "failed": a.failed,
                    "warnings": list(a.warnings),
                }
                for a in report.agents
            ],
            "pushes": [
                {
                    "remote": p.remote,
                    "commit": p.commit,
                    "checked_at": p.checked_at,
                    "published": p.published,
                    "pending_chunks": p.pending_chunks,
                    "pending_sessions": p.pending_sessions,
                    "left_out_chunks": p.left_out_chunks,
                    "left_out_sessions": p.left_out_sessions,
                    "held_back_chunks": p.held_back_chunks,
                    "rewritten_blocks": p.rewritten_blocks,
                }
                for p in report.pushes
            ],
            "attention": list(report.attention),
            "next": list(report.next_steps),
        }
    )
