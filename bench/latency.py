"""Recall latency on large stores, cold start of `funes recall`, hook enqueue latency.

Large stores hold the dev set's real chunks (real vectors) plus synthetic filler: texts drawn
word by word from the dev set's own word distribution with its chunk-length distribution,
and random unit vectors. That is a latency probe only (quality is measured on the dev set).
"""

from __future__ import annotations

import os
import random
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from bench.metrics import percentile
from funes.chunks import Chunk
from funes.inference import Embedder, Reranker
from funes.retrieval import recall
from funes.settings import RECALL
from funes.store import Store, StoredChunk
from funes.traces import BlockType, Harness, Role

STAGES = (
    "embed_query",
    "bm25",  # overlaps embed_query + vector where recall runs the legs concurrently
    "vector",
    "bm25_wait",  # then: how much longer than embed_query + vector the BM25 leg took
    "fusion",
    "evidence",
    "fetch",
    "rerank",
    "recency",
    "neighbors",
    "render",
)


# Names the filler `fill_synthetic` writes: part of the cache key of bench/bigstore.py. Change
# it whenever the filler changes.
GENERATOR = "filler/1"


def fill_synthetic(
    store: Store, total: int, real: Sequence[StoredChunk], vectors: object, *, seed: int = 7
) -> None:
    """Copy the `real` chunks (with their vectors, row i ↔ real[i]) and add filler up to `total`.

    Every chunk is stored at the current redaction version, as `funes index` writes them: the
    real chunks passed the current scanner when the dev set was indexed, and the filler is
    their words. (Stored at version 0, each recall rescanned its 30 fetched chunks and the
    hits' neighbors: ~8 ms per query at 100k that a memory funes wrote never pays.)
    """
    import numpy as np

    from funes.redact import default_scanner

    version = default_scanner().version
    rng = np.random.default_rng(seed)
    chunks = [_as_chunk(c) for c in real]
    store.add(chunks, np.asarray(vectors, dtype=np.float32), redaction_version=version)
    words = [w for c in real for w in c.text.split()]
    lengths = [max(len(c.text.split()), 3) for c in real]
    pyrng = random.Random(seed)
    harnesses = list(Harness)[:4]
    types = list(BlockType)
    n = total - len(real)
    batch = 5000
    for start in range(0, n, batch):
        size = min(batch, n - start)
        vecs = rng.standard_normal((size, store.dim or 384)).astype(np.float32)
        vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
        fill: list[Chunk] = []
        for j in range(size):
            i = start + j
            session = f"synthetic-{i // 20:06d}"
            day = 1 + (i // 20) % 365
            text = " ".join(pyrng.choices(words, k=pyrng.choice(lengths)))
            fill.append(
                Chunk(
                    id=f"syn{i:013d}",
                    text=text,
                    session_id=session,
                    turn_id=f"turn-{i % 20}",
                    seq=i % 20,
                    ts=f"2024-{1 + (day - 1) // 31 % 12:02d}-{1 + (day - 1) % 28:02d}T12:00:{i % 60:02d}.000Z",
                    role=Role.ASSISTANT,
                    block_type=types[i % len(types)],
                    block_idx=0,
                    split_idx=0,
                    harness=harnesses[(i // 20) % len(harnesses)],
                    workdir="-home-dev-src-synthetic",
                    source_path=f"/synthetic/{session}.jsonl",
                    cwd="/home/dev/src/synthetic",
                )
            )
        store.add(fill, vecs, redaction_version=version)


def _as_chunk(c: StoredChunk) -> Chunk:
    return Chunk(
        id=c.id, text=c.text, session_id=c.session_id, turn_id=c.turn_id, seq=c.seq, ts=c.ts,
        role=Role(c.role), block_type=BlockType(c.block_type), block_idx=c.block_idx,
        split_idx=c.split_idx, harness=Harness(c.harness), workdir=c.workdir, source_path=c.source_path,
        tool_name=c.tool_name, parent_id=c.parent_id, cwd=c.cwd, git_branch=c.git_branch, host=c.host,
        parent_session_id=c.parent_session_id, scaffold=c.scaffold,
    )  # fmt: skip


@dataclass(slots=True)
class LatencyResult:
    chunks: int
    rerank: bool
    totals_ms: list[float] = field(default_factory=list)
    stages_ms: dict[str, list[float]] = field(default_factory=dict)

    def p(self, q: float) -> float:
        return percentile(self.totals_ms, q)

    def stage_p50(self) -> dict[str, float]:
        return {s: round(percentile(v, 50), 2) for s, v in self.stages_ms.items()}


def measure_recall(
    store: Store,
    queries: Sequence[str],
    *,
    embedder: Embedder,
    reranker: Reranker | None,
    reps: int,
    warmup: int = 3,
) -> LatencyResult:
    """Warm recall latency (models loaded) with funes' default parameters, render included."""
    from funes.commands.recall import RecallOutcome
    from funes.render import agent

    params = replace(RECALL, rerank=reranker is not None)
    out = LatencyResult(store.stats().chunks, reranker is not None)
    for i in range(warmup + reps):
        q = queries[i % len(queries)]
        t0 = time.perf_counter()
        result = recall(store, q, embedder=embedder, reranker=reranker, params=params)
        t1 = time.perf_counter()
        agent.recall(RecallOutcome(result, "local"))
        t2 = time.perf_counter()
        if i < warmup:
            continue
        out.totals_ms.append((t2 - t0) * 1000.0)
        stages = dict(result.timings_ms)
        stages["render"] = (t2 - t1) * 1000.0
        for s in STAGES:
            if s in stages:
                out.stages_ms.setdefault(s, []).append(stages[s])
    return out


def time_bare_query(bare: object, queries: Sequence[str], reps: int) -> list[float]:
    """ms per single-query embedding through the bare onnxruntime loop (the model alone)."""
    out = []
    for i in range(reps):
        t0 = time.perf_counter()
        bare.embed_one(queries[i % len(queries)])  # type: ignore[attr-defined]
        out.append((time.perf_counter() - t0) * 1000.0)
    return out


def time_bare_rerank(
    reranker: Reranker, query: str, passages: Sequence[str], reps: int
) -> list[float]:
    out = []
    for _ in range(reps):
        t0 = time.perf_counter()
        reranker.score(query, passages)
        out.append((time.perf_counter() - t0) * 1000.0)
    return out


def first_byte_ms(
    argv: Sequence[str], env: dict[str, str], stdin: bytes | None = None
) -> tuple[float, int]:
    """Milliseconds from process start to its first byte on stdout (or exit); and the exit code."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        list(argv),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=env,
    )
    assert proc.stdin is not None and proc.stdout is not None
    if stdin is not None:
        proc.stdin.write(stdin)
    proc.stdin.close()
    proc.stdout.read(1)
    elapsed = (time.perf_counter() - t0) * 1000.0
    proc.stdout.read()
    proc.wait()
    return elapsed, proc.returncode


def exit_ms(
    argv: Sequence[str], env: dict[str, str], stdin: bytes | None = None
) -> tuple[float, int]:
    """Milliseconds from process start to exit."""
    t0 = time.perf_counter()
    done = subprocess.run(list(argv), input=stdin or b"", capture_output=True, env=env, check=False)
    return (time.perf_counter() - t0) * 1000.0, done.returncode


def cold_start(funes_home: Path, query: str, runs: int) -> dict[str, object]:
    """`funes recall` in a fresh process (no rerank), time to first byte of stdout, and
    `funes --version` to exit, next to the bare interpreter start (`python -c pass`) of the
    same Python, interleaved. funes' modules are byte-compiled first, as an installed wheel's
    are (a source checkout run with PYTHONDONTWRITEBYTECODE would compile them on every run)."""
    import funes

    package = Path(funes.__file__).resolve().parent
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    subprocess.run(
        [sys.executable, "-m", "compileall", "-q", str(package)], env=env, check=False,
        capture_output=True,
    )  # fmt: skip
    exe = Path(sys.executable).parent / "funes"
    base = [str(exe)] if exe.exists() else [sys.executable, "-m", "funes"]
    env.update(
        FUNES_HOME=str(funes_home),
        FUNES_RERANKER="none",
        FUNES_EMBEDDER="all-minilm-l6-v2-int8",
        HF_HUB_OFFLINE="1",
    )
    first_byte_ms(base + ["recall", query], env)  # warm-up: the page cache, the model's stamp
    recall_ms, version_ms, codes = [], [], []
    base_ms = []
    for _ in range(runs):
        ms, rc = first_byte_ms(base + ["recall", query], env)
        recall_ms.append(ms)
        codes.append(rc)
        ms, rc = exit_ms(base + ["--version"], env)
        version_ms.append(ms)
        codes.append(rc)
        base_ms.append(exit_ms([sys.executable, "-c", "pass"], env)[0])
    return {
        "p50_ms": round(percentile(recall_ms, 50), 1),
        "version_p50_ms": round(percentile(version_ms, 50), 1),
        "python_start_p50_ms": round(percentile(base_ms, 50), 1),
        "ratio_to_python_start": round(percentile(recall_ms, 50) / percentile(base_ms, 50), 1),
        "exit_codes": sorted(set(codes)),
        "runs": runs,
    }


# A Claude Code `Stop` hook payload in the exact shape the real CLI sends (see
# ../shared/agent-e2e/captured/claude-code/claude-hooks-r5.jsonl); values are synthetic.
STOP_PAYLOAD = (
    b'{"session_id": "0b7d3c52-8f7e-4d2a-9c61-3e5a1f0c9b27", "transcript_path": '
    b'"/tmp/funes-bench/home/.claude/projects/-tmp-proj/0b7d3c52-8f7e-4d2a-9c61-3e5a1f0c9b27.jsonl", '
    b'"cwd": "/tmp/proj", "prompt_id": "p-1", "permission_mode": "default", "effort": "medium", '
    b'"hook_event_name": "Stop", "stop_hook_active": false, "last_assistant_message": "Done.", '
    b'"background_tasks": [], "session_crons": []}'
)


def hook_enqueue(repo: Path, spool: Path, runs: int) -> dict[str, object]:
    """The per-turn hook (`python -I -S hooks/enqueue.py`, a real Claude Code Stop payload on
    stdin), process start to exit, next to `python -I -S -c pass`; see bench/hook_latency.py.
    Measured with a worker holding the spool lock (what a hook pays mid-session); the worker it
    would spawn is a stand-in, so nothing is indexed."""
    from bench.hook_latency import measure_hook_latency

    hook = repo / "hooks" / "enqueue.py"
    if not hook.is_file():
        return {"skipped": "hooks/enqueue.py not present"}
    steady = measure_hook_latency(runs, mode="steady", hook=hook)
    cold = measure_hook_latency(max(5, runs // 4), mode="cold", hook=hook)
    return {
        "p50_ms": round(steady.p50_ms, 1),
        "p95_ms": round(steady.p95_ms, 1),
        "cold_p95_ms": round(cold.p95_ms, 1),
        "python_start_p50_ms": round(steady.baseline_p50_ms, 1),
        "ratio_to_python_start": round(steady.p50_ms / steady.baseline_p50_ms, 2),
        "exit_codes": [0] if steady.entries == runs else [f"{steady.entries}/{runs} entries"],
        "runs": runs,
    }
