"""The bench's phases in order, each adding its figures to one results dict (JSON-ready)."""

from __future__ import annotations

import shutil
import sys
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

from bench import (
    bigstore,
    latency,
    misses,
    push_memory,
    quality,
    remote_latency,
    secrets,
    storage,
    throughput,
)
from bench.devset import DevsetSource, load_questions
from bench.locomo import DEFAULT_LOCOMO, build_locomo, conversations
from bench.machine import machine_info
from bench.metrics import percentile
from bench.models import RecordingEmbedder, latency_proxy_reranker, load_embedder, real_reranker
from bench.sets import BenchSet, Memory
from bench.vector_cache import CachedEmbedder
from funes.inference import Reranker
from funes.ingest.embed_input import stored_embedding_inputs
from funes.redact import default_scanner
from funes.settings import RECALL, RemoteParams
from funes.store import Store


def log(message: str) -> None:
    print(f"bench: {message}", file=sys.stderr, flush=True)


def run_all(
    devset: Path,
    tmp: Path,
    *,
    quick: bool,
    repo: Path,
    locomo: Path | None = None,
    quality_only: bool = False,
) -> dict[str, Any]:
    locomo = locomo if locomo is not None else DEFAULT_LOCOMO
    results: dict[str, Any] = {
        "mode": "quality only" if quality_only else ("quick" if quick else "full"),
        "devset": str(devset),
        "locomo_dir": str(locomo),
    }
    results["machine"] = machine_info(repo)
    source = DevsetSource(devset)
    questions = load_questions(devset)
    now = source.fixed_now()
    scanner = default_scanner()
    results["recall_defaults"] = {
        k: (list(v) if isinstance(v, tuple) else v) for k, v in asdict(RECALL).items()
    }

    log("loading models")
    embedder = RecordingEmbedder(load_embedder())
    reranker, reranker_note = real_reranker()
    results["models"] = {
        "embedder": embedder.model_id,
        "reranker": reranker_note if reranker is None else reranker.model_id,
    }

    # 1. index throughput; the store it builds is the quality store
    if quality_only:  # the quality store alone, no throughput measurement
        log("indexing the dev set")
        store, _, _ = throughput.index_devset(source, tmp / "devset-int8.db", embedder, scanner)
    else:
        log("index throughput (bare onnxruntime vs funes pipeline)")
        store, tp = throughput.measure(
            source, tmp / "devset-int8.db", embedder, scanner, rounds=1 if quick else 4
        )
        bare_chunks_per_s = tp.per_s(tp.bare_s)
        results["index"] = {
            "chunks": tp.chunks,
            "chunks_by_priority": tp.chunks_by_priority,
            "tokens": tp.tokens,
            "rounds": tp.rounds,
            "new_stage_s": {k: round(v, 2) for k, v in tp.new.stages.items()},
            "old_stage_s": {k: round(v, 2) for k, v in tp.old.stages.items()},
            "new_searchable_chunks_per_s": round(tp.per_s(tp.new.searchable_s), 2),
            "new_every_vector_chunks_per_s": round(tp.per_s(tp.new.total_s), 2),
            "old_chunks_per_s": round(tp.per_s(tp.old.total_s), 2),
            "speedup_searchable": round(tp.old.total_s / tp.new.searchable_s, 2),
            "speedup_every_vector": round(tp.old.total_s / tp.new.total_s, 2),
            "target_speedup": 5.0,
            # the new recipe's model alone on the same inputs, and what the pipeline adds to it
            "bare_chunks_per_s": round(bare_chunks_per_s, 2),
            "ratio": round(tp.per_s(tp.new.total_s) / bare_chunks_per_s, 3),
            "target_ratio": 0.85,
            "history_300k": tp.extrapolate(),
            "peak_rss_mb": round(tp.peak_rss_mb, 1),
            "failures": len(tp.report.failures),
            "redactions": tp.report.redactions,
        }

    # 2. recall quality, every pipeline on the same store; then LoCoMo, one memory per
    # conversation (vectors cached on disk by content: bench/vector_cache.py); honest misses
    log("recall quality on the dev set")
    dev_set = BenchSet("devset", [Memory("devset", store, questions, now)])
    results["quality"], dev_runs = _quality(dev_set, embedder, reranker, reranker_note)
    sets = [(dev_set, dev_runs["default"])]
    if conversations(locomo):
        log(f"recall quality on LoCoMo ({locomo})")
        cached = CachedEmbedder(
            lambda: embedder.inner, model_id=embedder.model_id, dim=embedder.dim
        )
        locomo_set = build_locomo(locomo, tmp, cached, scanner)
        results["locomo"], locomo_runs = _quality(locomo_set, cached, reranker, reranker_note)
        results["locomo"]["memories"] = {m.name: len(m.questions) for m in locomo_set.memories}
        results["locomo"]["vector_cache"] = {"hits": cached.hits, "misses": cached.misses}
        sets.append((locomo_set, locomo_runs["default"]))
    else:
        results["locomo"] = {"skipped": f"no LoCoMo conversations under {locomo}"}
    log("honest misses (no-answer questions, off-topic and nonsense probes)")
    results["misses"] = misses.measure(sets, embedder=embedder).as_dict()
    if conversations(locomo):
        locomo_set.close()
    # the recorded vectors are keyed by what the embedder read (text with its prompt context)
    inputs = stored_embedding_inputs(store, [(c.rowid, c.text) for c in _all_chunks(store)])
    vectors = [embedder.vectors[text] for text in inputs]
    probe = quality.no_answer_probe(questions, embedder, vectors)
    results["no_answer_probe"] = asdict(probe)
    if quality_only:
        store.close()
        return results

    # 3. storage: int8 (default) vs float32 vectors, same chunks and vectors
    log("storage footprint, float32 vs int8")
    embedder.offline = True
    float_store, _, _ = throughput.index_devset(
        source, tmp / "devset-float.db", embedder, scanner, element="float"
    )
    embedder.offline = False
    fp_int8, fp_float = storage.footprint(store), storage.footprint(float_store)
    float_quality, _ = _quality(
        BenchSet("devset-float32", [Memory("devset", float_store, questions, now)]),
        embedder,
        None,
        reranker_note,
        names=("vector", "hybrid_rrf", "default"),
    )
    results["storage"] = {
        "devset_int8": {
            **fp_int8.per_chunk(),
            "chunks": fp_int8.chunks,
            "file_bytes": fp_int8.file_bytes,
        },
        "devset_float32": {
            **fp_float.per_chunk(),
            "chunks": fp_float.chunks,
            "file_bytes": fp_float.file_bytes,
        },
        "fts_detail_variants_bytes_per_chunk": storage.fts_variants(
            [c.text for c in _all_chunks(store)]
        ),
        "quantization_turn_hit5": {
            name: {
                "float32": float_quality[name]["overall"]["turn_hit@5"],
                "int8": results["quality"][name]["overall"]["turn_hit@5"],
            }
            for name in ("vector", "hybrid_rrf", "default")
        },
        "target_bytes_per_chunk": 1200,
    }
    float_store.close()

    # 4. recall latency at 10k, 100k and 1M (quick: 10k, 20k), stores cached in bench/cache
    sizes = (10_000, 20_000) if quick else (10_000, 100_000, 1_000_000)
    reps_plain, reps_rerank = (12, 3) if quick else (60, 20)
    proxy, proxy_label = latency_proxy_reranker()
    bare = throughput.BareEmbedder()
    texts = [q.question for q in questions]
    real_chunks = _all_chunks(store)
    results["latency"] = {
        "rerank_model": reranker.model_id if reranker else proxy_label,
        "sizes": {},
    }
    bare_query = latency.time_bare_query(bare, texts, max(reps_plain, 20))
    pool = [c.text for c in real_chunks[:30]]
    bare_rerank = latency.time_bare_rerank(proxy, texts[0], pool, 1 if quick else 3)
    results["latency"]["baseline"] = {
        "bare_query_embed_p50_ms": round(percentile(bare_query, 50), 2),
        "bare_rerank_30_p50_ms": round(percentile(bare_rerank, 50), 1),
    }
    for size in sizes:
        log(f"recall latency at {size} chunks")
        path, built_s = bigstore.cached_store(
            size, real_chunks, vectors, model_id=embedder.model_id, dim=embedder.dim
        )
        big = Store.open(path)
        entry: dict[str, Any] = {
            "fill_s": None if built_s is None else round(built_s, 1),
            "vector_index": big.vector_index_path is not None and big.vector_index_path.exists(),
        }
        # the rerank stage costs the same at every size: measured where its target is (100k)
        runs: list[tuple[str, Reranker | None, int]] = [
            ("no_rerank", None, reps_plain if size < 1_000_000 else reps_plain // 2)
        ]
        if size <= 100_000:
            runs.append(("rerank_30", reranker or proxy, reps_rerank))
        for label, rr, reps in runs:
            res = latency.measure_recall(big, texts, embedder=embedder, reranker=rr, reps=reps)
            entry[label] = {
                "p50_ms": round(res.p(50), 1),
                "p95_ms": round(res.p(95), 1),
                "reps": len(res.totals_ms),
                "stages_p50_ms": res.stage_p50(),
            }
        entry["no_rerank"]["ratio_to_bare_query_embed"] = round(
            entry["no_rerank"]["p50_ms"]
            / results["latency"]["baseline"]["bare_query_embed_p50_ms"],
            1,
        )
        if "rerank_30" in entry:
            entry["rerank_30"]["ratio_to_bare_rerank"] = round(
                entry["rerank_30"]["stages_p50_ms"].get("rerank", 0.0)
                / results["latency"]["baseline"]["bare_rerank_30_p50_ms"],
                2,
            )
        fp = storage.footprint(big)
        entry["bytes_per_chunk"] = fp.per_chunk()
        if entry["vector_index"]:
            assert big.vector_index_path is not None
            entry["vector_index_bytes_per_chunk"] = round(
                big.vector_index_path.stat().st_size / max(fp.chunks, 1), 1
            )
        results["latency"]["sizes"][str(size)] = entry
        big.close()

    # 5. cold start of `funes recall` against the dev set memory
    log("cold start of `funes recall`")
    home = tmp / "funes-home"
    (home / "data").mkdir(parents=True)
    store.raw.execute("pragma wal_checkpoint(TRUNCATE)")
    shutil.copy(store.path, home / "data" / "memory.db")
    results["cold_start"] = latency.cold_start(home, questions[0].question, 3 if quick else 7)

    # 5b. warm recall from a remote (a directory export, the loopback Hub stand-in) vs local
    log("remote recall (directory and Hub stand-in) vs local")
    results["remote_recall"] = _remote_recall(home / "data" / "memory.db", devset, quick=quick)

    # 6. hook enqueue
    log("hook enqueue")
    spool = tmp / "spool"
    spool.mkdir()
    results["hook_enqueue"] = latency.hook_enqueue(repo, spool, 10 if quick else 40)

    # 7. secrets
    log("redaction")
    red = secrets.measure()
    log("secrets: field corpus through index and push")
    red["field"] = secrets.field_quality(tmp / "secrets-field")
    log("secrets: the publish gate on the dev set, LoCoMo and technical prose")
    red["gate_false_positives"] = secrets.gate_false_positives(
        tmp / "secrets-gate", devset=devset, locomo=locomo
    )
    block_texts = [b.text for t in source.turns() for b in t.blocks]
    red_s = secrets.redaction_seconds(block_texts)
    red["devset_redaction_s"] = round(red_s, 3)
    pipe_s = tp.new.total_s / tp.rounds
    red["index_with_vs_without_redaction"] = round(pipe_s / max(pipe_s - red_s, 1e-9), 3)
    results["redaction"] = red
    store.close()

    # 8. push peak RSS against the memory's size (synthetic memories, a child process each)
    log("push peak RSS (synthetic memories)")
    results["push_memory"] = push_memory.measure(
        tmp / "push-memory", sizes=push_memory.QUICK_SIZES if quick else push_memory.FULL_SIZES
    )
    return results


def _remote_recall(memory_db: Path, devset: Path, *, quick: bool) -> dict[str, Any]:
    """Warm recall p50 local vs remote, each in a fresh process (bench/remote_latency.py):
    the directory remote at funes' revision-check TTL, the Hub stand-in at that TTL and at 0
    (the head checked on every call)."""
    ttl = RemoteParams.resolve().revision_ttl_s
    questions = devset / "questions.jsonl"
    repeats = 1 if quick else 3
    out: dict[str, Any] = {"target_ratio": remote_latency.TARGET_RATIO, "repeats": repeats}
    for via, ttls in (("dir", (ttl,)), ("hub", (ttl, 0.0) if ttl > 0 else (0.0,))):
        out[via] = remote_latency.run_isolated(
            memory_db, questions, via=via, repeats=repeats, ttls=ttls
        )
    return out


def _all_chunks(store: Store) -> list[Any]:
    rowids = [int(r[0]) for r in store.raw.execute("select rowid from chunks order by rowid")]
    rows = store.fetch(rowids)
    return [rows[r] for r in rowids]


def _quality(
    bench_set: BenchSet,
    embedder: Any,
    reranker: Any,
    reranker_note: str,
    names: tuple[str, ...] | None = None,
) -> tuple[dict[str, Any], dict[str, quality.PipelineResult]]:
    out: dict[str, Any] = {}
    runs: dict[str, quality.PipelineResult] = {}
    for pipeline in quality.pipelines():
        if names is not None and pipeline.name not in names:
            continue
        t0 = time.perf_counter()
        res = quality.evaluate(
            bench_set,
            pipeline,
            embedder=embedder,
            reranker=reranker,
            reranker_note=reranker_note,
        )
        if not res.available or res.breakdown is None:
            out[pipeline.name] = {"available": False, "note": res.note}
            continue
        runs[pipeline.name] = res
        out[pipeline.name] = {
            "available": True,
            "note": res.note,
            "overall": res.breakdown.overall.as_dict(),
            "per_category": {c: s.as_dict() for c, s in res.breakdown.per_category.items()},
            "apart": None if res.apart is None else res.apart.overall.as_dict(),
            "no_answer_questions_with_hits": f"{res.no_answer_with_hits}/{res.no_answer_total}",
            "eval_s": round(time.perf_counter() - t0, 1),
            "ms_per_question": round(
                1000 * (time.perf_counter() - t0) / max(bench_set.questions, 1), 1
            ),
        }
    return out, runs
