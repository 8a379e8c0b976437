"""Which query terms a text contains, as the memory's FTS5 index would match them.

A `TermMatcher` indexes a handful of texts (a recall's candidate chunks) in a private
in-memory FTS5 table with the memory's own tokenizer (`FTS_TOKENIZE`: Porter stemming over
unicode61, as `chunks_fts` is built), then matches each term alone against them. So a
term's presence agrees with BM25's matching: `running` finds `runs`, a term with inner
punctuation (`max_connections`) is the same phrase of tokens. Nothing touches the memory.
"""

from __future__ import annotations

from collections.abc import Sequence

from funes.store.db import sqlite_module
from funes.store.queries import quote_term

# The tokenizer of `chunks_fts` (schema migration 1); a matcher must split text the same way.
FTS_TOKENIZE = "porter unicode61 remove_diacritics 2"


def term_presence(terms: Sequence[str], texts: Sequence[str]) -> list[set[int]]:
    """For each term, the indexes of the `texts` it occurs in (as FTS5 matches it).

    Raises the sqlite binding's errors only for a broken build (no FTS5); empty inputs → sets
    of nothing.
    """
    if not terms or not texts:
        return [set() for _ in terms]
    conn = sqlite_module().connect(":memory:")
    try:
        conn.execute(f"create virtual table t using fts5(text, tokenize = '{FTS_TOKENIZE}')")
        conn.executemany(
            "insert into t (rowid, text) values (?, ?)", [(i + 1, x) for i, x in enumerate(texts)]
        )
        return [
            {
                int(r[0]) - 1
                for r in conn.execute("select rowid from t where t match ?", (quote_term(term),))
            }
            for term in terms
        ]
    finally:
        conn.close()
