"""What a read is restricted to, as a person or an agent wrote it, made into store Filters.

Shared by recall, get, sessions and forget, from the CLI flags and the MCP arguments alike:

    --project P   a path (`.`, `~/src/app`, `/abs/dir`; a path inside a git work tree means the
                  whole repository: its top-level directory) or a bare name (`shop`: sessions
                  whose working directory's last component is `shop`)
    --since T     turns at or after T        T: `2026-04-02`, `2026-04-02T15:30`, an ISO
    --until T     turns before T                time with an offset, `today`, `yesterday`, or
                                                `30m`, `12h`, `7d`, `2w` ago. A bare date or
                                                day word is local midnight; as `--until` it
                                                means the end of that day (the day included)
    --session S   one session: its full id or a prefix of it that names one session (the
                  8 characters a recall header prints)

Times become ISO-8601 UTC strings as stored, so the store compares them as text.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from funes.errors import UsageError
from funes.store import Filters, ProjectScope, Store
from funes.traces import iso_utc, printable, short_id

_AGO = re.compile(r"(\d+)\s*(m|min|h|d|w)", re.IGNORECASE)
_UNIT_S = {"m": 60, "min": 60, "h": 3600, "d": 86400, "w": 7 * 86400}
AMBIGUOUS_SHOWN = 5


@dataclass(frozen=True, slots=True)
class Scope:
    """Restrictions as given (None = not restricted); see the module docstring."""

    project: str | None = None
    since: str | None = None
    until: str | None = None
    session: str | None = None

    @property
    def empty(self) -> bool:
        return not (self.project or self.since or self.until or self.session)

    def flags(self) -> list[str]:
        """The restrictions as the CLI spells them: `["--project", "shop", "--since", "7d"]`
        (values as given; [] when empty)."""
        given = (
            ("--project", self.project),
            ("--since", self.since),
            ("--until", self.until),
            ("--session", self.session),
        )
        return [word for flag, value in given if value for word in (flag, value)]


NO_SCOPE = Scope()


def parse_time(value: str, *, end: bool = False, now: datetime | None = None) -> str:
    """A --since/--until value as an ISO-8601 UTC string (`end`: a bare day means its end).

    Raises UsageError for anything it cannot read, and for a time outside the calendar's
    years 1–9999 (an age of 99999999d, the day after 9999-12-31).
    """
    try:
        return _parse_time(value, end=end, now=now)
    except OverflowError:
        raise UsageError(
            f"not a time funes can use: {value!r} is out of range",
            hint="use a date after year 1 and before 9999, or a shorter age such as 7d or 2w",
        ) from None


def _parse_time(value: str, *, end: bool, now: datetime | None) -> str:
    text = value.strip()
    now = now or datetime.now(UTC)
    local = now.astimezone()
    if m := _AGO.fullmatch(text):
        return iso_utc(now - timedelta(seconds=int(m[1]) * _UNIT_S[m[2].lower()]))
    day: datetime | None = None
    if text.lower() in ("today", "yesterday"):
        midnight = local.replace(hour=0, minute=0, second=0, microsecond=0)
        day = midnight - timedelta(days=1 if text.lower() == "yesterday" else 0)
    elif re.fullmatch(r"\d{4}-\d{2}-\d{2}", text):
        try:
            day = datetime.fromisoformat(text).replace(tzinfo=local.tzinfo)
        except ValueError:
            day = None
    if day is not None:
        return iso_utc(day + timedelta(days=1) if end else day)
    try:
        when = datetime.fromisoformat(text.replace("Z", "+00:00")) if text else None
    except ValueError:
        when = None
    if when is None:
        raise UsageError(
            f"not a time: {value!r}",
            hint="use a date (2026-04-02), a time (2026-04-02T15:30), today, yesterday, or an "
            "age such as 12h, 7d or 2w",
        )
    if when.tzinfo is None:
        when = when.replace(tzinfo=local.tzinfo)
    return iso_utc(when)


def project_scope(value: str) -> ProjectScope:
    """`value` as a project (module docstring). Raises UsageError for an empty value."""
    text = value.strip()
    if not text:
        raise UsageError("--project needs a path or a project name")
    if "/" not in text and not text.startswith(("~", ".")):
        return ProjectScope(name=text)
    path = Path(text).expanduser()
    path = path.resolve() if path.exists() else Path(path.absolute())
    return ProjectScope(path=str(repository_root(path) or path))


def repository_root(path: Path) -> Path | None:
    """The top-level directory of the git work tree holding `path` (a `.git` entry beside it,
    a folder or a worktree's file), None outside one."""
    for folder in (path, *path.parents):
        if (folder / ".git").exists():
            return folder
    return None


def _sessions_named(store: Store, text: str) -> list[str]:
    """Ids of the sessions of `store` that `text` names (see match_session), a few at most."""
    found = store.sessions_starting(text, limit=AMBIGUOUS_SHOWN + 1) if text else []
    if text and not found:
        found = [sid for sid, label in store.session_labels() if (label or short_id(sid)) == text][
            : AMBIGUOUS_SHOWN + 1
        ]
    return found


def match_session(stores: Store | Sequence[Store], value: str) -> str | None:
    """The full id of the one session `value` names: its id, a prefix of exactly one
    session's id, or the label a recall header shows for it (`7f3a9c2e`, a pi session's
    `4e5f6a7b`, a subagent's `7f3a9c2e/Explore-a2df51c9`); None when none matches. Raises
    UsageError when several do. Several `stores` (a bound memory and this host's unpublished
    turns) are searched together; a session both hold is one session."""
    text = printable(value.strip())
    found: list[str] = []
    for store in [stores] if isinstance(stores, Store) else stores:
        found += [sid for sid in _sessions_named(store, text) if sid not in found]
    if text in found or len(found) == 1:
        return text if text in found else found[0]
    if not found:
        return None
    raise UsageError(
        f"{text!r} names several sessions: {_listed(found)}", hint="give more characters of the id"
    )


def match_turn(stores: Store | Sequence[Store], session_id: str, value: str) -> str:
    """The full id of the one turn of `session_id` that `value` names: its id or a prefix of
    exactly one of its turns' ids (the 8 characters a Claude turn id starts with); `value`
    itself when none matches (the caller reports it not found). Raises UsageError when
    several do."""
    text = printable(value.strip())
    found: list[str] = []
    for store in [stores] if isinstance(stores, Store) else stores:
        limit = AMBIGUOUS_SHOWN + 1
        found += [t for t in store.turns_starting(session_id, text, limit=limit) if t not in found]
    if text in found or not found:
        return text
    if len(found) == 1:
        return found[0]
    raise UsageError(
        f"{text!r} names several turns of session {session_id}: {_listed(found)}",
        hint="give more characters of the turn id",
    )


def _listed(ids: Sequence[str]) -> str:
    """The first AMBIGUOUS_SHOWN of `ids`, comma-separated, `…` when there are more."""
    return ", ".join(ids[:AMBIGUOUS_SHOWN]) + (", …" if len(ids) > AMBIGUOUS_SHOWN else "")


def resolve_session(stores: Store | Sequence[Store], value: str) -> str:
    """`match_session`, and UsageError when no session matches."""
    found = match_session(stores, value)
    if found is None:
        raise UsageError(
            f"no session {printable(value.strip())!r} in this memory",
            hint="list sessions with `funes sessions`, or copy the id from a recall header",
        )
    return found


def filters_for(
    scope: Scope,
    stores: Store | Sequence[Store],
    *,
    harness: str | None = None,
    block_types: Sequence[str] = (),
    now: datetime | None = None,
) -> Filters:
    """Store filters for `scope` (and the facets: `block_types`, any of them; empty = any).
    Raises UsageError for a bad value, an unknown or ambiguous session, or a time range that
    ends before it starts."""
    since = parse_time(scope.since, now=now) if scope.since else None
    until = parse_time(scope.until, end=True, now=now) if scope.until else None
    if since is not None and until is not None and until <= since:
        raise UsageError(f"--until ({until}) is not after --since ({since})")
    return Filters(
        harness=harness,
        block_types=tuple(dict.fromkeys(block_types)),
        session=resolve_session(stores, scope.session) if scope.session else None,
        since=since,
        until=until,
        project=project_scope(scope.project) if scope.project else None,
    )
