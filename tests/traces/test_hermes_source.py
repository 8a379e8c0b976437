"""Hermes state.db: read-only next to a live writer, WAL rows, schemas, profiles, hook payloads."""

from __future__ import annotations

import hashlib
import sqlite3
import stat
import tempfile
import threading
import time
from pathlib import Path

import pytest
from trace_fixtures import HERMES_LEGACY_SQL, HERMES_SQL, build_db, read_unit

from funes.traces import BlockType, ReadStats, Role, Unit
from funes.traces.hermes import HermesSource, content_text
from funes.traces.source import versioned

MAIN = "20260317_201533_7c1e9a"
CHILD = "20260318_074502_a1b2c3"
LEGACY = "20251104_190210_5d6e7f"


def units_by_session(source: HermesSource) -> dict[str, Unit]:
    return {u.session: u for u in source.units() if u.session}


def add_message(conn: sqlite3.Connection, session: str, text: str) -> None:
    conn.execute(
        "insert into messages (session_id, role, content, timestamp) values (?, 'user', ?, 1773900000.0)",
        (session, text),
    )


def test_one_unit_per_session_in_the_home_and_its_profiles(hermes_home: Path) -> None:
    units = list(HermesSource(hermes_home).units())
    assert sorted((Path(u.key.split("#")[0]).parent.name, u.session) for u in units) == [
        ("hermes-home", MAIN),
        ("hermes-home", CHILD),
        ("studio", LEGACY),
    ]
    main = units_by_session(HermesSource(hermes_home))[MAIN]
    assert main.key == f"{hermes_home / 'state.db'}#{MAIN}"
    assert main.signature == versioned("7:7")  # max(messages.id):count


def test_a_session_maps_reasoning_tool_calls_results_and_multimodal_text(hermes_home: Path) -> None:
    source = HermesSource(hermes_home)
    turns, stats = read_unit(source, units_by_session(source)[MAIN])
    assert [t.turn_id for t in turns] == ["2", "3", "4", "5", "6", "7"]  # the system row is skipped
    assert [t.role for t in turns] == [
        Role.USER,
        Role.ASSISTANT,
        Role.TOOL,
        Role.ASSISTANT,
        Role.USER,
        Role.ASSISTANT,
    ]
    call = turns[1]
    assert [b.type for b in call.blocks] == [
        BlockType.THINKING,
        BlockType.TOOL_USE,
    ]  # equal reasoning once
    assert (call.blocks[1].tool_name, call.blocks[1].tool_use_id) == ("terminal", "call_hx_01")
    assert call.blocks[1].text == '{"command": "crontab -l"}'  # arguments verbatim
    assert turns[2].blocks[0].tool_name == "terminal"
    assert turns[4].blocks[0].text.startswith("Here is the kiln display")  # \x00json: decoded
    assert "base64" not in turns[4].blocks[0].text
    assert turns[5].blocks[-1].text.startswith("Yes: the display shows BACKUP OK")  # \x01json:
    assert len([b for b in turns[5].blocks if b.type is BlockType.THINKING]) == 2  # they differ
    assert {(t.cwd, t.git_branch) for t in turns} == {("/home/dev/src/kilnbook", "main")}
    assert turns[0].ts == "2026-03-17T20:15:40.120Z"
    assert stats.corrupt_records == stats.unknown_records == stats.invalid_utf8 == 0


def test_bad_rows_are_skipped_and_counted(hermes_home: Path) -> None:
    source = HermesSource(hermes_home)
    turns, stats = read_unit(source, units_by_session(source)[CHILD])
    assert [t.turn_id for t in turns] == ["8", "10"]
    assert turns[0].blocks[0].text == "Did the backup of the caf\ufffd room kiln run?"
    assert turns[1].blocks[0].text.startswith("Yes, last night's backup")
    assert {t.parent_session_id for t in turns} == {MAIN}
    # no cwd of its own: its parent's (the directory Hermes ran in when the session forked)
    assert {(t.cwd, t.git_branch) for t in turns} == {("/home/dev/src/kilnbook", "main")}
    assert (stats.invalid_utf8, stats.unknown_records, stats.corrupt_records) == (1, 1, 1)


