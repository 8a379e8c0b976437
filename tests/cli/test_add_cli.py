"""`funes add` on a machine without the agent changes nothing unless --force, and names every
file it creates, edits or pre-approves."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest
from support.claude import write_claude_session
from support.cli import Ran

# held back by the push gate, let through by index-time redaction (tests/cli/test_push_cli.py)
LEAK = "The key you pasted (`opensesameforever`) returns 401"
OTHER_LEAK = "The key you pasted (`swordfishsesame`) returns 401"
CLEAN = [
    ("user", "why does the grebe sync stall at night?"),
    ("assistant", "The grebe sync waits on a stale lock file; we delete it at boot now."),
]


@pytest.fixture
def bare_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A PATH with no agent program on it."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    monkeypatch.setenv("PATH", str(bin_dir))
    return bin_dir


def _files(*roots: Path) -> set[Path]:
    return {p for root in roots if root.exists() for p in root.rglob("*") if p.is_file()}


def test_add_without_the_agent_changes_nothing_unless_forced(
    isolated_env: Path, tmp_path: Path, bare_path: Path, run: Callable[..., Ran]
) -> None:
    funes_home = tmp_path / "funes"
    before = _files(isolated_env, funes_home)
    out = run("add", "codex", "--no-index")
    assert out.returncode == 1
    assert (
        "Codex is not set up on this machine" in out.stderr and "nothing was changed" in out.stderr
    )
    assert "--force" in out.stderr
    assert _files(isolated_env, funes_home) == before and not (isolated_env / ".codex").exists()

    forced = run("add", "codex", "--no-index", "--force")
    assert forced.returncode == 0, forced.stderr
    new = _files(isolated_env, funes_home) - before
    named = {
        line.split(" ", 3)[3]
        for line in forced.stderr.splitlines()
        if line.startswith("  created ")
    }
    configs = {p for p in new if not p.is_relative_to(funes_home / "data" / "backups")}
    assert {str(p) for p in configs} <= named, (configs, forced.stderr)
    assert str(isolated_env / ".codex" / "config.toml") in named
    assert str(funes_home / "data" / "hooks" / "funes-enqueue.py") in named


def test_an_agent_program_on_path_counts_as_the_agent_being_here(
    isolated_env: Path, bare_path: Path, run: Callable[..., Ran]
) -> None:
    program = bare_path / "codex"
    program.write_text("#!/bin/sh\nexit 0\n")
    program.chmod(0o755)
    out = run("add", "codex", "--no-index")
    assert out.returncode == 0, out.stderr
    assert f"created {isolated_env / '.codex' / 'config.toml'}" in out.stderr


def test_adding_hermes_names_the_allowlist_it_pre_approves(
    isolated_env: Path, bare_path: Path, run: Callable[..., Ran]
) -> None:
    (isolated_env / ".hermes").mkdir()
    out = run("add", "hermes", "--no-index")
    assert out.returncode == 0, out.stderr
    allowlist = isolated_env / ".hermes" / "shell-hooks-allowlist.json"
    assert f"created {allowlist}" in out.stderr
    assert (
        f"pre-approved funes' hook commands (on_session_finalize, on_session_start, post_llm_call) in {allowlist}"
        in out.stderr
    )
    again = run("add", "hermes", "--no-index")
    assert "hermes: nothing to change" in again.stderr and "pre-approved" not in again.stderr


@pytest.mark.models
def test_adds_first_push_names_what_publishes_the_blocks_it_held_back_as_push_does(
    isolated_env: Path, tmp_path: Path, run: Callable[..., Ran]
) -> None:
    claude = isolated_env / ".claude"
    shared = str(tmp_path / "shared")
    step = "take the secret out of the transcript, then funes index --yes, then push again"
    write_claude_session(claude, [("assistant", LEAK)])
    refused = run("add", "claude", shared, "--create", "--yes")  # every block held back
    assert refused.returncode == 0, refused.stderr  # the binding still stands
    assert "nothing was published" in refused.stderr
    assert f"hint: the chunks stay local; to publish them: {step}" in refused.stderr

    write_claude_session(claude, [*CLEAN, ("assistant", OTHER_LEAK)])
    again = run("add", "claude", shared, "--yes")  # a new block held back, the rest sent
    assert again.returncode == 0, again.stderr
    assert (
        "warning: held back 2 chunks that contain secrets (they stay local; to publish them: "
        f"{step})" in " ".join(again.stderr.split())
    )
    assert "pushed 2 chunks to " in again.stderr
    assert "opensesameforever" not in refused.stderr + again.stderr


def test_a_first_add_whose_model_cannot_load_says_what_it_stored_and_still_installs(
    isolated_env: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, run: Callable[..., Ran]
) -> None:
    """Offline, with a model that is not cached: the first index stored chunks, then `add`
    ended in "not cached and cannot be downloaded" (exit 1), said nothing of them and
    installed neither hook nor MCP server. It says what it stored, that recall finds it by
    its words now and how the vectors follow, and installs."""
    write_claude_session(isolated_env / ".claude")
    monkeypatch.setenv("FUNES_EMBEDDER", "bge-small-en-v1.5")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "empty-hf"))
    out = run("add", "claude", "--yes")
    assert out.returncode == 0, out.stderr
    stored = re.search(r"indexed (\d+) chunks from 1 session into local", out.stderr)
    assert stored is not None and int(stored.group(1)) > 0, out.stderr
    assert "warning: no vectors yet: model bge-small-en-v1.5 is not cached" in out.stderr
    assert f"{stored.group(1)} chunks have no vector: recall finds them" in out.stderr
    assert "(BM25) now; once the model loads, the hook embeds them" in out.stderr
    assert "`funes index --yes` does it at once" in out.stderr
    assert "hint: connect to the internet once" in out.stderr  # how to get the model
    assert "funes added to claude" in out.stderr
    hooks = json.loads((isolated_env / ".claude" / "settings.json").read_text())["hooks"]
    assert "Stop" in hooks  # the hook that embeds them later
    found = run("recall", "--all", "busy_timeout")
    assert found.returncode == 0 and "busy_timeout" in found.stdout


def test_add_names_the_backup_of_each_config_it_edits(
    isolated_env: Path, tmp_path: Path, bare_path: Path, run: Callable[..., Ran]
) -> None:
    # add backed up the configs it edited but never said where the copies were
    codex = isolated_env / ".codex"
    codex.mkdir()
    config = codex / "config.toml"
    config.write_bytes(b'model = "gpt-5"\r\n')
    out = run("add", "codex", "--no-index")
    assert out.returncode == 0, out.stderr
    lines = out.stderr.splitlines()
    named = [line for line in lines if line.startswith("  backup of ")]
    assert len(named) == 1, out.stderr  # hooks.json is new: nothing of the user's to keep
    assert lines[lines.index(named[0]) - 1] == f"  updated {config}"
    backup = Path(named[0].removeprefix(f"  backup of {config}: "))
    assert backup.parent == tmp_path / "funes" / "data" / "backups"
    assert backup.read_bytes() == b'model = "gpt-5"\r\n'
    again = run("add", "codex", "--no-index")
    assert "backup of" not in again.stderr  # nothing edited, nothing to name
