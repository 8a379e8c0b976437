"""SQLite mechanics of a memory: the only package that contains SQL.

One file (WAL, busy timeout, 0600) holds chunks with provenance, an FTS5 index (BM25) over
their text, a sqlite-vec table of their embeddings, the units already indexed, and the
embedding model the vectors came from. Vectors arrive as arrays; the store never loads a
model and never parses a transcript.
"""

from __future__ import annotations

import datetime as dt
import functools
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from enum import Enum, auto
from pathlib import Path
from typing import TYPE_CHECKING, Any, Concatenate, ParamSpec, TypeVar

from funes.chunks import EMBED_INPUT, LEGACY_EMBED_INPUT, Chunk, prompt_context
from funes.errors import IncompatibleStore, StoreError
from funes.store import queries, redaction
from funes.store.db import Connection, connect, open_hint, versions
from funes.store.lock import writer_lock
from funes.store.provenance import Keys
from funes.store.queries import NO_FILTERS, Filters, fts_query
from funes.store.redaction import BlockRows
from funes.store.schema import SCHEMA_VERSION, create_vector_table, migrate, upgrade
from funes.traces import printable

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

# int8 vectors: component × VECTOR_SCALE, rounded and clipped to ±127. Unit vectors of
# 384-d sentence embedders have components within about ±0.3, so 400 keeps ~7 bits.
VECTOR_SCALE = 400.0
DEFAULT_VECTOR_ELEMENT = "int8"


class StoreState(Enum):
    EMPTY = auto()  # no chunks yet
    READY = auto()


@dataclass(frozen=True, slots=True)
class StoredChunk:
    """A chunk as stored, with its rowid."""

    rowid: int
    id: str
    text: str
    session_id: str
    turn_id: str
    parent_id: str | None
    seq: int
    ts: str
    role: str
    block_type: str
    block_idx: int
    split_idx: int
    tool_name: str | None
    harness: str
    workdir: str
    cwd: str | None
    git_branch: str | None
    host: str | None
    source_path: str
    parent_session_id: str | None
    scaffold: bool
    redaction_version: int

    @classmethod
    def from_row(cls, row: Sequence[Any]) -> StoredChunk:
        values = list(row)
        values[20] = bool(values[20])
        return cls(*values)


@dataclass(frozen=True, slots=True)
class UnitRecord:
    key: str
    harness: str
    signature: str | None
    level: int
    indexed_at: str


@dataclass(frozen=True, slots=True)
class StoreStats:
    chunks: int
    sessions: int
    per_harness: dict[str, tuple[int, int]]  # harness → (sessions, chunks)
    last_indexed: str | None
    model_id: str | None
    vectors: bool
    vector_element: str | None
    units: int
    file_bytes: int


P = ParamSpec("P")
R = TypeVar("R")


