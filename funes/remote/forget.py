"""`funes forget --remote`: one new commit that deletes forgotten sessions' rows from a remote.

    classify the remote (missing / offline / unauthorized → refuse, nothing changes)
    loop (≤ MAX_ATTEMPTS):
        head → snapshot → the chunk ids the remote holds of those sessions (none: nothing to do)
        publish(snapshot, delete the rows, compact, drop older versions, refresh manifest + card)
            HeadMoved → another writer landed first: redo on the new head
    drop the deleted ids from this host's receipt, and every local cache of the remote

After the commit no file of the remote's current revision holds the rows (the fragments that
held them are rewritten, older dataset versions removed: see lance_export.delete_sessions).
A Hub repository keeps its earlier commits in its git history; a directory keeps nothing.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from funes.errors import HeadMoved, RemoteError, RemoteMissing, RemoteOffline, RemoteUnauthorized
from funes.plurals import counted
from funes.remote import lance_export
from funes.remote.base import Remote, RemoteState, Snapshot, nothing_done
from funes.remote.card import PushFacts, write_sidecars
from funes.remote.push import MAX_ATTEMPTS, receipt_path
from funes.remote.read import drop_cache
from funes.staging import staging_folder
from funes.store import receipt_forget


@dataclass(slots=True)
class RemoteForgetReport:
    """What one remote deletion did. Counts and ids only."""

    remote: str
    commit: str | None = None  # the new commit (None: nothing to delete)
    rows_deleted: int = 0
    deleted_ids: list[str] = field(default_factory=list)
    remote_chunks: int = 0  # rows left there
    attempts: int = 0


def _now() -> str:
    return dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _ready(remote: Remote) -> bool:
    """True when the remote holds a dataset; raises when it cannot be changed at all."""
    remote.require_write_access()
    state = remote.state()
    if state is RemoteState.OFFLINE:
        raise RemoteOffline(
            nothing_done(remote, "nothing was deleted there"), hint="retry when online"
        )
    if state is RemoteState.UNAUTHORIZED:
        raise RemoteUnauthorized(f"{remote.label} refused these credentials: nothing was deleted")
    if state is RemoteState.MISSING:
        raise RemoteMissing(f"{remote.label} {remote.missing}")
    return state is RemoteState.READY


def forget_on_remote(
    remote: Remote,
    session_ids: Sequence[str],
    *,
    receipts: Path,
    cache_root: Path,
    staging: Path,
    host: str | None = None,
    recall_name: str | None = None,
) -> RemoteForgetReport:
    """Delete every row of `session_ids` from `remote` in one commit (module docstring).

    `staging`: the private folder under which it stages the commit (Paths.staging; see
    funes.staging). Raises RemoteMissing / RemoteOffline / RemoteUnauthorized /
    RemoteError.
    """
    report = RemoteForgetReport(remote.label)
    if not session_ids or not _ready(remote):
        return report
    wanted = sorted(set(session_ids))
    for attempt in range(1, MAX_ATTEMPTS + 1):
        report.attempts = attempt
        snap = remote.snapshot(remote.head())
        if not snap.has_dataset:
            return report
        ids = lance_export.ids_of_sessions(snap.dataset, wanted, version=snap.version)
        if not ids:
            return report
        built: dict[str, int] = {}

        def build(root: Path, snap: Snapshot = snap, built: dict[str, int] = built) -> None:
            table = root / lance_export.TABLE
            built["deleted"] = lance_export.delete_sessions(table, wanted)
            found = lance_export.info(table)
            built["rows"] = found.rows
            if found.model_id is not None:
                facts = PushFacts(
                    remote.label, recall_name or remote.label, found.model_id, found.dim,
                    found.rows, _now(), host,
                )  # fmt: skip
                write_sidecars(root, facts)

        try:
            with staging_folder(staging, "forget-") as scratch:
                commit = remote.publish(
                    snap,
                    build,
                    message=f"funes forget: -{counted(len(ids), 'chunk')} of forgotten sessions",
                    scratch=scratch,
                )
        except HeadMoved:
            continue
        report.commit, report.deleted_ids = commit, ids
        report.rows_deleted = built.get("deleted", 0)
        report.remote_chunks = built.get("rows", 0)
        receipt = receipt_path(receipts, remote)
        if receipt.exists():
            receipt_forget(receipt, ids, commit=commit, checked_at=_now())
        drop_cache(cache_root, remote)
        return report
    raise RemoteError(
        f"{remote.label} kept moving: gave up after {MAX_ATTEMPTS} attempts (nothing was deleted)",
        hint="retry in a moment",
    )
