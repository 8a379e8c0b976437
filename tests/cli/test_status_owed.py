"""`funes status` says where the memory is and what is owed, and its counts are what the next
`funes index` then does: chunks per tier, and chunks without vectors."""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from support.claude import append_turns, session_path, write_claude_session
from support.cli import Ran

from funes.chunks import chunk_turn
from funes.paths import Paths
from funes.store import Store
from funes.traces import Block, BlockType, Harness, Role, Turn

pytestmark = pytest.mark.models


def _indexed(out: Ran) -> int:
    m = re.search(r"indexed (\d+) new chunks", out.stderr)
    assert m, out.stderr
    return int(m.group(1))


def test_status_counts_what_the_next_index_writes_per_tier(
    isolated_env: Path, run: Callable[..., Ran]
) -> None:
    claude = isolated_env / ".claude"
    write_claude_session(claude)  # prose, a tool call and its output
    assert run("index", "--yes").returncode == 0
    status = json.loads(run("status", "--json").stdout)
    assert status["owed"] == {
        "complete": True,
        "chunks": {"text": 0, "tool_use": 0, "tool_result": 0},
        "session_files": {"text": 0, "tool_use": 0, "tool_result": 0},
    }
    assert status["path"] == str(Paths.resolve().memory_db)
    assert status["size_bytes"] > 0 and status["without_vectors"] == 0
    agent = run("status", "--format", "agent").stdout
    assert "owed: nothing to store (every session file is indexed)" in agent

    write_claude_session(claude)  # a second session, and a grown third one
    grown = session_path(claude, "/home/dev/grown", "grown-session")
    append_turns(grown, "grown-session", "/home/dev/grown", range(2))
    owed = json.loads(run("status", "--json").stdout)["owed"]
    assert (
        owed["complete"] and owed["chunks"]["tool_use"] == 1 and owed["chunks"]["tool_result"] == 1
    )
    total = sum(owed["chunks"].values())
    agent = run("status", "--format", "agent").stdout
    line = next(x for x in agent.splitlines() if x.startswith("owed: "))
    assert line.startswith(
        f"owed: {owed['chunks']['text']} text, 1 tool call, 1 tool output chunk from 2 session files"
    )
    assert _indexed(run("index", "--yes")) == total
    append_turns(grown, "grown-session", "/home/dev/grown", range(2, 5))  # 3 more turns, 6 chunks
    assert json.loads(run("status", "--json").stdout)["owed"]["chunks"]["text"] == 6
    assert _indexed(run("index", "--yes")) == 6
    assert sum(json.loads(run("status", "--json").stdout)["owed"]["chunks"].values()) == 0


def test_files_whose_chunks_a_copy_already_stored_are_not_indexed_and_owe_nothing_new(
    isolated_env: Path, run: Callable[..., Ran], tmp_path: Path
) -> None:
    """The agent's own transcripts, indexed first from a copied folder: status says they are
    not indexed yet and hold nothing new, never `every session file is indexed`; an index
    records them and then both lines agree that nothing is owed."""
    claude = isolated_env / ".claude"
    write_claude_session(claude)
    copy = tmp_path / "copy"
    shutil.copytree(claude / "projects", copy)
    assert _indexed(run("index", str(copy), "--yes")) > 0
    agent = run("status", "--format", "agent").stdout
    assert (
        "owed: nothing new to store (the 1 session file not indexed yet holds only chunks already "
        "stored or forgotten)" in agent
    )
    assert "attention: 1 agent session file not indexed yet (it holds nothing new)" in agent
    assert "every session file is indexed" not in agent
    assert _indexed(run("index", "--yes")) == 0
    agent = run("status", "--format", "agent").stdout
    assert "owed: nothing to store (every session file is indexed)" in agent
    assert "not indexed yet" not in agent


