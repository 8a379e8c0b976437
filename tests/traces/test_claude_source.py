"""Claude Code transcripts on the fixtures: main session, nested subagent, damaged file, hooks."""

from __future__ import annotations

import os
import random
import shutil
import time
from pathlib import Path

import pytest
from trace_fixtures import CLAUDE_PROJECT, FIXTURES, read_unit

from funes.traces import BlockType, ReadStats, Role
from funes.traces.claude_code import ClaudeCodeSource, read_claude_file

MAIN = "a45e9651-f47f-59d5-bfa2-5b9d95d22ceb"
EDGE = "841acb0b-c9cc-5da5-9fa0-5e347169a5af"
SUBAGENT = CLAUDE_PROJECT / MAIN / "subagents" / "agent-a5a5a5b6b6b6c7c7c.jsonl"


def test_the_main_session_reads_prompt_thinking_tools_and_answer_with_back_filled_names() -> None:
    stats = ReadStats()
    turns = list(read_claude_file(CLAUDE_PROJECT / f"{MAIN}.jsonl", stats))
    assert [t.role for t in turns] == [
        Role.USER,
        Role.ASSISTANT,
        Role.ASSISTANT,
        Role.TOOL,
        Role.ASSISTANT,
        Role.TOOL,
        Role.ASSISTANT,
        Role.TOOL,
        Role.ASSISTANT,
    ]
    assert turns[1].blocks[0].type is BlockType.THINKING
    results = [b.tool_name for t in turns for b in t.blocks if b.type is BlockType.TOOL_RESULT]
    assert results == ["Bash", "Task", "Edit"]
    assert {t.git_branch for t in turns} == {"fix/idle-disconnects"}
    assert "pool_recycle_seconds = 540" in turns[-1].blocks[0].text
    # queue-operation ×2, attachment, system, last-prompt
    assert stats.unknown_records == 5


def test_a_nested_subagent_file_is_its_own_session_linked_to_its_parent() -> None:
    source = ClaudeCodeSource(FIXTURES / "claude")
    units = {u.path: u for u in source.units()}
    assert units[SUBAGENT].secondary and not units[CLAUDE_PROJECT / f"{MAIN}.jsonl"].secondary
    turns, _ = read_unit(source, units[SUBAGENT])
    assert {t.session_id for t in turns} == {"agent-a5a5a5b6b6b6c7c7c"}
    assert {t.parent_session_id for t in turns} == {MAIN}
    assert [b.tool_name for t in turns for b in t.blocks if b.type is BlockType.TOOL_RESULT] == [
        "Grep"
    ]


def test_a_damaged_transcript_is_read_around_its_bad_lines_and_counts_them() -> None:
    stats = ReadStats()
    turns = list(read_claude_file(CLAUDE_PROJECT / f"{EDGE}.jsonl", stats))
    assert [t.blocks[0].text[:20] for t in turns] == [
        "Rename the `Firing.c",
        "Migration 0007 renam",
        "Ran the migration on",
    ]
    assert "caf\ufffd" in turns[1].blocks[0].text
    assert (stats.corrupt_records, stats.unknown_records, stats.invalid_utf8) == (1, 1, 1)
    # its cut-off last line: still being written or a truncated transcript, by the file's age
    assert stats.truncated_tail != (stats.cut_off_files == 1)


def test_a_cut_off_last_line_unchanged_for_long_is_a_truncated_transcript(tmp_path: Path) -> None:
    """The same cut-off last line is a line the agent is still writing while the file is
    fresh (picked up next time), and a truncated transcript once the file has not changed for
    a long while (a crash or a cut copy: counted); the turns before it are read either way."""
    path = tmp_path / f"{EDGE}.jsonl"
    shutil.copyfile(CLAUDE_PROJECT / f"{EDGE}.jsonl", path)
    fresh = ReadStats()
    turns = list(read_claude_file(path, fresh))
    assert fresh.truncated_tail and fresh.cut_off_files == 0
    two_days_ago = time.time() - 2 * 86400
    os.utime(path, (two_days_ago, two_days_ago))
    old = ReadStats()
    assert list(read_claude_file(path, old)) == turns and len(turns) == 3
    assert not old.truncated_tail and old.cut_off_files == 1
    assert old.corrupt_records == fresh.corrupt_records == 1


