"""Project memories: `funes curate` attributes sessions to a repository by their checkout's git
remotes, records this host's review in a human-readable file, a push ships only the included
sessions, and `status` counts the sessions waiting for review."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from support.claude import WrittenSession, write_claude_session
from support.cli import Ran

from funes.commands import (
    IndexRequest,
    PushRequest,
    curate_decide,
    curate_review,
    run_index,
    run_push,
    run_status,
)
from funes.commands.add import create_shared
from funes.errors import UsageError
from funes.memory import MemoryKind, MemoryRef, Runtime, parse_memory
from funes.traces import checkout_identities, repo_identity

pytestmark = pytest.mark.models


@pytest.mark.parametrize(
    ("url", "identity"),
    [
        ("git@github.com:Acme/Widget.git", "acme/widget"),
        ("https://github.com/acme/widget", "acme/widget"),
        ("https://github.com/acme/widget.git/", "acme/widget"),
        ("ssh://git@git.example.com:2222/acme/widget.git", "acme/widget"),
        ("https://user@gitlab.com/group/sub/widget.git", "group/sub/widget"),
        ("/srv/git/widget.git", None),
        ("../widget", None),
        ("https://github.com/widget", None),
    ],
)
def test_a_git_remote_url_names_its_repository(url: str, identity: str | None) -> None:
    assert repo_identity(url) == identity


def checkout(root: Path, *remotes: tuple[str, str]) -> Path:
    git = root / ".git"
    git.mkdir(parents=True)
    lines = ["[core]", "\tbare = false"]
    for name, url in remotes:
        lines += [f'[remote "{name}"]', f"\turl = {url}", "\tfetch = +refs/heads/*:refs/remotes/*"]
    (git / "config").write_text("\n".join(lines) + "\n")
    return root


def test_a_checkout_and_its_worktrees_and_subfolders_name_their_remotes(tmp_path: Path) -> None:
    main = checkout(
        tmp_path / "widget",
        ("upstream", "https://github.com/upstream/widget"),
        ("origin", "git@github.com:acme/widget.git"),
    )
    assert checkout_identities(main) == ("acme/widget", "upstream/widget")  # origin first
    (main / "src" / "deep").mkdir(parents=True)
    assert checkout_identities(main / "src" / "deep") == ("acme/widget", "upstream/widget")
    linked = main / ".git" / "worktrees" / "feature"
    linked.mkdir(parents=True)
    (linked / "commondir").write_text("../..\n")
    worktree = tmp_path / "feature"
    worktree.mkdir()
    (worktree / ".git").write_text(f"gitdir: {linked}\n")
    assert checkout_identities(worktree)[0] == "acme/widget"
    assert checkout_identities(tmp_path / "nowhere") == ()


def host(tmp_path: Path) -> Runtime:
    return Runtime.resolve()


def session(rt: Runtime, cwd: Path, prompt: str, answer: str) -> WrittenSession:
    return write_claude_session(
        rt.homes.home / ".claude", [("user", prompt), ("assistant", answer)], cwd=str(cwd)
    )


def shared(rt: Runtime, path: Path) -> MemoryRef:
    create_shared(rt, MemoryRef(path.resolve().as_uri(), MemoryKind.DIR, path.resolve()))
    return parse_memory(str(path), rt)


def pushed_sessions(path: Path) -> set[str]:
    import lance

    table = lance.dataset(str(path / "chunks.lance")).to_table(columns=["session_id"])
    return set(table.column("session_id").to_pylist())


def test_a_push_to_a_project_memory_ships_only_the_sessions_its_review_included(
    tmp_path: Path,
) -> None:
    rt = Runtime.resolve()
    widget = checkout(tmp_path / "widget", ("origin", "git@github.com:acme/widget.git"))
    other = checkout(tmp_path / "other", ("origin", "https://github.com/acme/other"))
    keep = session(rt, widget, "fix the flaky retry test in widget", "Raised the timeout to 5 s.")
    private = session(rt, widget / "src", "draft my salary review notes", "Here is a draft.")
    elsewhere = session(rt, other, "rename the other service", "Renamed it.")
    run_index(rt, parse_memory(None, rt), IndexRequest(unbudgeted=True))
    memory = shared(rt, tmp_path / "widget-memory")

    outcome = curate_review(rt, memory, None, cwd=widget)  # the project of the checkout here
    assert outcome.project == "acme/widget"
    assert {c.session_id for c in outcome.pending} == {keep.session_id, private.session_id}
    card = next(c for c in outcome.cards if c.session_id == keep.session_id)
    assert card.prompts == ("fix the flaky retry test in widget",) and card.turns == 2

    decided = curate_decide(
        rt, outcome, {keep.session_id[:8]: "include", private.session_id: "exclude"}
    )
    assert (decided.count("include"), decided.count("exclude"), decided.pending) == (1, 1, [])
    text = decided.path.read_text()
    assert f"include {keep.session_id}  " in text and "fix the flaky retry test" in text
    assert f"exclude {private.session_id}  " in text
    assert "project acme/widget" in text and oct(decided.path.stat().st_mode & 0o777) == "0o600"

    report = run_push(rt, memory, PushRequest(assume_yes=True))
    assert report.pushed == 2
    assert pushed_sessions(tmp_path / "widget-memory") == {keep.session_id}
    assert elsewhere.session_id not in pushed_sessions(tmp_path / "widget-memory")

    [line] = run_status(rt, parse_memory(None, rt)).curation
    assert (line.project, line.included, line.excluded, line.pending) == ("acme/widget", 1, 1, 0)
    later = session(rt, widget, "port widget to the new API", "Ported.")
    run_index(rt, parse_memory(None, rt), IndexRequest(unbudgeted=True))
    report_status = run_status(rt, parse_memory(None, rt))
    assert report_status.curation[0].pending == 1
    assert f"funes curate {memory.label}" in report_status.next_steps
    assert run_push(rt, memory, PushRequest()).up_to_date  # nothing new is included
    assert later.session_id not in pushed_sessions(tmp_path / "widget-memory")


def test_a_project_memory_keeps_its_project_and_unknown_sessions_are_refused(
    tmp_path: Path,
) -> None:
    rt = Runtime.resolve()
    widget = checkout(tmp_path / "widget", ("origin", "git@github.com:acme/widget.git"))
    session(rt, widget, "fix the flaky retry test in widget", "Raised the timeout.")
    run_index(rt, parse_memory(None, rt), IndexRequest(unbudgeted=True))
    memory = shared(rt, tmp_path / "widget-memory")
    outcome = curate_review(rt, memory, "acme/widget", cwd=tmp_path)
    curate_decide(rt, outcome, {})
    with pytest.raises(UsageError, match="project memory of acme/widget"):
        curate_review(rt, memory, "acme/other", cwd=tmp_path)
    with pytest.raises(UsageError, match="no session"):
        curate_decide(rt, outcome, {"does-not-exist": "include"})
    with pytest.raises(UsageError, match="which project"):
        curate_review(rt, shared(rt, tmp_path / "m2"), None, cwd=tmp_path)


def test_curate_off_a_terminal_lists_the_sessions_and_records_flags(
    tmp_path: Path, run: Callable[..., Ran]
) -> None:
    rt = Runtime.resolve()
    widget = checkout(tmp_path / "widget", ("origin", "git@github.com:acme/widget.git"))
    first = session(rt, widget, "fix the flaky retry test in widget", "Raised the timeout.")
    run_index(rt, parse_memory(None, rt), IndexRequest(unbudgeted=True))
    shared(rt, tmp_path / "mem")

    def funes(*args: str) -> tuple[int, str, str]:
        ran = run(*args)
        return ran.returncode, ran.stdout, ran.stderr

    code, out, err = funes("curate", str(tmp_path / "mem"), "acme/widget")
    assert code == 0 and out.startswith(f"pending {first.session_id} ")
    assert "1 waiting for review" in err and "--include <session>" in err
    code, out, err = funes("curate", str(tmp_path / "mem"), "--include", first.session_id[:8])
    assert code == 0 and out.startswith(f"include {first.session_id} ")
    assert "1 included, 0 excluded, 0 waiting for review" in err
    code, _, err = funes("curate", str(tmp_path / "local.db"))
    assert code == 1 and "a project memory is shared" in err


def test_curating_a_memory_of_no_session_here_says_what_a_push_will_leave_out(
    tmp_path: Path, run: Callable[..., Ran]
) -> None:
    """The new-user trial: `curate <memory> acme/widget` on a host whose sessions ran
    elsewhere said only `0 included, 0 excluded, 0 waiting for review`, then `push` said
    `up to date` while `status` counted every chunk as not pushed."""
    rt = Runtime.resolve()
    other = checkout(tmp_path / "other", ("origin", "https://github.com/acme/other"))
    first = session(rt, other, "rename the other service", "Renamed it.")
    second = session(rt, tmp_path, "notes outside any checkout", "Noted.")
    run_index(rt, parse_memory(None, rt), IndexRequest(unbudgeted=True))
    shared(rt, tmp_path / "mem")

    def funes(*args: str) -> tuple[int, str, str]:
        ran = run(*args)
        return ran.returncode, ran.stdout, ran.stderr

    code, _, err = funes("curate", str(tmp_path / "mem"), "acme/widget")
    assert code == 0 and "0 included, 0 excluded, 0 waiting for review" in err
    assert "from now on a push to" in err and "sends only the sessions of acme/widget" in err
    assert "0 of this host's 2 sessions" in err
    assert "none of this host's sessions ran in a checkout" in err and "--include" in err

    code, out, err = funes("push", str(tmp_path / "mem"), "--yes")
    assert code == 0 and "is up to date" not in out, out
    assert "chunks in 2 sessions not included were not sent" in out
    assert "project memory of acme/widget" in err and "funes curate" in err

    [pushed] = run_status(rt, parse_memory(None, rt)).pushes
    assert (pushed.pending_chunks, pushed.pending_sessions) == (0, 0)  # what a push would send
    assert pushed.left_out_sessions == 2 and pushed.left_out_chunks > 0
    code, out, _ = funes("status", "--format", "agent")
    assert f"sessions not pushed ({pushed.left_out_chunks} chunks in 2 sessions not included" in out

    code, out, err = funes("curate", str(tmp_path / "mem"), "--include", first.session_id)
    assert code == 0 and "none of this host's sessions" not in err
    code, out, err = funes("push", str(tmp_path / "mem"))
    assert code == 0 and out.startswith("pushed ") and "1 session not included" in err
    assert pushed_sessions(tmp_path / "mem") == {first.session_id}
    assert second.session_id not in pushed_sessions(tmp_path / "mem")
