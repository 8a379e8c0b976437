"""The models the bench runs: the offline embedder, a real cross-encoder when one is available,
and an honestly labelled latency proxy for the rerank stage when none is.

No cross-encoder ships inside a registry package (see ../shared/design/models.md), so rerank
*quality* is reported only when the pinned ms-marco-MiniLM-L6-v2 loads (e.g. from a warm HF
cache). Rerank *latency* is still measured with `latency_proxy_reranker()`: funes' own
OnnxReranker (same pair tokenization, 256-token truncation, batching) running the int8
all-MiniLM-L6-v2 graph, which has the same architecture and size as ms-marco-MiniLM-L6-v2
(6 layers, 384 hidden, 12 heads, BERT WordPiece) and therefore the same compute per token
as an int8 export of it. Its scores are meaningless and never used for quality.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from funes.errors import ModelUnavailable
from funes.inference import MINILM_L6_INT8_PKG, MS_MARCO_MINILM_L6, Embedder, Reranker

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

EMBEDDER_SPEC = MINILM_L6_INT8_PKG
RERANKER_SPEC = MS_MARCO_MINILM_L6


def load_embedder() -> Embedder:
    from funes.inference.onnx_backend import OnnxEmbedder

    return OnnxEmbedder(EMBEDDER_SPEC)


def real_reranker() -> tuple[Reranker | None, str]:
    """The pinned cross-encoder if it can be loaded without the network, and a note."""
    from funes.inference.onnx_backend import OnnxReranker

    try:
        return OnnxReranker(RERANKER_SPEC), RERANKER_SPEC.model_id
    except ModelUnavailable as exc:
        return (
            None,
            f"n/a (no cross-encoder weights offline; would run {RERANKER_SPEC.model_id}): {exc.message}",
        )


def latency_proxy_reranker() -> tuple[Reranker, str]:
    """funes' OnnxReranker over the int8 MiniLM-L6 graph (see module docstring) and its label."""
    from funes.inference.onnx_backend import OnnxReranker

    spec = replace(
        RERANKER_SPEC,
        name="latency-proxy",
        model_id="latency-proxy:all-MiniLM-L6-v2-int8-as-pair-scorer",
        onnx=EMBEDDER_SPEC.onnx,
        tokenizer=EMBEDDER_SPEC.tokenizer,
    )
    label = "int8 all-MiniLM-L6-v2 graph scoring (query, passage) pairs: latency proxy, not a cross-encoder"
    return OnnxReranker(spec), label


class RecordingEmbedder:
    """Forwards to a real embedder and remembers every passage vector by text.

    With `offline=True` it answers only from what it recorded (raising KeyError on a miss), so a
    second store can be built from the same vectors without running the model again.
    """

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.model_id = inner.model_id
        self.dim = inner.dim
        self.vectors: dict[str, NDArray[np.float32]] = {}
        self.offline = False

    def embed(self, texts: Sequence[str]) -> NDArray[np.float32]:
        import numpy as np

        if self.offline:
            return (
                np.stack([self.vectors[t] for t in texts])
                if texts
                else np.zeros((0, self.dim), np.float32)
            )
        out = self.inner.embed(texts)
        for t, v in zip(texts, out, strict=True):
            self.vectors[t] = v
        return out

    def embed_query(self, query: str) -> NDArray[np.float32]:
        return self.inner.embed_query(query)
