"""Ctrl-C at any moment: `funes` exits 130 and prints no traceback, whatever it was doing
(importing, indexing, embedding, recalling, serving MCP)."""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from support.claude import write_claude_session
from support.cli import Ran

pytestmark = pytest.mark.models


def _interrupt(
    args: list[str], env: dict[str, str], after_s: float, err_path: Path
) -> tuple[int | None, str]:
    """Start `python -m funes ARGS`, send SIGINT after `after_s` (as Ctrl-C does); (exit
    status, stderr), exit status None when it had already finished.

    Spawned with SIGINT at its default (a shell running pytest in the background leaves it
    ignored; a terminal does not) by posix_spawn, not fork: no fork handler of a library
    loaded in this process runs. stdin stays open (the MCP server waits on it)."""
    read_end, write_end = os.pipe()
    file_actions = [
        (os.POSIX_SPAWN_DUP2, read_end, 0),
        (os.POSIX_SPAWN_OPEN, 1, os.devnull, os.O_WRONLY, 0),
        (os.POSIX_SPAWN_OPEN, 2, str(err_path), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600),
    ]
    pid = os.posix_spawn(
        sys.executable,
        [sys.executable, "-m", "funes", *args],
        env,
        file_actions=file_actions,
        setsigdef=(signal.SIGINT,),
    )
    os.close(read_end)
    try:
        time.sleep(after_s)
        done, status = os.waitpid(pid, os.WNOHANG)
        delivered = done == 0  # still running: interrupt it
        if delivered:
            os.kill(pid, signal.SIGINT)
        deadline = time.monotonic() + 120
        while done == 0:
            if time.monotonic() > deadline:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                pytest.fail(f"funes {args} did not stop after Ctrl-C: {err_path.read_text()}")
            time.sleep(0.05)
            done, status = os.waitpid(pid, os.WNOHANG)
    finally:
        os.close(write_end)
    err = err_path.read_text(errors="replace")
    return (os.waitstatus_to_exitcode(status) if delivered else None), err


def _interpreter_start_s(env: dict[str, str]) -> float:
    """How long this interpreter takes to start (its `site`: before it, an interrupt is the
    interpreter's own "Fatal Python error", which no program can handle)."""
    slowest = 0.0
    for _ in range(3):
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], env=env, check=True)
        slowest = max(slowest, time.perf_counter() - t0)
    return slowest


def test_ctrl_c_exits_130_without_a_traceback_at_any_moment(
    isolated_env: Path, funes_env: dict[str, str]
) -> None:
    claude = isolated_env / ".claude"
    for n in range(120):  # several seconds of indexing on a fast machine
        write_claude_session(claude, session_id=f"00000000-0000-4000-8000-{n:012d}")
    start_s = 2 * _interpreter_start_s(funes_env)  # then funes' own code runs: import, work
    interrupted = 0
    for i, after_s in enumerate((0.0, 0.1, 0.3, 0.8, 1.5, 3.0, 6.0)):
        # each run indexes into a fresh memory, so every one has the whole history to do (an
        # interrupted run keeps what it stored: later runs would otherwise find little left)
        env = dict(funes_env, FUNES_HOME=str(isolated_env.parent / f"funes-{i}"))
        code, err = _interrupt(["index", "--yes"], env, start_s + after_s, isolated_env / "err.txt")
        assert "Traceback" not in err and "KeyboardInterrupt" not in err, (after_s, err)
        if code == 0:  # the index had finished and was exiting as the interrupt came
            assert "indexed 840 new chunks" in err, (after_s, err)
        elif code is not None:
            interrupted += 1
            # -SIGINT: stopped before Python installed its handler (a shell reports 130 then too)
            assert code in (130, -signal.SIGINT), (after_s, code, err)
    assert interrupted >= 5  # most deliveries hit a running index
    for args in (["recall", "database locked"], ["mcp"], ["status"]):
        code, err = _interrupt(args, funes_env, start_s + 1.0, isolated_env / "err.txt")
        assert "Traceback" not in err and "KeyboardInterrupt" not in err, (args, err)
        # a status that has written its report may be exiting as the signal lands: after
        # its last Python code, the interpreter no longer acts on it (exit 0, the work done)
        done = (0,) if args == ["status"] else ()
        assert code in (130, -signal.SIGINT, None, *done), (args, code, err)


def test_an_import_that_turns_ctrl_c_into_an_import_error_still_exits_130(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """onnxruntime's extension module, interrupted while it initialises, raises
    `ImportError: initialization failed` from the KeyboardInterrupt: still a Ctrl-C."""
    import importlib

    from funes.cli import main as entry

    cli_main = importlib.import_module("funes.cli.main")  # the module (the face names the function)

    def interrupted_import(**_: object) -> None:
        try:
            raise KeyboardInterrupt
        except KeyboardInterrupt as exc:
            raise ImportError("initialization failed") from exc

    monkeypatch.setattr(cli_main.cli, "main", interrupted_import)
    with pytest.raises(SystemExit) as done:
        entry(["recall", "anything"])
    assert done.value.code == 130
    assert "Traceback" not in capsys.readouterr().err


def test_ctrl_c_stops_an_mcp_server_whose_sdk_is_serving(funes_env: dict[str, str]) -> None:
    """Once the SDK's event loop serves (a tool call answered), Ctrl-C exits 130 promptly: the
    loop's idle worker thread, which nothing stops after the interrupt, must not hold the exit."""
    import json

    # SIGINT back at its default before exec (a shell running pytest in the background leaves
    # it ignored, and Python then installs no handler), without forking this process.
    trampoline = (
        "import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); "
        "os.execv(sys.executable, [sys.executable, '-m', 'funes', 'mcp'])"
    )
    server = subprocess.Popen(
        [sys.executable, "-c", trampoline],
        env=funes_env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert server.stdin is not None and server.stdout is not None
    requests = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "test", "version": "0"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
         "params": {"name": "status", "arguments": {}}},
    ]  # fmt: skip
    for request in requests:
        server.stdin.write((json.dumps(request) + "\n").encode())
    server.stdin.flush()
    answered = [json.loads(server.stdout.readline()) for _ in range(2)]
    assert [reply.get("id") for reply in answered] == [1, 2]
    server.send_signal(signal.SIGINT)
    try:
        code = server.wait(timeout=30)
    except subprocess.TimeoutExpired:
        server.kill()
        pytest.fail("funes mcp did not stop after Ctrl-C")
    err = server.stderr.read().decode(errors="replace") if server.stderr else ""
    server.stdin.close()
    assert code == 130, err
    assert "Traceback" not in err and "KeyboardInterrupt" not in err, err


