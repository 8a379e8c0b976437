"""LoCoMo (dev half, ../shared/bench/locomo-dev) as funes memories: one per conversation.

Each conversation folder holds `traces.parquet` (the agent-traces layout; one row per LoCoMo
session, one message per dialog turn) and `questions.jsonl` (the dev-set schema). It is
indexed through funes' own parquet path (`funes.traces.parquet.ParquetSource` +
`funes.ingest.index`, what `funes index file.parquet` runs), so `seq` of a stored chunk is the
message index and a hit maps back to the gold `(session_id, turn)` through
`(chunk.session_id, chunk.seq)`, as on the dev set. LoCoMo scores retrieval per conversation:
each is its own memory, and figures are micro-averaged over the questions of all five.
Category `adversarial` (questions that pin one speaker's event on the other) is reported apart.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import replace
from datetime import timedelta
from pathlib import Path

from bench.devset import Question, load_questions
from bench.sets import BenchSet, Memory, max_ts
from funes.inference import Embedder
from funes.ingest import IndexJob, index
from funes.redact import Scanner
from funes.settings import INDEX
from funes.store import Store
from funes.traces.parquet import ParquetSource

_REPO = Path(__file__).resolve().parent.parent
_CANDIDATES = tuple(
    root / "shared" / "bench" / "locomo-dev" for root in (_REPO.parent, _REPO.parent.parent)
)
DEFAULT_LOCOMO = next((c for c in _CANDIDATES if c.is_dir()), _CANDIDATES[0])
ADVERSARIAL = "adversarial"


def resolve_locomo(cli_value: str | None, env: Mapping[str, str] | None = None) -> Path:
    """--locomo wins, then FUNES_LOCOMO, then ../shared/bench/locomo-dev next to the repository."""
    env = os.environ if env is None else env
    if cli_value:
        return Path(cli_value).expanduser()
    if env.get("FUNES_LOCOMO"):
        return Path(env["FUNES_LOCOMO"]).expanduser()
    return DEFAULT_LOCOMO


def conversations(root: Path) -> list[Path]:
    """The conversation folders under `root` (each with traces.parquet and questions.jsonl)."""
    if not root.is_dir():
        return []
    return sorted(
        p
        for p in root.iterdir()
        if (p / "traces.parquet").is_file() and (p / "questions.jsonl").is_file()
    )


def index_conversation(
    folder: Path, store_path: Path, embedder: Embedder, scanner: Scanner
) -> Memory:
    """Index one conversation's parquet into a fresh store through funes' parquet path."""
    store = Store.open(store_path)
    store.stamp_model(embedder.model_id, embedder.dim)
    job = IndexJob(
        store, embedder, scanner, params=replace(INDEX, budget_s=0), all_tiers_at_once=True
    )
    report = index([ParquetSource([folder / "traces.parquet"])], job)
    if report.failures:
        raise RuntimeError(f"{folder.name}: indexing failed: {report.failures}")
    questions: list[Question] = load_questions(folder)
    return Memory(folder.name, store, questions, max_ts(store) + timedelta(days=1))


def build_locomo(root: Path, tmp: Path, embedder: Embedder, scanner: Scanner) -> BenchSet:
    """Every conversation under `root` indexed into its own fresh store under `tmp`."""
    memories = [
        index_conversation(folder, tmp / f"locomo-{folder.name}.db", embedder, scanner)
        for folder in conversations(root)
    ]
    return BenchSet("locomo", memories)
