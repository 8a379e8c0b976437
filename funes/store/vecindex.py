"""The vector index beside a large memory: a candidate set chosen by sign codes, ranked by the
exact int8 distances; one file next to the memory, caught up from its `vector_log`.

sqlite-vec's brute-force KNN costs ~0.4 µs per stored vector (400 ms at a million chunks).
This index keeps, for every vector, its int8 components (as chunks_vec holds them) and a
48-byte code: the signs of the vector minus a fixed center (the mean vector when the file was
built; L2 distances do not change under that shift). A query's code is compared with every
stored code (Hamming distance, word by word over contiguous arrays: ~50 MB at a million), the
`oversample` closest rows are ranked by their exact int8 L2 distance to the query — what
sqlite-vec computes — and the best `k` returned. It holds what the vector leg searches
(block types other than queries.LEXICAL_ONLY); a filtered search asks sqlite-vec. When the index holds no more rows than
`oversample` the answer is exactly sqlite-vec's (ties broken by rowid); above, a true
neighbour is missed only when its code ranks it out of the candidates.

SQLite stays the store of record. Every change to chunks_vec appends the chunk's rowid to
`vector_log` (schema 6). The file records the last log entry it reflects (`seq`); a reader
re-reads, from chunks_vec itself, the vectors of every rowid logged after it, and leaves out
that rowid's rows in the file, so a vector written, replaced or deleted after the file was last
synced is seen as SQLite has it: nothing deleted is returned and nothing new is missed. Writers
(`Store.writing`) sync the file when they let go of the memory (append new rows, tombstone
changed ones, then move `seq`) and trim the log up to it; a missing, damaged, stale or foreign
file (another memory's, a model change, a restored backup) is rebuilt from chunks_vec. A reader
that finds no usable file, or a log tail too long to re-read, falls back to sqlite-vec.

Layout of `<memory>.vecidx` (native byte order):
    header   4096 bytes: JSON, space padded ({"format", "memory", "model", "dim", "scale",
             "seq", "rows", "capacity"})
    center   float32[dim]
    rowids   int64[capacity]           a chunk's rowid per row; -1: tombstone
    codes    uint64[words][capacity]   sign bits of (vector - center), word-major
    vectors  int8[capacity][dim]
"""

from __future__ import annotations

import contextlib
import json
import mmap
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from funes.store.queries import LEXICAL_ONLY

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

FORMAT = "funes-vecidx/1"
HEADER_BYTES = 4096
MIN_ROWS = 50_000  # below this many vectors sqlite-vec's scan is fast enough: no file
OVERSAMPLE = 2_000  # rows ranked by exact distance per query (k ≤ this)
MAX_TAIL = 20_000  # log entries a reader re-reads from chunks_vec before falling back
BATCH = 10_000  # rows read from chunks_vec per step of a build or catch-up


def path_for(db: Path) -> Path:
    return db.with_name(db.name + ".vecidx")


@dataclass(frozen=True, slots=True)
class Header:
    memory: str
    model: str
    dim: int
    scale: float
    seq: int
    rows: int
    capacity: int

    @property
    def words(self) -> int:
        return (self.dim + 63) // 64

    def encode(self) -> bytes:
        body = json.dumps(
            {
                "format": FORMAT,
                "memory": self.memory,
                "model": self.model,
                "dim": self.dim,
                "scale": self.scale,
                "seq": self.seq,
                "rows": self.rows,
                "capacity": self.capacity,
            }
        ).encode()
        if len(body) > HEADER_BYTES:
            raise ValueError("vector index header too long")
        return body.ljust(HEADER_BYTES, b" ")

    @classmethod
    def decode(cls, raw: bytes) -> Header | None:
        try:
            d = json.loads(raw.decode().strip())
            if d.get("format") != FORMAT:
                return None
            return cls(
                str(d["memory"]),
                str(d["model"]),
                int(d["dim"]),
                float(d["scale"]),
                int(d["seq"]),
                int(d["rows"]),
                int(d["capacity"]),
            )
        except (ValueError, KeyError, TypeError, UnicodeDecodeError):
            return None

    def offsets(self) -> tuple[int, int, int, int, int]:
        """(center, rowids, codes, vectors, end) byte offsets."""
        center = HEADER_BYTES
        rowids = center + 4 * self.dim
        codes = rowids + 8 * self.capacity
        vectors = codes + 8 * self.words * self.capacity
        end = vectors + self.dim * self.capacity
        return center, rowids, codes, vectors, end


