"""The sessions of a memory, one summary row each, newest first (`funes sessions`).

A session is listed when at least one of its chunks passes the filters (an agent, a project,
a time range); its summary covers all of its chunks. Its opening prompt is the first chunk of
its first user prompt (a non-scaffold user text block, lowest seq), `""` when it has none.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from funes.store.scope import Filters, like_literal


@dataclass(frozen=True, slots=True)
class SessionSummary:
    """One session of a memory."""

    session_id: str
    harness: str
    cwd: str | None  # the working directory of its first chunk (None when not recorded)
    workdir: str  # the workdir facet of its first chunk
    host: str | None
    started: str  # ISO-8601 UTC of its earliest timestamped turn ("" when none has one)
    ended: str  # … of its latest
    turns: int
    chunks: int
    first_turn: str  # turn id of its first turn (what a `→ get` line opens)
    opening: str  # the first chunk of its first user prompt ("" when none)
    opening_version: int  # the redaction version that chunk passed
    label: str | None = None  # the label its reader stored (None: recall headers derive one)


def summaries(
    raw: Any, filters: Filters, *, prompt: str | None, limit: int, offset: int
) -> tuple[int, list[SessionSummary]]:
    """(how many sessions match, the page of `limit` of them from `offset`), newest first by
    their latest turn. `prompt`: only sessions whose opening prompt contains it (ASCII
    letters compared without case)."""
    where, params = filters.sql("c")
    holds = " and p.text like :prompt escape '\\'" if prompt else ""
    listed = f"""
        with matching as (select distinct c.session from chunks c where 1{where}),
        s as (
            select c.session as session, min(nullif(c.ts, '')) as started,
                coalesce(max(c.ts), '') as ended, count(distinct c.seq) as turns,
                count(*) as chunks, min(c.seq) as first_seq
            from chunks c where c.session in (select session from matching)
            group by c.session
        ),
        rows as (
            select s.*, sess.session_id as session_id, sess.label as label,
                (select p.rowid from chunks p where p.session = s.session and p.role = 'user'
                    and p.block_type = 'text' and not p.scaffold
                    order by p.seq, p.block_idx, p.split_idx limit 1) as opening_rowid,
                (select f.rowid from chunks f where f.session = s.session
                    order by f.seq, f.block_idx, f.split_idx limit 1) as first_rowid
            from s join sessions sess on sess.id = s.session
        )
        select r.session_id, o.harness, o.cwd, o.workdir, o.host, coalesce(r.started, ''),
            r.ended, r.turns, r.chunks, f.turn_id, coalesce(p.text, ''),
            coalesce(p.redaction_version, 0), r.label
        from rows r
        join chunks f on f.rowid = r.first_rowid
        join origins o on o.id = f.origin
        left join chunks p on p.rowid = r.opening_rowid
        where 1{holds}
    """
    bound = {**params, **({"prompt": f"%{like_literal(prompt)}%"} if prompt else {})}
    total = int(raw.execute(f"select count(*) from ({listed})", bound).fetchone()[0])
    rows = raw.execute(
        f"{listed} order by r.ended desc, r.session_id limit :limit offset :offset",
        {**bound, "limit": limit, "offset": offset},
    ).fetchall()
    return total, [
        SessionSummary(
            str(r[0]),
            str(r[1]),
            r[2],
            str(r[3]),
            r[4],
            str(r[5]),
            str(r[6]),
            int(r[7]),
            int(r[8]),
            str(r[9]),
            str(r[10]),
            int(r[11]),
            r[12],
        )  # fmt: skip
        for r in rows
    ]
