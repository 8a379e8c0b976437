"""`funes spool drain` (the worker a hook starts) and `funes spool status`.

The worker holds the spool's worker lock while it drains, claims entries in batches, indexes
what they point at into the memory each names (the local memory unless a path was bound at
install time), and exits once the spool stays empty for `SpoolParams.idle_exit_s`. When the
memory's writer lock stays taken for `store_wait_s` (a long `funes index`), it gives its
entries back and exits: the next hook, `funes index` or `funes watch` drains them.

Session-boundary entries of an agent bound to a shared memory become publish requests once
their chunks are committed; a worker started by a hook (`publish` given) then pushes what is due once the spool
is drained, outside the worker lock (funes.commands.publish).
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from funes.commands.publish import publish_due, request_publishing
from funes.errors import StoreLocked
from funes.inference import embedder_name
from funes.memory import Runtime, open_for_write, parse_memory
from funes.redact import default_scanner
from funes.settings import INDEX, SPOOL, PublishParams, SpoolParams

if TYPE_CHECKING:  # loaded where used: a verb imports only what it runs
    from funes.ingest import (
        AgentBacklog,
        Claimed,
        DrainReport,
        Spool,
    )

log = logging.getLogger(__name__)


def run_drain(
    rt: Runtime,
    *,
    spool_root: Path | None = None,
    wait_lock_s: float = 0.0,
    params: SpoolParams = SPOOL,
    publish: PublishParams | None = None,
) -> DrainReport:
    """Drain the spool until it stays empty (see the module docstring); with `publish`, then
    push the bound memories whose publish requests are due, with those retry settings.

    Never raises for a busy worker lock or memory: the report says so (`busy`, `store_busy`).
    """
    from funes.ingest import DrainReport, Spool, worker_lock

    spool = Spool(spool_root or rt.paths.spool)
    report = DrainReport()
    while True:
        with worker_lock(spool, wait_s=wait_lock_s) as held:
            if not held:
                report.busy = True
                return report
            report.reclaimed += spool.reclaim()
            spool.clean_tmp(older_than_s=params.stale_tmp_s)
            _drain_locked(rt, spool, params, report)
        if publish is not None and not report.store_busy:
            for outcome in publish_due(rt, params=publish):
                report.pushes += outcome.pushes
                report.push_failures += outcome.failures
                report.pushes_parked += outcome.parked is not None
        # Re-check after letting go: a hook that saw the lock held did not start a worker,
        # so an entry it wrote after our last look is ours to take.
        if report.store_busy or not spool.pending():
            return report
        wait_lock_s = 0.0


def _drain_locked(rt: Runtime, spool: Spool, params: SpoolParams, report: DrainReport) -> None:
    from funes.ingest import claim_batch, group_by_memory

    idle_since: float | None = None
    while True:
        batch = claim_batch(spool, report, limit=params.batch_entries)
        if not batch:
            now = time.monotonic()
            idle_since = idle_since if idle_since is not None else now
            if now - idle_since >= params.idle_exit_s:
                return
            time.sleep(min(0.1, params.idle_exit_s))
            continue
        idle_since = None
        for memory, items in group_by_memory(batch).items():
            _drain_memory(rt, spool, memory, items, params, report)
            if not report.store_busy:
                _request_publishing(rt, items, report)
        if report.store_busy:
            return


def _request_publishing(rt: Runtime, items: list[Claimed], report: DrainReport) -> None:
    """Session boundaries among `items` ask for a push, once their chunks are committed: a
    push that started before they were (and so cannot hold them) never serves the request."""
    try:
        report.publish_requests += request_publishing(
            rt, [item.entry for item in items], now=time.time()
        )
    except Exception:  # a damaged publish state must not stop indexing
        log.exception("recording publish requests failed")


def _drain_memory(
    rt: Runtime,
    spool: Spool,
    memory: str | None,
    items: list[Claimed],
    params: SpoolParams,
    report: DrainReport,
) -> None:
    # Settle the transcripts before taking the memory: a `funes index` must not wait on a
    # worker that is only waiting for an agent to finish writing its turn.
    from funes.ingest import IndexJob, apply_plan, fail, plan_entries

    try:
        drain = plan_entries(spool, items, homes=rt.homes, params=params, report=report)
        store = open_for_write(rt, parse_memory(memory, rt))
        try:
            with store.writing(wait_s=params.store_wait_s):
                spec = rt.embedder_spec_for(store.model_id)
                store.check_model(
                    spec.model_id, writing=True, selector=embedder_name(store.model_id)
                )
                job = IndexJob(
                    store=store,
                    embedder=rt.embedder(spec) if store.vectors_available else None,
                    scanner=default_scanner(),
                    params=INDEX,
                    host=rt.host,
                )
                apply_plan(spool, drain, job, params=params, report=report)
        finally:
            store.close()
    except StoreLocked:
        report.store_busy = True
        report.released += sum(spool.release(item.name) for item in items)
        log.warning(
            "memory %s stayed locked for %.0fs: %d entries left for later",
            memory or "local",
            params.store_wait_s,
            len(items),
        )
    except (
        Exception
    ) as exc:  # the per-batch guard: a broken memory or model fails its entries, not the worker
        log.exception("draining into memory %s failed", memory or "local")
        report.errors.append(f"{memory or 'local'}: {type(exc).__name__}: {exc}")
        for item in items:
            if spool.is_claimed(item.name):
                fail(spool, item, f"{type(exc).__name__}: {exc}", params, report)


@dataclass(slots=True)
class SpoolStatus:
    """The spool at a glance."""

    root: str
    worker_running: bool
    agents: dict[str, AgentBacklog] = field(default_factory=dict)
    failed: list[tuple[str, str]] = field(default_factory=list)  # (entry name, first error line)

    @property
    def waiting(self) -> int:
        return sum(a.waiting for a in self.agents.values())

    @property
    def failed_count(self) -> int:
        return sum(a.failed for a in self.agents.values())


def run_spool_status(
    rt: Runtime, *, spool_root: Path | None = None, failed_limit: int = 20
) -> SpoolStatus:
    """Backlog per agent, parked entries with their errors, and whether a worker is draining."""
    from funes.ingest import Spool, worker_active

    spool = Spool(spool_root or rt.paths.spool)
    status = SpoolStatus(str(spool.root), worker_running=False)
    if not spool.root.is_dir():
        return status
    status.agents = spool.backlog()
    status.worker_running = worker_active(spool)
    for err in sorted(spool.failed.glob("*.json.err"))[:failed_limit]:
        try:
            first = err.read_text(encoding="utf-8", errors="replace").splitlines()[0]
        except (OSError, IndexError):
            first = ""
        status.failed.append((err.name[: -len(".err")], first))
    return status


def retry_failed(rt: Runtime, *, spool_root: Path | None = None) -> int:
    """Move every parked entry back to new/ with its attempts reset. Returns how many.

    An entry that cannot be read (damaged, or written by a newer funes) is replaced by a sweep
    of the agent its file name carries, which reaches the turn it pointed at; one whose agent
    is unknown stays in failed/ (and is not counted).
    """
    from funes.ingest import Spool, SpoolEntry, agent_of

    spool = Spool(spool_root or rt.paths.spool)
    moved = 0
    for path in sorted(spool.failed.glob("*.json")):
        try:
            entry = SpoolEntry.parse(path.read_bytes())
        except OSError:
            continue
        except ValueError:
            agent = agent_of(path.name)
            if agent is None:
                continue
            entry = SpoolEntry(agent=agent, sweep=True)
        spool.enqueue(replace(entry, attempts=0))
        path.unlink(missing_ok=True)
        (spool.failed / f"{path.name}.err").unlink(missing_ok=True)
        moved += 1
    return moved
