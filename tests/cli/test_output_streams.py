"""The console script's standard streams when the caller's are unusual: stdout on a full disk,
a reader that closes the pipe early, a closed stdin or stderr (funes.stdio). Each runs
`python -m funes` in a subprocess with the descriptors set up as a shell would."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from support.claude import conversation, write_session
from support.cli import funes

pytestmark = pytest.mark.models

PAIRS = [
    ("user", "The nightly export keeps dying halfway, what is going on?"),
    ("assistant", "The worker gets OOM-killed: the export builds the whole CSV in memory."),
]
QUERY = "why did the nightly export die"


def _run(
    args: list[str],
    *,
    stdout: int | None = None,
    close: tuple[int, ...] = (),
) -> subprocess.CompletedProcess[bytes]:
    """`python -m funes *args`, stdin /dev/null; descriptors in `close` closed by a shell's
    `<&-`, `>&-` or `2>&-` before funes starts."""
    closing = " ".join(f"{fd}>&-" if fd else "<&-" for fd in close)
    return subprocess.run(
        ["sh", "-c", f'exec "$@" {closing}', "sh", sys.executable, "-m", "funes", *args],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE if stdout is None else stdout,
        stderr=subprocess.PIPE,
        timeout=300,
        env=os.environ.copy(),
    )


@pytest.fixture
def indexed(isolated_env: Path) -> Path:
    write_session(isolated_env, conversation(PAIRS))
    funes("index")
    return isolated_env


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full (Linux)")
def test_a_full_disk_under_stdout_is_one_line_of_error_not_a_traceback(indexed: Path) -> None:
    with open("/dev/full", "wb") as full:
        for args in (["--version"], ["status"], ["sessions"], ["recall", QUERY]):
            out = _run(args, stdout=full.fileno())
            err = out.stderr.decode()
            assert out.returncode == 1, (args, err)
            assert err.endswith("funes: cannot write the output: No space left on device\n"), err
            assert "Traceback" not in err and "Exception ignored" not in err, err


def test_a_reader_that_closed_the_pipe_ends_funes_quietly_with_0(indexed: Path) -> None:
    """`funes recall … | head -1`: the reader has what it wanted; no message, no error status."""
    for args in (["--version"], ["--help"], ["status"], ["recall", QUERY], ["recall", QUERY, "--json"]):  # fmt: skip
        read_end, write_end = os.pipe()
        os.close(read_end)  # every write funes makes fails with EPIPE
        try:
            out = _run(args, stdout=write_end)
        finally:
            os.close(write_end)
        assert out.returncode == 0, (args, out.stderr)
        assert out.stderr == b"", (args, out.stderr)


def test_a_closed_stdin_or_stderr_changes_nothing_but_where_messages_go(indexed: Path) -> None:
    expected = _run(["recall", QUERY])
    assert expected.returncode == 0 and b"OOM-killed" in expected.stdout
    for fd in (0, 2):
        out = _run(["recall", QUERY], close=(fd,))
        assert out.returncode == 0, (fd, out.stderr)
        assert out.stdout == expected.stdout, fd
    refused = _run(["recall", QUERY, "--memory", "no/such.db"], close=(2,))
    assert refused.returncode == 1 and refused.stdout == b""


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full (Linux)")
def test_a_stderr_that_cannot_be_written_loses_the_notes_not_the_results(indexed: Path) -> None:
    """`2>/dev/full`, or a closed pipe on stderr: progress and notes are dropped; the hits
    and the exit status are those of a normal run."""
    expected = _run(["recall", QUERY, "--project", "/nowhere", "--all"])
    assert expected.returncode == 0 and b"no session in this memory matches" in expected.stderr
    with open("/dev/full", "wb") as full:
        for args in (["recall", QUERY], ["recall", QUERY, "--project", "/nowhere", "--all"]):
            normal = _run(args)
            out = subprocess.run(
                [sys.executable, "-m", "funes", *args],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=full,
                timeout=300,
                env=os.environ.copy(),
            )
            assert out.returncode == 0, args
            assert out.stdout == normal.stdout, args


def test_a_closed_stdout_is_an_error_for_what_is_written_to_it(indexed: Path) -> None:
    """`funes recall … >&-`: as GNU tools do, the lost output is reported (exit 1); a verb
    that writes nothing on stdout is not affected."""
    out = _run(["recall", QUERY], close=(1,))
    assert out.returncode == 1
    assert out.stderr.decode().endswith("funes: cannot write the output: Bad file descriptor\n")
    assert b"Traceback" not in out.stderr
    index = _run(["index"], close=(1,))
    assert index.returncode == 0, index.stderr


INITIALIZE = (
    b'{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": '
    b'"2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}\n'
)


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full (Linux)")
def test_an_mcp_server_whose_client_is_gone_or_disk_full_ends_without_a_traceback() -> None:
    with open("/dev/full", "wb") as full:
        out = subprocess.run(
            [sys.executable, "-m", "funes", "mcp"],
            input=INITIALIZE,
            stdout=full,
            stderr=subprocess.PIPE,
            timeout=120,
            env=os.environ.copy(),
        )
    err = out.stderr.decode()
    assert out.returncode == 1, err
    assert "funes: cannot write the output: No space left on device" in err
    assert "Traceback" not in err, err
    read_end, write_end = os.pipe()
    os.close(read_end)  # the client went away before the answer
    try:
        gone = subprocess.run(
            [sys.executable, "-m", "funes", "mcp"],
            input=INITIALIZE,
            stdout=write_end,
            stderr=subprocess.PIPE,
            timeout=120,
            env=os.environ.copy(),
        )
    finally:
        os.close(write_end)
    assert gone.returncode == 0, gone.stderr
    assert b"Traceback" not in gone.stderr, gone.stderr