def test_ctrl_c_while_the_standard_streams_are_set_up_exits_130(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The console script's first step (funes.stdio.guard) is inside its Ctrl-C handling."""
    import funes.__main__ as console
    from funes import stdio

    def interrupted() -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(stdio, "guard", interrupted)
    with pytest.raises(SystemExit) as done:
        console.main()
    assert done.value.code == 130


def test_sigterm_stops_a_command_as_ctrl_c_does_with_143(funes_env: dict[str, str]) -> None:
    """SIGTERM is raised in the main thread as Ctrl-C is (funes.cli.main.end_on_sigterm), so a
    command's finally blocks and context managers run (a push's temporary copy of the memory
    is removed), and it exits 143 without a traceback; the MCP server, waiting on its client,
    is the long-running case."""
    server = subprocess.Popen(
        [sys.executable, "-m", "funes", "mcp"],
        env=funes_env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert server.stdin is not None and server.stdout is not None
    server.stdin.write(
        b'{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": '
        b'"2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}}\n'
    )
    server.stdin.flush()
    assert b'"id":1' in server.stdout.readline().replace(b" ", b"")
    server.send_signal(signal.SIGTERM)
    try:
        code = server.wait(timeout=30)
    except subprocess.TimeoutExpired:
        server.kill()
        pytest.fail("funes mcp did not stop after SIGTERM")
    err = server.stderr.read().decode(errors="replace") if server.stderr else ""
    server.stdin.close()
    assert code == 143, err
    assert "funes: terminated" in err
    assert "Traceback" not in err and "KeyboardInterrupt" not in err, err


@contextlib.contextmanager
def _ctrl_c_at_the_second_file(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Ctrl-C as the index loop starts its second session file (the first one committed, its
    vectors owed), raised where a SIGINT would land. This process's signal handlers are put
    back after (funes.cli.main ignores a second Ctrl-C once interrupted)."""
    from funes.ingest import indexing

    real = indexing.index_unit
    calls: list[object] = []

    def interrupted(*args: Any, **kwargs: Any) -> tuple[int, bool]:
        calls.append(args)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return real(*args, **kwargs)

    handlers = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
    with monkeypatch.context() as patched:
        patched.setattr(indexing, "index_unit", interrupted)
        try:
            yield
        finally:
            for sig, handler in handlers.items():
                signal.signal(sig, handler)
    assert len(calls) == 2  # the interrupt came


def _two_sessions(home: Path) -> None:
    for n in range(2):
        write_claude_session(home / ".claude", session_id=f"00000000-0000-4000-8000-{n:012d}")


def test_an_interrupted_index_says_that_the_same_command_resumes_and_it_does(
    isolated_env: Path, run: Callable[..., Ran], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`funes: aborted` alone left the user to wonder whether the work was lost. An index
    keeps what it committed (a session file is recorded once its chunks are, their vectors
    stay owed), so the line says the same command resumes: the next run reads only the file
    left and embeds what is owed."""
    _two_sessions(isolated_env)
    with _ctrl_c_at_the_second_file(monkeypatch):
        stopped = run("index", "--yes")
    assert stopped.returncode == 130, stopped.stderr
    assert stopped.stderr.endswith(
        "funes: aborted; the same `funes index` again resumes where it stopped\n"
    ), stopped.stderr
    again = run("index", "--yes")
    assert again.returncode == 0, again.stderr
    assert "from 1 of 2 session files (1 unchanged" in again.stderr, again.stderr
    assert json.loads(run("status", "--json").stdout)["without_vectors"] == 0


def test_an_add_interrupted_while_indexing_says_nothing_was_installed_and_add_resumes(
    isolated_env: Path, run: Callable[..., Ran], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`funes add` builds the first index before it installs anything: interrupted there, it
    says so, and the same add resumes the index and installs."""
    _two_sessions(isolated_env)
    settings = isolated_env / ".claude" / "settings.json"
    with _ctrl_c_at_the_second_file(monkeypatch):
        stopped = run("add", "claude", "--yes")
    assert stopped.returncode == 130, stopped.stderr
    assert stopped.stderr.endswith(
        "funes: aborted; nothing was installed yet: the same `funes add` again resumes its "
        "indexing where it stopped\n"
    ), stopped.stderr
    assert not settings.exists()
    again = run("add", "claude", "--yes")
    assert again.returncode == 0, again.stderr
    resumed = re.search(r"indexed (\d+) chunks from 2 sessions into local", again.stderr)
    assert resumed, again.stderr
    status = json.loads(run("status", "--json").stdout)
    assert status["sessions"] == 2
    assert 0 < int(resumed.group(1)) < status["chunks"]  # the first file's prose was kept
    assert "funes" in settings.read_text()
