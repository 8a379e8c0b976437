"""Claude Code record shapes seen in real files of many versions, attributed right (issue 13)."""

from __future__ import annotations

import json
import os
from pathlib import Path

from support.claude_shapes import (
    CWD,
    SESSION,
    TASK_PROMPT,
    inline_sidechain_session,
    persisted_preview,
    record,
    session_path,
    slash_command,
    text,
    tool_result,
    tool_use,
    uid,
    warmup_pair,
    write,
)

from funes.traces import BlockType, ReadStats, Role, ToolStatus, Turn
from funes.traces.claude_code import claude_unit, read_claude_file
from funes.traces.model import MAX_BLOCK_CHARS


def read(path: Path) -> list[Turn]:
    return list(read_claude_file(path, ReadStats()))


def by_session(turns: list[Turn]) -> dict[str, list[Turn]]:
    out: dict[str, list[Turn]] = {}
    for t in turns:
        out.setdefault(t.session_id, []).append(t)
    return out


# -- 1. inline sidechains ----------------------------------------------------------------


def test_inline_sidechain_records_are_a_subagent_session_linked_to_the_main_one(
    tmp_path: Path,
) -> None:
    path = write(session_path(tmp_path), inline_sidechain_session())
    sessions = by_session(read(path))
    main = sessions.pop(SESSION)
    # the main session holds the person's prompt, the Task call and result, and the answer
    assert [(t.turn_id, t.role, t.seq) for t in main] == [
        (uid("u1"), Role.USER, 0),
        (uid("a1"), Role.ASSISTANT, 1),
        (uid("u2"), Role.TOOL, 2),
        (uid("a2"), Role.ASSISTANT, 3),
    ]
    # the agent-written prompt is no text of the main session (only the Task call's input)
    assert all(
        TASK_PROMPT not in b.text for t in main for b in t.blocks if b.type is BlockType.TEXT
    )
    [(side_id, side)] = sessions.items()
    assert side_id == f"sidechain-{uid('s1')}"
    assert {t.parent_session_id for t in side} == {SESSION}
    assert [t.seq for t in side] == list(range(len(side)))
    # the agent-written prompt opens the subagent's session; the subagent's answer is its own
    assert side[0].turn_id == uid("s1") and TASK_PROMPT in side[0].blocks[0].text
    assert side[-1].turn_id == uid("s-answer") and side[-1].role is Role.ASSISTANT
    assert {t.session_label for t in side} == {f"6f1d2c3b/general-purpose-{uid('s1')[:8]}"}
    assert {t.session_label for t in main} == {"6f1d2c3b"}


def test_hundreds_of_sidechain_records_leave_the_main_session_its_own_turns(
    tmp_path: Path,
) -> None:
    path = write(session_path(tmp_path), inline_sidechain_session(sidechains=200))
    sessions = by_session(read(path))
    assert [t.turn_id for t in sessions[SESSION]] == [uid(n) for n in ("u1", "a1", "u2", "a2")]
    assert len(sessions[f"sidechain-{uid('s1')}"]) == 2 + 2 * 200


def test_the_warmup_pair_of_2_0_is_a_scaffold_subagent_session(tmp_path: Path) -> None:
    recs = [record("user", "Add an index on entries.date", "u1", None, version="2.0.14")]
    recs += warmup_pair()
    recs.append(record("assistant", text("Added it."), "a1", "u1", version="2.0.14"))
    sessions = by_session(read(write(session_path(tmp_path), recs)))
    assert [t.turn_id for t in sessions[SESSION]] == [uid("u1"), uid("a1")]
    warm = sessions[f"sidechain-{uid('w1')}"]
    assert [t.scaffold for t in warm] == [True, True]
    assert warm[0].session_label == f"6f1d2c3b/warmup-{uid('w1')[:8]}"
    assert not any(t.scaffold for t in sessions[SESSION])


def test_every_record_of_a_subagent_file_stays_in_that_file_s_session(tmp_path: Path) -> None:
    sub = tmp_path / "projects" / "p" / SESSION / "subagents" / "agent-a2df51c9276581f81.jsonl"
    recs = [
        record("user", TASK_PROMPT, "x1", None, sidechain=True, agentId="a2df51c9276581f81"),
        record("assistant", text("Two connections."), "x2", "x1", sidechain=True),
    ]
    turns = read(write(sub, recs))
    assert {t.session_id for t in turns} == {"agent-a2df51c9276581f81"}
    assert {t.parent_session_id for t in turns} == {SESSION}