@dataclass(frozen=True, slots=True)
class Expect:
    """What a memory's index file must say to be used: the memory, model, dimension, scale,
    and how far the memory's log has gone (a file past it belongs to another state)."""

    memory: str
    model: str
    dim: int
    scale: float
    last_seq: int


class Arrays:
    """An index file mapped read-only (or read-write for its writer)."""

    def __init__(self, path: Path, *, write: bool = False) -> None:
        import numpy as np

        self.path = path
        flags = os.O_RDWR if write else os.O_RDONLY
        fd = os.open(path, flags)
        try:
            self.stat = os.fstat(fd)
            size = self.stat.st_size
            if size < HEADER_BYTES:
                raise ValueError("truncated")
            access = mmap.ACCESS_WRITE if write else mmap.ACCESS_READ
            self.map = mmap.mmap(fd, size, access=access)
        finally:
            os.close(fd)
        header = Header.decode(self.map[:HEADER_BYTES])
        if header is None:
            self.map.close()
            raise ValueError("bad header")
        self.header = header
        center, rowids, codes, vectors, end = header.offsets()
        if end > size:
            self.map.close()
            raise ValueError("truncated")
        buf: Any = self.map
        self.center = np.frombuffer(buf, np.float32, header.dim, center)
        self.rowids = np.frombuffer(buf, np.int64, header.capacity, rowids)
        self.codes = np.frombuffer(buf, np.uint64, header.words * header.capacity, codes).reshape(
            header.words, header.capacity
        )
        self.vectors = np.frombuffer(buf, np.int8, header.dim * header.capacity, vectors).reshape(
            header.capacity, header.dim
        )

    def reread_header(self) -> Header | None:
        return Header.decode(self.map[:HEADER_BYTES])

    def close(self) -> None:
        # drop the views before the map (numpy keeps exported buffers alive otherwise)
        del self.center, self.rowids, self.codes, self.vectors
        with contextlib.suppress(BufferError):  # a view still alive: the map goes with it
            self.map.close()


def sign_codes(vectors: NDArray[Any], center: NDArray[np.float32], words: int) -> NDArray[Any]:
    """uint64[words][n]: bit j of row i set when vectors[i, j] > center[j]."""
    import numpy as np

    bits = np.asarray(vectors, dtype=np.float32) > center
    pad = words * 64 - bits.shape[1]
    if pad:
        bits = np.concatenate([bits, np.zeros((bits.shape[0], pad), dtype=bool)], axis=1)
    packed = np.packbits(bits, axis=1, bitorder="little")  # (n, words * 8) bytes
    return np.ascontiguousarray(packed.view(np.uint64).T)


def hamming(codes: NDArray[Any], query: NDArray[Any], rows: int) -> NDArray[Any]:
    """uint16[rows]: Hamming distance of each stored code (word-major) to the query's."""
    import numpy as np

    out = np.zeros(rows, dtype=np.uint16)
    word = np.empty(rows, dtype=np.uint64)
    bits = np.empty(rows, dtype=np.uint8)
    for w in range(codes.shape[0]):
        np.bitwise_xor(codes[w, :rows], query[w], out=word)
        np.bitwise_count(word, out=bits)
        np.add(out, bits, out=out)
    return out


