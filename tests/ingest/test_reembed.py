"""A memory built by an older funes (embedding recipe `text`) is re-embedded in place with the
current recipe: from the stored texts, resumably, and ends exactly where a fresh index would."""

from __future__ import annotations

from pathlib import Path

import pytest
from fakes import BagOfWordsEmbedder, RecordingEmbedder
from support.claude import conversation, write_session

from funes.chunks import EMBED_INPUT, LEGACY_EMBED_INPUT
from funes.commands.index import IndexRequest, run_index
from funes.commands.status import run_status
from funes.ingest import IndexJob, index
from funes.ingest.embed_input import stored_embedding_inputs
from funes.ingest.reembed import chunks_owed, reembed
from funes.memory import Runtime, parse_memory
from funes.redact import RuleScanner
from funes.store import Store
from funes.traces import AgentHomes, discover

PAIRS = [
    ("user", "Why does the checkout page time out under load?"),
    ("assistant", "The payment webhook handler holds a row lock while it calls the bank API."),
    ("user", "How do we fix it?"),
    ("assistant", "Move the bank call out of the transaction and retry with an idempotency key."),
]
MORE = [
    ("user", "And the nightly export job?"),
    ("assistant", "It reads the whole orders table; page it by primary key instead."),
]


def _index(store: Store, emb: BagOfWordsEmbedder) -> None:
    job = IndexJob(store=store, embedder=emb, scanner=RuleScanner())
    index(discover(AgentHomes.resolve()), job)


def legacy_memory(path: Path, emb: BagOfWordsEmbedder) -> None:
    """A memory as an older funes left it: stamped before recipes were recorded."""
    with Store.open(path) as store:
        store.stamp_model(emb.model_id, emb.dim, embedding_input=LEGACY_EMBED_INPUT)
        _index(store, emb)
        store.raw.execute("delete from meta where key = 'embedding_input'")
        store.raw.commit()


def vectors_by_id(path: Path) -> dict[str, bytes]:
    with Store.open(path, readonly=True) as store:
        rows = store.raw.execute(
            "select c.id, v.embedding from chunks c join chunks_vec v on v.rowid = c.rowid"
        ).fetchall()
    return {r[0]: bytes(r[1]) for r in rows}


def fresh_memory(path: Path) -> dict[str, bytes]:
    with Store.open(path) as store:
        _index(store, BagOfWordsEmbedder())
        assert store.embedding_input == EMBED_INPUT
    return vectors_by_id(path)


def test_a_legacy_memory_is_re_embedded_to_exactly_what_a_fresh_index_holds(
    isolated_env: Path, tmp_path: Path
) -> None:
    write_session(isolated_env, conversation(PAIRS))
    legacy_memory(tmp_path / "old.db", BagOfWordsEmbedder())
    before = vectors_by_id(tmp_path / "old.db")
    expected = fresh_memory(tmp_path / "fresh.db")
    assert before != expected  # the replies' vectors differ between the recipes
    emb = RecordingEmbedder()
    with Store.open(tmp_path / "old.db") as store:
        assert store.embedding_input == LEGACY_EMBED_INPUT and chunks_owed(store) == 4
        report = reembed(store, emb)
        assert report is not None and report.finished and report.chunks == 4
        assert report.source == LEGACY_EMBED_INPUT and report.target == EMBED_INPUT
        assert store.embedding_input == EMBED_INPUT and store.reembedding is None
        assert chunks_owed(store) == 0 and reembed(store, emb) is None
    assert vectors_by_id(tmp_path / "old.db") == expected
    assert PAIRS[0][1] + "\n" + PAIRS[1][1] in emb.inputs


