"""The Store's methods that rewrite stored chunks in place: redaction upkeep (funes scrub,
index upgrades, the publish gate) and re-embedding. Their SQL lives in redaction.py and
queries.py.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING

from funes.store import queries, redaction, writes
from funes.store.handle import StoreHandle, reads
from funes.store.redaction import BlockRows, LoggedBlock
from funes.store.rows import StoredChunk

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray


class RedactionUpkeep(StoreHandle):
    """Rewrites of stored chunks (the base of `Store`)."""

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
        `vectors`, a rewritten chunk loses its old vector and is owed one (`owed_vectors`)."""
        has_vec = self._conn.vectors and self.model_id is not None
        blobs = self._vector_bytes(vectors) if vectors is not None and has_vec else None
        meta = (
            redaction.vector_meta(self._raw, [r for r, _ in updates]) if blobs is not None else {}
        )
        with self._tx():
            for i, (rowid, text) in enumerate(updates):
                redaction.update_text(self._raw, rowid, text, redaction_version)
                if has_vec:  # no new vector: drop the old one, a later backfill embeds the new text
                    writes.delete_vector(self._raw, rowid)
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
                writes.delete_vector(self._raw, rowid)
                if blobs is not None and rowid in meta:
                    self._insert_vector(rowid, blobs[i], *meta[rowid])

    @reads
    def exchange(self, prompt: StoredChunk) -> list[tuple[int, str]]:
        """(rowid, text) of the assistant and tool chunks whose embedding context is the user
        prompt `prompt` (see funes.chunks.embedding_input); [] when it opens none."""
        return queries.exchange(self._raw, session_id=prompt.session_id, seq=prompt.seq)

    def set_redaction_floor(self, version: int) -> None:
        with self._tx():
            redaction.set_floor(self._raw, version)

    def gate_rows(
        self, *, after_rowid: int = 0, blocks: Iterable[LoggedBlock] = ()
    ) -> Iterator[tuple[str, str, str, int, int, str, int]]:
        """(id, session_id, turn_id, block_idx, split_idx, text, redaction_version) block by
        block: every chunk of the blocks touched by rows after `after_rowid` (0: all) and of
        `blocks` (from `rewritten_blocks`)."""
        if not self._has_schema:
            return iter(())
        return redaction.gate_rows(self._raw, after_rowid=after_rowid, blocks=blocks)

    @reads
    def rewrite_mark(self) -> int:
        """The memory's last in-place rewrite or deletion of a chunk (a log position, 0: none;
        it only grows): `rewritten_blocks(mark)` later names the blocks changed since."""
        return redaction.log_seq(self._raw) if self._has_schema else 0

    @reads
    def rewritten_blocks(self, after_mark: int) -> list[LoggedBlock] | None:
        """The blocks whose chunks were rewritten in place or deleted after `rewrite_mark()`
        returned `after_mark`; None when the memory no longer knows them all (its writers keep
        the last redaction.LOG_KEEP changes): re-read every block then."""
        if not self._has_schema:
            return None
        return redaction.logged_blocks(self._raw, after_mark)

    def trim_rewrite_log(self, *, keep: int = redaction.LOG_KEEP) -> None:
        """Keep only the last `keep` entries of the rewrite log (writers, on letting go of the
        memory)."""
        if not self._has_schema:
            return
        upto = redaction.log_trim_point(self._raw, keep=keep)
        if upto is not None:
            with self._tx():
                redaction.trim_log(self._raw, upto)

    @reads
    def owed_rescan(self, version: int) -> int:
        """Chunks stored under redaction rules older than `version` (scrub or index fixes them)."""
        return redaction.owed_rescan(self._raw, version) if self._has_schema else 0

    @reads
    def max_rowid(self) -> int:
        """The highest chunk rowid (0 when empty); rowids only grow."""
        return redaction.max_rowid(self._raw) if self._has_schema else 0

    def purge_freed_text(self) -> None:
        """After rewrites: merge FTS segments and truncate the WAL (writable connections run
        with `secure_delete`, so freed pages are already zeroed)."""
        with self._tx():
            redaction.merge_fts(self._raw)
        redaction.truncate_wal(self._raw)

    @reads
    def texts_after(self, after_rowid: int, *, limit: int) -> list[tuple[int, str]]:
        """(rowid, text) of up to `limit` chunks past `after_rowid`, in rowid order."""
        return queries.texts_after(self._raw, after_rowid=after_rowid, limit=limit)

    @reads
    def count_after(self, after_rowid: int) -> int:
        """How many chunks have a rowid above `after_rowid` (0 without a schema)."""
        return queries.count_after(self._raw, after_rowid=after_rowid) if self._has_schema else 0
