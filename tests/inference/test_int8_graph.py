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
