"""The single-writer lock of a memory: an OS file lock (filelock), never held by readers.

Readers never take it (SQLite WAL lets them read while one writer writes). Writers take it
for the duration of a write session; a second writer either fails fast (manual runs: exit 75)
or waits up to a bound (the spool worker).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from filelock import FileLock, Timeout

from funes.errors import StoreLocked


@contextmanager
def writer_lock(path: Path, *, wait_s: float = 0.0) -> Iterator[None]:
    """Hold the writer lock at `path` for the `with` block.

    Raises StoreLocked when another process holds it for longer than `wait_s` seconds.
    """
    lock = FileLock(str(path), timeout=wait_s, mode=0o600)
    try:
        lock.acquire()
    except Timeout:
        raise StoreLocked(
            "another funes process is writing to this memory",
            hint="retry in a moment; hooks retry on their own at the next turn",
        ) from None
    try:
        yield
    finally:
        lock.release()
