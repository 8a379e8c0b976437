"""Which memory a command means: `local`, a path, a directory export, or a Hub dataset.

A memory reference is parsed once (`parse_memory`); opening.py opens the right Store for it
(for a remote, a local cache of one of its commits). A caller that named a memory never
silently reads another.

    local | (nothing)                 the default local memory
    /path/memory.db, /dir/ (memory.db) a local SQLite memory                      PATH
    /dir/ holding chunks.lance/ or funes.json, file:///dir   a shared directory   DIR
    org/repo[@rev], hf://datasets/org/repo[@rev]             a Hugging Face dataset  REMOTE

A directory that holds neither is a PATH for reading (`no memory at …`) and a DIR for `push`.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import unquote, urlsplit

from funes.errors import UsageError
from funes.memory.runtime import Runtime

if TYPE_CHECKING:  # funes.remote (Lance, the Hub client) loads only for a remote memory
    from funes.remote import Remote


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
    if raw.startswith((".", "/", "~")) or candidate.exists() or candidate.is_symlink():
        return _path_ref(candidate)
    name = raw.split("@", 1)[0]
    if name.count("/") == 1 and all(name.split("/")):
        return _remote_ref(raw)
    # not org/repo, and no such path: a relative path (a directory `push --create` is to make)
    # must say it is one; a bare word stays an error, since `name` may mean a Hub dataset
    raise UsageError(
        f"not a memory: {value!r}",
        hint=f"use `local`, a path (`{shlex.quote('./' + raw)}` for one in the current directory), "
        "`org/repo`, or `hf://datasets/org/repo`",
    )


def _path_ref(path: Path) -> MemoryRef:
    if path.is_dir() and not (path / "memory.db").exists() and _is_export_dir(path):
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


def bound_ref(label: str, rt: Runtime) -> MemoryRef:
    """The memory a binding or a publish state names by its label, whatever is there now:
    `hf://datasets/…` a Hub dataset, `file://…` a shared directory (even one that is gone or
    empty: pushing to it says what is wrong), anything else a memory file path. Raises
    UsageError for a label that is none of these."""
    if label.startswith("file://"):
        path = Path(unquote(urlsplit(label).path))
        return MemoryRef(path.as_uri(), MemoryKind.DIR, path)
    return parse_memory(label, rt)


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


def _is_export_dir(path: Path) -> bool:
    from funes.remote import is_export_dir

    return is_export_dir(path)


def remote_for(ref: MemoryRef) -> Remote:
    """The Remote behind a REMOTE or DIR reference."""
    from funes.remote import DirRemote, HubRemote

    if ref.kind is MemoryKind.REMOTE:
        assert ref.repo is not None
        return HubRemote(ref.repo)
    if ref.kind is MemoryKind.DIR:
        assert ref.path is not None
        return DirRemote(ref.path)
    raise UsageError(f"{ref.label} is not a remote memory")
