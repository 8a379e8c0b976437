"""Recall quality of two embedding recipes side by side: today's float32 one and the current.

    python -m bench.recipes [--devset DIR] [--locomo DIR]

Each recipe (funes.chunks: `prompt-context/1`, the float32 graph at the model's 256 tokens in
batches; `EMBED_INPUT`, the dynamic-int8 graph at 104 tokens one text at a time) indexes the
dev set and every LoCoMo-dev conversation (each its own memory, through funes' parquet import)
into fresh stores with funes' own write path, then every question is recalled with funes'
default parameters (no reranker offline) and with the vector leg alone. Reported: turn
hit@1 / hit@5 on the dev set (109 answerable questions), session and turn hit@1 / hit@5 on
LoCoMo-dev's non-adversarial questions, micro-averaged over the conversations. Quality is the
condition on issue 15's speed: neither figure may fall below the float32 recipe's.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from bench.devset import DevsetSource, Question, load_questions, resolve_devset
from bench.metrics import QuestionScore, score_question
from bench.models import EMBEDDER_SPEC
from bench.quality import EVAL_K
from funes.chunks import EMBED_INPUT, PROMPT_CONTEXT
from funes.inference import Embedder
from funes.ingest import IndexJob, index
from funes.redact import default_scanner
from funes.retrieval import recall
from funes.settings import INDEX, RECALL, Leg
from funes.store import Store
from funes.traces import TraceSource
from funes.traces.parquet import ParquetSource

RECIPES = (PROMPT_CONTEXT, EMBED_INPUT)
ADVERSARIAL = "adversarial"
_REPO = Path(__file__).resolve().parent.parent


def default_locomo() -> Path:
    """$FUNES_LOCOMO, else ../shared/bench/locomo-dev beside the repository (or one level up)."""
    if os.environ.get("FUNES_LOCOMO"):
        return Path(os.environ["FUNES_LOCOMO"]).expanduser()
    for root in (_REPO.parent, _REPO.parent.parent):
        if (root / "shared" / "bench" / "locomo-dev").is_dir():
            return root / "shared" / "bench" / "locomo-dev"
    return _REPO.parent / "shared" / "bench" / "locomo-dev"


@dataclass(frozen=True, slots=True)
class Memory:
    """One indexed memory and the questions asked of it."""

    name: str
    store: Store
    questions: list[Question]
    now: datetime


def build(
    name: str, sources: Sequence[TraceSource], path: Path, embedder: Embedder, recipe: str
) -> Store:
    """Index `sources` into a fresh store stamped with `recipe`, all tiers, no budget."""
    store = Store.open(path)
    store.stamp_model(embedder.model_id, embedder.dim, embedding_input=recipe)
    job = IndexJob(
        store,
        embedder,
        default_scanner(),
        params=replace(INDEX, budget_s=0),
        all_tiers_at_once=True,
    )
    report = index(list(sources), job)
    if report.failures:
        raise RuntimeError(f"{name}: indexing failed: {report.failures}")
    return store


def max_ts(store: Store) -> datetime:
    value = store.raw.execute("select max(ts) from chunks").fetchone()[0]
    return datetime.fromisoformat(str(value).replace("Z", "+00:00"))


def memories(
    devset: Path, locomo: Path, tmp: Path, embedder: Embedder, recipe: str
) -> dict[str, list[Memory]]:
    """The dev-set memory and one memory per LoCoMo conversation, under `recipe`."""
    tag = recipe.replace("/", "_").replace("+", "_")
    source = DevsetSource(devset)
    dev = build("devset", [source], tmp / f"devset-{tag}.db", embedder, recipe)
    out: dict[str, list[Memory]] = {
        "devset": [Memory("devset", dev, load_questions(devset), source.fixed_now())],
        "locomo": [],
    }
    folders = sorted(p for p in locomo.iterdir() if (p / "traces.parquet").is_file())
    for folder in folders:
        store = build(
            folder.name,
            [ParquetSource([folder / "traces.parquet"])],
            tmp / f"locomo-{folder.name}-{tag}.db",
            embedder,
            recipe,
        )
        questions = [q for q in load_questions(folder) if q.category != ADVERSARIAL]
        out["locomo"].append(Memory(folder.name, store, questions, max_ts(store) + timedelta(1)))
    return out


def scores(
    mems: Sequence[Memory], embedder: Embedder, *, legs: tuple[Leg, ...]
) -> dict[str, float]:
    """Turn and session hit@1 / hit@5 (×100) over the answerable questions of `mems`."""
    params = replace(RECALL, k=EVAL_K, neighbors=0, rerank=False, legs=legs)
    if legs != RECALL.legs:
        params = replace(params, half_life_days=0.0)
    got: list[QuestionScore] = []
    for mem in mems:
        for q in mem.questions:
            if not q.answerable:
                continue
            result = recall(
                mem.store, q.question, embedder=embedder, reranker=None, params=params, now=mem.now
            )
            ranking = [(h.chunk.session_id, h.chunk.seq) for h in result.hits]
            got.append(score_question(q.qid, q.category, ranking, q.gold))
    n = max(len(got), 1)

    def rate(ranks: list[int | None], k: int) -> float:
        return round(100.0 * sum(1 for r in ranks if r is not None and r <= k) / n, 1)

    turn = [s.turn_rank for s in got]
    session = [s.session_rank for s in got]
    return {
        "questions": len(got),
        "turn_hit@1": rate(turn, 1),
        "turn_hit@5": rate(turn, 5),
        "session_hit@1": rate(session, 1),
        "session_hit@5": rate(session, 5),
    }


def compare(
    devset: Path, locomo: Path, tmp: Path, embedders: dict[str, Embedder] | None = None
) -> dict[str, Any]:
    """Both recipes over the dev set and LoCoMo-dev (see module docstring)."""
    from funes.inference.onnx_backend import OnnxEmbedder

    out: dict[str, Any] = {}
    for recipe in RECIPES:
        embedder = (embedders or {}).get(recipe) or OnnxEmbedder(EMBEDDER_SPEC, recipe=recipe)
        mems = memories(devset, locomo, tmp, embedder, recipe)
        out[recipe] = {
            name: {
                "default": scores(group, embedder, legs=RECALL.legs),
                "vector": scores(group, embedder, legs=(Leg.VECTOR,)),
                "bm25": scores(group, embedder, legs=(Leg.BM25,)),
            }
            for name, group in mems.items()
        }
        for group in mems.values():
            for mem in group:
                mem.store.close()
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.recipes", description=__doc__)
    parser.add_argument("--devset", default=None)
    parser.add_argument("--locomo", default=None)
    args = parser.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    devset = resolve_devset(args.devset)
    locomo = Path(args.locomo) if args.locomo else default_locomo()
    with tempfile.TemporaryDirectory(prefix="funes-recipes-") as tmp:
        result = compare(devset, locomo, Path(tmp))
    for recipe, sets in result.items():
        for name, pipelines in sets.items():
            for pipeline, s in pipelines.items():
                print(
                    f"{recipe:28s} {name:7s} {pipeline:8s} turn hit@1/5 {s['turn_hit@1']:5.1f} "
                    f"{s['turn_hit@5']:5.1f}  session hit@1/5 {s['session_hit@1']:5.1f} "
                    f"{s['session_hit@5']:5.1f}  ({s['questions']} questions)",
                    file=sys.stdout,
                )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
