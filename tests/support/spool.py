"""Spool helpers for tests that run the real hook (hooks/enqueue.py) and its detached workers.

`fire_hook` runs the hook the way an agent does (`python -I -S hooks/enqueue.py …`, payload on
stdin). `wait_idle` waits until the detached workers are done: nothing waiting or claimed, no
worker holding the worker lock, no hook's start marker, no worker publishing a bound memory
(its push lock under FUNES_HOME/data/publish), and all of that for `settle_s` in a row. A worker appends its `drain:` line to worker.log after it lets go of the lock (it looks
at the spool once more first) and after sitting idle for `SpoolParams.idle_exit_s`, so "the
spool is empty" alone does not mean its line is written: read worker.log only after this.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path

from filelock import FileLock, Timeout

from funes.ingest import Spool, worker_active

HOOK = Path(__file__).resolve().parents[2] / "hooks" / "enqueue.py"


def fire_hook(
    spool: Path,
    payload: Mapping[str, object],
    *,
    agent: str = "claude",
    event: str = "Stop",
    python: Path | str | None = None,
    home: Path | str | None = None,
    worker: bool = True,
    env: Mapping[str, str] | None = None,
) -> subprocess.CompletedProcess[str]:
    """Run the hook once. `python` is what it starts workers with (default: this interpreter).

    Asserts what every agent relies on: exit 0 and nothing on stdout.
    """
    cmd = [sys.executable, "-I", "-S", str(HOOK), "--agent", agent, "--spool", str(spool)]
    cmd += ["--python", str(python or sys.executable), "--event", event]
    if home is not None:
        cmd += ["--home", str(home)]
    if not worker:
        cmd.append("--no-worker")
    done = subprocess.run(
        cmd,
        input=json.dumps(dict(payload)),
        env=None if env is None else dict(env),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0 and done.stdout == "", (done.returncode, done.stdout)
    return done


def spool_busy(spool: Spool) -> str | None:
    """Why the spool is not idle yet (None when it is): waiting, claimed, worker, starting."""
    if spool.pending():
        return f"waiting={len(spool.pending())}"
    if spool.claimed.exists() and any(spool.claimed.glob("*.json")):
        return "claimed"
    if worker_active(spool):
        return "worker holds the lock"
    if spool.starting_marker.exists():
        return "a worker is starting"
    publishing = spool.root.parent / "data" / "publish"  # FUNES_HOME/{spool,data} layout
    for lock in publishing.glob("*.push") if publishing.is_dir() else ():
        held = FileLock(str(lock), timeout=0)
        try:
            held.acquire()
        except Timeout:
            return f"a worker is publishing ({lock.stem})"
        held.release()
    return None


def wait_idle(spool: Spool, timeout_s: float = 120.0, *, settle_s: float = 0.5) -> float:
    """Wait until no worker is left (see the module docstring). Returns the seconds waited.

    Raises AssertionError with the spool's logs when it is still busy at the deadline.
    """
    t0 = time.monotonic()
    deadline = t0 + timeout_s
    idle_since: float | None = None
    while True:
        now = time.monotonic()
        why = spool_busy(spool)
        if why is None:
            idle_since = now if idle_since is None else idle_since
            if now - idle_since >= settle_s:
                return now - t0
        else:
            idle_since = None
        if now > deadline:
            raise AssertionError(
                f"the spool is still busy after {timeout_s:.0f}s ({why})\n"
                f"worker.log:\n{worker_log(spool)[-3000:]}\nhook.log:\n{hook_log(spool)[-2000:]}"
            )
        time.sleep(0.1)


def worker_log(spool: Spool) -> str:
    path = spool.logs / "worker.log"
    return path.read_text(errors="replace") if path.exists() else ""


def hook_log(spool: Spool) -> str:
    path = spool.logs / "hook.log"
    return path.read_text(errors="replace") if path.exists() else ""


def drain_counts(spool: Spool, field: str = "acked") -> list[int]:
    """One number per `drain:` line of worker.log: its `field=` value (entries, acked, …)."""
    return [int(n) for n in re.findall(rf" drain: .*?\b{field}=(\d+)", worker_log(spool))]
