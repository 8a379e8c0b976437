"""funes' launcher: what hooks and MCP registrations run (funes.wiring.launcher)."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from support.cli import Ran

from funes.memory import Runtime
from funes.traces import Harness
from funes.wiring import installer, launcher


def test_the_installers_and_funes_agree_on_what_marks_the_launcher() -> None:
    installer(Harness.CLAUDE_CODE)  # loads the bundled installers package
    common = sys.modules["_funes_installers._common"]
    assert common.LAUNCHER_MARK == launcher.MARK  # a copy: the installers import no funes
    rt = Runtime.resolve()
    launcher.write(rt, "/opt/some python/bin/python3")
    assert common.launcher_target(str(rt.paths.launcher)) == "/opt/some python/bin/python3"
    assert launcher.target(rt.paths.launcher) == "/opt/some python/bin/python3"
    assert rt.paths.launcher.stat().st_mode & 0o777 == 0o700


def test_the_launcher_runs_the_python_it_names_with_its_arguments(tmp_path: Path) -> None:
    rt = Runtime.resolve()
    launcher.write(rt)
    done = subprocess.run(
        [str(rt.paths.launcher), "-c", "import sys; print(sys.executable, sys.argv[1:])", "a b", "$x"],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    assert done.stdout.strip() == f"{sys.executable} ['a b', '$x']"


def test_a_cli_command_points_a_launcher_whose_python_is_gone_at_itself(
    tmp_path: Path, run: Callable[..., Ran]
) -> None:
    rt = Runtime.resolve()
    gone = tmp_path / "old-venv" / "bin" / "python3"
    launcher.write(rt, str(gone))
    out = run("status", "--format", "agent")
    assert f"ran {gone}, which is gone; they run this funes now ({sys.executable})" in out.stderr
    assert launcher.target(rt.paths.launcher) == sys.executable
    again = run("status", "--format", "agent")
    assert "which is gone" not in again.stderr  # healed once
    other = tmp_path / "other-venv" / "bin" / "python3"
    other.parent.mkdir(parents=True)
    other.symlink_to(sys.executable)
    launcher.write(rt, str(other))  # another install that still exists: not switched silently
    run("status", "--format", "agent")
    assert launcher.target(rt.paths.launcher) == str(other)


def test_the_launcher_carries_adds_settings_as_defaults_the_environment_overrides(
    tmp_path: Path,
) -> None:
    # a hook starts the spool worker through the launcher in the agent's environment, which
    # rarely holds FUNES_MODEL_PATH: without it a tool install's worker cannot embed anything
    rt = Runtime.resolve()
    weights = str(tmp_path / "my weights")
    launcher.write(rt, env={"FUNES_MODEL_PATH": weights, "FUNES_EMBEDDER": "x'y", "bad name": "z"})
    show = "import os; print(os.environ.get('FUNES_MODEL_PATH'), os.environ.get('FUNES_EMBEDDER'))"
    env = {"PATH": "/usr/bin:/bin"}
    done = subprocess.run(
        [str(rt.paths.launcher), "-c", show], capture_output=True, text=True, check=True, env=env
    )
    assert done.stdout.strip() == f"{weights} x'y"
    env["FUNES_EMBEDDER"] = "mine"
    done = subprocess.run(
        [str(rt.paths.launcher), "-c", show], capture_output=True, text=True, check=True, env=env
    )
    assert done.stdout.strip() == f"{weights} mine"
    assert "bad name" not in rt.paths.launcher.read_text()
    launcher.write(rt, str(tmp_path / "other" / "python3"))  # re-pointed (heal): settings kept
    assert launcher.settings(rt.paths.launcher) == {
        "FUNES_EMBEDDER": "x'y",
        "FUNES_MODEL_PATH": weights,
    }
