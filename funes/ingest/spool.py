"""The spool: hook entries waiting to be indexed, and how a worker drains them.

A spool entry is a small pointer written by `hooks/enqueue.py` (format documented there and
in AGENTS.md): never transcript text. Folders under the spool root (all 0700):

    tmp/      entries being written (a hook writes here, then os.replace's into new/)
    new/      entries waiting; names `<time_ns>-<pid>-<rand>.<agent>.json` sort by arrival
    claimed/  entries a worker is indexing right now (or was, when it was killed)
    failed/   entries that failed `max_attempts` times, each with a `<name>.err` beside it
    seen/     one empty file per agent; its mtime is when that agent's hook last fired
    logs/     hook.log, worker.log (0600)

The life of an entry: new/ → claimed/ (rename: exactly one worker wins) → deleted once the
chunks of the unit it names are committed. A failure sends it back to new/ with `attempts`
incremented, or to failed/ after `max_attempts`. A worker holds `worker.lock` (an OS file lock)
for as long as it drains, so anything in claimed/ when a worker starts was left by a killed
one and is taken back. Chunk ids are stable and the store skips ids it has, so indexing an
entry twice never duplicates a chunk.
"""

from __future__ import annotations

import json
import logging
import os
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path

from filelock import FileLock, Timeout

from funes.errors import EntryError
from funes.paths import PRIVATE_FILE, ensure_private_dir
from funes.traces import Harness

log = logging.getLogger(__name__)

ENTRY_VERSION = 1
SUBDIRS = ("tmp", "new", "claimed", "failed", "seen", "logs")


@dataclass(frozen=True, slots=True)
class SpoolEntry:
    """One hook notification: which agent, which event, and where the turn lives."""

    agent: str  # harness value as written by the hook (`claude_code`, `codex`, …)
    event: str | None = None
    received_at: float = 0.0  # epoch seconds
    session_id: str | None = None
    transcript_path: str | None = None
    cwd: str | None = None
    sweep: bool = False  # also sweep this agent (catch-up hooks such as SessionStart)
    memory: str | None = None  # a memory path bound at install time; None → the local memory
    payload: Mapping[str, object] = field(default_factory=dict)  # pointer fields for unit_for_hook
    env: Mapping[str, str] = field(default_factory=dict)  # the agent's home overrides
    attempts: int = 0

    @classmethod
    def parse(cls, data: bytes) -> SpoolEntry:
        """Parse an entry file's bytes. Raises EntryError for anything else."""
        try:
            raw = json.loads(data)
        except ValueError as exc:
            raise EntryError(f"not JSON: {exc}") from None
        if not isinstance(raw, dict):
            raise EntryError("not a JSON object")
        version = raw.get("v")
        if not isinstance(version, int) or version < 1:
            raise EntryError(f"no spool format version (v={version!r})")
        if version > ENTRY_VERSION:
            raise EntryError(f"spool format v{version} is newer than this funes (v{ENTRY_VERSION})")
        agent = raw.get("agent")
        if not isinstance(agent, str) or not agent:
            raise EntryError("no agent")

        def text(key: str) -> str | None:
            value = raw.get(key)
            return value if isinstance(value, str) and value else None

        payload = raw.get("payload")
        env = raw.get("env")
        attempts = raw.get("attempts")
        received = raw.get("received_at")
        return cls(
            agent=agent,
            event=text("event"),
            received_at=float(received) if isinstance(received, (int, float)) else 0.0,
            session_id=text("session_id"),
            transcript_path=text("transcript_path"),
            cwd=text("cwd"),
            sweep=raw.get("sweep") is True,
            memory=text("memory"),
            payload=payload if isinstance(payload, dict) else {},
            env={k: v for k, v in env.items() if isinstance(v, str)}
            if isinstance(env, dict)
            else {},
            attempts=attempts if isinstance(attempts, int) and attempts >= 0 else 0,
        )

    def to_json(self) -> bytes:
        return json.dumps(
            {
                "v": ENTRY_VERSION,
                "agent": self.agent,
                "event": self.event,
                "received_at": self.received_at,
                "session_id": self.session_id,
                "transcript_path": self.transcript_path,
                "cwd": self.cwd,
                "sweep": self.sweep,
                "memory": self.memory,
                "payload": dict(self.payload),
                "env": dict(self.env),
                "attempts": self.attempts,
            },
            separators=(",", ":"),
        ).encode()

    @property
    def harness(self) -> Harness | None:
        try:
            return Harness.parse(self.agent)
        except ValueError:
            return None


