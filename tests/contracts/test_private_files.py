"""Private data stays private: the memory, its WAL/SHM, lock, spool and logs are 0600/0700
whatever the umask (0o000 would make them world-readable and -writable)."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from fakes import BagOfWordsEmbedder
from support.claude import write_claude_session
from support.cli import Ran

from funes.chunks import chunk_turn
from funes.paths import Paths, create_private_file, ensure_private_dir
from funes.store import Store
from funes.traces import Block, BlockType, Harness, Role, Turn

pytestmark = pytest.mark.skipif(os.name != "posix", reason="POSIX file modes")


@pytest.fixture(params=[0o000, 0o022, 0o077], ids=["umask000", "umask022", "umask077"])
def umask(request: pytest.FixtureRequest) -> Iterator[int]:
    old = os.umask(request.param)
    try:
        yield request.param
    finally:
        os.umask(old)


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def _turn() -> Turn:
    return Turn(
        harness=Harness.CLAUDE_CODE,
        session_id="s1",
        turn_id="t1",
        seq=0,
        ts="2026-01-01T00:00:00.000Z",
        role=Role.USER,
        blocks=(Block.make(BlockType.TEXT, "private words " * 50),),
        source_path="/tmp/s1.jsonl",
    )


def test_funes_directories_and_their_new_parents_are_0700(tmp_path: Path, umask: int) -> None:
    root = tmp_path / "a" / "b" / "funes"
    paths = Paths(root / "data", root / "spool", root / "logs").ensure()
    for d in (paths.data, paths.spool, paths.logs, root, root.parent, root.parent.parent):
        assert _mode(d) == 0o700, d
    assert _mode(tmp_path) != 0 and tmp_path.exists()  # pre-existing parents are left alone


def test_an_existing_loose_directory_is_tightened(tmp_path: Path, umask: int) -> None:
    loose = tmp_path / "spool"
    loose.mkdir()
    loose.chmod(0o777)
    ensure_private_dir(loose)
    assert _mode(loose) == 0o700


def test_a_file_where_a_private_directory_belongs_is_refused_and_left_as_it_is(
    tmp_path: Path, umask: int
) -> None:
    """ensure_private_dir on a path holding a file (a FUNES_MODEL_CACHE set to one) must not
    chmod the file 0700 and report success: it raises NotADirectoryError."""
    found = tmp_path / "models"
    found.write_text("a user's file")
    found.chmod(0o644)
    with pytest.raises(NotADirectoryError):
        ensure_private_dir(found)
    assert _mode(found) == 0o644 and found.read_text() == "a user's file"


def test_private_files_are_created_and_tightened_0600(tmp_path: Path, umask: int) -> None:
    log = create_private_file(tmp_path / "worker.log")
    assert _mode(log) == 0o600
    loose = tmp_path / "hook.log"
    loose.write_text("x")
    loose.chmod(0o666)
    create_private_file(loose)
    assert _mode(loose) == 0o600 and loose.read_text() == "x"


def test_the_memory_its_wal_shm_and_lock_are_0600(tmp_path: Path, umask: int) -> None:
    paths = Paths(tmp_path / "data", tmp_path / "spool", tmp_path / "logs").ensure()
    store = Store.open(paths.memory_db, lock_path=paths.lock_file)
    try:
        embedder = BagOfWordsEmbedder()
        store.stamp_model(embedder.model_id, embedder.dim)
        with store.writing():
            chunks = list(chunk_turn(_turn()))
            store.add(chunks, embedder.embed([c.text for c in chunks]), redaction_version=2)
            assert _mode(paths.lock_file) == 0o600
        wal = Path(f"{paths.memory_db}-wal")
        shm = Path(f"{paths.memory_db}-shm")
        assert wal.exists() and shm.exists()
        for f in (paths.memory_db, wal, shm):
            assert _mode(f) == 0o600, f
    finally:
        store.close()
    reader = Store.open(paths.memory_db, readonly=True)
    reader.close()
    for f in paths.data.iterdir():
        if f.is_file():
            assert _mode(f) == 0o600, f


def test_a_memory_left_loose_by_an_older_version_is_tightened_on_open(
    tmp_path: Path, umask: int
) -> None:
    db = tmp_path / "memory.db"
    Store.open(db).close()
    for f in tmp_path.iterdir():
        f.chmod(0o644)
    store = Store.open(db)
    try:
        for f in tmp_path.iterdir():
            if f.name.startswith("memory.db"):
                assert _mode(f) == 0o600, f
    finally:
        store.close()


def test_model_verification_stamps_are_private(tmp_path: Path, umask: int) -> None:
    from funes.inference.files import verify
    from funes.inference.spec import EMBEDDERS

    weights = tmp_path / "weights.bin"
    weights.write_bytes(b"not really a model")
    import hashlib

    stamps = tmp_path / "data" / "verified-models"
    spec = next(iter(EMBEDDERS.values()))
    verify(spec, weights, hashlib.sha256(b"not really a model").hexdigest(), stamps)
    files = list(stamps.iterdir())
    assert files and all(_mode(f) == 0o600 for f in files)
    assert _mode(stamps) == 0o700 and _mode(stamps.parent) == 0o700


def test_everything_funes_writes_under_its_home_is_private(
    isolated_env: Path, tmp_path: Path, run: Callable[..., Ran], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The whole kind: install hooks (backups and their notes), index, recall with a reranker
    that cannot be downloaded (its failure note), status; then no file under FUNES_HOME is
    readable by others, and no directory either, with a umask that would allow it."""
    old = os.umask(0o022)
    try:
        write_claude_session(isolated_env / ".claude")
        (isolated_env / ".claude" / "settings.json").write_text("{}\n")
        assert run("add", "claude", "--yes").returncode == 0
        hook = Path(os.environ["FUNES_HOME"]) / "data" / "hooks" / "funes-enqueue.py"
        fired = subprocess.run(  # the hook once, as an agent runs it: Python caches its bytecode
            [sys.executable, "-I", "-S", str(hook), "--agent", "claude", "--spool", str(tmp_path)],
            input=b"{}",
            capture_output=True,
            timeout=60,
        )
        assert fired.returncode == 0, fired.stderr
        assert (hook.parent / "__pycache__").is_dir()
        assert run("index", "--yes").returncode == 0
        monkeypatch.setenv("FUNES_RERANKER", "ms-marco-minilm-l6-v2")  # not cached, offline
        assert run("recall", "--all", "anything").returncode == 0
        assert run("status").returncode == 0
    finally:
        os.umask(old)
    home = Path(os.environ["FUNES_HOME"])
    names = {p.name for p in home.rglob("*")}
    assert "reranker-download-failed.json" in names
    assert any(n.endswith((".orig", ".created-by-funes")) for n in names), names
    loose = [
        (str(p.relative_to(home)), oct(_mode(p)))
        for p in home.rglob("*")
        if not p.is_symlink() and _mode(p) & 0o077
    ]
    assert loose == []


