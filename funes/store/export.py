"""The SQL of sharing: what a push sends, what this host has published, sealing a cache file.

`Outbox` pairs a memory (attached read-only, never locked) with a scratch SQLite file that
holds the remote's chunk ids and the ids the secrets gate cleared. Every set operation is an
anti-join inside SQLite, streamed in bounded batches: a push never loads the memory into RAM
and never builds a parameter list longer than one batch.

A push receipt is a small SQLite file (`ids(id)` + `meta(key, value)` + `held(id)`): the chunk
ids this host has seen on one remote (the remote's ids at its last push, plus what that push
published), and the ids the secrets gate held back in that push (so the next one can tell a
block it already held back from a new one; a receipt without `held` holds none). Its meta
names the remote and commit, and `memory_id` and `log_mark` (the memory's last `chunk_log`
entry when that push read it: the blocks logged after it are the ones rewritten or deleted
since, which the next push compares with the remote's copy).

A chunk keeps its id when it is rewritten in place (ids are positions), so the remote's ids
alone cannot tell that its copy is stale: the push loads the remote's (id, session, text digest)
of the sessions it must compare (`add_remote_texts`) and `find_stale` marks the rows whose
text differs from the memory's, or whose chunk the memory deleted from a session it still
holds. Stale rows are deleted by the push's commit; those whose new text the gate clears are
sent again with it.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from funes.chunks import LEGACY_EMBED_INPUT
from funes.errors import StoreError
from funes.store.db import (
    _load_vec,
    connect,
    create_private,
    open_hint,
    readonly_uri,
    sqlite_module,
)
from funes.store.rows import CHUNK_COLUMNS, StoredChunk
from funes.store.schema import upgrade

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

_COLS = ", ".join(f"c.{name}" for name in CHUNK_COLUMNS.split(", "))
_POSITION = "c.session_id, c.seq, c.block_idx, c.split_idx"


@dataclass(frozen=True, slots=True)
class OutboxCounts:
    local: int  # chunks of the memory that have a vector (what a push can send)
    pending: int  # of which the remote does not have yet
    shared: int  # chunks of the memory the remote already has
    unembedded: int  # chunks without a vector (never sent; `funes index` embeds them)


def _uri(path: Path, mode: str) -> str:
    return f"file:{quote(str(path.resolve()))}?mode={mode}"


class Outbox:
    """A memory attached read-only to a scratch file (see module docstring). One per push."""

    def __init__(self, memory: Path, scratch: Path) -> None:
        sqlite = sqlite_module()
        upgrade(memory)
        create_private(scratch)
        self._raw: Any = sqlite.connect(str(scratch), uri=True, check_same_thread=False)
        self._raw.execute("pragma busy_timeout = 5000")
        self.vectors, _ = _load_vec(self._raw)
        try:
            self._raw.execute("attach database ? as mem", (readonly_uri(memory),))
            self._raw.execute("select count(*) from mem.sqlite_master").fetchone()
        except sqlite.Error as exc:
            self._raw.close()
            raise StoreError(f"cannot open memory {memory}: {exc}", hint=open_hint(exc)) from exc
        self._raw.executescript(
            """create table if not exists remote_ids (id text primary key) without rowid;
               create table if not exists cleared (id text primary key) without rowid;
               create table if not exists allowed (session_id text primary key) without rowid;
               create table if not exists held (id text primary key) without rowid;
               create table if not exists held_before (id text primary key) without rowid;
               create table if not exists remote_text
                   (id text primary key, session_id text not null, digest text not null)
                   without rowid;
               create table if not exists stale (id text primary key) without rowid;"""
        )
        self._raw.create_function("funes_digest", 1, text_digest, deterministic=True)
        self._only = "1"  # SQL over `c` (a chunks row): the chunks this push may send
        meta = dict(self._raw.execute("select key, value from mem.meta").fetchall())
        self.model_id: str | None = meta.get("embedding_model")
        self.memory_id: str | None = meta.get("memory_id")
        self.embedding_input: str = meta.get("embedding_input", LEGACY_EMBED_INPUT)
        self.dim = int(meta.get("embedding_dim") or 0)
        self.element = meta.get("vector_element") or "float"
        self.scale = float(meta.get("vector_scale") or 1.0)
        has_vec = self._raw.execute(
            "select 1 from mem.sqlite_master where name = 'chunks_vec'"
        ).fetchone()
        self.vectors = bool(self.vectors and has_vec and self.model_id)

    def close(self) -> None:
        self._raw.close()

    def __enter__(self) -> Outbox:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def only_sessions(self, session_ids: Sequence[str]) -> None:
        """Send only the chunks of these sessions (a project memory ships the sessions its
        review included); every other chunk of the memory is left out of the counts too."""
        self._raw.executemany(
            "insert or ignore into allowed (session_id) values (?)", [(s,) for s in session_ids]
        )
        self._raw.commit()
        self._only = (
            "c.session in (select s.id from mem.sessions s"
            " join allowed a on a.session_id = s.session_id)"
        )

    # -- the remote's ids ------------------------------------------------------------------

    def reset_remote(self) -> None:
        self._raw.execute("delete from remote_ids")
        self._raw.commit()

    def add_remote(self, ids: Sequence[str]) -> None:
        """Record a batch of chunk ids the remote holds."""
        self._raw.executemany(
            "insert or ignore into remote_ids (id) values (?)", [(i,) for i in ids]
        )
        self._raw.commit()

    # -- what the remote holds that this memory rewrote or deleted since --------------------

    def log_mark(self) -> int:
        """The memory's last `chunk_log` entry (0: none ever). Read it before comparing: a
        block rewritten afterwards is logged after it, and compared by the next push."""
        row = self._raw.execute(
            "select seq from mem.sqlite_sequence where name = 'chunk_log'"
        ).fetchone()
        return int(row[0]) if row is not None else 0

    def changed_sessions(self, after_mark: int) -> list[str] | None:
        """The sessions with a block rewritten in place or deleted after `chunk_log` entry
        `after_mark`; None when the log no longer reaches back that far (writers keep its
        last 50,000 entries): then every session is to be compared."""
        last = self.log_mark()
        if after_mark > last:
            return None  # a mark from another memory file
        oldest = self._raw.execute("select min(seq) from mem.chunk_log").fetchone()[0]
        first = int(oldest) if oldest is not None else last + 1
        if after_mark < first - 1:
            return None
        rows = self._raw.execute(
            """select distinct s.session_id from mem.chunk_log l
               join mem.sessions s on s.id = l.session where l.seq > ?""",
            (after_mark,),
        )
        return sorted(str(r[0]) for r in rows)

    def reset_stale(self) -> None:
        self._raw.execute("delete from remote_text")
        self._raw.execute("delete from stale")
        self._raw.commit()

    def add_remote_texts(self, rows: Sequence[tuple[str, str, str]]) -> None:
        """Record a batch of the remote's (id, session_id, text) rows, as text digests."""
        self._raw.executemany(
            "insert or replace into remote_text (id, session_id, digest) values (?, ?, ?)",
            [(i, s, text_digest(t)) for i, s, t in rows],
        )
        self._raw.commit()

    def find_stale(self) -> int:
        """Mark the remote rows recorded by `add_remote_texts` that this memory no longer
        holds as they are: another text under the same id, or a chunk deleted from a session
        the memory still holds (a forgotten session's rows are `forget --remote`'s). Returns
        how many are stale."""
        self._raw.execute(
            """insert or ignore into stale (id)
               select r.id from remote_text r join mem.chunks c on c.id = r.id
               where funes_digest(c.text) is not r.digest
               union all
               select r.id from remote_text r
               where not exists (select 1 from mem.chunks c where c.id = r.id)
                 and exists (select 1 from mem.sessions s where s.session_id = r.session_id)"""
        )
        self._raw.commit()
        return self.stale_count()

    def stale_count(self) -> int:
        return int(self._raw.execute("select count(*) from stale").fetchone()[0])

    def stale_ids(self) -> list[str]:
        return [str(r[0]) for r in self._raw.execute("select id from stale order by id")]

    def stale_replaced(self) -> int:
        """Stale rows whose new text the gate cleared (the commit sends them again)."""
        return int(
            self._raw.execute(
                """select count(*) from stale s join cleared k on k.id = s.id
                   join mem.chunks c on c.id = s.id"""
            ).fetchone()[0]
        )

    def _has_vector(self) -> str:
        if not self.vectors:
            return "0"
        return "exists (select 1 from mem.chunks_vec v where v.rowid = c.rowid)"

    def counts(self) -> OutboxCounts:
        hv = self._has_vector()
        local, pending, unembedded = self._raw.execute(
            f"""select coalesce(sum({hv}), 0),
                       coalesce(sum({hv} and not exists
                           (select 1 from remote_ids r where r.id = c.id)), 0),
                       coalesce(sum(not {hv}), 0)
                from mem.chunks c where {self._only}"""
        ).fetchone()
        shared = self._raw.execute(
            f"select count(*) from mem.chunks c join remote_ids r on r.id = c.id where {self._only}"
        ).fetchone()[0]
        return OutboxCounts(int(local), int(pending), int(shared), int(unembedded))

    def left_out(self) -> tuple[int, int]:
        """(chunks, sessions) with a vector the remote lacks that `only_sessions` keeps from
        this push: what a push would send to a remote that is not a project memory, less
        what it sends to this one. (0, 0) when every session may be sent."""
        chunks, sessions = self._raw.execute(
            f"""select count(*), count(distinct c.session) from mem.chunks c
                where {self._has_vector()} and not ({self._only})
                  and not exists (select 1 from remote_ids r where r.id = c.id)"""
        ).fetchone()
        return int(chunks), int(sessions)

    # -- what to send ----------------------------------------------------------------------

    def pending(self, *, batch_rows: int = 1000) -> Iterator[list[StoredChunk]]:
        """Pending chunks (with a vector, not on the remote or stale there) in session order.

        Batches hold about `batch_rows` rows and never split a block (a block's chunks arrive
        together, so the secrets gate judges blocks whole).
        """
        cur = self._raw.execute(
            f"""select {_COLS} from mem.chunk_rows c
                where {self._has_vector()} and {self._only}
                  and (not exists (select 1 from remote_ids r where r.id = c.id)
                       or exists (select 1 from stale s where s.id = c.id))
                order by {_POSITION}"""
        )
        batch: list[StoredChunk] = []
        while rows := cur.fetchmany(256):
            for row in rows:
                r = StoredChunk.from_row(row)
                if len(batch) >= batch_rows and not _same_block(batch[-1], r):
                    yield batch
                    batch = []
                batch.append(r)
        if batch:
            yield batch

    def clear(self, ids: Sequence[str]) -> None:
        """Mark chunk ids as cleared by the secrets gate."""
        self._raw.executemany("insert or ignore into cleared (id) values (?)", [(i,) for i in ids])
        self._raw.commit()

    def cleared_pending(self) -> int:
        """Cleared chunks the remote does not have yet, or has stale (what the next commit
        would add)."""
        return int(
            self._raw.execute(
                """select count(*) from cleared k
                   where not exists (select 1 from remote_ids r where r.id = k.id)
                      or exists (select 1 from stale s where s.id = k.id)"""
            ).fetchone()[0]
        )

    def cleared_total(self) -> int:
        return int(self._raw.execute("select count(*) from cleared").fetchone()[0])

    def hold(self, ids: Sequence[str]) -> None:
        """Mark chunk ids as held back by the secrets gate in this push."""
        self._raw.executemany("insert or ignore into held (id) values (?)", [(i,) for i in ids])
        self._raw.commit()

    def held_before(self, receipt: Path) -> None:
        """Read the ids the last push recorded in `receipt` as held back (none when there is no
        receipt, or it is damaged or older than the `held` table)."""
        sqlite = sqlite_module()
        if not receipt.exists():
            return
        try:
            self._raw.execute("attach database ? as rcpt", (_uri(receipt, "ro"),))
        except sqlite.Error:
            return
        try:
            self._raw.execute("insert or ignore into held_before select id from rcpt.held")
            self._raw.commit()
        except sqlite.Error:  # no `held` table (an older funes wrote it) or damaged: none known
            self._raw.rollback()
        finally:
            self._raw.execute("detach database rcpt")

    def newly_held(self) -> int:
        """Chunks held back in this push that the last push did not hold back."""
        return int(
            self._raw.execute(
                "select count(*) from held h"
                " where not exists (select 1 from held_before b where b.id = h.id)"
            ).fetchone()[0]
        )

    def to_publish(
        self, *, batch_rows: int = 2048
    ) -> Iterator[tuple[list[StoredChunk], NDArray[np.float32]]]:
        """Cleared chunks not on the remote (or stale there), with their vectors (float32, shape
        (n, dim)), by rowid."""
        import numpy as np

        cur = self._raw.execute(
            f"""select {_COLS}, v.embedding from cleared k
                join mem.chunk_rows c on c.id = k.id
                join mem.chunks_vec v on v.rowid = c.rowid
                where not exists (select 1 from remote_ids r where r.id = k.id)
                   or exists (select 1 from stale s where s.id = k.id)
                order by c.rowid"""
        )
        while rows := cur.fetchmany(batch_rows):
            blobs = b"".join(r[-1] for r in rows)
            if self.element == "int8":
                vectors = np.frombuffer(blobs, np.int8).astype(np.float32) / np.float32(self.scale)
            else:
                vectors = np.frombuffer(blobs, np.float32).copy()
            yield [StoredChunk.from_row(r[:-1]) for r in rows], vectors.reshape(len(rows), self.dim)

    # -- receipts --------------------------------------------------------------------------

    def write_receipt(self, dest: Path, *, published: bool, meta: Mapping[str, str]) -> None:
        """Atomically (re)write the receipt at `dest`: the remote's ids, plus the cleared ids
        when `published` (the commit that carried them landed, and deleted the stale rows it
        did not send again), and the ids held back."""
        tmp = dest.with_name(f".{dest.name}.{os.getpid()}.tmp")
        tmp.unlink(missing_ok=True)
        create_private(tmp)
        self._raw.execute("attach database ? as rcpt", (str(tmp),))
        try:
            self._raw.executescript(
                """create table rcpt.ids (id text primary key) without rowid;
                   create table rcpt.meta (key text primary key, value text not null);
                   create table rcpt.held (id text primary key) without rowid;
                   insert or ignore into rcpt.ids select id from remote_ids;
                   insert or ignore into rcpt.held select id from held;"""
            )
            if published:
                self._raw.execute(
                    """delete from rcpt.ids where id in (select id from stale)
                       and id not in (select id from cleared)"""
                )
                self._raw.execute("insert or ignore into rcpt.ids select id from cleared")
            self._raw.executemany(
                "insert into rcpt.meta (key, value) values (?, ?)", sorted(meta.items())
            )
            self._raw.commit()
        finally:
            self._raw.execute("detach database rcpt")
        os.replace(tmp, dest)


