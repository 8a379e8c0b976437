"""funes.remote.arenas: the glibc malloc-arena cap a push sets before Lance starts its threads
(the push itself is checked in tests/bench/test_push_memory.py)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from funes.remote.arenas import MALLOC_ARENAS, cap_malloc_arenas, count_malloc_arenas

# Six threads alive at once, each allocating: glibc gives each its own arena up to the limit.
_THREADS = """
import sys, threading
from pathlib import Path
from funes.remote.arenas import cap_malloc_arenas, count_malloc_arenas
capped = cap_malloc_arenas() if sys.argv[1] == "cap" else False
gate, held = threading.Barrier(7), []
def work():
    held.append(bytearray(64 * 1024))
    gate.wait()
    gate.wait()
threads = [threading.Thread(target=work) for _ in range(6)]
for t in threads:
    t.start()
gate.wait()
print(capped, count_malloc_arenas(Path(sys.argv[2])))
gate.wait()
for t in threads:
    t.join()
"""


def _arenas(mode: str, tmp_path: Path) -> tuple[str, int]:
    done = subprocess.run(
        [sys.executable, "-c", _THREADS, mode, str(tmp_path / f"{mode}.xml")],
        capture_output=True,
        text=True,
        check=True,
        env={"PATH": "/usr/bin:/bin"},
    )
    capped, count = done.stdout.split()
    return capped, int(count)


def test_threads_share_the_capped_arenas(tmp_path: Path) -> None:
    if count_malloc_arenas(tmp_path / "probe.xml") is None:
        pytest.skip("malloc arenas are glibc's: nothing to cap elsewhere")
    capped, count = _arenas("cap", tmp_path)
    assert capped == "True" and 1 <= count <= MALLOC_ARENAS
    uncapped, more = _arenas("none", tmp_path)  # the count sees what the cap prevents
    assert uncapped == "False" and more > MALLOC_ARENAS


def test_an_arena_limit_in_the_environment_is_left_to_rule(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("MALLOC_ARENA_MAX", "8")
    assert cap_malloc_arenas() is False
