"""Sharing through a plain directory (DirRemote), in process: the same export, push and read
code as the Hub path, with real SQLite memories, real Lance datasets and the real ONNX embedder."""

from __future__ import annotations

import os
import stat
import threading
from dataclasses import replace
from pathlib import Path

import pytest
from support.claude import write_claude_session

from funes.chunks import EMBED_INPUT
from funes.commands.get import run_get
from funes.commands.index import IndexRequest, run_index
from funes.commands.push import PushRequest, run_push
from funes.commands.recall import RecallRequest, run_recall
from funes.commands.status import run_status
from funes.errors import PushRefused, RemoteError, UsageError
from funes.memory import MemoryKind, Runtime, parse_memory
from funes.paths import Paths
from funes.redact import Finding, RuleScanner
from funes.remote import lance_export

pytestmark = pytest.mark.models


def _runtime(root: Path) -> Runtime:
    rt = Runtime.resolve()
    rt.paths = Paths(root / "data", root / "spool", root / "logs")
    return rt


def _index(rt: Runtime, tmp_path: Path, name: str, turns: list[tuple[str, str]]) -> None:
    home = tmp_path / f"{name}-claude"
    write_claude_session(home, turns)
    run_index(rt, parse_memory(None, rt), IndexRequest(path=home / "projects"))


def test_a_directory_round_trip_recalls_and_gets_what_was_pushed(tmp_path: Path) -> None:
    rt = _runtime(tmp_path / "a")
    _index(
        rt,
        tmp_path,
        "a",
        [
            ("user", "what broke the albatross build?"),
            ("assistant", "The albatross build broke on a stale protobuf cache."),
        ],
    )
    shared = tmp_path / "shared"
    report = run_push(rt, parse_memory(str(shared), rt), PushRequest(create=True, assume_yes=True))
    assert report.pushed == 2 and report.remote_chunks == 2 and report.created
    assert (shared / "chunks.lance").is_dir() and (shared / "funes.json").is_file()
    card = (shared / "README.md").read_text()
    assert (
        "Private by default" in card and "| `vector` | fixed_size_list<float32, dim> | no |" in card
    )

    ref = parse_memory(str(shared), rt)
    assert ref.kind is MemoryKind.DIR
    reader = _runtime(tmp_path / "b")
    outcome = run_recall(reader, ref, RecallRequest("albatross build protobuf"))
    assert (
        outcome.result.hits[0].chunk.text == "The albatross build broke on a stale protobuf cache."
    )
    assert outcome.memory == shared.resolve().as_uri()
    hit = outcome.result.hits[0].chunk
    turns = run_get(
        reader, parse_memory(outcome.memory, reader), hit.session_id, hit.turn_id, window=1
    )
    assert [t.blocks[0] for t in turns.turns] == [
        "what broke the albatross build?",
        "The albatross build broke on a stale protobuf cache.",
    ]
    status = run_status(reader, ref)
    assert status.exists and status.stats is not None and status.stats.chunks == 2


