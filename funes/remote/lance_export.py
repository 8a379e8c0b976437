"""A memory's chunks as a Lance dataset (`chunks.lance/`): schema, append, indexes, read back.

The dataset is the unit of sharing: a Hugging Face dataset repository or a plain directory
holds one at `chunks.lance/`. Column names and order follow the Rust reference
(`src/memory/dataset.rs`), then funes-py's extra provenance columns:

    id                 string   not null  chunk id: sha1("session:turn:block:split")[:16]
    text               string   not null  the chunk text (≤ 1,200 characters, redacted)
    session_id         string   not null
    workdir            string   not null  the project directory the session ran in
    turn_uuid          string   not null  the turn id within the session
    parent_uuid        string             the parent turn id
    seq                int64    not null  turn position within the session
    ts                 string   not null  turn time, ISO 8601 UTC
    role               string   not null  user | assistant | tool | system
    block_type         string   not null  text | thinking | tool_use | tool_result
    tool_name          string
    source_path        string   not null  the transcript file on the pushing host
    block_idx          int32    not null  block position within the turn
    split_idx          int32    not null  piece position within the block
    vector             fixed_size_list<float32, dim>  not null  L2-normalised embedding
    harness            string   not null  claude_code | codex | pi | hermes | parquet
    repo               string             reserved (the Rust reference's project); null here
    host               string             the machine that indexed the turn
    cwd                string
    git_branch         string
    parent_session_id  string             the spawning session of a subagent
    scaffold           bool     not null  harness-injected text rather than a person's words
    redaction_version  int32    not null  the redaction rule set applied at index time

Schema metadata: `embedding_model` (the embedder's model id, e.g.
`BAAI/bge-small-en-v1.5@<revision>`), `embedding_dim`, `embedding_input` (the recipe of the
memory that created the dataset; absent = `text`), `funes_format` (`funes-lance/1`).
A reader refuses a dataset whose model or dimension differ from the memory it is merged
with. Indexes: `text_idx` (INVERTED, full text) always; `vector_idx` (IVF_PQ, L2) once the
dataset holds `MIN_VECTOR_INDEX_ROWS` rows; appended rows are folded in as index deltas when
more than `REINDEX_THRESHOLD` rows are unindexed (unindexed rows stay searchable by scan).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from funes.chunks import EMBED_INPUT, LEGACY_EMBED_INPUT
from funes.errors import IncompatibleStore, RemoteError
from funes.store import StoredChunk

if TYPE_CHECKING:
    import numpy as np
    import pyarrow as pa
    from numpy.typing import NDArray

TABLE = "chunks.lance"
FORMAT = "funes-lance/1"
MIN_VECTOR_INDEX_ROWS = 256  # PQ trains 256 centroids per sub-vector
REINDEX_THRESHOLD = 500  # unindexed rows before an append folds in an index delta
MERGE_DELTAS = 8  # index segments before deltas are merged
APPEND_ROWS = 32_768  # rows per Lance append of a push: what one vector-index step holds
FTS_MEMORY_MIB = 256  # cap of the full-text index build (Lance's default: 2 GiB per core)
TEXT_INDEX = "text_idx"
VECTOR_INDEX = "vector_idx"

# (column, arrow type name, nullable, StoredChunk field or None)
COLUMNS: tuple[tuple[str, str, bool, str | None], ...] = (
    ("id", "string", False, "id"),
    ("text", "string", False, "text"),
    ("session_id", "string", False, "session_id"),
    ("workdir", "string", False, "workdir"),
    ("turn_uuid", "string", False, "turn_id"),
    ("parent_uuid", "string", True, "parent_id"),
    ("seq", "int64", False, "seq"),
    ("ts", "string", False, "ts"),
    ("role", "string", False, "role"),
    ("block_type", "string", False, "block_type"),
    ("tool_name", "string", True, "tool_name"),
    ("source_path", "string", False, "source_path"),
    ("block_idx", "int32", False, "block_idx"),
    ("split_idx", "int32", False, "split_idx"),
    ("vector", "vector", False, None),
    ("harness", "string", False, "harness"),
    ("repo", "string", True, None),
    ("host", "string", True, "host"),
    ("cwd", "string", True, "cwd"),
    ("git_branch", "string", True, "git_branch"),
    ("parent_session_id", "string", True, "parent_session_id"),
    ("scaffold", "bool", False, "scaffold"),
    ("redaction_version", "int32", False, "redaction_version"),
)


@dataclass(frozen=True, slots=True)
class DatasetInfo:
    model_id: str | None
    dim: int
    rows: int
    version: int
    embedding_input: str = LEGACY_EMBED_INPUT  # the recipe of the first push (funes.chunks)


def arrow_schema(model_id: str, dim: int, embedding_input: str = EMBED_INPUT) -> pa.Schema:
    """The Arrow schema of a funes Lance dataset for `model_id` vectors of `dim` floats,
    embedded under the `embedding_input` recipe (funes.chunks)."""
    import pyarrow as pa

    types = {"string": pa.string(), "int64": pa.int64(), "int32": pa.int32(), "bool": pa.bool_()}
    fields = [
        pa.field(
            name,
            pa.list_(pa.float32(), dim) if kind == "vector" else types[kind],
            nullable=nullable,
        )
        for name, kind, nullable, _ in COLUMNS
    ]
    meta = {
        "embedding_model": model_id,
        "embedding_dim": str(dim),
        "embedding_input": embedding_input,
        "funes_format": FORMAT,
    }
    return pa.schema(fields, metadata=meta)


def to_batch(
    rows: list[StoredChunk], vectors: NDArray[np.float32], schema: pa.Schema
) -> pa.RecordBatch:
    """One Arrow batch of `rows` (row i ↔ vectors[i]) in `schema`'s columns.

    Columns of `schema` funes does not know are filled with nulls (appending to a dataset
    written by another tool keeps its schema).
    """
    import numpy as np
    import pyarrow as pa

    sources = {name: field for name, _, _, field in COLUMNS}
    arrays = []
    for f in schema:
        if f.name == "vector":
            flat = pa.array(np.ascontiguousarray(vectors, dtype=np.float32).ravel(), pa.float32())
            arrays.append(pa.FixedSizeListArray.from_arrays(flat, f.type.list_size))
            continue
        attr = sources.get(f.name)
        if attr is None:
            arrays.append(pa.nulls(len(rows), f.type))
            continue
        values = [getattr(r, attr) for r in rows]
        if f.name == "scaffold":
            values = [bool(v) for v in values]
        arrays.append(pa.array(values, f.type))
    return pa.RecordBatch.from_arrays(arrays, schema=schema)


def _meta(schema: pa.Schema) -> tuple[str | None, int]:
    raw = schema.metadata or {}
    model = raw.get(b"embedding_model")
    dim = raw.get(b"embedding_dim")
    if dim is None:
        idx = schema.get_field_index("vector")
        dim = str(schema.field(idx).type.list_size).encode() if idx >= 0 else b"0"
    return (model.decode() if model else None), int(dim)


def _recipe(schema: pa.Schema) -> str:
    """The embedding recipe a dataset declares (datasets from before recipes: the legacy one)."""
    value = (schema.metadata or {}).get(b"embedding_input")
    return value.decode() if value else LEGACY_EMBED_INPUT


def open_dataset(dataset: Path, *, version: int | None = None) -> Any:
    """Open the Lance dataset at `dataset` (at `version`, else its latest)."""
    lance = _lance()

    return lance.dataset(str(dataset), version=version)


def info(dataset: Path, *, version: int | None = None) -> DatasetInfo:
    """Model, dimension, row count and version of a dataset. Raises RemoteError when unreadable."""
    try:
        ds = open_dataset(dataset, version=version)
        model, dim = _meta(ds.schema)
        return DatasetInfo(model, dim, ds.count_rows(), ds.version, _recipe(ds.schema))
    except Exception as exc:
        raise RemoteError(
            f"cannot read the Lance dataset at {dataset}: {type(exc).__name__}: {exc}"
        ) from exc


def check_compat(found: DatasetInfo, model_id: str, dim: int, *, where: str) -> None:
    """Raise IncompatibleStore unless `found` holds `model_id` vectors of `dim` floats."""
    if found.model_id != model_id or found.dim != dim:
        raise IncompatibleStore(
            f"{where} holds {found.model_id or 'unknown-model'} vectors ({found.dim}-d); "
            f"this memory uses {model_id} ({dim}-d)",
            hint="share each memory with a remote built with the same embedding model "
            "(FUNES_EMBEDDER), or pick another remote",
        )


def write(
    dataset: Path,
    batches: Iterable[tuple[list[StoredChunk], NDArray[np.float32]]],
    *,
    model_id: str,
    dim: int,
    embedding_input: str = EMBED_INPUT,
    append_rows: int = APPEND_ROWS,
    actions: list[str] | None = None,
) -> int:
    """Append the batches to the dataset at `dataset` (creating it, stamped with
    `embedding_input`), keeping its indexes current; returns rows written.

    Runs in bounded memory whatever the number of rows (bench/push_memory.py measures it):
    rows go to Lance in appends of about `append_rows`, one Arrow batch in memory at a time;
    the vector index is created on the first append and gets a delta after each later one
    (building it over all rows at once holds every vector: ~2 KB a row); the full-text index
    is built or folded in once, at the end, its build capped at FTS_MEMORY_MIB (its deltas
    kept growing the process by ~1 KB a row each); `push` caps the process's malloc arenas
    first (funes.remote.arenas). What was done is added to `actions`. The
    caller makes sure there is at least one row (an empty append still makes a version).
    """
    lance = _lance()
    import pyarrow as pa

    if (dataset / "_versions").is_dir():
        ds = lance.dataset(str(dataset))
        check_compat(
            DatasetInfo(*_meta(ds.schema), 0, ds.version), model_id, dim, where=str(dataset)
        )
        schema, mode = ds.schema, "append"
    else:
        schema, mode = arrow_schema(model_id, dim, embedding_input), "create"
    done = actions if actions is not None else []
    source = iter(batches)
    ahead = next(source, None)
    written = 0
    while ahead is not None:
        taken = 0

        def gen() -> Iterator[pa.RecordBatch]:
            nonlocal ahead, taken
            while ahead is not None and (taken == 0 or taken + len(ahead[0]) <= append_rows):
                rows, vectors = ahead
                taken += len(rows)
                yield to_batch(rows, vectors, schema)
                ahead = next(source, None)

        reader = pa.RecordBatchReader.from_batches(schema, gen())
        lance.write_dataset(reader, str(dataset), schema=schema, mode=mode)
        mode = "append"
        written += taken
        done.extend(_fold(dataset, VECTOR_INDEX))
    done.extend(_fold(dataset, TEXT_INDEX))
    return written


def maintain_indexes(dataset: Path) -> list[str]:
    """Create missing indexes and fold unindexed rows in as deltas; returns what was done."""
    return [*_fold(dataset, VECTOR_INDEX), *_fold(dataset, TEXT_INDEX)]


def _fold(dataset: Path, name: str) -> list[str]:
    """Create index `name` when missing (and there are enough rows), or add a delta for the
    rows appended since it was last updated once more than REINDEX_THRESHOLD wait (merging
    the deltas once MERGE_DELTAS pile up)."""
    lance = _lance()

    ds = lance.dataset(str(dataset))
    rows = ds.count_rows()
    found = {d.name: d for d in ds.describe_indices()}
    if name not in found:
        if name == TEXT_INDEX and rows:
            ds.create_scalar_index(
                "text",
                index_type="INVERTED",
                name=TEXT_INDEX,
                memory_limit=FTS_MEMORY_MIB,
                num_workers=1,
            )
            return [f"created {TEXT_INDEX}"]
        if name == VECTOR_INDEX and rows >= MIN_VECTOR_INDEX_ROWS:
            _, dim = _meta(ds.schema)
            ds.create_index(
                "vector",
                index_type="IVF_PQ",
                name=VECTOR_INDEX,
                metric="l2",
                num_partitions=max(1, min(256, rows // 4096)),
                num_sub_vectors=dim // 16 if dim % 16 == 0 else 1,
            )
            return [f"created {VECTOR_INDEX}"]
        return []
    stale = rows - found[name].num_rows_indexed
    if stale <= REINDEX_THRESHOLD:
        return []
    merge = MERGE_DELTAS if len(found[name].segments) >= MERGE_DELTAS else 0
    ds.optimize.optimize_indices(num_indices_to_merge=merge, index_names=[name])
    return [f"indexed {stale} appended rows in {name}" + (" (merged deltas)" if merge else "")]


def iter_ids(
    dataset: Path, *, version: int | None = None, batch_rows: int = 8192
) -> Iterator[list[str]]:
    """The dataset's chunk ids, a batch at a time."""
    ds = open_dataset(dataset, version=version)
    for batch in ds.to_batches(columns=["id"], batch_size=batch_rows):
        yield [str(v) for v in batch.column(0).to_pylist()]


