"""The read queries: BM25 over FTS5, KNN over sqlite-vec, rows by id, neighbors, turns.

Every value is bound; user text reaches FTS5 only through `fts_query`, which quotes every
term, so FTS5 syntax in a query (quotes, AND/OR/NOT/NEAR, `*`, `^`, column filters) is
searched for as text and never parsed as an operator.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from funes.store.rows import CHUNK_COLUMNS
from funes.store.scope import NO_FILTERS, Filters

# SQLite binds integers as signed 64-bit; a LIMIT past this is "no limit" anyway.
_MAX_LIMIT = (1 << 63) - 1


def _limit(n: int) -> int:
    """`n` as a LIMIT SQLite can bind (a huge --window or --neighbors means all of them)."""
    return min(n, _MAX_LIMIT)


_WORD = re.compile(r"[^\W_]+(?:[_.\-/:][^\W_]+)*", re.UNICODE)

# Very common English words: they match nearly every chunk, add nothing to BM25 and slow it.
STOPWORDS = frozenset(
    {
        *("a", "an", "and", "are", "as", "at", "be", "but", "by", "did", "do", "does", "for"),
        *("from", "had", "has", "have", "how", "i", "if", "in", "into", "is", "it", "its", "me"),
        *("my", "of", "on", "or", "our", "so", "than", "that", "the", "their", "them", "then"),
        *("there", "these", "they", "this", "to", "was", "we", "were", "what", "when", "where"),
        *("which", "who", "why", "will", "with", "you", "your"),
    }
)


def query_terms(text: str) -> list[str]:
    """The search terms of a query, in order: words (a word with inner punctuation such as
    `max_connections`, `foo.bar` or `E0432` stays one term), stopwords and repeats (case-folded)
    dropped."""
    terms: list[str] = []
    seen: set[str] = set()
    for m in _WORD.finditer(text):
        term = m.group(0)
        low = term.lower()
        if low in STOPWORDS or low in seen:
            continue
        seen.add(low)
        terms.append(term)
    return terms


def quote_term(term: str) -> str:
    """One term as an FTS5 string (a phrase of its tokens), never an operator."""
    return '"' + term.replace('"', '""') + '"'


def fts_query(text: str) -> str | None:
    """An FTS5 MATCH expression: every term quoted, OR-ed. None when the text has no terms.

    A term with inner punctuation (`max_connections`, `foo.bar`, `E0432`) stays one quoted
    string, which FTS5 matches as a phrase of its tokens.
    """
    terms = query_terms(text)
    if not terms:
        return None
    return " OR ".join(quote_term(t) for t in terms)


def varints(blob: bytes) -> list[int]:
    """SQLite's variable-length integers in `blob` (FTS5 stores its totals this way): 7 bits a
    byte, high bit set on all but the last, the ninth byte whole."""
    out: list[int] = []
    value, length = 0, 0
    for byte in blob:
        length += 1
        if length == 9:
            out.append((value << 8) | byte)
            value, length = 0, 0
            continue
        value = (value << 7) | (byte & 0x7F)
        if not byte & 0x80:
            out.append(value)
            value, length = 0, 0
    return out


def fts_totals(raw: Any) -> tuple[int, int]:
    """(rows, tokens) in `chunks_fts`, from its averages record (what bm25() reads)."""
    row = raw.execute("select block from chunks_fts_data where id = 1").fetchone()
    numbers = varints(bytes(row[0])) if row is not None and row[0] is not None else []
    return (numbers[0], numbers[1]) if len(numbers) >= 2 else (0, 0)


def turn_chunk_rows(raw: Any, turns: list[tuple[str, int]]) -> list[tuple[Any, ...]]:
    """Chunk rows (`CHUNK_COLUMNS`) of the (session_id, seq) turns, in session, position order
    (by the (session, seq) position index, through each session's integer key)."""
    names = sorted({sid for sid, _ in turns})
    keys: dict[str, int] = {}
    for start in range(0, len(names), 500):
        part = names[start : start + 500]
        marks = ",".join("?" * len(part))
        for key, sid in raw.execute(
            f"select id, session_id from sessions where session_id in ({marks})", part
        ):
            keys[str(sid)] = int(key)
    wanted = [(keys[sid], seq) for sid, seq in turns if sid in keys]
    out: list[tuple[Any, ...]] = []
    for start in range(0, len(wanted), 300):
        chunk = wanted[start : start + 300]
        pairs = ",".join("(?, ?)" for _ in chunk)
        out.extend(
            tuple(r)
            for r in raw.execute(
                f"""select {CHUNK_COLUMNS} from chunk_rows where (session, seq) in (values {pairs})
                    order by session, seq, block_idx, split_idx""",
                [x for pair in chunk for x in pair],
            )
        )
    return out


def session_outline(raw: Any, *, session_id: str, low: int, high: int) -> list[tuple[int, bool]]:
    """(seq, opens an exchange) of each turn of a session with low ≤ seq ≤ high, in order; a
    turn opens an exchange when it holds a user prompt (a non-scaffold user text block)."""
    session = session_key(raw, session_id)
    if session is None:
        return []
    return [
        (int(r[0]), bool(r[1]))
        for r in raw.execute(
            """select seq, max(role = 'user' and block_type = 'text' and not scaffold)
               from chunks where session = ? and seq between ? and ? group by seq order by seq""",
            (session, low, high),
        )
    ]


def lexical(raw: Any, query: str, *, k: int, filters: Filters) -> list[tuple[int, float]]:
    """(rowid, bm25) of the best `k` chunks for `query` among those `filters` admit, best
    first (bm25: lower is better)."""
    match = fts_query(query)
    if match is None or k <= 0:
        return []
    where, params = filters.sql()
    # The join to `chunks` is only needed to filter: without it, no chunks lookup per matching
    # row (100k synthetic bench store, 80 interleaved queries: p50 329 → 230 ms, 10k: 34 → 25).
    source = "chunks_fts join chunks c on c.rowid = chunks_fts.rowid" if where else "chunks_fts"
    sql = f"""
        select chunks_fts.rowid, bm25(chunks_fts) as score
        from {source}
        where chunks_fts match :match {where}
        order by score limit :k
    """
    rows = raw.execute(sql, {"match": match, "k": k, **params}).fetchall()
    return [(int(r[0]), float(r[1])) for r in rows]


# Block types the vector leg does not search unless a filter asks for them: a tool call's
# vector added nothing to the dev set's turn hit@5 (issue 15) and, in the fixtures, a tool call
# describing what it looks for outranked the answer it found. They are still embedded, last
# (store `vectors_owed` priority), for sharing: a pushed chunk carries its vector.
LEXICAL_ONLY = ("tool_use",)


# The deepest KNN query sqlite-vec answers (a larger `k` is an error, not a shorter list).
KNN_MAX = 4096


def semantic(
    raw: Any, vector: bytes, *, element: str, k: int, filters: Filters
) -> list[tuple[int, float]]:
    """(rowid, distance) of the `k` nearest chunks to `vector` among those `filters` admit,
    nearest first (vec0 filters while it ranks: see funes.store.scope); block types in
    LEXICAL_ONLY only when `filters` names one."""
    if k <= 0:
        return []
    k = min(k, KNN_MAX)
    probe = "vec_int8(:v)" if element == "int8" else ":v"
    extra, params = filters.vector_sql()
    if not filters.block_types:  # tool calls are found by BM25 (see LEXICAL_ONLY)
        # one `!=` per type: vec0 applies `!=` on a metadata column while it ranks, while
        # `not in (…)` is left to SQLite, after the k nearest were cut (fewer than k came back)
        for i, skipped in enumerate(LEXICAL_ONLY):
            extra += f" and block_type != :lexical_only_{i}"
            params[f"lexical_only_{i}"] = skipped
    sql = f"select rowid, distance from chunks_vec where embedding match {probe} and k = :k{extra}"
    return [(int(r[0]), float(r[1])) for r in raw.execute(sql, {"v": vector, "k": k, **params})]


def by_rowids(raw: Any, rowids: list[int]) -> dict[int, tuple[Any, ...]]:
    """Chunk rows (`CHUNK_COLUMNS`, from the `chunk_rows` view) keyed by rowid (missing rowids
    are absent)."""
    out: dict[int, tuple[Any, ...]] = {}
    for start in range(0, len(rowids), 500):
        part = rowids[start : start + 500]
        marks = ",".join("?" * len(part))
        for row in raw.execute(
            f"select {CHUNK_COLUMNS} from chunk_rows where rowid in ({marks})", part
        ):
            out[int(row[0])] = tuple(row)
    return out


def session_key(raw: Any, session_id: str) -> int | None:
    """The integer key of `session_id` in `sessions` (None when no chunk has it)."""
    row = raw.execute("select id from sessions where session_id = ?", (session_id,)).fetchone()
    return None if row is None else int(row[0])


def turns_starting(raw: Any, session_id: str, prefix: str, *, limit: int) -> list[str]:
    """Up to `limit` turn ids of the session that start with `prefix` (an exact id first),
    in id order."""
    session = session_key(raw, session_id)
    if session is None:
        return []
    rows = raw.execute(
        """select distinct turn_id from chunks
           where session = :s and substr(turn_id, 1, length(:p)) = :p
           order by turn_id != :p, turn_id limit :n""",
        {"s": session, "p": prefix, "n": _limit(limit)},
    ).fetchall()
    return [str(r[0]) for r in rows]


def sessions_starting(raw: Any, prefix: str, *, limit: int) -> list[str]:
    """Up to `limit` session ids that start with `prefix` (an exact id first), in id order."""
    rows = raw.execute(
        """select session_id from sessions
           where substr(session_id, 1, length(:p)) = :p and exists
               (select 1 from chunks c where c.session = sessions.id)
           order by session_id != :p, session_id limit :n""",
        {"p": prefix, "n": _limit(limit)},
    ).fetchall()
    return [str(r[0]) for r in rows]


def child_sessions(raw: Any, parents: list[str]) -> set[str]:
    """Ids of the sessions whose chunks name one of `parents` as their parent session (the
    subagents a session started)."""
    out: set[str] = set()
    for start in range(0, len(parents), 500):
        part = parents[start : start + 500]
        marks = ",".join("?" * len(part))
        out.update(
            str(r[0])
            for r in raw.execute(
                f"""select distinct s.session_id from origins o
                    join chunks c on c.origin = o.id join sessions s on s.id = c.session
                    where o.parent_session_id in ({marks})""",
                part,
            )
        )
    return out


def session_labels(raw: Any) -> list[tuple[str, str | None]]:
    """(session id, stored label or None) of every session with chunks, in id order."""
    rows = raw.execute(
        """select session_id, label from sessions
           where exists (select 1 from chunks c where c.session = sessions.id)
           order by session_id"""
    ).fetchall()
    return [(str(r[0]), None if r[1] is None else str(r[1])) for r in rows]


def block_keys(raw: Any, rowids: list[int]) -> dict[int, tuple[str, str, int]]:
    """(session_id, turn_id, block_idx) keyed by rowid (missing rowids are absent)."""
    out: dict[int, tuple[str, str, int]] = {}
    for start in range(0, len(rowids), 500):
        part = rowids[start : start + 500]
        marks = ",".join("?" * len(part))
        sql = (
            f"select rowid, session_id, turn_id, block_idx from chunk_rows where rowid in ({marks})"
        )
        for row in raw.execute(sql, part):
            out[int(row[0])] = (str(row[1]), str(row[2]), int(row[3]))
    return out


def prompt_before(raw: Any, *, session_id: str, seq: int) -> tuple[int, str] | None:
    """(rowid, text) of the first chunk of the latest user prompt (a non-scaffold user text
    block) at or before turn `seq` of a session; None when there is none."""
    session = session_key(raw, session_id)
    if session is None:
        return None
    row = raw.execute(
        """select rowid, text from chunks where session = ? and seq <= ? and role = 'user'
           and block_type = 'text' and not scaffold
           order by seq desc, block_idx, split_idx limit 1""",
        (session, seq),
    ).fetchone()
    return None if row is None else (int(row[0]), str(row[1]))


def exchange(raw: Any, *, session_id: str, seq: int) -> list[tuple[int, str]]:
    """(rowid, text) of the non-user chunks a user prompt at turn `seq` opens: later turns of
    the session up to the next user prompt (what `prompt_before` pairs with that prompt)."""
    session = session_key(raw, session_id)
    if session is None:
        return []
    row = raw.execute(
        """select min(seq) from chunks where session = ? and seq > ? and role = 'user'
           and block_type = 'text' and not scaffold""",
        (session, seq),
    ).fetchone()
    upto = row[0] if row is not None and row[0] is not None else _MAX_LIMIT
    return [
        (int(r[0]), str(r[1]))
        for r in raw.execute(
            """select rowid, text from chunks where session = ? and seq >= ? and seq < ?
               and role != 'user' order by seq, block_idx, split_idx""",
            (session, seq, upto),
        )
    ]


def adjacent(
    raw: Any, *, session_id: str, position: tuple[int, int, int], n: int
) -> list[tuple[Any, ...]]:
    """Up to `n` chunks before and `n` after `position` (seq, block_idx, split_idx) in a session."""
    session = session_key(raw, session_id)
    if session is None:
        return []
    seq, block_idx, split_idx = position
    before = raw.execute(
        f"""select {CHUNK_COLUMNS} from chunk_rows where session = ? and
            (seq, block_idx, split_idx) < (?, ?, ?)
            order by seq desc, block_idx desc, split_idx desc limit ?""",
        (session, seq, block_idx, split_idx, _limit(n)),
    ).fetchall()
    after = raw.execute(
        f"""select {CHUNK_COLUMNS} from chunk_rows where session = ? and
            (seq, block_idx, split_idx) > (?, ?, ?)
            order by seq, block_idx, split_idx limit ?""",
        (session, seq, block_idx, split_idx, _limit(n)),
    ).fetchall()
    return [tuple(r) for r in reversed(before)] + [tuple(r) for r in after]


def turn_seq(
    raw: Any, *, session_id: str, turn_id: str, filters: Filters = NO_FILTERS
) -> int | None:
    """The position of turn `turn_id` in a session: stored there (among chunks `filters`
    admit), or linked to the session that holds it (a replayed record); None when the session
    has no such turn."""
    session = session_key(raw, session_id)
    if session is None:
        return None
    where, params = filters.sql("c")
    row = raw.execute(
        f"select seq from chunks c where session = :s and turn_id = :t{where} limit 1",
        {"s": session, "t": turn_id, **params},
    ).fetchone()
    if row is None:
        row = raw.execute(
            "select seq from turn_links where session = ? and turn_id = ? limit 1",
            (session, turn_id),
        ).fetchone()
    return None if row is None else int(row[0])


# A linked turn's chunks, read from the session that holds them, at the linking position.
_LINKED_COLUMNS = ", ".join(
    "l.seq as seq" if name.strip() == "seq" else f"c.{name.strip()}"
    for name in CHUNK_COLUMNS.split(",")
)


def turns_window(
    raw: Any, *, session_id: str, seq: int, window: int, filters: Filters = NO_FILTERS
) -> list[tuple[Any, ...]]:
    """Chunks of the turns within `window` turn positions of `seq`, in order, counting and
    showing only chunks `filters` admit. A position that links to another session's turn (a
    replayed record stored once) shows that turn (the session filter is the window's own)."""
    session = session_key(raw, session_id)
    if session is None:
        return []
    where, params = filters.sql("c")
    linked_where, linked_params = replace(filters, session=None).sql("c")
    positions = f"""select seq from chunks c where session = :s and seq {{op}} :seq{where}
                   union select l.seq from turn_links l
                   join chunks c on c.session = l.holder and c.turn_id = l.turn_id
                   where l.session = :s and l.seq {{op}} :seq{linked_where}"""
    args = {"s": session, "seq": seq, "n": _limit(window), **params, **linked_params}
    before = raw.execute(
        f"select seq from ({positions.format(op='<')}) order by seq desc limit :n", args
    ).fetchall()
    after = raw.execute(
        f"select seq from ({positions.format(op='>')}) order by seq limit :n", args
    ).fetchall()
    low = min([int(r[0]) for r in before] + [seq])
    high = max([int(r[0]) for r in after] + [seq])
    return [
        tuple(r)
        for r in raw.execute(
            f"""select {CHUNK_COLUMNS} from chunk_rows c where session = :s
                and seq between :low and :high{where}
                union all
                select {_LINKED_COLUMNS} from turn_links l
                join chunk_rows c on c.session = l.holder and c.turn_id = l.turn_id
                where l.session = :s and l.seq between :low and :high{linked_where}
                order by seq, block_idx, split_idx""",
            {"s": session, "low": low, "high": high, **params, **linked_params},
        )
    ]


def texts_after(raw: Any, *, after_rowid: int, limit: int) -> list[tuple[int, str]]:
    """(rowid, text) of up to `limit` chunks with rowid > `after_rowid`, in rowid order."""
    rows = raw.execute(
        "select rowid, text from chunks where rowid > ? order by rowid limit ?",
        (after_rowid, limit),
    ).fetchall()
    return [(int(r[0]), r[1]) for r in rows]


def count_after(raw: Any, *, after_rowid: int) -> int:
    return int(
        raw.execute("select count(*) from chunks where rowid > ?", (after_rowid,)).fetchone()[0]
    )


def has_chunks(raw: Any) -> bool:
    return raw.execute("select 1 from chunks limit 1").fetchone() is not None


def admits_any(raw: Any, filters: Filters) -> bool:
    """Whether any stored chunk passes `filters`."""
    where, params = filters.sql("c")
    return (
        raw.execute(f"select 1 from chunks c where 1{where} limit 1", params).fetchone() is not None
    )


def unit(raw: Any, key: str) -> tuple[Any, ...] | None:
    """(key, harness, signature, level, indexed_at) of unit `key`, None when never indexed."""
    row = raw.execute(
        "select key, harness, signature, level, indexed_at from units where key = ?", (key,)
    ).fetchone()
    return None if row is None else tuple(row)


def owed_vectors(
    raw: Any, *, limit: int, max_priority: int | None = None
) -> list[tuple[int, str, str, str]]:
    """(rowid, text, harness, block_type) of up to `limit` chunks owed a vector, in the order
    they are computed: priority, then newest turn first (`vectors_owed`, schema 5)."""
    where = "where o.priority <= :p" if max_priority is not None else ""
    rows = raw.execute(
        f"""select c.rowid, c.text, c.harness, c.block_type from vectors_owed o
            join chunk_rows c on c.rowid = o.rowid {where}
            order by o.priority, o.ts desc, o.rowid limit :limit""",
        {"p": max_priority, "limit": limit},
    ).fetchall()
    return [(int(r[0]), r[1], r[2], r[3]) for r in rows]


def owed_among(raw: Any, rowids: Sequence[int]) -> list[tuple[int, str, str, str]]:
    """(rowid, text, harness, block_type) of those of `rowids` still owed a vector, as they
    are stored now (a chunk deleted or already given its vector is left out)."""
    out: list[tuple[int, str, str, str]] = []
    for start in range(0, len(rowids), 500):
        part = list(rowids[start : start + 500])
        marks = ",".join("?" * len(part))
        out.extend(
            (int(r[0]), r[1], r[2], r[3])
            for r in raw.execute(
                f"""select c.rowid, c.text, c.harness, c.block_type from vectors_owed o
                    join chunk_rows c on c.rowid = o.rowid where o.rowid in ({marks})""",
                part,
            )
        )
    return out


def owed_counts(raw: Any) -> dict[int, int]:
    """priority → chunks owed a vector."""
    return {
        int(p): int(n)
        for p, n in raw.execute("select priority, count(*) from vectors_owed group by priority")
    }


def per_harness(raw: Any) -> dict[str, tuple[int, int]]:
    """harness → (sessions, chunks)."""
    return {
        harness: (int(sessions), int(chunks))
        for harness, sessions, chunks in raw.execute(
            """select o.harness, count(distinct c.session), count(*)
               from chunks c join origins o on o.id = c.origin group by o.harness"""
        )
    }


def totals(raw: Any) -> tuple[int, str | None, int]:
    """(sessions, last indexed time or None, units)."""
    sessions = raw.execute("select count(distinct session) from chunks").fetchone()[0]
    last = raw.execute("select max(indexed_at) from units").fetchone()[0]
    units = raw.execute("select count(*) from units").fetchone()[0]
    return int(sessions), last, int(units)
