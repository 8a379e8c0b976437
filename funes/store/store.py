"""`Store`: one open memory file, the object the rest of funes reads and writes through.

A thin owner of the connection: it opens (creating and migrating) the file, holds the writer
lock and the transactions, and keeps the meta it read; the SQL it runs lives beside it in
queries.py (reads), writes.py (writes), redaction.py (rewrites), meta.py and schema.py.
Vectors arrive as arrays; the store never loads a model and never parses a transcript.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from funes.chunks import Chunk, prompt_context
from funes.errors import IncompatibleStore, StoreError
from funes.store import (
    bm25,
    forgetting,
    listing,
    meta,
    queries,
    reconcile,
    redaction,
    vecindex,
    writes,
)
from funes.store.db import Connection, connect, open_hint
from funes.store.forgetting import ForgetRule
from funes.store.handle import reads
from funes.store.listing import SessionSummary
from funes.store.lock import waiting_marker, writer_lock
from funes.store.meta import now_utc
from funes.store.provenance import Keys
from funes.store.reconcile import Held
from funes.store.rows import StoredChunk, StoreState, StoreStats, UnitRecord
from funes.store.schema import SCHEMA_VERSION, migrate, upgrade
from funes.store.scope import NO_FILTERS, Filters
from funes.store.tombstones import KeptTombstones
from funes.traces import printable

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

log = logging.getLogger(__name__)


class Store(KeptTombstones):
    """An open memory. Not thread-safe: one Store per thread or process (`reader()` gives a
    second thread its own)."""

    forgotten_refused: int = 0  # chunks `add` refused since opening: their session is forgotten

    # -- opening -------------------------------------------------------------------------

    @classmethod
    def open(cls, path: Path, *, readonly: bool = False, lock_path: Path | None = None) -> Store:
        """Open (creating and migrating when writable) the memory at `path`.

        Raises:
            StoreError: the file is not a SQLite database, or is damaged.
            IncompatibleStore: written by a newer funes.
        """
        if readonly and not path.exists():
            raise StoreError(f"no memory at {path}", hint="run `funes index` first")
        conn: Connection | None = None
        try:
            conn = connect(path, readonly=readonly)
            if readonly:
                version = int(conn.raw.execute("pragma user_version").fetchone()[0])
                if version > SCHEMA_VERSION:
                    raise IncompatibleStore(
                        f"{path} has schema version {version}; this funes knows {SCHEMA_VERSION}",
                        hint="upgrade funes",
                    )
                if 0 < version < SCHEMA_VERSION:
                    # Written by an older funes: upgrade it in place once, then read.
                    conn.close()
                    conn = None
                    upgrade(path)
                    conn = connect(path, readonly=True)
                    version = SCHEMA_VERSION
            else:
                version = migrate(conn.raw)
        except BaseException as exc:
            if conn is not None:
                conn.close()  # a failed open leaves no handle on the file
            if isinstance(exc, StoreError) or not isinstance(exc, Exception):
                raise
            raise StoreError(
                f"cannot open memory {path}: {exc}", hint=open_hint(exc, path)
            ) from exc
        lock = lock_path if lock_path is not None else path.with_suffix(".lock")
        return cls(path, conn, lock_path=lock, has_schema=version > 0)

    def close(self) -> None:
        if isinstance(self._reader, Store):
            self._reader.close()
        self._reader = False
        if self._vector_index is not None:
            self._vector_index.close()
        self._conn.close()

    def reader(self) -> Store | None:
        """A second, read-only Store on this memory's file, for one query at a time in another
        thread while this Store runs another (recall's BM25 leg beside its vector leg).

        Opened on the first call, reused after (a warm MCP server pays the open once), closed
        with this Store. It reads only committed data, as this Store does between its own
        transactions, and WAL readers do not block each other. None where a second connection
        cannot be opened: an in-memory database, a file without funes' schema, or an open that
        fails (then not retried); the caller runs its queries here, one after another.
        """
        if self._reader is None:
            self._reader = self._open_reader()
        return self._reader if isinstance(self._reader, Store) else None

    def _open_reader(self) -> Store | bool:
        if str(self.path) == ":memory:" or not self._has_schema:
            return False
        try:
            conn = connect(self.path, readonly=True)
        except self._conn.module.Error:
            return False
        sibling = Store(self.path, conn, lock_path=None)
        sibling._reader = False
        sibling._frequencies = self._frequencies  # one memo for both connections
        return sibling

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- writing -------------------------------------------------------------------------

    @contextmanager
    def writing(
        self,
        *,
        wait_s: float = 0.0,
        announce: bool = False,
        on_wait: Callable[[float], None] | None = None,
    ) -> Iterator[Store]:
        """Hold the memory's single-writer lock, waiting up to `wait_s` for another writer
        (`on_wait(wait_s)` is told first; `announce`: asking a holder doing deferrable work
        to let go, see `writer_waiting`). Raises StoreLocked when it stays taken."""
        if self._lock_path is None:
            yield self
            return
        with writer_lock(self._lock_path, wait_s=wait_s, announce=announce, on_wait=on_wait):
            self.keep_tombstones()
            yield self
            self.sync_vector_index()
            self._trim_rewrite_log()

    # -- the vector index beside a large memory (funes.store.vecindex) --------------------

    vector_index_min_rows = vecindex.MIN_ROWS  # below this many vectors: sqlite-vec alone

    @property
    def vector_index_path(self) -> Path | None:
        """The index file beside this memory (None for an in-memory database)."""
        return None if str(self.path) == ":memory:" else vecindex.path_for(Path(self.path))

    def _vector_expect(self) -> vecindex.Expect | None:
        memory = self._meta.get("memory_id")
        if memory is None or self.model_id is None or self.vector_element != "int8":
            return None
        return vecindex.Expect(
            memory, self.model_id, self.dim or 0, float(self._meta.get("vector_scale", 0)), 0
        )

    def sync_vector_index(self) -> str:
        """Bring the index file beside this memory up to its vector log (writers, on letting
        go of the memory). Never raises: a file it cannot write is left for a reader to skip
        (it falls back to sqlite-vec) and the next writer to rebuild. Returns what it did."""
        path, expect = self.vector_index_path, self._vector_expect()
        if path is None or expect is None or not self._conn.vectors:
            return "none"
        try:
            return vecindex.sync(self._raw, path, expect, min_rows=self.vector_index_min_rows)
        except (OSError, ValueError, self._conn.module.Error) as exc:
            log.warning("vector index %s not updated: %s", path, exc)
            return "failed"

    def _trim_rewrite_log(self) -> None:
        """Trim the log of chunks rewritten in place (writers, on letting go). Never raises: an
        untrimmed log is only longer."""
        try:
            self.trim_rewrite_log()
        except self._conn.module.Error as exc:
            log.warning("rewrite log of %s not trimmed: %s", self.path, exc)

    def writer_waiting(self) -> bool:
        """Whether another writer is waiting for this memory's lock (and announced it)."""
        return self._lock_path is not None and waiting_marker(self._lock_path).exists()

    @reads
    def existing_ids(self, ids: Sequence[str]) -> set[str]:
        """The subset of chunk `ids` already stored (none in a file no writer has migrated yet:
        a first index interrupted before it created the schema)."""
        if not self._has_schema:
            return set()
        return writes.existing_ids(self._raw, ids)

    def add(
        self,
        chunks: Sequence[Chunk],
        vectors: NDArray[np.float32] | None,
        *,
        redaction_version: int = 0,
    ) -> int:
        """Store chunks (and their vectors, row i ↔ chunks[i]) in one transaction.

        Chunks whose id is already stored are skipped, and chunks of forgotten sessions
        refused (`forgotten_refused` counts them). Returns how many were written.
        """
        chunks = list(chunks)  # read twice (the forgotten check, then the inserts)
        if not chunks:
            return 0
        blobs = (
            self._vector_bytes(vectors)
            if vectors is not None and self._conn.vectors and self.model_id
            else None
        )
        written = 0
        floor = (
            redaction.floor(self._raw) if self.state() is StoreState.READY else redaction_version
        )
        lowered = False
        with self._tx():
            if self.state() is StoreState.EMPTY:
                redaction.set_floor(self._raw, redaction_version)
            keys = Keys(self._raw)
            refused = self._refuse_forgotten(chunks)
            for i, c in enumerate(chunks):
                if c.session_id in refused:
                    self.forgotten_refused += 1
                    continue
                rowid = writes.insert_chunk(
                    self._raw, keys, c, redaction_version=redaction_version, owed=blobs is None
                )
                if rowid is None:
                    continue
                written += 1
                lowered = lowered or redaction_version < floor
                if blobs is not None:
                    self._insert_vector(rowid, blobs[i], c.harness.value, c.block_type.value)
            if lowered:
                redaction.set_floor(self._raw, redaction_version)
        return written

    @reads
    def forgotten_among(self, chunks: Sequence[Chunk]) -> tuple[set[str], set[str]]:
        """(session ids among `chunks` that are forgotten, those a forget rule catches now)."""
        if not self._has_schema:
            return set(), set()
        dead = forgetting.tombstones(self._raw, (c.session_id for c in chunks))
        caught = {
            c.session_id
            for c in chunks
            if c.session_id not in dead.sessions
            and any(rule.matches(c.ts, c.cwd, c.workdir) for rule in dead.rules)
        }
        return dead.sessions, caught

    def _refuse_forgotten(self, chunks: Sequence[Chunk]) -> set[str]:
        """The session ids among `chunks` that must not be stored: forgotten ones, and those a
        forget rule catches now (tombstoned here, and any chunk of them already stored goes),
        inside the caller's transaction (funes.store.forgetting)."""
        refused, caught = self.forgotten_among(chunks)
        if caught:
            forgetting.record(self._raw, "session", sorted(caught), at=now_utc())
            forgetting.delete_sessions(
                self._raw, sorted(caught), vectors=self._conn.vectors and self.model_id is not None
            )
        return refused | caught

    def forget(self, session_ids: Sequence[str], *, rule: ForgetRule | None = None) -> int:
        """One transaction: tombstone `session_ids` (and `rule`, which later writes check),
        delete their chunks, vectors and FTS rows. Returns chunks deleted. The freed text is
        then purged from free pages and the WAL (`purge_freed_text`)."""
        at = now_utc()
        with self._tx():
            forgetting.record(self._raw, "session", session_ids, at=at)
            if rule is not None:
                forgetting.record(self._raw, "rule", [rule.encode()], at=at)
            deleted = forgetting.delete_sessions(
                self._raw, session_ids, vectors=self._conn.vectors and self.model_id is not None
            )
        self.purge_freed_text()
        self._save_tombstones()
        return deleted

    @reads
    def sessions_matching(self, rule: ForgetRule) -> list[str]:
        """Ids of the stored sessions `rule` forgets."""
        return forgetting.sessions_matching(self._raw, rule) if self._has_schema else []

    @reads
    def session_chunk_ids(self, session_ids: Sequence[str]) -> dict[str, list[str]]:
        """The chunk ids of each session (sessions without chunks absent)."""
        rows = forgetting.session_chunks(self._raw, list(session_ids))
        return {sid: [cid for _, cid in found] for sid, found in rows.items()}

    def note_forgotten_copies(self, copies: Sequence[tuple[str, str, int]]) -> None:
        """Remember (session id, remote label, chunks) of forgotten sessions still on remotes."""
        with self._tx():
            forgetting.note_copies(self._raw, copies)

    def drop_forgotten_copies(self, remote: str) -> None:
        """`remote` holds no forgotten session any more."""
        with self._tx():
            forgetting.drop_copies(self._raw, remote)

    @reads
    def forgotten_copies(self) -> dict[str, tuple[int, int]]:
        """remote label → (forgotten sessions it still holds, their chunks there)."""
        return forgetting.copies(self._raw) if self._has_schema else {}

    @reads
    def forgotten(self) -> tuple[list[str], list[ForgetRule]]:
        """(forgotten session ids, the forget rules that later writes check)."""
        if not self._has_schema:
            return [], []
        _, values = forgetting.summary(self._raw)
        rules = [r for r in map(ForgetRule.decode, values) if r is not None]
        return forgetting.forgotten_sessions(self._raw), rules

    # -- re-reading a unit (funes.ingest.reconcile decides, these read and write) ---------

    def held(self, ids: Sequence[str]) -> dict[str, Held]:
        """The stored chunks among `ids`, keyed by id, as a re-read compares them."""
        return reconcile.held(self._raw, list(ids)) if self._has_schema else {}

    def superseded(
        self,
        *,
        source_path: str,
        turn_ids: Sequence[str],
        keep: set[str],
        block_types: Sequence[str],
        blocks: Sequence[tuple[str, int, str, int]] = (),
    ) -> list[int]:
        """Rowids of chunks of `turn_ids` read from `source_path` whose id is not in `keep`
        (see `funes.store.reconcile.superseded`)."""
        return reconcile.superseded(
            self._raw, source_path=source_path, turn_ids=list(turn_ids), keep=keep,
            block_types=list(block_types), blocks=list(blocks),
        )  # fmt: skip

    def holder(
        self, turn_id: str, *, harness: str, session_id: str, source_path: str
    ) -> tuple[str, int] | None:
        """(session id, first rowid) of another session, read from another file, that already
        holds turn `turn_id`; None when none does."""
        return reconcile.holder(
            self._raw, turn_id, harness=harness, not_session=session_id, not_source=source_path
        )

    def first_rowid(self, session_id: str, turn_id: str) -> int | None:
        return reconcile.first_rowid(self._raw, session_id, turn_id)

    def turn_sessions(self, turn_id: str) -> set[int]:
        """Keys of the sessions that store turn `turn_id` (cheap: one index lookup)."""
        return reconcile.turn_sessions(self._raw, turn_id) if self._has_schema else set()

    def session_key(self, session_id: str) -> int | None:
        return queries.session_key(self._raw, session_id) if self._has_schema else None

    def linked(self, session_id: str) -> set[str]:
        """Turn ids `session_id` shows through links to the session that holds them."""
        return reconcile.linked(self._raw, session_id) if self._has_schema else set()

    def reconcile(
        self,
        *,
        rewrites: Sequence[tuple[int, Chunk]] = (),
        vectors: NDArray[np.float32] | None = None,
        touches: Sequence[tuple[int, Chunk]] = (),
        drop: Sequence[int] = (),
        links: Sequence[tuple[str, int, str, str]] = (),
        unlinks: Sequence[tuple[str, Sequence[str]]] = (),
        redaction_version: int = 0,
    ) -> None:
        """One transaction bringing stored rows up to a re-read: `rewrites` (rowid, chunk) get the
        chunk's text, provenance and a new vector (`vectors[i]`; without vectors the old one is
        dropped and a later backfill embeds it); `touches` get provenance only (their vectors
        stay); `drop` rowids are deleted with their vectors; `links` (session, seq, turn id,
        holder session) record turns another session holds; `unlinks` (session, turn ids)
        forget links of turns a session now stores itself."""
        has_vec = self._conn.vectors and self.model_id is not None
        blobs = self._vector_bytes(vectors) if vectors is not None and has_vec else None
        with self._tx():
            keys = Keys(self._raw)
            for i, (rowid, chunk) in enumerate(rewrites):
                reconcile.update(self._raw, keys, rowid, chunk, redaction_version=redaction_version)
                if has_vec:
                    writes.delete_vector(self._raw, rowid)
                if blobs is not None:
                    self._insert_vector(
                        rowid, blobs[i], chunk.harness.value, chunk.block_type.value
                    )
            for rowid, chunk in touches:
                reconcile.update(self._raw, keys, rowid, chunk, redaction_version=redaction_version)
            if drop:
                redaction.delete(self._raw, list(drop), vectors=has_vec)
            for session_id, seq, turn_id, holder in links:
                reconcile.link(
                    self._raw, keys, session_id=session_id, seq=seq, turn_id=turn_id, holder=holder
                )
            for session_id, turn_ids in unlinks:
                reconcile.unlink(self._raw, session_id=session_id, turn_ids=list(turn_ids))

    def owed_vectors(
        self, *, limit: int, max_priority: int | None = None
    ) -> list[tuple[int, str, str, str]]:
        """(rowid, text, harness, block_type) of up to `limit` chunks owed a vector, highest
        priority and newest first (funes.store.schema OWED_PRIORITY); [] when this memory or
        process cannot hold vectors. The first call on a memory indexed before owed vectors
        were tracked fills the record once (one scan)."""
        if not self._conn.vectors or self.model_id is None:
            return []
        self._settle_owed()
        return queries.owed_vectors(self._raw, limit=limit, max_priority=max_priority)

    @reads
    def owed_among(self, rowids: Sequence[int]) -> list[tuple[int, str, str, str]]:
        """`owed_vectors` rows of those of `rowids` still owed a vector, with their text as
        stored now (funes.ingest.pump checks a vector computed off the write thread against
        them before writing it)."""
        if not self._conn.vectors or self.model_id is None or not rowids:
            return []
        return queries.owed_among(self._raw, rowids)

    @reads
    def owed_counts(self) -> dict[int, int] | None:
        """priority → chunks owed a vector; None while a memory indexed before they were
        tracked has not been counted yet (its first index run does it)."""
        if not self._has_schema:
            return {}
        if "owed_scan" in meta.read(self._raw):
            return None
        return queries.owed_counts(self._raw)

    @reads
    def owed_total(self) -> int:
        """Chunks owed a vector (0 while not counted yet, see owed_counts)."""
        return sum((self.owed_counts() or {}).values())

    def _settle_owed(self) -> None:
        if "owed_scan" in meta.read(self._raw):
            with self._tx():
                writes.settle_owed(self._raw, vector_table=self.model_id is not None)

    def add_vectors(
        self, rows: Sequence[tuple[int, str, str, str]], vectors: NDArray[np.float32]
    ) -> None:
        """Store vectors for chunks listed by `owed_vectors` (row i ↔ vectors[i])."""
        blobs = self._vector_bytes(vectors)
        with self._tx():
            for (rowid, _, harness, block_type), blob in zip(rows, blobs, strict=True):
                self._insert_vector(rowid, blob, harness, block_type)

    @reads
    def unit(self, key: str) -> UnitRecord | None:
        if not self._has_schema:
            return None
        row = queries.unit(self._raw, printable(key))
        return None if row is None else UnitRecord(*row)

    def record_unit(
        self, key: str, *, harness: str, signature: str | None, level: int, turns: int, chunks: int
    ) -> None:
        """Remember that `key` was indexed up to tier `level` at `signature`.

        Keys are stored `printable` (a file name that is not UTF-8 still binds); `unit()`
        looks them up the same way."""
        with self._tx():
            writes.upsert_unit(
                self._raw,
                printable(key),
                harness=harness,
                signature=signature,
                level=level,
                indexed_at=now_utc(),
                turns=turns,
                chunks=chunks,
            )

    # -- reading -------------------------------------------------------------------------

    @reads
    def state(self) -> StoreState:
        if not self._has_schema:
            return StoreState.EMPTY
        return StoreState.READY if queries.has_chunks(self._raw) else StoreState.EMPTY

    @reads
    def lexical(
        self,
        query: str,
        *,
        k: int,
        filters: Filters = NO_FILTERS,
        budget: int | None = None,
        frequencies: Sequence[int] | None = None,
    ) -> list[tuple[int, float]]:
        """(rowid, bm25) best first; BM25 over FTS5, lower bm25 = better. With a `budget`
        (postings), a query whose terms match more rows than that draws its candidates from
        its rarest terms (funes.store.bm25.rare_first); `frequencies`: the rows each of the
        query's terms (queries.query_terms) occurs in, when the caller counted them already."""
        if budget is not None:
            terms = queries.query_terms(query)
            if frequencies is None or len(frequencies) != len(terms):
                frequencies = self._frequencies.get(self._raw, terms)[1]
            found = bm25.rare_first(
                self._raw, terms, frequencies, k=k, filters=filters, budget=budget
            )
            if found is not None:
                return found
        return queries.lexical(self._raw, query, k=k, filters=filters)

    @reads
    def semantic(
        self, vector: NDArray[np.float32] | bytes, *, k: int, filters: Filters = NO_FILTERS
    ) -> list[tuple[int, float]]:
        """(rowid, distance) nearest first, at most `k` (and at most what sqlite-vec's KNN
        accepts: queries.KNN_MAX); [] when this memory or process has no vectors. `vector`:
        shape (dim,), or its `dim` float32s little-endian (funes.inference.query_vector)."""
        if not self._conn.vectors or self.model_id is None:
            return []
        if isinstance(vector, bytes):
            blob = meta.query_blob(vector, element=self.vector_element, scale=self._vector_scale)
        else:
            blob = self._vector_bytes(vector.reshape(1, -1))[0]
        if filters == NO_FILTERS and (found := self._indexed_search(blob, k)) is not None:
            return found
        return queries.semantic(
            self._raw,
            blob,
            element=self.vector_element or "float",
            k=k,
            filters=filters,
        )

    def _indexed_search(self, blob: bytes, k: int) -> list[tuple[int, float]] | None:
        """The vector index's answer (funes.store.vecindex), None when it has none."""
        path, expect = self.vector_index_path, self._vector_expect()
        if path is None or expect is None or not path.exists():
            return None
        if self._vector_index is None:
            self._vector_index = vecindex.Reader(path)
        import numpy as np

        query = np.frombuffer(blob, dtype=np.int8)
        return self._vector_index.search(self._raw, expect, query, k)

    @reads
    def document_frequencies(self, terms: Sequence[str]) -> tuple[int, list[int]]:
        """(chunks in the memory, chunks FTS5 matches each term in), for IDF weights; counts
        are remembered while the index is unchanged (funes.store.frequencies)."""
        return self._frequencies.get(self._raw, list(terms))

    @reads
    def size_hint(self) -> int:
        """The largest chunk rowid: the number of chunks ever stored (deletions not subtracted),
        read from the rowid index at once."""
        row = self._raw.execute("select max(rowid) from chunks").fetchone()
        return int(row[0] or 0)

    def cosine(self, distance: float) -> float:
        """The cosine of two unit vectors whose stored forms lie `distance` apart (what
        `semantic` returns): 1 − d²/2, with d in units of the int8 scale for int8 vectors
        (measured on the dev set: within 0.002 of the cosine of the stored vectors)."""
        unit = self._vector_scale if self.vector_element == "int8" else 1.0
        return 1.0 - (distance / unit) ** 2 / 2.0

    @reads
    def turn_chunks(self, turns: Sequence[tuple[str, int]]) -> list[StoredChunk]:
        """Every chunk of the given (session_id, seq) turns, in session then position order."""
        rows = queries.turn_chunk_rows(self._raw, sorted(set(turns)))
        return [StoredChunk.from_row(r) for r in rows]

    @reads
    def session_outline(self, session_id: str, low: int, high: int) -> list[tuple[int, bool]]:
        """(seq, holds a user prompt) of each turn of a session with low ≤ seq ≤ high."""
        return queries.session_outline(self._raw, session_id=session_id, low=low, high=high)

    @reads
    def fetch(self, rowids: Sequence[int]) -> dict[int, StoredChunk]:
        return {
            r: StoredChunk.from_row(row)
            for r, row in queries.by_rowids(self._raw, list(rowids)).items()
        }

    @reads
    def sessions_starting(self, prefix: str, *, limit: int = 10) -> list[str]:
        """Up to `limit` ids of sessions with chunks whose id starts with `prefix`."""
        if not self._has_schema:
            return []
        return queries.sessions_starting(self._raw, prefix, limit=limit)

    @reads
    def turns_starting(self, session_id: str, prefix: str, *, limit: int = 10) -> list[str]:
        """Up to `limit` ids of the session's turns that start with `prefix` (exact first)."""
        if not self._has_schema:
            return []
        return queries.turns_starting(self._raw, session_id, prefix, limit=limit)

    @reads
    def with_subagents(self, session_ids: Sequence[str]) -> list[str]:
        """`session_ids` and every session they started, at any depth (sorted)."""
        found = set(session_ids)
        frontier = sorted(found)
        while frontier and self._has_schema:
            frontier = sorted(queries.child_sessions(self._raw, frontier) - found)
            found.update(frontier)
        return sorted(found)

    @reads
    def admits_any(self, filters: Filters) -> bool:
        """Whether any chunk of this memory passes `filters` (a scope that matches no session
        says so, rather than a bare `no results`)."""
        return self._has_schema and queries.admits_any(self._raw, filters)

    @reads
    def session_labels(self) -> list[tuple[str, str | None]]:
        """(session id, stored label or None) of every session with chunks."""
        return queries.session_labels(self._raw) if self._has_schema else []

    @reads
    def session_summaries(
        self, filters: Filters = NO_FILTERS, *, prompt: str | None = None, limit: int, offset: int
    ) -> tuple[int, list[SessionSummary]]:
        """(sessions matching, one page of them) newest first (funes.store.listing)."""
        if not self._has_schema:
            return 0, []
        return listing.summaries(self._raw, filters, prompt=prompt, limit=limit, offset=offset)

    @reads
    def block_keys(self, rowids: Sequence[int]) -> dict[int, tuple[str, str, int]]:
        """(session_id, turn_id, block_idx) of each chunk, keyed by rowid (missing are absent)."""
        return queries.block_keys(self._raw, list(rowids))

    @reads
    def prompts_before(
        self, chunks: Sequence[StoredChunk], *, pending: Mapping[int, str] | None = None
    ) -> dict[int, str]:
        """For each chunk (by rowid), the embedding context of the latest user prompt at or
        before its turn in its session (funes.chunks.prompt_context); absent when none.
        `pending`: texts about to replace stored ones (rowid → text), used for the prompt."""
        out: dict[int, str] = {}
        for c in chunks:
            found = queries.prompt_before(self._raw, session_id=c.session_id, seq=c.seq)
            if found is not None:
                rowid, text = found
                out[c.rowid] = prompt_context((pending or {}).get(rowid, text))
        return out

    @reads
    def neighbors(self, chunk: StoredChunk, n: int) -> list[StoredChunk]:
        """Up to n chunks before and n after `chunk` in its session, in session order."""
        if n <= 0:
            return []
        rows = queries.adjacent(
            self._raw,
            session_id=chunk.session_id,
            position=(chunk.seq, chunk.block_idx, chunk.split_idx),
            n=n,
        )
        return [StoredChunk.from_row(r) for r in rows]

    @reads
    def turns_around(
        self, session_id: str, turn_id: str, window: int, *, filters: Filters = NO_FILTERS
    ) -> list[StoredChunk]:
        """Chunks of the turn and of the `window` turns on each side, in order ([] when absent);
        with `filters`, only chunks they admit (the named turn too)."""
        seq = queries.turn_seq(self._raw, session_id=session_id, turn_id=turn_id, filters=filters)
        if seq is None:
            return []
        rows = queries.turns_window(
            self._raw, session_id=session_id, seq=seq, window=max(window, 0), filters=filters
        )
        return [StoredChunk.from_row(r) for r in rows]

    @reads
    def stats(self) -> StoreStats:
        size = sum(
            p.stat().st_size for p in (self.path, Path(str(self.path) + "-wal")) if p.exists()
        )
        if not self._has_schema:
            return StoreStats(0, 0, {}, None, None, self._conn.vectors, None, 0, size)
        per = queries.per_harness(self._raw)
        total_chunks = sum(c for _, c in per.values())
        sessions, last, units = queries.totals(self._raw)
        return StoreStats(
            chunks=total_chunks,
            sessions=sessions,
            per_harness=per,
            last_indexed=last,
            model_id=self.model_id,
            vectors=self._conn.vectors,
            vector_element=self.vector_element,
            units=units,
            file_bytes=size,
        )
