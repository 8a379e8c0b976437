"""A push replaces on the remote what this host rewrote or deleted since it pushed it.

Chunk ids are positions (session, turn, block, split), so a chunk `funes scrub` (or a re-read
transcript) rewrites keeps its id: a push that sent only ids the remote lacks left the old
text, secret and all, on the remote for good. Real memories, real Lance datasets, the real
embedder and scrub; the directory remote."""

from __future__ import annotations

import re
import secrets
import string
from pathlib import Path

import pytest
from support.claude import write_claude_session

from funes.commands.index import IndexRequest, run_index
from funes.commands.push import PushRequest, receipts_dir, run_push
from funes.commands.status import run_status
from funes.memory import MemoryRef, Runtime, open_for_write, parse_memory
from funes.paths import Paths
from funes.redact import Finding, Scanner, default_scanner
from funes.remote import lance_export
from funes.store import Store, StoredChunk

pytestmark = pytest.mark.models

# what the newer rule of `_NewerRules` finds: a bucket name nobody's rules call a secret today
LEAK = "marmalade-orchard"


class _NewerRules:
    """Today's index-time rules plus one more (a rules upgrade): finds LEAK."""

    def __init__(self) -> None:
        self._base = default_scanner()
        self.version = self._base.version + 1

    def scan(self, text: str) -> list[Finding]:
        extra = [Finding("bucket_name", m.start(), m.end()) for m in re.finditer(LEAK, text)]
        return [*self._base.scan(text), *extra]


def _runtime(root: Path) -> Runtime:
    rt = Runtime.resolve()
    rt.paths = Paths(root / "data", root / "spool", root / "logs")
    return rt


def _remote_texts(shared: Path) -> dict[str, str]:
    ds = lance_export.open_dataset(shared / "chunks.lance")
    table = ds.to_table(columns=["id", "text"])
    return dict(zip(table.column(0).to_pylist(), table.column(1).to_pylist(), strict=True))


def _remote_bytes(shared: Path) -> bytes:
    return b"".join(p.read_bytes() for p in shared.rglob("*") if p.is_file())


def _scrub(rt: Runtime, scanner: Scanner) -> int:
    from funes.ingest import scrub

    store = open_for_write(rt, parse_memory(None, rt))
    try:
        with store.writing():
            embedder = rt.embedder(rt.embedder_spec_for(store.model_id))
            return scrub(store, scanner, embedder, only_outdated=False).chunks_rewritten
    finally:
        store.close()


def _local_texts(rt: Runtime) -> dict[str, str]:
    from funes.store import Store

    with Store.open(rt.paths.memory_db, readonly=True) as store:
        rows = store.fetch(list(range(1, store.max_rowid() + 1)))
    return {c.id: c.text for c in rows.values()}


def _indexed(rt: Runtime, tmp_path: Path) -> None:
    home = tmp_path / "claude"
    write_claude_session(
        home,
        [
            ("user", f"where do the gannet deploys read their assets from? {LEAK} maybe?"),
            ("assistant", f"Gannet deploys read their assets from the {LEAK} bucket."),
            ("user", "and the logs?"),
            ("assistant", "Gannet logs go to loki."),
        ],
    )
    run_index(rt, parse_memory(None, rt), IndexRequest(path=home / "projects"))


def _pushed(rt: Runtime, tmp_path: Path) -> tuple[Path, MemoryRef]:
    """Index the session into `rt`'s memory and push it to a new directory remote: (its
    directory, its reference)."""
    _indexed(rt, tmp_path)
    shared = tmp_path / "shared"
    target = parse_memory(str(shared), rt)
    run_push(rt, target, PushRequest(create=True, assume_yes=True))
    return shared, target


def _gannet(store: Store) -> tuple[int, StoredChunk]:
    """(rowid, chunk) of the one chunk `_indexed` wrote as "Gannet logs go to loki."."""
    [found] = [
        (r, c)
        for r, c in store.fetch(list(range(1, store.max_rowid() + 1))).items()
        if c.text == "Gannet logs go to loki."
    ]
    return found


