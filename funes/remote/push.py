"""`push`: publish the memory's new chunks to a remote, one commit per push, never losing data.

    classify the remote (missing → refuse unless asked to create; offline/unauthorized → refuse)
    the memory's `chunk_log` mark; the sessions logged since the last receipt's mark (all
        sessions when the receipt has none, is of another memory file, or the log was trimmed)
    loop (≤ MAX_ATTEMPTS):
        head → snapshot → the remote's ids into the outbox (a remote to create: none)
        the remote's text digests of those sessions → stale rows: another text than the
            memory's under the same id, or a chunk the memory deleted since
        wrong-memory guard (until confirmed)
        first time only: the secrets gate over every pending block
        nothing cleared → PushRefused when the gate held back a block the last push did not,
                          or the remote is still to be created (this push had something new
                          to send, and all of it was refused: nothing is created)
        a remote to create → create it now, and redo on its head
        nothing cleared left and nothing stale → up to date (blocks held back before stay
                          local, reported)
        publish(snapshot, delete the stale rows (compacted, older versions removed), append
                cleared rows — new chunks and the new text of stale ones — + indexes +
                manifest + card)
            HeadMoved → another writer landed first: redo on the new head
    write the receipt (the remote's ids + what this push published + what the gate held back
        + the mark)

A stale row whose new text the gate holds back (or that has no vector yet, or belongs to a
session a project memory no longer includes) is deleted and not replaced: the remote never
keeps text this memory no longer holds. A push killed after the deletion and before the
append is completed by the next, which finds those chunks missing and sends them.

The gate runs two independent detector sets (funes.redact.gate): `scanner` (the gate's
own, `gate_scanner()`) over every pending block and `rescan` (the index-time set,
`default_scanner()`) over blocks stored under older rules. Fails closed: a scanner error, an
unreadable remote dataset or a model mismatch publish nothing. The memory is read without its writer lock (indexing may go on meanwhile; chunks
written after the gate ran wait for the next push).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from funes.chunks import EMBED_INPUT
from funes.errors import (
    HeadMoved,
    PushRefused,
    RemoteError,
    RemoteMissing,
    RemoteOffline,
    RemoteUnauthorized,
    SecretScanFailed,
)
from funes.paths import ensure_private_dir
from funes.plurals import counted
from funes.redact import GateRow, Scanner, default_scanner, gate
from funes.remote import lance_export
from funes.remote.arenas import cap_malloc_arenas
from funes.remote.base import Remote, RemoteState, Snapshot, nothing_done
from funes.remote.card import PushFacts, write_sidecars
from funes.staging import staging_folder
from funes.store import Outbox, receipt_meta

MAX_ATTEMPTS = 10


@dataclass(frozen=True, slots=True)
class PushOptions:
    create: bool = False  # create the remote when it is missing
    private: bool = True  # visibility of a created remote
    assume_yes: bool = False  # skip the wrong-memory question
    confirm: Callable[[str], bool] | None = None  # asks the user; None: no one to ask
    host: str | None = None
    recall_name: str | None = None  # what the card tells readers to pass to --memory
    # a project memory: only the chunks of these sessions are sent (None: every session)
    sessions: frozenset[str] | None = None


@dataclass(slots=True)
class PushReport:
    """What a push did. Counts only; never chunk text."""

    remote: str
    commit: str | None = None
    pushed: int = 0
    held_back: int = 0
    dirty_blocks: int = 0
    rescanned_blocks: int = 0  # blocks stored under older rules, rescanned with current ones
    # of the held-back chunks, those `funes scrub` makes publishable (their blocks' secrets are
    # what today's index-time rules redact: GateResult.redactable_ids)
    redactable: int = 0
    rules: dict[str, int] = field(default_factory=dict)
    unembedded: int = 0  # chunks without a vector (not sendable yet)
    # rows of the remote this memory rewrote (or deleted) since they were pushed: replaced by
    # their new text (counted in `pushed` too), and deleted without a replacement (deleted
    # here, new text held back by the gate, no vector yet, or session no longer included)
    replaced: int = 0
    removed: int = 0
    created: bool = False
    up_to_date: bool = False
    attempts: int = 0
    remote_chunks: int = 0  # rows in the remote dataset after the push
    # a project memory: chunks (with a vector, not on the remote) of sessions not included,
    # which this push did not send, and how many sessions hold them
    left_out: int = 0
    left_out_sessions: int = 0
    index_actions: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # warnings for the user (no text of chunks)

    @property
    def fix(self) -> str | None:
        """What publishes the chunks held back (None: none were). `funes scrub` only when it
        makes every one of them publishable; otherwise the gate's own detectors found a secret
        that stays until the transcript no longer holds it and is re-read."""
        if not self.held_back:
            return None
        if self.redactable >= self.held_back:
            return "funes scrub"
        return "take the secret out of the transcript, then funes index --yes"

    @property
    def next_step(self) -> str | None:
        """What publishes the chunks held back, as every message about them words it:
        `<fix>, then push again` (None: none were held back)."""
        return f"{self.fix}, then push again" if self.fix else None


def _message(added: int, replaced: int, removed: int) -> str:
    """The commit message: `funes push: +N chunks[, N replaced][, -N removed]`."""
    parts = [f"+{counted(added, 'chunk')}"]
    if replaced:
        parts.append(f"{replaced} replaced")
    if removed:
        parts.append(f"-{removed} removed")
    return "funes push: " + ", ".join(parts)


def _now() -> str:
    return dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def receipt_path(receipts: Path, remote: Remote) -> Path:
    return receipts / f"{remote.key}.db"


def _prepare(remote: Remote, options: PushOptions) -> bool:
    """Check that a push to `remote` can start; True when the remote is missing and is to be
    created (`--create`), which the push does only once the gate cleared something to send.
    Raises RemoteUnauthorized, RemoteOffline, RemoteMissing."""
    remote.require_write_access()
    state = remote.state()
    if state is RemoteState.OFFLINE:
        raise RemoteOffline(nothing_done(remote, "nothing was pushed"), hint="retry when online")
    if state is RemoteState.UNAUTHORIZED:
        raise RemoteUnauthorized(f"{remote.label} refused these credentials: nothing was pushed")
    if state is RemoteState.MISSING:
        if not options.create:
            raise RemoteMissing(
                f"{remote.label} {remote.missing}; funes does not create remotes unless asked",
                hint="check the name, or pass --create to create it (private unless --public)",
            )
        return True
    return False


def _confirm_target(box: Outbox, snap: Snapshot, remote: Remote, options: PushOptions) -> bool:
    """The wrong-memory guard: a remote that already holds chunks, none of them ours, is
    pushed to only when the user says so (an empty remote, just created or never pushed to, is
    not a wrong memory). True once confirmed (no need to ask again); raises RemoteError when
    refused or nobody can be asked."""
    if options.assume_yes:
        return True
    if not snap.has_dataset:
        return False
    counts = box.counts()
    if counts.shared or not counts.pending:
        return False
    question = (
        f"{remote.label} shares no chunks with this memory (a first push, or the "
        f"wrong remote). Push {counted(counts.pending, 'chunk')} to it?"
    )
    if options.confirm is None or not options.confirm(question):
        raise RemoteError(
            f"refusing to push {counted(counts.pending, 'chunk')} to {remote.label}: it shares "
            "no chunks with this memory",
            hint="check the remote, then re-run with --yes",
        )
    return True


def _load_remote_ids(box: Outbox, snap: Snapshot, label: str, report: PushReport) -> None:
    box.reset_remote()
    if not snap.has_dataset:
        return
    found = lance_export.info(snap.dataset, version=snap.version)
    assert box.model_id is not None
    lance_export.check_compat(found, box.model_id, box.dim, where=label)
    if found.embedding_input != box.embedding_input and not report.notes:
        if box.embedding_input == EMBED_INPUT:  # this memory is current: the remote is older
            advice = (
                "a push sends only new chunks, so those already there keep their "
                f"`{found.embedding_input}` vectors"
            )
        else:
            advice = f"`funes index --yes` re-embeds this memory with `{EMBED_INPUT}`"
        report.notes.append(
            f"{label} was built with the `{found.embedding_input}` embedding recipe and this "
            f"memory embeds with `{box.embedding_input}`: recall works on both, but ranks their "
            f"chunks less evenly (a remote fed only by memories of one recipe ranks best; {advice})"
        )
    for ids in lance_export.iter_ids(snap.dataset, version=snap.version):
        box.add_remote(ids)


def _load_stale(box: Outbox, snap: Snapshot, sessions: list[str] | None) -> int:
    """Compare the remote's rows of `sessions` (None: all) with the memory; returns how many
    are stale (Outbox.find_stale)."""
    box.reset_stale()
    if not snap.has_dataset or sessions == []:
        return 0
    for rows in lance_export.iter_texts(snap.dataset, version=snap.version, session_ids=sessions):
        box.add_remote_texts(rows)
    return box.find_stale()


def _since_last_push(box: Outbox, receipt: Path) -> list[str] | None:
    """The sessions to compare with the remote: those `chunk_log` names after the last
    receipt's mark; None (all) when it has no mark, is of another memory file, or the log no
    longer reaches back to it."""
    previous = receipt_meta(receipt)
    mark = previous.get("log_mark", "")
    if not mark.isdigit() or previous.get("memory_id") != box.memory_id:
        return None
    return box.changed_sessions(int(mark))


def _run_gate(box: Outbox, scanner: Scanner, rescan: Scanner, report: PushReport) -> None:
    for batch in box.pending():
        try:
            rows = (
                GateRow(
                    r.id, r.session_id, r.turn_id, r.block_idx, r.split_idx, r.text,
                    r.redaction_version,
                )
                for r in batch
            )  # fmt: skip
            result = gate(rows, scanner, rescan=rescan)
        except SecretScanFailed as exc:  # fail closed: nothing leaves the machine
            raise PushRefused(
                f"{exc.message}: nothing was published",
                hint="this is a bug in funes' scanner; report it with `funes --debug push …`",
            ) from exc
        box.clear(result.publishable_ids)
        box.hold(result.held_back_ids)
        report.held_back += len(result.held_back_ids)
        report.redactable += len(result.redactable_ids)
        report.dirty_blocks += result.blocks_held_back
        report.rescanned_blocks += result.blocks_rescanned
        for rule, n in result.findings_by_rule.items():
            report.rules[rule] = report.rules.get(rule, 0) + n


def push(
    memory: Path,
    remote: Remote,
    *,
    scanner: Scanner,
    receipts: Path,
    staging: Path,
    options: PushOptions,
    rescan: Scanner | None = None,
) -> PushReport:
    """Publish the chunks of the memory at `memory` that `remote` lacks (module docstring).

    `receipts` is this host's receipts folder; `staging` the private folder under which the
    push stages its work (Paths.staging: a subfolder of its own, removed at the end, and the
    subfolders of killed pushes swept first; funes.staging).

    Raises RemoteMissing / RemoteOffline / RemoteUnauthorized / IncompatibleStore /
    RemoteError, and PushRefused (exit 2) when the gate held back every pending chunk and
    some of them for the first time (the last push's receipt names those it held back: a
    push that finds only those is up to date, `held_back` counting them).
    """
    report = PushReport(remote.label)
    rescan = rescan if rescan is not None else default_scanner()
    cap_malloc_arenas()  # before Lance's threads make theirs: bounds the peak (funes.remote.arenas)
    lance_export.require()  # before the remote is touched: a missing extra leaves no trace
    to_create = _prepare(remote, options)
    ensure_private_dir(receipts)
    with (
        staging_folder(staging, "push-") as scratch,
        Outbox(memory, scratch / "outbox.db") as box,
    ):
        if options.sessions is not None:
            box.only_sessions(sorted(options.sessions))
        box.held_before(receipt_path(receipts, remote))
        # before anything is compared: a block rewritten from now on is logged after it
        log_mark = box.log_mark()
        since = _since_last_push(box, receipt_path(receipts, remote))
        if box.model_id is None or not box.vectors:
            raise RemoteError(
                "this memory has no vectors to share",
                hint="run `funes index` with vector search available (sqlite-vec), then push",
            )
        gated = confirmed = False
        for attempt in range(1, MAX_ATTEMPTS + 1):
            report.attempts = attempt
            # a remote still to be created holds nothing (version 0: no dataset)
            snap = Snapshot("", scratch, version=0) if to_create else remote.snapshot(remote.head())
            _load_remote_ids(box, snap, remote.label, report)
            stale = _load_stale(box, snap, since)
            meta = {
                "remote": remote.label,
                "commit": snap.commit,
                "checked_at": _now(),
                "log_mark": str(log_mark),
                "memory_id": box.memory_id or "",
            }
            confirmed = confirmed or _confirm_target(box, snap, remote, options)
            if not gated:
                counts = box.counts()
                report.unembedded = counts.unembedded
                report.left_out, report.left_out_sessions = box.left_out()
                if counts.pending == 0 and not stale and not to_create:
                    box.write_receipt(receipt_path(receipts, remote), published=False, meta=meta)
                    report.up_to_date, report.commit = True, snap.commit
                    return report
                _run_gate(box, scanner, rescan, report)
                gated = True
                if (
                    report.held_back
                    and box.cleared_total() == 0
                    and not stale
                    and (box.newly_held() or to_create)
                ):
                    if not to_create:  # recorded: the next push knows these blocks, up to date
                        box.write_receipt(
                            receipt_path(receipts, remote), published=False, meta=meta
                        )
                    raise PushRefused(
                        f"every pending chunk ({report.held_back} in "
                        f"{counted(report.dirty_blocks, 'block')}) holds "
                        "a secret: nothing was published"
                        + (f" and {remote.label} was not created" if to_create else ""),
                        hint=f"the chunks stay local; to publish them: {report.next_step}",
                        fix=report.fix,
                    )
            if to_create:  # the gate cleared something to send (or there is nothing to gate)
                remote.create(private=options.private)
                report.created, to_create = True, False
                continue  # redo on the new remote's head
            to_send = box.cleared_pending()
            if to_send == 0 and not stale:  # another writer published them, or only old
                # held-back blocks are left
                box.write_receipt(receipt_path(receipts, remote), published=False, meta=meta)
                report.up_to_date, report.commit = True, snap.commit
                return report
            built: dict[str, object] = {}
            stale_ids = box.stale_ids()
            replaced = box.stale_replaced()

            def build(
                root: Path,
                snap: Snapshot = snap,
                built: dict[str, object] = built,
                stale_ids: list[str] = stale_ids,
            ) -> None:
                table = root / lance_export.TABLE
                assert box.model_id is not None
                actions: list[str] = []
                if stale_ids:  # before the append: their replacements reuse their ids
                    built["deleted"] = lance_export.delete_ids(table, stale_ids)
                built["rows"] = lance_export.write(
                    table,
                    box.to_publish(),
                    model_id=box.model_id,
                    dim=box.dim,
                    embedding_input=box.embedding_input,
                    actions=actions,
                )
                built["actions"] = actions
                total = lance_export.info(table).rows
                built["total"] = total
                write_sidecars(
                    root,
                    PushFacts(
                        remote.label,
                        options.recall_name or remote.label,
                        box.model_id,
                        box.dim,
                        total,
                        _now(),
                        options.host,
                    ),
                )

            try:
                commit = remote.publish(
                    snap,
                    build,
                    message=_message(to_send - replaced, replaced, len(stale_ids) - replaced),
                    scratch=scratch,
                )
            except HeadMoved:
                continue
            meta["commit"] = commit
            box.write_receipt(receipt_path(receipts, remote), published=True, meta=meta)
            report.commit = commit
            report.replaced, report.removed = replaced, len(stale_ids) - replaced
            report.pushed = int(built.get("rows", 0))  # type: ignore[call-overload]
            report.remote_chunks = int(built.get("total", 0))  # type: ignore[call-overload]
            report.index_actions = list(built.get("actions", []))  # type: ignore[call-overload]
            return report
    raise RemoteError(
        f"{remote.label} kept moving: gave up after {MAX_ATTEMPTS} attempts (nothing was lost)",
        hint="retry in a moment",
    )
