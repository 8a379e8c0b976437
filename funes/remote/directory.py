"""A plain directory as a remote memory: for air-gapped teams (a shared disk) and for tests.

The directory holds what a Hub repository would: `chunks.lance/`, `funes.json`, `README.md`.
A commit is the Lance dataset version (`v<N>`; `v0` = no dataset yet); a snapshot reads that
version in place (Lance versions are immutable). Pushes take an exclusive lock on
`.funes.lock` in the directory, check that the head is still the snapshot's commit, then
append in place: two writers on one machine (or one shared filesystem with working locks)
never lose each other's chunks.

What a push writes there is private: files 0600, directories 0700, plus the read (and, for
directories, search) access the remote directory itself gives its group (a team's shared
folder, `chmod 2750`), never access for others. `--create` makes the directory 0700
(0755 with `--public`).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable
from pathlib import Path

from filelock import FileLock

from funes.errors import HeadMoved, RemoteError, RemoteMissing
from funes.paths import PRIVATE_DIR, PRIVATE_FILE, restrict_tree, umask_at_least
from funes.remote.base import MANIFEST, RemoteState, Snapshot
from funes.remote.lance_export import FORMAT, TABLE

LOCK = ".funes.lock"
LOCK_WAIT_S = 60.0
U64_MAX = 2**64 - 1


def is_export_dir(path: Path) -> bool:
    """A directory holding a funes Lance export (what a DirRemote reads)."""
    return path.is_dir() and ((path / TABLE).is_dir() or (path / MANIFEST).is_file())


def _version(commit: str) -> int:
    if not re.fullmatch(r"v\d+", commit):
        raise RemoteError(f"not a directory memory commit: {commit!r}", hint="expected v<N>")
    return int(commit[1:])


def latest_version(versions: Path) -> int:
    """The newest committed Lance version, from the manifest names alone (one directory listing).

    Lance names manifests `<N>.manifest` or, in its V2 scheme, `<u64::MAX - N>.manifest` (so
    the newest sorts first); a manifest only appears once its version is committed.
    """
    newest = 0
    for entry in versions.iterdir():
        if entry.suffix != ".manifest" or not entry.stem.isdigit():
            continue
        n = int(entry.stem)
        newest = max(newest, U64_MAX - n if n > U64_MAX // 2 else n)
    return newest


class DirRemote:
    """A directory holding a funes Lance export (see module docstring)."""

    networked = False
    missing = "does not exist"
    unreachable: str | None = None  # a directory is never OFFLINE

    def __init__(self, path: Path) -> None:
        self.path = path.expanduser().resolve()
        self.label = self.path.as_uri()
        digest = hashlib.sha1(str(self.path).encode()).hexdigest()[:10]
        self.key = "dir_" + re.sub(r"[^A-Za-z0-9._-]", "_", self.path.name or "root") + "_" + digest

    def state(self) -> RemoteState:
        """MISSING (no such path), EMPTY (an empty directory, or one funes created and has not
        pushed to yet), READY (holds a funes dataset).

        Raises RemoteError for a file, and for a directory holding other files but no funes
        memory (a project checkout, a home folder): funes never mixes transcripts into it."""
        if not self.path.exists():
            return RemoteState.MISSING
        if not self.path.is_dir():
            raise RemoteError(f"{self.path} is not a directory")
        if (self.path / TABLE / "_versions").is_dir():
            return RemoteState.READY
        if not is_export_dir(self.path) and any(
            entry.name != LOCK for entry in self.path.iterdir()
        ):
            raise RemoteError(
                f"{self.path} holds other files and is not a funes memory: funes does not "
                "write transcripts into it",
                hint="push to a new directory (`--create`) or an empty one",
            )
        return RemoteState.EMPTY

    def require_write_access(self) -> None:
        return None  # checked by the filesystem when writing

    def create(self, *, private: bool) -> None:
        """Make the directory, with a manifest that names it a funes memory before its first
        push (so `--memory <dir>` and a binding read it as one: empty until then)."""
        self.path.mkdir(parents=True, exist_ok=True, mode=0o700 if private else 0o755)
        manifest = self.path / MANIFEST
        if not manifest.exists():
            doc = {"format": FORMAT, "table": TABLE, "chunks": 0}
            file_mode, dir_mode = self.modes()
            with umask_at_least(0o777 & ~dir_mode):
                manifest.write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
            manifest.chmod(file_mode)

    def modes(self) -> tuple[int, int]:
        """(file mode, directory mode) of what funes writes in the directory: 0600 / 0700,
        never others' bits. A directory its owner shut to others but opened to its group
        (0750, 2750: a team's folder) also passes its group read (search) bits on; a default
        0755 directory does not (it says nothing about sharing)."""
        mode = self.path.stat().st_mode
        granted = mode & 0o050 if mode & 0o007 == 0 else 0
        return PRIVATE_FILE | (granted & 0o040), PRIVATE_DIR | granted

    def head(self) -> str:
        if not self.path.is_dir():
            raise RemoteMissing(
                f"no memory directory at {self.path}",
                hint="check the path; `funes push <dir> --create` creates it",
            )
        versions = self.path / TABLE / "_versions"
        if not versions.is_dir():
            return "v0"
        return f"v{latest_version(versions)}"

    def snapshot(self, commit: str, *, local_only: bool = False) -> Snapshot:
        return Snapshot(commit, self.path, version=_version(commit))

    def publish(
        self, base: Snapshot, build: Callable[[Path], None], *, message: str, scratch: Path
    ) -> str:
        """Append in place under the directory's lock (`scratch` is not needed: Lance
        versions are the staging)."""
        try:
            with FileLock(str(self.path / LOCK), timeout=LOCK_WAIT_S, mode=0o600):
                if self.head() != base.commit:
                    raise HeadMoved(f"{self.label} moved while pushing")
                file_mode, dir_mode = self.modes()
                with umask_at_least(0o777 & ~dir_mode):  # Lance's writers take no mode
                    build(self.path)
                # and what an older funes (or another umask's thread) left loose
                restrict_tree(self.path, file_mode=file_mode, dir_mode=dir_mode)
                return self.head()
        except OSError as exc:
            raise RemoteError(f"cannot write to {self.path}: {exc}") from exc