# -- 3. slash commands ---------------------------------------------------------------------


def test_a_slash_command_with_args_is_the_person_s_prompt(tmp_path: Path) -> None:
    recs = [
        slash_command("/frontend", "create TODO app by Next.js", "c1", None),
        slash_command("/clear", "", "c2", "c1"),
        slash_command("/compact", "   ", "c3", "c2"),
    ]
    turns = read(write(session_path(tmp_path), recs))
    assert turns[0].blocks[0].text == "/frontend create TODO app by Next.js"
    assert turns[0].role is Role.USER and not turns[0].scaffold
    assert [t.scaffold for t in turns[1:]] == [True, True]
    assert turns[1].blocks[0].text.startswith("<command-message>")


# -- 4. spilled tool output ----------------------------------------------------------------


def _spill_session(tmp_path: Path, preview: str) -> Path:
    path = session_path(tmp_path)
    spilled = path.parent / SESSION / "tool-results" / "toolu_big.txt"
    recs = [
        record("user", "List every migration", "u1", None, version="2.1.97"),
        record(
            "assistant",
            tool_use("toolu_big", "Bash", {"command": "ls migrations"}),
            "a1",
            "u1",
            version="2.1.97",
        ),
        record(
            "user",
            tool_result("toolu_big", persisted_preview(spilled, 73.8, preview)),
            "r1",
            "a1",
            version="2.1.97",
        ),
    ]
    return write(path, recs)


def _result(turns: list[Turn]) -> str:
    return next(b.text for t in turns for b in t.blocks if b.type is BlockType.TOOL_RESULT)


def test_a_spilled_tool_result_is_indexed_from_its_file(tmp_path: Path) -> None:
    path = _spill_session(tmp_path, "0001_init.sql\n0002_entries.sql")
    full = "\n".join(f"{i:04d}_step.sql" for i in range(1, 4000)) + "\n3999_last_one.sql"
    spill = path.parent / SESSION / "tool-results" / "toolu_big.txt"
    spill.parent.mkdir(parents=True)
    spill.write_text(full)
    assert _result(read(path)) == full


def test_a_spill_file_that_appears_later_changes_the_unit_and_is_read(tmp_path: Path) -> None:
    path = _spill_session(tmp_path, "0001_init.sql")
    before = claude_unit(path)
    assert "<persisted-output>" in _result(read(path))  # no file yet: the preview is kept
    spill = path.parent / SESSION / "tool-results" / "toolu_big.txt"
    spill.parent.mkdir(parents=True)
    spill.write_text("0001_init.sql\n0002_entries.sql\n0003_budget.sql")
    after = claude_unit(path)
    assert before is not None and after is not None
    assert before.signature != after.signature
    assert _result(read(path)) == "0001_init.sql\n0002_entries.sql\n0003_budget.sql"


def test_a_huge_spill_file_is_cut_to_the_block_limit(tmp_path: Path) -> None:
    path = _spill_session(tmp_path, "x")
    spill = path.parent / SESSION / "tool-results" / "toolu_big.txt"
    spill.parent.mkdir(parents=True)
    spill.write_text("y" * (MAX_BLOCK_CHARS * 6))
    got = _result(read(path))
    assert got.startswith("y" * 1000) and "cut by funes" in got
    assert len(got) < MAX_BLOCK_CHARS + 200


def test_a_spill_path_is_never_taken_from_the_transcript_text(tmp_path: Path) -> None:
    secret = tmp_path / "elsewhere.txt"
    secret.write_text("not part of any session")
    path = session_path(tmp_path)
    recs = [
        record(
            "user",
            tool_result("../../../elsewhere", persisted_preview(secret, 1.0, "p")),
            "r1",
            None,
        )
    ]
    assert "not part of any session" not in _result(read(write(path, recs)))


# -- 7. smaller attribution gaps -----------------------------------------------------------


def test_error_results_are_marked_and_models_recorded_per_assistant_turn(tmp_path: Path) -> None:
    recs = [
        record("user", "Run the tests", "u1", None),
        record("assistant", tool_use("t1", "Bash", {"command": "pytest"}), "a1", "u1"),
        record("user", tool_result("t1", "exit 1: 3 failed", is_error=True), "r1", "a1"),
        record("assistant", text("Three fail."), "a2", "r1", model="claude-opus-4-1-20250805"),
        record(
            "assistant", text("API Error"), "e1", "a2", model="<synthetic>", isApiErrorMessage=True
        ),
    ]
    turns = read(write(session_path(tmp_path), recs))
    result = turns[2].blocks[0]
    assert result.status is ToolStatus.ERROR and result.tool_name == "Bash"
    assert [t.model for t in turns] == [
        None,
        "claude-sonnet-4-20250514",
        None,
        "claude-opus-4-1-20250805",
        None,
    ]


