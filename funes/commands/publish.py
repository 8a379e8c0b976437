"""Publishing a bound memory at session boundaries, never in the agent's path.

The hook of an agent bound to a shared memory (`funes add <agent> org/repo`, or a shared
directory) drops its session-boundary events into the spool like any other (its record's
`publish_events`: Claude Code SessionEnd, Codex SessionStart, Hermes on_session_finalize, pi
session_shutdown, and the agents' session starts as a catch-up). The spool worker turns each
one into a publish *request* for the bound remote (`request_publishing`, once the entry's
chunks are committed: a push that started earlier cannot serve it) and, once the spool is drained and outside the worker lock, pushes every remote with a
request due (`publish_due`):

    push (funes.commands.push: gate, compare-and-swap commit, receipt; nothing pushed twice)
    landed             → the requests made before it started are served
    failed, retryable  → wait backoff_s[attempt] (PublishParams) and try again, in this worker
    failed, final      → parked with the reason and the command that fixes it

Retryable: the Hub or directory unreachable (or answering 5xx), a compare-and-swap race lost
MAX_ATTEMPTS times, any unexpected error. Final at once (no retry can fix them): a refused or
missing token, a missing remote, a remote of another embedding model, every pending chunk held
back by the secrets gate, some for the first time (a later push that finds only blocks held
back before is up to date: it lands). A parked push is retried by the next request (the next
session boundary) or by a manual `funes push`. One push at a time per remote on this host (a
lock file; a worker that finds it taken leaves the request to the holder, which re-reads the
state after each push); other hosts push independently (compare-and-swap on the remote).
"""

from __future__ import annotations

import functools
import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from funes.commands.push import PushRequest, run_push
from funes.errors import (
    FunesError,
    IncompatibleStore,
    NoIndex,
    PushRefused,
    RemoteMissing,
    RemoteUnauthorized,
    UsageError,
)
from funes.memory import (
    MemoryKind,
    MemoryRef,
    PublishQueue,
    PublishState,
    Runtime,
    bound_ref,
    load_bindings,
    remote_for,
)
from funes.redact import Scanner
from funes.settings import PublishParams
from funes.traces import AGENTS

if TYPE_CHECKING:  # loaded where used: a verb imports only what it runs
    from funes.ingest import SpoolEntry

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class PublishOutcome:
    """What one worker did for one remote."""

    remote: str
    pushes: int = 0  # pushes that landed (or found the remote up to date)
    failures: int = 0  # failed attempts
    parked: str | None = None  # why it stopped retrying, when it did


def push_name(ref: MemoryRef) -> str:
    """How a command line names the remote (`org/repo`, or the directory)."""
    if ref.kind is MemoryKind.REMOTE and ref.repo:
        return ref.repo
    return str(ref.path) if ref.path is not None else ref.label


def request_publishing(rt: Runtime, entries: Sequence[SpoolEntry], *, now: float) -> int:
    """Count a publish request for each session-boundary entry of an agent bound to a shared
    memory. Returns the requests made. Never raises for a binding it cannot use (logged)."""
    bindings = load_bindings(rt.paths)
    if not bindings:
        return 0
    queue = PublishQueue(rt.paths)
    made = 0
    for entry in entries:
        harness = entry.harness
        agent = AGENTS.get(harness) if harness is not None else None
        bound = bindings.get(harness.value) if harness is not None else None
        if agent is None or bound is None or entry.event not in agent.publish_events:
            continue
        try:
            ref = bound_ref(bound.memory, rt)
        except UsageError:
            log.warning("agent %s is bound to an unreadable memory name", harness)
            continue
        if not ref.shared:
            continue
        queue.request(remote_for(ref).key, ref.label, now)
        made += 1
    return made


def verdict(exc: BaseException, ref: MemoryRef) -> tuple[bool, str, str]:
    """(retry?, the reason in one line, the command that fixes it) for a failed push."""
    name = push_name(ref)
    reason = exc.message if isinstance(exc, FunesError) else f"{type(exc).__name__}: {exc}"
    reason = " ".join(reason.split())
    again = f"funes push {name}"
    if isinstance(exc, RemoteUnauthorized):
        return False, reason, f"hf auth login (a token that can write to {name}), then {again}"
    if isinstance(exc, RemoteMissing):
        return False, reason, f"{again} --create  (or bind another memory with funes add)"
    if isinstance(exc, PushRefused):  # held back for secrets: what publishes them, then push
        return False, reason, f"{exc.fix}, then {again}" if exc.fix else again
    if isinstance(exc, IncompatibleStore):
        return False, reason, "bind a memory built with this funes' embedding model (funes add)"
    return True, reason, again


def publish_due(
    rt: Runtime,
    *,
    params: PublishParams,
    scanner: Scanner | None = None,
    sleep: Callable[[float], None] = time.sleep,
    clock: Callable[[], float] = time.time,
) -> list[PublishOutcome]:
    """Push every remote with a request due (see the module docstring). Never raises."""
    queue = PublishQueue(rt.paths)
    out: list[PublishOutcome] = []
    for key, state in queue.all().items():
        if not state.due(clock()):
            continue
        try:
            ref = bound_ref(state.remote, rt)
        except UsageError as exc:
            queue.update(key, state.remote, functools.partial(_park, reason=exc.message))
            continue
        with queue.pushing(key) as held:
            if held:
                out.append(_publish(rt, queue, key, ref, params, scanner, sleep, clock))
    return out


def _publish(
    rt: Runtime,
    queue: PublishQueue,
    key: str,
    ref: MemoryRef,
    params: PublishParams,
    scanner: Scanner | None,
    sleep: Callable[[float], None],
    clock: Callable[[], float],
) -> PublishOutcome:
    pushes = failures = 0
    while True:
        state = queue.load(key, ref.label)
        if not state.due(clock()):
            return PublishOutcome(ref.label, pushes, failures, state.parked)
        try:
            run_push(  # this process holds the remote's push lock (publish_due)
                rt, ref, PushRequest(assume_yes=True), scanner=scanner, lock_wait_s=None
            )
        except NoIndex:
            # nothing indexed on this host yet: nothing to publish
            queue.update(key, ref.label, functools.partial(_served, generation=state.requested))
            return PublishOutcome(ref.label, pushes, failures)
        except Exception as exc:  # every failure is counted, none escapes the worker
            failures += 1
            retry, reason, fix = verdict(exc, ref)
            log.warning("push to %s failed: %s", ref.label, reason)
            failed = functools.partial(
                _failed, reason=reason, fix=fix, retry=retry, params=params, now=clock()
            )
            state = queue.update(key, ref.label, failed)
            if state.parked is not None:
                return PublishOutcome(ref.label, pushes, failures, state.parked)
            sleep(max(0.0, state.next_try_at - clock()))
            continue
        pushes += 1  # run_push recorded it (funes.commands.push.record_landed)


def _served(state: PublishState, generation: int) -> None:
    state.served = max(state.served, generation)
    state.attempts, state.next_try_at, state.last_error = 0, 0.0, None


def _park(state: PublishState, reason: str, fix: str = "funes add <agent> <memory>") -> None:
    state.parked, state.fix, state.parked_at = reason, fix, time.time()


def _failed(
    state: PublishState, reason: str, fix: str, retry: bool, params: PublishParams, now: float
) -> None:
    state.attempts += 1
    state.last_error = reason
    if not retry or state.attempts >= params.max_attempts:
        state.parked, state.fix, state.parked_at = reason, fix, now
        return
    state.next_try_at = now + params.backoff_s[state.attempts - 1]
