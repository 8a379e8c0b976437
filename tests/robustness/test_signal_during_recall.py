"""A signal that ends a real `funes recall` (both candidate legs: BM25 in a second thread
beside the vector leg) never crashes it: SIGTERM exits 143 with `funes: terminated`, no
traceback, wherever it lands.

Found by a new user: about 1 in 40 SIGTERMs on a busy machine ended in a segfault (139) right
after `funes: terminated`. The signal had landed while the BM25 leg's thread was being
started, where concurrent.futures lost track of the thread; recall closed the memory while
the thread was still reading it (funes.retrieval.beside). Random delays hit that window too
rarely on an idle machine for a bounded test, so the first test delivers the signal in it on
purpose; the second (slow) sends signals at random points of real recalls."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from support.claude import write_claude_session

import funes

pytestmark = pytest.mark.models

QUERY = "why was the database locked during the nightly import"

# The console script, with SIGTERM sent to itself right after the recall's BM25 thread has
# started and handled inside the caller of `Thread.start` (a Python handler runs at the next
# bytecode): as when the signal arrives while `Thread.start` waits for the new thread to run.
SIGTERM_AT_BM25_START = """
import os, signal, sys, threading
start = threading.Thread.start
def start_then_terminate(self):
    start(self)
    if self.name.startswith("funes-bm25"):
        os.kill(os.getpid(), signal.SIGTERM)
        for _ in range(1000):
            pass
threading.Thread.start = start_then_terminate
sys.argv[0] = "funes"
from funes.__main__ import main
main()
"""


@pytest.fixture
def memory_env(isolated_env: Path, funes_env: dict[str, str]) -> dict[str, str]:
    """The environment of a memory with vectors (so recall runs both legs) of a few sessions."""
    for n in range(3):
        write_claude_session(
            isolated_env / ".claude", session_id=f"00000000-0000-4000-8000-{n:012d}"
        )
    done = subprocess.run(
        [sys.executable, "-m", "funes", "index", "--yes"],
        env=funes_env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    return funes_env


def test_sigterm_while_the_bm25_thread_starts_exits_143(
    memory_env: dict[str, str], tmp_path: Path
) -> None:
    script = tmp_path / "funes_sigterm_at_bm25_start.py"
    script.write_text(SIGTERM_AT_BM25_START)
    # the script imports the funes this test imported (its own folder comes first on its path)
    here = str(Path(funes.__file__).resolve().parent.parent)
    env = dict(
        memory_env, PYTHONPATH=os.pathsep.join(filter(None, [here, os.environ.get("PYTHONPATH")]))
    )
    for _ in range(12):  # before the fix, about 1 run in 3 crashed
        done = subprocess.run(
            [sys.executable, str(script), "recall", QUERY],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 143, (done.returncode, done.stderr)
        assert "funes: terminated" in done.stderr
        assert "Traceback" not in done.stderr and "Fatal Python error" not in done.stderr


@pytest.mark.slow
def test_sigterm_at_random_points_of_a_recall_never_crashes_it(
    memory_env: dict[str, str], tmp_path: Path
) -> None:
    """Each delivery exits 143 (-SIGTERM before funes installed its handler, 0 once the recall
    had finished); never a crash status, nor SIGINT's (python -m's unhandled-interrupt mark)."""
    rng = random.Random(20260312)
    err_path = tmp_path / "err.txt"
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-m", "funes", "recall", QUERY], env=memory_env, check=True)
    whole_s = time.perf_counter() - t0  # one recall, start to exit
    codes = []
    for _ in range(30):
        with err_path.open("w") as err:
            recall = subprocess.Popen(
                [sys.executable, "-m", "funes", "recall", QUERY],
                env=memory_env,
                stdout=subprocess.DEVNULL,
                stderr=err,
            )
            time.sleep(rng.uniform(0.3, 1.0) * whole_s)
            recall.send_signal(signal.SIGTERM)
            code = recall.wait(timeout=120)
        text = err_path.read_text(errors="replace")
        assert code in (143, -signal.SIGTERM, 0), (code, text)
        assert "Fatal Python error" not in text, text
        if code == 143:
            assert "funes: terminated" in text and "Traceback" not in text, text
        # (not checked on 0: a signal handled inside a weakref callback of the import system
        # is printed as "Exception ignored" and lost, and the recall finishes; a separate edge)
        codes.append(code)
    assert codes.count(143) >= 5, codes  # signals did land in funes' own code


# Run with `python -m`: a Ctrl-C that ends code compiled from a string (as dataclasses build
# their methods while modules import) is caught by funes, which exits 130; CPython had marked
# it unhandled all the same, and under -m ended the process by SIGINT once it had shut down.
INTERRUPT_IN_A_STRING = """
import importlib, sys
from funes import stdio
cli_main = importlib.import_module("funes.cli.main")  # the module (funes.cli names the function)

def interrupted(*_, **__):
    exec("raise KeyboardInterrupt")

if sys.argv[1] == "startup":  # while the console script sets up, before the CLI runs
    stdio.guard = interrupted
else:  # inside the CLI's error boundary
    cli_main.cli.main = interrupted
sys.argv[1:] = ["status"]
from funes.__main__ import main
main()
"""


@pytest.mark.parametrize("where", ["startup", "command"])
def test_an_interrupt_ended_in_a_string_exec_still_exits_130_under_python_m(
    where: str, funes_env: dict[str, str], tmp_path: Path
) -> None:
    (tmp_path / "funes_interrupted_in_exec.py").write_text(INTERRUPT_IN_A_STRING)
    here = str(Path(funes.__file__).resolve().parent.parent)
    env = dict(funes_env, PYTHONPATH=os.pathsep.join([str(tmp_path), here]))
    done = subprocess.run(
        [sys.executable, "-m", "funes_interrupted_in_exec", where],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 130, (done.returncode, done.stderr)
    assert "Traceback" not in done.stderr
