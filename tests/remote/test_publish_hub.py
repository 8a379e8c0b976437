"""Memory that follows you, through the Hub stand-in: `funes add <agent> org/repo` on two
machines, publishing at session boundaries, recall through the binding, and every failure
path of a push made off the agent's path (Hub down or erroring, a refused token, a lost
compare-and-swap race, secrets, kill -9 mid-push, one host's push held while another's runs).

Each machine is its own HOME, FUNES_HOME and HF cache; funes runs as separate processes (the
real huggingface_hub client and pylance against tests/hubfake). A session boundary is what
the installed hook leaves in the spool (`--no-worker`: the test runs the worker itself,
`funes spool drain`, the program the hook starts, so its output can be read).
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
from hubfake import HubFake
from support.claude import WrittenSession, write_claude_session
from support.hub import (
    TOKENS,
    funes,
    index_without_redaction,
    machine,
    minted_github_token,
)
from support.spool import fire_hook

pytestmark = [pytest.mark.hub, pytest.mark.models]

REPO = "team/agent-memory"
LABEL = f"hf://datasets/{REPO}"
RETRY = "0.2,0.2"  # FUNES_PUSH_RETRY_S: three attempts, 0.2 s apart


@pytest.fixture
def hub(tmp_path: Path) -> Iterator[HubFake]:
    with HubFake(tmp_path / "hub-state", TOKENS) as fake:
        yield fake


def host(tmp_path: Path, name: str, hub: HubFake, **extra: str) -> dict[str, str]:
    """One simulated machine with Claude Code set up (its home folder exists)."""
    env = machine(tmp_path, name, hub, FUNES_PUSH_RETRY_S=RETRY, **extra)
    (Path(env["HOME"]) / ".claude").mkdir(exist_ok=True)
    return env


def session(env: dict[str, str], turns: list[tuple[str, str]]) -> WrittenSession:
    return write_claude_session(Path(env["HOME"]) / ".claude", turns)


def boundary(env: dict[str, str], written: WrittenSession, event: str = "SessionEnd") -> None:
    """What Claude Code's hook leaves in the spool at `event` (no worker started)."""
    payload = {
        "session_id": written.session_id,
        "transcript_path": str(written.path),
        "cwd": "/home/dev/app",
        "hook_event_name": event,
    }
    spool = Path(env["FUNES_HOME"]) / "spool"
    fire_hook(spool, payload, event=event, worker=False, env=env)


def drain(env: dict[str, str]) -> dict[str, int]:
    """Run the worker the hook starts; returns the counts of its `drain:` line."""
    done = funes(env, "spool", "drain")
    assert done.returncode == 0, done.stderr
    line = next(ln for ln in done.stderr.splitlines() if " drain: " in ln)
    return {k: int(v) for k, v in (p.split("=") for p in line.split() if "=" in p)}


def added(env: dict[str, str], *flags: str) -> subprocess.CompletedProcess[str]:
    done = funes(env, "add", "claude", REPO, *flags)
    assert done.returncode == 0, done.stderr
    return done


def status(env: dict[str, str]) -> str:
    done = funes(env, "status", "--format", "agent")
    assert done.returncode == 0, done.stderr
    return done.stdout


def binding_line(env: dict[str, str]) -> str:
    return next(ln for ln in status(env).splitlines() if ln.startswith("binding claude_code:"))


def remote_ids(hub: HubFake, tmp_path: Path, repo: str = REPO) -> Counter[str]:
    import lance

    tree = hub.checkout(repo, tmp_path / f"checkout-{len(list(tmp_path.glob('checkout-*')))}")
    ids = lance.dataset(str(tree / "chunks.lance")).to_table(columns=["id"]).column("id")
    return Counter(str(v) for v in ids.to_pylist())


def local_ids(env: dict[str, str]) -> set[str]:
    import sqlite3

    db = Path(env["FUNES_HOME"]) / "data" / "memory.db"
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
        return {r[0] for r in conn.execute("select id from chunks")}


def commits(hub: HubFake, repo: str = REPO) -> int:
    return len(hub.state.history("dataset", repo))


