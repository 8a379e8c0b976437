"""The store under contention: first opens racing, readers beside a writer, checkpoints, the lock.

Real SQLite files, one connection per thread (as one per process), real processes where the
lock is concerned. WAL lets readers read while one writer writes; these tests hold that to
numbers: a reader's latency while a write transaction stays open, zero errors while the
writer checkpoints, and a second writer told not to wait refused at once (exit 75).
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

from fakes import BagOfWordsEmbedder

from funes.chunks import Chunk, chunk_id
from funes.paths import Paths
from funes.retrieval import recall
from funes.store import Store
from funes.store.db import connect, sqlite_module
from funes.store.lock import writer_lock
from funes.store.provenance import Keys
from funes.traces import BlockType, Harness, Role

EMB = BagOfWordsEmbedder()


def make_chunks(session: str, n: int, *, start: int = 0, word: str = "kiln") -> list[Chunk]:
    return [
        Chunk(
            id=chunk_id(session, f"t{i}", 0, 0),
            text=f"{word} glaze cobalt firing number {i}",
            session_id=session,
            turn_id=f"t{i}",
            seq=i,
            ts="2026-03-01T00:00:00.000Z",
            role=Role.USER,
            block_type=BlockType.TEXT,
            block_idx=0,
            split_idx=0,
            harness=Harness.CLAUDE_CODE,
            workdir="-home-dev",
            source_path="/x.jsonl",
        )
        for i in range(start, start + n)
    ]


def seeded_store(path: Path, n: int = 200) -> None:
    with Store.open(path) as store:
        store.stamp_model(EMB.model_id, EMB.dim)
        chunks = make_chunks("s-seed", n)
        store.add(chunks, EMB.embed([c.text for c in chunks]))


def race_open(path: Path, n: int) -> list[str]:
    """Open `path` for writing from `n` threads released at the same instant; their errors."""
    barrier = threading.Barrier(n)
    errors: list[str] = []

    def opener() -> None:
        barrier.wait()
        try:
            Store.open(path).close()
        except Exception as exc:  # collected: the caller asserts there are none
            errors.append(f"{type(exc).__name__}: {exc}")

    threads = [threading.Thread(target=opener) for _ in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return errors


def test_several_connections_creating_a_new_memory_at_once_all_open_it(tmp_path: Path) -> None:
    """Two writers (or a hook and a manual run) creating the memory at the same moment both
    succeed: the migration is applied once, under the write lock, never twice."""
    for trial in range(12):
        path = tmp_path / f"m{trial}.db"
        assert race_open(path, 4) == []
        with Store.open(path) as store:
            # nothing stamped yet; only the id the migrations give a new memory (schema 6)
            keys = store.raw.execute("select key from meta").fetchall()
            assert keys == [("memory_id",)]


def test_a_memory_file_no_writer_has_migrated_reads_as_empty(
    tmp_path: Path, funes_env: dict[str, str]
) -> None:
    """A writer killed right after creating memory.db leaves an empty file: recall, get and
    status say there is nothing yet (no traceback), and the next index builds it."""
    paths = Paths.resolve()
    paths.data.mkdir(parents=True)
    paths.memory_db.touch(mode=0o600)
    for args, code, says in (
        (["recall", "kiln"], 1, "holds no chunks yet"),
        (["get", "s", "t"], 1, "holds no chunks yet"),
        (["status"], 0, "chunks: 0"),
    ):
        done = subprocess.run(
            [sys.executable, "-m", "funes", *args],
            env=funes_env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        out = done.stdout + done.stderr
        assert "Traceback" not in out, out
        assert done.returncode == code and says in out, (args, out)
    with Store.open(paths.memory_db, readonly=True) as store:
        assert store.stats().chunks == 0 and store.unit("x") is None


def test_readers_do_not_wait_for_a_writer_holding_a_long_transaction(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    seeded_store(path)
    writer = Store.open(path)
    writer.raw.execute("begin immediate")
    fresh = make_chunks("s-new", 50, word="uncommitted")
    keys = Keys(writer.raw)
    for c in fresh:
        writer.raw.execute(
            "insert into chunks (id, text, session, turn_id, seq, ts, role, block_type, block_idx, "
            "split_idx, origin) values (?,?,?,?,?,?,?,?,?,?,?)",
            (
                c.id,
                c.text,
                keys.session(c.session_id),
                c.turn_id,
                c.seq,
                c.ts,
                "user",
                "text",
                0,
                0,
                keys.origin(("claude_code", "-", None, None, None, "/x", None, None)),
            ),
        )
    latencies: list[float] = []
    try:
        for _ in range(20):
            started = time.perf_counter()
            with Store.open(path, readonly=True) as reader:
                hits = recall(reader, "uncommitted kiln glaze", embedder=EMB, reranker=None).hits
            latencies.append(time.perf_counter() - started)
            assert hits and all(
                h.chunk.session_id == "s-seed" for h in hits
            )  # the last commit only
    finally:
        writer.raw.execute("commit")
        writer.close()
    assert max(latencies) < 1.0, f"a reader waited {max(latencies):.2f}s for the writer"


def test_read_only_opens_work_while_the_writer_checkpoints(tmp_path: Path) -> None:
    """Readers open, query and close in a loop while the writer commits and forces
    TRUNCATE/RESTART/PASSIVE checkpoints: no reader ever sees an error."""
    path = tmp_path / "m.db"
    seeded_store(path)
    stop = threading.Event()
    errors: list[str] = []
    reads = [0]

    def write() -> None:
        with Store.open(path) as store:
            n = 1000
            while not stop.is_set():
                chunks = make_chunks("s-live", 40, start=n)
                store.add(chunks, EMB.embed([c.text for c in chunks]))
                n += 40
                mode = ("truncate", "restart", "passive")[n // 40 % 3]
                store.raw.execute(f"pragma wal_checkpoint({mode})").fetchall()

    def read() -> None:
        while not stop.is_set():
            try:
                with Store.open(path, readonly=True) as store:
                    assert store.lexical("kiln cobalt", k=5)
                    store.semantic(EMB.embed_query("kiln cobalt"), k=5)
                    store.stats()
                reads[0] += 1
            except Exception as exc:  # collected: the assertion lists them
                errors.append(f"{type(exc).__name__}: {exc}")

    threads = [threading.Thread(target=write)] + [threading.Thread(target=read) for _ in range(4)]
    for t in threads:
        t.start()
    time.sleep(6)
    stop.set()
    for t in threads:
        t.join()
    assert errors == [], errors[:5]
    assert reads[0] > 20


def test_opening_for_write_waits_out_a_brief_lock_instead_of_failing(tmp_path: Path) -> None:
    """busy_timeout is set before the switch to WAL: an opener meeting a rollback-journal
    database under an exclusive lock (another program creating it) waits, then opens it."""
    # The holder uses funes' own SQLite binding: two SQLite libraries in one process do not
    # see each other's POSIX locks (and closing one's descriptor drops the other's locks).
    path = tmp_path / "m.db"
    holder = sqlite_module().connect(str(path), isolation_level=None, check_same_thread=False)
    holder.execute("create table t (x)")
    holder.execute("begin exclusive")
    holder.execute("insert into t values (1)")
    release = threading.Timer(1.0, lambda: holder.execute("commit"))
    release.start()
    started = time.perf_counter()
    try:
        conn = connect(path)
        assert conn.raw.execute("pragma journal_mode").fetchone()[0] == "wal"
        conn.close()
    finally:
        release.join()
        holder.close()
    assert 0.5 < time.perf_counter() - started < 5.0


def test_a_second_writer_told_not_to_wait_is_refused_at_once_with_exit_75(
    tmp_path: Path, funes_env: dict[str, str]
) -> None:
    """`funes index --wait 0` meeting a held writer lock fails fast (exit 75, a message, no
    traceback); by default it waits a bounded time (tests/cli/test_cli.py)."""
    paths = Paths.resolve().ensure()
    seeded_store(paths.memory_db)
    transcript = tmp_path / "t.jsonl"
    transcript.write_text(
        '{"type":"user","uuid":"u1","sessionId":"s","timestamp":"2026-01-01T00:00:00Z",'
        '"message":{"role":"user","content":"kiln glaze"}}\n'
    )
    with writer_lock(paths.lock_file):
        started = time.perf_counter()
        done = subprocess.run(
            [sys.executable, "-m", "funes", "index", str(transcript), "--wait", "0"],
            env=funes_env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        elapsed = time.perf_counter() - started
    assert done.returncode == 75, done.stderr
    assert "another funes process is writing" in done.stderr and "Traceback" not in done.stderr
    assert elapsed < 15, f"the refused run took {elapsed:.1f}s"
    with Store.open(paths.memory_db, readonly=True) as store:
        assert store.stats().chunks == 200  # nothing written behind the lock holder's back


def test_the_lock_is_released_when_its_holder_is_killed(tmp_path: Path) -> None:
    lock = tmp_path / "memory.lock"
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys,time; from funes.store.lock import writer_lock\n"
            f"with writer_lock(__import__('pathlib').Path({str(lock)!r})):\n print('held', flush=True); time.sleep(60)",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        from funes.errors import StoreLocked

        try:
            with writer_lock(lock):
                raise AssertionError("the lock was free while its holder ran")
        except StoreLocked:
            pass
        os.kill(holder.pid, 9)
        holder.wait(10)
        with writer_lock(lock, wait_s=5):
            pass
    finally:
        if holder.poll() is None:
            holder.kill()
            holder.wait()