def text_digest(text: str) -> str:
    """What a push compares a chunk's text by: sha1 of its UTF-8, hex."""
    return hashlib.sha1(text.encode("utf-8", "surrogatepass")).hexdigest()


def receipt_meta(receipt: Path) -> dict[str, str]:
    """A receipt's meta (empty when there is none, or it cannot be read)."""
    if not receipt.exists():
        return {}
    try:
        conn = connect_receipt(receipt, "ro")
        try:
            return {str(k): str(v) for k, v in conn.execute("select key, value from meta")}
        finally:
            conn.close()
    except sqlite_module().Error:  # damaged: the next push rewrites it
        return {}


def _same_block(a: StoredChunk, b: StoredChunk) -> bool:
    return (a.session_id, a.turn_id, a.block_idx) == (b.session_id, b.turn_id, b.block_idx)


@dataclass(frozen=True, slots=True)
class ReceiptStatus:
    """What one receipt says about the memory: how much of it this host has published."""

    meta: dict[str, str]
    published: int  # chunks of the memory recorded in the receipt
    # chunks of the memory not in it that a push sends (of the sessions it may send, less
    # those the secrets gate holds back), and the sessions with at least one of them
    pending_chunks: int
    pending_sessions: int
    left_out_chunks: int = 0  # chunks not in it of sessions a push to it never sends
    left_out_sessions: int = 0  # (a project memory: the sessions its review did not include)
    held_back_chunks: int = 0  # chunks not in it, of the sessions it may send, held back
    # blocks of sessions it published rewritten in place or deleted here since (the next push
    # replaces or deletes them there); None when the receipt cannot tell (no mark, another
    # memory file, the log trimmed): the next push compares every chunk
    rewritten_blocks: int | None = 0


