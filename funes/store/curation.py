"""The SQL of curating a project memory: one summary per session, and its opening prompts.

`funes curate` attributes each session of the local memory to a repository by the git
remotes of the checkout it ran in (its `cwd`), and shows each one for review with the prompts
that opened it. Reads only; bound parameters.
"""

from __future__ import annotations

from dataclasses import dataclass

from funes.store.store import Store


@dataclass(frozen=True, slots=True)
class ReviewSummary:
    """One session of a memory, as a review shows it."""

    session_id: str
    harness: str
    cwd: str | None  # the working directory of its first chunk (None: the agent recorded none)
    started: str  # ISO-8601 UTC of its earliest turn ("" when none was recorded)
    turns: int
    chunks: int


def session_summaries(store: Store) -> list[ReviewSummary]:
    """Every session of the memory, newest first (one query; nothing loaded but the rows)."""
    rows = store.raw.execute(
        """select s.session_id,
                  (select o.harness from chunks c2 join origins o on o.id = c2.origin
                   where c2.session = s.id order by c2.seq, c2.block_idx limit 1),
                  (select o.cwd from chunks c2 join origins o on o.id = c2.origin
                   where c2.session = s.id and o.cwd is not null
                   order by c2.seq, c2.block_idx limit 1),
                  min(c.ts), count(distinct c.turn_id), count(*)
           from sessions s join chunks c on c.session = s.id
           group by s.id
           order by min(c.ts) desc, s.session_id"""
    ).fetchall()
    return [
        ReviewSummary(str(sid), str(harness or ""), cwd, str(started or ""), int(t), int(n))
        for sid, harness, cwd, started, t, n in rows
    ]


def opening_prompts(store: Store, session_id: str, *, limit: int = 3) -> list[str]:
    """The first `limit` user prompts of a session (their first chunk each), in order."""
    rows = store.raw.execute(
        """select c.text from chunks c join sessions s on s.id = c.session
           where s.session_id = ? and c.role = 'user' and c.block_type = 'text'
             and c.split_idx = 0 and c.scaffold = 0
           order by c.seq, c.block_idx limit ?""",
        (session_id, limit),
    ).fetchall()
    return [str(r[0]) for r in rows]