def test_a_child_without_a_directory_takes_its_nearest_ancestors_and_a_cycle_ends(
    hermes_home: Path,
) -> None:
    """A grandchild (compression of a compression) reaches the root's cwd through a parent
    that has none either; parent links that loop end with no cwd, never hang."""
    conn = sqlite3.connect(hermes_home / "state.db")
    rows = [("grandchild", CHILD), ("loop-a", "loop-b"), ("loop-b", "loop-a")]
    for sid, parent in rows:
        conn.execute(
            "insert into sessions (id, source, parent_session_id, started_at) "
            "values (?, 'cli', ?, 1773900000.0)",
            (sid, parent),
        )
        add_message(conn, sid, f"what did {sid} do?")
    conn.commit()
    conn.close()
    source = HermesSource(hermes_home)
    units = units_by_session(source)
    grandchild, _ = read_unit(source, units["grandchild"])
    assert {t.cwd for t in grandchild} == {"/home/dev/src/kilnbook"}
    looped, _ = read_unit(source, units["loop-a"])
    assert {t.cwd for t in looped} == {None}


def test_the_legacy_schema_without_cwd_or_reasoning_columns_is_read(tmp_path: Path) -> None:
    db = build_db(tmp_path / "h" / "state.db", HERMES_LEGACY_SQL, wal=False)
    source = HermesSource(databases=[db])
    turns, _ = read_unit(source, units_by_session(source)[LEGACY])
    assert [(t.role, [b.type for b in t.blocks]) for t in turns] == [
        (Role.USER, [BlockType.TEXT]),
        (Role.ASSISTANT, [BlockType.TOOL_USE]),
        (Role.TOOL, [BlockType.TOOL_RESULT]),
        (Role.ASSISTANT, [BlockType.TEXT]),
    ]
    assert turns[2].blocks[0].tool_name == "write_file"


def test_rows_still_in_the_wal_are_read_while_the_agent_keeps_the_database_open(
    tmp_path: Path,
) -> None:
    db = build_db(tmp_path / "h" / "state.db", HERMES_SQL)
    agent = sqlite3.connect(db)
    try:
        agent.execute("pragma wal_autocheckpoint = 0")
        agent.execute("pragma wal_checkpoint(truncate)")
        add_message(agent, MAIN, "written after the last checkpoint")
        agent.commit()
        assert Path(f"{db}-wal").stat().st_size > 0
        source = HermesSource(databases=[db])
        unit = units_by_session(source)[MAIN]
        assert unit.signature == versioned("11:8")
        turns, _ = read_unit(source, unit)
        assert turns[-1].blocks[0].text == "written after the last checkpoint"
    finally:
        agent.close()


def test_reading_never_blocks_the_agent_and_never_changes_its_files(tmp_path: Path) -> None:
    db = build_db(tmp_path / "h" / "state.db", HERMES_SQL)
    agent = sqlite3.connect(db, timeout=0.1)  # a writer that gives up after 0.1 s of waiting

    def digest() -> dict[str, str]:  # the -shm index is shared memory that readers also touch
        files = [p for p in db.parent.iterdir() if not p.name.endswith("-shm")]
        return {p.name: hashlib.sha1(p.read_bytes()).hexdigest() for p in files}

    try:
        agent.execute("pragma wal_autocheckpoint = 0")
        add_message(agent, MAIN, "first")
        agent.commit()
        before = digest()
        source = HermesSource(databases=[db])
        assert read_unit(source, units_by_session(source)[MAIN])[0][-1].blocks[0].text == "first"
        assert digest() == before
        turns = source.read(units_by_session(source)[MAIN], ReadStats())
        next(turns)  # a read is in progress …
        add_message(agent, MAIN, "second")
        agent.commit()  # … and the agent commits without waiting for it
        assert [t.blocks[0].text for t in turns][-1] in ("first", "second")
    finally:
        agent.close()


def test_a_database_locked_by_a_writer_is_retried_until_it_is_free(tmp_path: Path) -> None:
    db = build_db(tmp_path / "h" / "state.db", HERMES_SQL, wal=False)
    locker = sqlite3.connect(db, check_same_thread=False)
    locker.execute("pragma locking_mode = exclusive")
    locker.execute("begin exclusive")
    released = threading.Event()

    def release() -> None:
        time.sleep(0.3)
        locker.rollback()
        locker.close()
        released.set()

    threading.Thread(target=release).start()
    units = list(HermesSource(databases=[db]).units())
    assert released.is_set()
    assert {u.session for u in units} == {MAIN, CHILD}