def smallest(values: NDArray[Any], n: int) -> NDArray[Any]:
    """Indexes of (at least) the `n` smallest small non-negative integers in `values`, all
    rows tied with the n-th included (a histogram threshold: no sort of the whole array)."""
    import numpy as np

    if n >= len(values):
        return np.arange(len(values))
    counts = np.bincount(values)
    cut = int(np.searchsorted(np.cumsum(counts), n))
    return np.flatnonzero(values <= cut)


def rank(
    query: NDArray[np.int8],
    candidates: NDArray[np.int8],
    rowids: Sequence[int] | NDArray[Any],
    k: int,
) -> list[tuple[int, float]]:
    """(rowid, L2 distance) of the best `k` of `candidates` (int8 rows, rowids[i] ↔ row i) by
    exact int8 L2 distance to `query`, ties by rowid — sqlite-vec's measure."""
    import numpy as np

    if len(candidates) == 0:
        return []
    diff = candidates.astype(np.int32) - query.astype(np.int32)
    d2 = np.einsum("ij,ij->i", diff, diff)
    ids = np.asarray(rowids, dtype=np.int64)
    order = np.lexsort((ids, d2))[:k]
    return [(int(ids[i]), float(np.sqrt(d2[i]))) for i in order]


# -- the memory's side (SQL) --------------------------------------------------------------


def last_seq(raw: Any) -> int:
    """The last `vector_log` entry ever written (0: none); trimming the log keeps it."""
    row = raw.execute("select seq from sqlite_sequence where name = 'vector_log'").fetchone()
    return int(row[0]) if row is not None else 0


def logged_since(raw: Any, seq: int, *, limit: int) -> list[int] | None:
    """Distinct rowids logged after `seq`, or None when there are more than `limit` entries."""
    rows = raw.execute(
        "select rowid from vector_log where seq > ? order by seq limit ?", (seq, limit + 1)
    ).fetchall()
    if len(rows) > limit:
        return None
    return sorted({int(r[0]) for r in rows})


def stored_vectors(raw: Any, rowids: Sequence[int], dim: int) -> dict[int, NDArray[np.int8]]:
    """The int8 vectors chunks_vec holds now for `rowids` (absent: no vector)."""
    import numpy as np

    out: dict[int, NDArray[np.int8]] = {}
    for start in range(0, len(rowids), 500):
        part = list(rowids[start : start + 500])
        marks = ",".join("?" * len(part))
        for rowid, blob in raw.execute(
            f"select rowid, embedding from chunks_vec where rowid in ({marks}) and {_SEARCHED}",
            part,
        ):
            vector = np.frombuffer(blob, dtype=np.int8)
            if vector.size == dim:
                out[int(rowid)] = vector
    return out


def _all_vectors(raw: Any, dim: int) -> Any:
    """(rowids, int8 vectors) batches of everything chunks_vec holds, in rowid order."""
    import numpy as np

    after = -1
    while True:
        rows = raw.execute(
            """select rowid, embedding, block_type from chunks_vec where rowid > ?
                order by rowid limit ?""",
            (after, BATCH),
        ).fetchall()
        if not rows:
            return
        after = int(rows[-1][0])
        rows = [r for r in rows if r[2] not in LEXICAL_ONLY]
        if not rows:
            continue
        ids = np.array([r[0] for r in rows], dtype=np.int64)
        vecs = np.frombuffer(b"".join(r[1] for r in rows), dtype=np.int8).reshape(len(rows), dim)
        yield ids, vecs


_SEARCHED = f"block_type not in ({', '.join(repr(t) for t in LEXICAL_ONLY)})"


def vector_count_at_least(raw: Any, n: int) -> bool:
    """Whether chunks_vec holds at least `n` vectors. A memory whose highest chunk rowid is
    below `n` cannot (no scan); otherwise at most `n` vector rowids are read."""
    top = raw.execute("select max(rowid) from chunks").fetchone()[0]
    if top is None or int(top) < n:
        return False
    row = raw.execute(
        "select count(*) from (select rowid from chunks_vec limit ?)", (n,)
    ).fetchone()
    return int(row[0]) >= n


