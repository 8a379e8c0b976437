"""Read a remote memory at local speed: materialize each commit once into a SQLite memory.

    <cache>/<remote key>/<commit>.db     a funes memory (the local recall path reads it as is)
    <cache>/<remote key>/<commit>.json   the Lance fragments it holds (the next commit's build
                                         starts from a copy and reads only new fragments)
    <cache>/<remote key>/last.json       the last commit read, and when the head was checked

A warm read makes at most one cheap request (the head commit; none within
`revision_ttl_s` of the last check) and no download. Offline, or when the remote cannot be
reached, the last commit read is used and the result says so (`note`, and a label pinned to
that commit: `hf://datasets/org/repo@<sha>`).
"""

from __future__ import annotations

import json
import os
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from filelock import FileLock

from funes.chunks import Chunk
from funes.errors import NoIndex, RemoteOffline
from funes.paths import ensure_private_dir, make_private_file
from funes.remote import lance_export
from funes.remote.base import Remote, Snapshot
from funes.store import DEFAULT_VECTOR_ELEMENT, Store, seal
from funes.traces import BlockType, Harness, Role

KEEP_COMMITS = 2  # materialized commits kept per remote (the current one and its predecessor)


@dataclass(frozen=True, slots=True)
class CachedMemory:
    """A remote commit materialized as a local SQLite memory."""

    path: Path
    commit: str
    label: str  # names the memory read; pinned to the commit when not the live head
    note: str | None = None  # why this is not the live head
    skipped_rows: int = 0  # rows of the remote that could not be read (bad values)


def _read_json(path: Path) -> dict[str, object]:
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}


def _write_json(path: Path, value: dict[str, object]) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(value), encoding="utf-8")
    make_private_file(tmp)
    os.replace(tmp, path)


def forget_check(cache_root: Path, remote: Remote) -> None:
    """Make the next read check the remote's head (after this host pushed to it)."""
    last = cache_root / remote.key / "last.json"
    value = _read_json(last)
    if value:
        value["checked_at"] = 0
        _write_json(last, value)


def open_cached(
    remote: Remote,
    cache_root: Path,
    *,
    revision: str | None = None,
    offline: bool = False,
    revision_ttl_s: float = 0.0,
    accept_model: Callable[[str | None, int], None] | None = None,
) -> CachedMemory:
    """The local memory for `revision` (else the remote's head) of `remote`, built on first use.

    Raises RemoteOffline (offline or unreachable with nothing cached), RemoteMissing,
    RemoteUnauthorized, NoIndex (the remote holds no dataset yet), IncompatibleStore (from
    `accept_model`, given the remote's model id and dimension).
    """
    folder = ensure_private_dir(cache_root / remote.key)
    last_path = folder / "last.json"
    last = _read_json(last_path)
    last_commit = str(last["commit"]) if last.get("commit") else None
    note: str | None = None
    checked = False
    if revision is not None:
        commit = revision
    elif offline:
        if last_commit is None:
            raise RemoteOffline(
                f"offline, and {remote.label} was never read on this machine",
                hint="read it once online (without --offline / HF_HUB_OFFLINE)",
            )
        commit, note = last_commit, f"offline: read {remote.label} as of commit {last_commit[:12]}"
    elif (
        last_commit
        and revision_ttl_s > 0
        and time.time() - float(str(last.get("checked_at", 0))) < revision_ttl_s
    ):
        commit = last_commit
    else:
        try:
            commit = remote.head()
            checked = True
        except RemoteOffline as exc:
            if last_commit is None:
                raise RemoteOffline(
                    f"{exc.message}; it was never read on this machine (no cached copy)",
                    hint="check the network and retry; once read, the cached copy is used "
                    "whenever it cannot be reached",
                ) from exc
            commit = last_commit
            note = f"{remote.label} unreachable: read it as of cached commit {last_commit[:12]}"
    db = folder / f"{commit}.db"
    skipped = 0
    if not db.exists():
        with FileLock(str(folder / ".lock"), mode=0o600):
            if not db.exists():
                snap = remote.snapshot(commit, local_only=offline)
                seed = folder / f"{last_commit}.db" if last_commit else None
                skipped = _build(snap, db, remote.label, seed=seed, accept_model=accept_model)
                _prune(folder, keep={commit, last_commit or commit})
    elif accept_model is not None:
        info = _read_json(db.with_suffix(".json"))
        accept_model(str(info.get("model_id") or "") or None, int(str(info.get("dim") or 0)))
    if last_commit != commit or (checked and revision_ttl_s > 0):
        _write_json(
            last_path,
            {"commit": commit, "checked_at": time.time() if checked else last.get("checked_at", 0)},
        )
    pinned = note is not None or revision is not None
    label = f"{remote.label}@{commit}" if pinned else remote.label
    return CachedMemory(db, commit, label, note, skipped)