def test_the_lance_schema_is_pinned(tmp_path: Path) -> None:
    import pyarrow as pa

    schema = lance_export.arrow_schema("m@1", 384)
    expected = [
        ("id", pa.string(), False),
        ("text", pa.string(), False),
        ("session_id", pa.string(), False),
        ("workdir", pa.string(), False),
        ("turn_uuid", pa.string(), False),
        ("parent_uuid", pa.string(), True),
        ("seq", pa.int64(), False),
        ("ts", pa.string(), False),
        ("role", pa.string(), False),
        ("block_type", pa.string(), False),
        ("tool_name", pa.string(), True),
        ("source_path", pa.string(), False),
        ("block_idx", pa.int32(), False),
        ("split_idx", pa.int32(), False),
        ("vector", pa.list_(pa.float32(), 384), False),
        ("harness", pa.string(), False),
        ("repo", pa.string(), True),
        ("host", pa.string(), True),
        ("cwd", pa.string(), True),
        ("git_branch", pa.string(), True),
        ("parent_session_id", pa.string(), True),
        ("scaffold", pa.bool_(), False),
        ("redaction_version", pa.int32(), False),
    ]
    assert [(f.name, f.type, f.nullable) for f in schema] == expected
    assert schema.metadata == {
        b"embedding_model": b"m@1",
        b"embedding_dim": b"384",
        b"embedding_input": EMBED_INPUT.encode(),
        b"funes_format": b"funes-lance/1",
    }

    rt = _runtime(tmp_path / "a")
    _index(rt, tmp_path, "a", [("user", "pin the schema"), ("assistant", "Pinned.")])
    run_push(rt, parse_memory(str(tmp_path / "d"), rt), PushRequest(create=True, assume_yes=True))
    written = lance_export.open_dataset(tmp_path / "d" / "chunks.lance").schema
    assert [(f.name, f.type) for f in written] == [(n, t) for n, t, _ in expected]
    assert written.metadata[b"embedding_model"].startswith(
        b"sentence-transformers/all-MiniLM-L6-v2@"
    )
    indexes = lance_export.open_dataset(tmp_path / "d" / "chunks.lance").describe_indices()
    assert {i.name for i in indexes} == {"text_idx"}  # a vector index waits for 256 rows


def test_a_remote_records_its_embedding_recipe_and_a_push_of_another_recipe_warns(
    tmp_path: Path,
) -> None:
    import sqlite3

    legacy = _runtime(tmp_path / "legacy")
    _index(legacy, tmp_path, "legacy", [("user", "why the heron cache?"), ("assistant", "Speed.")])
    raw = sqlite3.connect(legacy.paths.memory_db)  # a memory built before recipes were recorded
    with raw:
        raw.execute("delete from meta where key = 'embedding_input'")
    raw.close()
    shared = tmp_path / "shared"
    first = run_push(legacy, parse_memory(str(shared), legacy), PushRequest(create=True))
    assert first.pushed == 2 and first.notes == []
    written = lance_export.open_dataset(shared / "chunks.lance").schema
    assert written.metadata[b"embedding_input"] == b"text"

    reader = _runtime(tmp_path / "reader")
    assert run_recall(reader, parse_memory(str(shared), reader), RecallRequest("heron")).result.hits
    [copy] = (tmp_path / "reader" / "data" / "remotes").rglob("*.db")
    meta = dict(sqlite3.connect(copy).execute("select key, value from meta"))
    assert meta["embedding_input"] == "text"  # the copy says what its vectors were made with

    fresh = _runtime(tmp_path / "fresh")
    _index(fresh, tmp_path, "fresh", [("user", "and the egret?"), ("assistant", "Size.")])
    mixed = run_push(fresh, parse_memory(str(shared), fresh), PushRequest(assume_yes=True))
    assert mixed.pushed == 2
    [note] = mixed.notes
    assert "`text` embedding recipe" in note and f"`{EMBED_INPUT}`" in note


def test_a_memory_re_embedded_after_its_push_is_not_told_to_re_embed_again(tmp_path: Path) -> None:
    """An upgraded user: pushed with an older funes, ran `funes index --yes`, pushes again. The
    note must not send them back to `funes index --yes` (done; it changes nothing there)."""
    import sqlite3

    from funes.ingest.reembed import reembed
    from funes.store import Store

    rt = _runtime(tmp_path / "host")
    _index(rt, tmp_path, "old", [("user", "why the heron cache?"), ("assistant", "Speed.")])
    raw = sqlite3.connect(rt.paths.memory_db)  # as an older funes left it
    with raw:
        raw.execute("delete from meta where key = 'embedding_input'")
    raw.close()
    shared = parse_memory(str(tmp_path / "shared"), rt)
    assert run_push(rt, shared, PushRequest(create=True)).notes == []
    with Store.open(rt.paths.memory_db) as store:
        assert store.model_id is not None
        done = reembed(store, rt.embedder(rt.embedder_spec_for(store.model_id)))
        assert done is not None and done.finished
    _index(rt, tmp_path, "new", [("user", "and the egret?"), ("assistant", "Size.")])
    again = run_push(rt, shared, PushRequest())
    assert again.pushed == 2
    [note] = again.notes
    assert "`text` embedding recipe" in note and f"`{EMBED_INPUT}`" in note
    assert "funes index --yes" not in note
    assert "keep their `text` vectors" in note


