"""SQL for keeping a memory's text free of secrets: per-block listings, in-place rewrites.

Used through `Store` methods (`blocks_for_rescan`, `chunk_texts`, `rewrite_chunks`,
`delete_chunks`, `mark_redaction_version`, `redaction_floor`, `gate_rows`, `purge_freed_text`,
and `rewrite_mark`/`rewritten_blocks`/`trim_rewrite_log` over `chunk_log`, which triggers fill
with the block of every chunk rewritten in place or deleted, schema 7).
FTS rows follow `chunks` through its triggers (update of text → delete + insert in
`chunks_fts`; delete → delete). `purge_freed_text` merges the FTS segments (so deleted terms
leave the index), and with `secure_delete` on and a truncating WAL checkpoint, old text no
longer lies in free pages or the WAL.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

FLOOR_KEY = "redaction_floor"  # meta: every chunk's redaction_version is ≥ this


@dataclass(frozen=True, slots=True)
class BlockRows:
    """The chunks of one block, in split order: rowids, ids and their redaction versions."""

    session_id: str
    turn_id: str
    block_idx: int
    rowids: tuple[int, ...]
    ids: tuple[str, ...]
    versions: tuple[int, ...]


def blocks(raw: Any, *, below_version: int | None) -> list[BlockRows]:
    """Every block (or only those with a chunk below `below_version`), in session order."""
    rows = raw.execute(
        """select rowid, id, session_id, turn_id, block_idx, split_idx, redaction_version
           from chunk_rows order by session_id, turn_id, block_idx, split_idx"""
    ).fetchall()
    out: list[BlockRows] = []
    current: list[tuple[Any, ...]] = []

    def flush() -> None:
        if not current:
            return
        versions = tuple(int(r[6]) for r in current)
        if below_version is None or min(versions) < below_version:
            first = current[0]
            out.append(
                BlockRows(
                    first[2], first[3], int(first[4]),
                    tuple(int(r[0]) for r in current), tuple(r[1] for r in current), versions,
                )
            )  # fmt: skip

    for row in rows:
        if current and (row[2], row[3], row[4]) != (current[0][2], current[0][3], current[0][4]):
            flush()
            current = []
        current.append(tuple(row))
    flush()
    return out


def texts(raw: Any, rowids: list[int]) -> dict[int, str]:
    out: dict[int, str] = {}
    for start in range(0, len(rowids), 500):
        part = rowids[start : start + 500]
        marks = ",".join("?" * len(part))
        for rowid, text in raw.execute(
            f"select rowid, text from chunks where rowid in ({marks})", part
        ):
            out[int(rowid)] = text
    return out


def vector_meta(raw: Any, rowids: list[int]) -> dict[int, tuple[str, str]]:
    """(harness, block_type) of each chunk, for rewriting its vector row."""
    out: dict[int, tuple[str, str]] = {}
    for start in range(0, len(rowids), 500):
        part = rowids[start : start + 500]
        marks = ",".join("?" * len(part))
        for rowid, harness, block_type in raw.execute(
            f"select rowid, harness, block_type from chunk_rows where rowid in ({marks})", part
        ):
            out[int(rowid)] = (harness, block_type)
    return out


_GATE_COLUMNS = "id, session_id, turn_id, block_idx, split_idx, text, redaction_version"

# A logged block: (session key, turn seq, turn id, block_idx), as `chunk_log` records it.
LoggedBlock = tuple[int, int, str, int]

LOG_KEEP = 50_000  # `chunk_log` entries writers keep (schema 7); older ones are trimmed


def gate_rows(
    raw: Any, *, after_rowid: int = 0, blocks: Iterable[LoggedBlock] = ()
) -> Iterator[tuple[str, str, str, int, int, str, int]]:
    """(id, session_id, turn_id, block_idx, split_idx, text, redaction_version) block by block:
    every chunk of each block that has at least one chunk with rowid > `after_rowid` (0: all),
    and of each of `blocks` (as `chunk_log` names them); a chunk is yielded once."""
    if after_rowid <= 0:
        yield from raw.execute(
            f"""select {_GATE_COLUMNS} from chunk_rows
                order by session_id, turn_id, block_idx, split_idx"""
        )
        return
    seen: set[str] = set()
    for session, turn_seq, turn_id, block_idx in sorted(set(blocks)):
        for row in raw.execute(
            f"""select {_GATE_COLUMNS} from chunk_rows where session = ? and seq = ?
                and block_idx = ? and turn_id = ? order by split_idx""",
            (session, turn_seq, block_idx, turn_id),
        ):
            seen.add(row[0])
            yield row
    for row in raw.execute(
        """select c.id, c.session_id, c.turn_id, c.block_idx, c.split_idx, c.text,
                  c.redaction_version from chunk_rows c
           join (select distinct session, seq, turn_id, block_idx from chunks where rowid > ?) b
             on b.session = c.session and b.seq = c.seq and b.block_idx = c.block_idx
             and b.turn_id = c.turn_id
           order by c.session_id, c.turn_id, c.block_idx, c.split_idx""",
        (after_rowid,),
    ):
        if row[0] not in seen:
            yield row


def log_seq(raw: Any) -> int:
    """The last `chunk_log` entry ever written (0: none); trimming the log keeps it."""
    row = raw.execute("select seq from sqlite_sequence where name = 'chunk_log'").fetchone()
    return int(row[0]) if row is not None else 0


def logged_blocks(raw: Any, after_seq: int, *, limit: int = LOG_KEEP) -> list[LoggedBlock] | None:
    """The blocks whose chunks were rewritten in place or deleted after log entry `after_seq`
    (distinct), or None when the log no longer holds every entry after it (trimmed) or holds
    more than `limit`: the caller re-reads everything."""
    oldest = raw.execute("select min(seq) from chunk_log").fetchone()[0]
    first = int(oldest) if oldest is not None else log_seq(raw) + 1
    if after_seq < first - 1:
        return None  # entries after `after_seq` were trimmed
    rows = raw.execute(
        """select session, turn_seq, turn_id, block_idx from chunk_log where seq > ?
           order by seq limit ?""",
        (after_seq, limit + 1),
    ).fetchall()
    if len(rows) > limit:
        return None
    return sorted({(int(s), int(q), str(t), int(b)) for s, q, t, b in rows})


def log_trim_point(raw: Any, *, keep: int = LOG_KEEP) -> int | None:
    """The `chunk_log` entry up to which the log can be trimmed, keeping the last `keep`
    entries; None when nothing is older than those."""
    upto = log_seq(raw) - keep
    oldest = raw.execute("select min(seq) from chunk_log").fetchone()[0]
    return None if oldest is None or int(oldest) > upto else upto


def trim_log(raw: Any, upto: int) -> None:
    raw.execute("delete from chunk_log where seq <= ?", (upto,))


def owed_rescan(raw: Any, version: int) -> int:
    """How many chunks were stored under rules older than `version`."""
    row = raw.execute("select count(*) from chunks where redaction_version < ?", (version,))
    return int(row.fetchone()[0])


def max_rowid(raw: Any) -> int:
    return int(raw.execute("select coalesce(max(rowid), 0) from chunks").fetchone()[0])


def update_text(raw: Any, rowid: int, text: str, version: int) -> None:
    raw.execute(
        "update chunks set text = ?, redaction_version = ? where rowid = ?", (text, version, rowid)
    )


def delete(raw: Any, rowids: list[int], *, vectors: bool) -> None:
    for start in range(0, len(rowids), 500):
        part = rowids[start : start + 500]
        marks = ",".join("?" * len(part))
        if vectors:
            raw.execute(f"delete from chunks_vec where rowid in ({marks})", part)
            raw.executemany("insert into vector_log (rowid) values (?)", [(r,) for r in part])
        raw.execute(f"delete from chunks where rowid in ({marks})", part)


def mark(raw: Any, rowids: list[int], version: int) -> None:
    for start in range(0, len(rowids), 500):
        part = rowids[start : start + 500]
        marks = ",".join("?" * len(part))
        raw.execute(
            f"update chunks set redaction_version = ? where rowid in ({marks}) and redaction_version < ?",
            [version, *part, version],
        )


def floor(raw: Any) -> int:
    """The recorded minimum redaction version of this memory (0 when never recorded)."""
    row = raw.execute("select value from meta where key = ?", (FLOOR_KEY,)).fetchone()
    try:
        return int(row[0]) if row is not None else 0
    except (TypeError, ValueError):
        return 0


def set_floor(raw: Any, version: int) -> None:
    raw.execute("insert or replace into meta (key, value) values (?, ?)", (FLOOR_KEY, str(version)))


def merge_fts(raw: Any) -> None:
    """Merge every FTS segment into one, dropping the entries of deleted/rewritten rows."""
    raw.execute("insert into chunks_fts (chunks_fts) values ('optimize')")


def truncate_wal(raw: Any) -> None:
    raw.execute("pragma wal_checkpoint(truncate)")
