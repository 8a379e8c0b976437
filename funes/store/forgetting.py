"""The SQL of forgetting: deleting sessions, the tombstones that keep them out, remote copies.

A tombstone (table `forgotten`, schema 4) is either a session id (kind `session`) or a rule
(kind `rule`): a JSON object `{"before": ISO time or null, "project": {"path": …} or
{"name": …} or null}` that a session matches when it started before `before` (one of its
chunks has an earlier timestamp) and, when `project` is set, ran in that project (see
funes.store.scope). Every write checks new chunks against both (`Tombstones`), so no later
index, sweep or hook brings a forgotten session back.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from funes.store.scope import ProjectScope, project_matches, project_sql


@dataclass(frozen=True, slots=True)
class ForgetRule:
    """Sessions that started before `before` (ISO UTC) and/or ran in `project`."""

    before: str | None = None
    project: ProjectScope | None = None

    def __post_init__(self) -> None:
        if self.before is None and self.project is None:
            raise ValueError("a forget rule needs a time or a project")

    def encode(self) -> str:
        """The canonical JSON stored as the tombstone's value."""
        project = None
        if self.project is not None:
            project = (
                {"path": self.project.path}
                if self.project.path is not None
                else {"name": self.project.name}
            )
        return json.dumps({"before": self.before, "project": project}, sort_keys=True)

    @classmethod
    def decode(cls, value: str) -> ForgetRule | None:
        """The rule stored as `value`; None for one this funes cannot read (it is kept)."""
        try:
            data = json.loads(value)
            project = data.get("project")
            scope = ProjectScope(**project) if isinstance(project, dict) else None
            return cls(data.get("before"), scope)
        except (ValueError, TypeError, AttributeError):
            return None

    def matches(self, ts: str, cwd: str | None, workdir: str) -> bool:
        """Whether a chunk with this provenance puts its session under the rule."""
        if self.before is not None and not (ts and ts < self.before):
            return False
        return self.project is None or project_matches(self.project, cwd, workdir)

    @property
    def label(self) -> str:
        parts = [f"started before {self.before}"] if self.before else []
        if self.project is not None:
            parts.append(f"in project {self.project.label}")
        return " and ".join(parts)


@dataclass(slots=True)
class Tombstones:
    """What a write must refuse: forgotten session ids, and rules that forget new ones."""

    sessions: set[str] = field(default_factory=set)
    rules: list[ForgetRule] = field(default_factory=list)


def has_tables(raw: Any) -> bool:
    row = raw.execute("select 1 from sqlite_master where name = 'forgotten'").fetchone()
    return row is not None


def tombstones(raw: Any, session_ids: Iterable[str]) -> Tombstones:
    """The tombstones of `session_ids` (those forgotten among them) and every rule."""
    found = Tombstones()
    if not has_tables(raw):
        return found
    ids = sorted(set(session_ids))
    for start in range(0, len(ids), 500):
        part = ids[start : start + 500]
        marks = ",".join("?" * len(part))
        found.sessions.update(
            str(r[0])
            for r in raw.execute(
                f"select value from forgotten where kind = 'session' and value in ({marks})", part
            )
        )
    for (value,) in raw.execute("select value from forgotten where kind = 'rule'"):
        rule = ForgetRule.decode(str(value))
        if rule is not None:
            found.rules.append(rule)
    return found


def record(raw: Any, kind: str, values: Iterable[str], *, at: str) -> None:
    raw.executemany(
        "insert or ignore into forgotten (kind, value, forgotten_at) values (?, ?, ?)",
        [(kind, v, at) for v in values],
    )


def sessions_matching(raw: Any, rule: ForgetRule) -> list[str]:
    """Ids of the stored sessions `rule` forgets, in id order."""
    clauses: list[str] = []
    params: dict[str, Any] = {}
    if rule.project is not None:
        condition, params = project_sql(rule.project)
        clauses.append(f"sum(c.origin in (select id from origins where {condition})) > 0")
    if rule.before is not None:
        clauses.append("min(nullif(c.ts, '')) < :before")
        params["before"] = rule.before
    rows = raw.execute(
        f"""select s.session_id from chunks c join sessions s on s.id = c.session
            group by c.session having {" and ".join(clauses)} order by s.session_id""",
        params,
    ).fetchall()
    return [str(r[0]) for r in rows]


def session_chunks(raw: Any, session_ids: Sequence[str]) -> dict[str, list[tuple[int, str]]]:
    """(rowid, chunk id) of every chunk of each session (sessions without chunks absent)."""
    out: dict[str, list[tuple[int, str]]] = {}
    for start in range(0, len(session_ids), 500):
        part = list(session_ids[start : start + 500])
        marks = ",".join("?" * len(part))
        for sid, rowid, cid in raw.execute(
            f"""select s.session_id, c.rowid, c.id from chunks c
                join sessions s on s.id = c.session where s.session_id in ({marks})""",
            part,
        ):
            out.setdefault(str(sid), []).append((int(rowid), str(cid)))
    return out


def delete_sessions(raw: Any, session_ids: Sequence[str], *, vectors: bool) -> int:
    """Delete every chunk (FTS rows follow by trigger; vectors when `vectors`) and the
    `sessions` row of each session. Returns chunks deleted. Runs in the caller's transaction."""
    deleted = 0
    for sid, rows in session_chunks(raw, session_ids).items():
        rowids = [r for r, _ in rows]
        for start in range(0, len(rowids), 500):
            part = rowids[start : start + 500]
            marks = ",".join("?" * len(part))
            if vectors:
                raw.execute(f"delete from chunks_vec where rowid in ({marks})", part)
                # the vector index beside a large memory catches up from this log
                raw.executemany("insert into vector_log (rowid) values (?)", [(r,) for r in part])
            raw.execute(f"delete from chunks where rowid in ({marks})", part)
        deleted += len(rowids)
        raw.execute("delete from sessions where session_id = ?", (sid,))
    return deleted


def note_copies(raw: Any, copies: Iterable[tuple[str, str, int]]) -> None:
    """Remember (session id, remote label, chunks there) of forgotten sessions."""
    raw.executemany(
        """insert into forgotten_copies (session_id, remote, chunks) values (?, ?, ?)
           on conflict (session_id, remote) do update set chunks = excluded.chunks""",
        list(copies),
    )


def drop_copies(raw: Any, remote: str) -> None:
    raw.execute("delete from forgotten_copies where remote = ?", (remote,))


def copies(raw: Any) -> dict[str, tuple[int, int]]:
    """remote label → (forgotten sessions it still holds, their chunks there)."""
    if not has_tables(raw):
        return {}
    return {
        str(remote): (int(n), int(chunks))
        for remote, n, chunks in raw.execute(
            "select remote, count(*), sum(chunks) from forgotten_copies group by remote"
        )
    }


def summary(raw: Any) -> tuple[int, list[str]]:
    """(forgotten sessions, the stored rules' values)."""
    if not has_tables(raw):
        return 0, []
    n = raw.execute("select count(*) from forgotten where kind = 'session'").fetchone()[0]
    rules = [str(r[0]) for r in raw.execute("select value from forgotten where kind = 'rule'")]
    return int(n), rules


def forgotten_sessions(raw: Any) -> list[str]:
    if not has_tables(raw):
        return []
    return [
        str(r[0])
        for r in raw.execute("select value from forgotten where kind = 'session' order by value")
    ]