def receipt_status(
    memory: Path,
    receipt: Path,
    *,
    sessions: frozenset[str] | None = None,
    held: Collection[str] = (),
) -> ReceiptStatus:
    """Compare the memory with a receipt (anti-joins; nothing is loaded into RAM).

    `sessions` (a project memory's included session ids; None: every session) splits the
    chunks not in the receipt into pending (those a push sends) and left out (the others);
    `held` (the chunk ids the secrets gate holds back: a push never sends them) are counted
    apart from pending, as `held_back_chunks`."""
    upgrade(memory)
    conn = connect(memory, readonly=True)
    try:
        raw = conn.raw
        raw.execute("attach database ? as rcpt", (_uri(receipt, "ro"),))
        meta = dict(raw.execute("select key, value from rcpt.meta").fetchall())
        published = raw.execute(
            "select count(*) from chunks c join rcpt.ids r on r.id = c.id"
        ).fetchone()[0]
        sent = "1"
        if sessions is not None:
            raw.execute("create temp table allowed (session_id text primary key) without rowid")
            raw.executemany("insert or ignore into allowed values (?)", [(s,) for s in sessions])
            sent = (
                "c.session in (select s.id from sessions s"
                " join allowed a on a.session_id = s.session_id)"
            )
        kept = "0"
        if held:
            raw.execute("create temp table held (id text primary key) without rowid")
            raw.executemany("insert or ignore into held values (?)", [(i,) for i in held])
            kept = "exists (select 1 from held h where h.id = c.id)"
        chunks, n_sessions, left, left_sessions, held_back = raw.execute(
            f"""select coalesce(sum({sent} and not {kept}), 0),
                       count(distinct case when {sent} and not {kept} then session end),
                       coalesce(sum(not ({sent})), 0),
                       count(distinct case when not ({sent}) then session end),
                       coalesce(sum({sent} and {kept}), 0)
                from chunks c
                where not exists (select 1 from rcpt.ids r where r.id = c.id)"""
        ).fetchone()
        rewritten = _rewritten_since(raw, meta)
    finally:
        conn.close()
    return ReceiptStatus(
        meta,
        int(published),
        int(chunks),
        int(n_sessions),
        int(left),
        int(left_sessions),
        int(held_back),
        rewritten,
    )


