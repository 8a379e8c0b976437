"""Re-indexing a memory the previous release built converges on what the readers say now
(issue 13): no duplicate passages left behind, sessions whose transcripts are gone keep theirs.

The old memory is built by the previous release's Claude reader (`legacy_release`, that
release's code) over the same files, recorded under that release's unit signatures; then
the current sources index the same home.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import replace
from pathlib import Path

from fakes import RecordingEmbedder
from support.claude_shapes import (
    PROJECT,
    SESSION,
    inline_sidechain_session,
    persisted_preview,
    record,
    slash_command,
    text,
    tool_result,
    tool_use,
    uid,
    write,
)
from support.legacy_release import LegacyClaudeSource, index_as_released

from funes.ingest import IndexJob, index
from funes.redact import RuleScanner
from funes.store import Store
from funes.traces import AgentHomes, BlockType, Harness, ReadStats, Turn, Unit, discover
from funes.traces.codex import CodexSource

GONE = "0e1d2c3b-aaaa-4bbb-8ccc-9d8e7f6a5b4c"
BIG = "\n".join(f"migrations/{i:04d}_step.sql applied" for i in range(1, 400))


def _home(home: Path) -> Path:
    """Two sessions: a 1.x one with an inline sidechain, a slash command, a spilled result
    and a Write result logged before its call; and a short one whose file goes away."""
    project = home / ".claude" / "projects" / PROJECT
    spill = project / SESSION / "tool-results" / "toolu_big.txt"
    recs = inline_sidechain_session(sidechains=3)
    recs += [
        slash_command("/migrate", "apply every pending ledger migration", "c1", "a2"),
        record("assistant", tool_use("toolu_big", "Bash", {"command": "make migrate"}), "a3", "c1"),
        record("user", tool_result("toolu_big", persisted_preview(spill, 31.2, "migrations/0001")), "r3", "a3"),
        record("user", tool_result("toolu_w", "File created successfully at: NOTES.md"), "r4", "a4"),
        record("assistant", tool_use("toolu_w", "Write", {"file_path": "NOTES.md", "content": "x"}), "a4", "r3"),
        record("assistant", text("Migrations applied; NOTES.md lists them."), "a5", "r4"),
    ]  # fmt: skip
    write(project / f"{SESSION}.jsonl", recs)
    spill.parent.mkdir(parents=True)
    spill.write_text(BIG)
    gone = [
        record("user", "Rename the ledger export job", "g1", None, session=GONE),
        record("assistant", text("Renamed to export_ledger_nightly."), "g2", "g1", session=GONE),
    ]
    return write(project / f"{GONE}.jsonl", gone)


def _job(store: Store, emb: RecordingEmbedder) -> IndexJob:
    return IndexJob(store=store, embedder=emb, scanner=RuleScanner())


def _rows(store: Store) -> list[tuple[str, str, int, str, int, str]]:
    return [
        (str(r[0]), str(r[1]), int(r[2]), str(r[3]), int(r[4]), str(r[5]))
        for r in store.raw.execute(
            """select session_id, turn_id, seq, block_type, split_idx, text from chunk_rows
               order by session_id, seq, block_idx, split_idx"""
        )
    ]


def test_reindexing_a_previous_release_memory_converges(isolated_env: Path, tmp_path: Path) -> None:
    gone = _home(isolated_env)
    emb = RecordingEmbedder()
    with Store.open(tmp_path / "m.db") as store:
        legacy = LegacyClaudeSource(isolated_env / ".claude" / "projects")
        assert index_as_released(store, legacy, emb) > 0
        old_main = {r[1] for r in _rows(store) if r[0] == SESSION}
        assert uid("s1") in old_main  # the previous release put the sidechain in the main session
        gone.unlink()  # Claude Code's 30-day cleanup took this transcript

        emb.inputs.clear()
        report = index(discover(AgentHomes.resolve()), _job(store, emb))
        assert not report.failures and report.chunks_superseded > 0
        rows = _rows(store)

        # no turn is stored in two sessions, no chunk position twice
        sessions_of: dict[str, set[str]] = {}
        for session, turn, *_ in rows:
            sessions_of.setdefault(turn, set()).add(session)
        assert {t: s for t, s in sessions_of.items() if len(s) > 1} == {}
        positions = [(r[0], r[1], r[3], r[4]) for r in rows]
        assert len(positions) == len(set(positions))

        # the main session is the person's conversation, numbered without gaps
        main = [r for r in rows if r[0] == SESSION]
        assert [r[1] for r in main if r[4] == 0] == [
            uid(n) for n in ("u1", "a1", "u2", "a2", "c1", "a3", "r3", "a4", "r4", "a5")
        ]
        assert sorted({r[2] for r in main}) == list(range(10))
        assert {r[0] for r in rows if r[1] == uid("s1")} == {f"sidechain-{uid('s1')}"}

        # texts are what the readers say now, and FTS follows them
        by_turn = {r[1]: r for r in rows if r[4] == 0}
        assert by_turn[uid("c1")][5] == "/migrate apply every pending ledger migration"
        assert by_turn[uid("r4")][5].startswith("[tool_result Write] File created")
        assert "<persisted-output>" not in "".join(r[5] for r in main)
        assert store.lexical("0250_step", k=5)
        assert not store.lexical("Preview", k=5)
        scaffold = store.raw.execute(
            "select scaffold from chunks where turn_id = ?", (uid("c1"),)
        ).fetchone()[0]
        assert scaffold == 0

        # every chunk has one vector; the main answer after the Task was embedded again with
        # the person's prompt in front (the previous release gave it the sidechain's prompt)
        count = store.raw.execute("select count(*) from chunks").fetchone()[0]
        assert store.raw.execute("select count(*) from chunks_vec").fetchone()[0] == count
        assert any(
            i.startswith("Why does the nightly import fail") and "busy timeout" in i
            for i in emb.inputs
        )

        # the session whose transcript is gone keeps its passages
        assert {r[1] for r in rows if r[0] == GONE} == {uid("g1"), uid("g2")}

        # and a second pass changes nothing: a fixed point
        again = index(discover(AgentHomes.resolve()), _job(store, emb))
        assert (again.chunks_written, again.chunks_updated, again.chunks_superseded) == (0, 0, 0)
        assert _rows(store) == rows


class _PreviousCodex:
    """Codex read as the previous release did: a JSON-envelope output indexed as the escaped
    JSON string, under that release's signature."""

    harness = Harness.CODEX

    def __init__(self, home: Path) -> None:
        self.inner = CodexSource(home)

    def units(self) -> Iterator[Unit]:
        for unit in self.inner.units():
            yield replace(unit, signature=(unit.signature or "").split("@")[0])

    def read(self, unit: Unit, stats: ReadStats) -> Iterator[Turn]:
        for turn in self.inner.read(unit, stats):
            blocks = tuple(
                replace(b, text=json.dumps({"output": b.text, "metadata": {"exit_code": 0}}))
                if b.type is BlockType.TOOL_RESULT
                else b
                for b in turn.blocks
            )
            yield replace(turn, blocks=blocks, model=None, session_label=None, project=None)

    def unit_for_hook(self, payload: Mapping[str, object]) -> Unit | None:
        return None