@dataclass(slots=True)
class RowBatch:
    """Rows read back from a dataset: column name → values, and their vectors (n, dim)."""

    columns: dict[str, list[Any]]
    vectors: NDArray[np.float32]
    fragment_id: int

    def __len__(self) -> int:
        return len(self.vectors)


def iter_rows(
    dataset: Path,
    *,
    version: int | None = None,
    skip_fragments: Iterable[int] = (),
    batch_rows: int = 2048,
) -> Iterator[RowBatch]:
    """Every row of the dataset's fragments not in `skip_fragments` (fragments are immutable:
    a reader that has materialized fragment N never needs to read it again)."""
    import numpy as np

    ds = open_dataset(dataset, version=version)
    names = [f.name for f in ds.schema]
    wanted = [n for n, _, _, _ in COLUMNS if n in names and n != "vector"]
    skip = set(skip_fragments)
    for frag in ds.get_fragments():
        if frag.fragment_id in skip:
            continue
        for batch in frag.to_batches(columns=[*wanted, "vector"], batch_size=batch_rows):
            cols = {n: batch.column(n).to_pylist() for n in wanted}
            vec = batch.column("vector")
            flat = vec.flatten().to_numpy(zero_copy_only=False).astype(np.float32, copy=False)
            yield RowBatch(cols, flat.reshape(len(batch), -1), frag.fragment_id)


