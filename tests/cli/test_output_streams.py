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


def _run(args: list[str], *, stdin: int | None = None, stdout: int | None = None,
         stderr: int | None = None, close: tuple[int, ...] = ()) -> subprocess.CompletedProcess[bytes]:  # fmt: skip
    """`python -m funes *args`; descriptors in `close` are closed in the child, as `<&-`,
    `>&-` or `2>&-` would."""

    def closing() -> None:
        for fd in close:
            os.close(fd)

    return subprocess.run(
        [sys.executable, "-m", "funes", *args],
        stdin=subprocess.DEVNULL if stdin is None else stdin,
        stdout=subprocess.PIPE if stdout is None else stdout,
        stderr=subprocess.PIPE if stderr is None else stderr,
        preexec_fn=closing,  # noqa: PLW1509 - the test's own child, no threads started in it
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
