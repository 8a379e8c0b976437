"""Honest misses: does recall say *no supporting passage* when nothing in memory answers?

Measured with funes' default pipeline (`RecallResult.supported`) on:
* answerable questions of both sets (LoCoMo's adversarial ones apart): the share that keep
  their hits (supported) — target ≥ 95%;
* the dev set's no-answer questions, and two probe sets asked of every memory of both sets
  (bench/probes: `off_topic.txt`, general-knowledge questions; `nonsense.txt`, strings that
  mean nothing) — the share reported as misses, all together — target ≥ 80%.
LoCoMo's adversarial questions pin one speaker's event on the other; their evidence is in the
conversation, so they are not no-answer questions for a retriever: their miss share is shown
for information only.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from bench.quality import APART, EVAL_K, PipelineResult
from bench.sets import BenchSet
from funes.inference import Embedder
from funes.retrieval import recall
from funes.settings import RECALL, RecallParams

PROBES = Path(__file__).resolve().parent / "probes"
KEEP_TARGET = 0.95
MISS_TARGET = 0.80


def load_probes(name: str) -> list[str]:
    """The probe questions of bench/probes/<name>.txt (comments and blank lines skipped)."""
    lines = (PROBES / f"{name}.txt").read_text(encoding="utf-8").splitlines()
    return [x.strip() for x in lines if x.strip() and not x.lstrip().startswith("#")]


@dataclass(slots=True)
class Tally:
    total: int = 0
    count: int = 0  # kept (answerable) or reported as a miss (the others)

    @property
    def share(self) -> float:
        return self.count / self.total if self.total else float("nan")

    def as_dict(self) -> dict[str, Any]:
        return {"n": self.total, "count": self.count, "share": round(self.share, 4)}


@dataclass(slots=True)
class Misses:
    answerable_kept: dict[str, Tally] = field(default_factory=dict)  # per set
    no_answer: Tally = field(default_factory=Tally)  # the dev set's no-answer questions
    off_topic: dict[str, Tally] = field(default_factory=dict)  # per set
    nonsense: dict[str, Tally] = field(default_factory=dict)
    adversarial_missed: Tally = field(default_factory=Tally)
    threshold: float = RECALL.min_support

    @property
    def kept(self) -> Tally:
        return _sum(self.answerable_kept.values())

    @property
    def missed(self) -> Tally:
        return _sum([self.no_answer, *self.off_topic.values(), *self.nonsense.values()])

    def as_dict(self) -> dict[str, Any]:
        return {
            "threshold": self.threshold,
            "answerable_kept": {k: v.as_dict() for k, v in self.answerable_kept.items()},
            "answerable_kept_all": self.kept.as_dict(),
            "no_answer_missed": self.no_answer.as_dict(),
            "off_topic_missed": {k: v.as_dict() for k, v in self.off_topic.items()},
            "nonsense_missed": {k: v.as_dict() for k, v in self.nonsense.items()},
            "missed_all": self.missed.as_dict(),
            "adversarial_missed": self.adversarial_missed.as_dict(),
            "targets": {"kept": KEEP_TARGET, "missed": MISS_TARGET},
        }


def _sum(tallies: Any) -> Tally:
    out = Tally()
    for t in tallies:
        out.total += t.total
        out.count += t.count
    return out


def measure(
    sets: list[tuple[BenchSet, PipelineResult]],
    *,
    embedder: Embedder | None,
    params: RecallParams = RECALL,
) -> Misses:
    """Tally the default pipeline's results on each set's questions and ask the probes."""
    out = Misses(threshold=params.min_support)
    probe_params = replace(params, k=EVAL_K, neighbors=0)
    off_topic, nonsense = load_probes("off_topic"), load_probes("nonsense")
    for bench_set, result in sets:
        kept = out.answerable_kept.setdefault(bench_set.name, Tally())
        for memory in bench_set.memories:
            for q in memory.questions:
                r = result.results[q.qid]
                unsupported = not r.supported or not r.hits
                if q.category in APART:
                    out.adversarial_missed.total += 1
                    out.adversarial_missed.count += int(unsupported)
                elif q.answerable:
                    kept.total += 1
                    kept.count += int(not unsupported)
                else:
                    out.no_answer.total += 1
                    out.no_answer.count += int(unsupported)
            for texts, tallies in ((off_topic, out.off_topic), (nonsense, out.nonsense)):
                tally = tallies.setdefault(bench_set.name, Tally())
                for text in texts:
                    r = recall(
                        memory.store,
                        text,
                        embedder=embedder,
                        reranker=None,
                        params=probe_params,
                        now=memory.now,
                    )
                    tally.total += 1
                    tally.count += int(not r.supported or not r.hits)
    return out
