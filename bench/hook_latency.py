"""Hook latency: wall time of N hook invocations as an agent makes them, process start included.

    python -m bench.hook_latency [-n 50]          prints p50/p95/max for both modes

`measure_hook_latency()` runs `python -I -S hooks/enqueue.py` N times with a real captured
Claude Code Stop payload on stdin, timing each from spawn to exit. Modes:

* steady (default): a worker holds the spool lock, as during a session, so the hook only probes
  it. This is the per-turn cost an agent pays.
* cold: no worker runs, so the hook also spawns one (a stand-in `true` is started instead of
  funes, so only the hook's own spawn cost is measured).

Budget (issue 3): p95 ≤ 50 ms.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
HOOK = REPO / "hooks" / "enqueue.py"
PAYLOAD = REPO / "fixtures" / "hooks" / "claude_code-Stop.json"
BUDGET_P95_MS = 50.0


@dataclass(frozen=True, slots=True)
class HookLatency:
    mode: str
    n: int
    p50_ms: float
    p95_ms: float
    max_ms: float
    entries: int  # spool entries written (should equal n)
    baseline_p50_ms: float  # `python -I -S -c pass` on the same machine: what start-up alone costs

    @property
    def within_budget(self) -> bool:
        return self.p95_ms <= BUDGET_P95_MS


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


def measure_hook_latency(
    n: int = 50,
    *,
    mode: str = "steady",
    python: str = sys.executable,
    hook: Path = HOOK,
    warmup: int = 3,
) -> HookLatency:
    """Time `n` hook invocations (after `warmup` untimed ones). See the module docstring."""
    from filelock import FileLock

    payload = PAYLOAD.read_bytes()
    stand_in = shutil.which("true") or "/bin/true"
    with tempfile.TemporaryDirectory(prefix="funes-hook-bench-") as tmp:
        spool = Path(tmp) / "spool"
        spool.mkdir(mode=0o700)
        cmd = [
            python,
            "-I",
            "-S",
            str(hook),
            "--agent",
            "claude",
            "--spool",
            str(spool),
            "--python",
            stand_in,
            "--event",
            "Stop",
        ]
        lock = FileLock(str(spool / "worker.lock"), timeout=0)
        if mode == "steady":
            lock.acquire()
        elif mode != "cold":
            raise ValueError(f"unknown mode {mode!r} (steady or cold)")
        try:
            times: list[float] = []
            baseline: list[float] = []
            for i in range(warmup + n):
                marker = spool / "worker.starting"
                marker.unlink(missing_ok=True)  # cold: every call finds no worker starting
                started = time.perf_counter()
                subprocess.run(
                    cmd,
                    input=payload,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                    check=False,
                )
                elapsed = (time.perf_counter() - started) * 1000
                started = time.perf_counter()  # the bare start, interleaved: same load
                subprocess.run([python, "-I", "-S", "-c", "pass"], check=False)
                bare = (time.perf_counter() - started) * 1000
                if i >= warmup:
                    times.append(elapsed)
                    baseline.append(bare)
        finally:
            if lock.is_locked:
                lock.release()
        entries = len(list((spool / "new").glob("*.json")))
    return HookLatency(
        mode,
        n,
        statistics.median(times),
        _percentile(times, 0.95),
        max(times),
        entries - warmup,
        statistics.median(baseline),
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=50)
    args = parser.parse_args()
    for mode in ("steady", "cold"):
        r = measure_hook_latency(args.n, mode=mode)
        verdict = "ok" if r.within_budget else f"OVER the {BUDGET_P95_MS:.0f} ms budget"
        print(
            f"hook latency ({mode}, n={r.n}): p50 {r.p50_ms:.1f} ms  p95 {r.p95_ms:.1f} ms  max {r.max_ms:.1f} ms  "
            f"(bare interpreter start p50 {r.baseline_p50_ms:.1f} ms)  [{verdict}]"
        )


if __name__ == "__main__":
    main()
