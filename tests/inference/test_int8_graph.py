"""The current embedding recipe: a dynamic-int8 graph built once from the pinned float graph,
cached and checked by hash, run one text at a time so a vector depends on its text alone."""

from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from funes.chunks import EMBED_INPUT, PROMPT_CONTEXT
from funes.inference import MINILM_L6_INT8_PKG
from funes.inference.onnx_backend import EMBED_TOKENS, OnnxEmbedder, resolve_file
from funes.inference.quantize import (
    DISABLED_OPTIMIZERS,
    QUANTIZATION,
    build_graph,
    cached_graph,
    graph_path,
    weights_path,
)

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
    first, sha1, weights1 = build_graph(spec, source, tmp_path / "a")
    second, sha2, weights2 = build_graph(spec, source, tmp_path / "b")
    assert (sha1, weights1) == (sha2, weights2)
    assert first.read_bytes() == second.read_bytes()
    assert weights_path(first).read_bytes() == weights_path(second).read_bytes()
    manifest = json.loads(first.with_suffix(".json").read_text())
    assert manifest["sha256"] == sha1
    assert manifest["weights_sha256"] == weights1
    assert manifest["source_sha256"] == spec.onnx.sha256
    assert manifest["quantization"] == QUANTIZATION
    for written in (first, weights_path(first), first.with_suffix(".json")):
        assert written.stat().st_mode & 0o777 == 0o600, written.name
    assert sorted(p.name for p in (tmp_path / "a").iterdir()) == sorted(
        p.name for p in (first, weights_path(first), first.with_suffix(".json"))
    )  # no temporary file left behind


def test_the_weights_sit_beside_the_graph_and_change_no_vector(tmp_path: Path) -> None:
    """Step 5 of the build: the graph file holds the nodes, the weights file every large
    tensor (onnxruntime maps it at load: a query session builds ~5x faster, `make bench`:
    cold recall). The outputs are those of the same graph with its weights inline, bit for
    bit, in a query session (no prepacking) and an indexing one."""
    import onnx
    import onnxruntime as ort

    spec = MINILM_L6_INT8_PKG
    built, _, _ = build_graph(spec, resolve_file(spec, spec.onnx), tmp_path / "cache")
    assert built.stat().st_size < 200_000 < 20_000_000 < weights_path(built).stat().st_size
    inline = tmp_path / "inline.onnx"
    onnx.save_model(onnx.load(str(built)), str(inline))  # loads the weights back in
    assert inline.stat().st_size > 20_000_000
    tokenizer = OnnxEmbedder(spec, cache_dir=tmp_path / "cache")._tokenizer
    for prepack in (True, False):
        options = ort.SessionOptions()
        options.intra_op_num_threads = 1
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
        if not prepack:
            options.add_session_config_entry("session.disable_prepacking", "1")
        sessions = [
            ort.InferenceSession(
                str(path),
                options,
                providers=["CPUExecutionProvider"],
                disabled_optimizers=list(DISABLED_OPTIMIZERS),
            )
            for path in (built, inline)
        ]
        for text in TEXTS:
            ids = tokenizer.encode(text).ids
            mapped, parsed = (_run(s, ids) for s in sessions)
            assert np.array_equal(mapped, parsed), (prepack, text[:30])


def _folded_and_fused(source: Path, tmp_path: Path) -> tuple[Path, Path]:
    """Steps 1 and 2 of the build by hand: the constant-folded float graph and its rewrite."""
    import onnxruntime as ort

    from funes.inference.fusion import fuse

    folded, fused = tmp_path / "folded.onnx", tmp_path / "fused-float.onnx"
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
    options.optimized_model_filepath = str(folded)
    ort.InferenceSession(str(source), options, providers=["CPUExecutionProvider"])
    assert fuse(str(folded), str(fused))
    return folded, fused


def _int8_session(path: Path, disabled: tuple[str, ...] = DISABLED_OPTIMIZERS) -> Any:
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    return ort.InferenceSession(
        str(path), options, providers=["CPUExecutionProvider"], disabled_optimizers=list(disabled)
    )


def _run(session: Any, ids: list[int]) -> np.ndarray:
    a = np.array([ids], dtype=np.int64)
    return session.run(
        None, {"input_ids": a, "attention_mask": np.ones_like(a), "token_type_ids": a * 0}
    )[0]


def test_saved_fusions_change_no_vector(tmp_path: Path) -> None:
    """The cached graph carries onnxruntime's extended fusions (step 4 of the build): its
    outputs are the same bits as those of the graph quantized only, which a session fuses at
    load, so saving them changes no vector (what they save, the session build, is measured by
    `make bench`: cold recall)."""
    spec = MINILM_L6_INT8_PKG
    source = resolve_file(spec, spec.onnx)
    built, _, _ = build_graph(spec, source, tmp_path / "cache")
    _, fused = _folded_and_fused(source, tmp_path)
    quantized = _quantized(fused, tmp_path / "int8.onnx")
    assert built.stat().st_size != quantized.stat().st_size  # the fusions are saved
    tokenizer = OnnxEmbedder(spec, cache_dir=tmp_path / "cache")._tokenizer
    sessions = [_int8_session(built), _int8_session(quantized)]
    for text in TEXTS:
        ids = tokenizer.encode(text).ids
        outputs = [_run(s, ids) for s in sessions]
        assert np.array_equal(outputs[0], outputs[1]), text


def _quantized(graph: Path, target: Path) -> Path:
    """`graph` quantized as the build does (dynamic int8, per channel, 7-bit weights)."""
    from onnxruntime.quantization import QuantType, quantize_dynamic

    quantize_dynamic(
        graph, target, per_channel=True, reduce_range=True, weight_type=QuantType.QInt8
    )
    return target