def _in_list(column: str, values: list[str]) -> str:
    """A Lance (DataFusion SQL) `column IN (…)` filter; quotes in values are doubled."""
    quoted = ", ".join("'" + v.replace("'", "''") + "'" for v in values)
    return f"{column} IN ({quoted})"


def ids_of_sessions(
    dataset: Path, session_ids: list[str], *, version: int | None = None, batch: int = 200
) -> list[str]:
    """The chunk ids of the dataset's rows of `session_ids`."""
    ds = open_dataset(dataset, version=version)
    found: list[str] = []
    for start in range(0, len(session_ids), batch):
        part = session_ids[start : start + batch]
        table = ds.to_table(columns=["id"], filter=_in_list("session_id", part))
        found.extend(str(v) for v in table.column(0).to_pylist())
    return found


def iter_texts(
    dataset: Path,
    *,
    version: int | None = None,
    session_ids: list[str] | None = None,
    batch_rows: int = 8192,
    batch_sessions: int = 200,
) -> Iterator[list[tuple[str, str, str]]]:
    """(id, session_id, text) of the dataset's rows (only those of `session_ids` when given),
    a batch at a time: what a push compares with the memory's text of the same ids."""
    ds = open_dataset(dataset, version=version)
    columns = ["id", "session_id", "text"]
    if session_ids is None:
        filters: list[str | None] = [None]
    else:
        filters = [
            _in_list("session_id", session_ids[i : i + batch_sessions])
            for i in range(0, len(session_ids), batch_sessions)
        ]
    for where in filters:
        for batch in ds.to_batches(columns=columns, filter=where, batch_size=batch_rows):
            ids, sessions, texts = (batch.column(n).to_pylist() for n in columns)
            yield list(zip(ids, sessions, texts, strict=True))


