"""One call run in a second thread beside the caller's own work (recall's BM25 leg beside its
vector leg), that has always ended, or never begun, once the caller leaves its `with` block.

concurrent.futures' executors do not promise that under an interrupt: Ctrl-C, or SIGTERM
(funes.cli.main.end_on_sigterm raises both in the main thread as KeyboardInterrupt), landing
in `submit` while it starts the worker thread (`Thread.start` waits for the new thread to run)
leaves that thread running the call but unknown to the executor, so leaving the executor's
`with` block does not wait for it. Recall then unwound and closed the memory's connections
while the worker was still reading through one: the sqlite module read the closed
connection's NULL handle, a segfault (exit 139) just after `funes: terminated`.

Here the call's state, which the worker and the caller change under one lock, decides instead
of the thread's bookkeeping: leaving the block cancels a call the worker has not begun (the
worker then does nothing, whenever it runs) and waits for one it has, wherever the interrupt
lands — before the thread exists, inside `Thread.start`, while the call runs.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from enum import Enum
from types import TracebackType
from typing import Generic, TypeVar

T = TypeVar("T")


class _State(Enum):
    QUEUED = "queued"  # not begun: the caller may still cancel it
    RUNNING = "running"
    DONE = "done"  # returned or raised: its result is kept
    CANCELLED = "cancelled"  # the caller left before the worker began it: never runs


class BesideCall(Generic[T]):
    """`fn()` in a thread named `name`, started on entering the `with` block; `result()`
    waits for its value (re-raises its exception). Leaving the block, by any exception
    too, returns only once `fn` has returned or can no longer begin."""

    def __init__(self, fn: Callable[[], T], *, name: str) -> None:
        self._fn = fn
        self._name = name
        self._lock = threading.Lock()
        self._state = _State.QUEUED
        self._ended = threading.Event()  # set once the state is DONE
        self._value: T | None = None
        self._error: BaseException | None = None

    def __enter__(self) -> BesideCall[T]:
        try:
            threading.Thread(target=self._run, name=self._name).start()
        except BaseException:  # an interrupt inside start(): the thread may run all the same
            self._settle()
            raise
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._settle()

    def result(self) -> T:
        """The call's value once it has returned; raises what it raised."""
        self._ended.wait()
        if self._error is not None:
            raise self._error
        return self._value  # type: ignore[return-value]  # DONE without an error: set

    def _run(self) -> None:
        with self._lock:
            if self._state is not _State.QUEUED:
                return  # cancelled: the caller has gone on without it
            self._state = _State.RUNNING
        try:
            self._value = self._fn()
        except BaseException as exc:  # noqa: BLE001 - handed to the caller by result()
            self._error = exc
        finally:
            with self._lock:
                self._state = _State.DONE
            self._ended.set()

    def _settle(self) -> None:
        """Cancel the call if the worker has not begun it, else wait for it to end."""
        with self._lock:
            if self._state is _State.QUEUED:
                self._state = _State.CANCELLED
                return
        self._ended.wait()