def _rewritten_since(raw: Any, meta: Mapping[str, str]) -> int | None:
    """The blocks `chunk_log` names after the receipt's mark, of sessions with a chunk in the
    receipt (attached as `rcpt`); None when the log cannot tell (ReceiptStatus)."""
    mark = meta.get("log_mark", "")
    row = raw.execute("select value from meta where key = 'memory_id'").fetchone()
    if not mark.isdigit() or row is None or meta.get("memory_id") != row[0]:
        return None
    last = raw.execute("select seq from sqlite_sequence where name = 'chunk_log'").fetchone()
    last_seq = int(last[0]) if last is not None else 0
    oldest = raw.execute("select min(seq) from chunk_log").fetchone()[0]
    first = int(oldest) if oldest is not None else last_seq + 1
    if int(mark) > last_seq or int(mark) < first - 1:
        return None
    found = raw.execute(
        """select count(*) from (select distinct l.session, l.turn_seq, l.turn_id, l.block_idx
               from chunk_log l where l.seq > ?
               and exists (select 1 from chunks c join rcpt.ids r on r.id = c.id
                           where c.session = l.session))""",
        (int(mark),),
    ).fetchone()[0]
    return int(found)


def seal(path: Path) -> None:
    """Fold the write-ahead log into `path` and switch it to a rollback journal, so the file
    stands alone (a read-only opener needs no -wal/-shm files and no write access)."""
    conn = connect(path)
    try:
        conn.raw.execute("pragma wal_checkpoint(truncate)")
        conn.raw.execute("pragma journal_mode = delete")
    finally:
        conn.close()


