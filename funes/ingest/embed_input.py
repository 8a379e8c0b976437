"""What the embedder reads for chunks already in a memory (backfill, scrub re-embedding).

The index loop builds each chunk's embedding input while it reads the turns (funes.chunks
`embedding_input`, the prompt from `turn_prompt`); stored chunks get the same input, with the
prompt context looked up in the memory, under the memory's own recipe.
"""

from __future__ import annotations

from collections.abc import Sequence

from funes.chunks import LEGACY_EMBED_INPUT, embedding_input
from funes.store import Store


def stored_embedding_inputs(
    store: Store, items: Sequence[tuple[int, str]], *, recipe: str | None = None
) -> list[str]:
    """Embedding inputs for (rowid, text) of stored chunks, row i ↔ items[i]; `text` is what
    the chunk holds (or will hold, for a scrub rewrite). A rowid no longer stored gets `text`.

    `recipe`: the one to embed with. Default: the memory's own (`store.embedding_input`), or,
    while an in-place re-embedding is unfinished, its target for the rows it already did.
    """
    own = store.embedding_input if recipe is None else recipe
    progress = store.reembedding if recipe is None else None
    target, rows_done = progress if progress is not None else (own, 0)
    recipes = [target if rowid <= rows_done else own for rowid, _ in items]
    if all(r == LEGACY_EMBED_INPUT for r in recipes):
        return [text for _, text in items]
    rows = store.fetch([r for r, _ in items])
    # a prompt rewritten in the same batch (scrub) is read in its new, redacted form
    prompts = store.prompts_before([rows[r] for r, _ in items if r in rows], pending=dict(items))
    return [
        embedding_input(text, rows[r].role, prompts.get(r), how) if r in rows else text
        for (r, text), how in zip(items, recipes, strict=True)
    ]
