"""Writing one read of a unit so that re-reading converges on what the readers say now.

A unit is read again when it grew, when a file it takes text from appeared, or when the
readers changed (`READER_VERSION` in its signature). The read produces every chunk of the unit
(all block types: ids are cheap), and each is compared with what is stored under its id:

* not stored → written, when its block type is one this pass writes (the tiers);
* stored, same text and provenance → left alone;
* stored, other text (or harness/block type) → rewritten in place; its vector is dropped and
  owed again (store `vectors_owed`: the backfill after the read embeds it);
* stored, other provenance only (seq, role, flags, cwd, model, label, …) → updated in place,
  its vector kept — unless the embedding context of its exchange moved: once a user prompt
  of a session changed text or flags, or any chunk of it changed position, every later
  assistant/tool chunk of that session is embedded again (`prompt-context/1` puts the prompt
  in front of them);
* stored under the same id by another file that still exists and would still store it so
  (two copies of one transcript, two Hermes homes outside the profile layout) → left to that
  file, never overwritten. (A Hermes profile's session that an earlier release stored under
  its bare id is no longer that profile's: it is taken over.)

Then what an earlier read stored for the turns this read produced, from the same file, under
ids this read no longer produces (a sidechain turn that moved to its own session, a Hermes
profile's session renamed) is deleted, for the block types this pass writes. Turns the read no
longer produces at all are kept: a memory outlives its transcripts.

Replays (Claude Code): a record whose uuid another session already stores from another file
(`--resume` copies, `aside_question` subagents) is not stored again; its position in this
session links to the holder, so `get` shows it in context. The first stored copy wins.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from funes.chunks import Chunk
from funes.store import Held
from funes.traces import BlockType, Harness, Role, Turn, names_session, printable

if TYPE_CHECKING:
    from funes.ingest.indexing import IndexJob, IndexReport

# Parquet imports number turns per session ("0", "1", …): a turn id is not one record there.
_NO_SUPERSEDE = frozenset({Harness.PARQUET})


@dataclass(slots=True)
class UnitWriter:
    """Accumulates one unit's chunks and writes them in batches (see the module docstring)."""

    job: IndexJob
    report: IndexReport
    types: frozenset[BlockType]  # block types this pass writes when they are new
    first_read: bool = True  # the first read at this signature (False: a later tier pass)
    stored: Callable[[], None] | None = None  # called after each batch is committed
    pending: list[Chunk] = field(default_factory=list)
    produced: set[str] = field(default_factory=set)
    turns: dict[str, set[str]] = field(default_factory=dict)  # source path → turn ids read
    dirty: set[str] = field(default_factory=set)  # sessions whose embedding contexts moved
    links: list[tuple[str, int, str, str]] = field(default_factory=list)
    unlinks: dict[str, list[str]] = field(default_factory=dict)
    written: int = 0
    rewritten: dict[str, set[tuple[str, int, str, int]]] = field(default_factory=dict)
    own: dict[str, int | None] = field(default_factory=dict)  # session id → its key
    # (session id, turn id, block index) → secrets redacted in that block, not yet counted
    findings: dict[tuple[str, str, int], int] = field(default_factory=dict)
    links_of: dict[str, set[str]] = field(default_factory=dict)  # session id → linked turns

    def add(
        self, turn: Turn, chunks: Iterable[Chunk], findings: Mapping[int, int] | None = None
    ) -> None:
        """The chunks of one turn, every block type; `findings`: {block index: secrets
        redacted in that block}, added to `report.redactions` once a chunk of the block is
        stored (written or its text rewritten), so secrets of chunks not stored (a forgotten
        session's, or ones stored before) are not counted."""
        items = list(chunks)
        if not items:
            return
        first = items[0]
        for idx, n in (findings or {}).items():  # keyed as the chunks name the turn
            self.findings[(first.session_id, first.turn_id, idx)] = n
        source = first.source_path
        if turn.harness not in _NO_SUPERSEDE:
            self.turns.setdefault(source, set()).add(items[0].turn_id)
        if turn.harness is Harness.CLAUDE_CODE and self._replayed(items[0]):
            return
        for chunk in items:
            self.produced.add(chunk.id)
            self.pending.append(chunk)
        if len(self.pending) >= _FLUSH:
            self.flush()

    def _links(self, session: str) -> set[str]:
        """Turn ids `session` shows through links, read once per unit (its key beside them,
        in `own`)."""
        if session not in self.links_of:
            self.links_of[session] = self.job.store.linked(session)
            self.own[session] = self.job.store.session_key(session)
        return self.links_of[session]

    def knows(self, turn: Turn) -> bool:
        """Whether the memory holds anything of `turn` that this read must compare: a chunk of
        it in its own session (stored under an id this read makes: ids hash session and turn
        ids, whichever file stored them), a link of its session to it, or, for Claude Code,
        a chunk of its turn id in any session (a replay's holder). A turn it does not know
        has nothing stored under any id this read makes, so the first read may chunk and
        redact only the block types it writes; a later tier pass makes the rest. Read before
        the turn's chunks are added."""
        session, turn_id = printable(turn.session_id), printable(turn.turn_id)
        store = self.job.store
        if turn_id in self._links(session):
            return True
        holders = store.turn_sessions(turn_id)
        if turn.harness is Harness.CLAUDE_CODE:
            return bool(holders)
        if self.own[session] is None:  # a session this read is storing gets its key now
            self.own[session] = store.session_key(session)
        return self.own[session] in holders

    def _replayed(self, first: Chunk) -> bool:
        """Whether another session, read from another file, stored this turn first: then
        this position links to it and this read stores no copy. A later tier pass of the same
        read trusts the links the first pass recorded, except for a turn this session holds
        nothing of yet: a tool call or output record has no block the prose pass chunks, so
        that pass could neither link it nor see its holder (which stores it in this pass)."""
        store = self.job.store
        session = first.session_id
        linked = first.turn_id in self._links(session)
        if not self.first_read and (
            linked or store.first_rowid(session, first.turn_id) is not None
        ):
            return linked
        holders = store.turn_sessions(first.turn_id)
        if holders and holders != {self.own[session]}:
            found = store.holder(
                first.turn_id,
                harness=first.harness.value,
                session_id=session,
                source_path=first.source_path,
            )
            if found is not None and self._same_record(first, found[1]):
                mine = store.first_rowid(session, first.turn_id)
                if mine is None or mine > found[1]:
                    self.links.append((session, first.seq, first.turn_id, found[0]))
                    return True
        if linked:  # this session stores the turn itself now
            self.unlinks.setdefault(session, []).append(first.turn_id)
        return False

    def _same_record(self, first: Chunk, rowid: int) -> bool:
        """Whether the chunk another session holds at `rowid` (its first of the turn) is this
        turn's first chunk: a replay copies the record, text included. A turn id alone is not
        enough: sources whose ids are not unique across sessions (`turn-1`, `t0`) must never
        lose a turn to another session's."""
        held = self.job.store.fetch([rowid]).get(rowid)
        return held is not None and held.block_idx == first.block_idx and held.text == first.text

    def flush(self) -> None:
        """Compare and write the pending chunks: new ones stored lexical first and rewritten
        ones stripped of their vector, both owed a vector (funes.ingest.indexing embeds what is
        owed after the read, in priority order)."""
        if not self.pending:
            return
        job, report = self.job, self.report
        unique: dict[str, Chunk] = {}
        for c in self.pending:  # one turn repeats an id only through a parser bug
            unique.setdefault(c.id, c)
        self.pending = []
        held = job.store.held(list(unique))
        fresh: list[Chunk] = []
        rewrites: list[tuple[int, Chunk]] = []
        touches: list[tuple[int, Chunk]] = []
        retexted: list[Chunk] = []  # rewrites whose stored text changes
        for c in unique.values():
            h = held.get(c.id)
            if h is None:
                if c.block_type in self.types:
                    fresh.append(c)
                continue
            if h.source_path != c.source_path and _still_theirs(h):
                report.chunks_existing += c.block_type in self.types  # another live file's
                continue
            text_moved, meta_moved = h.differs(c)
            prompt = c.role is Role.USER and c.block_type is BlockType.TEXT
            if h.seq != c.seq or (prompt and (text_moved or h.scaffold != c.scaffold)):
                self.dirty.add(c.session_id)  # later chunks see another prompt, or moved
            context_moved = c.role is not Role.USER and c.session_id in self.dirty
            if text_moved or context_moved:
                rewrites.append((h.rowid, c))
                if text_moved:  # the block may now split into fewer pieces
                    retexted.append(c)
                    self.rewritten.setdefault(c.source_path, set()).add(
                        (c.session_id, c.seq, c.turn_id, c.block_idx)
                    )
            elif meta_moved:
                touches.append((h.rowid, c))
            else:
                report.chunks_existing += c.block_type in self.types
        version = job.scanner.version
        if fresh:
            refused_before = job.store.forgotten_refused
            written = job.store.add(fresh, None, redaction_version=version)
            report.chunks_written += written
            self.written += written
            if job.store.forgotten_refused != refused_before:  # a forgotten session's chunks
                dead, _ = job.store.forgotten_among(fresh)
                fresh = [c for c in fresh if c.session_id not in dead]
            self._count_redactions(fresh)
        if rewrites or touches:
            job.store.reconcile(rewrites=rewrites, touches=touches, redaction_version=version)
            report.chunks_updated += len(rewrites) + len(touches)
            self._count_redactions(retexted)
        if (fresh or rewrites) and self.stored is not None:
            self.stored()

    def _count_redactions(self, stored: Iterable[Chunk]) -> None:
        """Add to the report the secrets redacted in the blocks of `stored` (chunks whose text
        this read stored), each block once."""
        for c in stored:
            n = self.findings.pop((c.session_id, c.turn_id, c.block_idx), 0)
            self.report.redactions += n

    def finish(self) -> None:
        """Flush, then delete what this read superseded and record replay links."""
        self.flush()
        drop: list[int] = []
        types = sorted(t.value for t in self.types)
        for source, turn_ids in self.turns.items():
            drop.extend(
                self.job.store.superseded(
                    source_path=source,
                    turn_ids=sorted(turn_ids),
                    keep=self.produced,
                    block_types=types,
                    blocks=sorted(self.rewritten.get(source, ())),
                )
            )
        if drop or self.links or self.unlinks:
            self.job.store.reconcile(
                drop=drop,
                links=self.links,
                unlinks=list(self.unlinks.items()),
                redaction_version=self.job.scanner.version,
            )
        self.report.chunks_superseded += len(drop)


_FLUSH = 256  # chunks accumulated before a compare + write round


def _still_theirs(h: Held) -> bool:
    """Whether the file a stored row came from still exists and would still store it so (a
    Hermes profile's session stored under its bare id by an earlier release is not)."""
    try:
        if not os.path.exists(h.source_path):
            return False
    except (OSError, ValueError):
        return False
    if h.harness == Harness.HERMES.value:
        return names_session(Path(h.source_path), h.session_id)
    return True
