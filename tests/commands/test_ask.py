"""`funes ask`: the prompt and argv it builds, and that it fails before spawning anything.

The spawn-side tests put a stand-in `claude`/`codex` program on PATH that records how it was
run (argv, cwd, stdin) and answers like an agent; the real CLIs are driven in
tests/e2e_agents/test_ask_agents.py.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from support.claude import CWD, SESSION_ID, index_into_local_memory, write_claude_session

from funes.commands.ask import (
    MAX_PROMPT_BYTES,
    AskAgent,
    agent_argv,
    build_prompt,
    codex_mcp_servers,
)
from funes.commands.recall import RecallOutcome
from funes.errors import UsageError
from funes.retrieval import Hit, RecallResult
from funes.store import StoredChunk


def chunk(
    n: int, text: str, *, role: str = "assistant", block_type: str = "text", seq: int | None = None
) -> StoredChunk:
    return StoredChunk(
        rowid=n,
        id=f"chunk-{n}",
        text=text,
        session_id=f"sess-{n:04d}-aaaa-bbbb-cccc-dddddddddddd",
        turn_id=f"turn-{n:04d}-eeee-ffff-0000-111111111111",
        parent_id=None,
        seq=seq if seq is not None else n,
        ts=f"2026-11-{n + 1:02d}T10:00:00.000Z",
        role=role,
        block_type=block_type,
        block_idx=0,
        split_idx=0,
        tool_name="Bash" if block_type == "tool_result" else None,
        harness="claude_code",
        workdir="ledger",
        cwd="/home/dev/ledger",
        git_branch="main",
        host="box",
        source_path="/x.jsonl",
        parent_session_id=None,
        scaffold=False,
        redaction_version=1,
    )


def outcome(*hits: Hit, memory: str = "local") -> RecallOutcome:
    return RecallOutcome(RecallResult(list(hits)), memory)


# ---------------------------------------------------------------- prompt


def test_the_prompt_carries_the_question_every_passage_with_its_ids_and_the_citation_rule() -> None:
    first = Hit(
        chunk(1, "We chose WAL mode because readers blocked the importer."),
        0.91,
        (chunk(2, "ok " * 200, role="user", seq=2),),
    )
    second = Hit(
        chunk(
            3,
            "Postgres was rejected: the ledger must stay one local file.",
            block_type="tool_result",
        ),
        0.42,
    )
    prompt, passages = build_prompt(
        "  Why WAL?  ", outcome(first, second, memory="hf://datasets/acme/mem")
    )

    assert passages == 2
    assert prompt.count("Question: Why WAL?\n") == 2
    assert (
        "cite where it comes from right after it, as (session <session_id>, turn <turn_id>)"
        in prompt
    )
    assert "not verified facts" in prompt and "fall short" in prompt
    assert "You have no tools" in prompt
    assert "from memory hf://datasets/acme/mem" in prompt
    one = prompt.index(f"[passage 1] session {first.chunk.session_id} turn {first.chunk.turn_id}")
    two = prompt.index(f"[passage 2] session {second.chunk.session_id} turn {second.chunk.turn_id}")
    assert one < prompt.index("We chose WAL mode") < two < prompt.index("Postgres was rejected")
    assert (
        "(2026-11-02T10:00:00.000Z, claude_code in ledger, assistant text, score 0.910)" in prompt
    )
    assert "assistant tool_result Bash, score 0.420" in prompt
    context = next(
        line for line in prompt.splitlines() if line.startswith("> ~ context, user text seq2: ")
    )
    assert len(context) < 360  # neighbors are previews, not whole chunks, quoted like passages
    assert "> We chose WAL mode" in prompt  # passage text is quoted data
    assert not prompt.startswith(("<", "-"))  # neither a wrapper the agents strip nor a flag


def test_the_lowest_ranked_passages_are_left_out_when_the_prompt_would_be_too_long() -> None:
    big = "x" * 30_000
    hits = [Hit(chunk(i, f"passage {i} {big}"), 1.0 - i / 10) for i in range(1, 7)]
    prompt, passages = build_prompt("q", outcome(*hits))

    assert len(prompt.encode()) <= MAX_PROMPT_BYTES
    assert passages == 3
    assert "[passage 3]" in prompt and "[passage 4]" not in prompt
    assert hits[0].chunk.turn_id in prompt and hits[5].chunk.turn_id not in prompt


def test_a_question_too_long_for_any_passage_is_refused() -> None:
    with pytest.raises(UsageError, match="too long"):
        build_prompt("why " * 40_000, outcome(Hit(chunk(1, "a"), 1.0)))


# ---------------------------------------------------------------- argv


def test_claude_runs_print_mode_without_tools_mcp_hooks_or_a_saved_session() -> None:
    argv = agent_argv(AskAgent.CLAUDE, "/opt/bin/claude", "PROMPT")

    assert argv[:3] == ["/opt/bin/claude", "-p", "PROMPT"]
    assert argv.count("PROMPT") == 1
    assert "--no-session-persistence" in argv
    assert "--strict-mcp-config" in argv
    assert json.loads(argv[argv.index("--mcp-config") + 1]) == {"mcpServers": {}}
    assert argv[argv.index("--tools") + 1] == ""
    assert json.loads(argv[argv.index("--settings") + 1]) == {"disableAllHooks": True}
    assert argv[argv.index("--output-format") + 1] == "text"


def test_codex_runs_an_ephemeral_read_only_exec_with_every_configured_mcp_server_disabled() -> None:
    argv = agent_argv(
        AskAgent.CODEX, "/opt/bin/codex", "-PROMPT", codex_mcp_servers=["funes", "ping"]
    )

    assert argv[:2] == ["/opt/bin/codex", "exec"]
    assert argv[-2:] == ["--", "-PROMPT"]  # after `--`, even a prompt that looks like a flag
    for flag in ("--skip-git-repo-check", "--ephemeral"):
        assert flag in argv
    assert argv[argv.index("--sandbox") + 1] == "read-only"
    disabled = [argv[i + 1] for i, a in enumerate(argv) if a == "--disable"]
    assert disabled == ["hooks", "shell_tool"]
    overrides = [argv[i + 1] for i, a in enumerate(argv) if a == "-c"]
    assert overrides == [
        'web_search="disabled"',
        "notify=[]",
        "mcp_servers.funes.enabled=false",
        "mcp_servers.ping.enabled=false",
    ]


def test_codex_mcp_server_names_come_from_its_config_and_a_bad_config_yields_none(
    tmp_path: Path,
) -> None:
    config = tmp_path / "config.toml"
    config.write_text(
        'model = "m"\n[mcp_servers.funes]\ncommand = "python3"\n[mcp_servers.ping]\ncommand = "x"\n'
        '[mcp_servers."dotted.name"]\ncommand = "y"\n'
    )
    assert codex_mcp_servers(config) == ["funes", "ping"]
    assert codex_mcp_servers(tmp_path / "absent.toml") == []
    config.write_text("this is [not toml")
    assert codex_mcp_servers(config) == []


# ---------------------------------------------------------------- spawning (stand-in agents)


def stand_in(bin_dir: Path, name: str, *, exit_code: int = 0) -> Path:
    """An executable `name` that logs argv/cwd/stdin to $SPY_LOG and answers (or fails)."""
    bin_dir.mkdir(parents=True, exist_ok=True)
    program = bin_dir / name
    program.write_text(
        f"#!{sys.executable}\n"
        "import json, os, sys\n"
        "stdin = sys.stdin.read()\n"
        "with open(os.environ['SPY_LOG'], 'a') as f:\n"
        "    f.write(json.dumps({'argv': sys.argv, 'cwd': os.getcwd(), 'stdin': stdin}) + '\\n')\n"
        f"if {exit_code}:\n"
        "    print('stand-in: not logged in', file=sys.stderr)\n"
        f"    sys.exit({exit_code})\n"
        "print('The importer was switched to WAL (session 5e0d1c2a, turn 00000004).')\n"
    )
    program.chmod(program.stat().st_mode | stat.S_IXUSR)
    return program


@pytest.fixture
def spy(tmp_path: Path, funes_env: dict[str, str]) -> dict[str, object]:
    bin_dir = tmp_path / "agent-bin"
    bin_dir.mkdir()
    log = tmp_path / "spy.jsonl"
    env = {**funes_env, "PATH": str(bin_dir), "SPY_LOG": str(log)}
    return {"bin": bin_dir, "log": log, "env": env}


def ask(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "funes", "ask", *args],
        capture_output=True,
        text=True,
        env=env,
        stdin=subprocess.DEVNULL,
        timeout=300,
    )


def test_ask_prints_the_agents_answer_after_running_it_once_in_an_empty_directory(
    spy, tmp_path
) -> None:
    written = write_claude_session(tmp_path / "transcripts", session_id=SESSION_ID, cwd=CWD)
    assert index_into_local_memory(written.path) > 0
    stand_in(spy["bin"], "claude")

    done = ask(spy["env"], "claude", "why", "did", "we", "switch", "to", "WAL?")

    assert done.returncode == 0, done.stderr
    assert done.stdout == "The importer was switched to WAL (session 5e0d1c2a, turn 00000004).\n"
    calls = [json.loads(line) for line in spy["log"].read_text().splitlines()]
    assert len(calls) == 1
    argv, cwd = calls[0]["argv"], calls[0]["cwd"]
    assert argv[1] == "-p" and "--no-session-persistence" in argv
    prompt = argv[2]
    assert "Question: why did we switch to WAL?" in prompt
    assert f"session {SESSION_ID} turn {written.turn_ids[4]}" in prompt
    assert "switched the database to WAL journal mode" in prompt
    assert calls[0]["stdin"] == ""  # stdin is /dev/null: -p would otherwise wait on it
    assert Path(cwd).name.startswith("funes-ask-") and not Path(cwd).exists()  # removed afterwards


def test_a_failing_agent_fails_funes_with_its_exit_status_quoted(spy, tmp_path) -> None:
    written = write_claude_session(tmp_path / "transcripts", session_id=SESSION_ID, cwd=CWD)
    assert index_into_local_memory(written.path) > 0
    stand_in(spy["bin"], "codex", exit_code=3)

    done = ask(spy["env"], "codex", "why WAL?")

    assert done.returncode == 1
    assert done.stdout == ""
    assert "funes: codex exited with status 3:\nstand-in: not logged in" in done.stderr
    assert "hint: run `codex` by hand" in done.stderr
    assert len(spy["log"].read_text().splitlines()) == 1


def test_a_missing_agent_cli_fails_before_reading_the_memory_or_spawning(spy, tmp_path) -> None:
    stand_in(spy["bin"], "codex")  # another agent is installed; claude is not

    done = ask(spy["env"], "claude", "why WAL?")

    assert done.returncode == 1
    assert "funes: `claude` was not found on PATH" in done.stderr
    assert "hint: install Claude Code" in done.stderr
    assert not spy["log"].exists()


@pytest.mark.parametrize("agent", ["claude", "codex"])
def test_an_absent_memory_fails_before_spawning(spy, agent) -> None:
    stand_in(spy["bin"], agent)

    done = ask(spy["env"], agent, "why WAL?")

    assert done.returncode == 1
    assert "funes: no memory yet" in done.stderr and "hint: run `funes index`" in done.stderr
    assert not spy["log"].exists()


def test_an_unreadable_memory_path_fails_before_spawning(spy, tmp_path) -> None:
    stand_in(spy["bin"], "claude")
    not_sqlite = tmp_path / "memory.db"
    not_sqlite.write_text("this is not a database")

    done = ask(spy["env"], "claude", "why WAL?", "--memory", str(not_sqlite))

    assert done.returncode == 1 and done.stderr.startswith("funes: ")
    assert not spy["log"].exists()


def test_a_question_nothing_matches_fails_before_spawning(spy, tmp_path) -> None:
    # A lexical-only memory (no vectors: the state a memory is in when sqlite-vec is missing):
    # BM25 finds no passage for words the sessions never contain.
    index_lexical_only(
        write_claude_session(tmp_path / "transcripts", session_id=SESSION_ID, cwd=CWD).path
    )
    stand_in(spy["bin"], "claude")

    done = ask(spy["env"], "claude", "quantum chromodynamics lattice")

    assert done.returncode == 1
    assert "funes: memory local holds nothing that matches the question" in done.stderr
    assert not spy["log"].exists()
    assert ask(spy["env"], "claude", "importer WAL").returncode == 0  # the same memory does answer
    assert len(spy["log"].read_text().splitlines()) == 1


def test_a_question_nothing_supports_prints_the_miss_line_and_spawns_nothing(spy, tmp_path) -> None:
    written = write_claude_session(tmp_path / "transcripts", session_id=SESSION_ID, cwd=CWD)
    assert index_into_local_memory(written.path) > 0
    stand_in(spy["bin"], "claude")

    done = ask(spy["env"], "claude", "zzzzqqq nonexistentterm")

    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("no supporting passage (best support ")
    assert len(done.stdout.splitlines()) == 1
    assert not spy["log"].exists()


def index_lexical_only(path: Path) -> None:
    from funes.ingest import IndexJob, index
    from funes.memory import Runtime
    from funes.redact import default_scanner
    from funes.store import Store
    from funes.traces import sources_for_path

    rt = Runtime.resolve()
    rt.paths.ensure()
    store = Store.open(rt.paths.memory_db, lock_path=rt.paths.lock_file)
    try:
        with store.writing():
            report = index(
                sources_for_path(path, None),
                IndexJob(store=store, embedder=None, scanner=default_scanner()),
            )
        assert report.chunks_written > 0
    finally:
        store.close()
    assert os.path.exists(rt.paths.memory_db)
