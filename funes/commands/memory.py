"""Which memory a command reads or writes: `local`, a path, or a remote (`org/repo`, hf://…).

A memory reference is parsed once; reading opens the right Store (for a remote, a local
cache of its current commit). A caller that named a memory never silently reads another.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

from funes.commands.runtime import Runtime
from funes.errors import NoIndex, RemoteError, StoreError, UsageError
from funes.store import Store, StoreState


class MemoryKind(StrEnum):
    LOCAL = "local"  # the default memory in the data dir
    PATH = "path"  # an explicit SQLite memory file, or a directory holding memory.db
    REMOTE = "remote"  # a Hugging Face dataset (org/repo, hf://datasets/org/repo)


@dataclass(frozen=True, slots=True)
class MemoryRef:
    label: str  # printed in `→ get … --memory <label>` lines
    kind: MemoryKind
    path: Path | None = None
    repo: str | None = None


def parse_memory(value: str | None, rt: Runtime) -> MemoryRef:
    """Parse a `--memory` value. None, "" and "local" mean the default local memory.

    Raises UsageError for a value that is none of: local, an existing path, org/repo, hf://….
    """
    if value is None or value.strip() in ("", "local"):
        return MemoryRef("local", MemoryKind.LOCAL, rt.paths.memory_db)
    raw = value.strip()
    if raw.startswith("file://"):
        raw = raw[len("file://") :]
        return _path_ref(Path(raw).expanduser(), value)
    if raw.startswith("hf://"):
        rest = raw[len("hf://") :]
        rest = rest[len("datasets/") :] if rest.startswith("datasets/") else rest
        return _remote_ref(rest, value)
    candidate = Path(raw).expanduser()
    if raw.startswith((".", "/", "~")) or candidate.exists():
        return _path_ref(candidate, value)
    if raw.count("/") == 1 and all(raw.split("/")):
        return _remote_ref(raw, f"hf://datasets/{raw}")
    raise UsageError(
        f"not a memory: {value!r}",
        hint="use `local`, a path to a memory, `org/repo`, or `hf://datasets/org/repo`",
    )


def _path_ref(path: Path, label: str) -> MemoryRef:
    db = path / "memory.db" if path.is_dir() else path
    return MemoryRef(str(path), MemoryKind.PATH, db)


def _remote_ref(repo: str, label: str) -> MemoryRef:
    parts = repo.strip("/").split("/")
    if len(parts) != 2 or not all(parts):
        raise UsageError(f"not a dataset repository: {repo!r}", hint="expected org/repo")
    return MemoryRef(f"hf://datasets/{parts[0]}/{parts[1]}", MemoryKind.REMOTE, repo="/".join(parts))


def open_for_read(rt: Runtime, ref: MemoryRef) -> Store:
    """Open a memory for reading.

    Raises:
        NoIndex: the memory does not exist yet or holds no chunks.
        StoreError / IncompatibleStore: it cannot be opened.
        RemoteError: a remote memory cannot be read.
    """
    if ref.kind is MemoryKind.REMOTE:
        raise RemoteError(f"remote memories are not supported yet: {ref.label}")
    assert ref.path is not None
    if not ref.path.exists():
        if ref.kind is MemoryKind.LOCAL:
            raise NoIndex(
                "no memory yet",
                hint="run `funes index` (or `funes add <agent>`) to build one from your agent sessions",
            )
        raise StoreError(f"no memory at {ref.path}")
    store = Store.open(ref.path, readonly=True)
    if store.state() is StoreState.EMPTY:
        store.close()
        raise NoIndex(
            f"memory {ref.label} holds no chunks yet",
            hint="run `funes index` to index your agent sessions",
        )
    return store


def open_for_write(rt: Runtime, ref: MemoryRef) -> Store:
    """Open (creating) a local memory for writing. Remote memories are written by `push`."""
    if ref.kind is MemoryKind.REMOTE:
        raise UsageError(f"{ref.label} is a remote memory", hint="index locally, then `funes push`")
    assert ref.path is not None
    rt.paths.ensure()
    ref.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    lock = rt.paths.lock_file if ref.kind is MemoryKind.LOCAL else ref.path.with_suffix(".lock")
    return Store.open(ref.path, lock_path=lock)
