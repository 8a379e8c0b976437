"""`funes push <remote>`: publish the local memory's new chunks to a Hub dataset or a directory."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from funes.errors import NoIndex, RemoteOffline
from funes.memory import (
    MemoryKind,
    MemoryRef,
    PublishQueue,
    PublishState,
    Runtime,
    as_push_target,
    load_curation,
    remote_for,
)
from funes.paths import ensure_private_dir
from funes.plurals import counted, plural
from funes.redact import Scanner, default_scanner, gate_scanner

if TYPE_CHECKING:  # loaded where used: a verb imports only what it runs
    from funes.remote import PushReport


def receipts_dir(rt: Runtime) -> Path:
    """Where this host keeps its push receipts (one SQLite file per remote)."""
    return rt.paths.data / "pushed"


@dataclass(frozen=True, slots=True)
class PushRequest:
    create: bool = False  # create the remote when missing (private unless `private` is False)
    private: bool = True
    assume_yes: bool = False  # skip the wrong-memory question


def run_push(
    rt: Runtime,
    target: MemoryRef,
    request: PushRequest,
    *,
    confirm: Callable[[str], bool] | None = None,
    scanner: Scanner | None = None,
) -> PushReport:
    """Push the local memory to `target` (see funes.remote.push for the protocol).

    `confirm` asks the person at the terminal (None: nobody to ask, so the wrong-memory
    guard refuses unless `assume_yes`). A project memory (one `funes curate` reviewed here)
    receives only the sessions marked include. Raises NoIndex when there is no local memory,
    UsageError for a target that is not a remote, RemoteError subclasses, PushRefused.
    """
    from funes.remote import PushOptions, forget_check, push

    ref = as_push_target(target)
    remote = remote_for(ref)
    if rt.offline and remote.networked:
        raise RemoteOffline(
            f"offline (HF_HUB_OFFLINE / --offline): cannot push to {remote.label}",
            hint="push again when online",
        )
    if not rt.paths.memory_db.exists():
        raise NoIndex("no memory yet: nothing to push", hint="run `funes index` first")
    recall_name = ref.repo if ref.kind is MemoryKind.REMOTE and ref.repo else str(ref.path)
    queue = PublishQueue(rt.paths)
    generation = queue.load(remote.key, ref.label).requested  # requests this push serves
    project = load_curation(rt.paths, remote.key)  # a project memory: included sessions only
    report = push(
        rt.paths.memory_db,
        remote,
        scanner=scanner or gate_scanner(),
        rescan=default_scanner(),
        receipts=ensure_private_dir(receipts_dir(rt)),
        staging=rt.paths.staging,
        options=PushOptions(
            create=request.create,
            private=request.private,
            assume_yes=request.assume_yes,
            confirm=confirm,
            host=rt.host,
            recall_name=recall_name,
            sessions=project.included if project is not None else None,
        ),
    )
    if not report.up_to_date:
        forget_check(rt.paths.remote_cache, remote)
    if project is not None and report.left_out:
        report.notes.append(left_out_note(rt, ref, project.project, report))
    queue.update(remote.key, ref.label, lambda s: record_landed(s, generation, report))
    return report


def left_out_note(rt: Runtime, ref: MemoryRef, project: str, report: PushReport) -> str:
    """What a push to a project memory did not send, and how to send it."""
    from funes.commands.curate import review

    note = (
        f"{ref.label} is the project memory of {project}: {counted(report.left_out, 'chunk')} in "
        f"{counted(report.left_out_sessions, 'session')} not included "
        f"{plural(report.left_out, 'was', 'were')} not sent"
    )
    try:
        waiting = len(review(rt, ref, project, cwd=Path("/")).pending)
    except Exception:  # a damaged review file or memory only costs the count
        waiting = 0
    if waiting:
        note += (
            f" ({counted(waiting, 'session')} of {project} {plural(waiting, 'waits', 'wait')} "
            "for review)"
        )
    return note + f"; include sessions with `funes curate {ref.label} --include <session>`"


def record_landed(state: PublishState, generation: int, report: PushReport) -> None:
    """A push landed (or found nothing to send): it serves the publish requests made before it
    started, clears failures and a parked state, and is the last successful push."""
    state.served = max(state.served, generation)
    state.attempts, state.next_try_at, state.last_error = 0, 0.0, None
    state.parked = state.fix = state.parked_at = None
    state.last_ok_at = time.time()
    state.last_ok_commit = report.commit
    state.last_ok_pushed = report.pushed
    state.last_ok_held_back = report.held_back
