"""pi sessions: v3 trees, v1 files without ids, string content, damaged files, hook payloads."""

from __future__ import annotations

import json
from pathlib import Path

from trace_fixtures import PI_DIR, PI_EDGE, PI_V1, PI_V3, copy_fixture

from funes.traces import BlockType, ReadStats, Role, Turn
from funes.traces.pi import PiSource, read_pi_file


def read(path: Path) -> tuple[list[Turn], ReadStats]:
    stats = ReadStats()
    return list(read_pi_file(path, stats)), stats


def test_a_v3_session_maps_thinking_tool_calls_results_answers_and_bash_runs() -> None:
    turns, stats = read(PI_V3)
    assert {t.session_id for t in turns} == {PI_V3.stem}  # the Rust reference's session id
    assert {t.cwd for t in turns} == {"/home/dev/src/kilnbook"}
    shape = [(t.turn_id, t.role, [(b.type, b.tool_name) for b in t.blocks]) for t in turns]
    assert shape == [
        ("c3d4e5f6", Role.USER, [(BlockType.TEXT, None)]),
        ("d4e5f6a7", Role.ASSISTANT, [(BlockType.THINKING, None), (BlockType.TOOL_USE, "read")]),
        ("e5f6a7b8", Role.TOOL, [(BlockType.TOOL_RESULT, "read")]),
        ("f6a7b8c9", Role.ASSISTANT, [(BlockType.TEXT, None)]),
        ("a7b8c9d0", Role.USER, [(BlockType.TOOL_USE, "bash"), (BlockType.TOOL_RESULT, "bash")]),
    ]
    assert turns[1].parent_id == "c3d4e5f6"
    assert json.loads(turns[1].blocks[1].text) == {
        "path": "kilnbook/glaze.py",
        "offset": 30,
        "limit": 12,
    }
    assert turns[1].blocks[1].tool_use_id == "toolu_01PiReadGlazeA"
    assert turns[0].ts == "2026-03-21T10:21:02.500Z"
    # model_change, thinking_level_change, session_info are state, not turns; the aborted
    # assistant message with empty content yields nothing
    assert stats.unknown_records == 3
    assert [t.seq for t in turns] == [0, 1, 2, 3, 4]


def test_a_v1_session_keeps_string_prompts_and_gets_stable_synthesized_turn_ids() -> None:
    turns, _ = read(PI_V1)
    assert turns[0].role is Role.USER
    assert turns[0].blocks[0].text == "How many kilns does the studio schedule support?"
    ids = [t.turn_id for t in turns]
    assert ids == ["line-2", "line-3", "line-4", "line-5"]
    assert ids == [t.turn_id for t in read(PI_V1)[0]]
    assert turns[0].ts == "2025-06-02T08:00:01.000Z"  # the entry's own time, not the header's


def test_v1_ids_do_not_move_when_the_session_grows(tmp_path: Path) -> None:
    path = copy_fixture(PI_V1, tmp_path)
    before, _ = read(path)
    with path.open("a") as f:
        f.write(
            json.dumps(
                {
                    "type": "message",
                    "timestamp": "2025-06-02T08:01:00.000Z",
                    "message": {"role": "user", "content": "And the max temperature?"},
                }
            )
            + "\n"
        )
    after, _ = read(path)
    assert after[: len(before)] == before
    assert after[-1].turn_id == "line-6"


def test_a_damaged_session_is_read_around_its_bad_lines_and_counts_them() -> None:
    turns, stats = read(PI_EDGE)
    assert [(t.role, t.blocks[0].text) for t in turns] == [
        (Role.USER, "Add a r\ufffdsum\ufffd of yesterday's firings to the dashboard."),
        (
            Role.ASSISTANT,
            "Added a yesterday panel listing each firing's kiln, cone and peak temperature.",
        ),
    ]
    assert stats.corrupt_records == 1
    assert stats.unknown_records == 1
    assert stats.invalid_utf8 == 1
    # its cut-off last line: still being written or a truncated transcript, by the file's age
    assert stats.truncated_tail != (stats.cut_off_files == 1)


def test_summaries_and_extension_messages_are_kept_as_scaffolding(tmp_path: Path) -> None:
    path = tmp_path / "2026-01-01T00-00-00-000Z_0000.jsonl"
    lines = [
        {
            "type": "session",
            "version": 3,
            "id": "0000",
            "timestamp": "2026-01-01T00:00:00Z",
            "cwd": "/w",
            "parentSession": "/s/--w--/2025-12-31T00-00-00-000Z_ffff.jsonl",
        },
        {
            "type": "compaction",
            "id": "aa",
            "parentId": None,
            "timestamp": "2026-01-01T00:00:01Z",
            "summary": "Earlier: fixed the kiln timer.",
            "firstKeptEntryId": "bb",
            "tokensBefore": 9000,
        },
        {
            "type": "custom_message",
            "id": "bb",
            "parentId": "aa",
            "timestamp": "2026-01-01T00:00:02Z",
            "customType": "reminder",
            "content": "Remember the studio closes at six.",
            "display": True,
        },
        {
            "type": "message",
            "id": "cc",
            "parentId": "bb",
            "timestamp": "2026-01-01T00:00:03Z",
            "message": {
                "role": "custom",
                "customType": "note",
                "content": [{"type": "text", "text": "Injected by an extension."}],
                "display": False,
                "timestamp": 1767225603000,
            },
        },
        {
            "type": "message",
            "id": "dd",
            "parentId": "cc",
            "timestamp": "2026-01-01T00:00:04Z",
            "message": {
                "role": "user",
                "content": [{"type": "text", "text": "go on"}],
                "timestamp": 1767225604000,
            },
        },
    ]
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    turns, _ = read(path)
    assert [(t.turn_id, t.scaffold) for t in turns] == [
        ("aa", True),
        ("bb", True),
        ("cc", True),
        ("dd", False),
    ]
    assert {t.parent_session_id for t in turns} == {"2025-12-31T00-00-00-000Z_ffff"}


def test_the_extension_payload_points_at_the_session_file_or_its_id(tmp_path: Path) -> None:
    home = tmp_path / "pi"
    path = copy_fixture(PI_V3, home / "sessions" / PI_DIR.name)
    source = PiSource(home)
    assert [u.path for u in source.units()] == [path]
    for payload in (
        {"session_file": str(path), "session_id": "x", "cwd": "/w"},
        {"transcript_path": str(path)},
        {"session_id": "019cd9f0-2b3c-7d4e-8f5a-6b7c8d9e0f1a"},
    ):
        unit = source.unit_for_hook(payload)
        assert unit is not None and unit.path == path, payload
    assert source.unit_for_hook({"session_file": str(home / "missing.jsonl")}) is None
    assert source.unit_for_hook({"session_id": "nope"}) is None