def test_a_write_result_logged_before_its_call_follows_it_with_its_name(tmp_path: Path) -> None:
    recs = [
        record("user", "Create the config", "u1", None),
        record(
            "user",
            tool_result("toolu_w", "File created successfully at: /home/dev/ledger/app.toml"),
            "r1",
            "a1",
            toolUseResult={"type": "create", "filePath": "/home/dev/ledger/app.toml"},
        ),
        record(
            "assistant",
            tool_use(
                "toolu_w", "Write", {"file_path": "/home/dev/ledger/app.toml", "content": "x"}
            ),
            "a1",
            "u1",
        ),
        record("assistant", text("Created app.toml."), "a2", "r1"),
    ]
    turns = read(write(session_path(tmp_path), recs))
    assert [t.turn_id for t in turns] == [uid("u1"), uid("a1"), uid("r1"), uid("a2")]
    assert [t.seq for t in turns] == [0, 1, 2, 3]
    assert turns[2].blocks[0].tool_name == "Write"


def test_a_result_whose_call_never_comes_is_not_held_forever(tmp_path: Path) -> None:
    recs = [record("user", tool_result("toolu_gone", "orphan output"), "r0", None)]
    recs += [record("user", f"prompt {i}", f"u{i}", None) for i in range(30)]
    turns = read(write(session_path(tmp_path), recs))
    order = [t.turn_id for t in turns]
    assert uid("r0") in order and order.index(uid("r0")) < 25
    assert turns[order.index(uid("r0"))].blocks[0].tool_name is None


def test_a_session_that_cds_elsewhere_keeps_one_project_facet(tmp_path: Path) -> None:
    recs = [
        record("user", "Build it", "u1", None),
        record("assistant", text("Building in the worktree."), "a1", "u1", cwd=f"{CWD}/.wt/fix"),
        record("user", "And the docs?", "u2", "a1", cwd="/tmp/docs-build"),
    ]
    turns = read(write(session_path(tmp_path), recs))
    assert {t.workdir for t in turns} == {"-home-dev-ledger"}
    assert [t.cwd for t in turns] == [CWD, f"{CWD}/.wt/fix", "/tmp/docs-build"]


def test_a_record_written_twice_is_read_once(tmp_path: Path) -> None:
    rec = record("user", "Same line twice", "u1", None)
    turns = read(
        write(session_path(tmp_path), [rec, rec, record("assistant", text("ok"), "a1", "u1")])
    )
    assert [(t.turn_id, t.seq) for t in turns] == [(uid("u1"), 0), (uid("a1"), 1)]


def test_a_subagent_is_labelled_from_its_meta_json(tmp_path: Path) -> None:
    folder = tmp_path / "projects" / "p" / SESSION / "subagents"
    recs = [
        record("user", "Map the schema", "x1", None, sidechain=True, agentId="a2df51c9276581f81")
    ]
    path = write(folder / "agent-a2df51c9276581f81.jsonl", recs)
    (folder / "agent-a2df51c9276581f81.meta.json").write_text(
        json.dumps({"agentType": "Explore", "description": "Map the schema"})
    )
    [turn] = read(path)
    assert turn.session_label == "6f1d2c3b/Explore-a2df51c9"
    aside = write(folder / "agent-aside_question-ac9ee4804d56a951.jsonl", recs)
    [turn] = read(aside)
    assert turn.session_label == "6f1d2c3b/aside_question-ac9ee480"


def test_a_meta_json_that_appears_later_changes_the_subagent_unit(tmp_path: Path) -> None:
    folder = tmp_path / "projects" / "p" / SESSION / "subagents"
    path = write(folder / "agent-a1.jsonl", [record("user", "Map it", "x1", None, sidechain=True)])
    before = claude_unit(path)
    meta = folder / "agent-a1.meta.json"
    meta.write_text(json.dumps({"agentType": "Plan"}))
    os.utime(meta, ns=(1, 1))
    after = claude_unit(path)
    assert before is not None and after is not None and before.signature != after.signature
