"""A cold recall's query model, loaded in a child process while the parent starts up.

A cold `funes recall` did everything in turn on one core: import click and its own modules,
numpy and onnxruntime, read the tokenizer, build the query's session, open the memory, run
BM25, embed the query. Now the console script, first thing when its verb is `recall`, forks
(`warm_up`): the child imports numpy and onnxruntime, loads the model's graph and builds the
query's session on the second core while the parent imports the CLI, parses the command line
and tokenizes the query (loading a tokenizer takes about as long as building the session, so
each process does one). The parent then sends the tokens (`QueryPrefetch.ask`), opens the
memory, and reads back the query's vector — `dim` float32s, little-endian — through a pipe; it
never loads the model, nor imports numpy for it: the store takes the vector's bytes as they
come (funes.store.meta.query_blob). numpy's import is the largest single cost of that start
(about 50 ms), and only the model needs it; it used to be imported before the fork, on both
processes' paths. Measured on the 2-core bench machine, dev-set memory, time to the first
byte (bench/README.md: cold start).

The vector is the one `embed_query` computes in process, bit for bit (same code, same session
options). Anything short of it — the model not on this machine, another model asked for, a
failure in the child, a killed child — reads as no vector, and the caller embeds the query
itself: the child can make recall faster, never different, and never raise.

Only where forking without exec is safe: Linux, a process with a single thread and
onnxruntime not yet imported (its thread pools do not survive a fork). The child's standard
streams go to /dev/null, so it writes nothing the user reads and holds no pipe of theirs
open; it leaves with os._exit (no atexit handlers, no buffered output of the parent). A child
nobody asks is stopped at the parent's exit, or leaves by itself when the parent is gone (its
query pipe reads end-of-file). A parent that dies without its exit handlers (SIGKILL, a
SIGTERM before the CLI has set its handler) takes the child with it: the kernel sends the
child SIGKILL then (prctl PR_SET_PDEATHSIG); it would otherwise finish loading the model, a
second or more of a core, before finding the pipe closed.

Protocol: parent → child one JSON object `{"model": <spec name>, "query": <text>, "ids":
[...], "type_ids": [...]}` (the token lists when the parent tokenized the query), then
end-of-file; child → parent the vector's bytes and end-of-file, or end-of-file alone.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import signal
import sys
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from funes.inference.models import QueryModel
    from funes.inference.tokens import QueryTokens

# How long the parent waits for the vector before it stops the child and embeds the query
# itself: the child's whole path takes well under a second on the bench machine; this bounds
# a child that is stuck (stopped, swapping, a filesystem hung).
ANSWER_WAIT_S = 10.0

# What the child loads: (the model's spec name, its embedder with the query session built),
# or None when it cannot be loaded quickly and offline (a download or a graph build is left
# to the parent, which reports them).
Loader = Callable[[], "tuple[str, QueryModel] | None"]


def can_fork() -> bool:
    """Whether this process may fork the child (see the module docstring)."""
    return (
        sys.platform == "linux"
        and hasattr(os, "fork")
        and threading.active_count() == 1
        and "onnxruntime" not in sys.modules
    )


class QueryPrefetch:
    """The child: loading a model, then embedding the one query it is sent. `ask` once, then
    `result()`; `cancel()` stops and reaps it at any time (a no-op once done)."""

    def __init__(self, pid: int, to_child: int, from_child: int) -> None:
        self.pid = pid  # the process may be gone (`_ended`)
        self.query: str | None = None
        self._ended = False  # stopped or reaped, or its reaping left to exit
        self._to_child: int | None = to_child
        self._from_child: int | None = from_child

    @classmethod
    def start(cls, load: Loader) -> QueryPrefetch | None:
        """Fork a child that calls `load()`, then waits for its query. None where forking
        is not safe (`can_fork`) or failed (no pipe, no process)."""
        if not can_fork():
            return None
        fds: list[int] = []
        try:
            for _ in range(2):  # above 0-2 even when one of them is closed: the child's
                fds.extend(_above_stdio(fd) for fd in os.pipe())  # dup2 would take it
            query_r, query_w, vector_r, vector_w = fds
            # a Ctrl-C (or SIGTERM: the console script's early handler raises it too) right at
            # the fork must not reach the child before its handlers are the default ones: the
            # interrupt would run on in the child as in the parent (threading's after-fork
            # hook would print a traceback, or the child return into the CLI)
            mask = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
            parent = os.getpid()
            try:
                pid = os.fork()
                if pid == 0:  # the child: never returns
                    _die_with(parent)
                    _quiet_child()
                    signal.pthread_sigmask(signal.SIG_SETMASK, mask)
                    os.close(query_w)
                    os.close(vector_r)
                    _child(load, query_r, vector_w)
            finally:
                signal.pthread_sigmask(signal.SIG_SETMASK, mask)
        except OSError:
            for fd in fds:
                os.close(fd)
            return None
        os.close(query_r)
        os.close(vector_w)
        return cls(pid, query_w, vector_r)

    def ask(self, model: str, query: str, tokens: QueryTokens | None = None) -> None:
        """Send the query the caller will embed with `model` (a spec name), once; with its
        `tokens` (funes.inference.tokens.query_tokens) when the caller has them, so the child
        runs the model on them without loading the tokenizer."""
        import json

        if self._to_child is None:
            return
        self.query = query
        fd, self._to_child = self._to_child, None
        asked: dict[str, object] = {"model": model, "query": query}
        if tokens is not None:
            asked.update(ids=tokens.ids, type_ids=tokens.type_ids)
        try:
            _write_all(fd, json.dumps(asked).encode())
        except OSError:
            pass  # the child is gone: result() reads no vector
        finally:
            os.close(fd)

    def result(self, dim: int) -> bytes | None:
        """The query's vector as the child sent it, `dim` float32s little-endian (4 × dim
        bytes); None when the child sent none. Blocks until the child has answered or ended;
        it is reaped at exit if it is still going away."""
        if self._from_child is None:
            return None
        import select

        chunks = []
        deadline = time.monotonic() + ANSWER_WAIT_S
        try:
            while (left := deadline - time.monotonic()) > 0:
                if not select.select([self._from_child], [], [], left)[0]:
                    continue  # the loop ends at the deadline
                if not (block := os.read(self._from_child, 1 << 16)):
                    break  # answered (or ended)
                chunks.append(block)
            else:
                chunks = []  # stuck: stopped below, and the caller embeds the query itself
        except OSError:
            chunks = []
        except BaseException:  # Ctrl-C while waiting: nobody will read the child's answer
            self._end(kill=True)
            raise
        self._end(kill=not chunks)
        data = b"".join(chunks)
        return data if len(data) == 4 * dim else None

    def cancel(self, *, wait: bool = False) -> None:
        """Stop the child if it is still running; reap it now with `wait`, else at exit at
        the latest (a process with numpy and onnxruntime mapped takes tens of milliseconds
        to go away, which nobody should wait on before the output)."""
        self._end(kill=True, wait=wait)

    def _end(self, *, kill: bool, wait: bool = False) -> None:
        for fd in (self._to_child, self._from_child):
            if fd is not None:
                os.close(fd)
        self._to_child = self._from_child = None
        if self._ended:
            return
        self._ended, pid = True, self.pid
        if kill:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        with contextlib.suppress(ChildProcessError):
            if wait:
                os.waitpid(pid, 0)
            elif os.waitpid(pid, os.WNOHANG) == (0, 0):  # still going away
                atexit.register(_reap, pid)


_warm: QueryPrefetch | None = None


def warm_up(load: Loader) -> None:
    """Fork the child for this process's one recall (the console script, first thing);
    `take_warm` hands it to the recall. Stopped at exit if nobody took it."""
    global _warm
    if _warm is not None or not can_fork():
        return
    _warm = QueryPrefetch.start(load)
    if _warm is not None:
        atexit.register(_warm.cancel, wait=True)  # at exit nothing is left to register


def take_warm() -> QueryPrefetch | None:
    """The child `warm_up` started, once; None when there is none (or it was taken)."""
    global _warm
    warm, _warm = _warm, None
    return warm


def _above_stdio(fd: int) -> int:
    """`fd`, or a duplicate of it numbered 3 or more when it took a free 0-2 slot."""
    if fd > 2:
        return fd
    import fcntl

    try:
        return fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 3)
    finally:
        os.close(fd)


def _die_with(parent: int) -> None:
    """In the child, first: be sent SIGKILL when the parent ends (Linux prctl
    PR_SET_PDEATHSIG; ctypes is imported by numpy in the child anyway), and leave at once if
    it ended before this call. Without prctl, nothing: the query pipe's end-of-file remains."""
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    except (OSError, AttributeError):  # no libc prctl: not Linux after all
        return
    if os.getppid() != parent:
        os._exit(1)


