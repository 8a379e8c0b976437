"""Test implementations of funes' protocols: real, deterministic, no weights."""

from __future__ import annotations

import re
import zlib
from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

_WORD = re.compile(r"[a-z0-9]+")


class BagOfWordsEmbedder:
    """Texts that share words land near each other. Deterministic, no weights."""

    model_id = "test/bag-of-words@0"
    dim = 64

    def __init__(self) -> None:
        self.calls = 0
        self.texts_embedded = 0

    def embed(self, texts: Sequence[str]) -> NDArray[np.float32]:
        self.calls += 1
        self.texts_embedded += len(texts)
        out = np.zeros((len(texts), self.dim), np.float32)
        for i, text in enumerate(texts):
            for word in _WORD.findall(text.lower()):
                out[i, zlib.crc32(word.encode()) % self.dim] += 1.0
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.where(norms == 0, 1.0, norms)

    def embed_query(self, query: str) -> NDArray[np.float32]:
        return self.embed([query])[0]


class OverlapReranker:
    """Scores a passage by the share of query words it contains (a real, if crude, relevance)."""

    model_id = "test/overlap@0"

    def score(self, query: str, passages: Sequence[str]) -> list[float]:
        words = set(_WORD.findall(query.lower()))
        out = []
        for p in passages:
            have = set(_WORD.findall(p.lower()))
            out.append(4.0 * len(words & have) / max(len(words), 1) - 2.0)
        return out


class RecordingEmbedder(BagOfWordsEmbedder):
    """A BagOfWordsEmbedder that keeps every text it was asked to embed, in order."""

    def __init__(self) -> None:
        super().__init__()
        self.inputs: list[str] = []

    def embed(self, texts: Sequence[str]) -> NDArray[np.float32]:
        self.inputs.extend(texts)
        return super().embed(texts)
