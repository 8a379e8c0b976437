"""The single-writer lock of a memory: an OS file lock (filelock), never held by readers.

Readers never take it (SQLite WAL lets them read while one writer writes). Writers take it
for the duration of a write session; a second writer either fails fast (manual runs: exit 75)
or waits up to a bound (the spool worker).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from filelock import FileLock, Timeout

from funes.errors import StoreLocked


@contextmanager
def writer_lock(
    path: Path, *, wait_s: float = 0.0, on_wait: Callable[[float], None] | None = None
) -> Iterator[None]:
    """Hold the writer lock at `path` for the `with` block.

    When the lock is taken, `on_wait(wait_s)` is called once (to say that it waits) before
    waiting. Raises StoreLocked when another process holds it for longer than `wait_s` seconds.
    """
    lock = FileLock(str(path), timeout=0, mode=0o600)
    try:
        try:
            lock.acquire()
        except Timeout:
            if wait_s <= 0:
                raise
            if on_wait is not None:
                on_wait(wait_s)
            lock.acquire(timeout=wait_s)
    except Timeout:
        raise StoreLocked(
            "another funes process is writing to this memory"
            + (f" (waited {wait_s:g} s)" if wait_s > 0 else ""),
            hint="retry in a moment; hooks retry on their own at the next turn",
        ) from None
    try:
        yield
    finally:
        lock.release()
