"""`funes curate <memory> [owner/name]`: choose which of this host's sessions a project memory
receives.

Sessions of the local memory are attributed to a repository by the git remotes of the
checkout they ran in (funes.traces.checkout); those of the project are reviewed, each shown
with the prompts that opened it, and marked include or exclude. The decisions are this
host's, kept in a human-readable file under the data dir (funes.memory.curation); a push to
the memory (by hand, or at a session boundary of an agent bound to it) then sends only the
included sessions, and `funes status` counts the sessions still waiting for review.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from funes.errors import UsageError
from funes.memory import (
    Curation,
    MemoryRef,
    Runtime,
    all_curations,
    bound_ref,
    curation_path,
    load_curation,
    remote_for,
    save_curation,
)
from funes.plurals import counted
from funes.store import ReviewSummary, Store, opening_prompts, session_summaries
from funes.traces import checkout_identities, printable, strip_terminal_controls

PROMPTS_SHOWN = 3  # opening prompts a review shows per session
NOTE_CHARS = 80  # characters of the first prompt kept beside a decision in the file


@dataclass(frozen=True, slots=True)
class SessionCard:
    """One session as a review shows it."""

    session_id: str
    harness: str
    cwd: str | None
    started: str
    turns: int
    prompts: tuple[str, ...]  # its opening prompts (the first PROMPTS_SHOWN)
    decision: str | None  # include | exclude | None (pending review)
    attributed: bool  # its checkout has a git remote of the project


@dataclass(slots=True)
class CurateOutcome:
    memory: str  # the memory's label
    key: str  # its remote key (names the decisions file)
    project: str
    path: Path  # the decisions file
    cards: list[SessionCard] = field(default_factory=list)  # the project's sessions + decided
    host_sessions: int = 0  # every session of this host's memory (of any project)
    new: bool = False  # the memory was not a project memory before this review

    def count(self, decision: str) -> int:
        return sum(1 for c in self.cards if c.decision == decision)

    @property
    def pending(self) -> list[SessionCard]:
        return [c for c in self.cards if c.decision is None and c.attributed]


def project_here(cwd: Path) -> str | None:
    """The project of the checkout at `cwd` (its origin remote first), or None."""
    found = checkout_identities(cwd)
    return found[0] if found else None


def _one_line(text: str, limit: int) -> str:
    folded = " ".join(strip_terminal_controls(text).split())
    return folded if len(folded) <= limit else folded[: limit - 1] + "…"


def review(rt: Runtime, ref: MemoryRef, project: str | None, *, cwd: Path) -> CurateOutcome:
    """The project's sessions on this host, with the decisions recorded so far (no writes).

    `project` None: the one recorded for this memory, else the checkout at `cwd`'s. Raises
    UsageError when there is none, or when it differs from the one recorded (a memory
    curates one project), and NoIndex/StoreError when there is no local memory.
    """
    remote = remote_for(ref)
    recorded = load_curation(rt.paths, remote.key)
    wanted = (project or "").strip().lower() or (recorded.project if recorded else None)
    wanted = wanted or project_here(cwd)
    if not wanted or wanted.count("/") < 1:
        raise UsageError(
            f"which project does {ref.label} hold? name it: funes curate {ref.label} owner/name",
            hint="sessions are attributed to owner/name by the git remotes of their checkout",
        )
    if recorded is not None and recorded.project != wanted:
        raise UsageError(
            f"{ref.label} is the project memory of {recorded.project}, not {wanted}",
            hint=f"edit or remove {curation_path(rt.paths, remote.key)} to change it",
        )
    decisions = recorded.decisions if recorded else {}
    outcome = CurateOutcome(ref.label, remote.key, wanted, curation_path(rt.paths, remote.key))
    outcome.new = recorded is None
    if not rt.paths.memory_db.exists():
        return outcome
    store = Store.open(rt.paths.memory_db, readonly=True)
    try:
        identities: dict[str, tuple[str, ...]] = {}
        for s in session_summaries(store):
            outcome.host_sessions += 1
            if s.cwd is not None and s.cwd not in identities:
                identities[s.cwd] = checkout_identities(s.cwd)
            attributed = s.cwd is not None and wanted in identities[s.cwd]
            if not attributed and s.session_id not in decisions:
                continue
            outcome.cards.append(_card(store, s, decisions.get(s.session_id), attributed))
    finally:
        store.close()
    return outcome


def _card(store: Store, s: ReviewSummary, decision: str | None, attributed: bool) -> SessionCard:
    prompts = tuple(opening_prompts(store, s.session_id, limit=PROMPTS_SHOWN))
    return SessionCard(s.session_id, s.harness, s.cwd, s.started, s.turns, prompts, decision,
                       attributed)  # fmt: skip


def decide(rt: Runtime, outcome: CurateOutcome, decisions: Mapping[str, str]) -> CurateOutcome:
    """Record `decisions` ({session id or unique prefix: include | exclude}) and write the file.

    A session may be any of the local memory's (not only the project's). Raises UsageError
    for an unknown or ambiguous session, or a decision that is neither include nor exclude.
    """
    known = {c.session_id: c for c in outcome.cards}
    everyone = _all_sessions(rt)
    resolved: dict[str, str] = {}
    for given, decision in decisions.items():
        if decision not in ("include", "exclude"):
            raise UsageError(f"not a decision: {decision!r}", hint="include or exclude")
        session = _resolve(printable(given.strip()), everyone)
        resolved[session] = decision
    recorded = load_curation(rt.paths, outcome.key)
    merged = dict(recorded.decisions) if recorded else {}
    notes = dict(recorded.notes) if recorded else {}
    merged.update(resolved)
    cards = {**known}
    for session in resolved:
        if session not in cards:
            cards[session] = everyone[session]
    for session in merged:
        card = cards.get(session)
        if card is not None:
            first = card.prompts[0] if card.prompts else ""
            notes[session] = f"{card.started or '-'}  {_one_line(first, NOTE_CHARS)}".rstrip()
    save_curation(
        rt.paths,
        outcome.key,
        Curation(outcome.memory, outcome.project, merged, notes),
    )
    outcome.cards = [
        SessionCard(
            c.session_id, c.harness, c.cwd, c.started, c.turns, c.prompts,
            merged.get(c.session_id), c.attributed,
        )
        for c in cards.values()
    ]  # fmt: skip
    outcome.cards.sort(key=lambda c: c.started, reverse=True)
    return outcome


def _all_sessions(rt: Runtime) -> dict[str, SessionCard]:
    if not rt.paths.memory_db.exists():
        return {}
    store = Store.open(rt.paths.memory_db, readonly=True)
    try:
        return {
            s.session_id: SessionCard(
                s.session_id, s.harness, s.cwd, s.started, s.turns, (), None, False
            )  # fmt: skip
            for s in session_summaries(store)
        }
    finally:
        store.close()


def _resolve(given: str, sessions: Mapping[str, SessionCard]) -> str:
    if given in sessions:
        return given
    matches = [s for s in sessions if s.startswith(given)] if len(given) >= 4 else []
    if len(matches) == 1:
        return matches[0]
    if not matches:
        raise UsageError(f"no session {given!r} in this host's memory")
    raise UsageError(
        f"{given!r} names {counted(len(matches), 'session')}", hint="give more of the id"
    )


@dataclass(frozen=True, slots=True)
class CurationStatus:
    """One project memory's review on this host, for `funes status`."""

    memory: str
    project: str
    included: int
    excluded: int
    pending: int  # the project's sessions not reviewed yet


def curation_status(rt: Runtime) -> list[CurationStatus]:
    """Every project memory curated on this host (never raises: a broken one is skipped)."""
    out: list[CurationStatus] = []
    for curation in all_curations(rt.paths).values():
        try:
            ref = bound_ref(curation.memory, rt)
            outcome = review(rt, ref, curation.project, cwd=Path("/"))
        except Exception:  # a damaged file or memory costs its line only
            continue
        out.append(
            CurationStatus(
                curation.memory,
                curation.project,
                outcome.count("include"),
                outcome.count("exclude"),
                len(outcome.pending),
            )
        )
    return out