_PR_SET_PDEATHSIG = 1  # <linux/prctl.h>


def _quiet_child() -> None:
    """In the child, first: standard streams to /dev/null, Ctrl-C and SIGTERM end it without
    Python (the parent's handlers are the CLI's)."""
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    if signal.getsignal(signal.SIGTERM) != signal.SIG_IGN:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)


def _reap(pid: int) -> None:
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, 0)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _child(load: Loader, query_fd: int, vector_fd: int) -> None:
    code = 1
    try:
        import json

        # numpy's OpenBLAS starts a spinning thread per core at import; the child never
        # multiplies matrices with it (onnxruntime has its own threads), and on two cores
        # those threads would take the parent's
        os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
        loaded = load()
        chunks = []
        while block := os.read(query_fd, 1 << 16):
            chunks.append(block)
        asked = json.loads(b"".join(chunks)) if chunks else None
        if loaded is not None and isinstance(asked, dict) and asked.get("model") == loaded[0]:
            import numpy as np

            from funes.inference.tokens import QueryTokens

            embedder = loaded[1]
            if isinstance(asked.get("ids"), list) and isinstance(asked.get("type_ids"), list):
                tokens = QueryTokens(
                    [int(i) for i in asked["ids"]], [int(t) for t in asked["type_ids"]]
                )
                vector = embedder.embed_query_tokens(tokens)
            else:
                vector = embedder.embed_query(str(asked["query"]))
            _write_all(vector_fd, np.asarray(vector, dtype="<f4").tobytes())
            # end-of-file for the parent now, not once this process is torn down
            os.close(vector_fd)
            code = 0
    except BaseException:  # noqa: BLE001 - whatever happens, the parent embeds it itself
        pass
    finally:
        os._exit(code)
