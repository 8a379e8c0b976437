"""`funes push` through the CLI (in-process `main()`): what it prints and its exit status when
the secrets gate holds blocks back, with the real gate and a directory remote."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

import pytest
from support.claude import write_claude_session
from support.cli import Ran

from funes.commands import PushRequest, run_push
from funes.errors import PushBusy
from funes.memory import PublishQueue, Runtime, as_push_target, parse_memory, remote_for

pytestmark = pytest.mark.models

# Held back by the gate's own detectors (a password quoted in prose), which index-time
# redaction lets through (tests/secrets/test_gate_words.py): it is stored, and never pushed.
LEAK = "The key you pasted (`opensesameforever`) returns 401"
OTHER_LEAK = "The key you pasted (`swordfishsesame`) returns 401"
CLEAN = [
    ("user", "why does the grebe sync stall at night?"),
    ("assistant", "The grebe sync waits on a stale lock file; we delete it at boot now."),
]


def test_a_first_push_the_gate_refuses_entirely_creates_no_remote(
    isolated_env: Path, run: Callable[..., Ran], tmp_path: Path
) -> None:
    """`--create` with every block held back: exit 2 and no directory (one holding only
    funes.json read as a memory `up to date (commit v0)` to every later push)."""
    claude = isolated_env / ".claude"
    remote = tmp_path / "remote"
    write_claude_session(claude, [("assistant", LEAK)])
    assert run("index").returncode == 0
    for _ in range(2):
        refused = run("push", str(remote), "--create")
        assert refused.returncode == 2, refused.stderr
        assert f"nothing was published and {remote.as_uri()} was not created" in refused.stderr
        assert not remote.exists()
    write_claude_session(claude, CLEAN)
    assert run("index").returncode == 0
    made = run("push", str(remote), "--create")
    assert made.returncode == 0, made.stderr
    assert f"created {remote.as_uri()} (private)" in made.stderr
    assert made.stdout.startswith("pushed 2 chunks to ")


def test_a_push_finding_only_blocks_held_back_before_is_up_to_date_and_exits_0(
    isolated_env: Path, run: Callable[..., Ran], tmp_path: Path
) -> None:
    claude = isolated_env / ".claude"
    remote = str(tmp_path / "remote")
    write_claude_session(claude, CLEAN)
    assert run("index").returncode == 0
    assert run("push", remote, "--create").returncode == 0

    write_claude_session(claude, [("assistant", LEAK)])  # the only new block holds a secret
    assert run("index").returncode == 0
    refused = run("push", remote)
    assert refused.returncode == 2, refused.stderr  # asked to send one block, all of it refused
    assert "nothing was published" in refused.stderr

    again = run("push", remote)  # nothing new since: up to date, the block counted
    assert again.returncode == 0, again.stderr
    assert again.stdout.endswith("; 1 block held back for secrets stays local\n")
    assert " is up to date (commit " in again.stdout
    assert "`funes status` says how to publish it" in again.stderr
    assert "opensesameforever" not in again.stdout + again.stderr

    write_claude_session(claude, [("assistant", OTHER_LEAK)])
    assert run("index").returncode == 0
    assert run("push", remote).returncode == 2  # a new held-back block is refused again
    assert run("push", remote).returncode == 0


def test_a_held_back_block_is_published_by_what_the_push_hint_names_not_by_scrub(
    isolated_env: Path, run: Callable[..., Ran], tmp_path: Path
) -> None:
    claude = isolated_env / ".claude"
    remote = str(tmp_path / "remote")
    write_claude_session(claude, CLEAN)
    assert run("index").returncode == 0
    assert run("push", remote, "--create").returncode == 0
    leak = write_claude_session(claude, [("assistant", LEAK)])
    assert run("index").returncode == 0
    fix = "take the secret out of the transcript, then funes index --yes"

    refused = run("push", remote)
    assert refused.returncode == 2 and f"to publish them: {fix}, then push again" in refused.stderr
    again = run("push", remote)
    assert again.returncode == 0 and f"says how to publish it: {fix}" in again.stderr
    assert "scrub" not in refused.stderr + again.stderr

    # scrub (index-time rules) finds nothing to redact, and the block stays held back …
    assert run("scrub").stdout.startswith("scrubbed ")
    assert "1 block held back for secrets stays local" in run("push", remote).stdout
    # … what the hint names publishes it
    text = leak.path.read_text(encoding="utf-8")
    leak.path.write_text(text.replace("opensesameforever", "the usual one"), encoding="utf-8")
    assert run("index", "--yes").returncode == 0
    published = run("push", remote)
    assert published.returncode == 0 and published.stdout.startswith("pushed 1 chunk to ")
    assert "held back" not in published.stderr


def _pushed_line(run: Callable[..., Ran]) -> tuple[str, dict[str, object]]:
    """(status's `pushed to` line, its `--json` push record)."""
    import json

    agent = run("status", "--format", "agent").stdout
    line = next(line for line in agent.splitlines() if line.startswith("pushed to "))
    (record,) = json.loads(run("status", "--json").stdout)["pushes"]
    return line, record


def test_status_counts_held_back_chunks_once_apart_from_those_not_pushed(
    isolated_env: Path, run: Callable[..., Ran], tmp_path: Path
) -> None:
    """After a push that held a block back, push said `up to date` while status counted that
    chunk as not pushed, beside its own line about chunks held back. Status counts it apart,
    in push's words, and `not pushed` is what the next push sends."""
    claude = isolated_env / ".claude"
    remote = str(tmp_path / "remote")
    write_claude_session(claude, CLEAN)
    write_claude_session(claude, [("assistant", LEAK)])
    assert run("index").returncode == 0
    assert run("push", remote, "--create").returncode == 0
    assert " is up to date " in run("push", remote).stdout

    line, record = _pushed_line(run)
    assert line.endswith(
        "; 0 chunks in 0 sessions not pushed; 1 chunk held back for secrets stays local"
    )
    assert (record["pending_chunks"], record["held_back_chunks"]) == (0, 1)

    write_claude_session(claude, [("user", "and the heron export?")])  # something to send
    assert run("index").returncode == 0
    line, record = _pushed_line(run)
    assert line.endswith(
        "; 1 chunk in 1 session not pushed; 1 chunk held back for secrets stays local"
    )
    assert (record["pending_chunks"], record["held_back_chunks"]) == (1, 1)
    assert run("push", remote).stdout.startswith("pushed 1 chunk to ")


def _hold_push_lock(remote: Path) -> tuple[threading.Event, threading.Thread]:
    """Hold this host's push lock of `remote` in another thread (as the hooks' worker does
    while it publishes) until the returned event is set."""
    rt = Runtime.resolve()
    key = remote_for(as_push_target(parse_memory(str(remote), rt))).key
    held, release = threading.Event(), threading.Event()

    def holder() -> None:
        with PublishQueue(rt.paths).pushing(key) as ok:
            assert ok
            held.set()
            release.wait(30)

    thread = threading.Thread(target=holder)
    thread.start()
    assert held.wait(10)
    return release, thread


def test_a_push_waits_for_another_push_to_the_same_remote_on_this_host(
    isolated_env: Path, run: Callable[..., Ran], tmp_path: Path
) -> None:
    """One push per remote at a time on a host: a push by hand while the worker publishes
    waits for it, says so, then pushes."""
    write_claude_session(isolated_env / ".claude", CLEAN)
    assert run("index").returncode == 0
    remote = tmp_path / "remote"
    release, thread = _hold_push_lock(remote)
    threading.Timer(1.0, release.set).start()
    try:
        made = run("push", str(remote), "--create")
    finally:
        release.set()
        thread.join()
    assert made.returncode == 0, made.stderr
    assert f"another push to {remote.as_uri()} is running on this host" in made.stderr
    assert made.stdout.startswith("pushed 2 chunks to ")


def test_a_push_that_waited_its_time_for_another_one_gives_up_with_exit_75(
    isolated_env: Path, run: Callable[..., Ran], tmp_path: Path
) -> None:
    write_claude_session(isolated_env / ".claude", CLEAN)
    assert run("index").returncode == 0
    remote = tmp_path / "remote"
    release, thread = _hold_push_lock(remote)
    rt = Runtime.resolve()
    try:
        with pytest.raises(PushBusy) as busy:
            run_push(rt, parse_memory(str(remote), rt), PushRequest(create=True), lock_wait_s=0.3)
    finally:
        release.set()
        thread.join()
    assert busy.value.exit_code == 75
    assert "still running on this host" in busy.value.message
    assert not remote.exists()  # nothing was sent


def test_a_bare_word_is_no_directory_and_the_hint_says_how_to_name_one(
    isolated_env: Path, run: Callable[..., Ran], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`push shared --create` is refused (a bare word may be a Hub dataset name the user meant
    as org/repo), and the hint names the directory as a path: `./shared` pushes there."""
    monkeypatch.chdir(tmp_path)
    write_claude_session(isolated_env / ".claude", CLEAN)
    assert run("index").returncode == 0
    refused = run("push", "shared", "--create")
    assert refused.returncode == 1, refused.stderr
    assert "funes: not a memory: 'shared'" in refused.stderr
    assert "`./shared` for one in the current directory" in refused.stderr
    assert not (tmp_path / "shared").exists()
    made = run("push", "./shared", "--create")
    assert made.returncode == 0, made.stderr
    assert (tmp_path / "shared").is_dir()


def test_a_missing_directory_remote_is_said_missing_with_no_word_of_a_token(
    isolated_env: Path, run: Callable[..., Ran], tmp_path: Path
) -> None:
    """A token only hides Hub datasets: a directory that is not there is just missing, and the
    hint offers --create (push, `forget --remote`, and `add` to a shared directory alike)."""
    write_claude_session(isolated_env / ".claude", CLEAN)
    assert run("index").returncode == 0
    nowhere = tmp_path / "nowhere"
    pushed = run("push", str(nowhere))
    assert pushed.returncode == 1, pushed.stderr
    assert f"funes: {nowhere.as_uri()} does not exist; funes does not create" in pushed.stderr
    assert "pass --create" in pushed.stderr
    added = run("add", "claude", str(nowhere))
    assert added.returncode == 1, added.stderr
    assert f"funes: {nowhere.as_uri()} does not exist: nothing was installed" in added.stderr
    forgot = run("forget", "--before", "2100-01-01", "--remote", str(nowhere), "--yes")
    assert forgot.returncode == 1, forgot.stderr
    assert f"funes: {nowhere.as_uri()} does not exist\n" in forgot.stderr
    for ran in (pushed, added, forgot):
        assert "token" not in ran.stderr
    assert not nowhere.exists()


def test_public_on_a_remote_that_exists_already_is_said_to_change_nothing(
    isolated_env: Path, run: Callable[..., Ran], tmp_path: Path
) -> None:
    """`--public` (or `--private`) sets the visibility of a remote `--create` makes; given
    for one that exists it was ignored without a word (a new-user trial)."""
    write_claude_session(isolated_env / ".claude", CLEAN)
    assert run("index").returncode == 0
    remote = tmp_path / "remote"
    made = run("push", str(remote), "--create")
    assert made.returncode == 0 and "note:" not in made.stderr, made.stderr
    write_claude_session(isolated_env / ".claude", [("user", "and the heron feed?")])
    assert run("index").returncode == 0
    again = run("push", str(remote), "--public")
    assert again.returncode == 0, again.stderr
    assert "--public sets the visibility of a remote --create makes" in again.stderr
    assert f"{remote.as_uri()} was there already and keeps its own" in again.stderr
    assert "note:" not in run("push", str(remote)).stderr
