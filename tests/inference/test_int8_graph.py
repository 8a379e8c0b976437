"""The current embedding recipe: a dynamic-int8 graph built once from the pinned float graph,
cached and checked by hash, run one text at a time so a vector depends on its text alone."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from funes.chunks import EMBED_INPUT, PROMPT_CONTEXT
from funes.inference import MINILM_L6_INT8_PKG
from funes.inference.onnx_backend import EMBED_TOKENS, OnnxEmbedder, resolve_file
from funes.inference.quantize import QUANTIZATION, build_graph, cached_graph, graph_path

pytestmark = pytest.mark.models

TEXTS = [
    "pool size",
    "error[E0432]: unresolved import `clap::Parser` " * 30,
    "the connection was refused because pgbouncer moved to port 6433",
    "ok",
    "a much longer explanation of why the streaming parser was replaced by mmap " * 12,
    "why did the nightly backfill hit EMFILE on the station directories?",
]


def test_building_the_graph_twice_gives_the_same_bytes(tmp_path: Path) -> None:
    spec = MINILM_L6_INT8_PKG
    source = resolve_file(spec, spec.onnx)
    first, sha1 = build_graph(spec, source, tmp_path / "a")
    second, sha2 = build_graph(spec, source, tmp_path / "b")
    assert sha1 == sha2
    assert first.read_bytes() == second.read_bytes()
    manifest = json.loads(first.with_suffix(".json").read_text())
    assert manifest["sha256"] == sha1
    assert manifest["source_sha256"] == spec.onnx.sha256
    assert manifest["quantization"] == QUANTIZATION
    assert first.stat().st_mode & 0o777 == 0o600
    assert first.with_suffix(".json").stat().st_mode & 0o777 == 0o600


def test_saved_fusions_change_no_vector_and_speed_up_the_session_build(tmp_path: Path) -> None:
    """The cached graph carries onnxruntime's extended fusions (step 3 of the build): its
    outputs are the same bits as those of the graph quantized only (the recipe up to
    dynamic-int8-pc7, whose vectors memories hold), so no memory needs re-embedding."""
    import time

    import onnxruntime as ort
    from onnxruntime.quantization import QuantType, quantize_dynamic

    spec = MINILM_L6_INT8_PKG
    source = resolve_file(spec, spec.onnx)
    fused, _ = build_graph(spec, source, tmp_path / "cache")
    folded, quantized = tmp_path / "folded.onnx", tmp_path / "int8.onnx"
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
    options.optimized_model_filepath = str(folded)
    ort.InferenceSession(str(source), options, providers=["CPUExecutionProvider"])
    quantize_dynamic(
        folded, quantized, per_channel=True, reduce_range=True, weight_type=QuantType.QInt8
    )
    assert fused.stat().st_size != quantized.stat().st_size  # the fusions are saved

    def session(path: Path) -> tuple[ort.InferenceSession, float]:
        options = ort.SessionOptions()
        options.intra_op_num_threads = 1
        started = time.perf_counter()
        built = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
        return built, time.perf_counter() - started

    tokenizer = OnnxEmbedder(spec, cache_dir=tmp_path / "cache")._tokenizer
    sessions = {fused: session(fused)[0], quantized: session(quantized)[0]}
    for text in TEXTS:
        ids = np.array([tokenizer.encode(text).ids], dtype=np.int64)
        feeds = {"input_ids": ids, "attention_mask": np.ones_like(ids)}
        feeds["token_type_ids"] = np.zeros_like(ids)
        outputs = [s.run(None, feeds)[0] for s in sessions.values()]
        assert np.array_equal(outputs[0], outputs[1]), text
    builds: dict[Path, list[float]] = {fused: [], quantized: []}
    for _ in range(5):  # interleaved: the best of each, so load from other jobs hits both
        for path in builds:
            builds[path].append(session(path)[1])
    assert min(builds[fused]) < min(builds[quantized]), builds


def test_a_graph_another_onnxruntime_built_is_rebuilt(tmp_path: Path) -> None:
    import onnxruntime as ort

    spec = MINILM_L6_INT8_PKG
    cache = tmp_path / "models"
    OnnxEmbedder(spec, cache_dir=cache)
    manifest_path = graph_path(spec, cache).with_suffix(".json")
    manifest = json.loads(manifest_path.read_text())
    assert cached_graph(spec, cache, manifest["onnxruntime"]) is not None
    manifest["onnxruntime"] = "0.0.1"
    manifest_path.write_text(json.dumps(manifest))
    assert cached_graph(spec, cache) is not None  # without a version to compare: trusted
    assert cached_graph(spec, cache, ort.__version__) is None
    OnnxEmbedder(spec, cache_dir=cache)  # rebuilds it
    assert json.loads(manifest_path.read_text())["onnxruntime"] != "0.0.1"


def test_an_altered_cached_graph_is_rebuilt_not_used(tmp_path: Path) -> None:
    spec = MINILM_L6_INT8_PKG
    cache = tmp_path / "models"
    reference = OnnxEmbedder(spec, cache_dir=cache).embed(TEXTS[:2])
    path = graph_path(spec, cache)
    good = path.read_bytes()
    path.write_bytes(good[:-1000] + b"\0" * 1000)  # same size, other bytes
    again = OnnxEmbedder(spec, cache_dir=cache)
    assert path.read_bytes() == good
    assert np.array_equal(again.embed(TEXTS[:2]), reference)


def test_a_graph_without_its_manifest_is_not_trusted(tmp_path: Path) -> None:
    spec = MINILM_L6_INT8_PKG
    cache = tmp_path / "models"
    OnnxEmbedder(spec, cache_dir=cache)
    graph_path(spec, cache).with_suffix(".json").unlink()
    assert cached_graph(spec, cache) is None
    OnnxEmbedder(spec, cache_dir=cache)
    assert cached_graph(spec, cache) is not None


def test_a_vector_depends_on_its_text_alone() -> None:
    """Dynamic quantization scales activations per run: batching texts would make a vector
    depend on its neighbours. One text per run, any order, any number of workers: same bits."""
    embedder = OnnxEmbedder(MINILM_L6_INT8_PKG, workers=2)
    together = embedder.embed(TEXTS)
    alone = np.stack([embedder.embed([t])[0] for t in TEXTS])
    reversed_ = embedder.embed(TEXTS[::-1])[::-1]
    one_worker = OnnxEmbedder(MINILM_L6_INT8_PKG, workers=1).embed(TEXTS)
    assert together.shape == (len(TEXTS), 384)
    assert np.array_equal(together, alone)
    assert np.array_equal(together, reversed_)
    assert np.array_equal(together, one_worker)
    assert np.allclose(np.linalg.norm(together, axis=1), 1.0, atol=1e-5)


def test_query_vectors_equal_passage_vectors_of_the_prefixed_query() -> None:
    embedder = OnnxEmbedder(MINILM_L6_INT8_PKG)
    for q in ("why did the parser break", "EMFILE"):
        assert np.array_equal(embedder.embed_query(q), embedder.embed([q])[0])


def test_int8_vectors_stay_close_to_the_float_recipes_and_cut_at_128_tokens() -> None:
    new = OnnxEmbedder(MINILM_L6_INT8_PKG, recipe=EMBED_INPUT)
    old = OnnxEmbedder(MINILM_L6_INT8_PKG, recipe=PROMPT_CONTEXT)
    short = [t for t in TEXTS if len(t) < 200]
    cosines = np.sum(new.embed(short) * old.embed(short), axis=1)
    assert np.min(cosines) > 0.95  # "ok", two tokens, is the farthest (0.97)
    long = "word " * 400
    assert np.array_equal(new.embed([long]), new.embed(["word " * (EMBED_TOKENS - 2)]))
    assert not np.array_equal(old.embed([long]), old.embed(["word " * (EMBED_TOKENS - 2)]))


def test_an_unknown_recipe_is_refused() -> None:
    from funes.errors import ModelUnavailable

    with pytest.raises(ModelUnavailable, match="recipe"):
        OnnxEmbedder(MINILM_L6_INT8_PKG, recipe="prompt-context/9")
