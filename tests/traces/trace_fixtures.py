"""Paths of the committed fixtures and small helpers shared by the source tests."""

from __future__ import annotations

import shutil
import sqlite3
from collections.abc import Iterator
from pathlib import Path

from funes.traces import ReadStats, TraceSource, Turn, Unit

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
CLAUDE_PROJECT = FIXTURES / "claude" / "projects" / "-home-dev-src-kilnbook"
CODEX_NEW = next((FIXTURES / "codex" / "sessions" / "2026").rglob("rollout-*.jsonl"))
CODEX_046 = next((FIXTURES / "codex" / "sessions" / "2025" / "10").rglob("rollout-*.jsonl"))
CODEX_PRE = next((FIXTURES / "codex" / "sessions" / "2025" / "09").rglob("rollout-*.jsonl"))
CODEX_EDGE = next((FIXTURES / "codex" / "archived_sessions").glob("rollout-*.jsonl"))
PI_DIR = FIXTURES / "pi" / "sessions" / "--home-dev-src-kilnbook--"
PI_V3 = next(PI_DIR.glob("2026-03-21*.jsonl"))
PI_V1 = next(PI_DIR.glob("2025-06-02*.jsonl"))
PI_EDGE = next(PI_DIR.glob("2026-03-16*.jsonl"))
PARQUET = FIXTURES / "parquet" / "traces.parquet"
HERMES_SQL = FIXTURES / "hermes" / "state.sql"
HERMES_LEGACY_SQL = FIXTURES / "hermes" / "state_legacy.sql"


def build_db(path: Path, sql: Path, *, wal: bool = True) -> Path:
    """Create a SQLite database at `path` from a fixture SQL script (WAL mode, as Hermes)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path)
    try:
        if wal:
            conn.execute("pragma journal_mode=wal")
        conn.executescript(sql.read_text())
        conn.commit()
    finally:
        conn.close()
    return path


def copy_fixture(src: Path, dest_dir: Path) -> Path:
    dest_dir.mkdir(parents=True, exist_ok=True)
    return Path(shutil.copy2(src, dest_dir / src.name))


def read_unit(source: TraceSource, unit: Unit) -> tuple[list[Turn], ReadStats]:
    stats = ReadStats()
    return list(source.read(unit, stats)), stats


def read_all(source: TraceSource) -> Iterator[tuple[Unit, list[Turn], ReadStats]]:
    for unit in source.units():
        turns, stats = read_unit(source, unit)
        yield unit, turns, stats
