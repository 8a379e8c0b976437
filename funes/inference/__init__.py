"""Models behind protocols: text in, numbers out. Never sees a Turn or a Chunk.

    choice.py        which models the environment asks for (FUNES_EMBEDDER, FUNES_RERANKER)
    models.py        Embedder / Reranker protocols, spec lookups, load_* and LazyEmbedder
    spec.py          ModelSpec pins: repository, revision, files, dimension, pooling
    files.py         a model's files located (package or Hub cache) and sha256-verified
    tokens.py        tokenizers with the recipe's token cap; a query's token ids
    onnx_backend.py  the ONNX Runtime implementations (imported only when a model loads)
    prefetch.py      a cold recall's query model loaded in a forked child process
    telemetry.py     onnxruntime's telemetry kept off (set before its first import)

Importing this package stays cheap (no onnxruntime). Other packages import from this face.
"""

from __future__ import annotations

from funes.inference.choice import DEFAULT_EMBEDDER, DEFAULT_RERANKER, ModelChoice
from funes.inference.models import (
    Embedder,
    LazyEmbedder,
    LoadCheck,
    QueryModel,
    Reranker,
    available_locally,
    check_load,
    embedder_spec,
    load_embedder,
    load_reranker,
    query_vector,
    ready_query_model,
    reranker_spec,
    use_model_path,
)
from funes.inference.prefetch import warm_up
from funes.inference.spec import (
    BGE_SMALL,
    EMBEDDERS,
    MINILM_L6_INT8_PKG,
    MS_MARCO_MINILM_L6,
    RERANKERS,
    ModelFile,
    ModelSpec,
    Pooling,
    embedder_for_model_id,
    embedder_name,
)

__all__ = [
    "BGE_SMALL",
    "DEFAULT_EMBEDDER",
    "DEFAULT_RERANKER",
    "EMBEDDERS",
    "Embedder",
    "LazyEmbedder",
    "LoadCheck",
    "MINILM_L6_INT8_PKG",
    "MS_MARCO_MINILM_L6",
    "ModelChoice",
    "ModelFile",
    "ModelSpec",
    "Pooling",
    "QueryModel",
    "RERANKERS",
    "Reranker",
    "available_locally",
    "check_load",
    "embedder_for_model_id",
    "embedder_name",
    "embedder_spec",
    "load_embedder",
    "load_reranker",
    "query_vector",
    "ready_query_model",
    "reranker_spec",
    "use_model_path",
    "warm_up",
]