def test_status_counts_chunks_without_vectors_and_index_embeds_exactly_those(
    isolated_env: Path, run: Callable[..., Ran]
) -> None:
    write_claude_session(isolated_env / ".claude")
    assert run("index", "--yes").returncode == 0
    turn = Turn(
        Harness.CLAUDE_CODE, "orphan", "t0", 0, "2026-01-01T00:00:00.000Z", Role.USER,
        (Block.make(BlockType.TEXT, "one\\n" * 500 + "two"),), "/gone.jsonl", cwd="/x",
    )  # fmt: skip
    call = Turn(
        Harness.CLAUDE_CODE, "orphan", "t1", 1, "2026-01-01T00:00:01.000Z", Role.ASSISTANT,
        (Block.make(BlockType.TOOL_USE, '{"command": "ls"}', tool_name="Bash"),),
        "/gone.jsonl", cwd="/x",
    )  # fmt: skip
    prose = list(chunk_turn(turn))
    chunks = prose + list(chunk_turn(call))
    with Store.open(
        Paths.resolve().memory_db
    ) as store:  # as a memory without sqlite-vec wrote them
        assert store.add(chunks, None) == len(chunks) > 2
    status = json.loads(run("status", "--json").stdout)
    assert status["without_vectors"] == len(chunks)
    agent = run("status", "--format", "agent").stdout
    assert f"without vectors: {len(chunks)} chunks" in agent
    # every file is indexed, yet those chunks are owed vectors: the owed line must not read as
    # "nothing at all is owed" beside them
    assert "owed: nothing to store (every session file is indexed)" in agent
    # the attention line accounts for every chunk of `without vectors`
    assert (
        f"{len(prose)} chunks are not searchable by meaning yet (BM25 finds them): the next "
        "`funes index`, and the hook after each turn, embed them, prose first; 1 tool-call "
        "chunk waits for a vector too, embedded last"
    ) in agent
    assert "next: funes index" in agent  # what the attention line promises, offered as a step
    extra = write_claude_session(isolated_env / ".claude")  # a file not indexed yet too:
    agent = run("status", "--format", "agent").stdout  # the step is offered once
    assert "1 agent session file not indexed yet" in agent
    assert agent.count("next: funes index\n") == 1, agent
    extra.path.unlink()
    done = run("index", "--yes")
    assert f"embedded {len(chunks)} chunks that had no vector" in done.stderr
    assert json.loads(run("status", "--json").stdout)["without_vectors"] == 0


def test_a_first_index_interrupted_before_its_schema_leaves_a_readable_memory(
    isolated_env: Path, run: Callable[..., Ran]
) -> None:
    """Ctrl-C between creating memory.db and creating its tables leaves a SQLite file in WAL
    mode with no schema (user_version 0). Status, recall, sessions and get read it as an
    empty memory, status counts the whole history as owed, and the next index fills it."""
    import sqlite3

    write_claude_session(isolated_env / ".claude")
    memory = Paths.resolve().memory_db
    memory.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(memory)
    conn.execute("pragma journal_mode = wal")
    conn.close()
    status = run("status", "--json")
    assert status.returncode == 0 and "Traceback" not in status.stderr, status.stderr
    owed = json.loads(status.stdout)["owed"]["chunks"]
    assert sum(owed.values()) > 0
    for args in (("recall", "anything"), ("sessions",), ("get", "abc", "x")):
        ran = run(*args)
        assert "Traceback" not in ran.stderr and "no chunks yet" in ran.stderr, (args, ran.stderr)
    assert _indexed(run("index", "--yes")) == sum(owed.values())


def test_status_takes_the_memory_as_every_verb_does_or_as_its_argument(
    tmp_path: Path, run: Callable[..., Ran]
) -> None:
    """`--memory M` is how recall, get and sessions name a memory (and what their `→ get`
    lines print); status takes it too, beside its positional form."""
    other = tmp_path / "elsewhere.db"
    Store.open(other).close()  # a memory there (one that is not there is an error)
    by_flag = run("status", "--memory", str(other), "--json")
    by_argument = run("status", str(other), "--json")
    assert by_flag.returncode == 0, by_flag.stderr
    assert by_flag.stdout == by_argument.stdout
    assert json.loads(by_flag.stdout)["memory"] == str(other)
    both = run("status", str(other), "--memory", "local")
    assert both.returncode == 1 and "two memories named" in both.stderr
    # one memory written two ways is one memory: the same file by a second path, local by name
    # and by its file
    link = tmp_path / "link.db"
    link.symlink_to(other)
    same = run("status", str(other), "--memory", str(link), "--json")
    assert same.returncode == 0 and same.stdout == by_argument.stdout, same.stderr
    paths = Paths.resolve()
    paths.ensure()
    Store.open(paths.memory_db).close()
    named = run("status", "local", "--memory", str(paths.memory_db), "--json")
    assert named.returncode == 0, named.stderr
    assert json.loads(named.stdout)["memory"] == "local"