def test_pushes_append_only_new_chunks_and_status_counts_what_is_not_pushed(tmp_path: Path) -> None:
    rt = _runtime(tmp_path / "a")
    shared = parse_memory(str(tmp_path / "shared"), rt)
    _index(
        rt,
        tmp_path,
        "one",
        [("user", "bittern queue depth"), ("assistant", "Bittern queue depth alarm at 10k.")],
    )
    assert run_push(rt, shared, PushRequest(create=True, assume_yes=True)).pushed == 2
    _index(
        rt,
        tmp_path,
        "two",
        [("user", "shrike retries"), ("assistant", "Shrike retries 3 times, then dead-letters.")],
    )
    pending = run_status(rt, parse_memory(None, rt)).pushes
    assert [(p.published, p.pending_chunks, p.pending_sessions) for p in pending] == [(2, 2, 1)]
    second = run_push(rt, shared, PushRequest())
    assert (second.pushed, second.remote_chunks) == (2, 4)
    assert run_push(rt, shared, PushRequest()).up_to_date
    done = run_status(rt, parse_memory(None, rt)).pushes
    assert [(p.published, p.pending_chunks) for p in done] == [(4, 0)]


def _modes(root: Path) -> set[tuple[str, str]]:
    """("file" | "dir", octal mode) of everything under `root` (the lock file aside)."""
    return {
        ("dir" if p.is_dir() else "file", oct(stat.S_IMODE(p.stat().st_mode)))
        for p in root.rglob("*")
        if p.name != ".funes.lock"
    }


def test_what_a_push_writes_into_a_directory_is_private_whatever_the_umask(
    tmp_path: Path,
) -> None:
    # Lance's writers follow the umask: a push left 0644 transcript files behind
    rt = _runtime(tmp_path / "a")
    _index(rt, tmp_path, "a", [("user", "grebe"), ("assistant", "Grebe ships on Fridays.")])
    old = os.umask(0o022)
    try:
        mine = tmp_path / "mine"
        run_push(rt, parse_memory(str(mine), rt), PushRequest(create=True, assume_yes=True))
        assert stat.S_IMODE(mine.stat().st_mode) == 0o700
        assert _modes(mine) == {("file", "0o600"), ("dir", "0o700")}

        # a team's folder (group access) that an older funes pushed to with loose modes
        team = tmp_path / "team"
        run_push(rt, parse_memory(str(team), rt), PushRequest(create=True, assume_yes=True))
        team.chmod(0o2750)
        for p in team.rglob("*"):
            p.chmod(0o755 if p.is_dir() else 0o644)
        _index(rt, tmp_path, "b", [("user", "smew"), ("assistant", "Smew deploys on Mondays.")])
        assert run_push(rt, parse_memory(str(team), rt), PushRequest()).pushed == 2
        assert _modes(team) == {("file", "0o640"), ("dir", "0o750")}  # never others'

        # a plain `mkdir` folder (0755) says nothing about sharing: private, as for a new one
        team.chmod(0o755)
        _index(rt, tmp_path, "c", [("user", "teal"), ("assistant", "Teal rotates the keys.")])
        assert run_push(rt, parse_memory(str(team), rt), PushRequest()).pushed == 2
        assert _modes(team) == {("file", "0o600"), ("dir", "0o700")}
    finally:
        os.umask(old)


