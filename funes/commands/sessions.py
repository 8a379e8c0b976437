"""`funes sessions`: a memory's sessions, newest first, a page at a time (never printed here)."""

from __future__ import annotations

from dataclasses import dataclass

from funes.commands.reading import open_reading
from funes.commands.scope import NO_SCOPE, Scope, filters_for
from funes.errors import UsageError
from funes.memory import MemoryRef, Runtime, foreign_owner
from funes.retrieval import MemoryUnion, SessionPage, list_sessions
from funes.traces import Harness

DEFAULT_LIMIT = 20
MAX_LIMIT = 500


@dataclass(frozen=True, slots=True)
class SessionsRequest:
    harness: Harness | None = None
    scope: Scope = NO_SCOPE  # --project, --since/--until (a session with a turn in range)
    prompt: str | None = None  # text the opening prompt must contain
    limit: int = DEFAULT_LIMIT
    offset: int = 0


@dataclass(slots=True)
class SessionsOutcome:
    page: SessionPage
    memory: str  # the label of the memory read
    limit: int
    owner: str | None = None  # who owns it when it is not the user's own


def run_sessions(rt: Runtime, memory: MemoryRef, request: SessionsRequest) -> SessionsOutcome:
    """One page of the sessions in `memory` that match `request`.

    Raises UsageError for a limit out of range or a bad scope, and the memory's open errors
    (NoIndex, StoreError, RemoteError, …).
    """
    if not 1 <= request.limit <= MAX_LIMIT or request.offset < 0:
        raise UsageError(f"--limit must be 1-{MAX_LIMIT} and --offset 0 or more")
    if request.scope.session:
        raise UsageError(
            "sessions takes no --session", hint="`funes get <session> <turn>` reads one"
        )
    opened = open_reading(rt, memory)
    try:
        filters = filters_for(
            request.scope,
            opened.stores,
            harness=request.harness.value if request.harness else None,
        )
        page = list_sessions(
            opened.memory if isinstance(opened.memory, MemoryUnion) else opened.store,
            filters=filters,
            prompt=request.prompt.strip() if request.prompt and request.prompt.strip() else None,
            limit=request.limit,
            offset=request.offset,
        )
        return SessionsOutcome(page, opened.label, request.limit, foreign_owner(rt, memory))
    finally:
        opened.close()
