"""The normalised provenance of chunks: `sessions` and `origins` rows, looked up or created.

A chunk row holds two integers instead of repeating its session id and the strings of where
it came from (schema migration 2). `Keys` resolves them for one write transaction; its cache
lives no longer than that transaction, so a rolled-back insert never leaves a dangling id.
"""

from __future__ import annotations

from typing import Any

Origin = tuple[str, str, str | None, str | None, str | None, str, str | None, str | None]
"""(harness, workdir, cwd, git_branch, host, source_path, parent_session_id, model)"""


class Keys:
    """Session and origin ids for one transaction on `raw` (creating missing rows)."""

    def __init__(self, raw: Any) -> None:
        self._raw = raw
        self._sessions: dict[str, int] = {}
        self._origins: dict[Origin, int] = {}

    def session(self, session_id: str, label: str | None = None) -> int:
        """The key of `session_id` (created when new); a `label` given replaces the stored one."""
        key = self._sessions.get(session_id)
        if key is None:
            self._raw.execute(
                "insert or ignore into sessions (session_id, label) values (?, ?)",
                (session_id, label),
            )
            row = self._raw.execute(
                "select id from sessions where session_id = ?", (session_id,)
            ).fetchone()
            key = self._sessions[session_id] = int(row[0])
            if label is not None:
                self._raw.execute(
                    "update sessions set label = ? where id = ? and label is not ?",
                    (label, key, label),
                )
        return key

    def origin(self, origin: Origin) -> int:
        key = self._origins.get(origin)
        if key is None:
            harness, workdir, cwd, branch, host, source_path, parent, model = origin
            row = self._raw.execute(
                """select id from origins where source_path = ? and workdir = ? and harness = ?
                   and cwd is ? and git_branch is ? and host is ? and parent_session_id is ?
                   and model is ?""",
                (source_path, workdir, harness, cwd, branch, host, parent, model),
            ).fetchone()
            if row is None:
                cur = self._raw.execute(
                    """insert into origins (harness, workdir, cwd, git_branch, host, source_path,
                       parent_session_id, model) values (?, ?, ?, ?, ?, ?, ?, ?)""",
                    origin,
                )
                key = int(cur.lastrowid)
            else:
                key = int(row[0])
            self._origins[origin] = key
        return key
