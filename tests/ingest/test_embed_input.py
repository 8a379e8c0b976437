"""What the embedder reads: the stored text stays the raw passage; the vector of an assistant or
tool chunk is made from the prompt that opened its exchange plus the chunk, under the recipe the
memory recorded when it was created (an older memory keeps embedding the text alone)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path

from fakes import BagOfWordsEmbedder, RecordingEmbedder
from support.claude import conversation, write_session

from funes.chunks import EMBED_INPUT, LEGACY_EMBED_INPUT
from funes.ingest import IndexJob, index
from funes.ingest.indexing import backfill_vectors
from funes.redact import RuleScanner
from funes.store import Store
from funes.traces import (
    AgentHomes,
    Block,
    BlockType,
    Harness,
    ReadStats,
    Role,
    Turn,
    Unit,
    discover,
)

PAIRS = [
    ("user", "Why does the checkout page time out under load?"),
    ("assistant", "The payment webhook handler holds a row lock while it calls the bank API."),
    ("user", "How do we fix it?"),
    ("assistant", "Move the bank call out of the transaction and retry with an idempotency key."),
]


def _index(store: Store, emb: BagOfWordsEmbedder) -> None:
    index(
        discover(AgentHomes.resolve()), IndexJob(store=store, embedder=emb, scanner=RuleScanner())
    )


def test_a_reply_is_embedded_with_its_prompt_but_stored_as_itself(
    isolated_env: Path, tmp_path: Path
) -> None:
    write_session(isolated_env, conversation(PAIRS))
    emb = RecordingEmbedder()
    with Store.open(tmp_path / "m.db") as store:
        _index(store, emb)
        assert store.embedding_input == EMBED_INPUT
        texts = {r[0] for r in store.raw.execute("select text from chunks")}
    assert texts == {text for _, text in PAIRS}
    assert set(emb.inputs) == {
        PAIRS[0][1],
        PAIRS[0][1] + "\n" + PAIRS[1][1],
        PAIRS[2][1],
        PAIRS[2][1] + "\n" + PAIRS[3][1],
    }


def test_a_memory_from_before_recipes_keeps_embedding_the_text_alone(
    isolated_env: Path, tmp_path: Path
) -> None:
    write_session(isolated_env, conversation(PAIRS[:2]))
    with Store.open(tmp_path / "m.db") as store:
        _index(store, BagOfWordsEmbedder())
        # a memory stamped before the recipe was recorded has no `embedding_input` key
        store.raw.execute("delete from meta where key = 'embedding_input'")
        store.raw.commit()
    write_session(isolated_env, conversation(PAIRS))
    emb = RecordingEmbedder()
    with Store.open(tmp_path / "m.db") as store:
        assert store.embedding_input == LEGACY_EMBED_INPUT
        _index(store, emb)
    # no prompt in front: no mixed recipes
    assert sorted(emb.inputs) == sorted([PAIRS[2][1], PAIRS[3][1]])


def test_a_backfilled_vector_is_made_from_the_same_input_as_an_indexed_one(
    isolated_env: Path, tmp_path: Path
) -> None:
    write_session(isolated_env, conversation(PAIRS))
    with Store.open(tmp_path / "m.db") as store:
        _index(store, BagOfWordsEmbedder())
        # as if indexed before owed vectors were tracked, while sqlite-vec was missing
        store.raw.execute("delete from chunks_vec")
        store.raw.execute("delete from vectors_owed")
        store.raw.execute("insert into meta (key, value) values ('owed_scan', '1')")
        store.raw.commit()
        emb = RecordingEmbedder()
        assert backfill_vectors(store, emb) == len(PAIRS)
    assert set(emb.inputs) == {
        PAIRS[0][1],
        PAIRS[0][1] + "\n" + PAIRS[1][1],
        PAIRS[2][1],
        PAIRS[2][1] + "\n" + PAIRS[3][1],
    }


class _TwoSessionsOneUnit:
    """A unit holding two sessions (as an agent-traces parquet file does)."""

    harness = Harness.PARQUET

    def __init__(self, path: Path) -> None:
        self.path = path

    def units(self) -> Iterable[Unit]:
        yield Unit(
            key=str(self.path), signature="1", harness=self.harness, path=self.path, sort_key=1.0
        )

    def read(self, unit: Unit, stats: ReadStats) -> Iterator[Turn]:
        rows = [("a", Role.USER, "Which queue do we use?"), ("a", Role.ASSISTANT, "procrastinate")]
        rows.append(("b", Role.ASSISTANT, "resumed without a prompt"))
        for seq, (session, role, text) in enumerate(rows):
            yield Turn(
                Harness.PARQUET,
                session,
                f"t{seq}",
                seq,
                "2026-02-28T00:00:00.000Z",
                role,
                (Block(BlockType.TEXT, text),),
                str(self.path),
                cwd="/w",
            )

    def unit_for_hook(self, payload: Mapping[str, object]) -> Unit | None:
        return None


def test_a_prompt_never_carries_over_into_another_session_of_the_same_unit(tmp_path: Path) -> None:
    emb = RecordingEmbedder()
    with Store.open(tmp_path / "m.db") as store:
        index([_TwoSessionsOneUnit(tmp_path / "t.parquet")], IndexJob(store, emb, RuleScanner()))  # type: ignore[list-item]
    assert emb.inputs == [
        "Which queue do we use?",
        "Which queue do we use?\nprocrastinate",
        "resumed without a prompt",
    ]
