"""SQL of re-reading a unit: what is stored under the ids a read produced, rows to bring up to
date in place, rows a read no longer produces, turns another session already holds.

The rules (what to update, what to delete) live in `funes.ingest.reconcile`; this module only
reads and writes rows. Every write here runs inside the caller's transaction.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from funes.chunks import Chunk
from funes.store.provenance import Keys

_HELD_COLUMNS = (
    "c.rowid, c.id, c.text, c.seq, c.ts, c.role, c.block_type, c.tool_name, c.scaffold, "
    "c.parent_id, o.harness, o.workdir, o.cwd, o.git_branch, o.host, o.source_path, "
    "o.parent_session_id, o.model, s.label, c.redaction_version, s.session_id"
)


@dataclass(frozen=True, slots=True)
class Held:
    """A stored chunk, as a re-read compares it with the chunk it produced under the same id."""

    rowid: int
    id: str
    text: str
    seq: int
    ts: str
    role: str
    block_type: str
    tool_name: str | None
    scaffold: bool
    parent_id: str | None
    harness: str
    workdir: str
    cwd: str | None
    git_branch: str | None
    host: str | None
    source_path: str
    parent_session_id: str | None
    model: str | None
    session_label: str | None
    redaction_version: int
    session_id: str

    def differs(self, c: Chunk) -> tuple[bool, bool]:
        """(its text or vector metadata differ, anything else differs) from chunk `c`."""
        text = (self.text, self.harness, self.block_type) != (
            c.text,
            c.harness.value,
            c.block_type.value,
        )
        rest = (
            self.seq, self.ts, self.role, self.tool_name, self.scaffold, self.parent_id,
            self.workdir, self.cwd, self.git_branch, self.host, self.source_path,
            self.parent_session_id, self.model,
        ) != (
            c.seq, c.ts, c.role.value, c.tool_name, c.scaffold, c.parent_id, c.workdir, c.cwd,
            c.git_branch, c.host, c.source_path, c.parent_session_id, c.model,
        )  # fmt: skip
        label = c.session_label is not None and self.session_label != c.session_label
        return text, rest or label


def held(raw: Any, ids: Sequence[str]) -> dict[str, Held]:
    """The stored chunks among `ids`, keyed by id."""
    out: dict[str, Held] = {}
    for start in range(0, len(ids), 500):
        part = list(ids[start : start + 500])
        marks = ",".join("?" * len(part))
        for row in raw.execute(
            f"""select {_HELD_COLUMNS} from chunks c join origins o on o.id = c.origin
                join sessions s on s.id = c.session where c.id in ({marks})""",
            part,
        ):
            values = list(row)
            values[8] = bool(values[8])
            out[str(values[1])] = Held(*values)
    return out


def superseded(
    raw: Any,
    *,
    source_path: str,
    turn_ids: Sequence[str],
    keep: set[str],
    block_types: Sequence[str],
    blocks: Sequence[tuple[str, int, str, int]] = (),
) -> list[int]:
    """Rowids of chunks read from `source_path` for one of `turn_ids`, of one of `block_types`,
    whose id is not in `keep`: what an earlier read stored for those turns and this read no
    longer produces (the turn moved to another session, a block was split otherwise).

    Found through the per-block turn_id index (a block whose first piece is not kept goes
    whole) and, for `blocks` (session id, seq, turn id, block_idx) whose text was rewritten,
    through the position index (pieces past the new split count).
    """
    out: list[int] = []
    types = list(block_types)
    type_marks = ",".join("?" * len(types))
    gone: list[tuple[int, int, int, str]] = []
    for start in range(0, len(turn_ids), 400):
        part = list(turn_ids[start : start + 400])
        marks = ",".join("?" * len(part))
        for chunk_id, session, seq, block_idx, turn_id in raw.execute(
            f"""select c.id, c.session, c.seq, c.block_idx, c.turn_id from chunks c
                join origins o on o.id = c.origin
                where c.turn_id in ({marks}) and c.split_idx = 0 and o.source_path = ?
                and c.block_type in ({type_marks})""",
            [*part, source_path, *types],
        ):
            if chunk_id not in keep:
                gone.append((int(session), int(seq), int(block_idx), str(turn_id)))
    for session_id, seq, turn_id, block_idx in blocks:
        row = raw.execute("select id from sessions where session_id = ?", (session_id,)).fetchone()
        if row is not None:
            gone.append((int(row[0]), seq, block_idx, turn_id))
    for session, seq, block_idx, turn_id in gone:
        for rowid, chunk_id in raw.execute(
            """select rowid, id from chunks where session = ? and seq = ? and block_idx = ?
               and turn_id = ?""",
            (session, seq, block_idx, turn_id),
        ):
            if chunk_id not in keep:
                out.append(int(rowid))
    return sorted(set(out))


def update(raw: Any, keys: Keys, rowid: int, c: Chunk, *, redaction_version: int) -> None:
    """Bring the stored row `rowid` up to chunk `c` (same id): text, position, flags, origin,
    session label. FTS follows through its trigger when the text changes."""
    origin = keys.origin(
        (
            c.harness.value,
            c.workdir,
            c.cwd,
            c.git_branch,
            c.host,
            c.source_path,
            c.parent_session_id,
            c.model,
        )  # fmt: skip
    )
    session = keys.session(c.session_id, c.session_label)
    current = raw.execute("select text from chunks where rowid = ?", (rowid,)).fetchone()
    if current is not None and current[0] != c.text:
        raw.execute("update chunks set text = ? where rowid = ?", (c.text, rowid))
    raw.execute(
        """update chunks set session = ?, seq = ?, ts = ?, role = ?, block_type = ?,
           tool_name = ?, scaffold = ?, parent_id = ?, origin = ?, redaction_version = ?
           where rowid = ?""",
        (
            session,
            c.seq,
            c.ts,
            c.role.value,
            c.block_type.value,
            c.tool_name,
            int(c.scaffold),
            c.parent_id,
            origin,
            redaction_version,
            rowid,
        ),  # fmt: skip
    )


def holder(
    raw: Any, turn_id: str, *, harness: str, not_session: str, not_source: str
) -> tuple[str, int] | None:
    """(session id, first rowid) of the session that first stored turn `turn_id` of `harness`
    from another file than `not_source`, other than `not_session`; None when none holds it."""
    row = raw.execute(
        """select s.session_id, min(c.rowid) from chunks c
           join sessions s on s.id = c.session join origins o on o.id = c.origin
           where c.turn_id = ? and c.split_idx = 0 and o.harness = ? and s.session_id != ?
           and o.source_path != ?
           group by c.session order by min(c.rowid) limit 1""",
        (turn_id, harness, not_session, not_source),
    ).fetchone()
    return None if row is None else (str(row[0]), int(row[1]))


def turn_sessions(raw: Any, turn_id: str) -> set[int]:
    """The session keys of every session holding turn `turn_id` (the per-block index)."""
    return {
        int(r[0])
        for r in raw.execute(
            "select session from chunks where turn_id = ? and split_idx = 0", (turn_id,)
        )
    }


def linked(raw: Any, session_id: str) -> set[str]:
    """Turn ids `session_id` shows through links to another session."""
    return {
        str(r[0])
        for r in raw.execute(
            """select l.turn_id from turn_links l join sessions s on s.id = l.session
               where s.session_id = ?""",
            (session_id,),
        )
    }


def first_rowid(raw: Any, session_id: str, turn_id: str) -> int | None:
    """The lowest rowid of turn `turn_id` in session `session_id` (None when not stored)."""
    row = raw.execute(
        """select min(c.rowid) from chunks c join sessions s on s.id = c.session
           where s.session_id = ? and c.turn_id = ? and c.split_idx = 0""",
        (session_id, turn_id),
    ).fetchone()
    return None if row is None or row[0] is None else int(row[0])


def link(raw: Any, keys: Keys, *, session_id: str, seq: int, turn_id: str, holder: str) -> None:
    """Record that position `seq` of `session_id` shows turn `turn_id` held by `holder`."""
    raw.execute(
        """insert into turn_links (session, seq, turn_id, holder) values (?, ?, ?, ?)
           on conflict (session, seq) do update set turn_id = excluded.turn_id,
           holder = excluded.holder""",
        (keys.session(session_id), seq, turn_id, keys.session(holder)),
    )


def unlink(raw: Any, *, session_id: str, turn_ids: Sequence[str]) -> None:
    """Forget links of `session_id` to `turn_ids` (the session now stores them itself)."""
    for start in range(0, len(turn_ids), 400):
        part = list(turn_ids[start : start + 400])
        marks = ",".join("?" * len(part))
        raw.execute(
            f"""delete from turn_links where turn_id in ({marks}) and session =
                (select id from sessions where session_id = ?)""",
            [*part, session_id],
        )
