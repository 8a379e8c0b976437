"""A 1.x Claude Code session full of inline sidechain traffic, indexed and recalled (issue 13):
the person's turns stay the main session's, findable, and the subagent's words are never shown
as theirs or as the main agent's."""

from __future__ import annotations

from pathlib import Path

from fakes import BagOfWordsEmbedder
from support.claude_shapes import (
    SESSION,
    TASK_PROMPT,
    inline_sidechain_session,
    session_path,
    uid,
    write,
)

from funes.ingest import IndexJob, index
from funes.redact import RuleScanner
from funes.retrieval import get_turns, recall
from funes.settings import RecallParams
from funes.store import Store
from funes.traces import AgentHomes, discover


def _indexed(home: Path, store: Store) -> None:
    write(session_path(home / ".claude"), inline_sidechain_session(sidechains=300))
    report = index(
        discover(AgentHomes.resolve()),
        IndexJob(store=store, embedder=BagOfWordsEmbedder(), scanner=RuleScanner()),
    )
    assert not report.failures


def test_the_person_s_question_is_found_in_the_main_session(
    isolated_env: Path, tmp_path: Path
) -> None:
    with Store.open(tmp_path / "m.db") as store:
        _indexed(isolated_env, store)
        result = recall(
            store,
            "why does the nightly import fail with database is locked",
            embedder=BagOfWordsEmbedder(),
            reranker=None,
            params=RecallParams(rerank=False, half_life_days=0),
        )
        top = result.hits[0].chunk
        assert (top.session_id, top.turn_id, top.role) == (SESSION, uid("u1"), "user")
        # around it, `get` shows the person's conversation, not the subagent's 600 records
        around = get_turns(store, SESSION, uid("u1"), window=3)
        assert [t.turn_id for t in around] == [uid(n) for n in ("u1", "a1", "u2", "a2")]


def test_the_agent_written_prompt_and_the_subagent_s_reply_are_the_subagent_s(
    isolated_env: Path, tmp_path: Path
) -> None:
    with Store.open(tmp_path / "m.db") as store:
        _indexed(isolated_env, store)
        result = recall(
            store,
            TASK_PROMPT,
            embedder=BagOfWordsEmbedder(),
            reranker=None,
            params=RecallParams(rerank=False, half_life_days=0, k=20),
        )
        users = [h.chunk for h in result.hits if h.chunk.role == "user"]
        assert users and {c.session_id for c in users} == {f"sidechain-{uid('s1')}"}
        report = recall(
            store,
            "Subagent report two connections neither sets busy_timeout",
            embedder=BagOfWordsEmbedder(),
            reranker=None,
            params=RecallParams(rerank=False, half_life_days=0, k=20),
        )
        replies = [h.chunk for h in report.hits if h.chunk.role == "assistant"]
        assert replies and all(c.session_id != SESSION for c in replies if "Subagent" in c.text)
        labels = {c.session_label for c in users}
        assert labels == {f"6f1d2c3b/general-purpose-{uid('s1')[:8]}"}


def test_forgetting_a_session_forgets_the_subagents_it_started(
    isolated_env: Path, tmp_path: Path
) -> None:
    # forgetting the session a recall header names left its subagents' passages recallable
    from funes.commands.forget import ForgetRequest, plan_forget, run_forget
    from funes.memory import Runtime, parse_memory

    rt = Runtime.resolve()
    rt.paths.ensure()
    with Store.open(rt.paths.memory_db) as store:
        _indexed(isolated_env, store)
        stored = {r[0] for r in store.raw.execute("select distinct session_id from chunk_rows")}
    children = stored - {SESSION}
    assert children  # the sidechain is a session of its own
    plan = plan_forget(rt, parse_memory(None, rt), ForgetRequest(sessions=(SESSION[:8],)))
    assert set(plan.sessions) == stored
    run_forget(rt, plan)
    with Store.open(rt.paths.memory_db, readonly=True) as store:
        assert store.raw.execute("select count(*) from chunks").fetchone()[0] == 0
