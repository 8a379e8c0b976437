"""The built wheel carries hooks/ and installers/: install it in a fresh venv, `funes add claude --yes`."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import time
import zipfile
from pathlib import Path

import pytest
from support.claude import append_turns, session_path, stop_payload
from support.wheel import build_wheel, fresh_venv


@pytest.mark.slow
def test_the_wheel_installs_and_funes_add_claude_works_from_it(
    tmp_path: Path, isolated_env: Path
) -> None:
    wheel = build_wheel(tmp_path / "dist")
    names = zipfile.ZipFile(wheel).namelist()
    assert "funes/_bundled/hooks/enqueue.py" in names
    assert {
        f"funes/_bundled/installers/{m}.py"
        for m in ("_common", "claude_code", "codex", "hermes", "hermes_yaml", "pi")
    } <= set(names)

    python = fresh_venv(tmp_path / "venv", wheel)
    where = subprocess.run(
        [str(python), "-c", "import funes, pathlib; print(pathlib.Path(funes.__file__).parent)"],
        capture_output=True,
        text=True,
        check=True,
        cwd=tmp_path,
    ).stdout.strip()
    assert where.startswith(str(tmp_path / "venv")), where

    transcript = append_turns(
        session_path(isolated_env / ".claude", "/w/old", "old-session"),
        "old-session",
        "/w/old",
        range(2),
    )
    env = dict(os.environ)
    added = subprocess.run(
        [str(python), "-m", "funes", "add", "claude", "--yes"],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
        stdin=subprocess.DEVNULL,
        cwd=tmp_path,
    )
    assert added.returncode == 0, added.stderr
    assert "indexed 4 chunks" in added.stderr

    funes_home = Path(env["FUNES_HOME"])
    hook = funes_home / "data" / "hooks" / "funes-enqueue.py"
    assert hook.is_file() and not str(hook).startswith(where)
    settings = json.loads((isolated_env / ".claude" / "settings.json").read_text())
    command = settings["hooks"]["Stop"][0]["hooks"][0]["command"]
    launcher = funes_home / "data" / "hooks" / "funes-python"
    assert shlex.split(command)[:4] == [str(launcher), "-I", "-S", str(hook)]
    assert f"exec {python} " in launcher.read_text()  # the launcher runs the wheel's install

    append_turns(transcript, "old-session", "/w/old", range(2, 4))
    fired = subprocess.run(
        ["sh", "-c", command],
        input=json.dumps(stop_payload(transcript, "old-session", "/w/old")).encode(),
        capture_output=True,
        timeout=60,
        env=env,
        cwd=tmp_path,
    )
    assert fired.returncode == 0 and fired.stdout == b""
    deadline = time.monotonic() + 120
    found = ""
    while time.monotonic() < deadline:
        found = subprocess.run(
            [str(python), "-m", "funes", "recall", "widget 3 frobnicator", "--no-rerank"],
            capture_output=True,
            text=True,
            env=env,
            timeout=120,
            cwd=tmp_path,
        ).stdout
        if "turn 3:" in found:
            break
        time.sleep(1)
    assert "turn 3:" in found and "old-sess" in found
