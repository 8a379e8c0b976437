from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from funes.chunks import chunk_id, chunk_turn, reassemble, render_block, split_text
from funes.traces import Block, BlockType, Harness, Role, ToolStatus, Turn


def _turn(*blocks: Block, turn_id: str = "t1") -> Turn:
    return Turn(
        Harness.CLAUDE_CODE,
        "s1",
        turn_id,
        0,
        "",
        Role.ASSISTANT,
        blocks,
        "/x/s1.jsonl",
        cwd="/home/u/app",
    )


def test_chunk_id_is_the_first_16_hex_of_sha1_over_session_turn_block_split() -> None:
    # sha1("s:t:0:0") computed independently
    import hashlib

    assert chunk_id("s", "t", 0, 0) == hashlib.sha1(b"s:t:0:0").hexdigest()[:16]
    assert len(chunk_id("s", "t", 3, 1)) == 16


def test_short_text_is_one_piece_and_long_text_is_split_near_1200_chars() -> None:
    assert split_text("  hello  ") == ["hello"]
    text = ("word " * 1000).strip()
    pieces = split_text(text)
    assert len(pieces) > 1
    assert all(len(p) <= 1200 for p in pieces)
    assert all(len(p) > 600 for p in pieces[:-1])


def test_tool_blocks_are_rendered_with_their_tool_name() -> None:
    assert (
        render_block(Block(BlockType.TOOL_USE, '{"cmd":"ls"}', tool_name="Bash"))
        == '[tool_use Bash] {"cmd":"ls"}'
    )
    assert (
        render_block(Block(BlockType.TOOL_RESULT, "out", tool_name="Bash"))
        == "[tool_result Bash] out"
    )
    assert render_block(Block(BlockType.TOOL_RESULT, "out")) == "[tool_result] out"


def test_filtering_block_types_never_renumbers_block_indexes() -> None:
    turn = _turn(Block(BlockType.THINKING, "hmm"), Block(BlockType.TEXT, "answer"))
    all_ids = {c.block_idx: c.id for c in chunk_turn(turn)}
    text_only = list(chunk_turn(turn, types={BlockType.TEXT}))
    assert [c.block_idx for c in text_only] == [1]
    assert text_only[0].id == all_ids[1]


@given(st.text(alphabet=st.sampled_from("ab cd\nefgh ij"), min_size=0, max_size=6000))
def test_reassembling_the_split_pieces_restores_the_stripped_text_modulo_whitespace(
    text: str,
) -> None:
    pieces = split_text(text)
    rebuilt = reassemble(pieces)
    assert "".join(rebuilt.split()) == "".join(text.split())


def test_a_tool_status_is_rendered_after_the_tool_name() -> None:
    failed = Block(BlockType.TOOL_RESULT, "3 failed", tool_name="Bash", status=ToolStatus.ERROR)
    unnamed = Block(BlockType.TOOL_RESULT, "boom", status=ToolStatus.ERROR)
    never = Block(
        BlockType.TOOL_USE, '{"command":"dropdb"}', tool_name="bash", status=ToolStatus.NOT_RUN
    )
    assert render_block(failed) == "[tool_result Bash (error)] 3 failed"
    assert render_block(unnamed) == "[tool_result (error)] boom"
    assert render_block(never) == '[tool_use bash (not run)] {"command":"dropdb"}'


def test_a_chunk_carries_its_turn_s_model_label_and_project_facet() -> None:
    turn = Turn(
        harness=Harness.CLAUDE_CODE,
        session_id="s",
        turn_id="t",
        seq=3,
        ts="",
        role=Role.ASSISTANT,
        blocks=(Block(BlockType.TEXT, "done"),),
        source_path="/x.jsonl",
        cwd="/tmp/build",
        model="claude-sonnet-4-5",
        project="/home/dev/ledger",
        session_label="6f1d2c3b",
    )
    [c] = chunk_turn(turn)
    assert (c.model, c.session_label, c.workdir, c.cwd) == (
        "claude-sonnet-4-5",
        "6f1d2c3b",
        "-home-dev-ledger",
        "/tmp/build",
    )


def _workdir_turn(cwd: str | None, source_path: str = "/x.jsonl") -> Turn:
    return Turn(
        Harness.CLAUDE_CODE,
        "s",
        "t",
        0,
        "",
        Role.ASSISTANT,
        (Block(BlockType.TEXT, "done"),),
        source_path,
        cwd=cwd,
    )


def test_a_cwd_holding_a_newline_gives_a_readable_facet_and_keeps_its_exact_cwd() -> None:
    """The facet was derived from the stored (escaped) cwd, so a newline leaked into it as
    `x0a` (`/tmp/a\\nb` → `-tmp-a-x0ab`). It comes from the cwd itself; the stored cwd is
    unchanged (`printable`'s escapes: one line)."""
    [c] = chunk_turn(_workdir_turn("/tmp/my\nproject"))
    assert (c.workdir, c.cwd) == ("-tmp-my-project", "/tmp/my\\x0aproject")
    [c] = chunk_turn(_workdir_turn("/tmp/a\x1b[31mb\r"))
    assert c.workdir == "-tmp-a--31mb-"


@given(
    st.one_of(st.none(), st.text(max_size=30)),
    st.lists(st.text(max_size=12), min_size=1, max_size=5),
)
def test_a_workdir_facet_is_one_printable_token_whatever_the_cwd_and_path(
    cwd: str | None, parts: list[str]
) -> None:
    """No control character, whitespace or Unicode line separator reaches a facet, from the
    cwd or from the source path it falls back on (a `projects/<dir>` or parent folder)."""
    for source_path in ("/".join(parts), "/h/.claude/projects/" + "/".join(parts)):
        [c] = chunk_turn(_workdir_turn(cwd, source_path))
        assert c.workdir and c.workdir.isprintable(), (cwd, source_path, c.workdir)
        assert not any(ch.isspace() for ch in c.workdir), (cwd, source_path, c.workdir)
        assert c.workdir.encode("utf-8")  # no lone surrogate: it binds in SQLite
