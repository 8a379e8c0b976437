"""A push's private scratch folder under funes' data folder, and the sweep of those a killed
push left behind.

    <data>/staging/             0700 (Paths.staging)
        .lock                   held while a staging is made or swept (milliseconds)
        push-<random>/          one push's staging, 0700: its outbox (the chunk ids it owes),
                                and a Hub push's copy of the dataset it commits
            .owner              locked (flock) by the process using the staging while it runs
        forget-<random>/        the same for `funes forget --remote`

A staging is removed when its push ends, also on Ctrl-C and SIGTERM. A push killed with
SIGKILL (or by a power cut) cannot remove it, but the kernel drops its `.owner` lock: the next
staging made on this host sweeps every staging whose `.owner` nobody holds. A live push's
staging, whether by hand, by the spool worker, to the same remote or another, holds its lock
and is never touched; the guard lock keeps a sweep from seeing a staging between its creation
and its lock.
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


@contextmanager
def staging_folder(root: Path, prefix: str) -> Iterator[Path]:
    """A new empty 0700 folder `root/<prefix><random>` for the block, owned by this process
    (its `.owner` lock) and removed after the block, whatever ends it short of SIGKILL.

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
    try:
        yield folder
    finally:
        try:
            shutil.rmtree(folder, ignore_errors=True)
        finally:
            owner.release()


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
            continue  # a live push's
        except OSError:
            continue
        try:
            shutil.rmtree(entry, ignore_errors=True)
        finally:
            probe.release()
        if not entry.exists():
            removed.append(entry.name)
    if removed:
        log.info("removed %d staging folders of pushes that were killed", len(removed))
    return removed
