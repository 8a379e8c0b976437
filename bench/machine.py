"""What the figures were measured on: CPU, cores, Python, library versions, git commit."""

from __future__ import annotations

import os
import platform
import subprocess
from pathlib import Path
from typing import Any


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _git(repo: Path, *args: str) -> str:
    try:
        done = subprocess.run(
            ["git", *args], cwd=repo, capture_output=True, text=True, check=False, timeout=10
        )
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return done.stdout.strip()


def machine_info(repo: Path) -> dict[str, Any]:
    from importlib.metadata import version  # not an import of onnxruntime: see bench/__main__

    from funes.store import versions

    commit = _git(repo, "rev-parse", "HEAD")
    dirty = bool(_git(repo, "status", "--porcelain", "--untracked-files=no"))
    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:
        usable = os.cpu_count() or 0
    try:
        load = os.getloadavg()[0]
    except OSError:
        load = -1.0
    return {
        "cpu": _cpu_model(),
        "cores": os.cpu_count(),
        "cores_usable": usable,
        "load_avg_1m_at_start": round(load, 2),
        "os": f"{platform.system()} {platform.release()}",
        "python": platform.python_version(),
        "onnxruntime": version("onnxruntime"),
        **{f"store_{k}": v for k, v in versions().items()},
        "git_commit": commit + ("-dirty" if dirty else ""),
    }


def peak_rss_mb() -> float:
    """This process's peak resident set in MB: VmHWM from /proc/self/status, which exec
    resets. getrusage's ru_maxrss is not reset by exec on Linux: a child started from a
    1.4 GB bench process reported 1.4 GB whatever it did (falls back to it elsewhere)."""
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024.0  # kB
    except OSError:
        pass
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0  # KiB on Linux