def test_a_scrubbed_chunk_replaces_its_old_text_on_the_remote(tmp_path: Path) -> None:
    rt = _runtime(tmp_path / "a")
    _indexed(rt, tmp_path)
    shared = tmp_path / "shared"
    target = parse_memory(str(shared), rt)
    first = run_push(rt, target, PushRequest(create=True, assume_yes=True))
    assert first.pushed == 4 and sum(LEAK in t for t in _remote_texts(shared).values()) == 2

    assert _scrub(rt, _NewerRules()) == 2  # a rules upgrade redacts the two chunks in place
    status = run_status(rt, parse_memory(None, rt)).pushes
    assert [p.rewritten_blocks for p in status] == [2]  # status tells, before the push

    second = run_push(rt, target, PushRequest())
    assert not second.up_to_date
    assert (second.replaced, second.removed, second.pushed) == (2, 0, 2)
    remote = _remote_texts(shared)
    assert remote == _local_texts(rt)  # the remote holds the new text, and only that
    assert second.remote_chunks == 4
    assert LEAK.encode() not in _remote_bytes(shared)  # no older version or index file holds it
    assert [p.rewritten_blocks for p in run_status(rt, parse_memory(None, rt)).pushes] == [0]
    assert run_push(rt, target, PushRequest()).up_to_date  # and nothing is sent twice


def _aws_key() -> str:
    return "AKIA" + "".join(
        secrets.choice(string.ascii_uppercase + string.digits) for _ in range(16)
    )


def test_a_rewritten_chunk_the_gate_holds_back_leaves_the_remote_and_stays_local(
    tmp_path: Path,
) -> None:
    from funes.store import Store

    rt = _runtime(tmp_path / "a")
    shared, target = _pushed(rt, tmp_path)
    # a re-read transcript rewrites a chunk; its new text holds a key the gate finds
    store = open_for_write(rt, parse_memory(None, rt))
    try:
        with store.writing():
            rowid, chunk = _gannet(store)
            new = f"Gannet logs go to loki, key {_aws_key()}"
            vectors = rt.embedder(rt.embedder_spec_for(store.model_id)).embed([new])
            store.rewrite_chunks([(rowid, new)], vectors, redaction_version=chunk.redaction_version)
    finally:
        store.close()

    report = run_push(rt, target, PushRequest())
    assert (report.replaced, report.removed, report.held_back) == (0, 1, 1)
    remote = _remote_texts(shared)
    assert chunk.id not in remote and len(remote) == 3  # neither the old text nor the new
    assert b"Gannet logs go to loki" not in _remote_bytes(shared)
    again = run_push(rt, target, PushRequest())  # the held-back block stays local: up to date
    assert again.up_to_date and again.held_back == 1
    with Store.open(rt.paths.memory_db, readonly=True) as local:
        assert chunk.id in local.existing_ids([chunk.id])


def test_chunks_deleted_locally_since_they_were_pushed_are_deleted_on_the_remote(
    tmp_path: Path,
) -> None:
    rt = _runtime(tmp_path / "a")
    shared, target = _pushed(rt, tmp_path)
    store = open_for_write(rt, parse_memory(None, rt))
    try:
        with store.writing():  # scrub drops a block it cannot redact exactly
            rowid, _ = _gannet(store)
            store.rewrite_chunks([], None, redaction_version=0, drop=[rowid])
    finally:
        store.close()
    report = run_push(rt, target, PushRequest())
    assert (report.replaced, report.removed, report.pushed) == (0, 1, 0)
    assert _remote_texts(shared) == _local_texts(rt)
    assert b"Gannet logs go to loki" not in _remote_bytes(shared)


def test_a_receipt_whose_log_was_trimmed_falls_back_to_comparing_every_chunk(
    tmp_path: Path,
) -> None:
    rt = _runtime(tmp_path / "a")
    shared, target = _pushed(rt, tmp_path)
    _scrub(rt, _NewerRules())
    # the log no longer reaches back to the receipt (writers keep its last 50,000 entries)
    import sqlite3

    db = sqlite3.connect(rt.paths.memory_db)
    db.execute("delete from chunk_log")
    db.commit()
    db.close()
    [receipt] = receipts_dir(rt).glob("*.db")
    assert receipt.exists()
    report = run_push(rt, target, PushRequest())
    assert (report.replaced, report.pushed) == (2, 2)
    assert _remote_texts(shared) == _local_texts(rt)


def test_a_push_killed_after_deleting_the_old_rows_is_completed_by_the_next(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rt = _runtime(tmp_path / "a")
    shared, target = _pushed(rt, tmp_path)
    _scrub(rt, _NewerRules())

    real_write = lance_export.write

    def killed(*args: object, **kwargs: object) -> int:
        raise KeyboardInterrupt  # the push dies between its delete and its append

    monkeypatch.setattr(lance_export, "write", killed)
    with pytest.raises(KeyboardInterrupt):
        run_push(rt, target, PushRequest())
    assert len(_remote_texts(shared)) == 2  # the old rows went; their new text did not land
    monkeypatch.setattr(lance_export, "write", real_write)
    report = run_push(rt, target, PushRequest())
    assert report.pushed == 2 and _remote_texts(shared) == _local_texts(rt)
    assert LEAK.encode() not in _remote_bytes(shared)
    assert run_push(rt, target, PushRequest()).up_to_date