def agent_of(name: str) -> str | None:
    """The agent a spool file name carries (`….<agent>.json`), or None."""
    parts = name.split(".")
    return parts[-2] if len(parts) >= 3 and parts[-1] == "json" else None


@dataclass(slots=True)
class AgentBacklog:
    """Spool counts for one agent."""

    waiting: int = 0  # new/ + claimed/
    failed: int = 0
    last_fired: float | None = None  # epoch seconds of the last hook call, None if never


class Spool:
    """The spool folders under `root` (see the module docstring)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.tmp = root / "tmp"
        self.new = root / "new"
        self.claimed = root / "claimed"
        self.failed = root / "failed"
        self.seen = root / "seen"
        self.logs = root / "logs"
        self.worker_lock = root / "worker.lock"
        self.starting_marker = root / "worker.starting"

    def ensure(self) -> Spool:
        ensure_private_dir(self.root)
        for sub in SUBDIRS:
            ensure_private_dir(self.root / sub)
        return self

    # -- writing (the hook does this in hooks/enqueue.py; this is the same format) --------

    def enqueue(self, entry: SpoolEntry) -> Path:
        """Write `entry` atomically into new/ (used by `funes watch` and tests)."""
        self.ensure()
        now = time.time()
        name = f"{int(now * 1e9):020d}-{os.getpid()}-{os.urandom(4).hex()}.{entry.agent}.json"
        tmp = self.tmp / name
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, PRIVATE_FILE)
        try:
            os.write(fd, entry.to_json())
        finally:
            os.close(fd)
        os.replace(tmp, self.new / name)
        return self.new / name

    # -- the entry life cycle ------------------------------------------------------------

    @staticmethod
    def _names(folder: Path) -> list[str]:
        try:
            return sorted(n for n in os.listdir(folder) if n.endswith(".json"))
        except FileNotFoundError:
            return []

    def pending(self) -> list[str]:
        """Names waiting in new/, oldest first."""
        return self._names(self.new)

    def claim(self, name: str) -> SpoolEntry | EntryError | None:
        """Move new/name → claimed/name and read it.

        Returns the entry, an EntryError for an unreadable file (still claimed: park it), or
        None when another worker claimed it first.
        """
        self.ensure()  # the hook creates only tmp/ and new/
        try:
            os.replace(self.new / name, self.claimed / name)
        except FileNotFoundError:
            return None
        try:
            return SpoolEntry.parse((self.claimed / name).read_bytes())
        except EntryError as exc:
            return exc
        except OSError as exc:
            return EntryError(f"unreadable: {exc}")

    def ack(self, name: str) -> None:
        """The entry's chunks are committed: delete it."""
        with suppress(FileNotFoundError):
            (self.claimed / name).unlink()

    def release(self, name: str) -> bool:
        """Give a claimed entry back untouched (no attempt counted). False if it is not claimed."""
        try:
            os.replace(self.claimed / name, self.new / name)
        except FileNotFoundError:
            return False
        return True

    def is_claimed(self, name: str) -> bool:
        return (self.claimed / name).exists()

    def retry_or_park(self, name: str, entry: SpoolEntry, error: str, *, max_attempts: int) -> bool:
        """Count a failed attempt: back to new/, or to failed/ once `max_attempts` is reached.

        Returns True when the entry was parked in failed/.
        """
        attempts = entry.attempts + 1
        if attempts >= max_attempts:
            self.park(name, error)
            return True
        tmp = self.tmp / name
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, PRIVATE_FILE)
        try:
            os.write(fd, _with_attempts(entry, attempts).to_json())
        finally:
            os.close(fd)
        # new copy first, then drop the claimed one: a kill between the two leaves a
        # duplicate entry (harmless: indexing is idempotent), never a lost one.
        os.replace(tmp, self.new / name)
        self.ack(name)
        return False

    def park(self, name: str, error: str) -> None:
        """Move a claimed entry to failed/ with the error in `<name>.err` beside it."""
        self.ensure()
        err = self.failed / f"{name}.err"
        fd = os.open(err, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, PRIVATE_FILE)
        try:
            os.write(fd, (error.rstrip() + "\n").encode("utf-8", "replace"))
        finally:
            os.close(fd)
        with suppress(FileNotFoundError):
            os.replace(self.claimed / name, self.failed / name)

    def reclaim(self) -> int:
        """Move everything in claimed/ back to new/ (call only while holding the worker lock)."""
        names = self._names(self.claimed)
        for name in names:
            self.release(name)
        return len(names)

    def clean_tmp(self, *, older_than_s: float) -> int:
        """Delete tmp/ files older than `older_than_s` (a hook killed between write and rename)."""
        removed = 0
        cutoff = time.time() - older_than_s
        try:
            names = os.listdir(self.tmp)
        except FileNotFoundError:
            return 0
        for name in names:
            path = self.tmp / name
            try:
                if path.stat().st_mtime < cutoff:
                    path.unlink()
                    removed += 1
            except FileNotFoundError:
                continue
        return removed

    # -- status --------------------------------------------------------------------------

    def backlog(self) -> dict[str, AgentBacklog]:
        """Per agent: entries waiting, entries failed, when its hook last fired."""
        out: dict[str, AgentBacklog] = {}

        def slot(agent: str) -> AgentBacklog:
            return out.setdefault(agent, AgentBacklog())

        for folder in (self.new, self.claimed):
            for name in self._names(folder):
                slot(agent_of(name) or "unknown").waiting += 1
        for name in self._names(self.failed):
            slot(agent_of(name) or "unknown").failed += 1
        try:
            seen = list(self.seen.iterdir())
        except FileNotFoundError:
            seen = []
        for path in seen:
            try:
                slot(path.name).last_fired = path.stat().st_mtime
            except FileNotFoundError:
                continue
        return out