def trim_log(raw: Any, upto: int) -> None:
    raw.execute("delete from vector_log where seq <= ?", (upto,))


# -- reading ------------------------------------------------------------------------------


class Reader:
    """One memory's index file as a reader maps it (re-mapped when the file changes)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._arrays: Arrays | None = None

    def arrays(self) -> Arrays | None:
        try:
            st = os.stat(self.path)
        except OSError:
            self.close()
            return None
        cur = self._arrays
        if cur is not None and (cur.stat.st_ino, cur.stat.st_size) == (st.st_ino, st.st_size):
            return cur
        self.close()
        try:
            self._arrays = Arrays(self.path)
        except (OSError, ValueError):
            self._arrays = None
        return self._arrays

    def close(self) -> None:
        if self._arrays is not None:
            self._arrays.close()
            self._arrays = None

    def search(
        self, raw: Any, expect: Expect, query: NDArray[np.int8], k: int
    ) -> list[tuple[int, float]] | None:
        """The `k` nearest chunks to the int8 `query`, nearest first, as sqlite-vec ranks them
        (see module docstring); None when the file cannot answer (the caller asks sqlite-vec).

        Runs in one read transaction of `raw`, opened before the file's header is read: a log
        entry the file does not reflect is then always in the tail this reader re-reads.
        """
        import numpy as np

        own = not raw.in_transaction
        if own:
            raw.execute("begin")
        try:
            last = last_seq(raw)  # the first read fixes this reader's snapshot
            arrays = self.arrays()
            if arrays is None:
                return None
            header = arrays.reread_header()
            if header is None or not _matches(header, expect, last):
                return None
            tail = logged_since(raw, header.seq, limit=MAX_TAIL)
            if tail is None:
                return None
            fresh = stored_vectors(raw, tail, header.dim) if tail else {}
        finally:
            if own:
                raw.execute("commit")
        rows = min(header.rows, header.capacity)
        qcode = sign_codes(query.reshape(1, -1), arrays.center, header.words)[:, 0]
        pick = smallest(hamming(arrays.codes, qcode, rows), max(OVERSAMPLE, k))
        ids = arrays.rowids[pick]
        keep = ids >= 0
        if tail:
            keep &= ~np.isin(ids, np.asarray(tail, dtype=np.int64))
        pick, ids = pick[keep], ids[keep]
        candidates = arrays.vectors[pick]
        if fresh:
            candidates = np.concatenate([candidates, np.stack(list(fresh.values()))])
            ids = np.concatenate([ids, np.fromiter(fresh.keys(), dtype=np.int64)])
        return rank(query, candidates, ids, k)


def _matches(header: Header, expect: Expect, last: int) -> bool:
    return (
        header.memory == expect.memory
        and header.model == expect.model
        and header.dim == expect.dim
        and header.scale == expect.scale
        and header.seq <= last
        and header.rows <= header.capacity
    )


# -- writing ------------------------------------------------------------------------------


def sync(raw: Any, path: Path, expect: Expect, *, min_rows: int = MIN_ROWS) -> str:
    """Bring the file beside a memory up to its log (the writer holds the memory). Returns what
    it did: "none" (too few vectors: no file, log trimmed), "built", "caught-up", "current".

    A file that does not match the memory is rebuilt from chunks_vec, as is one with a quarter
    of its rows tombstoned or no room left; otherwise the logged rowids are tombstoned in place,
    their current vectors appended, the header moved to the last log entry, then the log
    trimmed up to it. A crash at any step leaves a file a reader can use (the header moves
    last) or one the next writer rebuilds.
    """
    last = last_seq(raw)
    arrays = None
    if path.exists():
        try:
            arrays = Arrays(path, write=True)
        except (OSError, ValueError):
            arrays = None
    if arrays is None or not _matches(arrays.header, expect, last):
        if arrays is not None:
            arrays.close()
        if not vector_count_at_least(raw, min_rows):
            path.unlink(missing_ok=True)
            _trim(raw, last)
            return "none"
        build(raw, path, expect)
        return "built"
    try:
        header = arrays.header
        if header.seq == last:
            return "current"
        tail = logged_since(raw, header.seq, limit=max(header.rows // 4, BATCH))
        if tail is None:
            arrays.close()
            arrays = None
            build(raw, path, expect)
            return "built"
        fresh = stored_vectors(raw, tail, header.dim)
        rows = header.rows
        if rows + len(fresh) > header.capacity or _tombstones(arrays, rows, tail) > rows // 4:
            arrays.close()
            arrays = None
            build(raw, path, expect)
            return "built"
        import numpy as np

        if fresh:
            ids = np.fromiter(fresh.keys(), dtype=np.int64)
            vecs = np.stack(list(fresh.values()))
            end = rows + len(ids)
            arrays.vectors[rows:end] = vecs
            arrays.codes[:, rows:end] = sign_codes(vecs, arrays.center, header.words)
            arrays.rowids[rows:end] = ids
            rows = end
        arrays.map.flush()
        moved = Header(
            header.memory, header.model, header.dim, header.scale, last, rows, header.capacity
        )
        arrays.map[:HEADER_BYTES] = moved.encode()
        arrays.map.flush()
    finally:
        if arrays is not None:
            arrays.close()
    _trim(raw, last)
    return "caught-up"


def _tombstones(arrays: Arrays, rows: int, changed: Sequence[int]) -> int:
    """Tombstone the rows of `changed` rowids (in place); the file's tombstones after it."""
    import numpy as np

    ids = arrays.rowids
    if changed:
        hit = np.isin(ids[:rows], np.asarray(changed, dtype=np.int64))
        ids[:rows][hit] = -1
    return int(np.count_nonzero(ids[:rows] < 0))