A_TURNS = [
    ("user", "why does the pangolin ledger drift at month end?"),
    ("assistant", "The pangolin ledger rounds each line; we now round the invoice total once."),
]
B_OLD = [
    ("user", "what is the quokka deploy window?"),
    ("assistant", "Quokka deploys go out on Tuesdays after the 10:00 standup."),
]
B_NEW = [
    ("user", "did the pangolin ledger fix reach the second warehouse?"),
    ("assistant", "Yes: the pangolin ledger fix shipped to the second warehouse this morning."),
]


def test_a_session_end_publishes_and_a_second_host_joins_and_recalls_both_hosts_turns(
    tmp_path: Path, hub: HubFake
) -> None:
    a, b = host(tmp_path, "a", hub), host(tmp_path, "b", hub)
    made = added(a, "--create", "--yes")
    assert f"created {LABEL} (private)" in made.stderr and f"bound to {LABEL}" in made.stderr
    assert hub.state.is_private("dataset", REPO)
    claude_json = json.loads((Path(a["HOME"]) / ".claude.json").read_text())
    assert claude_json["mcpServers"]["funes"]["args"][-2:] == ["mcp", LABEL]

    first = session(a, A_TURNS)
    boundary(a, first, "Stop")
    assert drain(a)["pushes"] == 0 and commits(hub) == 1  # a turn end indexes, never publishes
    boundary(a, first, "SessionEnd")
    counts = drain(a)
    assert counts["publish-requests"] == 1 and counts["pushes"] == 1, counts
    assert commits(hub) == 2
    assert remote_ids(hub, tmp_path) == Counter(local_ids(a))
    line = binding_line(a)
    assert f"binding claude_code: {LABEL}; last push " in line
    assert "(2 chunks sent, 0 held back); 0 chunks in 0 sessions not pushed" in line

    session(b, B_OLD)  # B's past session: the first index and the first push carry it
    joined = added(b, "--yes")
    assert "pushed 2 chunks" in joined.stderr, joined.stderr
    assert Counter(remote_ids(hub, tmp_path)) == Counter(local_ids(a) | local_ids(b))
    again = added(b, "--yes")  # idempotent: how a host re-joins
    assert "nothing to change" in again.stderr and "is up to date" in again.stderr
    assert commits(hub) == 3

    newest = session(b, B_NEW)
    boundary(b, newest, "Stop")
    assert drain(b)["pushes"] == 0  # indexed on B, not published yet
    recalled = funes(b, "recall", "pangolin ledger", "--memory", REPO, "--neighbors", "0")
    assert recalled.returncode == 0, recalled.stderr
    hits = [ln for ln in recalled.stdout.splitlines() if ln.startswith("  → get ")]
    by_session = {ln.split()[2]: ln.split()[-1] for ln in hits}
    assert by_session[first.session_id] == LABEL  # A's turn, from the Hub
    assert by_session[newest.session_id] == "local"  # B's own turn ten minutes ago
    assert len(hits) == len(set(hits))
    session_id, turn = next(ln.split()[2:4] for ln in hits if ln.endswith(" local"))
    shown = funes(b, "get", session_id, turn, "--memory", "local", "--format", "agent")
    assert shown.returncode == 0 and "pangolin ledger" in shown.stdout, shown.stderr


def test_hub_down_or_erroring_retries_with_backoff_parks_and_the_next_boundary_publishes(
    tmp_path: Path, hub: HubFake
) -> None:
    a = host(tmp_path, "a", hub)
    added(a, "--create", "--yes")
    written = session(a, A_TURNS)
    hub.fail(503)
    boundary(a, written)
    counts = drain(a)
    assert (counts["pushes"], counts["push-failures"], counts["push-parked"]) == (0, 3, 1)
    line = binding_line(a)
    assert "; parked: cannot reach" in line and f"fix: funes push {REPO}" in line, line
    assert f"next: funes push {REPO}" in status(a)

    hub.fail(None)
    hub.stop()  # down: connections refused
    boundary(a, written)  # the next boundary retries (and parks again: still down)
    counts = drain(a)
    assert (counts["push-failures"], counts["push-parked"]) == (3, 1)
    assert commits(hub) == 1

    hub.start()
    boundary(a, written)
    counts = drain(a)
    assert (counts["pushes"], counts["push-failures"]) == (1, 0)
    assert remote_ids(hub, tmp_path) == Counter(local_ids(a))
    assert "parked" not in binding_line(a) and "attention: publishing" not in status(a)