def test_an_interrupted_re_embedding_resumes_and_covers_rows_written_meanwhile(
    isolated_env: Path, tmp_path: Path
) -> None:
    write_session(isolated_env, conversation(PAIRS))
    memory = tmp_path / "old.db"
    legacy_memory(memory, BagOfWordsEmbedder())

    def stop_after_first_batch(done: int, total: int) -> None:
        raise KeyboardInterrupt  # Ctrl-C, a kill, or the time budget: the batch is committed

    with Store.open(memory) as store, pytest.raises(KeyboardInterrupt):
        reembed(store, BagOfWordsEmbedder(), batch=2, progress=stop_after_first_batch)
    with Store.open(memory) as store:
        target, upto = store.reembedding or ("", 0)
        assert target == EMBED_INPUT and upto > 0
        assert store.embedding_input == LEGACY_EMBED_INPUT and chunks_owed(store) == 2
        # rows already done re-embed with the target recipe, later ones with the old one
        rows = store.raw.execute("select rowid, text from chunks order by rowid").fetchall()
        inputs = stored_embedding_inputs(store, [(r[0], r[1]) for r in rows])
        assert inputs[1] == PAIRS[0][1] + "\n" + PAIRS[1][1] and inputs[3] == PAIRS[3][1]
    # the agent kept working: a hook worker indexes two more turns under the old recipe
    write_session(isolated_env, conversation(PAIRS + MORE))
    emb = RecordingEmbedder()
    with Store.open(memory) as store:
        _index(store, emb)
        assert sorted(emb.inputs) == sorted([MORE[0][1], MORE[1][1]])
        out_of_time = reembed(store, BagOfWordsEmbedder(), deadline=0.0)
        assert out_of_time is not None and out_of_time.chunks == 0 and out_of_time.pending == 4
        report = reembed(store, BagOfWordsEmbedder(), batch=2)
        assert report is not None and report.finished and report.chunks == 4
    assert vectors_by_id(memory) == fresh_memory(tmp_path / "fresh.db")


def test_funes_index_re_embeds_an_old_memory_and_status_says_so_until_then(
    isolated_env: Path,
) -> None:
    write_session(isolated_env, conversation(PAIRS))
    rt = Runtime.resolve()
    ref = parse_memory(None, rt)
    run_index(rt, ref, IndexRequest(unbudgeted=True))
    with Store.open(rt.paths.memory_db) as store:  # what an older funes left
        store.raw.execute("delete from meta where key = 'embedding_input'")
        store.raw.commit()
    status = run_status(rt, ref)
    [line] = [a for a in status.attention if "embedding recipe" in a]
    assert line.startswith("4 chunks") and "funes index --yes" in status.next_steps
    seen: list[tuple[int, int]] = []
    outcome = run_index(rt, ref, IndexRequest(), reembed_progress=lambda d, t: seen.append((d, t)))
    assert outcome.reembed is not None and outcome.reembed.finished and seen[-1] == (4, 4)
    with Store.open(rt.paths.memory_db, readonly=True) as store:
        assert store.embedding_input == EMBED_INPUT
    status = run_status(rt, ref)
    assert not [a for a in status.attention if "embedding recipe" in a]
    assert run_index(rt, ref, IndexRequest()).reembed is None


@pytest.mark.parametrize(
    "earlier", ["prompt-context/1+int8-128", "prompt-context/1+int8-128/fused"]
)
def test_a_memory_of_an_earlier_int8_recipe_is_re_embedded(
    isolated_env: Path, tmp_path: Path, earlier: str
) -> None:
    """The int8 recipes before the current one (128 tokens, masked attention) embedded the
    same inputs with another cut and graph: such a memory owes every chunk again and ends
    where a fresh index would."""
    write_session(isolated_env, conversation(PAIRS))
    expected = fresh_memory(tmp_path / "fresh.db")
    with Store.open(tmp_path / "old.db") as store:
        store.stamp_model(
            BagOfWordsEmbedder.model_id, BagOfWordsEmbedder.dim, embedding_input=earlier
        )
        _index(store, BagOfWordsEmbedder())
        assert store.embedding_input == earlier != EMBED_INPUT and chunks_owed(store) == 4
        report = reembed(store, RecordingEmbedder())
        assert report is not None and report.finished and report.chunks == 4
        assert store.embedding_input == EMBED_INPUT and chunks_owed(store) == 0
    assert vectors_by_id(tmp_path / "old.db") == expected