def receipt_holds(receipt: Path, ids: Sequence[str]) -> int:
    """How many of chunk `ids` the receipt at `receipt` records as on its remote."""
    conn = connect_receipt(receipt, "ro")
    try:
        found = 0
        for start in range(0, len(ids), 500):
            part = list(ids[start : start + 500])
            marks = ",".join("?" * len(part))
            found += int(
                conn.execute(f"select count(*) from ids where id in ({marks})", part).fetchone()[0]
            )
        return found
    finally:
        conn.close()


def receipt_forget(receipt: Path, ids: Sequence[str], *, commit: str, checked_at: str) -> None:
    """Drop chunk `ids` from the receipt (its remote no longer holds them) and record `commit`,
    the remote commit that deleted them, seen at `checked_at` (ISO-8601 UTC): the receipt now
    describes the remote as of that commit, and `funes status` names it."""
    conn = connect_receipt(receipt, "rw")
    try:
        for start in range(0, len(ids), 500):
            part = list(ids[start : start + 500])
            marks = ",".join("?" * len(part))
            conn.execute(f"delete from ids where id in ({marks})", part)
        conn.executemany(
            "insert or replace into meta (key, value) values (?, ?)",
            [("commit", commit), ("checked_at", checked_at)],
        )
        conn.commit()
    finally:
        conn.close()


def receipt_remote(receipt: Path) -> str | None:
    """The label of the remote a receipt is about (None when it cannot be read)."""
    try:
        conn = connect_receipt(receipt, "ro")
        try:
            row = conn.execute("select value from meta where key = 'remote'").fetchone()
        finally:
            conn.close()
    except sqlite_module().Error:  # damaged: the next push to its remote rewrites it
        return None
    return None if row is None else str(row[0])


def connect_receipt(receipt: Path, mode: str) -> Any:
    """A plain connection to a receipt file (`mode`: ro or rw)."""
    return sqlite_module().connect(_uri(receipt, mode), uri=True)