def _with_attempts(entry: SpoolEntry, attempts: int) -> SpoolEntry:
    from dataclasses import replace

    return replace(entry, attempts=attempts)


@contextmanager
def worker_lock(spool: Spool, *, wait_s: float = 0.0) -> Iterator[bool]:
    """Hold the spool's worker lock for the block; yields False when another worker holds it."""
    spool.ensure()
    lock = FileLock(str(spool.worker_lock), timeout=wait_s, mode=PRIVATE_FILE)
    try:
        lock.acquire()
    except Timeout:
        # The hook that spawned us saw no lock a moment before the holder took it. Clear its
        # start marker, or hooks would start no worker for STARTING_STALE_S: the holder looks
        # at the spool again after letting go, so nothing written meanwhile is stranded.
        spool.starting_marker.unlink(missing_ok=True)
        yield False
        return
    try:
        spool.starting_marker.unlink(missing_ok=True)  # the hook that spawned us may spawn another
        yield True
    finally:
        lock.release()


def worker_active(spool: Spool) -> bool:
    """True when a worker holds the spool's worker lock (probes without disturbing it)."""
    if not spool.worker_lock.exists():
        return False
    lock = FileLock(str(spool.worker_lock), timeout=0, mode=PRIVATE_FILE)
    try:
        lock.acquire()
    except Timeout:
        return True
    lock.release()
    return False
