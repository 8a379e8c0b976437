"""Replayed Claude Code history is stored once (issue 13): `--resume` copies earlier records
into a new session file, an `aside_question` subagent replays its parent's conversation, both
under the same uuids. Recall returns each passage once; `get` on the new session still shows
the replayed turns in context."""

from __future__ import annotations

import os
from pathlib import Path

from fakes import BagOfWordsEmbedder
from support.claude_shapes import (
    PROJECT,
    SESSION,
    record,
    text,
    tool_result,
    tool_use,
    uid,
    write,
)
from support.legacy_release import LegacyClaudeSource, index_as_released

from funes.ingest import IndexJob, index
from funes.redact import RuleScanner
from funes.retrieval import get_turns, recall
from funes.settings import RecallParams
from funes.store import Store
from funes.traces import AgentHomes, discover

RESUMED = "9c8b7a6f-5e4d-4c3b-8a29-1807f6e5d4c3"
HISTORY = [
    ("user", "Why do the ledger exports double count refunds?", "h1", None),
    ("assistant", "Refunds are exported once as a credit and once as a negative sale.", "h2", "h1"),
    ("user", "Keep only the credit line.", "h3", "h2"),
    ("assistant", "Done: export_refunds skips negative sales now.", "h4", "h3"),
]


def _records(
    session: str, names: list[tuple[str, str, str, str | None]]
) -> list[dict[str, object]]:
    out = []
    for kind, body, name, parent in names:
        content = body if kind == "user" else text(body)
        out.append(record(kind, content, name, parent, session=session, version="2.1.97"))
    return out


def _project(home: Path) -> Path:
    return home / ".claude" / "projects" / PROJECT


def _resume(home: Path, *, original_older: bool = True) -> tuple[Path, Path]:
    """The original session, and a `--resume` file holding its records then two new ones."""
    original = write(_project(home) / f"{SESSION}.jsonl", _records(SESSION, HISTORY))
    copied = _records(SESSION, HISTORY)  # copied as they were, sessionId included
    copied += _records(
        RESUMED,
        [
            ("user", "Now add a test for the refund export.", "n1", "h4"),
            ("assistant", "Added test_export_refunds_once.", "n2", "n1"),
        ],
    )
    resumed = write(_project(home) / f"{RESUMED}.jsonl", copied)
    older, newer = (original, resumed) if original_older else (resumed, original)
    os.utime(older, (1_700_000_000, 1_700_000_000))
    os.utime(newer, (1_800_000_000, 1_800_000_000))
    return original, resumed


def _job(store: Store) -> IndexJob:
    return IndexJob(store=store, embedder=BagOfWordsEmbedder(), scanner=RuleScanner())


def _holders(store: Store) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for turn, session in store.raw.execute("select turn_id, session_id from chunk_rows"):
        out.setdefault(turn, set()).add(session)
    return out


def _recall(store: Store, query: str) -> list[tuple[str, str]]:
    result = recall(
        store,
        query,
        embedder=BagOfWordsEmbedder(),
        reranker=None,
        params=RecallParams(rerank=False, half_life_days=0, k=8),
    )
    return [(h.chunk.session_id, h.chunk.turn_id) for h in result.hits]


def test_a_resumed_session_stores_the_copied_history_once(
    isolated_env: Path, tmp_path: Path
) -> None:
    _resume(isolated_env)
    with Store.open(tmp_path / "m.db") as store:
        assert not index(discover(AgentHomes.resolve()), _job(store)).failures
        holders = _holders(store)
        assert all(len(s) == 1 for s in holders.values())
        hits = _recall(store, "exports double count refunds credit negative sale")
        assert len([h for h in hits if h[1] == uid("h2")]) == 1
        # the resumed session still reads as one conversation
        around = get_turns(store, RESUMED, uid("n1"), window=3)
        assert [t.turn_id for t in around] == [uid(n) for n in ("h2", "h3", "h4", "n1", "n2")]
        assert [t.seq for t in around] == [1, 2, 3, 4, 5]
        assert [t.turn_id for t in get_turns(store, RESUMED, uid("h2"), window=0)] == [uid("h2")]


def test_whichever_file_is_read_first_holds_the_history(isolated_env: Path, tmp_path: Path) -> None:
    _resume(isolated_env, original_older=False)  # the copy is read first (newest first)
    with Store.open(tmp_path / "m.db") as store:
        index(discover(AgentHomes.resolve()), _job(store))
        assert all(len(s) == 1 for s in _holders(store).values())
        original = get_turns(store, SESSION, uid("h1"), window=5)
        assert [t.turn_id for t in original] == [uid(n) for n in ("h1", "h2", "h3", "h4")]


