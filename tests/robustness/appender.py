"""Play agents writing their transcripts: append turns in torn pieces for a while, then finish.

    python appender.py <agent homes root> <seconds> <seed>

Under `<root>`: `.claude/projects/…`, `.codex/sessions/…`, `.pi/agent/sessions/…` (JSONL,
appended in random-sized byte pieces, so a reader often sees a half-written last line) and
`.hermes/state.db` (rows inserted through another SQLite connection, WAL mode, as Hermes
does). New sessions start while older ones grow. When the time is up every pending line is
completed and the program prints one JSON line: the number of turns written per agent.
"""

from __future__ import annotations

import json
import random
import sqlite3
import sys
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from robust_support import HERMES_SQL, build_hermes_db, claude_lines, codex_lines, pi_lines  # noqa: E402


class Transcript:
    """One JSONL session file being written, possibly mid-line."""

    def __init__(self, agent: str, path: Path, session: str) -> None:
        self.agent = agent
        self.path = path
        self.session = session
        self.turns = 0
        self.pending = b""  # bytes of the line(s) not yet on disk
        path.parent.mkdir(parents=True, exist_ok=True)

    def next_lines(self, n: int) -> bytes:
        make = {"claude": claude_lines, "codex": codex_lines, "pi": pi_lines}[self.agent]
        lines = list(make(self.session, n, start=self.turns, words=30))
        self.turns += n
        return b"".join(line.encode() + b"\n" for line in lines)

    def write_some(self, rng: random.Random) -> None:
        if not self.pending:
            self.pending = self.next_lines(rng.randint(1, 3))
        cut = rng.randint(1, len(self.pending))
        with self.path.open("ab") as f:
            f.write(self.pending[:cut])
        self.pending = self.pending[cut:]

    def finish(self) -> None:
        with self.path.open("ab") as f:
            f.write(self.pending)
        self.pending = b""


def new_transcript(root: Path, agent: str, rng: random.Random) -> Transcript:
    session = str(uuid.UUID(int=rng.getrandbits(128), version=4))
    if agent == "claude":
        path = root / ".claude" / "projects" / "-home-dev-src-kilnbook" / f"{session}.jsonl"
    elif agent == "codex":
        path = (
            root
            / ".codex"
            / "sessions"
            / "2026"
            / "03"
            / "14"
            / f"rollout-2026-03-14T09-12-05-{session}.jsonl"
        )
    else:
        path = (
            root
            / ".pi"
            / "agent"
            / "sessions"
            / "--home-dev-src-kilnbook--"
            / f"2026-03-21T10-20-33-118Z_{session}.jsonl"
        )
    return Transcript(agent, path, session)


class HermesWriter:
    """Rows appended to a Hermes state.db by a connection of its own (another 'process')."""

    def __init__(self, db: Path) -> None:
        build_hermes_db(db, HERMES_SQL)
        self.conn = sqlite3.connect(db, timeout=10, isolation_level=None)
        self.conn.execute("pragma journal_mode=wal")
        self.rows = 0
        self.sessions = 0
        self.current = ""

    def write_some(self, rng: random.Random) -> None:
        if not self.current or rng.random() < 0.05:
            self.sessions += 1
            self.current = f"20260401_0000{self.sessions:02d}_{rng.getrandbits(24):06x}"
            self.conn.execute(
                "insert into sessions (id, source, started_at, cwd) values (?, 'cli', ?, '/home/dev/src/kilnbook')",
                (self.current, 1775000000.0 + self.sessions),
            )
        role = "user" if self.rows % 2 == 0 else "assistant"
        self.conn.execute(
            "insert into messages (session_id, role, content, timestamp) values (?, ?, ?, ?)",
            (
                self.current,
                role,
                f"hermes row {self.rows}: kiln glaze cobalt firing",
                1775000000.0 + self.rows,
            ),
        )
        self.rows += 1


def main(root: Path, seconds: float, seed: int) -> dict[str, int]:
    rng = random.Random(seed)
    open_files = [new_transcript(root, agent, rng) for agent in ("claude", "codex", "pi")]
    done: list[Transcript] = []
    hermes = HermesWriter(root / ".hermes" / "state.db")
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if rng.random() < 0.03:
            finished = open_files.pop(rng.randrange(len(open_files)))
            finished.finish()
            done.append(finished)
            open_files.append(new_transcript(root, finished.agent, rng))
        rng.choice(open_files).write_some(rng)
        if rng.random() < 0.2:
            hermes.write_some(rng)
        time.sleep(rng.uniform(0.0, 0.01))
    for t in open_files:
        t.finish()
    hermes.conn.close()
    totals: dict[str, int] = {"hermes": hermes.rows}
    for t in done + open_files:
        totals[t.agent] = totals.get(t.agent, 0) + t.turns
    return totals


if __name__ == "__main__":
    print(json.dumps(main(Path(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3]))), flush=True)
