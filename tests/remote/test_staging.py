"""Where a push stages what it sends (funes.staging): a 0700 folder of its own under
funes' data folder, never $TMPDIR; one left by a push killed with SIGKILL is removed by the next
push, one of a push still running never is."""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from filelock import FileLock
from support.claude import write_claude_session

from funes.commands.index import IndexRequest, run_index
from funes.commands.push import PushRequest, run_push
from funes.memory import Runtime, parse_memory
from funes.remote.directory import LOCK
from funes.staging import staging_folder

WAIT_S = 120.0


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def _stagings(rt: Runtime) -> set[Path]:
    root = rt.paths.staging
    return {p for p in root.iterdir() if p.is_dir()} if root.is_dir() else set()


@contextmanager
def _umask(mask: int) -> Iterator[None]:
    old = os.umask(mask)
    try:
        yield
    finally:
        os.umask(old)


def _pusher(env: dict[str, str], remote: Path, log: Path) -> subprocess.Popen[bytes]:
    """`funes push <remote>` in its own process (it blocks at the directory's lock while the
    test holds it, its staging made)."""
    with log.open("wb") as out, _umask(0o000):  # the child inherits the loosest umask
        return subprocess.Popen(
            [sys.executable, "-m", "funes", "push", str(remote), "--yes"],
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=out,
        )


def _new_staging(rt: Runtime, before: set[Path], proc: subprocess.Popen[bytes], log: Path) -> Path:
    """The staging folder `proc` made (it appears once its push has read the memory)."""
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        made = {p for p in _stagings(rt) - before if (p / "outbox.db").exists()}
        if made:
            return made.pop()
        assert proc.poll() is None, log.read_text()
        time.sleep(0.1)
    pytest.fail(f"the push never staged anything\n{log.read_text()[-3000:]}")


@pytest.mark.models
def test_a_staging_left_by_a_killed_push_is_removed_by_the_next_push_and_a_live_one_is_kept(
    tmp_path: Path, funes_env: dict[str, str]
) -> None:
    rt = Runtime.resolve()
    claude = tmp_path / "claude"
    write_claude_session(
        claude, [("user", "where do eider logs go?"), ("assistant", "Eider logs go to loki.")]
    )
    run_index(rt, parse_memory(None, rt), IndexRequest(path=claude / "projects"))
    tmpdir = tmp_path / "tmpdir"
    tmpdir.mkdir()
    env = {**funes_env, "TMPDIR": str(tmpdir)}
    shared = tmp_path / "shared"
    shared.mkdir()
    remote_lock = FileLock(str(shared / LOCK))
    remote_lock.acquire()  # every push to `shared` waits at its commit, its staging made
    try:
        killed = _pusher(env, shared, tmp_path / "killed.log")
        left = _new_staging(rt, set(), killed, tmp_path / "killed.log")
        killed.send_signal(signal.SIGKILL)
        killed.wait(timeout=30)
        assert left.is_dir() and (left / "outbox.db").is_file()  # SIGKILL: nothing cleaned up

        live = _pusher(env, shared, tmp_path / "live.log")  # the next push sweeps the dead one's
        running = _new_staging(rt, {left}, live, tmp_path / "live.log")
        assert not left.exists()
        assert _mode(rt.paths.staging) == 0o700 and _mode(running) == 0o700

        other = tmp_path / "other"  # a push to another remote meanwhile leaves the live one's
        report = run_push(rt, parse_memory(str(other), rt), PushRequest(create=True))
        assert report.pushed == 2
        assert _stagings(rt) == {running}
    finally:
        remote_lock.release()
    assert live.wait(timeout=WAIT_S) == 0, (tmp_path / "live.log").read_text()
    assert _stagings(rt) == set()  # a push that ends removes its own
    assert list(tmpdir.glob("funes-*")) == []  # and nothing was staged in $TMPDIR


def test_a_staging_is_private_and_removed_when_its_block_ends_even_by_an_error(
    tmp_path: Path,
) -> None:
    root = tmp_path / "data" / "staging"
    with _umask(0o000), pytest.raises(RuntimeError), staging_folder(root, "push-") as folder:
        assert _mode(root) == 0o700 and _mode(folder) == 0o700
        (folder / "outbox.db").write_bytes(b"ids")
        raise RuntimeError("the push failed")
    assert not folder.exists() and [p.name for p in root.iterdir()] == [".lock"]


def test_a_sweep_keeps_the_staging_of_a_push_running_in_this_process(tmp_path: Path) -> None:
    """Two pushes of one process (threads) each hold their own staging's lock."""
    root = tmp_path / "staging"
    with staging_folder(root, "push-") as first, staging_folder(root, "push-") as second:
        assert first.is_dir() and second.is_dir() and first != second
