"""The TraceSource seam: where sessions come from, unit by unit.

A *unit* is what a source indexes atomically: one transcript file, or one session in a
database. `units()` enumerates and stats without parsing; `read()` parses one unit into
turns, counting (never raising on) bad records in a `ReadStats`.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO, Protocol

from funes.traces.model import Harness, Turn


@dataclass(frozen=True, slots=True)
class Unit:
    """One artifact indexed atomically: a transcript file, or one session in a database.

    key:       stable identity recorded in the store's `units` table (a path, or `db#session`)
    signature: cheap change stamp ("size:mtime_ns", or a database watermark); None → always re-read
    harness:   the source that reads it
    path:      the file (or database) behind it
    sort_key:  newest first ordering (mtime or last activity, seconds); larger = newer
    session:   the session id inside a database unit, else None
    """

    key: str
    signature: str | None
    harness: Harness
    path: Path
    sort_key: float = 0.0
    session: str | None = None
    secondary: bool = False  # subagent files etc.: indexed after all main sessions


@dataclass(slots=True)
class ReadStats:
    """What a read saw and skipped. Mutable: a reader increments it as it goes."""

    records: int = 0
    turns: int = 0
    corrupt_records: int = 0  # lines/rows that did not parse
    unknown_records: int = 0  # well-formed records of a type we do not index
    oversized_records: int = 0  # lines over the reader's size cap, skipped unread
    invalid_utf8: int = 0  # lines decoded with replacement characters
    cut_blocks: int = 0  # blocks over MAX_BLOCK_CHARS, kept cut to their first MAX_BLOCK_CHARS
    truncated_tail: bool = False  # the last line was incomplete (the agent is still writing)
    # files whose incomplete last line has not changed for STALE_TAIL_S (funes.traces.jsonl):
    # truncated transcripts (a crash, a cut copy), their complete lines read, the cut one skipped
    cut_off_files: int = 0
    notes: list[str] = field(default_factory=list)

    def merge(self, other: ReadStats) -> None:
        self.records += other.records
        self.turns += other.turns
        self.corrupt_records += other.corrupt_records
        self.unknown_records += other.unknown_records
        self.oversized_records += other.oversized_records
        self.invalid_utf8 += other.invalid_utf8
        self.cut_blocks += other.cut_blocks
        self.truncated_tail = self.truncated_tail or other.truncated_tail
        self.cut_off_files += other.cut_off_files
        self.notes.extend(other.notes)


class TraceSource(Protocol):
    """One agent's sessions on this machine."""

    harness: Harness

    def units(self) -> Iterable[Unit]:
        """Every unit this source can see, cheaply (stat, no parsing). Unreadable ones are skipped."""
        ...

    def read(self, unit: Unit, stats: ReadStats) -> Iterator[Turn]:
        """Parse one unit into turns in order. Bad records are counted in `stats`, not raised.

        Raises OSError when the unit cannot be opened at all (the caller retries it later).
        """
        ...

    def unit_for_hook(self, payload: Mapping[str, object]) -> Unit | None:
        """The unit a hook payload points at (None when it names nothing this source can read)."""
        ...


# The version of the readers' mapping, part of every unit signature: when a reader starts to
# map records differently (a new attribution, a text it now takes from elsewhere), bumping it
# makes the next sweep re-read every unit once, and the index reconciles what it had stored.
READER_VERSION = "r2"


def versioned(signature: str) -> str:
    """`signature` stamped with the readers' version (`<signature>@r2`)."""
    return f"{signature}@{READER_VERSION}"


def file_signature(path: Path) -> str | None:
    """`"<size>:<mtime_ns>@<reader version>"`, or None when the file cannot be stat'ed."""
    try:
        st = path.stat()
    except OSError:
        return None
    return versioned(f"{st.st_size}:{st.st_mtime_ns}")


def file_unit(path: Path, harness: Harness, *, secondary: bool = False) -> Unit | None:
    """A Unit for one transcript file (None when it is not a readable regular file)."""
    try:
        st = path.stat()
    except OSError:
        return None
    if not path.is_file():
        return None
    return Unit(
        key=str(path),
        signature=versioned(f"{st.st_size}:{st.st_mtime_ns}"),
        harness=harness,
        path=path,
        sort_key=st.st_mtime,
        secondary=secondary,
    )


def walk_files(root: Path, pattern: str) -> Iterator[Path]:
    """Regular files under `root` matching a glob `pattern`, recursively.

    Symlinked directories are not followed (no loops); unreadable directories are skipped.
    FIFOs, sockets, devices, symlink loops and dangling links are skipped too: opening a FIFO
    blocks until a writer appears, which would hang a sweep.
    """
    if not root.is_dir():
        return
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False, onerror=None):
        dirnames.sort()
        base = Path(dirpath)
        for name in sorted(filenames):
            p = base / name
            if p.match(pattern) and p.is_file():
                yield p


def open_regular(path: Path) -> BinaryIO:
    """Open `path` for binary reading, refusing anything but a regular file.

    The open never blocks (a FIFO put where a transcript was is refused, not waited on).
    Raises OSError: missing, unreadable, a directory, a FIFO or another special file.
    """
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(errno.EINVAL, "not a regular file", str(path))
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise
