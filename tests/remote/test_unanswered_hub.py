"""A Hub endpoint that takes connections but does not answer (a proxy or firewall swallowing
traffic) fails a remote read, a push and the spool worker's publishing within funes.hf's
bounds, with an error naming the endpoint and what to check; a slow upload that keeps
arriving is not cut short. The real huggingface_hub client against the loopback stand-in's
faults (tests/hubfake: `silence`, `hold_commits`, `pace`), funes run as separate processes
with the bounds set small (support.hub.bounded).

Before the fix huggingface_hub's HTTP client had no timeout: `recall --memory org/repo`,
`status org/repo` and `push` waited forever (still waiting after 60 s), and a publishing
worker held the remote's push lock as long.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
from hubfake import HubFake
from support.claude import write_claude_session
from support.hub import TOKENS, bounded, funes, machine
from support.spool import fire_hook

pytestmark = [pytest.mark.hub, pytest.mark.models]

REPO = "team/quiet-memory"
LABEL = f"hf://datasets/{REPO}"
ANSWER_S = 1.0  # funes.hf.ANSWER_TIMEOUT_S in the child
COMMIT_S = 2.0  # funes.hf.COMMIT_ANSWER_TIMEOUT_S in the child
BOUNDS = {"ANSWER_TIMEOUT_S": ANSWER_S, "COMMIT_ANSWER_TIMEOUT_S": COMMIT_S}
# What a `funes` process takes besides the wait: starting, loading the query model, a loaded
# machine's slack. A wait without a bound runs into the 30 s cap instead (TimeoutExpired).
SLACK_S = 12.0
CAP_S = 30.0
TURNS = [
    ("user", "why does the heron importer drop rows at midnight?"),
    ("assistant", "The heron importer reads the day in UTC; rows after 00:00 local are skipped."),
]
MORE = [
    ("user", "and the ibis exporter?"),
    ("assistant", "The ibis exporter batches 500 rows and retries a failed batch once."),
]


@pytest.fixture
def hub(tmp_path: Path) -> Iterator[HubFake]:
    with HubFake(tmp_path / "hub-state", TOKENS) as fake:
        yield fake


def indexed(env: dict[str, str], turns: list[tuple[str, str]]) -> None:
    write_claude_session(Path(env["HOME"]) / ".claude", turns)
    done = funes(env, "index", "--yes")
    assert done.returncode == 0, done.stderr


def timed(env: dict[str, str], *args: str, **bounds: float) -> tuple[int, str, str, float]:
    """(exit code, stdout, stderr, seconds) of `funes ARGS` with BOUNDS (and `bounds`)."""
    started = time.monotonic()
    done = bounded(env, {**BOUNDS, **bounds}, *args, timeout=CAP_S)
    return done.returncode, done.stdout, done.stderr, time.monotonic() - started


def silent(hub: HubFake, bound_s: float) -> str:
    return (
        f"{hub.url} (HF_ENDPOINT) took the connection but did not answer within {bound_s:g} s; "
        "check the network, any proxy (HTTPS_PROXY) or firewall, and HF_ENDPOINT"
    )


def commits(hub: HubFake) -> int:
    return len(hub.state.history("dataset", REPO))


def remote_ids(hub: HubFake, dest: Path) -> Counter[str]:
    import lance

    tree = hub.checkout(REPO, dest)
    ids = lance.dataset(str(tree / "chunks.lance")).to_table(columns=["id"]).column("id")
    return Counter(str(v) for v in ids.to_pylist())


def test_reading_a_remote_through_a_silent_hub_fails_within_the_bound_naming_it(
    tmp_path: Path, hub: HubFake
) -> None:
    owner, fresh = machine(tmp_path, "owner", hub), machine(tmp_path, "fresh", hub)
    indexed(owner, TURNS)
    assert funes(owner, "push", REPO, "--create", "--yes").returncode == 0
    first = funes(owner, "recall", "heron", "importer", "--memory", REPO)
    assert "rows after 00:00 local are skipped" in first.stdout, first.stderr
    hub.silence()

    code, _, err, took = timed(fresh, "recall", "heron", "importer", "--memory", REPO)
    assert code == 1, err
    assert f"cannot reach the Hugging Face Hub for {LABEL}: {silent(hub, ANSWER_S)}" in err
    assert "never read on this machine" in err and "Traceback" not in err
    assert took < ANSWER_S + SLACK_S, took

    code, out, err, took = timed(fresh, "status", REPO)  # reports it, as status does
    assert code == 0, err
    assert silent(hub, ANSWER_S) in out and "Traceback" not in err, out
    assert took < ANSWER_S + SLACK_S, took

    # a machine that read it before falls back to its cached copy instead of waiting
    code, out, err, took = timed(owner, "recall", "heron", "importer", "--memory", REPO)
    assert code == 0, err
    assert "rows after 00:00 local are skipped" in out
    assert f"{LABEL} unreachable: read it as of cached commit" in err
    assert took < ANSWER_S + SLACK_S, took
    assert {status for _, _, status in hub.log[-3:]} == {0}  # nothing was answered


def test_a_push_to_a_silent_hub_or_one_that_swallows_the_commit_fails_within_the_bound(
    tmp_path: Path, hub: HubFake
) -> None:
    a = machine(tmp_path, "a", hub)
    indexed(a, TURNS)
    hub.state.create("dataset", REPO, private=True)
    hub.silence()
    code, _, err, took = timed(a, "push", REPO, "--yes")
    assert code == 1, err
    assert f"cannot reach {LABEL}: nothing was pushed; {silent(hub, ANSWER_S)}" in err
    assert "Traceback" not in err
    assert took < ANSWER_S + SLACK_S, took

    hub.silence(False)
    hub.hold_commits(1, apply=False)  # the link dies once the commit is sent: no answer
    code, _, err, took = timed(a, "push", REPO, "--yes")
    assert code == 1, err
    assert silent(hub, COMMIT_S) in err and "Traceback" not in err
    assert took < COMMIT_S + SLACK_S, took
    assert hub.config.held.is_set()
    hub.release()
    assert hub.config.releasing.wait(timeout=10)
    assert commits(hub) == 1  # nothing half-committed: the initial commit only

    again = funes(a, "push", REPO, "--yes")  # the push lock is free: no wait, it lands
    assert again.returncode == 0, again.stderr
    assert "waiting" not in again.stderr and "pushed 2 chunks" in again.stdout
    assert commits(hub) == 2
    assert set(remote_ids(hub, tmp_path / "checkout").values()) == {1}


def test_the_publishing_worker_retries_and_parks_a_silent_hub_then_publishes(
    tmp_path: Path, hub: HubFake
) -> None:
    a = machine(tmp_path, "a", hub, FUNES_PUSH_RETRY_S="0.2,0.2")  # three attempts
    (Path(a["HOME"]) / ".claude").mkdir()
    added = funes(a, "add", "claude", REPO, "--create", "--yes")
    assert added.returncode == 0, added.stderr
    written = write_claude_session(Path(a["HOME"]) / ".claude", MORE)
    payload = {
        "session_id": written.session_id,
        "transcript_path": str(written.path),
        "cwd": "/home/dev/app",
        "hook_event_name": "SessionEnd",
    }
    fire_hook(Path(a["FUNES_HOME"]) / "spool", payload, event="SessionEnd", worker=False, env=a)
    hub.silence()
    code, _, err, took = timed(a, "spool", "drain")
    assert code == 0, err
    assert "pushes=0 push-failures=3 push-parked=1" in err, err
    assert took < 3 * (ANSWER_S + 0.2) + SLACK_S, took
    status = funes(a, "status", "--format", "agent").stdout
    reason = f"cannot reach {LABEL}: nothing was pushed; {silent(hub, ANSWER_S)}"
    assert f"parked: {reason}; fix: funes push {REPO}" in status, status

    hub.silence(False)
    by_hand = funes(a, "push", REPO)  # the worker let go of the push lock
    assert by_hand.returncode == 0, by_hand.stderr
    assert "waiting" not in by_hand.stderr and "pushed 2 chunks" in by_hand.stdout
    assert "parked" not in funes(a, "status", "--format", "agent").stdout


def test_a_slow_upload_that_keeps_arriving_is_not_cut_short(tmp_path: Path, hub: HubFake) -> None:
    """Passes before the fix too; it keeps the fix from being a deadline. The commit's body
    (~29 KiB) fits in the loopback socket buffers, so the client sees the slow upload as a
    slow answer: what lets it land is the commit's own generous answer bound, not the 1 s
    bounds of other requests."""
    a = machine(tmp_path, "a", hub)
    indexed(a, TURNS)
    hub.state.create("dataset", REPO, private=True)
    hub.pace(2048, 0.25)  # uploads read 2 KiB at a time: the commit takes seconds
    started = time.monotonic()
    done = bounded(  # the commit's own answer bound stays as shipped
        a, {"ANSWER_TIMEOUT_S": ANSWER_S, "UPLOAD_STALL_TIMEOUT_S": ANSWER_S}, "push", REPO,
        "--yes", timeout=CAP_S,
    )  # fmt: skip
    took = time.monotonic() - started
    assert done.returncode == 0, done.stderr
    assert "pushed 2 chunks" in done.stdout
    assert took > 3 * ANSWER_S, took  # the commit alone: ~29 KiB at 8 KiB/s, ~3.5 s
    commit = next(t for t in hub.log if "/commit/" in t[1])
    assert commit[2] == 200