def build(raw: Any, path: Path, expect: Expect) -> None:
    """Write the whole file from chunks_vec (two streamed passes: the center, then the rows)
    into a temporary file renamed over `path`; trim the log up to the entry it reflects."""
    import numpy as np

    tmp = path.with_name(path.name + ".tmp")
    own = not raw.in_transaction
    if own:
        raw.execute("begin")  # one snapshot: the vectors read are those of `last`
    try:
        last = last_seq(raw)
        total = np.zeros(expect.dim, dtype=np.float64)
        count = 0
        for _, vecs in _all_vectors(raw, expect.dim):
            total += vecs.sum(axis=0, dtype=np.int64)
            count += len(vecs)
        capacity = count + count // 8 + BATCH  # room to append before a rebuild
        empty = Header(expect.memory, expect.model, expect.dim, expect.scale, last, 0, capacity)
        fd = os.open(tmp, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            os.write(fd, empty.encode())
            os.ftruncate(fd, empty.offsets()[-1])
        finally:
            os.close(fd)
        arrays = Arrays(tmp, write=True)
        try:
            arrays.center[:] = (total / max(count, 1)).astype(np.float32)
            arrays.rowids[:] = -1
            rows = 0
            for ids, vecs in _all_vectors(raw, expect.dim):
                end = rows + len(ids)
                arrays.rowids[rows:end] = ids
                arrays.vectors[rows:end] = vecs
                arrays.codes[:, rows:end] = sign_codes(vecs, arrays.center, empty.words)
                rows = end
            arrays.map.flush()
            done = Header(
                expect.memory, expect.model, expect.dim, expect.scale, last, rows, capacity
            )
            arrays.map[:HEADER_BYTES] = done.encode()
            arrays.map.flush()
        finally:
            arrays.close()
    finally:
        if own:
            raw.execute("commit")
    os.replace(tmp, path)
    _trim(raw, last)


def _trim(raw: Any, upto: int) -> None:
    own = not raw.in_transaction
    if own:
        raw.execute("begin immediate")
    try:
        trim_log(raw, upto)
    except BaseException:
        if own:
            raw.execute("rollback")
        raise
    if own:
        raw.execute("commit")
