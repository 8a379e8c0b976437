"""This host's publishing to each shared memory: what is owed, what failed, what last landed.

    <data>/publish/<remote key>.json    one state per remote (PublishState, JSON, 0600)
    <data>/publish/<remote key>.lock    guards read-modify-write of the state
    <data>/publish/<remote key>.push    held (non-blocking) by the process pushing to it

A session boundary of an agent bound to a shared memory *requests* a push (`request`:
`requested` + 1); a push that lands *serves* every request made before it started
(`served` = the `requested` it read first), so boundaries that arrive during a push are served
by the next one and none is lost. Failures count `attempts` and set `next_try_at` (backoff);
the last allowed failure, or one no retry can fix, *parks* the state with the reason and the
command that fixes it; the next request un-parks it (the next boundary retries). No network
and no memory access here: funes.commands.publish runs the pushes.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, fields
from pathlib import Path

from funes.paths import PRIVATE_FILE, Paths, ensure_private_dir

FORMAT_VERSION = 1


@dataclass(slots=True)
class PublishState:
    """This host's publishing to one remote (times are epoch seconds)."""

    remote: str  # the remote's label (hf://datasets/o/r, file:///dir)
    requested: int = 0  # session-boundary requests so far (a generation counter)
    served: int = 0  # requests covered by the last push that landed
    requested_at: float | None = None  # the latest request
    attempts: int = 0  # failed attempts since the last push that landed
    next_try_at: float = 0.0  # no attempt before this (backoff)
    last_error: str | None = None  # the latest failure, one line, never chunk text
    parked: str | None = None  # why retrying stopped (None: not parked)
    fix: str | None = None  # the command that fixes a parked push
    parked_at: float | None = None
    last_ok_at: float | None = None  # the last push that landed (or found nothing to send)
    last_ok_commit: str | None = None
    last_ok_pushed: int = 0  # chunks it sent
    last_ok_held_back: int = 0  # chunks the secrets gate kept local in it

    @property
    def wanted(self) -> bool:
        """A request is waiting for a push."""
        return self.requested > self.served

    def due(self, now: float) -> bool:
        """Waiting, not parked, and past its backoff."""
        return self.wanted and self.parked is None and now >= self.next_try_at

    @classmethod
    def from_json(cls, raw: object, remote: str) -> PublishState:
        known = {f.name for f in fields(cls)}
        values = {k: v for k, v in raw.items() if k in known} if isinstance(raw, dict) else {}
        values["remote"] = remote
        try:
            return cls(**values)
        except TypeError:
            return cls(remote)


class PublishQueue:
    """The states under `<data>/publish/` (see the module docstring)."""

    def __init__(self, paths: Paths) -> None:
        self.root = paths.data / "publish"

    def _path(self, key: str) -> Path:
        return self.root / f"{key}.json"

    def load(self, key: str, remote: str) -> PublishState:
        """The state of one remote (a fresh one when there is none or it cannot be read)."""
        try:
            raw = json.loads(self._path(key).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return PublishState(remote)
        return PublishState.from_json(raw, remote)

    def all(self) -> dict[str, PublishState]:
        """Every remote's state, by key."""
        out: dict[str, PublishState] = {}
        try:
            paths = sorted(self.root.glob("*.json"))
        except OSError:
            return out
        for path in paths:
            try:
                raw = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                continue
            remote = raw.get("remote") if isinstance(raw, dict) else None
            if isinstance(remote, str):
                out[path.stem] = PublishState.from_json(raw, remote)
        return out

    def update(self, key: str, remote: str, change: Callable[[PublishState], None]) -> PublishState:
        """Apply `change` to the remote's state under its lock and write it back atomically."""
        ensure_private_dir(self.root)
        from filelock import FileLock  # writers only: readers never load it

        with FileLock(str(self.root / f"{key}.lock"), mode=PRIVATE_FILE):
            state = self.load(key, remote)
            change(state)
            state.remote = remote
            doc = {"v": FORMAT_VERSION, **asdict(state)}
            target = self._path(key)
            tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, PRIVATE_FILE)
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(json.dumps(doc, indent=2) + "\n")
            os.replace(tmp, target)
            return state

    def request(self, key: str, remote: str, now: float) -> PublishState:
        """A session boundary asks for a push: count it, and un-park a parked state."""

        def change(state: PublishState) -> None:
            state.requested += 1
            state.requested_at = now
            if state.parked is not None:
                state.parked = state.fix = state.parked_at = None
                state.attempts, state.next_try_at = 0, 0.0

        return self.update(key, remote, change)

    @contextmanager
    def pushing(
        self,
        key: str,
        *,
        wait_s: float = 0.0,
        on_wait: Callable[[float], None] | None = None,
    ) -> Iterator[bool]:
        """Hold the remote's push lock for the block; yields False when another process holds
        it (that process serves the requests made meanwhile: it re-reads the state after each
        push). With `wait_s` (seconds), a held lock is waited for that long first, after
        `on_wait(wait_s)` is told."""
        ensure_private_dir(self.root)
        from filelock import FileLock, Timeout  # writers only: readers never load it

        lock = FileLock(str(self.root / f"{key}.push"), timeout=0, mode=PRIVATE_FILE)
        try:
            lock.acquire()
        except Timeout:
            if wait_s <= 0:
                yield False
                return
            if on_wait is not None:
                on_wait(wait_s)
            try:
                lock.acquire(timeout=wait_s)
            except Timeout:
                yield False
                return
        try:
            yield True
        finally:
            lock.release()
