"""The console script's standard streams: none missing, and stdout's write failures known.

`guard()` runs first thing in the console script (funes.__main__):
* A standard stream the caller closed (`funes recall x 2>&-`, `<&-`) is opened on /dev/null
  again, at its own descriptor. Python leaves `sys.stderr` (or stdin, stdout) None then, and the
  first file funes opened would take that descriptor: a later print could land in it.
* stdout is rewrapped, same encoding, errors and buffering, over a file object that remembers
  the last error a write to descriptor 1 raised (`output_failure`). The CLI's error boundary
  (funes.cli.main) asks it whether an OSError is the output's own — a full disk under
  `> file`, `/dev/full`, a reader that closed the pipe (`| head -1`) — or the command's, which
  keeps its own message or traceback. Without the guard (funes.cli.main called in a test,
  under pytest's capture) `output_failure` is always None.
"""

from __future__ import annotations

import io
import os
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from typing_extensions import Buffer

_STDOUT = 1
_failure: OSError | None = None


class _WatchedStdout(io.FileIO):
    """Descriptor 1, not closed with the object; a failed write is remembered, then raised."""

    def write(self, data: Buffer, /) -> int:
        global _failure
        try:
            return super().write(data)
        except OSError as exc:
            _failure = exc
            raise


def guard() -> None:
    """Reopen closed standard descriptors on /dev/null and watch stdout's writes. Once per
    process, before anything writes to stdout or opens a file."""
    for fd, mode in ((0, "r"), (1, "w"), (2, "w")):
        if _is_open(fd):
            continue
        null = os.open(os.devnull, os.O_RDWR)  # the lowest free number: `fd` itself
        if null != fd:  # cannot happen (0-2 are checked in order); never leave it misplaced
            os.dup2(null, fd)
            os.close(null)
        name = ("stdin", "stdout", "stderr")[fd]
        if getattr(sys, name) is None:
            stream = open(fd, mode, closefd=False, encoding="utf-8", errors="backslashreplace")  # noqa: SIM115
            setattr(sys, name, stream)
    old = sys.stdout
    if old is None or isinstance(old, io.TextIOWrapper) and _watched(old):
        return
    try:
        raw = _WatchedStdout(_STDOUT, "w", closefd=False)
    except OSError:
        return
    old.flush()
    sys.stdout = io.TextIOWrapper(
        io.BufferedWriter(raw),
        encoding=old.encoding,
        errors=old.errors,
        line_buffering=bool(old.line_buffering),
        write_through=getattr(old, "write_through", False),
    )


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
    null = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(null, _STDOUT)
    finally:
        os.close(null)


def _is_open(fd: int) -> bool:
    try:
        os.fstat(fd)
    except OSError:
        return False
    return True


def _watched(stream: io.TextIOWrapper) -> bool:
    return isinstance(getattr(stream.buffer, "raw", None), _WatchedStdout)
