"""Hermes databases as real setups have them (issue 13): read without a single write, profiles
holding the same session id, cron preambles, models, labels.

The databases are built here with the columns Hermes 0.19 writes (a subset of its schema);
every row is invented.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from funes.traces import Harness, ReadStats, Role, Turn, sources_for_path
from funes.traces.hermes import HermesSource

SCHEMA = """
create table sessions (id text primary key, source text not null, model text,
    parent_session_id text, started_at real not null, cwd text);
create table messages (id integer primary key autoincrement, session_id text not null,
    role text not null, content text, tool_call_id text, tool_calls text, tool_name text,
    timestamp real not null);
"""
API_SESSION = "api-1acbeb1e8217dd4e"  # API-server ids hash the request: two homes can share one
CRON_HINT = (
    "[IMPORTANT: You are running as a scheduled cron job. DELIVERY: Your final response will be "
    "automatically delivered to the user — do NOT use send_message. SILENT: If there is "
    'genuinely nothing new to report, respond with exactly "[SILENT]".]\n\n'
)


def make_db(
    path: Path, rows: list[tuple[str, str, str]], *, model: str = "hermes-4-70b"
) -> sqlite3.Connection:
    """A WAL-mode state.db holding `rows` (session, role, content); the returned connection
    keeps it open with automatic checkpoints off, so the rows stay in the `-wal` file, as
    while Hermes runs."""
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path)
    conn.execute("pragma journal_mode=wal")
    conn.execute("pragma wal_autocheckpoint=0")
    conn.executescript(SCHEMA)
    for sid in dict.fromkeys(s for s, _, _ in rows):
        conn.execute(
            "insert into sessions (id, source, model, started_at, cwd) values (?, 'cli', ?, 1.0, ?)",
            (sid, model, "/home/dev/ledger"),
        )
    for i, (sid, role, content) in enumerate(rows):
        conn.execute(
            "insert into messages (session_id, role, content, timestamp) values (?, ?, ?, ?)",
            (sid, role, content, 1_762_000_000.0 + i),
        )
    conn.commit()
    return conn


def read_all(source: HermesSource) -> list[Turn]:
    return [t for u in source.units() for t in source.read(u, ReadStats())]


def files(folder: Path) -> dict[str, tuple[str, int]]:
    """Every file under `folder`: (sha1 of its bytes, mtime_ns)."""
    return {
        str(p.relative_to(folder)): (hashlib.sha1(p.read_bytes()).hexdigest(), p.stat().st_mtime_ns)
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


@pytest.fixture
def live(tmp_path: Path) -> Iterator[Path]:
    """A Hermes home whose database is open in a writer, its rows only in the WAL."""
    home = tmp_path / ".hermes"
    conn = make_db(
        home / "state.db",
        [
            ("20251103_091244_a960c82a", "user", "Rotate the ledger backups"),
            ("20251103_091244_a960c82a", "assistant", "Rotated."),
        ],
    )
    yield home
    conn.close()


def test_reading_a_live_database_never_writes_its_files(live: Path) -> None:
    assert (live / "state.db-wal").stat().st_size > 0
    before = files(live)
    turns = read_all(HermesSource(live))
    assert [t.blocks[0].text for t in turns] == ["Rotate the ledger backups", "Rotated."]
    assert files(live) == before


def test_reading_a_closed_database_creates_no_wal_or_shm(tmp_path: Path) -> None:
    home = tmp_path / ".hermes"
    make_db(home / "state.db", [("s1", "user", "Archive March")]).close()
    assert sorted(p.name for p in home.iterdir()) == ["state.db"]
    before = files(home)
    assert [t.blocks[0].text for t in read_all(HermesSource(home))] == ["Archive March"]
    assert files(home) == before
    assert sorted(p.name for p in home.iterdir()) == ["state.db"]


def test_a_hook_read_of_a_live_database_leaves_it_untouched(live: Path) -> None:
    before = files(live)
    source = HermesSource(live)
    unit = source.unit_for_hook({"session_id": "20251103_091244_a960c82a"})
    assert unit is not None
    assert len(list(source.read(unit, ReadStats()))) == 2
    assert files(live) == before


def test_rows_written_after_a_read_are_seen_by_the_next_one(tmp_path: Path) -> None:
    home = tmp_path / ".hermes"
    conn = make_db(home / "state.db", [("s1", "user", "first")])
    try:
        source = HermesSource(home)
        assert [t.blocks[0].text for t in read_all(source)] == ["first"]
        conn.execute(
            "insert into messages (session_id, role, content, timestamp) values ('s1', 'assistant', 'second', 2.0)"
        )
        conn.commit()
        assert [t.blocks[0].text for t in read_all(source)] == ["first", "second"]
    finally:
        conn.close()


def test_the_same_session_id_in_two_profiles_stays_two_sessions(tmp_path: Path) -> None:
    home = tmp_path / ".hermes"
    make_db(home / "state.db", [(API_SESSION, "user", "Summarise the invoices")]).close()
    make_db(
        home / "profiles" / "work" / "state.db", [(API_SESSION, "user", "Draft the standup notes")]
    ).close()
    make_db(
        tmp_path / ".hermes-brain" / "state.db", [(API_SESSION, "user", "Plan the garden")]
    ).close()
    turns = read_all(HermesSource(home)) + read_all(
        HermesSource(databases=[tmp_path / ".hermes-brain" / "state.db"])
    )
    got = {t.session_id: t.blocks[0].text for t in turns}
    assert got == {
        API_SESSION: "Summarise the invoices",
        f"work:{API_SESSION}": "Draft the standup notes",
        f"hermes-brain:{API_SESSION}": "Plan the garden",
    }
    # every message id is 1 in each database: the chunk ids differ through the session id
    assert {t.turn_id for t in turns} == {"1"}
    assert {t.session_label for t in turns} == {
        "api-1acb",
        "work:api-1acb",
        "hermes-brain:api-1acb",
    }


def test_a_cron_preamble_is_scaffolding_and_models_come_from_the_session(tmp_path: Path) -> None:
    home = tmp_path / ".hermes"
    sid = "cron_4b310d35c4fd_20251103_030034"
    make_db(
        home / "state.db",
        [
            (sid, "user", CRON_HINT + "Check the backup folder size and report it."),
            (sid, "assistant", "The backup folder holds 4.2 GB."),
        ],
        model="hermes-4-405b",
    ).close()
    turns = read_all(HermesSource(home))
    assert [(t.role, t.scaffold, t.model) for t in turns] == [
        (Role.USER, True, None),
        (Role.ASSISTANT, False, "hermes-4-405b"),
    ]
    assert {t.session_label for t in turns} == {"cron_4b310d_1103_030034"}


def write_jsonl(path: Path, records: list[dict[str, object]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


HERMES_JSONL = [
    {
        "role": "session_meta",
        "model": "hermes-4-70b",
        "platform": "cli",
        "tools": [],
        "timestamp": "2025-11-03T09:12:44",
    },
    {
        "role": "user",
        "content": "Which ledger tables have no index?",
        "timestamp": "2025-11-03T09:12:50",
    },
    {
        "role": "assistant",
        "content": "",
        "tool_calls": [
            {
                "id": "call_1",
                "type": "function",
                "function": {
                    "name": "terminal",
                    "arguments": '{"command":"sqlite3 ledger.db .indexes"}',
                },
            }
        ],
        "timestamp": "2025-11-03T09:12:55",
    },
    {
        "role": "tool",
        "content": "idx_entries_date",
        "tool_call_id": "call_1",
        "timestamp": "2025-11-03T09:12:56",
    },
    {"role": "assistant", "content": "Only entries has one.", "timestamp": "2025-11-03T09:13:01"},
]


def test_a_hermes_session_jsonl_given_as_a_path_is_read_as_hermes(tmp_path: Path) -> None:
    path = write_jsonl(
        tmp_path / ".hermes" / "sessions" / "20251103_091244_a960c82a.jsonl", HERMES_JSONL
    )
    [source] = sources_for_path(path)
    [unit] = list(source.units())
    assert unit.harness is Harness.HERMES
    turns = list(source.read(unit, ReadStats()))
    assert [(t.role, t.blocks[-1].type.value, t.model) for t in turns] == [
        (Role.USER, "text", None),
        (Role.ASSISTANT, "tool_use", "hermes-4-70b"),
        (Role.TOOL, "tool_result", None),
        (Role.ASSISTANT, "text", "hermes-4-70b"),
    ]
    assert turns[2].blocks[0].tool_name == "terminal"
    assert {(t.harness, t.session_id, t.session_label) for t in turns} == {
        (Harness.HERMES, "20251103_091244_a960c82a", "a960c82a")
    }


def test_a_hermes_home_is_indexed_from_its_database_not_its_jsonl_mirrors(tmp_path: Path) -> None:
    home = tmp_path / ".hermes"
    make_db(
        home / "state.db",
        [("20251103_091244_a960c82a", "user", "Which ledger tables have no index?")],
    ).close()
    write_jsonl(home / "sessions" / "20251103_091244_a960c82a.jsonl", HERMES_JSONL)
    units = [u for s in sources_for_path(home) for u in s.units()]
    assert [(u.harness, u.session) for u in units] == [(Harness.HERMES, "20251103_091244_a960c82a")]
