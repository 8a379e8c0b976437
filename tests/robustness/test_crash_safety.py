"""kill -9 at random points of indexing: the memory stays whole and the next run converges.

`funes index` (the real CLI commands with the bag-of-words embedder, fake_funes.py) runs over
a corpus of all four agents and is killed with SIGKILL at a random moment after it starts
writing (the WAL grows), again and again, over the same memory, alternating the budgeted
tiered sweep and `--yes`. After every kill, before any writer touches it again:

* a read-only open works and recall answers (the reader copes with the dead writer's WAL);
* `pragma integrity_check` is `ok`, the FTS index matches its content table
  (`integrity-check`), and every chunk has exactly one vector (no vector without a chunk);

and after a final uninterrupted run the memory holds exactly the chunks (ids, texts,
positions) of one clean, uninterrupted run.

FUNES_ROBUST_KILLS sets the number of kills (default 15).
The spool worker killed mid-drain is covered by tests/commands/test_spool_worker.py (claimed
entries are re-drained by the next worker; none lost, none stored twice).
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

from fakes import BagOfWordsEmbedder
from robust_support import (
    FAKE_FUNES,
    build_hermes_db,
    claude_lines,
    codex_lines,
    pi_lines,
    run_fake_funes,
)

from funes.paths import Paths
from funes.retrieval import recall
from funes.store import Store

KILLS = int(os.environ.get("FUNES_ROBUST_KILLS", "15"))
Row = tuple[str, str, str, str, int, int, int]


def corpus(home: Path, *, sessions: int, turns: int) -> None:
    """Sessions of every agent under `home` (their default locations)."""
    for s in range(sessions):
        sid = f"{s:08x}-0000-4000-8000-00000000c0de"
        claude = home / ".claude" / "projects" / "-home-dev-src-kilnbook" / f"{sid}.jsonl"
        codex = (
            home
            / ".codex"
            / "sessions"
            / "2026"
            / "03"
            / "14"
            / f"rollout-2026-03-14T09-12-05-{sid}.jsonl"
        )
        pi = (
            home
            / ".pi"
            / "agent"
            / "sessions"
            / "--home-dev--"
            / f"2026-03-21T10-20-33-118Z_{sid}.jsonl"
        )
        for path, lines in ((claude, claude_lines), (codex, codex_lines), (pi, pi_lines)):
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("\n".join(lines(sid, turns, words=60)) + "\n")
    db = build_hermes_db(home / ".hermes" / "state.db")
    import sqlite3

    conn = sqlite3.connect(db)
    for s in range(sessions):
        sid = f"20260401_0000{s:02d}_c0de00"
        conn.execute(
            "insert into sessions (id, source, started_at) values (?, 'cli', 1775000000)", (sid,)
        )
        conn.executemany(
            "insert into messages (session_id, role, content, timestamp) values (?, ?, ?, ?)",
            [
                (
                    sid,
                    "user" if i % 2 == 0 else "assistant",
                    f"hermes {s}/{i}: kiln glaze cobalt",
                    1775000000.0 + i,
                )
                for i in range(turns)
            ],
        )
    conn.commit()
    conn.close()


def env_for(base: dict[str, str], home: Path, funes_home: Path) -> dict[str, str]:
    return {
        **base,
        "HOME": str(home),
        "FUNES_HOME": str(funes_home),
        "CLAUDE_CONFIG_DIR": str(home / ".claude"),
        "CODEX_HOME": str(home / ".codex"),
        "PI_CODING_AGENT_DIR": str(home / ".pi" / "agent"),
        "HERMES_HOME": str(home / ".hermes"),
    }


def rows(db: Path) -> set[Row]:
    with Store.open(db, readonly=True) as store:
        return set(
            store.raw.execute(
                "select id, text, session_id, turn_id, seq, block_idx, split_idx from chunk_rows"
            )
        )


def check_whole(db: Path, *, converged: bool = False) -> int:
    """Assert the memory is consistent; returns its chunk count. Mid-history (a run killed
    between storing a tier and embedding it) a chunk may lack its vector, but then it is
    recorded as owed one (`vectors_owed`, what the next run embeds); once `converged`, every
    chunk has its vector."""
    with Store.open(db, readonly=True) as reader:  # first: a reader meets the dead writer's WAL
        recall(reader, "kiln glaze cobalt", embedder=BagOfWordsEmbedder(), reranker=None)
        assert reader.raw.execute("pragma integrity_check").fetchall() == [("ok",)]
    with Store.open(db) as store:
        raw = store.raw
        raw.execute("insert into chunks_fts (chunks_fts) values ('integrity-check')")
        chunks = raw.execute("select count(*) from chunks").fetchone()[0]
        if store.model_id is not None:
            vectors = raw.execute("select count(*) from chunks_vec").fetchone()[0]
            orphans = raw.execute(
                "select count(*) from chunks c where not exists (select 1 from chunks_vec v where v.rowid = c.rowid)"
            ).fetchone()[0]
            untracked = raw.execute(
                "select count(*) from chunks c where not exists (select 1 from chunks_vec v "
                "where v.rowid = c.rowid) and not exists (select 1 from vectors_owed o "
                "where o.rowid = c.rowid)"
            ).fetchone()[0]
            assert untracked == 0, (vectors, chunks, orphans, untracked)
            assert vectors + orphans == chunks, (vectors, chunks, orphans)
            if converged:
                assert orphans == 0, (vectors, chunks, orphans)
        fts = raw.execute("select count(*) from chunks_fts").fetchone()[0]
        assert fts == chunks
        return int(chunks)


def kill_while_writing(env: dict[str, str], wal: Path, rng: random.Random, flags: list[str]) -> str:
    """Start an index run, wait until it writes, SIGKILL it after a random delay.
    Returns how the run ended ('killed', or 'finished' when it beat the kill)."""
    before = wal.stat().st_size if wal.exists() else -1
    proc = subprocess.Popen(
        [sys.executable, str(FAKE_FUNES), "index", *flags],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 60
    while proc.poll() is None and time.monotonic() < deadline:
        size = wal.stat().st_size if wal.exists() else -1
        if size != before:
            break
        time.sleep(0.005)
    time.sleep(rng.uniform(0.0, 0.6))
    if proc.poll() is None:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(30)
        return "killed"
    _, err = proc.communicate()
    assert proc.returncode == 0, err
    return "finished"


def test_kill_9_at_random_points_never_damages_the_memory_and_a_rerun_converges(
    tmp_path: Path, funes_env: dict[str, str]
) -> None:
    home = tmp_path / "agents"
    corpus(home, sessions=6, turns=300)
    env = {**env_for(funes_env, home, tmp_path / "funes"), "FAKE_EMBED_DELAY_S": "0.02"}
    memory = Paths.resolve(env).memory_db
    wal = Path(str(memory) + "-wal")
    rng = random.Random(2026)
    outcomes = []
    counts = []
    for n in range(KILLS):
        outcomes.append(kill_while_writing(env, wal, rng, ["--yes"] if n % 2 else []))
        if memory.exists():
            counts.append(check_whole(memory))
        if outcomes[-1] == "finished":  # it beat the kill: start over so kills land mid-run
            for p in memory.parent.glob("memory.db*"):
                p.unlink()
    assert outcomes.count("killed") >= KILLS * 2 // 3, outcomes
    final = run_fake_funes(["index", "--yes"], env, timeout=600)
    assert final.returncode == 0, final.stderr
    check_whole(memory, converged=True)
    clean_env = env_for(funes_env, home, tmp_path / "clean")
    clean = run_fake_funes(["index", "--yes"], clean_env, timeout=600)
    assert clean.returncode == 0, clean.stderr
    expected = rows(Paths.resolve(clean_env).memory_db)
    assert rows(memory) == expected
    print(
        f"\n{outcomes.count('killed')} kills mid-write; chunk counts after each: {counts}; converged to {len(expected)}"
    )


def test_a_damaged_memory_file_gives_an_error_message_never_a_traceback(
    tmp_path: Path, funes_env: dict[str, str]
) -> None:
    home = tmp_path / "agents"
    corpus(home, sessions=2, turns=200)
    env = env_for(funes_env, home, tmp_path / "funes")
    assert run_fake_funes(["index", "--yes"], env).returncode == 0
    memory = Paths.resolve(env).memory_db
    with Store.open(memory) as store:
        store.raw.execute("pragma wal_checkpoint(truncate)")
    data = bytearray(memory.read_bytes())
    page = 4096
    for start in range(page * 3, len(data), page * 2):  # every other page after the header pages
        data[start + 100 : start + 400] = os.urandom(300)
    memory.write_bytes(bytes(data))
    recalled = run_fake_funes(["recall", "kiln glaze"], env)
    assert recalled.returncode == 1 and "Traceback" not in recalled.stderr, recalled.stderr
    assert "damaged" in recalled.stderr and "funes index --yes" in recalled.stderr
    got = run_fake_funes(["get", "00000000-0000-4000-8000-00000000c0de", "x"], env)
    assert got.returncode == 1 and "Traceback" not in got.stdout + got.stderr
    status = run_fake_funes(["status"], env)
    assert status.returncode == 0 and "Traceback" not in status.stderr, status.stderr
    said = " ".join(status.stdout.split())
    assert "attention: cannot read memory" in said and "damaged" in said
    assert "no memory yet" not in said and "the memory cannot be read" in said