def test_a_new_empty_remote_takes_a_first_push_without_asking(tmp_path: Path) -> None:
    rt = _runtime(tmp_path / "a")
    _index(rt, tmp_path, "a", [("user", "smew"), ("assistant", "Smew deploys on Mondays.")])
    target = parse_memory(str(tmp_path / "fresh"), rt)
    asked: list[str] = []
    report = run_push(
        rt, target, PushRequest(create=True), confirm=lambda q: asked.append(q) or False
    )
    assert report.pushed == 2 and asked == []


def test_a_push_to_a_remote_holding_only_other_chunks_asks_and_refuses_without_an_answer(
    tmp_path: Path,
) -> None:
    other = _runtime(tmp_path / "other")
    _index(other, tmp_path, "other", [("user", "grebe"), ("assistant", "Grebe is the prod DB.")])
    assert (
        run_push(
            other, parse_memory(str(tmp_path / "shared"), other), PushRequest(create=True)
        ).pushed
        == 2
    )
    rt = _runtime(tmp_path / "a")
    _index(rt, tmp_path, "a", [("user", "limpkin"), ("assistant", "Limpkin deploys on Fridays.")])
    target = parse_memory(str(tmp_path / "shared"), rt)
    with pytest.raises(RemoteError, match="shares no chunks"):
        run_push(rt, target, PushRequest())  # nobody at a terminal to ask
    asked: list[str] = []
    with pytest.raises(RemoteError, match="refusing"):
        run_push(rt, target, PushRequest(), confirm=lambda q: asked.append(q) or False)
    assert "Push 2 chunks" in asked[0]
    assert run_push(rt, target, PushRequest(), confirm=lambda q: True).pushed == 2


def test_a_missing_directory_is_only_created_when_asked(tmp_path: Path) -> None:
    rt = _runtime(tmp_path / "a")
    _index(rt, tmp_path, "a", [("user", "tern"), ("assistant", "Tern is the staging cluster.")])
    with pytest.raises(RemoteError, match="does not exist"):
        run_push(rt, parse_memory(str(tmp_path / "nowhere"), rt), PushRequest(assume_yes=True))
    assert not (tmp_path / "nowhere").exists()
    with pytest.raises(UsageError, match="local SQLite memory"):
        run_push(rt, parse_memory(str(rt.paths.memory_db), rt), PushRequest(assume_yes=True))


def test_a_directory_holding_other_files_never_receives_a_push(tmp_path: Path) -> None:
    """`funes push .` in a project checkout, or a typo naming a home folder: refused even with
    --create and --yes, nothing written; an empty directory takes a first push."""
    rt = _runtime(tmp_path / "a")
    _index(rt, tmp_path, "a", [("user", "coot"), ("assistant", "Coot is the billing job.")])
    project = tmp_path / "project"
    project.mkdir()
    (project / "README.md").write_text("# mine\n")
    before = sorted(p.name for p in project.iterdir())
    for request in (PushRequest(assume_yes=True), PushRequest(create=True, assume_yes=True)):
        with pytest.raises(RemoteError, match="not a funes memory"):
            run_push(rt, parse_memory(str(project), rt), request)
    assert sorted(p.name for p in project.iterdir()) == before
    empty = tmp_path / "empty"
    empty.mkdir()
    assert run_push(rt, parse_memory(str(empty), rt), PushRequest(assume_yes=True)).pushed == 2


