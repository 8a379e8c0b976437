"""Codex rollouts: both record streams, both orders, growing files, multi-file threads, hooks."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from trace_fixtures import CODEX_046, CODEX_EDGE, CODEX_NEW, CODEX_PRE, copy_fixture

from funes.traces import BlockType, ReadStats, Role, Turn
from funes.traces.codex import CodexSource, read_codex_file

THREAD = "019d0000-aaaa-7bbb-8ccc-000000000001"


def read(path: Path) -> tuple[list[Turn], ReadStats]:
    stats = ReadStats()
    return list(read_codex_file(path, stats)), stats


def texts(turns: list[Turn]) -> list[tuple[str, str, str]]:
    return [(t.role.value, b.type.value, b.text) for t in turns for b in t.blocks]


def env(ts: str, kind: str, payload: dict[str, Any]) -> str:
    return json.dumps({"timestamp": ts, "type": kind, "payload": payload})


def meta(thread: str, started: str, written: str) -> str:
    return env(written, "session_meta", {"id": thread, "timestamp": started, "cwd": "/w/app"})


def item(role: str, text: str) -> dict[str, Any]:
    part = "output_text" if role == "assistant" else "input_text"
    return {"type": "message", "role": role, "content": [{"type": part, "text": text}]}


def conversation(order: str) -> list[str]:
    """One exchange written with the event before (`event-first`) or after the response item."""
    pairs = [
        (
            env("2026-01-01T10:00:01Z", "response_item", item("user", "List the kilns")),
            env(
                "2026-01-01T10:00:01Z",
                "event_msg",
                {"type": "user_message", "message": "List the kilns"},
            ),
        ),
        (
            env(
                "2026-01-01T10:00:02Z",
                "response_item",
                {
                    "type": "reasoning",
                    "summary": [{"type": "summary_text", "text": "**Look at settings**"}],
                },
            ),
            env(
                "2026-01-01T10:00:02Z",
                "event_msg",
                {"type": "agent_reasoning", "text": "**Look at settings**"},
            ),
        ),
        (
            env(
                "2026-01-01T10:00:03Z", "response_item", item("assistant", "There are four kilns.")
            ),
            env(
                "2026-01-01T10:00:03Z",
                "event_msg",
                {"type": "agent_message", "message": "There are four kilns."},
            ),
        ),
        (
            env("2026-01-01T10:00:04Z", "response_item", item("user", "List the kilns")),
            env(
                "2026-01-01T10:00:04Z",
                "event_msg",
                {"type": "user_message", "message": "List the kilns"},
            ),
        ),
    ]
    lines = [meta(THREAD, "2026-01-01T10:00:00Z", "2026-01-01T10:00:00Z")]
    for resp, event in pairs:
        lines += [event, resp] if order == "event-first" else [resp, event]
    return lines


def write_lines(path: Path, lines: list[str]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(line + "\n" for line in lines))
    return path


def rollout_name(thread: str = THREAD, ts: str = "2026-01-01T10-00-00") -> str:
    return f"rollout-{ts}-{thread}.jsonl"


def test_each_message_mirrored_in_both_streams_is_emitted_once_in_either_order(
    tmp_path: Path,
) -> None:
    expected = [
        ("user", "text", "List the kilns"),
        ("assistant", "thinking", "**Look at settings**"),
        ("assistant", "text", "There are four kilns."),
        ("user", "text", "List the kilns"),  # a repeated prompt is a second message, kept
    ]
    for order in ("event-first", "response-first"):
        turns, _ = read(write_lines(tmp_path / order / rollout_name(), conversation(order)))
        assert texts(turns) == expected, order


def test_turn_ids_do_not_depend_on_which_stream_came_first(tmp_path: Path) -> None:
    a, _ = read(write_lines(tmp_path / "a" / rollout_name(), conversation("event-first")))
    b, _ = read(write_lines(tmp_path / "b" / rollout_name(), conversation("response-first")))
    assert [t.turn_id for t in a] == [t.turn_id for t in b]
    assert len({t.turn_id for t in a}) == len(a)


def test_the_fixtures_cover_both_stream_orders_and_emit_every_message_once() -> None:
    for path in (CODEX_NEW, CODEX_046):
        turns, _ = read(path)
        bodies = [b.text for t in turns for b in t.blocks if b.type is not BlockType.TOOL_USE]
        assert len(bodies) == len(set(bodies)), f"{path.name}: a message was emitted twice"
    raw = CODEX_046.read_text().splitlines()
    kinds = [json.loads(line)["payload"].get("type") for line in raw[1:]]
    assert kinds.index("user_message") < kinds.index("message", 1)  # event before the item
    assert kinds.index("reasoning") < kinds.index("agent_reasoning")  # item before the event


def test_a_growing_rollout_never_changes_the_turns_it_already_emitted(tmp_path: Path) -> None:
    data = CODEX_NEW.read_bytes()
    dest = copy_fixture(CODEX_NEW, tmp_path)
    full, _ = read(dest)
    cuts = sorted({*range(0, len(data), 97), *[i + 1 for i, c in enumerate(data) if c == 0x0A]})
    for cut in cuts:
        dest.write_bytes(data[:cut])
        part, stats = read(dest)
        assert part == full[: len(part)], f"prefix of {cut} bytes diverged"
        assert stats.corrupt_records == 0, "a line still being written is not corrupt"
        assert stats.truncated_tail == _ends_in_a_partial_line(data[:cut])


def _ends_in_a_partial_line(data: bytes) -> bool:
    last = data.rsplit(b"\n", 1)[-1]
    if not last.strip():
        return False
    try:
        json.loads(last)
    except ValueError:
        return True
    return False


def test_newest_build_mapping_tools_namespaces_outputs_and_scaffolding() -> None:
    turns, stats = read(CODEX_NEW)
    assert turns[0].session_id == "019cd3a4-5b2e-7c41-9a7d-3e5f6a7b8c9d"
    assert turns[0].cwd == "/home/dev/src/kilnbook"
    assert turns[0].git_branch == "feature/firing-export"
    scaffold = [t.blocks[0].text.split("\n")[0] for t in turns if t.scaffold]
    assert scaffold == [
        "# AGENTS.md instructions for /home/dev/src/kilnbook",
        "<environment_context>",
    ]
    assert not any("permissions instructions" in b.text for t in turns for b in t.blocks)
    tools = [
        (b.type, b.tool_name, b.tool_use_id)
        for t in turns
        for b in t.blocks
        if t.role in (Role.TOOL,) or b.type is BlockType.TOOL_USE
    ]
    assert tools == [
        (BlockType.TOOL_USE, "exec_command", "call_Kx7731ExportA"),
        (BlockType.TOOL_RESULT, "exec_command", "call_Kx7731ExportA"),
        (BlockType.TOOL_USE, "apply_patch", "call_PatchExportB"),
        (BlockType.TOOL_RESULT, "apply_patch", "call_PatchExportB"),
        (BlockType.TOOL_USE, "mcp__kilnsim__ping", "call_McpPingC"),
        (BlockType.TOOL_RESULT, "mcp__kilnsim__ping", "call_McpPingC"),
    ]
    results = {
        b.tool_use_id: b.text for t in turns for b in t.blocks if b.type is BlockType.TOOL_RESULT
    }
    assert "KLN-7731" in results["call_Kx7731ExportA"]  # string output kept verbatim
    assert results["call_PatchExportB"].startswith("Success. Updated")  # object output
    assert results["call_McpPingC"].endswith("kiln-2 simulator: ok")  # list output
    patch = next(b.text for t in turns for b in t.blocks if b.tool_name == "apply_patch")
    assert patch.startswith("*** Begin Patch")  # custom tool input verbatim
    assert stats.unknown_records == 2  # world_state, token_usage_record


def test_pre_envelope_rollouts_are_read_with_the_header_id_and_time() -> None:
    turns, stats = read(CODEX_PRE)
    assert {t.session_id for t in turns} == {"5973b6c0-94b8-487b-a530-2aeb6098ae0e"}
    assert {t.ts for t in turns} == {"2025-09-10T11:03:27.412Z"}
    assert [t.role for t in turns if not t.scaffold] == [
        Role.USER,
        Role.ASSISTANT,
        Role.ASSISTANT,
        Role.TOOL,
        Role.ASSISTANT,
    ]
    assert stats.unknown_records == 3  # the {"record_type":"state"} markers


def test_a_damaged_rollout_is_read_around_its_bad_lines_and_counts_them() -> None:
    turns, stats = read(CODEX_EDGE)
    assert texts(turns) == [
        ("user", "text", "Bump the kiln controller timeout to 8 seconds."),
        (
            "assistant",
            "text",
            "Set CONTROLLER_TIMEOUT_S = 8 in kilnbook/settings.py (na\ufffdve default was 3).",
        ),
    ]
    assert stats.corrupt_records == 1
    assert stats.unknown_records == 1
    assert stats.invalid_utf8 == 1
    # its cut-off last line: still being written or a truncated transcript, by the file's age
    assert stats.truncated_tail != (stats.cut_off_files == 1)


def test_continuation_files_of_one_thread_never_collide_in_turn_id_or_seq(tmp_path: Path) -> None:
    day = tmp_path / "sessions" / "2026" / "01" / "01"
    first = [
        meta(THREAD, "2026-01-01T10:00:00Z", "2026-01-01T10:00:00Z"),
        env("2026-01-01T10:00:01Z", "response_item", item("user", "continue")),
        env("2026-01-01T10:00:02Z", "response_item", item("assistant", "done")),
    ]
    second = [
        meta(THREAD, "2026-01-01T10:00:00Z", "2026-01-01T11:30:00Z"),
        env("2026-01-01T11:30:01Z", "response_item", item("user", "continue")),
        env("2026-01-01T11:30:02Z", "response_item", item("assistant", "done")),
    ]
    a, _ = read(write_lines(day / rollout_name(), first))
    b, _ = read(write_lines(day / rollout_name(ts="2026-01-01T11-30-00"), second))
    assert {t.session_id for t in a + b} == {THREAD}
    assert not {t.turn_id for t in a} & {t.turn_id for t in b}
    assert max(t.seq for t in a) < min(t.seq for t in b)


def test_the_source_scans_sessions_and_archived_sessions() -> None:
    home = CODEX_NEW.parents[4]
    keys = sorted(Path(u.key).name for u in CodexSource(home).units())
    assert keys == sorted(p.name for p in (CODEX_NEW, CODEX_046, CODEX_PRE, CODEX_EDGE))


def test_a_stop_hook_payload_finds_the_rollout_by_path_or_by_thread_id(tmp_path: Path) -> None:
    home = tmp_path / "codex"
    path = copy_fixture(CODEX_NEW, home / "sessions" / "2026" / "03" / "14")
    archived = copy_fixture(CODEX_EDGE, home / "archived_sessions")
    source = CodexSource(home)
    by_path = source.unit_for_hook({"transcript_path": str(path), "session_id": "x"})
    assert by_path is not None and by_path.path == path
    thread = "019cd3a4-5b2e-7c41-9a7d-3e5f6a7b8c9d"
    by_id = source.unit_for_hook(
        {"transcript_path": None, "session_id": thread, "hook_event_name": "Stop"}
    )
    assert by_id is not None and by_id.path == path
    notify = source.unit_for_hook(
        {"type": "agent-turn-complete", "thread-id": "019c6f00-1a2b-7c3d-8e4f-5a6b7c8d9e0f"}
    )
    assert notify is not None and notify.path == archived
    assert source.unit_for_hook({"session_id": "019c0000-0000-7000-8000-000000000000"}) is None
    assert source.unit_for_hook({"session_id": "../../etc"}) is None


def test_compaction_summaries_are_scaffolding_and_other_tool_calls_are_kept(tmp_path: Path) -> None:
    lines = [
        meta(THREAD, "2026-01-01T10:00:00Z", "2026-01-01T10:00:00Z"),
        env(
            "2026-01-01T10:00:01Z",
            "response_item",
            {
                "type": "local_shell_call",
                "call_id": "c1",
                "status": "completed",
                "action": {"type": "exec", "command": ["ls"]},
            },
        ),
        env(
            "2026-01-01T10:00:02Z",
            "response_item",
            {"type": "function_call_output", "call_id": "c1", "output": "README.md"},
        ),
        env(
            "2026-01-01T10:00:03Z",
            "response_item",
            {
                "type": "web_search_call",
                "status": "completed",
                "action": {"type": "search", "query": "cone 6 temperature"},
            },
        ),
        env(
            "2026-01-01T10:00:04Z",
            "response_item",
            {
                "type": "message",
                "role": "user",
                "content": [
                    {"type": "input_text", "text": "look"},
                    {"type": "input_image", "image_url": "data:image/png;base64,iVBORw0KGgo="},
                ],
            },
        ),
        env(
            "2026-01-01T10:00:05Z",
            "compacted",
            {
                "message": "Summary: the user asked about cones.",
                "replacement_history": [item("user", "look")],
            },
        ),
        env(
            "2026-01-01T10:00:06Z",
            "response_item",
            {"type": "ghost_snapshot", "ghost_commit": {"id": "abc"}},
        ),
    ]
    turns, stats = read(write_lines(tmp_path / rollout_name(), lines))
    assert [(t.role, b.type, b.tool_name) for t in turns for b in t.blocks] == [
        (Role.ASSISTANT, BlockType.TOOL_USE, "local_shell"),
        (Role.TOOL, BlockType.TOOL_RESULT, "local_shell"),
        (Role.ASSISTANT, BlockType.TOOL_USE, "web_search"),
        (Role.USER, BlockType.TEXT, None),
        (Role.USER, BlockType.TEXT, None),
    ]
    assert turns[3].blocks[0].text == "look"  # the image part is not text
    assert turns[4].scaffold and turns[4].blocks[0].text.startswith("Summary:")
    assert stats.unknown_records == 1  # ghost_snapshot