def test_a_grown_session_gets_a_new_signature_and_others_keep_theirs(hermes_home: Path) -> None:
    source = HermesSource(hermes_home)
    before = {s: u.signature for s, u in units_by_session(source).items()}
    conn = sqlite3.connect(hermes_home / "state.db")
    add_message(conn, CHILD, "one more")
    conn.commit()
    conn.close()
    after = {s: u.signature for s, u in units_by_session(source).items()}
    assert after[MAIN] == before[MAIN]
    assert after[CHILD] != before[CHILD]


def test_a_hook_payload_names_the_session_and_optionally_its_profile(hermes_home: Path) -> None:
    source = HermesSource(hermes_home)
    unit = source.unit_for_hook(
        {"hook_event_name": "post_llm_call", "session_id": MAIN, "cwd": "/w", "profile": "default"}
    )
    assert unit is not None and unit.session == MAIN and unit.path == hermes_home / "state.db"
    profiled = source.unit_for_hook({"session_id": LEGACY, "profile": "studio"})
    assert (
        profiled is not None and profiled.path == hermes_home / "profiles" / "studio" / "state.db"
    )
    assert source.unit_for_hook({"session_id": "20990101_000000_ffffff"}) is None
    assert source.unit_for_hook({"session_id": None}) is None


def test_a_home_without_a_database_has_no_units_and_none_is_created(tmp_path: Path) -> None:
    home = tmp_path / "empty-hermes"
    home.mkdir()
    assert list(HermesSource(home).units()) == []
    assert list(home.iterdir()) == []


def test_a_file_that_is_not_a_hermes_database_yields_no_units(tmp_path: Path) -> None:
    other = tmp_path / "state.db"
    conn = sqlite3.connect(other)
    conn.execute("create table notes (body text)")
    conn.commit()
    conn.close()
    assert list(HermesSource(databases=[other]).units()) == []
    garbage = tmp_path / "g" / "state.db"
    garbage.parent.mkdir()
    garbage.write_bytes(b"not sqlite at all" * 100)
    assert list(HermesSource(databases=[garbage]).units()) == []


def test_multimodal_content_keeps_only_its_text_parts() -> None:
    raw = '\x00json:[{"type":"text","text":"a"},{"type":"image_url","image_url":{"url":"data:image/png;base64,AAAA"}},{"type":"text","text":"b"}]'
    assert content_text(raw) == "a\nb"
    assert content_text("\x01json:not json") == ""
    assert content_text("plain") == "plain"


def test_the_copy_of_a_live_database_is_private_under_funes_data_and_swept_once_orphaned(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A database with WAL frames is read from a copy (transcripts): it is taken in funes'
    staging folder (0700), never $TMPDIR, removed when the snapshot closes, and one a killed
    process left there (its owner lock gone) is removed when the next copy is taken."""
    from funes.paths import Paths
    from funes.traces.hermes_db import Snapshot

    tmpdir = tmp_path / "tmpdir"
    tmpdir.mkdir()
    monkeypatch.setenv("TMPDIR", str(tmpdir))
    monkeypatch.setattr(tempfile, "tempdir", None)  # read TMPDIR again
    staging = Paths.resolve().staging
    orphan = staging / "hermes-killed"
    orphan.mkdir(parents=True)
    (orphan / "state.db").write_bytes(b"a copy a SIGKILLed reader left")
    db = build_db(tmp_path / "h" / "state.db", HERMES_SQL)
    agent = sqlite3.connect(db)
    try:
        agent.execute("pragma wal_autocheckpoint = 0")
        add_message(agent, MAIN, "in the wal")
        agent.commit()
        snapshot = Snapshot(db)
        snapshot.uri()
        [copy] = [p for p in staging.iterdir() if p.is_dir()]
        assert copy.name.startswith("hermes-") and (copy / "state.db").is_file()
        assert stat.S_IMODE(copy.stat().st_mode) == 0o700
        assert not orphan.exists(), "the orphaned copy is swept"
        assert list(tmpdir.iterdir()) == []
        snapshot.close()
        assert not copy.exists()
    finally:
        agent.close()
