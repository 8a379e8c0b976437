"""funes installed as a tool (`uv tool install`, `pipx install` of the wheel) works, finds the
offline weights through FUNES_MODEL_PATH, and its hooks and MCP registrations survive the
install being upgraded in place or replaced by another one: they run funes' launcher.

Hermetic: funes comes from the built wheel, its dependencies from the dev venv (uv is told to
exclude them, pipx to skip them; a `.pth` line points at the dev venv's packages, minus the
weights, which only FUNES_MODEL_PATH reaches).
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import time
from pathlib import Path

import pytest
from support.claude import append_turns, session_path, stop_payload
from support.wheel import (
    build_wheel,
    dependencies_without_weights,
    path_wheel,
    runtime_dependencies,
    use_dependencies,
)

pytestmark = [pytest.mark.slow, pytest.mark.models]

BIN = Path(sys.executable).parent


def _run(
    argv: list[str], env: dict[str, str], cwd: Path, **kw: object
) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(argv, env=env, cwd=cwd, capture_output=True, text=True, timeout=600, **kw)  # type: ignore[call-overload]
    assert done.returncode == 0, f"{argv}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done


def uv_install(wheel: Path, root: Path, env: dict[str, str], *, deps: Path) -> Path:
    """`uv tool install WHEEL` (dependencies excluded); the `funes` it puts on its bin dir."""
    root.mkdir(parents=True, exist_ok=True)
    excludes = root / "excludes.txt"
    excludes.write_text("\n".join(runtime_dependencies()) + "\n")
    uv_env = {
        **env,
        "UV_TOOL_DIR": str(root / "tools"),
        "UV_TOOL_BIN_DIR": str(root / "bin"),
        "UV_CACHE_DIR": str(root / "cache"),
        "UV_PYTHON_DOWNLOADS": "never",
    }
    _run(
        [str(BIN / "uv"), "tool", "install", "--force", "--offline", "--no-index",
         "--python", sys.executable, "--excludes", str(excludes), str(wheel)],
        uv_env, root,
    )  # fmt: skip
    use_dependencies(root / "tools" / "funes" / "bin" / "python", deps)
    return root / "bin" / "funes"


def pipx_install(wheel: Path, root: Path, env: dict[str, str], *, deps: Path) -> Path:
    """`pipx install WHEEL` (no dependencies); the `funes` it puts on its bin dir."""
    root.mkdir(parents=True, exist_ok=True)
    pipx_env = {
        **env,
        "PIPX_HOME": str(root / "home"),
        "PIPX_BIN_DIR": str(root / "bin"),
        "PIPX_MAN_DIR": str(root / "man"),
    }
    # pipx reads the metadata of funes' dependencies once it is installed: a preinstalled
    # `.pth` makes the dev venv's copies visible to it (and importable for good)
    _run(
        [str(BIN / "pipx"), "install", "--python", sys.executable,
         "--preinstall", str(path_wheel(deps, root / "pth-wheel")),
         "--pip-args=--no-deps --no-index", str(wheel)],
        pipx_env, root,
    )  # fmt: skip
    return root / "bin" / "funes"


def test_a_tool_install_works_and_its_hooks_survive_an_upgrade_and_a_move(
    tmp_path: Path, isolated_env: Path
) -> None:
    wheel = build_wheel(tmp_path / "dist")
    deps, weights = dependencies_without_weights(tmp_path / "site")
    env = dict(os.environ)
    env.pop("FUNES_MODEL_PATH", None)
    work = tmp_path / "work"  # not the checkout: `-m funes` must not find ./funes
    work.mkdir()

    uv_funes = uv_install(wheel, tmp_path / "uv", env, deps=deps)
    version = _run([str(uv_funes), "--version"], env, work)
    assert "funes, version" in version.stdout
    claude = isolated_env / ".claude"
    transcript = append_turns(session_path(claude, "/w/a", "sess-a"), "sess-a", "/w/a", range(2))
    without = subprocess.run(
        [str(uv_funes), "index", "--yes"], env=env, cwd=work, capture_output=True, text=True
    )
    assert without.returncode == 1  # the tool's environment holds no weights…
    assert (
        "model all-minilm-l6-v2-int8: package" in without.stderr
        and "is not installed" in without.stderr
    )
    env["FUNES_MODEL_PATH"] = str(weights)  # …FUNES_MODEL_PATH says where they are

    added = _run([str(uv_funes), "add", "claude", "--yes"], env, work, stdin=subprocess.DEVNULL)
    assert "indexed " in added.stderr
    # the failed index above stored the transcript's chunks lexical first; add embedded them
    state = json.loads(_run([str(uv_funes), "status", "--json"], env, work).stdout)
    assert state["chunks"] == 4 and state["without_vectors"] == 0
    funes_home = Path(env["FUNES_HOME"])
    launcher = funes_home / "data" / "hooks" / "funes-python"
    uv_python = tmp_path / "uv" / "tools" / "funes" / "bin" / "python"
    assert launcher.read_text().splitlines()[-1] == f'exec {uv_python} "$@"'
    settings = json.loads((claude / "settings.json").read_text())
    hook = settings["hooks"]["Stop"][0]["hooks"][0]["command"]
    assert shlex.split(hook)[0] == str(launcher)
    mcp = json.loads((isolated_env / ".claude.json").read_text())["mcpServers"]["funes"]
    assert mcp["command"] == str(launcher) and mcp["env"]["FUNES_MODEL_PATH"] == str(weights)

    def turn_reaches_the_memory(n: int, funes: Path) -> None:
        append_turns(transcript, "sess-a", "/w/a", range(n, n + 1))
        # the agent's environment does not hold FUNES_MODEL_PATH: the launcher carries it
        agent_env = {k: v for k, v in env.items() if k != "FUNES_MODEL_PATH"}
        fired = subprocess.run(
            ["sh", "-c", hook],
            input=json.dumps(stop_payload(transcript, "sess-a", "/w/a")).encode(),
            capture_output=True, timeout=60, env=agent_env, cwd=work,
        )  # fmt: skip
        assert fired.returncode == 0 and fired.stdout == b""
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            found = subprocess.run(
                [str(funes), "recall", f"widget {n} frobnicator", "--no-rerank"],
                env=env, cwd=work, capture_output=True, text=True, timeout=120,
            ).stdout  # fmt: skip
            if f"turn {n}:" in found:
                return
            time.sleep(1)
        log = (funes_home / "spool" / "logs" / "worker.log").read_text()
        pytest.fail(f"turn {n} was not indexed through the hook:\n{log[-3000:]}")

    turn_reaches_the_memory(2, uv_funes)
    # upgraded in place: the same tool environment, the launcher still reaches it
    uv_install(wheel, tmp_path / "uv", env, deps=deps)
    turn_reaches_the_memory(3, uv_funes)
    # replaced: the uv install is removed, funes now comes from pipx; its first command
    # points the launcher at itself, and the hooks and MCP server run it from then on
    _run(
        [str(BIN / "uv"), "tool", "uninstall", "funes"],
        {**env, "UV_TOOL_DIR": str(tmp_path / "uv" / "tools"), "UV_TOOL_BIN_DIR": str(tmp_path / "uv" / "bin")},
        work,
    )  # fmt: skip
    assert not uv_python.exists()
    pipx_funes = pipx_install(wheel, tmp_path / "pipx", env, deps=deps)
    status = _run([str(pipx_funes), "status", "--format", "agent"], env, work)
    assert f"ran {uv_python}, which is gone; they run this funes now" in status.stderr
    pipx_python = tmp_path / "pipx" / "home" / "venvs" / "funes" / "bin" / "python"
    assert launcher.read_text().splitlines()[-1].startswith(f"exec {pipx_python.parent}")
    assert "attention: claude" not in status.stdout  # no stale-hook warning is left
    turn_reaches_the_memory(4, pipx_funes)
    # …and the workers those hooks started embedded every turn (the launcher's settings)
    wait = time.monotonic() + 120
    while time.monotonic() < wait:
        state = json.loads(_run([str(pipx_funes), "status", "--json"], env, work).stdout)
        if state["without_vectors"] == 0:
            break
        time.sleep(1)
    assert state["chunks"] > 4 and state["without_vectors"] == 0, state
    served = _run([str(launcher), "-m", "funes", "mcp", "--help"], env, work)
    assert "Serve the recall" in served.stdout