def test_a_block_that_now_splits_into_fewer_pieces_leaves_no_stale_piece(
    isolated_env: Path, tmp_path: Path
) -> None:
    thread = "5a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d"
    output = "\n".join(f'"{i:03d}" = "ledger row {i}"' for i in range(44))
    assert len(output) < 1150 < 1250 < len(json.dumps({"output": output}))  # one piece, or two
    rollout = isolated_env / ".codex" / "sessions" / "2025" / "09" / "02"
    rollout.mkdir(parents=True)
    records = [
        {"id": thread, "timestamp": "2025-09-02T08:00:00.000Z"},
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Dump the rows"}]},
        {"type": "function_call", "name": "shell", "arguments": "{}", "call_id": "c1"},
        {
            "type": "function_call_output",
            "call_id": "c1",
            "output": json.dumps({"output": output, "metadata": {"exit_code": 0}}),
        },
    ]  # fmt: skip
    (rollout / f"rollout-2025-09-02T08-00-00-{thread}.jsonl").write_text(
        "".join(json.dumps(r) + "\n" for r in records)
    )
    emb = RecordingEmbedder()
    with Store.open(tmp_path / "m.db") as store:
        index([_PreviousCodex(isolated_env / ".codex")], _job(store, emb))
        pieces = "select count(*) from chunks where block_type = 'tool_result'"
        assert store.raw.execute(pieces).fetchone()[0] > 1  # the escaped JSON split in pieces
        report = index(discover(AgentHomes.resolve()), _job(store, emb))
        assert not report.failures
        texts = [
            r[0]
            for r in store.raw.execute("select text from chunks where block_type = 'tool_result'")
        ]
        assert texts == [f"[tool_result shell] {output}"]
        count = store.raw.execute("select count(*) from chunks").fetchone()[0]
        assert store.raw.execute("select count(*) from chunks_vec").fetchone()[0] == count
