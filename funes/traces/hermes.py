"""Read Hermes sessions from its SQLite store (`$HERMES_HOME/state.db`, and per-profile
`$HERMES_HOME/profiles/<name>/state.db`) into turns, strictly read-only.

The database is never written, nor its `-wal`/`-shm` (`funes.traces.hermes_db`: an immutable
open when the WAL is empty, else a private copy of the database and its WAL); messages are
fetched in short pages.

One unit per session: key `"<db path>#<session id>"`, signature `"<MAX(messages.id)>:<row
count>"` (a grown session is re-read; an in-place edit of an existing row is not noticed).
Columns are probed with `PRAGMA table_info`: old schemas have no `cwd`, `git_branch`,
`model`, `reasoning*` or display columns.

Profiles. Each Hermes profile keeps its own database, and two of them can hold the same session
id (API-server ids hash the request; cron ids repeat a job's id) with different conversations.
A session of a profile's database is stored as `<profile>:<session id>`, so the two stay
separate sessions whose chunks never collide: the profile is `<name>` for
`…/profiles/<name>/state.db` and `hermes-<x>` for a sibling home `…/.hermes-<x>/state.db`; the
default home's database (and any other path) keeps the bare id.

Mapping per `messages` row (ordered by id; turn id = `str(messages.id)`): `user` → text;
`assistant` → thinking (`reasoning_content`, plus `reasoning` when it differs) + text +
one tool_use per `tool_calls` entry (`function.arguments` verbatim); `tool` → tool_result
(inline `tool_name`); `system` rows are skipped. Multimodal content stored as a
`\\x00json:`/`\\x01json:`-prefixed JSON string is reduced to its text parts. Hidden rows
(`display_kind = 'hidden'`), compaction summaries (`_compressed_summary`) and the cron
scheduler's preamble (a user message opening with `[IMPORTANT: You are running as a scheduled
cron job.` or the older `[SYSTEM: …`) are scaffolding. An assistant turn's model is the
session's `model`.
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from typing import Any

from funes.traces.hermes_db import Snapshot, with_db
from funes.traces.jsonl import compact_json
from funes.traces.labels import short_id
from funes.traces.model import Block, BlockType, Harness, Role, Turn, normalize_ts
from funes.traces.source import ReadStats, Unit, open_regular, versioned

DB_NAME = "state.db"
SQLITE_MAGIC = b"SQLite format 3\x00"
_PAGE = 200  # messages fetched per short read transaction
_MULTIMODAL_PREFIXES = ("\x00json:", "\x01json:")
_OPTIONAL_MESSAGE_COLUMNS = (
    "tool_call_id",
    "tool_calls",
    "tool_name",
    "timestamp",
    "reasoning",
    "reasoning_content",
    "display_kind",
    "_compressed_summary",
)
_OPTIONAL_SESSION_COLUMNS = ("cwd", "git_branch", "parent_session_id", "model")
_CRON_PREAMBLE = re.compile(r"\s*\[(?:IMPORTANT|SYSTEM): You are running as a scheduled cron job")


def is_cron_preamble(text: str) -> bool:
    """A user message the cron scheduler opened with its delivery instructions."""
    return _CRON_PREAMBLE.match(text) is not None


def profile_of(db: Path) -> str | None:
    """The profile a database belongs to (see the module docstring); None for the default."""
    home = db.parent
    if home.parent.name == "profiles" and home.name:
        return home.name
    if home.name.startswith(".hermes-") and len(home.name) > len(".hermes-"):
        return home.name[1:]
    return None


def names_session(db: Path, stored_id: str) -> bool:
    """Whether reading `db` now stores sessions under ids like `stored_id` (a profile's
    database under `<profile>:…`, the default's under bare ids): a stored row of `db` whose id
    is not so was written under an earlier rule and is no longer this database's."""
    profile = profile_of(db)
    return stored_id.startswith(f"{profile}:") if profile else True


def session_key(db: Path, session_id: str) -> str:
    """The stored session id of a database's session: `<profile>:<id>` in a profile's db."""
    profile = profile_of(db)
    return f"{profile}:{session_id}" if profile else session_id


def is_sqlite_file(path: Path) -> bool:
    """True when `path` starts with the SQLite header (False when unreadable)."""
    try:
        with open_regular(path) as f:
            return f.read(len(SQLITE_MAGIC)) == SQLITE_MAGIC
    except OSError:
        return False


class HermesSource:
    """Hermes sessions in one or more `state.db` files (the home's and its profiles')."""

    harness = Harness.HERMES

    def __init__(self, home: Path | None = None, *, databases: Iterable[Path] = ()) -> None:
        self.home = home
        self._explicit = tuple(databases)
        self._snapshots: dict[Path, Snapshot] = {}

    def snapshot(self, db: Path) -> Snapshot:
        """The read-only view of `db` this source reads through (one per database)."""
        found = self._snapshots.get(db)
        if found is None:
            found = self._snapshots[db] = Snapshot(db)
        return found

    def databases(self) -> list[Path]:
        """The state.db files this source reads: explicit ones, or the home's and profiles'."""
        if self._explicit:
            return [p for p in self._explicit if p.is_file()]
        if self.home is None:
            return []
        found = [self.home / DB_NAME]
        profiles = self.home / "profiles"
        if profiles.is_dir():
            found.extend(sorted(profiles.glob(f"*/{DB_NAME}")))
        return [p for p in found if p.is_file()]

    def units(self) -> Iterable[Unit]:
        for db in self.databases():
            try:
                yield from with_db(self.snapshot(db), partial(_session_units, db=db, only=None))
            except (sqlite3.Error, OSError):
                continue  # unreadable or not a Hermes database: nothing to index (retried next run)

    def read(self, unit: Unit, stats: ReadStats) -> Iterator[Turn]:
        if unit.session is None:
            return iter(())
        return read_hermes_session(self.snapshot(unit.path), unit.session, stats)

    def unit_for_hook(self, payload: Mapping[str, object]) -> Unit | None:
        """A Hermes shell-hook payload: `session_id`, optional `profile` (→ that profile's db)."""
        sid = payload.get("session_id")
        if not isinstance(sid, str) or not sid.strip():
            return None
        profile = payload.get("profile")
        dbs = self.databases()
        if isinstance(profile, str) and profile and profile != "default" and self.home is not None:
            wanted = self.home / "profiles" / profile / DB_NAME
            dbs = [wanted] + [d for d in dbs if d != wanted] if wanted.is_file() else dbs
        for db in dbs:
            try:
                found = with_db(self.snapshot(db), partial(_session_units, db=db, only=sid.strip()))
            except (sqlite3.Error, OSError):
                continue
            if found:
                return found[0]
        return None


def _columns(conn: sqlite3.Connection, table: str) -> set[str]:
    return {row[1] for row in conn.execute(f"pragma table_info({table})")}


def _fetch(conn: sqlite3.Connection, sql: str, args: tuple[Any, ...]) -> list[Any]:
    return conn.execute(sql, args).fetchall()


def _session_units(conn: sqlite3.Connection, db: Path, only: str | None) -> list[Unit]:
    """One Unit per session with messages (only session `only` when given)."""
    have = _columns(conn, "messages")
    if "session_id" not in have:
        return []
    last = "max(timestamp)" if "timestamp" in have else "null"
    where, args = ("where session_id = ?", (only,)) if only is not None else ("", ())
    rows = conn.execute(
        f"""select session_id, max(id), count(*), {last} from messages {where}
            group by session_id order by session_id""",
        args,
    ).fetchall()
    return [
        Unit(
            key=f"{db}#{session_id}",
            signature=versioned(f"{max_id}:{count}"),
            harness=Harness.HERMES,
            path=db,
            sort_key=float(last_ts) if isinstance(last_ts, int | float) else 0.0,
            session=session_id,
        )
        for session_id, max_id, count, last_ts in rows
        if isinstance(session_id, str)
    ]


@dataclass(frozen=True, slots=True)
class _SessionInfo:
    cwd: str | None = None
    git_branch: str | None = None
    parent: str | None = None
    model: str | None = None


_MAX_ANCESTORS = 32  # parent links followed for a working directory (a cycle stops sooner)


def _session_info(conn: sqlite3.Connection, session_id: str) -> _SessionInfo:
    """The session's own columns; a session with no `cwd` of its own (a compression or
    delegation child: Hermes records the directory on the session that started in it) takes
    its nearest ancestor's, with that ancestor's branch when it has none either."""
    info = _own_session_info(conn, session_id)
    seen = {session_id}
    parent = info.parent
    while info.cwd is None and parent is not None and parent not in seen:
        if len(seen) > _MAX_ANCESTORS:
            break
        seen.add(parent)
        ancestor = _own_session_info(conn, parent)
        if ancestor.cwd is not None:
            return replace(
                info, cwd=ancestor.cwd, git_branch=info.git_branch or ancestor.git_branch
            )
        parent = ancestor.parent
    return info


def _own_session_info(conn: sqlite3.Connection, session_id: str) -> _SessionInfo:
    have = _columns(conn, "sessions") & set(_OPTIONAL_SESSION_COLUMNS)
    if not have:
        return _SessionInfo()
    cols = sorted(have)
    row = conn.execute(
        f"select {', '.join(cols)} from sessions where id = ?", (session_id,)
    ).fetchone()
    if row is None:
        return _SessionInfo()
    values = {c: v for c, v in zip(cols, row, strict=True) if isinstance(v, str) and v.strip()}
    return _SessionInfo(
        values.get("cwd"),
        values.get("git_branch"),
        values.get("parent_session_id"),
        values.get("model"),
    )


def read_hermes_session(db: Snapshot, session_id: str, stats: ReadStats) -> Iterator[Turn]:
    """Turns of one Hermes session, in `messages.id` order (see module docstring).

    Raises sqlite3.Error / OSError when the database cannot be opened or queried at all.
    """

    def header(conn: sqlite3.Connection) -> tuple[_SessionInfo, list[str]]:
        have = _columns(conn, "messages")
        return _session_info(conn, session_id), [c for c in _OPTIONAL_MESSAGE_COLUMNS if c in have]

    info, optional = with_db(db, header)
    cols = ["id", "role", "content", *optional]
    sql = f"""select {", ".join(cols)} from messages where session_id = ? and id > ?
              order by id limit {_PAGE}"""
    last_id = -1
    seq = 0
    while True:
        page = with_db(db, partial(_fetch, sql=sql, args=(session_id, last_id)), stats)
        if not page:
            return
        for values in page:
            row = dict(zip(cols, values, strict=True))
            last_id = int(row["id"])
            stats.records += 1
            turn = _turn(row, db.db, session_id, info, seq, stats)
            if turn is not None:
                yield turn
                stats.turns += 1
                seq += 1
        if len(page) < _PAGE:
            return


def _turn(
    row: Mapping[str, Any],
    db: Path,
    session_id: str,
    info: _SessionInfo,
    seq: int,
    stats: ReadStats,
) -> Turn | None:
    role = row.get("role")
    if role == "user":
        turn_role, blocks = Role.USER, text_blocks(row.get("content"))
    elif role == "assistant":
        turn_role, blocks = Role.ASSISTANT, _assistant_blocks(row, stats)
    elif role == "tool":
        turn_role, blocks = Role.TOOL, _tool_blocks(row)
    elif role == "system":
        return None
    else:
        stats.unknown_records += 1
        return None
    if not blocks:
        return None
    scaffold = row.get("display_kind") == "hidden" or bool(row.get("_compressed_summary"))
    if role == "user" and is_cron_preamble(blocks[0].text):
        scaffold = True
    stored = session_key(db, session_id)
    return Turn(
        harness=Harness.HERMES,
        session_id=stored,
        turn_id=str(row["id"]),
        seq=seq,
        ts=normalize_ts(row.get("timestamp")),
        role=turn_role,
        blocks=blocks,
        source_path=str(db),
        cwd=info.cwd,
        git_branch=info.git_branch,
        parent_session_id=session_key(db, info.parent) if info.parent else None,
        scaffold=scaffold,
        model=info.model if turn_role is Role.ASSISTANT else None,
        project=info.cwd,
        session_label=short_id(stored),
    )


def content_text(content: Any) -> str:
    """The text of a `messages.content` value, decoding the multimodal `\\x00json:` form."""
    if isinstance(content, bytes):
        content = content.decode("utf-8", errors="replace")
    if not isinstance(content, str):
        return ""
    for prefix in _MULTIMODAL_PREFIXES:
        if content.startswith(prefix):
            try:
                return _parts_text(json.loads(content[len(prefix) :]))
            except (ValueError, RecursionError):
                return ""
    return content


def _parts_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        if isinstance(value.get("text"), str):
            return value["text"] if value.get("type") in (None, "text", "input_text") else ""
        return _parts_text(value.get("content"))
    if isinstance(value, list):
        return "\n".join(t for t in (_parts_text(v) for v in value) if t)
    return ""


def text_blocks(content: Any) -> tuple[Block, ...]:
    text = content_text(content)
    return (Block.make(BlockType.TEXT, text),) if text.strip() else ()


def _assistant_blocks(row: Mapping[str, Any], stats: ReadStats) -> tuple[Block, ...]:
    blocks: list[Block] = []
    thoughts: list[str] = []
    for key in ("reasoning_content", "reasoning"):
        value = row.get(key)
        if isinstance(value, str) and value.strip() and value.strip() not in thoughts:
            thoughts.append(value.strip())
    blocks.extend(Block.make(BlockType.THINKING, t) for t in thoughts)
    blocks.extend(text_blocks(row.get("content")))
    raw_calls = row.get("tool_calls")
    if isinstance(raw_calls, str) and raw_calls.strip():
        try:
            calls = json.loads(raw_calls)
        except (ValueError, RecursionError):
            stats.corrupt_records += 1
            calls = []
        for call in calls if isinstance(calls, list) else []:
            if not isinstance(call, dict):
                continue
            fn_raw = call.get("function")
            fn: dict[str, Any] = fn_raw if isinstance(fn_raw, dict) else {}
            args = fn.get("arguments")
            text = args if isinstance(args, str) else compact_json(args if args is not None else {})
            call_id = call.get("id") or call.get("call_id")
            blocks.append(
                Block.make(
                    BlockType.TOOL_USE,
                    text,
                    tool_name=fn.get("name") if isinstance(fn.get("name"), str) else None,
                    tool_use_id=call_id if isinstance(call_id, str) else None,
                )
            )
    return tuple(blocks)


def _tool_blocks(row: Mapping[str, Any]) -> tuple[Block, ...]:
    text = content_text(row.get("content"))
    if not text.strip():
        return ()
    name = row.get("tool_name")
    call_id = row.get("tool_call_id")
    return (
        Block.make(
            BlockType.TOOL_RESULT,
            text,
            tool_name=name if isinstance(name, str) else None,
            tool_use_id=call_id if isinstance(call_id, str) else None,
        ),
    )
