"""Private scratch folders under funes' data folder, and the sweep of those a killed process
left behind.

    <data>/staging/             0700 (Paths.staging)
        .lock                   held while a staging is made or swept (milliseconds)
        push-<random>/          a push's staging, 0700: its outbox (the chunk ids it owes), and
                                a Hub push's copy of the dataset it commits (funes.remote)
        forget-<random>/        the same for `funes forget --remote`
        hermes-<random>/        a copy of a Hermes state.db and its WAL taken while Hermes
                                writes (funes.traces.hermes_db)
            .owner              locked (flock) by the process using the staging while it runs

Each holds private data (memory content, transcripts); none goes to $TMPDIR, where nobody
would ever remove what a killed process left. A staging is removed when its user is done with
it, also on Ctrl-C and SIGTERM. A process killed with SIGKILL (or by a power cut) cannot remove
it, but the kernel drops its `.owner` lock: the next staging made on this host sweeps every
staging whose `.owner` nobody holds. A live one, in this process or another, holds its lock and
is never touched; the guard lock keeps a sweep from seeing a staging between its creation and
its lock.
"""

from __future__ import annotations

import logging
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from filelock import FileLock, Timeout

from funes.paths import PRIVATE_FILE, ensure_private_dir

GUARD = ".lock"
OWNER = ".owner"
GUARD_WAIT_S = 60.0

log = logging.getLogger(__name__)


class Staging:
    """One staging folder (`path`), owned by this process until `close()` removes it."""

    def __init__(self, path: Path, owner: FileLock) -> None:
        self.path = path
        self._owner = owner

    @classmethod
    def make(cls, root: Path, prefix: str) -> Staging:
        """A new empty 0700 folder `root/<prefix><random>`, owned by this process (its `.owner`
        lock) until `close()`.

        First sweeps the stagings under `root` whose owner is gone (`sweep`). `root` is created
        0700 when missing. Raises OSError when it cannot be, and filelock.Timeout when another
        process holds the guard for GUARD_WAIT_S.
        """
        ensure_private_dir(root)
        with FileLock(str(root / GUARD), timeout=GUARD_WAIT_S, mode=PRIVATE_FILE):
            sweep(root)
            folder = Path(tempfile.mkdtemp(prefix=prefix, dir=root))  # 0700, whatever the umask
            owner = FileLock(str(folder / OWNER), timeout=0, mode=PRIVATE_FILE)
            try:
                owner.acquire()
            except BaseException:
                shutil.rmtree(folder, ignore_errors=True)
                raise
        return cls(folder, owner)

    def close(self) -> None:
        """Remove the folder and give up its lock (again: nothing)."""
        try:
            shutil.rmtree(self.path, ignore_errors=True)
        finally:
            self._owner.release()


@contextmanager
def staging_folder(root: Path, prefix: str) -> Iterator[Path]:
    """`Staging.make(root, prefix)` for the block: its folder, removed after the block
    whatever ends it short of SIGKILL."""
    staging = Staging.make(root, prefix)
    try:
        yield staging.path
    finally:
        staging.close()


def sweep(root: Path) -> list[str]:
    """Remove every staging folder under `root` whose `.owner` lock nobody holds (its process
    died, or it died before taking the lock); returns their names. Call it holding the guard.

    Entries that are not folders, and folders it cannot lock or remove, are left as they are.
    """
    removed: list[str] = []
    for entry in sorted(root.iterdir()):
        if entry.is_symlink() or not entry.is_dir():
            continue
        probe = FileLock(str(entry / OWNER), timeout=0, mode=PRIVATE_FILE)
        try:
            probe.acquire()
        except Timeout:
            continue  # a live process's
        except OSError:
            continue
        try:
            shutil.rmtree(entry, ignore_errors=True)
        finally:
            probe.release()
        if not entry.exists():
            removed.append(entry.name)
    if removed:
        log.info("removed %d staging folders left by killed processes", len(removed))
    return removed