def test_a_refused_token_parks_at_once_with_the_command_that_fixes_it(
    tmp_path: Path, hub: HubFake
) -> None:
    a = host(tmp_path, "a", hub)
    added(a, "--create", "--yes")
    expired = dict(a, HF_TOKEN="hf_expired_token")
    boundary(expired, session(expired, A_TURNS))
    counts = drain(expired)
    assert (counts["push-failures"], counts["push-parked"]) == (1, 1)  # no retry can fix it
    line = binding_line(expired)
    assert "refused these credentials" in line
    assert f"fix: hf auth login (a token that can write to {REPO}), then funes push {REPO}" in line
    fixed = funes(a, "push", REPO)  # the fix: a good token, then a push
    assert fixed.returncode == 0, fixed.stderr
    assert "parked" not in binding_line(a)


def test_two_hosts_at_a_boundary_race_and_both_land_without_a_duplicate(
    tmp_path: Path, hub: HubFake
) -> None:
    a, b = host(tmp_path, "a", hub), host(tmp_path, "b", hub)
    added(a, "--create", "--yes")
    added(b, "--yes")
    for env, turns in ((a, A_TURNS), (b, B_NEW)):
        boundary(env, session(env, turns))
    hub.config.rendezvous = 2  # both commits wait for each other: one must lose the race
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "funes", "spool", "drain"],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for env in (a, b)
    ]
    outs = [p.communicate(timeout=300) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outs
    assert all("pushes=1 push-failures=0" in err for _, err in outs), outs
    statuses = [s for _, path, s in hub.log if path.endswith("/commit/main")]
    assert statuses.count(412) >= 1 and statuses.count(200) == 2
    assert remote_ids(hub, tmp_path) == Counter(local_ids(a) | local_ids(b))


def test_secrets_park_a_push_that_holds_only_secrets_and_stay_local_when_others_publish(
    tmp_path: Path, hub: HubFake
) -> None:
    a = host(tmp_path, "a", hub)
    added(a, "--create", "--yes")
    token = minted_github_token()
    secret = session(a, [("assistant", "the deploy token is " + token)])
    index_without_redaction(a)  # an older index left the raw secret in the memory
    boundary(a, secret)
    counts = drain(a)
    assert (counts["push-failures"], counts["push-parked"]) == (1, 1)
    line = binding_line(a)
    assert "holds a secret: nothing was published" in line
    assert f"fix: funes scrub, then funes push {REPO}" in line
    assert commits(hub) == 1

    clean = session(a, A_TURNS)
    boundary(a, clean)  # the next boundary retries: the clean turns go, the secret stays
    counts = drain(a)
    assert counts["pushes"] == 1, counts
    assert "(2 chunks sent, 1 held back)" in binding_line(a)
    for path in hub.stored_bytes():
        assert token.encode() not in path.read_bytes(), path


def test_a_push_killed_mid_commit_then_pushed_again_leaves_the_rows_of_one_clean_push(
    tmp_path: Path, hub: HubFake
) -> None:
    tmpdir = tmp_path / "tmpdir"  # a killed push once left its staging there, for good
    tmpdir.mkdir()
    a = host(tmp_path, "a", hub, TMPDIR=str(tmpdir))
    staging = Path(a["FUNES_HOME"]) / "data" / "staging"
    session(a, A_TURNS)
    session(a, B_OLD)
    assert funes(a, "index", "--yes").returncode == 0
    for repo in (REPO, "team/clean"):
        hub.state.create("dataset", repo, private=True)

    def killed_mid_commit(*, applied: bool) -> None:
        hub.hold_commits(1, apply=applied)
        log = tmp_path / f"push-{applied}.log"
        with log.open("w") as err:
            proc = subprocess.Popen(
                [sys.executable, "-m", "funes", "--debug", "push", REPO, "--yes"],
                env=a,
                stdout=err,
                stderr=err,
            )
            held = hub.config.held.wait(timeout=240)
            proc.send_signal(signal.SIGKILL)
            proc.wait(timeout=30)
        assert held, f"the push never reached its commit\n{log.read_text()[-3000:]}\n{hub.log[-8:]}"
        hub.release()
        hub.config.releasing.wait(timeout=60)  # the held request saw the release

    killed_mid_commit(applied=False)  # the commit never landed
    assert commits(hub) == 1
    killed_mid_commit(applied=True)  # it lands, but the pusher died before its receipt
    deadline = time.monotonic() + 60
    while commits(hub) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert commits(hub) == 2
    assert [p.name[:5] for p in staging.iterdir() if p.is_dir()] == ["push-"]  # the last kill's
    again = funes(a, "push", REPO, "--yes")
    assert again.returncode == 0, again.stderr
    assert "is up to date" in again.stdout
    assert [p.name for p in staging.iterdir()] == [".lock"]  # swept by the next push
    assert list(tmpdir.glob("funes-*")) == []  # (onnxruntime keeps its .ses there)
    clean = funes(a, "push", "team/clean", "--yes")
    assert clean.returncode == 0, clean.stderr
    assert remote_ids(hub, tmp_path) == remote_ids(hub, tmp_path, "team/clean")
    assert max(remote_ids(hub, tmp_path).values()) == 1


def test_a_hosts_push_held_mid_commit_does_not_block_another_hosts_push(
    tmp_path: Path, hub: HubFake
) -> None:
    a, b = host(tmp_path, "a", hub), host(tmp_path, "b", hub)
    added(a, "--create", "--yes")
    added(b, "--yes")
    boundary(a, session(a, A_TURNS))
    boundary(b, session(b, B_NEW))
    hub.hold_commits(1)  # A's commit arrives first and hangs
    slow = subprocess.Popen(
        [sys.executable, "-m", "funes", "spool", "drain"],
        env=a,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert hub.config.held.wait(timeout=240), "A's push never reached its commit"
    assert drain(b)["pushes"] == 1  # B publishes while A's commit hangs
    assert commits(hub) == 2
    hub.release()  # A's commit now names a stale parent: 412, re-read, retry, land
    _, err = slow.communicate(timeout=300)
    assert slow.returncode == 0 and "pushes=1" in err, err
    assert remote_ids(hub, tmp_path) == Counter(local_ids(a) | local_ids(b))


def test_a_boundary_is_served_only_by_a_push_that_started_after_its_turns_were_indexed(
    tmp_path: Path, hub: HubFake
) -> None:
    """A push running while another worker waits to index a session's last turns must not
    count that session's boundary as served (found with the real Claude Code: the end of a
    session was 'published' by a push that could not hold its turns yet)."""
    from funes.store.lock import writer_lock

    a = host(tmp_path, "a", hub)
    added(a, "--create", "--yes")
    boundary(a, session(a, A_TURNS))
    hub.hold_commits(1)  # the first worker's push hangs at its commit
    first = subprocess.Popen(
        [sys.executable, "-m", "funes", "spool", "drain"],
        env=a,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert hub.config.held.wait(timeout=240), "the first push never reached its commit"
    later = session(a, B_NEW)
    boundary(a, later)
    lock = Path(a["FUNES_HOME"]) / "data" / "memory.lock"
    with writer_lock(lock):  # the second worker claims the boundary, then waits to index it
        second = subprocess.Popen(
            [sys.executable, "-m", "funes", "spool", "drain"],
            env=a,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        time.sleep(3)  # it has claimed the entry and waits for the memory
        hub.release()  # the first push lands, and pushes again (nothing new is indexed yet)
        _, err = first.communicate(timeout=300)
        assert first.returncode == 0, err
    _, err = second.communicate(timeout=300)  # indexes the later session, then publishes it
    assert second.returncode == 0 and "pushes=1" in err, err
    assert remote_ids(hub, tmp_path) == Counter(local_ids(a))
