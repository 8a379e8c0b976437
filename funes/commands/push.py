"""`funes push <remote>`: publish the local memory's new chunks to a Hub dataset or a directory."""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from funes.errors import NoIndex, PushBusy, RemoteOffline
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
    from funes.remote import PushReport, Remote


def receipts_dir(rt: Runtime) -> Path:
    """Where this host keeps its push receipts (one SQLite file per remote)."""
    return rt.paths.data / "pushed"


@dataclass(frozen=True, slots=True)
class PushRequest:
    create: bool = False  # create the remote when missing (private unless `private` is False)
    private: bool = True
    assume_yes: bool = False  # skip the wrong-memory question


# How long a push waits for another push to the same remote on this host (the spool worker
# publishing at a session boundary) before it gives up with PushBusy, in seconds. A push sends
# only what the remote lacks, so the one that waited usually finds little left to send; ten
# minutes covers a first push of a large memory to the Hub on a slow link.
PUSH_LOCK_WAIT_S = 600.0


def run_push(
    rt: Runtime,
    target: MemoryRef,
    request: PushRequest,
    *,
    confirm: Callable[[str], bool] | None = None,
    scanner: Scanner | None = None,
    lock_wait_s: float | None = PUSH_LOCK_WAIT_S,
    on_wait: Callable[[str, float], None] | None = None,
) -> PushReport:
    """Push the local memory to `target` (see funes.remote.push for the protocol).

    One push per remote at a time on a host: this holds the remote's push lock
    (PublishQueue.pushing), waiting up to `lock_wait_s` seconds for another process's push
    (`on_wait(remote label, lock_wait_s)` is told first); None when the caller holds it already (the
    publishing worker). Raises PushBusy when it stays held.

    `confirm` asks the person at the terminal (None: nobody to ask, so the wrong-memory
    guard refuses unless `assume_yes`). A project memory (one `funes curate` reviewed here)
    receives only the sessions marked include. Raises NoIndex when there is no local memory,
    UsageError for a target that is not a remote, RemoteError subclasses, PushRefused.
    """
    ref = as_push_target(target)
    remote = remote_for(ref)
    if rt.offline and remote.networked:
        raise RemoteOffline(
            f"offline (HF_HUB_OFFLINE / --offline): cannot push to {remote.label}",
            hint="push again when online",
        )
    if not rt.paths.memory_db.exists():
        raise NoIndex("no memory yet: nothing to push", hint="run `funes index` first")
    if lock_wait_s is None:
        return _push_locked(rt, ref, remote, request, confirm, scanner)
    told = None if on_wait is None else functools.partial(on_wait, remote.label)
    with PublishQueue(rt.paths).pushing(remote.key, wait_s=lock_wait_s, on_wait=told) as held:
        if not held:
            raise PushBusy(
                f"another push to {remote.label} is still running on this host "
                f"(waited {lock_wait_s:g} s)",
                hint="it sends what this one would; run `funes push` again once it ends "
                "(`funes status` shows the publishing state)",
            )
        return _push_locked(rt, ref, remote, request, confirm, scanner)


def _push_locked(
    rt: Runtime,
    ref: MemoryRef,
    remote: Remote,
    request: PushRequest,
    confirm: Callable[[str], bool] | None,
    scanner: Scanner | None,
) -> PushReport:
    """`run_push` once this host's push lock of `remote` is held."""
    from funes.remote import PushOptions, forget_check, push

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
