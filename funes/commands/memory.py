"""Which memory a command reads or writes: `local`, a path, a directory export, or a Hub dataset.

A memory reference is parsed once; reading opens the right Store (for a remote, a local
cache of one of its commits). A caller that named a memory never silently reads another.

    local | (nothing)                 the default local memory
    /path/memory.db, /dir/ (memory.db) a local SQLite memory                      PATH
    /dir/ holding chunks.lance/ or funes.json, file:///dir   a shared directory   DIR
    org/repo[@rev], hf://datasets/org/repo[@rev]             a Hugging Face dataset  REMOTE

A directory that holds neither is a PATH for reading (`no memory at …`) and a DIR for `push`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path

from funes.commands.runtime import Runtime
from funes.errors import IncompatibleStore, NoIndex, StoreError, UsageError
from funes.remote import DirRemote, HubRemote, Remote, open_cached
from funes.remote.base import MANIFEST
from funes.remote.lance_export import TABLE
from funes.store import Store, StoreState


class MemoryKind(StrEnum):
    LOCAL = "local"  # the default memory in the data dir
    PATH = "path"  # an explicit SQLite memory file, or a directory holding memory.db
    DIR = "dir"  # a directory holding a Lance export (a shared/air-gapped remote)
    REMOTE = "remote"  # a Hugging Face dataset (org/repo, hf://datasets/org/repo)


@dataclass(frozen=True, slots=True)
class MemoryRef:
    label: str  # printed in `→ get … --memory <label>` lines
    kind: MemoryKind
    path: Path | None = None
    repo: str | None = None
    revision: str | None = None  # a pinned commit of a remote (`org/repo@<sha>`)

    @property
    def shared(self) -> bool:
        """A remote location (Hub dataset or directory export), read through a local cache."""
        return self.kind in (MemoryKind.REMOTE, MemoryKind.DIR)


def parse_memory(value: str | None, rt: Runtime) -> MemoryRef:
    """Parse a `--memory` value. None, "" and "local" mean the default local memory.

    Raises UsageError for a value that is none of: local, an existing path, org/repo, hf://….
    """
    if value is None or value.strip() in ("", "local"):
        return MemoryRef("local", MemoryKind.LOCAL, rt.paths.memory_db)
    raw = value.strip()
    if raw.startswith("file://"):
        return _path_ref(Path(raw[len("file://") :]).expanduser())
    if raw.startswith("hf://"):
        rest = raw[len("hf://") :]
        rest = rest[len("datasets/") :] if rest.startswith("datasets/") else rest
        return _remote_ref(rest)
    candidate = Path(raw).expanduser()
    if raw.startswith((".", "/", "~")) or candidate.exists():
        return _path_ref(candidate)
    name = raw.split("@", 1)[0]
    if name.count("/") == 1 and all(name.split("/")):
        return _remote_ref(raw)
    raise UsageError(
        f"not a memory: {value!r}",
        hint="use `local`, a path to a memory, `org/repo`, or `hf://datasets/org/repo`",
    )


def is_export_dir(path: Path) -> bool:
    """A directory holding a funes Lance export (a DirRemote)."""
    return path.is_dir() and ((path / TABLE).is_dir() or (path / MANIFEST).is_file())


def _path_ref(path: Path) -> MemoryRef:
    if is_export_dir(path) and not (path / "memory.db").exists():
        resolved = path.resolve()
        return MemoryRef(resolved.as_uri(), MemoryKind.DIR, resolved)
    db = path / "memory.db" if path.is_dir() else path
    return MemoryRef(str(path), MemoryKind.PATH, db)


def _remote_ref(repo: str) -> MemoryRef:
    name, at, revision = repo.strip("/").partition("@")
    parts = name.split("/")
    if len(parts) != 2 or not all(parts) or (at and not revision):
        raise UsageError(
            f"not a dataset repository: {repo!r}", hint="expected org/repo (or org/repo@<commit>)"
        )
    if revision and not re.fullmatch(r"[0-9a-f]{40}", revision):
        raise UsageError(
            f"pin a remote memory to a full commit sha, not {revision!r}",
            hint="the `→ get` lines of a recall print the exact value to use",
        )
    repo_id = "/".join(parts)
    label = f"hf://datasets/{repo_id}" + (f"@{revision}" if revision else "")
    return MemoryRef(label, MemoryKind.REMOTE, repo=repo_id, revision=revision or None)


def as_push_target(ref: MemoryRef) -> MemoryRef:
    """The remote a `push` writes to. A path that is not a SQLite memory is a directory export.

    Raises UsageError for the local memory, a SQLite file, or a pinned revision.
    """
    if ref.kind is MemoryKind.LOCAL:
        raise UsageError("push needs a remote", hint="funes push org/repo (or a directory)")
    if ref.kind is MemoryKind.REMOTE and ref.revision:
        raise UsageError(f"cannot push to a pinned commit: {ref.label}", hint="drop the @<commit>")
    if ref.kind is MemoryKind.PATH:
        original = Path(ref.label).expanduser()
        sqlite = (
            (original / "memory.db").exists()
            if original.is_dir()
            else (original.is_file() or original.suffix == ".db")
        )
        if sqlite:
            raise UsageError(
                f"{ref.label} is a local SQLite memory, not a place to push to",
                hint="push to org/repo, or to a directory (it receives a Lance export)",
            )
        target = original.resolve()
        return MemoryRef(target.as_uri(), MemoryKind.DIR, target)
    return ref


def remote_for(ref: MemoryRef) -> Remote:
    """The Remote behind a REMOTE or DIR reference."""
    if ref.kind is MemoryKind.REMOTE:
        assert ref.repo is not None
        return HubRemote(ref.repo)
    if ref.kind is MemoryKind.DIR:
        assert ref.path is not None
        return DirRemote(ref.path)
    raise UsageError(f"{ref.label} is not a remote memory")


@dataclass(slots=True)
class OpenMemory:
    """An open memory, the label of what was actually read, and notes for the reader."""

    store: Store
    label: str
    notes: list[str] = field(default_factory=list)

    def close(self) -> None:
        self.store.close()


def _accept_model(rt: Runtime, ref: MemoryRef) -> object:
    def accept(model_id: str | None, dim: int) -> None:
        spec = rt.embedder_spec_for(model_id)
        if model_id != spec.model_id or (spec.dim and dim != spec.dim):
            raise IncompatibleStore(
                f"{ref.label} was built with {model_id or 'an unknown model'} ({dim}-d vectors); "
                f"this funes embeds queries with {spec.model_id}",
                hint="set FUNES_EMBEDDER to the remote's model, or read a memory built with yours",
            )

    return accept


def open_memory(rt: Runtime, ref: MemoryRef) -> OpenMemory:
    """Open a memory for reading (a remote one through its local cache; see funes.remote.read).

    Raises:
        NoIndex: the memory does not exist yet or holds no chunks.
        StoreError / IncompatibleStore: it cannot be opened, or (remote) its embedding model is
            not the one this funes embeds queries with.
        RemoteError (RemoteOffline / RemoteMissing / RemoteUnauthorized): a remote memory
            cannot be read and nothing usable is cached.
    """
    if ref.shared:
        remote = remote_for(ref)
        cached = open_cached(
            remote,
            rt.paths.remote_cache,
            revision=ref.revision,
            offline=rt.offline and remote.networked,
            revision_ttl_s=rt.remote.revision_ttl_s,
            accept_model=_accept_model(rt, ref),  # type: ignore[arg-type]
        )
        notes = [cached.note] if cached.note else []
        if cached.skipped_rows:
            notes.append(
                f"{cached.skipped_rows} rows of {remote.label} could not be read and were skipped"
            )
        return OpenMemory(Store.open(cached.path, readonly=True), cached.label, notes)
    return OpenMemory(open_for_read(rt, ref), ref.label)


def open_for_read(rt: Runtime, ref: MemoryRef) -> Store:
    """Open a memory for reading (see `open_memory`, which also says what was read)."""
    if ref.shared:
        return open_memory(rt, ref).store
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
    """Open (creating) a local memory for writing. Remote memories are written by `push`.

    Raises StoreError when its folder cannot be made (a file in the way, no permission).
    """
    if ref.shared:
        raise UsageError(f"{ref.label} is a remote memory", hint="index locally, then `funes push`")
    assert ref.path is not None
    rt.paths.ensure()
    try:
        ref.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    except OSError as exc:
        raise StoreError(
            f"cannot create the folder of memory {ref.label}: {exc.strerror or exc}",
            hint=f"check {ref.path.parent} (a file in the way, or no permission)",
        ) from None
    lock = rt.paths.lock_file if ref.kind is MemoryKind.LOCAL else ref.path.with_suffix(".lock")
    return Store.open(ref.path, lock_path=lock)