def test_two_writers_pushing_to_one_directory_at_once_lose_nothing(tmp_path: Path) -> None:
    writers = []
    for name, word in (("a", "puffin"), ("b", "gadwall")):
        rt = _runtime(tmp_path / name)
        _index(
            rt,
            tmp_path,
            name,
            [("user", f"{word} question"), ("assistant", f"The {word} answer is 42.")],
        )
        writers.append(rt)
    target = tmp_path / "shared"
    target.mkdir()
    errors: list[BaseException] = []

    def go(rt: Runtime) -> None:
        try:
            run_push(rt, parse_memory(str(target), rt), PushRequest(assume_yes=True))
        except BaseException as exc:  # surfaced below
            errors.append(exc)

    threads = [threading.Thread(target=go, args=(rt,)) for rt in writers]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert errors == []
    texts = (
        lance_export.open_dataset(target / "chunks.lance")
        .to_table(columns=["text"])
        .column("text")
        .to_pylist()
    )
    assert sorted(texts) == sorted(
        [
            "puffin question",
            "The puffin answer is 42.",
            "gadwall question",
            "The gadwall answer is 42.",
        ]
    )


class _Boom:
    version = 1

    def scan(self, text: str) -> list[Finding]:
        raise RuntimeError("scanner crashed")


def test_a_scanner_error_publishes_nothing(tmp_path: Path) -> None:
    rt = _runtime(tmp_path / "a")
    _index(rt, tmp_path, "a", [("user", "smew"), ("assistant", "Smew runs nightly.")])
    with pytest.raises(PushRefused, match="scanner cannot run"):
        run_push(
            rt,
            parse_memory(str(tmp_path / "d"), rt),
            PushRequest(create=True, assume_yes=True),
            scanner=_Boom(),
        )
    assert not (tmp_path / "d").exists()  # --create made nothing either
    assert RuleScanner().scan("nothing here") == []


def test_a_directory_is_the_users_own_unless_another_user_owns_it(tmp_path: Path) -> None:
    import os

    rt = _runtime(tmp_path / "a")
    _index(
        rt,
        tmp_path,
        "a",
        [
            ("user", "which port does the egret api use?"),
            ("assistant", "The egret api is on 8443."),
        ],
    )
    shared = tmp_path / "shared"
    run_push(rt, parse_memory(str(shared), rt), PushRequest(create=True, assume_yes=True))
    reader = _runtime(tmp_path / "b")
    own = run_recall(reader, parse_memory(str(shared), reader), RecallRequest("egret api port"))
    assert own.result.hits and own.owner is None
    if os.geteuid() != 0:
        pytest.skip("giving the directory to another user needs root (the own case passed)")
    os.chown(shared, 65534, 65534)
    theirs = run_recall(reader, parse_memory(str(shared), reader), RecallRequest("egret api port"))
    import pwd

    assert theirs.owner == pwd.getpwuid(65534).pw_name
    assert "The egret api is on 8443." in {h.chunk.text for h in theirs.result.hits}


