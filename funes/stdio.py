"""The console script's standard streams: none missing, stdout's write failures known, and
stderr's never fatal.

`guard()` runs first thing in the console script (funes.__main__):
* A standard descriptor the caller closed (`funes recall x 2>&-`, `<&-`, `>&-`) is opened on
  /dev/null again, at its own number. Python leaves `sys.stderr` (or stdin, stdout) None then,
  and the first file funes opened would take that number: a later print could land in it.
  A closed stdout stays an error for what is written to it, as in GNU tools: the first write
  fails with EBADF ("Bad file descriptor"), reported by the CLI's boundary.
* stdout is rewrapped, same encoding, errors and buffering, over a file object that remembers
  the last error a write to descriptor 1 raised (`output_failure`). The CLI's error boundary
  (funes.cli.main) asks it whether an OSError is the output's own — a full disk under
  `> file`, `/dev/full`, a reader that closed the pipe (`| head -1`) — or the command's, which
  keeps its own message or traceback. A writer that owns descriptor 1 itself (the MCP
  server's wire) reports its failures with `note_output_failure`.
* stderr is rewrapped the same way over a file object that drops what it cannot write
  (`2>/dev/full`, a closed pipe): progress and notes are lost, never the command's results
  or its exit status.

Without the guard (funes.cli.main called in a test, under pytest's capture) `output_failure`
is None unless a writer noted one.
"""

from __future__ import annotations

import errno
import io
import os
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from typing_extensions import Buffer

_STDOUT, _STDERR = 1, 2
_failure: OSError | None = None


class _WatchedStdout(io.FileIO):
    """Descriptor 1, not closed with the object; a failed write is remembered, then raised.
    `closed_by_caller`: descriptor 1 was closed when funes started (now /dev/null)."""

    closed_by_caller = False

    def write(self, data: Buffer, /) -> int:
        try:
            if self.closed_by_caller:
                raise OSError(errno.EBADF, os.strerror(errno.EBADF))
            return super().write(data)
        except OSError as exc:
            note_output_failure(exc)
            raise


class _QuietStderr(io.FileIO):
    """Descriptor 2, not closed with the object; what cannot be written is dropped."""

    def write(self, data: Buffer, /) -> int:
        try:
            return super().write(data)
        except OSError:
            return memoryview(data).nbytes


def guard() -> None:
    """Reopen closed standard descriptors on /dev/null and rewrap stdout and stderr (above).
    Once per process, before anything writes to them or opens a file."""
    closed = [fd for fd in (0, 1, 2) if not _is_open(fd)]
    for fd in closed:
        null = os.open(os.devnull, os.O_RDWR)  # the lowest free number: `fd` itself
        if null != fd:  # cannot happen (0-2 are reopened in order); never leave it misplaced
            os.dup2(null, fd)
            os.close(null)
        name = ("stdin", "stdout", "stderr")[fd]
        if getattr(sys, name) is None:
            mode = "r" if fd == 0 else "w"
            stream = open(fd, mode, closefd=False, encoding="utf-8", errors="backslashreplace")  # noqa: SIM115
            setattr(sys, name, stream)
    stdout = _rewrap("stdout", _WatchedStdout)
    if isinstance(stdout, _WatchedStdout):
        stdout.closed_by_caller = _STDOUT in closed
    _rewrap("stderr", _QuietStderr)


def note_output_failure(exc: OSError) -> None:
    """Record that writing the command's output (descriptor 1) failed with `exc`."""
    global _failure
    _failure = exc


def output_failure(exc: BaseException | None = None) -> OSError | None:
    """The error writing stdout last raised (when `exc` is given: only if `exc` is that error,
    or one with the same errno while it stands). None when stdout has not failed."""
    if _failure is None or exc is None:
        return _failure
    if exc is _failure or (isinstance(exc, OSError) and exc.errno == _failure.errno):
        return _failure
    return None


def reader_gone() -> bool:
    """Whether stdout failed because its reader closed the pipe (EPIPE)."""
    return isinstance(_failure, BrokenPipeError)


def silence_stdout() -> None:
    """Point descriptor 1 at /dev/null, so the output still buffered is dropped at exit
    instead of failing again (and Python printing "Exception ignored" about it)."""
    raw = getattr(getattr(sys.stdout, "buffer", None), "raw", None)
    if isinstance(raw, _WatchedStdout):
        raw.closed_by_caller = False  # what is left goes to /dev/null quietly
    null = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(null, _STDOUT)
    finally:
        os.close(null)


def _rewrap(name: str, raw_type: type[io.FileIO]) -> io.FileIO | None:
    """Replace sys.<name> by a TextIOWrapper like it over `raw_type` on the same descriptor;
    the new raw file, or None when there is nothing to rewrap."""
    old = getattr(sys, name)
    if old is None or not isinstance(old, io.TextIOWrapper):
        return None
    current = getattr(old.buffer, "raw", None)
    if isinstance(current, raw_type):
        return current
    fd = _STDOUT if name == "stdout" else _STDERR
    try:
        raw = raw_type(fd, "w", closefd=False)
    except OSError:
        return None
    old.flush()
    setattr(
        sys,
        name,
        io.TextIOWrapper(
            io.BufferedWriter(raw),
            encoding=old.encoding,
            errors=old.errors,
            line_buffering=bool(old.line_buffering),
            write_through=old.write_through,
        ),
    )
    return raw


def _is_open(fd: int) -> bool:
    try:
        os.fstat(fd)
    except OSError:
        return False
    return True
