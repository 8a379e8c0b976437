"""What `funes status` says about bindings: each agent's memory and how publishing to it stands.

Read from this host's files only (bindings.json, the publish states, the push receipts): no
network. Per bound agent: the memory; for a shared one, the last push that landed (when,
commit, chunks sent and held back), the chunks of the local memory not published yet (from
the receipt, as `funes status` counts them; those the secrets gate holds back apart), and whether a push is waiting, retrying or
parked — with the reason and the command that fixes it.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from funes.commands.push import receipts_dir
from funes.errors import UsageError
from funes.memory import (
    PublishQueue,
    Runtime,
    bound_ref,
    load_bindings,
    load_curation,
    remote_for,
)
from funes.store import receipt_status


@dataclass(frozen=True, slots=True)
class BindingStatus:
    """One agent's binding (see the module docstring). Times are ISO-8601 UTC."""

    agent: str  # harness value
    memory: str  # the bound memory's label
    shared: bool  # published to (a Hub dataset or a shared directory)
    state: str  # local | published | never pushed | waiting | retrying | parked
    last_push_at: str | None = None
    last_push_commit: str | None = None
    last_pushed: int = 0  # chunks the last push sent
    last_held_back: int = 0  # chunks the secrets gate kept local in it
    # local chunks not on the remote that a push sends (None: never pushed), and the
    # sessions they are in
    pending_chunks: int | None = None
    pending_sessions: int | None = None
    held_back_chunks: int = 0  # local chunks not on the remote the secrets gate holds back
    # a project memory: local chunks (and sessions) its review did not include (never pushed)
    left_out_chunks: int = 0
    left_out_sessions: int = 0
    attempts: int = 0  # failed attempts since the last push that landed
    next_try_at: str | None = None
    reason: str | None = None  # the last failure, or why publishing is parked
    fix: str | None = None  # the command that fixes a parked push


def _iso(epoch: float | None) -> str | None:
    if not epoch:
        return None
    return dt.datetime.fromtimestamp(epoch, dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def included(rt: Runtime, key: str) -> frozenset[str] | None:
    """The sessions a push to the remote keyed `key` sends: a project memory's included ones
    (funes curate), None for every session."""
    curation = load_curation(rt.paths, key)
    return curation.included if curation is not None else None


def binding_status(rt: Runtime, *, held: frozenset[str] = frozenset()) -> list[BindingStatus]:
    """Every binding on this host, with its publishing state (never raises). `held`: the
    chunk ids of the local memory the secrets gate holds back (counted apart from those a
    push sends)."""
    out: list[BindingStatus] = []
    queue = PublishQueue(rt.paths)
    for agent, binding in sorted(load_bindings(rt.paths).items()):
        try:
            ref = bound_ref(binding.memory, rt)
        except UsageError:
            out.append(BindingStatus(agent, binding.memory, False, "local"))
            continue
        if not ref.shared:
            out.append(BindingStatus(agent, binding.memory, False, "local"))
            continue
        remote = remote_for(ref)
        st = queue.load(remote.key, ref.label)
        pending = sessions = None
        left = left_sessions = held_back = 0
        from funes.remote import receipt_path

        receipt = receipt_path(receipts_dir(rt), remote)
        if receipt.exists() and rt.paths.memory_db.exists():
            try:
                found = receipt_status(
                    rt.paths.memory_db, receipt, sessions=included(rt, remote.key), held=held
                )
                pending, sessions = found.pending_chunks, found.pending_sessions
                left, left_sessions = found.left_out_chunks, found.left_out_sessions
                held_back = found.held_back_chunks
            except Exception:  # a damaged receipt only costs the count; the next push rewrites it
                pass
        if st.parked is not None:
            state = "parked"
        elif st.wanted and st.attempts:
            state = "retrying"
        elif st.wanted:
            state = "waiting"
        elif st.last_ok_at is None:
            state = "never pushed"
        else:
            state = "published"
        out.append(
            BindingStatus(
                agent,
                ref.label,
                True,
                state,
                last_push_at=_iso(st.last_ok_at),
                last_push_commit=st.last_ok_commit,
                last_pushed=st.last_ok_pushed,
                last_held_back=st.last_ok_held_back,
                pending_chunks=pending,
                pending_sessions=sessions,
                held_back_chunks=held_back,
                left_out_chunks=left,
                left_out_sessions=left_sessions,
                attempts=st.attempts,
                next_try_at=_iso(st.next_try_at) if state == "retrying" else None,
                reason=st.parked or st.last_error,
                fix=st.fix,
            )
        )
    return out