def test_a_tightened_umask_is_restored_and_never_loosens(tmp_path: Path) -> None:
    from funes.paths import umask_at_least

    old = os.umask(0o002)
    try:
        with umask_at_least(0o077):
            (tmp_path / "inside").write_text("x")
        assert _mode(tmp_path / "inside") == 0o600
        os.umask(0o077)
        with umask_at_least(0o027):
            (tmp_path / "strict").write_text("x")
        assert _mode(tmp_path / "strict") == 0o600  # 0o077 | 0o027: still owner only
        assert os.umask(0o002) == 0o077
    finally:
        os.umask(old)


@pytest.mark.parametrize("funes_home", [True, False])
def test_the_logs_folder_is_where_the_hook_and_worker_write_their_logs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, funes_home: bool
) -> None:
    """README names Paths' logs folder; the hook and the worker write spool/logs/ (the
    platformdirs log folder used to be created and stay empty)."""
    from funes.ingest import Spool

    if funes_home:
        monkeypatch.setenv("FUNES_HOME", str(tmp_path / "home"))
    else:
        monkeypatch.delenv("FUNES_HOME", raising=False)
        monkeypatch.setenv("HOME", str(tmp_path))
        monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "share"))
    paths = Paths.resolve()
    assert paths.logs == Spool(paths.spool).logs
