"""The hook script as agents run it: `python -I -S hooks/enqueue.py …` in a subprocess."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from filelock import FileLock

REPO = Path(__file__).resolve().parents[2]
HOOK = REPO / "hooks" / "enqueue.py"
PAYLOADS = REPO / "fixtures" / "hooks"


def run_hook(
    spool: Path,
    *args: str,
    stdin: bytes | None = b"",
    python: str | None = None,
    env: dict[str, str] | None = None,
    timeout: float = 20,
) -> subprocess.CompletedProcess[bytes]:
    cmd = [sys.executable, "-I", "-S", str(HOOK), "--spool", str(spool), *args]
    if python is not None:
        cmd += ["--python", python]
    return subprocess.run(cmd, input=stdin, capture_output=True, timeout=timeout, env=env)


def entries(spool: Path) -> list[dict[str, object]]:
    return [json.loads(p.read_text()) for p in sorted((spool / "new").glob("*.json"))]


def fake_python(tmp_path: Path) -> tuple[str, Path]:
    """A stand-in interpreter that records each worker start instead of draining."""
    record = tmp_path / "worker-starts.txt"
    script = tmp_path / "fakepy"
    script.write_text(f'#!/bin/sh\necho "$@" >> {record}\n')
    script.chmod(0o755)
    return str(script), record


@pytest.mark.parametrize("script", [HOOK, HOOK.with_name("funes_hook.py")])
def test_the_hook_imports_only_the_standard_library(script: Path) -> None:
    tree = ast.parse(script.read_text())
    modules = {
        alias.name.split(".")[0]
        for node in ast.walk(tree)
        if isinstance(node, ast.Import)
        for alias in node.names
    } | {
        node.module.split(".")[0]
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.module
    }
    local = {"funes_hook"}  # the launcher imports the hook beside it
    stdlib = set(sys.stdlib_module_names) | local
    assert modules <= stdlib, modules - stdlib
    assert "funes" not in modules


def test_a_claude_stop_payload_becomes_one_pointer_entry_with_no_transcript_text(
    tmp_path: Path,
) -> None:
    spool = tmp_path / "spool"
    payload = (PAYLOADS / "claude_code-Stop.json").read_bytes()
    done = run_hook(spool, "--agent", "claude", "--event", "Stop", "--no-worker", stdin=payload)
    assert done.returncode == 0 and done.stdout == b"" and done.stderr == b""
    [entry] = entries(spool)
    source = json.loads(payload)
    assert entry["v"] == 1 and entry["agent"] == "claude_code" and entry["event"] == "Stop"
    assert entry["session_id"] == source["session_id"]
    assert entry["transcript_path"] == source["transcript_path"]
    assert entry["cwd"] == source["cwd"]
    raw = next((spool / "new").glob("*.json")).read_text()
    assert source["last_assistant_message"] not in raw and "last_assistant_message" not in raw
    assert not (spool / "logs" / "hook.log").exists()


def test_hermes_conversation_history_never_reaches_the_spool(tmp_path: Path) -> None:
    spool = tmp_path / "spool"
    payload = json.loads((PAYLOADS / "hermes-post_llm_call.json").read_text())
    payload["extra"]["conversation_history"] = [{"role": "user", "content": "x" * 2_000_000}]
    env = dict(os.environ, HERMES_HOME=str(tmp_path / "profile-home"))
    done = run_hook(
        spool, "--agent", "hermes", "--no-worker", stdin=json.dumps(payload).encode(), env=env
    )
    assert done.returncode == 0 and done.stdout == b""
    [entry] = entries(spool)
    raw = next((spool / "new").glob("*.json")).read_text()
    assert len(raw) < 2000
    assert "FAKE_REPLY" not in raw and "CALL_TOOL" not in raw
    assert entry["session_id"] == payload["session_id"] and entry["event"] == "post_llm_call"
    assert entry["payload"]["extra"]["turn_id"] == payload["extra"]["turn_id"]
    assert entry["env"] == {"HERMES_HOME": str(tmp_path / "profile-home")}


def test_codex_notify_reads_its_payload_from_the_last_argument(tmp_path: Path) -> None:
    spool = tmp_path / "spool"
    argument = (PAYLOADS / "codex-notify-argv.json").read_text().strip()
    done = run_hook(
        spool,
        "--agent",
        "codex",
        "--event",
        "agent-turn-complete",
        "--no-worker",
        argument,
        stdin=None,
    )
    assert done.returncode == 0 and done.stdout == b""
    [entry] = entries(spool)
    notify = json.loads(argument)
    assert entry["session_id"] == notify["thread-id"]
    assert entry["payload"]["turn-id"] == notify["turn-id"]
    assert "input-messages" not in entry["payload"] and "FAKE_REPLY" not in json.dumps(entry)


def test_a_stdin_that_never_closes_costs_at_most_the_read_timeout(tmp_path: Path) -> None:
    spool = tmp_path / "spool"
    cmd = [
        sys.executable,
        "-I",
        "-S",
        str(HOOK),
        "--spool",
        str(spool),
        "--agent",
        "claude",
        "--no-worker",
        "--stdin-timeout",
        "0.5",
    ]
    started = time.monotonic()
    proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert proc.stdin is not None
    proc.stdin.write(
        b'{"session_id": "s-open", "transcript_path": "/tmp/t.jsonl"'
    )  # never finished, never closed
    proc.stdin.flush()
    try:
        rc = proc.wait(timeout=15)
    finally:
        proc.stdin.close()
    assert rc == 0 and time.monotonic() - started < 10
    [entry] = entries(spool)
    assert (
        entry["session_id"] == "s-open" and entry["transcript_path"] == "/tmp/t.jsonl"
    )  # salvaged
    assert "not valid JSON" in (spool / "logs" / "hook.log").read_text()


@pytest.mark.parametrize("stdin", [b"", b"not json at all", b"[1, 2, 3]", b"\xff\xfe garbage"])
def test_empty_or_malformed_payloads_still_leave_an_entry_for_a_sweep(
    tmp_path: Path, stdin: bytes
) -> None:
    spool = tmp_path / "spool"
    done = run_hook(spool, "--agent", "pi", "--event", "agent_end", "--no-worker", stdin=stdin)
    assert done.returncode == 0 and done.stdout == b""
    [entry] = entries(spool)
    assert entry["agent"] == "pi" and entry["event"] == "agent_end" and entry["session_id"] is None


def test_the_hook_exits_zero_silently_when_the_spool_cannot_be_written(tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("a file where the spool should be")
    done = run_hook(blocker / "spool", "--agent", "claude", stdin=b'{"session_id": "x"}')
    assert done.returncode == 0 and done.stdout == b"" and done.stderr == b""


def test_bad_arguments_are_logged_not_raised(tmp_path: Path) -> None:
    spool = tmp_path / "spool"
    done = run_hook(spool, "--agent", "no-such-agent", stdin=b"{}")
    assert done.returncode == 0 and done.stdout == b""
    assert "bad arguments" in (spool / "logs" / "hook.log").read_text()
    assert not (spool / "new").exists()


def test_entries_and_logs_are_private(tmp_path: Path) -> None:
    spool = tmp_path / "spool"
    run_hook(spool, "--agent", "claude", "--no-worker", stdin=b"{}")
    run_hook(spool, "--agent", "nobody", stdin=b"{}")
    for sub in ("new", "tmp", "seen", "logs"):
        assert (spool / sub).stat().st_mode & 0o777 == 0o700
    for path in [
        *(spool / "new").iterdir(),
        spool / "logs" / "hook.log",
        spool / "seen" / "claude_code",
    ]:
        assert path.stat().st_mode & 0o777 == 0o600


def test_the_hook_starts_one_worker_when_none_is_running(tmp_path: Path) -> None:
    spool = tmp_path / "spool"
    python, record = fake_python(tmp_path)
    assert run_hook(spool, "--agent", "claude", python=python, stdin=b"{}").returncode == 0
    deadline = time.monotonic() + 10
    while (
        not (record.exists() and record.read_text().endswith("\n")) and time.monotonic() < deadline
    ):
        time.sleep(0.05)
    assert record.read_text().split() == ["-m", "funes", "spool", "drain", "--spool", str(spool)]
    assert (spool / "worker.starting").exists()  # until the worker takes the lock


def test_no_worker_is_started_while_one_holds_the_lock_or_is_starting(tmp_path: Path) -> None:
    spool = tmp_path / "spool"
    spool.mkdir(mode=0o700)
    python, record = fake_python(tmp_path)
    with FileLock(str(spool / "worker.lock"), timeout=0):
        run_hook(spool, "--agent", "claude", python=python, stdin=b"{}")
    (spool / "worker.starting").write_text("123")
    run_hook(spool, "--agent", "claude", python=python, stdin=b"{}")
    time.sleep(0.3)
    assert not record.exists()
    assert len(entries(spool)) == 2


def test_a_stale_starting_marker_does_not_block_a_new_worker(tmp_path: Path) -> None:
    spool = tmp_path / "spool"
    spool.mkdir(mode=0o700)
    python, record = fake_python(tmp_path)
    marker = spool / "worker.starting"
    marker.write_text("999999")
    old = time.time() - 120
    os.utime(marker, (old, old))
    run_hook(spool, "--agent", "claude", python=python, stdin=b"{}")
    deadline = time.monotonic() + 10
    while not record.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert record.exists()


def test_a_missing_worker_interpreter_is_logged_and_the_hook_still_exits_zero(
    tmp_path: Path,
) -> None:
    spool = tmp_path / "spool"
    done = run_hook(
        spool, "--agent", "claude", python=str(tmp_path / "no-such-python"), stdin=b"{}"
    )
    assert done.returncode == 0 and done.stdout == b""
    assert "cannot start the worker" in (spool / "logs" / "hook.log").read_text()
    assert not (spool / "worker.starting").exists()  # the next hook may try again
    assert len(entries(spool)) == 1


def test_the_hook_records_when_each_agent_last_fired(tmp_path: Path) -> None:
    spool = tmp_path / "spool"
    before = time.time() - 1
    run_hook(spool, "--agent", "codex", "--no-worker", stdin=b"{}")
    assert (spool / "seen" / "codex").stat().st_mtime >= before
    assert not (spool / "seen" / "claude_code").exists()


def test_the_launcher_runs_the_hook_from_its_cached_bytecode(tmp_path: Path) -> None:
    """`enqueue.py` only imports funes_hook.py beside it: the first call caches its bytecode,
    later calls load it instead of compiling the hook again (issue 15: hook start-up)."""
    import shutil

    folder = tmp_path / "hooks"
    folder.mkdir()
    for name in ("enqueue.py", "funes_hook.py"):
        shutil.copy(HOOK.with_name(name), folder / name)
    spool = tmp_path / "spool"
    for _ in range(2):
        subprocess.run(
            [sys.executable, "-I", "-S", str(folder / "enqueue.py"), "--agent", "claude",
             "--spool", str(spool), "--no-worker", "--event", "Stop", '{"session_id": "s1"}'],
            check=True, capture_output=True, timeout=30,
        )  # fmt: skip
    assert len(list((spool / "new").glob("*.json"))) == 2
    assert [p.name.split(".")[0] for p in (folder / "__pycache__").glob("*.pyc")] == ["funes_hook"]
