"""The tokenizer side of an embedder, without onnxruntime: load a model's tokenizer with the
recipe's token cap, and a query's token ids (what funes.inference.prefetch sends the child
that runs the model, so the child need not load the tokenizer too).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from funes.inference.files import resolve_file
from funes.inference.spec import ModelSpec

if TYPE_CHECKING:
    from tokenizers import Tokenizer

# Token limit of the current recipe's passages (queries too). 128 against the models' own
# 256/512: 53% of the dev set's embedding inputs were longer, yet default turn hit@5 did not
# fall, and embedding ran ~1.7x faster. 104 against 128 (bench/README.md, recipes): the prose
# tier's inputs 12.6% fewer tokens (99.5 → 87.0 a chunk); default turn hit@1 / hit@5 dev set
# 56.0 / 93.6 → 59.6 / 94.5, LoCoMo 48.4 / 76.3 → 48.4 / 76.4; the vector leg alone lower
# (dev 38.5 / 72.5 → 36.7 / 71.6, LoCoMo 20.3 / 45.5 → 19.9 / 44.9). 96 lost LoCoMo hit@5.
EMBED_TOKENS = 104


@dataclass(frozen=True, slots=True)
class QueryTokens:
    """One text's token ids and type ids, as the tokenizer's Encoding carries them (cut to the
    recipe's cap, unpadded)."""

    ids: list[int]
    type_ids: list[int]


def load_tokenizer(path: Path, max_tokens: int) -> tuple[Tokenizer, int]:
    """The tokenizer (truncating, not padding: callers pad per batch) and its [PAD] id."""
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(path))
    tok.enable_truncation(max_length=max_tokens)
    tok.no_padding()
    pad_id = tok.token_to_id("[PAD]")
    return tok, 0 if pad_id is None else pad_id


def query_tokens(spec: ModelSpec, query: str, *, stamp_dir: Path | None = None) -> QueryTokens:
    """The tokens the current recipe's `embed_query(query)` runs on: the model's query prefix
    and the query, cut at min(spec.max_tokens, EMBED_TOKENS). Raises ModelUnavailable when the
    tokenizer file is not on this machine (funes.inference.files.resolve_file)."""
    tokenizer, _ = load_tokenizer(
        resolve_file(spec, spec.tokenizer, stamp_dir=stamp_dir), min(spec.max_tokens, EMBED_TOKENS)
    )
    encoding = tokenizer.encode(spec.query_prefix + query)
    return QueryTokens(list(encoding.ids), list(encoding.type_ids))
