"""`funes push <remote>`: publish the local memory's new chunks to a Hub dataset or a directory."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from funes.errors import NoIndex, RemoteOffline
from funes.memory import MemoryKind, MemoryRef, Runtime, as_push_target, remote_for
from funes.paths import ensure_private_dir
from funes.redact import Scanner, default_scanner

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
    guard refuses unless `assume_yes`). Raises NoIndex when there is no local memory,
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
    report = push(
        rt.paths.memory_db,
        remote,
        scanner=scanner or default_scanner(),
        receipts=ensure_private_dir(receipts_dir(rt)),
        options=PushOptions(
            create=request.create,
            private=request.private,
            assume_yes=request.assume_yes,
            confirm=confirm,
            host=rt.host,
            recall_name=recall_name,
        ),
    )
    if not report.up_to_date:
        forget_check(rt.paths.remote_cache, remote)
    return report
