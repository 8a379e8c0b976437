"""Running the real CLI in tests: `funes(...)` as a subprocess (where the process itself is
under test), and `Ran`, what the in-process `run` fixture (tests/cli/conftest.py) returns."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass


def funes(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    out = subprocess.run(
        [sys.executable, "-m", "funes", *args],
        capture_output=True,
        text=True,
        timeout=300,
        env=os.environ.copy(),
    )
    if check:
        assert out.returncode == 0, out.stderr
    return out


@dataclass(frozen=True)
class Ran:
    returncode: int
    stdout: str
    stderr: str