def delete_sessions(dataset: Path, session_ids: list[str], *, batch: int = 200) -> int:
    """Delete every row of `session_ids` so that no file of the dataset holds them any more
    (see `delete_where`). Returns rows deleted."""
    return delete_where(
        dataset,
        [
            _in_list("session_id", session_ids[i : i + batch])
            for i in range(0, len(session_ids), batch)
        ],
    )


def delete_ids(dataset: Path, ids: list[str], *, batch: int = 500) -> int:
    """Delete the rows of chunk `ids` so that no file of the dataset holds them any more
    (see `delete_where`). Returns rows deleted."""
    return delete_where(
        dataset, [_in_list("id", ids[i : i + batch]) for i in range(0, len(ids), batch)]
    )


def delete_where(dataset: Path, filters: list[str]) -> int:
    """Delete the rows matching any of `filters` so that no file of the dataset holds them.

    Deletes (a new version), compacts with deletions materialized (the fragments that held
    them are rewritten without them; indexes are remapped), then removes every older version
    and the files only they used. Returns rows deleted. Older versions of the dataset cannot
    be read afterwards: that is the point.
    """
    import datetime as dt

    lance = _lance()

    ds = lance.dataset(str(dataset))
    before = ds.count_rows()
    for where in filters:
        ds.delete(where)
    ds = lance.dataset(str(dataset))
    deleted = int(before - ds.count_rows())
    if deleted:
        ds.optimize.compact_files(materialize_deletions=True, materialize_deletions_threshold=0.0)
        ds = lance.dataset(str(dataset))
        ds.cleanup_old_versions(older_than=dt.timedelta(0), delete_unverified=True)
    return deleted


def fragment_rows(dataset: Path, *, version: int | None = None) -> dict[int, int]:
    """fragment id → live rows (after deletions) of each fragment."""
    return {
        f.fragment_id: f.count_rows()
        for f in open_dataset(dataset, version=version).get_fragments()
    }


def require() -> None:
    """Raise RemoteError (with the fix) when pylance is not installed."""
    _lance()


def _lance() -> Any:
    """The `lance` module (pylance, the `hub` extra), or RemoteError saying how to get it."""
    try:
        import lance
    except ImportError:
        raise RemoteError(
            "sharing a memory needs pylance, which this funes was installed without",
            hint="reinstall with the hub extra: uv tool install --reinstall '.[hub]' "
            "(pipx: pipx install --force '.[hub]'; a venv: pip install 'funes[hub]')",
        ) from None
    return lance
