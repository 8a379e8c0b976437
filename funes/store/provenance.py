"""The normalised provenance of chunks: `sessions` and `origins` rows, looked up or created.

A chunk row holds two integers instead of repeating its session id and the strings of where
it came from (schema migration 2). `Keys` resolves them for one write transaction; its cache
lives no longer than that transaction, so a rolled-back insert never leaves a dangling id.
"""

from __future__ import annotations

from typing import Any

Origin = tuple[str, str, str | None, str | None, str | None, str, str | None]
"""(harness, workdir, cwd, git_branch, host, source_path, parent_session_id)"""


class Keys:
    """Session and origin ids for one transaction on `raw` (creating missing rows)."""

    def __init__(self, raw: Any) -> None:
        self._raw = raw
        self._sessions: dict[str, int] = {}
        self._origins: dict[Origin, int] = {}

    def session(self, session_id: str) -> int:
        key = self._sessions.get(session_id)
        if key is None:
            self._raw.execute(
                "insert or ignore into sessions (session_id) values (?)", (session_id,)
            )
            row = self._raw.execute(
                "select id from sessions where session_id = ?", (session_id,)
            ).fetchone()
            key = self._sessions[session_id] = int(row[0])
        return key

    def origin(self, origin: Origin) -> int:
        key = self._origins.get(origin)
        if key is None:
            row = self._raw.execute(
                """select id from origins where source_path = ? and workdir = ? and harness = ?
                   and cwd is ? and git_branch is ? and host is ? and parent_session_id is ?""",
                (origin[5], origin[1], origin[0], origin[2], origin[3], origin[4], origin[6]),
            ).fetchone()
            if row is None:
                cur = self._raw.execute(
                    """insert into origins (harness, workdir, cwd, git_branch, host, source_path,
                       parent_session_id) values (?, ?, ?, ?, ?, ?, ?)""",
                    origin,
                )
                key = int(cur.lastrowid)
            else:
                key = int(row[0])
            self._origins[origin] = key
        return key