def test_attention_and_gelu_run_fused_in_the_int8_graph(tmp_path: Path) -> None:
    """Step 2 of the build: each layer's ~25 attention nodes become one MultiHeadAttention
    (query, key, value: no key padding mask) and each GELU one Gelu; step 4 leaves Add +
    LayerNormalization unfused."""
    import onnx

    spec = MINILM_L6_INT8_PKG
    built, _, _ = build_graph(spec, resolve_file(spec, spec.onnx), tmp_path)
    ops = Counter(n.op_type for n in onnx.load(str(built)).graph.node)
    assert ops["MultiHeadAttention"] == 6 and ops["Gelu"] == 6, ops
    attentions = [n for n in onnx.load(str(built)).graph.node if n.op_type == "MultiHeadAttention"]
    assert all([i for i in n.input if i] == list(n.input[:3]) for n in attentions)  # no mask
    for gone in ("Softmax", "IsNaN", "Where", "Erf", "Transpose", "SkipLayerNormalization"):
        assert gone not in ops, ops


def test_the_fused_float_graph_computes_what_the_exported_one_did(tmp_path: Path) -> None:
    """The rewrite changes the spelling, not the function, of what the recipe runs: one
    unpadded text per run, same hidden states (float rounding). Its attention has no key
    padding mask, so a padded batch attends to its padding: the embedder never pads it."""
    import onnxruntime as ort

    spec = MINILM_L6_INT8_PKG
    folded, fused = _folded_and_fused(resolve_file(spec, spec.onnx), tmp_path)
    sessions = [
        ort.InferenceSession(str(p), providers=["CPUExecutionProvider"]) for p in (folded, fused)
    ]
    tokenizer = OnnxEmbedder(spec, cache_dir=tmp_path / "cache")._tokenizer
    encodings = [tokenizer.encode(t).ids for t in TEXTS]
    for ids in encodings:
        a, b = (_run(s, ids) for s in sessions)
        assert np.max(np.abs(a - b)) < 1e-4
    width = max(len(ids) for ids in encodings)
    batch = np.zeros((len(encodings), width), dtype=np.int64)
    mask = np.zeros_like(batch)
    for row, ids in enumerate(encodings):
        batch[row, : len(ids)] = ids
        mask[row, : len(ids)] = 1
    feeds = {"input_ids": batch, "attention_mask": mask, "token_type_ids": batch * 0}
    a, b = (s.run(None, feeds)[0] for s in sessions)
    assert np.max(np.abs(a - b)[mask.astype(bool)]) > 0.1


def test_embedder_sessions_leave_skip_layer_norm_unfused(tmp_path: Path) -> None:
    """A session re-applies onnxruntime's fusions at load; the embedder's sessions must leave
    out the SkipLayerNormalization one too (slow kernel), which also changes the bits."""
    spec = MINILM_L6_INT8_PKG
    embedder = OnnxEmbedder(spec, cache_dir=tmp_path)
    graph = graph_path(spec, tmp_path)
    without, default = _int8_session(graph), _int8_session(graph, ())
    differs = 0
    for text in TEXTS:
        ids = embedder._tokenizer.encode(text).ids
        hidden = _run(without, ids)[0].mean(axis=0)
        expected = hidden / np.linalg.norm(hidden)
        assert np.array_equal(embedder.embed([text])[0], expected.astype(np.float32)), text
        differs += not np.array_equal(_run(default, ids), _run(without, ids))
    assert differs, "SkipLayerNormalization fusion changed nothing: the test proves nothing"
    # the graph was saved optimized: its sessions run no optimizer again at load (and give the
    # vectors checked above, bit for bit)
    import onnxruntime as ort

    session = embedder._session_with(1)
    level = session.get_session_options().graph_optimization_level
    assert level == ort.GraphOptimizationLevel.ORT_DISABLE_ALL


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


def _make_unreadable(path: Path) -> None:
    """Leave a regular file at `path` whose reading raises OSError: mode 000, or, for root
    (who reads any file whatever its mode), a link to /proc/self/mem, whose first page
    reads as EIO."""
    if os.geteuid() != 0:
        path.chmod(0)
        return
    if not Path("/proc/self/mem").is_file():
        pytest.skip("root without /proc/self/mem: no file it cannot read")
    path.unlink()
    path.symlink_to("/proc/self/mem")
    with pytest.raises(OSError), path.open("rb") as f:
        f.read(1)


@pytest.mark.parametrize("damage", ["altered", "missing", "unreadable"])
def test_a_damaged_weights_file_is_rebuilt_not_used(tmp_path: Path, damage: str) -> None:
    spec = MINILM_L6_INT8_PKG
    cache = tmp_path / "models"
    reference = OnnxEmbedder(spec, cache_dir=cache).embed(TEXTS[:2])
    weights = weights_path(graph_path(spec, cache))
    good = weights.read_bytes()
    if damage == "altered":
        weights.write_bytes(good[:-1000] + b"\0" * 1000)  # same size, other bytes
    elif damage == "missing":
        weights.unlink()
        assert cached_graph(spec, cache) is None
    else:  # a cold recall's child and the load used to raise the OSError: a crash
        _make_unreadable(weights)
    again = OnnxEmbedder(spec, cache_dir=cache)
    assert weights.read_bytes() == good
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
    """Queries run on their own session, built without weight prepacking (a faster cold
    recall); passages on the indexing one. Same bits, short or up to the 128-token cut."""
    embedder = OnnxEmbedder(MINILM_L6_INT8_PKG)
    for q in ("why did the parser break", "EMFILE", *TEXTS):
        assert np.array_equal(embedder.embed_query(q), embedder.embed([q])[0]), q[:40]


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