def test_a_budgeted_sweep_stores_the_copied_tool_calls_and_output_once(
    isolated_env: Path, tmp_path: Path
) -> None:
    # Tool call and output records hold no prose: the sweep's prose pass makes no chunk of
    # them, so no link either; the pass that writes them must find the copy's holder itself.
    steps = [
        record("user", "Why does the refund export crash?", "t1", None),
        record("assistant", tool_use("toolu_r1", "Bash", {"cmd": "cat export.log"}), "t2", "t1"),
        record(
            "user", tool_result("toolu_r1", "KeyError: 'refund_id' in export_refunds"), "t3", "t2"
        ),
        record("assistant", text("export_refunds reads a column the view renamed."), "t4", "t3"),
    ]
    original = write(_project(isolated_env) / f"{SESSION}.jsonl", steps)
    resumed = write(
        _project(isolated_env) / f"{RESUMED}.jsonl",
        [*steps, record("user", "Fix it.", "t5", "t4", session=RESUMED)],
    )
    os.utime(original, (1_700_000_000, 1_700_000_000))
    os.utime(resumed, (1_800_000_000, 1_800_000_000))
    with Store.open(tmp_path / "m.db") as store:
        job = _job(store)
        assert not job.all_tiers_at_once  # prose first, then tool calls, then tool output
        assert not index(discover(AgentHomes.resolve()), job).failures
        holders = _holders(store)
        assert set(holders) == {uid(n) for n in ("t1", "t2", "t3", "t4", "t5")}
        assert {t: len(s) for t, s in holders.items() if len(s) > 1} == {}
        around = get_turns(store, SESSION, uid("t1"), window=5)
        assert [t.turn_id for t in around] == [uid(n) for n in ("t1", "t2", "t3", "t4")]


def test_an_aside_question_replays_its_parent_and_keeps_only_its_question(
    isolated_env: Path, tmp_path: Path
) -> None:
    write(_project(isolated_env) / f"{SESSION}.jsonl", _records(SESSION, HISTORY))
    aside = _records(SESSION, HISTORY)  # the parent conversation, replayed with its uuids
    aside += [
        record("user", "Which table holds the refund flags?", "q1", "h4", sidechain=True, session=SESSION),
        record("assistant", text("ledger_refunds.flags"), "q2", "q1", sidechain=True, session=SESSION),
    ]  # fmt: skip
    sub = (
        _project(isolated_env)
        / SESSION
        / "subagents"
        / "agent-aside_question-ac9ee4804d56a951.jsonl"
    )
    write(sub, aside)
    with Store.open(tmp_path / "m.db") as store:
        index(discover(AgentHomes.resolve()), _job(store))
        holders = _holders(store)
        assert holders[uid("h2")] == {SESSION}
        assert holders[uid("q1")] == {"agent-aside_question-ac9ee4804d56a951"}
        around = get_turns(store, "agent-aside_question-ac9ee4804d56a951", uid("q1"), window=2)
        assert [t.turn_id for t in around] == [uid(n) for n in ("h3", "h4", "q1", "q2")]


def test_a_memory_holding_both_copies_converges_to_one(isolated_env: Path, tmp_path: Path) -> None:
    _resume(isolated_env)
    with Store.open(tmp_path / "m.db") as store:
        legacy = LegacyClaudeSource(_project(isolated_env).parent)
        assert index_as_released(store, legacy, BagOfWordsEmbedder()) == 10
        assert _holders(store)[uid("h2")] == {SESSION, RESUMED}  # what the previous release kept
        report = index(discover(AgentHomes.resolve()), _job(store))
        assert not report.failures
        assert all(len(s) == 1 for s in _holders(store).values())
        count = store.raw.execute("select count(*) from chunks").fetchone()[0]
        assert store.raw.execute("select count(*) from chunks_vec").fetchone()[0] == count == 6
        around = get_turns(store, RESUMED, uid("n2"), window=5)
        assert [t.turn_id for t in around] == [uid(n) for n in ("h1", "h2", "h3", "h4", "n1", "n2")]
        again = index(discover(AgentHomes.resolve()), _job(store))
        assert (again.chunks_written, again.chunks_updated, again.chunks_superseded) == (0, 0, 0)


def test_sessions_reusing_turn_ids_for_other_records_keep_every_turn(
    isolated_env: Path, tmp_path: Path
) -> None:
    # a source whose turn ids are not unique across sessions (the dev set's `t0`, `t1`, …)
    # must not lose a turn to another session that used the same id for another record:
    # only a copy of the same record is a replay
    other = "4d3c2b1a-0f9e-4d8c-8b7a-6f5e4d3c2b1a"
    write(_project(isolated_env) / f"{SESSION}.jsonl", _records(SESSION, HISTORY))
    reused = [
        ("user", "How do we rotate the kiln logs?", "h1", None),
        ("assistant", "logrotate weekly, keep four archives.", "h2", "h1"),
    ]
    write(_project(isolated_env) / f"{other}.jsonl", _records(other, reused))
    with Store.open(tmp_path / "m.db") as store:
        assert not index(discover(AgentHomes.resolve()), _job(store)).failures
        assert _holders(store)[uid("h2")] == {SESSION, other}
        assert [s for s, _ in _recall(store, "logrotate kiln logs archives")][0] == other
        shown = get_turns(store, other, uid("h2"), window=0)
        assert shown and "logrotate" in shown[0].blocks[0]
