"""`funes forget`: remove sessions from the local memory for good, and from remotes if asked.

Planned first, then done: `plan_forget` resolves what would go (sessions named by id or by a
unique prefix, every stored session a `--before` / `--project` rule catches, which remotes
this host pushed their chunks to) without writing anything, so the CLI can ask; `run_forget`
then deletes under the writer lock, records the tombstones (a rule too: later sessions it
catches are never stored), and, for each `--remote`, makes one commit there that deletes the
rows of every forgotten session (funes.remote.forget). A remote is never changed unless
named; what remote copies remain is remembered and reported by `funes status`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from funes.commands.push import receipts_dir
from funes.commands.scope import parse_time, project_scope, resolve_session
from funes.errors import NoIndex, RemoteOffline, UsageError
from funes.memory import (
    MemoryRef,
    Runtime,
    as_push_target,
    open_for_write,
    parse_memory,
    remote_for,
)
from funes.store import ForgetRule, Store, receipt_holds, receipt_remote

if TYPE_CHECKING:  # loaded where used: a verb imports only what it runs
    from funes.remote import Remote, RemoteForgetReport

LOCK_WAIT_S = 30.0  # how long forget waits for a hook worker or an index run to let go


@dataclass(frozen=True, slots=True)
class ForgetRequest:
    sessions: tuple[str, ...] = ()  # session ids, or prefixes naming one session each
    before: str | None = None  # sessions started before this time (funes.commands.scope)
    project: str | None = None  # sessions run in this project
    remotes: tuple[str, ...] = ()  # --remote: delete the forgotten sessions there too


@dataclass(slots=True)
class ForgetPlan:
    """What `run_forget` will do (nothing written yet)."""

    memory: MemoryRef
    sessions: list[str]  # full ids of the stored sessions to forget
    chunks: int  # their chunks in the local memory
    rule: ForgetRule | None  # kept for later writes (--before / --project)
    copies: list[tuple[str, str, int]]  # (session id, remote label, chunks there) per receipts
    remotes: list[Remote]  # the remotes to delete on (--remote)
    already: list[str] = field(default_factory=list)  # named sessions forgotten before

    @property
    def empty(self) -> bool:
        return not (self.sessions or self.rule or self.remotes)


@dataclass(slots=True)
class ForgetOutcome:
    plan: ForgetPlan
    chunks_deleted: int
    remote_reports: list[RemoteForgetReport]
    copies_left: dict[str, tuple[int, int]]  # remote → (forgotten sessions there, their chunks)


def _local(memory: MemoryRef) -> Path:
    if memory.shared or memory.path is None:
        raise UsageError(
            f"{memory.label} is a remote memory",
            hint="forget works on a local memory; --remote TARGET deletes there too",
        )
    if not memory.path.exists():
        raise NoIndex(f"no memory at {memory.path}: nothing to forget")
    return memory.path


def plan_forget(rt: Runtime, memory: MemoryRef, request: ForgetRequest) -> ForgetPlan:
    """Resolve the request against the memory (read-only). Raises UsageError for a request
    that names nothing, an unknown or ambiguous session, a bad time or project, a remote
    memory, or a --remote that is not a remote; NoIndex when there is no memory."""
    if not (request.sessions or request.before or request.project or request.remotes):
        raise UsageError(
            "forget needs a session, --before or --project (or --remote)",
            hint="funes forget <session> | --before 2026-01-01 | --project PATH",
        )
    path = _local(memory)
    remotes = [remote_for(as_push_target(parse_memory(r, rt))) for r in request.remotes]
    rule = None
    if request.before or request.project:
        rule = ForgetRule(
            parse_time(request.before) if request.before else None,
            project_scope(request.project) if request.project else None,
        )
    store = Store.open(path, readonly=True)
    try:
        forgotten, _ = store.forgotten()
        already = [s for s in request.sessions if s.strip() in forgotten]
        named = [resolve_session(store, s) for s in request.sessions if s not in already]
        caught = store.sessions_matching(rule) if rule is not None else []
        # a session's subagents go with it (their transcripts are its own work)
        sessions = store.with_subagents(sorted(set(named) | set(caught)))
        ids = store.session_chunk_ids(sessions)
    finally:
        store.close()
    return ForgetPlan(
        memory,
        sessions,
        sum(len(v) for v in ids.values()),
        rule,
        _copies(rt, ids),
        remotes,
        already,
    )


def _copies(rt: Runtime, ids: dict[str, list[str]]) -> list[tuple[str, str, int]]:
    """(session, remote label, chunks) for each session chunk this host's receipts place on a
    remote (no network: what this host pushed and saw there)."""
    folder = receipts_dir(rt)
    out: list[tuple[str, str, int]] = []
    if not folder.is_dir() or not ids:
        return out
    for receipt in sorted(folder.glob("*.db")):
        label = receipt_remote(receipt)
        if label is None:
            continue
        for session, chunk_ids in ids.items():
            held = receipt_holds(receipt, chunk_ids)
            if held:
                out.append((session, label, held))
    return out


def run_forget(rt: Runtime, plan: ForgetPlan) -> ForgetOutcome:
    """Do what `plan` says (module docstring). Raises StoreLocked when the memory stays locked
    for LOCK_WAIT_S, and the remote's errors (nothing is deleted there then; the local part
    is already done and the copies left are remembered)."""
    from funes.remote import forget_on_remote

    store = open_for_write(rt, plan.memory)
    try:
        with store.writing(wait_s=LOCK_WAIT_S):
            deleted = (
                store.forget(plan.sessions, rule=plan.rule) if plan.sessions or plan.rule else 0
            )
            if plan.copies:
                store.note_forgotten_copies(plan.copies)
        forgotten, _ = store.forgotten()
        reports: list[RemoteForgetReport] = []
        for remote in plan.remotes:
            if rt.offline and remote.networked:
                raise RemoteOffline(
                    f"offline (HF_HUB_OFFLINE / --offline): cannot delete on {remote.label}",
                    hint="run `funes forget --remote …` again when online",
                )
            report = forget_on_remote(
                remote,
                forgotten,
                receipts=receipts_dir(rt),
                cache_root=rt.paths.remote_cache,
                staging=rt.paths.staging,
                host=rt.host,
            )
            store.drop_forgotten_copies(remote.label)
            reports.append(report)
        return ForgetOutcome(plan, deleted, reports, store.forgotten_copies())
    finally:
        store.close()