def test_forget_remote_deletes_the_rows_in_one_commit_and_stale_caches_drop_them(
    tmp_path: Path,
) -> None:
    from funes.commands.forget import ForgetRequest, plan_forget, run_forget
    from funes.store import Store

    rt = _runtime(tmp_path / "a")
    home = tmp_path / "a-claude"
    gone = write_claude_session(
        home, [("user", "the grebe nest is by the pier"), ("assistant", "Grebe nest noted.")]
    )
    kept = write_claude_session(
        home, [("user", "where do grebe logs go?"), ("assistant", "Grebe logs go to loki.")]
    )
    run_index(rt, parse_memory(None, rt), IndexRequest(path=home / "projects"))
    shared = tmp_path / "shared"
    run_push(rt, parse_memory(str(shared), rt), PushRequest(create=True, assume_yes=True))
    reader = _runtime(tmp_path / "b")
    reader.remote = replace(reader.remote, revision_ttl_s=0)  # another host, checking the head
    before = run_recall(reader, parse_memory(str(shared), reader), RecallRequest("grebe nest"))
    assert gone.session_id in {h.chunk.session_id for h in before.result.hits}  # b caches v1

    local = parse_memory(None, rt)
    plan = plan_forget(rt, local, ForgetRequest(sessions=(gone.session_id,)))
    assert [(s, r) for s, r, _ in plan.copies] == [(gone.session_id, shared.resolve().as_uri())]
    outcome = run_forget(rt, plan)
    assert outcome.remote_reports == []
    assert outcome.copies_left == {shared.resolve().as_uri(): (1, 2)}
    status = run_status(rt, local)
    assert any("still holds 1 forgotten session" in a for a in status.attention)
    assert lance_export.info(shared / "chunks.lance").rows == 4  # not changed unless asked

    again = run_forget(rt, plan_forget(rt, local, ForgetRequest(remotes=(str(shared),))))
    [report] = again.remote_reports
    assert report.rows_deleted == 2 and report.remote_chunks == 2 and report.commit
    assert again.copies_left == {}
    assert not any("forgotten" in a for a in run_status(rt, local).attention)
    ids = {i for batch in lance_export.iter_ids(shared / "chunks.lance") for i in batch}
    with Store.open(rt.paths.memory_db, readonly=True) as store:
        assert ids == set(store.session_chunk_ids([kept.session_id])[kept.session_id])
    on_disk = b"".join(p.read_bytes() for p in shared.rglob("*") if p.is_file())
    assert b"by the pier" not in on_disk  # no data, index or older version file holds it
    after = run_recall(reader, parse_memory(str(shared), reader), RecallRequest("grebe nest"))
    assert gone.session_id not in {h.chunk.session_id for h in after.result.hits}
    assert {h.chunk.session_id for h in after.result.hits} == {kept.session_id}
    up_to_date = run_forget(rt, plan_forget(rt, local, ForgetRequest(remotes=(str(shared),))))
    assert up_to_date.remote_reports[0].commit is None  # nothing left to delete: no commit


def test_status_after_forget_remote_names_the_commit_the_forget_made(tmp_path: Path) -> None:
    from funes.commands.forget import ForgetRequest, plan_forget, run_forget

    rt = _runtime(tmp_path / "a")
    home = tmp_path / "a-claude"
    gone = write_claude_session(
        home, [("user", "the coot pond froze"), ("assistant", "Coot pond frozen, noted.")]
    )
    write_claude_session(home, [("user", "coot feeder refill"), ("assistant", "Refill weekly.")])
    run_index(rt, parse_memory(None, rt), IndexRequest(path=home / "projects"))
    shared = tmp_path / "shared"
    pushed = run_push(rt, parse_memory(str(shared), rt), PushRequest(create=True, assume_yes=True))
    local = parse_memory(None, rt)
    [before] = run_status(rt, local).pushes
    assert before.commit == pushed.commit

    request = ForgetRequest(sessions=(gone.session_id,), remotes=(str(shared),))
    [report] = run_forget(rt, plan_forget(rt, local, request)).remote_reports
    assert report.commit and report.commit != pushed.commit
    [after] = run_status(rt, local).pushes
    assert after.commit == report.commit  # the remote's commit now, not the push's
    assert after.published == 2 and after.pending_chunks == 0


def test_a_push_without_pylance_says_how_to_get_it_and_leaves_no_remote_behind(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a tool install without the hub extra crashed with ModuleNotFoundError and left a
    # funes.json in the target, which then read as an empty shared memory
    rt = _runtime(tmp_path / "a")
    home = tmp_path / "a-claude"
    write_claude_session(home, [("user", "where do grebe logs go?"), ("assistant", "To loki.")])
    run_index(rt, parse_memory(None, rt), IndexRequest(path=home / "projects"))
    monkeypatch.setitem(__import__("sys").modules, "lance", None)  # `import lance` fails
    shared = tmp_path / "shared"
    with pytest.raises(RemoteError, match="needs pylance") as raised:
        run_push(rt, parse_memory(str(shared), rt), PushRequest(create=True, assume_yes=True))
    assert "[hub]" in (raised.value.hint or "")
    assert not shared.exists() or not any(shared.iterdir())
