"""`funes.memory.state`: a memory's state is asked, never learnt by catching an open error."""

from __future__ import annotations

from pathlib import Path

from funes.commands.status import run_status
from funes.memory import MemoryState, Runtime, parse_memory, probe, state
from funes.store import Store


def _ref(path: Path, rt: Runtime):
    return parse_memory(str(path), rt)


def test_each_state_of_a_memory_is_told_apart_without_raising(tmp_path: Path) -> None:
    rt = Runtime.resolve()
    missing = tmp_path / "none.db"
    empty = tmp_path / "empty.db"
    Store.open(empty).close()
    garbage = tmp_path / "garbage.db"
    garbage.write_bytes(b"this is not a SQLite database, not even close" * 100)
    newer = tmp_path / "newer.db"
    Store.open(newer).close()
    with Store.open(newer) as store:
        store.raw.execute("pragma user_version = 999")
    assert state(_ref(missing, rt)) is MemoryState.MISSING
    assert state(_ref(empty, rt)) is MemoryState.EMPTY
    assert state(_ref(garbage, rt)) is MemoryState.UNREADABLE
    assert state(_ref(newer, rt)) is MemoryState.INCOMPATIBLE
    assert state(parse_memory("org/repo", rt)) is MemoryState.SHARED
    found = probe(_ref(garbage, rt))
    assert found.problem and "garbage.db" in found.problem and found.hint


def test_a_memory_with_chunks_is_ready(tmp_path: Path) -> None:
    from funes.chunks import chunk_turn
    from funes.traces import Block, BlockType, Harness, Role, Turn

    path = tmp_path / "m.db"
    turn = Turn(
        harness=Harness.CLAUDE_CODE,
        session_id="s1",
        turn_id="t1",
        seq=0,
        ts="2026-01-01T00:00:00Z",
        role=Role.USER,
        blocks=(Block(BlockType.TEXT, "where is the deploy script"),),
        source_path="/x.jsonl",
        cwd="/w",
    )
    with Store.open(path) as store:
        store.add(chunk_turn(turn), None)
    assert state(parse_memory(str(path), Runtime.resolve())) is MemoryState.READY


def test_status_of_a_damaged_memory_says_so_and_what_to_do_instead_of_failing(
    tmp_path: Path,
) -> None:
    garbage = tmp_path / "garbage.db"
    garbage.write_bytes(b"x" * 4096)
    rt = Runtime.resolve()
    report = run_status(rt, parse_memory(str(garbage), rt))
    assert not report.exists and report.unreadable
    [problem] = report.attention
    assert "garbage.db" in problem and "damaged" in problem
