"""`funes get`: a turn and the turns around it, blocks reassembled (never printed here)."""

from __future__ import annotations

from dataclasses import dataclass

from funes.commands.reading import open_reading
from funes.commands.scope import NO_SCOPE, Scope, filters_for, match_session, match_turn
from funes.errors import UsageError
from funes.memory import MemoryRef, Runtime, foreign_owner
from funes.retrieval import TurnView, get_turns
from funes.traces import printable


@dataclass(slots=True)
class GetOutcome:
    turns: list[TurnView]
    session_id: str
    turn_id: str
    memory: str
    owner: str | None = None  # who owns it when it is not the user's own (funes.memory.owner)
    session_found: bool = True  # False: no session of the memory is named so (turns empty)


def run_get(
    rt: Runtime,
    memory: MemoryRef,
    session_id: str,
    turn_id: str,
    *,
    window: int,
    scope: Scope = NO_SCOPE,
) -> GetOutcome:
    """The turn and its neighbours in the session (empty `turns` when the turn is absent;
    `session_found` False too when the memory holds no session of that id, prefix or label).

    `session_id` may be a prefix naming one session (the 8 characters of a recall header),
    `turn_id` a prefix naming one of its turns. `scope` (--project, --since/--until) restricts
    the turns shown and counted in the window; a named turn outside it is absent. Raises
    UsageError for a blank session or turn id (before anything is opened), a prefix naming
    several sessions or turns, or a bad scope.
    """
    if not session_id.strip() or not turn_id.strip():
        raise UsageError(
            "get needs a session id and a turn id",
            hint="copy the `→ get` line of a recall hit: funes get <session> <turn>",
        )
    # ids are stored `printable`; one pasted raw (or with argv bytes not UTF-8) matches too
    session_id, turn_id = printable(session_id), printable(turn_id)
    opened = open_reading(rt, memory)
    try:
        store = opened.store
        # a short id (a prefix of exactly one session's id); an unknown one is "not found"
        matched = match_session(opened.stores, session_id)
        filters = filters_for(Scope(scope.project, scope.since, scope.until), store)
        owner = foreign_owner(rt, memory)
        if matched is None:
            return GetOutcome([], session_id, turn_id, opened.label, owner, session_found=False)
        # a short turn id too (a prefix of exactly one of the session's turn ids)
        turn_id = match_turn(opened.stores, matched, turn_id)
        turns = get_turns(opened.memory, matched, turn_id, window=window, filters=filters)
        return GetOutcome(turns, matched, turn_id, opened.label, owner)
    finally:
        opened.close()
