"""BM25 at scale beside a vector leg: the rare terms find the candidates, every term scores them.

FTS5 scores every row an OR query matches (~0.45 µs a row on the bench machine: 330 ms for a
dev-set question over a million chunks, whose common words match most rows). `rare_first`
runs FTS5 over the query's rarest terms only, as many as `budget` postings allow, keeps the
best 3 × k rows, and scores those with every term exactly as FTS5's bm25() would (same
formula, IDF, document lengths and tokenizer): the terms left out add their weight to the rows
found, they do not bring new rows. A row that matches none of the rare terms is not a
candidate: Lucene's "common terms" query makes the same cut. Measured on the bench's
million-chunk memory (109 dev-set questions, default pipeline, budget 50k): turn hit@1 / @5
54.1 / 90.8 exact → 55.0 / 91.7, session 84.4 / 98.2 → 86.2 / 99.1; without a vector leg the
cut loses (default without vectors, session hit@5 65.1 → 42.2), so recall without one keeps
the exact query. A query whose terms match at most `budget` postings in all is answered by
the exact query (bench/README.md, section 3), and so is a filtered one whose filters keep none
of the rare terms' rows.

FTS5's bm25(), per phrase p of the query (k1 = 1.2, b = 0.75, sqlite's fts5_aux.c):
    idf(p) · tf · (k1 + 1) / (tf + k1 · (1 − b + b · D / avgdl)),
    idf(p) = log((N − n(p) + 0.5) / (n(p) + 0.5)), 1e-6 when not positive,
with N and avgdl from the index's totals record, n(p) the rows p occurs in, D a row's tokens.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Sequence
from typing import Any

from funes.store.db import sqlite_module
from funes.store.queries import fts_totals, quote_term, varints
from funes.store.scope import Filters
from funes.store.terms import FTS_TOKENIZE

K1 = 1.2
B = 0.75
CANDIDATES_PER_HIT = 3  # rows the rare terms hand on for each hit the leg returns


def idf(rows: int, hits: int) -> float:
    """FTS5's IDF of a phrase found in `hits` of `rows` rows (1e-6 when not positive, also for
    counts read apart that disagree: hits > rows)."""
    ratio = (rows - hits + 0.5) / (hits + 0.5)
    value = math.log(ratio) if ratio > 0.0 else 0.0
    return value if value > 0.0 else 1e-6


def tokenized(
    texts: Sequence[str], only: Collection[str] | None = None
) -> list[dict[str, list[int]]]:
    """Each text's tokens as `chunks_fts` indexes them (FTS_TOKENIZE: stemmed), token → its
    positions (`only`: just these tokens), through a private in-memory FTS5 table (nothing
    touches the memory)."""
    conn = sqlite_module().connect(":memory:")
    try:
        conn.execute(f"create virtual table t using fts5(text, tokenize = '{FTS_TOKENIZE}')")
        conn.execute("create virtual table v using fts5vocab(t, instance)")
        conn.executemany(
            "insert into t (rowid, text) values (?, ?)", [(i + 1, x) for i, x in enumerate(texts)]
        )
        if only is None:
            instances = conn.execute("select term, doc, offset from v")
        else:
            wanted = sorted(set(only))
            marks = ",".join("?" * len(wanted))
            instances = conn.execute(
                f"select term, doc, offset from v where term in ({marks})", wanted
            )
        out: list[dict[str, list[int]]] = [{} for _ in texts]
        for token, doc, offset in instances:
            out[int(doc) - 1].setdefault(str(token), []).append(int(offset))
        return out
    finally:
        conn.close()


def document_lengths(raw: Any, rowids: Sequence[int]) -> dict[int, int]:
    """Tokens in each row of `chunks_fts` (its docsize table, what bm25() reads as D)."""
    marks = ",".join("?" * len(rowids))
    return {
        int(rowid): (varints(bytes(size)) or [0])[0]
        for rowid, size in raw.execute(
            f"select id, sz from chunks_fts_docsize where id in ({marks})", list(rowids)
        )
    }


def phrase_count(positions: dict[str, list[int]], phrase: Sequence[str]) -> int:
    """How many times the token sequence `phrase` occurs in a text (its token → positions):
    FTS5's instance count of a quoted term."""
    if not phrase:
        return 0
    starts = positions.get(phrase[0], [])
    for n, token in enumerate(phrase[1:], start=1):
        later = set(positions.get(token, ()))
        starts = [s for s in starts if s + n in later]
    return len(starts)


def rare_first(
    raw: Any,
    terms: Sequence[str],
    frequencies: Sequence[int],
    *,
    k: int,
    filters: Filters,
    budget: int,
) -> list[tuple[int, float]] | None:
    """(rowid, bm25) of the best `k` chunks for `terms` (bm25 negative, lower is better, ties by
    rowid), the candidates drawn by the rarest terms within `budget` postings (`frequencies`:
    rows each term occurs in). None when the exact query should run instead: every term fits
    the budget (it is as cheap), or `filters` keep none of the rare terms' rows (those stand
    for the query over the whole memory, not inside a filter: the rows a filter keeps may
    hold only the query's common terms)."""
    present = sorted((i for i, n in enumerate(frequencies) if n > 0), key=lambda i: frequencies[i])
    rare: list[int] = []
    spent = 0
    for i in present:
        if rare and spent + frequencies[i] > budget:
            break
        rare.append(i)
        spent += frequencies[i]
    common = present[len(rare) :]
    if not common:
        return None
    where, params = filters.sql()
    source = "chunks_fts join chunks c on c.rowid = chunks_fts.rowid" if where else "chunks_fts"
    found = raw.execute(
        f"""select chunks_fts.rowid, bm25(chunks_fts) as score
            from {source} where chunks_fts match :match {where} order by score limit :n""",
        {
            "match": " OR ".join(quote_term(terms[i]) for i in rare),
            "n": CANDIDATES_PER_HIT * k,
            **params,
        },
    ).fetchall()
    if not found:
        return None if where else []
    rows, tokens = fts_totals(raw)
    avgdl = tokens / rows if rows else 1.0
    phrases = [_phrase(p) for p in tokenized([terms[i] for i in common])]
    weights = [idf(rows, frequencies[i]) for i in common]
    # the texts once the candidates are known (in the ranked query, every matching row's)
    ids = [int(r[0]) for r in found]
    marks = ",".join("?" * len(ids))
    text = dict(raw.execute(f"select rowid, text from chunks where rowid in ({marks})", ids))
    lengths = document_lengths(raw, ids)
    found = [r for r in found if r[0] in text and r[0] in lengths]  # deleted since: no candidate
    wanted = {token for phrase in phrases for token in phrase}
    scored: list[tuple[float, int]] = []
    for (rowid, rare_score), positions in zip(
        found, tokenized([str(text[r[0]]) for r in found], wanted), strict=True
    ):
        length = lengths[rowid]
        score = -float(rare_score)
        for phrase, weight in zip(phrases, weights, strict=True):
            tf = phrase_count(positions, phrase)
            if tf:
                score += weight * ((tf * (K1 + 1.0)) / (tf + K1 * (1 - B + B * length / avgdl)))
        scored.append((-score, int(rowid)))
    scored.sort()
    return [(rowid, score) for score, rowid in scored[:k]]


def _phrase(positions: dict[str, list[int]]) -> list[str]:
    """A term's tokens in order (a term with inner punctuation is a phrase of several)."""
    return [token for _, token in sorted((p, t) for t, ps in positions.items() for p in ps)]
