"""Reading a live Hermes `state.db` without ever writing to it, its `-wal` or its `-shm`.

A plain read-only SQLite connection is not enough: in WAL mode every reader writes its read
mark into the `-shm` file, and opening a database whose `-wal`/`-shm` are absent creates them.
So a database in WAL mode (its header's read/write versions are 2) is read one of two ways,
chosen per read from what is on disk:

* no `-wal` file, or an empty one: every row is in the main file, which is opened with
  `immutable=1` (no locks, no `-shm`, no `-wal`, nothing created);
* a `-wal` with frames (Hermes running, or not checkpointed): rows may live only in the WAL,
  which `immutable=1` would not see, so the main file and its WAL are copied into a private
  folder under funes' data folder (funes.staging: 0700, files 0600; never $TMPDIR) and the
  copy is read. The copy is taken again when the originals change (size or mtime) and removed
  when the snapshot is closed or the process exits; one left by a process killed with SIGKILL
  is removed by the next staging made on this host. A copy whose originals moved while it was taken is retried (`_COPY_TRIES`); a copy
  that stays torn shows as a damaged database, an error the caller retries on its next run.

A database in rollback-journal mode (older Hermes, a copied file) has no `-wal`/`-shm`: a
plain `mode=ro` connection reads it under a shared lock and writes nothing. "database is
locked"/busy errors (a writer holding the file) are retried briefly.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import time
import urllib.parse
import weakref
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from funes.paths import Paths
from funes.staging import Staging
from funes.traces.source import ReadStats, open_regular

T = TypeVar("T")
_RETRIES = 5
_COPY_TRIES = 3

Stamp = tuple[tuple[int, int], ...]


def _stat(path: Path) -> tuple[int, int]:
    try:
        st = path.stat()
    except OSError:
        return (-1, -1)
    return (st.st_size, st.st_mtime_ns)


def wal_path(db: Path) -> Path:
    return db.with_name(db.name + "-wal")


class Snapshot:
    """A stable, read-only view of one Hermes database (see the module docstring)."""

    def __init__(self, db: Path, *, staging: Path | None = None) -> None:
        """`staging`: where copies are taken (default: this environment's Paths.staging)."""
        self.db = db
        self._staging_root = staging
        self._folder: Path | None = None
        self._stamp: Stamp | None = None
        self._cleanup = weakref.finalize(self, _remove, None)

    def _stamps(self) -> Stamp:
        return (_stat(self.db), _stat(wal_path(self.db)))

    def uri(self) -> str:
        """A SQLite URI that reads the database's current rows without touching its files."""
        if not _wal_mode(self.db):
            self.close()
            return _uri(self.db, "mode=ro")
        stamp = self._stamps()
        wal_size = stamp[1][0]
        if wal_size <= 0:
            self.close()
            return _uri(self.db, "mode=ro&immutable=1")
        if self._folder is None or stamp != self._stamp:
            self._take_copy()
        assert self._folder is not None
        return _uri(self._folder / self.db.name, "mode=rw")

    def _take_copy(self) -> None:
        self.close()
        root = self._staging_root if self._staging_root is not None else Paths.resolve().staging
        staging = Staging.make(root, "hermes-")
        folder = staging.path
        self._folder = folder
        self._cleanup = weakref.finalize(self, _remove, staging)
        for _ in range(_COPY_TRIES):
            before = self._stamps()
            for src in (self.db, wal_path(self.db)):
                dest = folder / src.name
                dest.unlink(missing_ok=True)
                try:
                    shutil.copyfile(src, dest)
                except FileNotFoundError:
                    continue  # the WAL was checkpointed away meanwhile: the main file holds all
                os.chmod(dest, 0o600)
            after = self._stamps()
            self._stamp = after
            if before == after:
                return

    def close(self) -> None:
        """Remove the private copy, if one was taken (reads after this take a new one)."""
        self._cleanup()
        self._folder = None
        self._stamp = None


def _wal_mode(db: Path) -> bool:
    """Whether the database header says WAL (file format read/write versions 2 at bytes 18-19)."""
    try:
        with open_regular(db) as f:
            header = f.read(20)
    except OSError:
        return False
    return len(header) == 20 and header[18:20] == b"\x02\x02"


def _remove(staging: Staging | None) -> None:
    if staging is not None:
        staging.close()


def _uri(path: Path, mode: str) -> str:
    return "file:" + urllib.parse.quote(str(path.resolve())) + "?" + mode


def connect(snapshot: Snapshot, stats: ReadStats | None = None) -> sqlite3.Connection:
    """A query-only connection on the snapshot's current view.

    Text that is not valid UTF-8 is decoded with replacement characters (counted in `stats`).
    Raises sqlite3.Error (e.g. OperationalError when the file is missing or not a database).
    """
    if not snapshot.db.is_file():
        raise sqlite3.OperationalError(f"unable to open database file {snapshot.db}")
    conn = sqlite3.connect(snapshot.uri(), uri=True, timeout=2.0, isolation_level=None)

    def decode(raw: bytes) -> str:
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            if stats is not None:
                stats.invalid_utf8 += 1
            return raw.decode("utf-8", errors="replace")

    conn.text_factory = decode
    conn.execute("pragma query_only = 1")
    return conn


def with_db(
    snapshot: Snapshot, work: Callable[[sqlite3.Connection], T], stats: ReadStats | None = None
) -> T:
    """Run `work` on a fresh connection, retrying briefly while the database is busy."""
    for attempt in range(_RETRIES):
        try:
            conn = connect(snapshot, stats)
            try:
                return work(conn)
            finally:
                conn.close()
        except sqlite3.OperationalError as exc:
            if not _busy(exc) or attempt == _RETRIES - 1:
                raise
            time.sleep(0.05 * 2**attempt)
    raise AssertionError("unreachable")


def _busy(exc: sqlite3.Error) -> bool:
    text = str(exc).lower()
    return "locked" in text or "busy" in text
