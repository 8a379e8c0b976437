"""The single-writer lock of a memory: an OS file lock (filelock), never held by readers.

Readers never take it (SQLite WAL lets them read while one writer writes). Writers take it
for the duration of a write session; a second writer either fails fast (manual runs: exit 75)
or waits up to a bound (the spool worker).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from funes.errors import StoreError, StoreLocked
from funes.paths import create_private_file


@contextmanager
def writer_lock(
    path: Path,
    *,
    wait_s: float = 0.0,
    announce: bool = False,
    on_wait: Callable[[float], None] | None = None,
) -> Iterator[None]:
    """Hold the writer lock at `path` for the `with` block.

    When the lock is taken, `on_wait(wait_s)` is called once (to say that it waits) before
    waiting. `announce`: while waiting, leave a marker (`waiting_marker`) that tells a holder
    doing deferrable work (a worker embedding a backlog) to let go soon. Raises StoreLocked
    when another process holds it for longer than `wait_s` seconds, StoreError when the lock
    file cannot be opened (a read-only folder, no permission, a directory in its place).
    """
    from filelock import FileLock, Timeout  # writers only: readers never load it

    lock = FileLock(str(path), timeout=0, mode=0o600)
    marker = waiting_marker(path)
    try:
        try:
            lock.acquire()
        except Timeout:
            if wait_s <= 0:
                raise
            if announce:
                with contextlib.suppress(OSError):
                    create_private_file(marker)
            if on_wait is not None:
                on_wait(wait_s)
            lock.acquire(timeout=wait_s)
    except Timeout:
        raise StoreLocked(
            "another funes process is writing to this memory"
            + (f" (waited {wait_s:g} s)" if wait_s > 0 else ""),
            hint="retry in a moment; hooks retry on their own at the next turn",
        ) from None
    except OSError as exc:  # after Timeout, which is one
        raise StoreError(
            f"cannot write to this memory: its lock file {path} cannot be opened: "
            f"{exc.strerror or exc}",
            hint=f"funes writes under {path.parent}: make it writable, or point FUNES_HOME at a "
            "folder you can write (reading works as it is: recall, get, sessions, status)",
        ) from None
    finally:
        if announce:
            with contextlib.suppress(OSError):
                marker.unlink(missing_ok=True)
    try:
        yield
    finally:
        lock.release()


def waiting_marker(path: Path) -> Path:
    """The file a writer waiting for the lock at `path` leaves (see writer_lock)."""
    return path.with_name(path.name + ".wanted")