@pytest.mark.parametrize("newlines", [True, False])
def test_a_transcript_of_random_bytes_is_counted_corrupt_not_still_being_written(
    tmp_path: Path, newlines: bool
) -> None:
    """A `.jsonl` of random bytes (not UTF-8, no JSON) in a session folder: its last line, with
    no newline after it, was taken for a line the agent was still writing, so a file without
    a newline was skipped without a count and `funes index` said a transcript was still being
    written. A last line that cannot become a record (no `{`, bytes that are not UTF-8) is
    corrupt; one that opens a JSON object is still left for the next read."""
    data = random.Random(7).randbytes(4096)
    if not newlines:
        data = data.replace(b"\n", b"")
    path = tmp_path / "11111111-2222-3333-4444-555555555555.jsonl"
    path.write_bytes(b"\xff" + data)
    stats = ReadStats()
    assert list(read_claude_file(path, stats)) == []
    assert stats.corrupt_records == len(data.split(b"\n")) and not stats.truncated_tail
    path.write_bytes(b'{"type": "user", "message": {"content": "caf\xc3')  # cut mid-character
    stats = ReadStats()
    assert list(read_claude_file(path, stats)) == []
    assert stats.truncated_tail and stats.corrupt_records == 0


def test_a_stop_payload_names_the_transcript_and_a_subagent_stop_its_agent_file() -> None:
    source = ClaudeCodeSource(FIXTURES / "claude")
    main = source.unit_for_hook(
        {"session_id": MAIN, "transcript_path": str(CLAUDE_PROJECT / f"{MAIN}.jsonl")}
    )
    assert main is not None and main.path == CLAUDE_PROJECT / f"{MAIN}.jsonl"
    sub = source.unit_for_hook(
        {
            "transcript_path": str(CLAUDE_PROJECT / f"{MAIN}.jsonl"),
            "agent_transcript_path": str(SUBAGENT),
        }
    )
    assert sub is not None and sub.path == SUBAGENT and sub.secondary
    assert source.unit_for_hook({"transcript_path": str(Path("/elsewhere/x.jsonl"))}) is None


def test_a_byte_order_mark_before_the_first_record_does_not_lose_it(tmp_path: Path) -> None:
    lines = (CLAUDE_PROJECT / "a45e9651-f47f-59d5-bfa2-5b9d95d22ceb.jsonl").read_bytes()
    lines_list = lines.splitlines(keepends=True)
    first_turn = next(i for i, x in enumerate(lines_list) if b'"type":"user"' in x)
    source = b"".join(lines_list[first_turn:])  # the mark sits right before a real turn
    plain, marked = tmp_path / "plain.jsonl", tmp_path / "marked.jsonl"
    plain.write_bytes(source)
    marked.write_bytes(b"\xef\xbb\xbf" + source)  # as Windows editors and PowerShell write it
    plain_stats, marked_stats = ReadStats(), ReadStats()
    expected = [(t.turn_id, t.blocks) for t in read_claude_file(plain, plain_stats)]
    got = [(t.turn_id, t.blocks) for t in read_claude_file(marked, marked_stats)]
    assert got == expected and expected
    assert marked_stats.corrupt_records == plain_stats.corrupt_records


def test_a_corrupt_line_with_invalid_utf8_is_counted_once_as_corrupt(tmp_path: Path) -> None:
    """`kept N lines with invalid UTF-8` counts lines that were kept; a line that is not JSON
    either is one corrupt record, not also a kept one."""
    from funes.traces.jsonl import read_records

    path = tmp_path / "s.jsonl"
    path.write_bytes(b'{"a": 1}\n\xff\xfe not json \x80\n{"b": "caf\xe9"}\n')
    stats = ReadStats()
    records = list(read_records(path, stats))
    assert [n for n, _ in records] == [1, 3]
    assert records[1][1] == {"b": "caf\ufffd"}
    assert (stats.corrupt_records, stats.invalid_utf8) == (1, 1)