def _reads(method: Callable[Concatenate[Store, P], R]) -> Callable[Concatenate[Store, P], R]:
    """Turn the binding's errors in a read (a damaged page, a lock held past the busy
    timeout) into StoreError, so a reader gets a message and an exit status, not a traceback."""

    def wrapper(self: Store, /, *args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return method(self, *args, **kwargs)
        except self._conn.module.Error as exc:
            hint = open_hint(exc, self.path)
            raise StoreError(f"cannot read memory {self.path}: {exc}", hint=hint) from exc

    functools.update_wrapper(wrapper, method)
    return wrapper


def _now() -> str:
    return dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


class Store:
    """An open memory. Not thread-safe: one Store per thread or process (`reader()` gives a
    second thread its own)."""

    def __init__(
        self, path: Path, conn: Connection, *, lock_path: Path | None, has_schema: bool = True
    ) -> None:
        self.path = path
        self._conn = conn
        self._raw = conn.raw
        self._lock_path = lock_path
        # False for a read-only open of a file no writer has migrated yet (just created, or
        # its creator was killed first): it reads as an empty memory.
        self._has_schema = has_schema
        self._meta = self._read_meta() if has_schema else {}
        # The sibling reader of `reader()`: None until opened; False once it cannot be (and in
        # a sibling itself, which has none of its own).
        self._reader: Store | bool | None = None

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
        return sibling

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def raw(self) -> Any:
        """The DB-API connection (for store-internal helpers and tests of the schema)."""
        return self._raw

    # -- meta: the embedding model and the vector table ----------------------------------

    def _read_meta(self) -> dict[str, str]:
        try:
            return {k: v for k, v in self._raw.execute("select key, value from meta")}
        except Exception:
            return {}

    @property
    def model_id(self) -> str | None:
        return self._meta.get("embedding_model")

    @property
    def embedding_input(self) -> str:
        """The recipe this memory's vectors were embedded with (see funes.chunks); memories
        stamped before recipes were recorded say LEGACY_EMBED_INPUT."""
        return self._meta.get("embedding_input", LEGACY_EMBED_INPUT)

    @property
    def reembedding(self) -> tuple[str, int] | None:
        """(target recipe, last rowid done) of an unfinished in-place re-embedding, else None.

        Rows up to the watermark hold vectors of the target recipe, later rows (including
        those written meanwhile, rowids only grow) still of `embedding_input`."""
        target = self._meta.get("reembed_target")
        if target is None:
            return None
        return target, int(self._meta.get("reembed_upto", "0"))

    def mark_reembedded(self, target: str, upto: int, *, finished: bool = False) -> None:
        """Record re-embedding progress; `finished`: every row now holds `target` vectors, so
        `embedding_input` becomes `target` and the progress keys go."""
        with self._tx():
            if finished:
                self._raw.execute(
                    "insert or replace into meta (key, value) values ('embedding_input', ?)",
                    (target,),
                )
                self._raw.execute(
                    "delete from meta where key in ('reembed_target', 'reembed_upto')"
                )
            else:
                for key, value in (("reembed_target", target), ("reembed_upto", str(upto))):
                    self._raw.execute(
                        "insert or replace into meta (key, value) values (?, ?)", (key, value)
                    )
        self._meta = self._read_meta()

    @_reads
    def texts_after(self, after_rowid: int, *, limit: int) -> list[tuple[int, str]]:
        """(rowid, text) of up to `limit` chunks past `after_rowid`, in rowid order."""
        return queries.texts_after(self._raw, after_rowid=after_rowid, limit=limit)

    @_reads
    def count_after(self, after_rowid: int) -> int:
        """How many chunks have a rowid above `after_rowid` (0 without a schema)."""
        return queries.count_after(self._raw, after_rowid=after_rowid) if self._has_schema else 0

    @property
    def dim(self) -> int | None:
        value = self._meta.get("embedding_dim")
        return int(value) if value else None

    @property
    def vector_element(self) -> str | None:
        return self._meta.get("vector_element")

    @property
    def vectors_available(self) -> bool:
        """sqlite-vec is loaded in this process (vectors can be written and searched)."""
        return self._conn.vectors

    @property
    def vectors_unavailable_reason(self) -> str | None:
        return self._conn.vector_error

    def stamp_model(
        self,
        model_id: str,
        dim: int,
        *,
        element: str = DEFAULT_VECTOR_ELEMENT,
        embedding_input: str = EMBED_INPUT,
    ) -> None:
        """Record the embedding model of this memory (first write) or check it (later writes).

        The first stamp also records `embedding_input`, the recipe every later write of this
        memory embeds with (an existing memory keeps its own). Raises IncompatibleStore when
        the memory was built with another model.
        """
        if self.model_id is not None:
            self.check_model(model_id)
            return
        with self._tx():
            for key, value in (
                ("embedding_model", model_id),
                ("embedding_dim", str(dim)),
                ("vector_element", element),
                ("vector_scale", str(VECTOR_SCALE)),
                ("embedding_input", embedding_input),
                ("created_at", _now()),
            ):
                self._raw.execute(
                    "insert or replace into meta (key, value) values (?, ?)", (key, value)
                )
            if self._conn.vectors:
                create_vector_table(self._raw, dim=dim, element=element)
        self._meta = self._read_meta()

    def check_model(self, model_id: str) -> None:
        """Raise IncompatibleStore unless this memory's vectors come from `model_id`."""
        if self.model_id is not None and self.model_id != model_id:
            raise IncompatibleStore(
                f"this memory was built with {self.model_id}, not {model_id}",
                hint=f"recall with the same model (FUNES_EMBEDDER), or rebuild: move {self.path} "
                "away and run `funes index --yes`",
            )

    def _vector_bytes(self, vectors: NDArray[np.float32]) -> list[bytes]:
        import numpy as np

        if self.vector_element == "int8":
            scale = float(self._meta.get("vector_scale", VECTOR_SCALE))
            q = np.clip(np.rint(vectors * scale), -127, 127).astype(np.int8)
            return [row.tobytes() for row in q]
        return [row.astype(np.float32).tobytes() for row in vectors]

    # -- writing -------------------------------------------------------------------------

    @contextmanager
    def writing(self, *, wait_s: float = 0.0) -> Iterator[Store]:
        """Hold the memory's single-writer lock. Raises StoreLocked when it is taken."""
        if self._lock_path is None:
            yield self
            return
        with writer_lock(self._lock_path, wait_s=wait_s):
            yield self

    @contextmanager
    def _tx(self) -> Iterator[None]:
        self._raw.execute("begin immediate")
        try:
            yield
        except BaseException:
            self._raw.execute("rollback")
            raise
        self._raw.execute("commit")

    def existing_ids(self, ids: Sequence[str]) -> set[str]:
        """The subset of chunk `ids` already stored."""
        found: set[str] = set()
        for start in range(0, len(ids), 500):
            part = list(ids[start : start + 500])
            marks = ",".join("?" * len(part))
            found.update(
                r[0]
                for r in self._raw.execute(f"select id from chunks where id in ({marks})", part)
            )
        return found

    def add(
        self,
        chunks: Sequence[Chunk],
        vectors: NDArray[np.float32] | None,
        *,
        redaction_version: int = 0,
    ) -> int:
        """Store chunks (and their vectors, row i ↔ chunks[i]) in one transaction.

        Chunks whose id is already stored are skipped. Returns how many were written.
        """
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
            for i, c in enumerate(chunks):
                origin = (
                    c.harness.value, c.workdir, c.cwd, c.git_branch, c.host, c.source_path,
                    c.parent_session_id,
                )  # fmt: skip
                cur = self._raw.execute(
                    """insert or ignore into chunks (id, text, session, turn_id, parent_id, seq, ts,
                       role, block_type, block_idx, split_idx, tool_name, origin, scaffold,
                       redaction_version)
                       values (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)""",
                    (
                        c.id,
                        c.text,
                        keys.session(c.session_id),
                        c.turn_id,
                        c.parent_id,
                        c.seq,
                        c.ts,
                        c.role.value,
                        c.block_type.value,
                        c.block_idx,
                        c.split_idx,
                        c.tool_name,
                        keys.origin(origin),
                        int(c.scaffold),
                        redaction_version,
                    ),
                )
                if cur.rowcount != 1:
                    continue
                written += 1
                lowered = lowered or redaction_version < floor
                if blobs is not None:
                    self._insert_vector(
                        cur.lastrowid, blobs[i], c.harness.value, c.block_type.value
                    )
            if lowered:
                redaction.set_floor(self._raw, redaction_version)
        return written

    def _insert_vector(self, rowid: int, blob: bytes, harness: str, block_type: str) -> None:
        wrap = "vec_int8(?)" if self.vector_element == "int8" else "?"
        self._raw.execute(
            f"insert into chunks_vec (rowid, embedding, harness, block_type) values (?, {wrap}, ?, ?)",
            (rowid, blob, harness, block_type),
        )

    def chunks_without_vectors(self, *, limit: int) -> list[tuple[int, str, str, str]]:
        """(rowid, text, harness, block_type) of up to `limit` chunks that have no vector."""
        if not self._conn.vectors or self.model_id is None:
            return []
        rows = self._raw.execute(
            """select c.rowid, c.text, c.harness, c.block_type from chunk_rows c
               where not exists (select 1 from chunks_vec v where v.rowid = c.rowid) limit ?""",
            (limit,),
        ).fetchall()
        return [(int(r[0]), r[1], r[2], r[3]) for r in rows]

    def add_vectors(
        self, rows: Sequence[tuple[int, str, str, str]], vectors: NDArray[np.float32]
    ) -> None:
        """Store vectors for chunks listed by `chunks_without_vectors` (row i ↔ vectors[i])."""
        blobs = self._vector_bytes(vectors)
        with self._tx():
            for (rowid, _, harness, block_type), blob in zip(rows, blobs, strict=True):
                self._insert_vector(rowid, blob, harness, block_type)

    @_reads
    def unit(self, key: str) -> UnitRecord | None:
        if not self._has_schema:
            return None
        row = self._raw.execute(
            "select key, harness, signature, level, indexed_at from units where key = ?",
            (printable(key),),
        ).fetchone()
        return None if row is None else UnitRecord(*row)

    def record_unit(
        self, key: str, *, harness: str, signature: str | None, level: int, turns: int, chunks: int
    ) -> None:
        """Remember that `key` was indexed up to tier `level` at `signature`.

        Keys are stored `printable` (a file name that is not UTF-8 still binds); `unit()`
        looks them up the same way."""
        with self._tx():
            self._raw.execute(
                """insert into units (key, harness, signature, level, indexed_at, turns, chunks)
                   values (?, ?, ?, ?, ?, ?, ?)
                   on conflict (key) do update set harness = excluded.harness,
                   signature = excluded.signature, level = excluded.level,
                   indexed_at = excluded.indexed_at, turns = excluded.turns,
                   chunks = units.chunks + excluded.chunks""",
                (printable(key), harness, signature, level, _now(), turns, chunks),
            )

    # -- redaction upkeep (funes scrub, index upgrades, the publish gate) -----------------

    @property
    def redaction_floor(self) -> int:
        """Every chunk passed a redaction version ≥ this (0 when unknown: rescan everything)."""
        return redaction.floor(self._raw)

    def blocks_for_rescan(self, *, below_version: int | None = None) -> list[BlockRows]:
        """Blocks whose chunks were redacted below `below_version` (None: every block)."""
        return redaction.blocks(self._raw, below_version=below_version)

    def chunk_texts(self, rowids: Sequence[int]) -> dict[int, str]:
        return redaction.texts(self._raw, list(rowids))

    def rewrite_chunks(
        self,
        updates: Sequence[tuple[int, str]],
        vectors: NDArray[np.float32] | None,
        *,
        redaction_version: int,
        drop: Sequence[int] = (),
        passed: Sequence[int] = (),
    ) -> None:
        """One transaction: set new texts (`updates[i]` ↔ `vectors[i]`, replacing old vectors),
        delete the `drop` chunks (and their vectors), and record `redaction_version` on the
        rewritten and on the `passed` (scanned clean) chunks. FTS follows via triggers. Without
        `vectors`, a rewritten chunk loses its old vector (`chunks_without_vectors` lists it)."""
        has_vec = self._conn.vectors and self.model_id is not None
        blobs = self._vector_bytes(vectors) if vectors is not None and has_vec else None
        meta = (
            redaction.vector_meta(self._raw, [r for r, _ in updates]) if blobs is not None else {}
        )
        with self._tx():
            for i, (rowid, text) in enumerate(updates):
                redaction.update_text(self._raw, rowid, text, redaction_version)
                if has_vec:  # no new vector: drop the old one, a later backfill embeds the new text
                    self._raw.execute("delete from chunks_vec where rowid = ?", (rowid,))
                if blobs is not None and rowid in meta:
                    self._insert_vector(rowid, blobs[i], *meta[rowid])
            if drop:
                redaction.delete(self._raw, list(drop), vectors=has_vec)
            if passed:
                redaction.mark(self._raw, list(passed), redaction_version)

    def replace_vectors(self, rowids: Sequence[int], vectors: NDArray[np.float32] | None) -> None:
        """One transaction: give each chunk `rowids[i]` the vector `vectors[i]`, its text and
        redaction version untouched; without `vectors` the old vectors are dropped (a later
        backfill embeds them again)."""
        has_vec = self._conn.vectors and self.model_id is not None
        if not has_vec or not rowids:
            return
        blobs = self._vector_bytes(vectors) if vectors is not None else None
        meta = redaction.vector_meta(self._raw, list(rowids)) if blobs is not None else {}
        with self._tx():
            for i, rowid in enumerate(rowids):
                self._raw.execute("delete from chunks_vec where rowid = ?", (rowid,))
                if blobs is not None and rowid in meta:
                    self._insert_vector(rowid, blobs[i], *meta[rowid])

    @_reads
    def exchange(self, prompt: StoredChunk) -> list[tuple[int, str]]:
        """(rowid, text) of the assistant and tool chunks whose embedding context is the user
        prompt `prompt` (see funes.chunks.embedding_input); [] when it opens none."""
        return queries.exchange(self._raw, session_id=prompt.session_id, seq=prompt.seq)

    def set_redaction_floor(self, version: int) -> None:
        with self._tx():
            redaction.set_floor(self._raw, version)

    def gate_rows(self, *, after_rowid: int = 0) -> Iterator[tuple[str, str, str, int, int, str]]:
        """(id, session_id, turn_id, block_idx, split_idx, text) block by block: every chunk of
        the blocks touched by rows after `after_rowid` (0: every chunk)."""
        return redaction.gate_rows(self._raw, after_rowid=after_rowid)

    @_reads
    def max_rowid(self) -> int:
        """The highest chunk rowid (0 when empty); rowids only grow."""
        return redaction.max_rowid(self._raw) if self._has_schema else 0

    def purge_freed_text(self) -> None:
        """After rewrites: merge FTS segments and truncate the WAL (writable connections run
        with `secure_delete`, so freed pages are already zeroed)."""
        with self._tx():
            redaction.merge_fts(self._raw)
        redaction.truncate_wal(self._raw)

    # -- reading -------------------------------------------------------------------------

    @_reads
    def state(self) -> StoreState:
        if not self._has_schema:
            return StoreState.EMPTY
        row = self._raw.execute("select 1 from chunks limit 1").fetchone()
        return StoreState.EMPTY if row is None else StoreState.READY

    @_reads
    def lexical(
        self, query: str, *, k: int, filters: Filters = NO_FILTERS
    ) -> list[tuple[int, float]]:
        """(rowid, bm25) best first; BM25 over FTS5, lower bm25 = better."""
        return queries.lexical(self._raw, query, k=k, filters=filters)

    @_reads
    def semantic(
        self, vector: NDArray[np.float32], *, k: int, filters: Filters = NO_FILTERS
    ) -> list[tuple[int, float]]:
        """(rowid, distance) nearest first; [] when this memory or process has no vectors."""
        if not self._conn.vectors or self.model_id is None:
            return []
        blob = self._vector_bytes(vector.reshape(1, -1))[0]
        return queries.semantic(
            self._raw, blob, element=self.vector_element or "float", k=k, filters=filters
        )

    @_reads
    def document_frequencies(self, terms: Sequence[str]) -> tuple[int, list[int]]:
        """(chunks in the memory, chunks FTS5 matches each term in), for IDF weights."""
        return queries.document_frequencies(self._raw, list(terms))

    @_reads
    def vectors(self, rowids: Sequence[int]) -> dict[int, NDArray[np.float32]]:
        """The stored vector of each chunk as float32 (int8 vectors divided by their scale, so
        unit vectors come back unit within rounding), keyed by rowid; {} without vectors."""
        import numpy as np

        if not self._conn.vectors or self.model_id is None or not rowids:
            return {}
        blobs = queries.vectors_by_rowids(self._raw, list(rowids))
        if self.vector_element == "int8":
            scale = np.float32(float(self._meta.get("vector_scale", VECTOR_SCALE)))
            return {
                r: np.frombuffer(b, np.int8).astype(np.float32) / scale for r, b in blobs.items()
            }
        return {r: np.frombuffer(b, np.float32).copy() for r, b in blobs.items()}

    @_reads
    def turn_chunks(self, session_id: str, seqs: Sequence[int]) -> list[StoredChunk]:
        """Every chunk of the turns at `seqs` of a session, in position order."""
        rows = queries.turn_chunk_rows(self._raw, session_id=session_id, seqs=sorted(set(seqs)))
        return [StoredChunk.from_row(r) for r in rows]

    @_reads
    def session_outline(self, session_id: str, low: int, high: int) -> list[tuple[int, bool]]:
        """(seq, holds a user prompt) of each turn of a session with low ≤ seq ≤ high."""
        return queries.session_outline(self._raw, session_id=session_id, low=low, high=high)

    @_reads
    def fetch(self, rowids: Sequence[int]) -> dict[int, StoredChunk]:
        return {
            r: StoredChunk.from_row(row)
            for r, row in queries.by_rowids(self._raw, list(rowids)).items()
        }

    @_reads
    def block_keys(self, rowids: Sequence[int]) -> dict[int, tuple[str, str, int]]:
        """(session_id, turn_id, block_idx) of each chunk, keyed by rowid (missing are absent)."""
        return queries.block_keys(self._raw, list(rowids))

    @_reads
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

    @_reads
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

    @_reads
    def turns_around(self, session_id: str, turn_id: str, window: int) -> list[StoredChunk]:
        """Chunks of the turn and of the `window` turns on each side, in order ([] when absent)."""
        seq = queries.turn_seq(self._raw, session_id=session_id, turn_id=turn_id)
        if seq is None:
            return []
        rows = queries.turns_window(
            self._raw, session_id=session_id, seq=seq, window=max(window, 0)
        )
        return [StoredChunk.from_row(r) for r in rows]

    @_reads
    def stats(self) -> StoreStats:
        size = sum(
            p.stat().st_size for p in (self.path, Path(str(self.path) + "-wal")) if p.exists()
        )
        if not self._has_schema:
            return StoreStats(0, 0, {}, None, None, self._conn.vectors, None, 0, size)
        per: dict[str, tuple[int, int]] = {}
        for harness, sessions, chunks in self._raw.execute(
            """select o.harness, count(distinct c.session), count(*)
               from chunks c join origins o on o.id = c.origin group by o.harness"""
        ):
            per[harness] = (int(sessions), int(chunks))
        total_chunks = sum(c for _, c in per.values())
        sessions = self._raw.execute("select count(distinct session) from chunks").fetchone()[0]
        last = self._raw.execute("select max(indexed_at) from units").fetchone()[0]
        units = self._raw.execute("select count(*) from units").fetchone()[0]
        return StoreStats(
            chunks=total_chunks,
            sessions=int(sessions),
            per_harness=per,
            last_indexed=last,
            model_id=self.model_id,
            vectors=self._conn.vectors,
            vector_element=self.vector_element,
            units=int(units),
            file_bytes=size,
        )


__all__ = [
    "DEFAULT_VECTOR_ELEMENT",
    "BlockRows",
    "NO_FILTERS",
    "Filters",
    "Store",
    "StoreState",
    "StoreStats",
    "StoredChunk",
    "UnitRecord",
    "fts_query",
    "versions",
]
