"""`funes status` warns when the agents' funes processes (hooks, spool worker, MCP server, run
through the launcher `funes add` writes, with the settings it carried) would embed with another
model than the memory's, or without its weights: recall through the agent is then refused or
BM25-only, and nothing else says so."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest
from support.claude import write_claude_session
from support.cli import Ran

from funes.commands.agent_models import missing_packages
from funes.inference import embedder_spec
from funes.memory import Runtime
from funes.wiring import launcher


def _attention(run: Callable[..., Ran]) -> list[str]:
    out = run("status", "--json")
    assert out.returncode == 0, out.stderr
    return list(json.loads(out.stdout)["attention"])


def test_status_warns_when_the_launcher_sets_another_embedder_than_the_memorys(
    isolated_env: Path, monkeypatch: pytest.MonkeyPatch, run: Callable[..., Ran]
) -> None:
    """`funes add claude` from a shell with FUNES_EMBEDDER=bge-small-en-v1.5, the memory then
    indexed with the offline model: the MCP server and the hooks' worker would refuse it.
    Status named nothing; now it names the agent, the launcher, both models and the fix."""
    (isolated_env / ".claude").mkdir()  # Claude Code is on this machine
    offline = os.environ["FUNES_EMBEDDER"]
    monkeypatch.setenv("FUNES_EMBEDDER", "bge-small-en-v1.5")
    assert run("add", "claude").returncode == 0
    path = Runtime.resolve().paths.launcher
    assert launcher.settings(path)["FUNES_EMBEDDER"] == "bge-small-en-v1.5"
    monkeypatch.setenv("FUNES_EMBEDDER", offline)
    write_claude_session(isolated_env / ".claude")
    assert run("index", "--yes").returncode == 0

    warned = [line for line in _attention(run) if str(path) in line]
    assert len(warned) == 1, warned
    assert warned[0].startswith("claude: ")
    assert "FUNES_EMBEDDER=bge-small-en-v1.5" in warned[0] and offline in warned[0]
    assert "refuses the memory" in warned[0]
    human = run("status")
    assert human.returncode == 0 and "funes add claude" in human.stdout
    assert "FUNES_EMBEDDER=bge-small-en-v1.5" in human.stdout

    # `funes add claude` again from this shell: the launcher carries the memory's model
    assert run("add", "claude").returncode == 0
    assert not [line for line in _attention(run) if str(path) in line]


def test_status_is_quiet_when_the_launcher_leaves_the_embedder_to_the_memorys_stamp(
    isolated_env: Path, monkeypatch: pytest.MonkeyPatch, run: Callable[..., Ran]
) -> None:
    """`funes add` from a shell without FUNES_EMBEDDER: the agents' processes use the memory's
    own stamped model (Runtime.embedder_spec_for), whose weights this Python finds: no
    warning."""
    (isolated_env / ".claude").mkdir()
    offline = os.environ["FUNES_EMBEDDER"]
    monkeypatch.delenv("FUNES_EMBEDDER")
    assert run("add", "claude").returncode == 0
    assert "FUNES_EMBEDDER" not in launcher.settings(Runtime.resolve().paths.launcher)
    monkeypatch.setenv("FUNES_EMBEDDER", offline)
    write_claude_session(isolated_env / ".claude")
    assert run("index", "--yes").returncode == 0
    assert not [line for line in _attention(run) if "launcher" in line]


def test_missing_packages_looks_only_on_the_import_path_and_model_path_given(
    tmp_path: Path,
) -> None:
    """The weights a launcher's process finds: those on its own FUNES_MODEL_PATH, not those on
    the status process's."""
    spec = embedder_spec("all-minilm-l6-v2-int8")
    packages = sorted({f.package for f in (spec.onnx, spec.tokenizer) if f.package})
    assert missing_packages(spec, [], []) == [spec.onnx.package, spec.tokenizer.package]
    weights = tmp_path / "weights"
    for file in (spec.onnx, spec.tokenizer):
        assert file.package is not None
        target = weights / file.package / file.path
        target.parent.mkdir(parents=True, exist_ok=True)
        (weights / file.package / "__init__.py").write_text("")
        target.write_bytes(b"x")
    assert missing_packages(spec, [], [str(weights)]) == []
    assert sorted(missing_packages(spec, [str(tmp_path / "elsewhere")], [])) == packages
    (weights / spec.onnx.package / spec.onnx.path).unlink()  # type: ignore[operator]
    assert missing_packages(spec, [], [str(weights)]) == [spec.onnx.package]
    assert missing_packages(embedder_spec("bge-small-en-v1.5"), [], []) == []  # Hub files