def _build(
    snap: Snapshot,
    db: Path,
    label: str,
    *,
    seed: Path | None,
    accept_model: Callable[[str | None, int], None] | None,
) -> int:
    """Materialize `snap` into `db` (atomically); returns rows skipped as unreadable."""
    if not snap.has_dataset:
        raise NoIndex(
            f"memory {label} holds no chunks yet", hint=f"share one with `funes push {label}`"
        )
    found = lance_export.info(snap.dataset, version=snap.version)
    if accept_model is not None:
        accept_model(found.model_id, found.dim)
    if found.model_id is None:
        raise NoIndex(
            f"memory {label} does not name its embedding model", hint="it was not written by funes"
        )
    tmp = db.with_name(f".{db.name}.{os.getpid()}.tmp")
    tmp.unlink(missing_ok=True)
    done: set[int] = set()
    current = lance_export.fragment_rows(snap.dataset, version=snap.version)
    if seed is not None and seed.exists():
        seed_info = _read_json(seed.with_suffix(".json"))
        if seed_info.get("model_id") == found.model_id and _seed_holds_only(seed_info, current):
            shutil.copyfile(seed, tmp)
            done = {int(f) for f in seed_info.get("fragments", []) or []}  # type: ignore[attr-defined]
    skipped = 0
    store = Store.open(tmp, lock_path=tmp.with_suffix(".lock"))
    try:
        store.stamp_model(
            found.model_id,
            found.dim,
            element=DEFAULT_VECTOR_ELEMENT,
            embedding_input=found.embedding_input,
        )
        for batch in lance_export.iter_rows(
            snap.dataset, version=snap.version, skip_fragments=done
        ):
            chunks, keep, versions, bad = _chunks(batch.columns, len(batch))
            skipped += bad
            for version in sorted(set(versions)):
                idx = [i for i, k in enumerate(keep) if versions[i] == version]
                store.add(
                    [chunks[i] for i in idx],
                    batch.vectors[[keep[i] for i in idx]],
                    redaction_version=version,
                )
    finally:
        store.close()
    seal(tmp)
    make_private_file(tmp)
    _write_json(
        db.with_suffix(".json"),
        {
            "model_id": found.model_id,
            "dim": found.dim,
            "fragments": sorted(current),
            "fragment_rows": {str(f): n for f, n in sorted(current.items())},
        },
    )
    os.replace(tmp, db)
    tmp.with_suffix(".lock").unlink(missing_ok=True)
    return skipped


def _seed_holds_only(seed_info: dict[str, object], current: dict[int, int]) -> bool:
    """Whether a cache built from the fragments in `seed_info` holds only rows the commit being
    read still has: every fragment it read is still there, with as many live rows as then
    (a deletion, `funes forget --remote`, rewrites or thins fragments: then rebuild)."""
    fragments = seed_info.get("fragments")
    rows = seed_info.get("fragment_rows")
    if not isinstance(fragments, list):
        return False
    for fragment in fragments:
        if int(fragment) not in current:
            return False
        if isinstance(rows, dict) and rows.get(str(fragment)) != current[int(fragment)]:
            return False
    return True


def drop_cache(cache_root: Path, remote: Remote) -> None:
    """Delete every materialized commit of `remote` (after rows were deleted there, older
    local copies must not keep them)."""
    folder = cache_root / remote.key
    if not folder.is_dir():
        return
    with FileLock(str(folder / ".lock"), mode=0o600):
        for path in folder.iterdir():
            if path.suffix in (".db", ".json") or path.name.endswith(".tmp"):
                path.unlink(missing_ok=True)


def _chunks(cols: dict[str, list[object]], n: int) -> tuple[list[Chunk], list[int], list[int], int]:
    """Rows → Chunks (skipping rows with missing or unknown values); returns the chunks, the
    row index of each, each one's redaction version, and how many rows were skipped."""

    def col(name: str, i: int) -> object:
        values = cols.get(name)
        return values[i] if values is not None else None

    out: list[Chunk] = []
    keep: list[int] = []
    versions: list[int] = []
    bad = 0
    for i in range(n):
        try:
            chunk = Chunk(
                id=str(_required(col("id", i))),
                text=str(_required(col("text", i))),
                session_id=str(_required(col("session_id", i))),
                turn_id=str(_required(col("turn_uuid", i))),
                seq=int(str(_required(col("seq", i)))),
                ts=str(_required(col("ts", i))),
                role=Role(str(col("role", i))),
                block_type=BlockType(str(col("block_type", i))),
                block_idx=int(str(_required(col("block_idx", i)))),
                split_idx=int(str(_required(col("split_idx", i)))),
                harness=Harness(str(col("harness", i))),
                workdir=str(col("workdir", i) or ""),
                source_path=str(col("source_path", i) or ""),
                tool_name=_opt(col("tool_name", i)),
                parent_id=_opt(col("parent_uuid", i)),
                cwd=_opt(col("cwd", i)),
                git_branch=_opt(col("git_branch", i)),
                host=_opt(col("host", i)),
                parent_session_id=_opt(col("parent_session_id", i)),
                scaffold=bool(col("scaffold", i)),
            )
        except (ValueError, TypeError):
            bad += 1
            continue
        out.append(chunk)
        keep.append(i)
        versions.append(int(str(col("redaction_version", i) or 0)))
    return out, keep, versions, bad


def _required(value: object) -> object:
    if value is None:
        raise ValueError("missing value")
    return value


def _opt(value: object) -> str | None:
    return None if value is None else str(value)


def _prune(folder: Path, *, keep: set[str]) -> None:
    for path in folder.glob("*.db"):
        if path.stem not in keep:
            path.unlink(missing_ok=True)
            path.with_suffix(".json").unlink(missing_ok=True)
