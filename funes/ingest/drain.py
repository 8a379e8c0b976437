"""Draining the spool: claim entries, settle their transcripts, index the units they name.

A worker (`funes spool drain`, one at a time by the spool's worker lock) claims entries by
rename (new/ → claimed/), coalesces them per unit and waits for each transcript to stop
growing (`plan_entries`, memory untouched), then indexes incrementally under the memory's
writer lock (`apply_plan`), and deletes an entry only
after its chunks are committed; failures go back to new/ with `attempts` + 1, or to failed/
(with a `.err` beside them) after `max_attempts`. See funes.ingest.spool for the layout.

These are the steps of the worker's one loop (funes.commands.spool.run_drain, which `funes
spool drain`, `funes index` and `funes watch` all run): each goes down (to the sources of
funes.traces and the store) and returns; none calls back up into the loop's caller.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from funes.errors import EntryError, IncompatibleStore, StoreLocked
from funes.ingest.indexing import (
    TOP_TIER,
    IndexJob,
    IndexReport,
    backfill_vectors,
    index,
    index_unit,
    owed,
)
from funes.ingest.spool import Spool, SpoolEntry, agent_of
from funes.settings import SPOOL, SpoolParams
from funes.traces import AGENTS, Agent, AgentHomes, Harness, TraceSource, Unit

log = logging.getLogger(__name__)


@dataclass(slots=True)
class DrainReport:
    """What a drain did. Counts and ids only."""

    entries: int = 0  # entries claimed
    acked: int = 0  # deleted after their chunks were committed
    retried: int = 0  # sent back to new/ after a failure
    parked: int = 0  # moved to failed/
    released: int = 0  # given back untouched (the memory was busy)
    reclaimed: int = 0  # left in claimed/ by a killed worker, taken back
    units: int = 0  # units (transcripts, sessions) re-read
    sweeps: int = 0  # agents swept because an entry named nothing readable
    chunks_written: int = 0
    vectors: int = 0  # chunks embedded (the new turns', then owed ones)
    publish_requests: int = 0  # session boundaries of agents bound to a shared memory
    pushes: int = 0  # pushes of bound memories that landed
    push_failures: int = 0  # failed push attempts
    pushes_parked: int = 0  # remotes whose push stopped retrying (see `funes status`)
    busy: bool = False  # another worker held the worker lock: nothing done
    store_busy: bool = False  # the memory's writer lock stayed taken: entries released
    errors: list[str] = field(default_factory=list)


@dataclass(slots=True)
class Claimed:
    name: str
    entry: SpoolEntry


def entry_sources(
    entry: SpoolEntry, homes: AgentHomes, agents: Mapping[Harness, Agent] = AGENTS
) -> list[TraceSource]:
    """The source of the agent `entry` names, over the agent homes its hook ran with (the
    override variables it recorded applied to `homes`); [] for an agent not in `agents`."""
    agent = agents.get(entry.harness) if entry.harness is not None else None
    return [] if agent is None else [agent.make(homes.with_overrides(entry.env))]


def settle(paths: Sequence[Path], params: SpoolParams = SPOOL) -> None:
    """Wait until none of `paths` changes size for `settle_s` (at most `settle_max_s`).

    An agent may still be appending the turn's last records when its hook fires.
    """
    if not paths or params.settle_s <= 0:
        return

    def sizes() -> list[int]:
        out = []
        for p in paths:
            try:
                out.append(p.stat().st_size)
            except OSError:
                out.append(-1)
        return out

    deadline = time.monotonic() + params.settle_max_s
    before = sizes()
    while True:
        time.sleep(params.settle_s)
        after = sizes()
        if after == before or time.monotonic() >= deadline:
            return
        before = after


@dataclass(slots=True)
class DrainPlan:
    """Claimed entries resolved to the units and sweeps they ask for (no memory touched yet)."""

    claimed: list[Claimed]
    units: dict[str, tuple[TraceSource, Unit, list[Claimed]]] = field(default_factory=dict)
    sweeps: dict[str, tuple[list[TraceSource], list[Claimed]]] = field(default_factory=dict)


def plan_entries(
    spool: Spool,
    claimed: Sequence[Claimed],
    *,
    homes: AgentHomes,
    agents: Mapping[Harness, Agent] = AGENTS,
    params: SpoolParams = SPOOL,
    report: DrainReport,
) -> DrainPlan:
    """Coalesce `claimed` entries per unit and wait for those transcripts to settle.

    Runs before the memory's writer lock is taken: settling waits up to `settle_max_s` for a
    transcript an agent is still appending to, and a writer must not hold the memory that
    long. Each entry's sources come from `agents` over `homes` (`entry_sources`). An entry
    naming no source fails (retried, then parked); one whose payload names nothing readable,
    or that asks for it, makes its agent be swept.
    """
    out = DrainPlan(claimed=list(claimed))
    for item in claimed:
        entry = item.entry
        sources = entry_sources(entry, homes, agents)
        if not sources:
            fail(spool, item, f"no source for agent {entry.agent!r}", params, report)
            continue
        unit_source = _unit_for(sources, entry, report)
        if unit_source is not None:
            source, unit = unit_source
            out.units.setdefault(unit.key, (source, unit, []))[2].append(item)
        if unit_source is None or entry.sweep:
            out.sweeps.setdefault(entry.agent, (sources, []))[1].append(item)
    settle([u.path for _, u, _ in out.units.values()], params)
    return out


def apply_plan(
    spool: Spool,
    drain: DrainPlan,
    job: IndexJob,
    *,
    params: SpoolParams = SPOOL,
    report: DrainReport,
) -> None:
    """Index a plan's units and sweeps into `job.store` (writer lock held) and settle each entry.

    Entries naming the same unit are indexed once. An entry is acked only after its unit's
    chunks are committed. StoreLocked propagates (the caller releases the entries).
    """
    if job.embedder is not None:
        job.store.stamp_model(job.embedder.model_id, job.embedder.dim)
    done: dict[str, bool] = {}  # entry name → every unit/sweep it asked for succeeded
    for key, (source, unit, items) in drain.units.items():
        fresh = _refreshed(source, unit, items[0].entry) or unit
        ok, error = _index_one(source, fresh, job, report)
        for item in items:
            done[item.name] = done.get(item.name, True) and ok
            if not ok:
                log.warning("unit %s failed: %s", key, error)
                report.errors.append(f"{key}: {error}")
    for agent, (sources, items) in drain.sweeps.items():
        sub = IndexReport()
        try:
            sub = index(sources, job)
        except (StoreLocked, IncompatibleStore):
            raise
        report.sweeps += 1
        report.units += sub.units_indexed
        report.chunks_written += sub.chunks_written
        log.info("swept %s: %d units, %d chunks", agent, sub.units_indexed, sub.chunks_written)
        for item in items:
            done.setdefault(
                item.name, True
            )  # a sweep's unit failures are retried by the next sweep
    for item in drain.claimed:
        if item.name not in done:
            continue
        if done[item.name]:
            spool.ack(item.name)
            report.acked += 1
        else:
            fail(spool, item, "indexing failed (see worker.log)", params, report)
    if job.embedder is not None and params.backfill_s > 0:
        # the turn's own chunks first (newest), then a slice of any backlog a budgeted first
        # index left; a `funes index` waiting for the memory stops it early
        report.vectors += backfill_vectors(
            job.store,
            job.embedder,
            deadline=time.monotonic() + params.backfill_s,
            stop=job.store.writer_waiting,
        )


def process(
    spool: Spool,
    claimed: Sequence[Claimed],
    job: IndexJob,
    *,
    homes: AgentHomes,
    agents: Mapping[Harness, Agent] = AGENTS,
    params: SpoolParams = SPOOL,
    report: DrainReport,
) -> None:
    """`plan_entries` then `apply_plan` in one go (for a caller that already holds the writer lock)."""
    drain = plan_entries(spool, claimed, homes=homes, agents=agents, params=params, report=report)
    apply_plan(spool, drain, job, params=params, report=report)


def _unit_for(
    sources: Sequence[TraceSource], entry: SpoolEntry, report: DrainReport
) -> tuple[TraceSource, Unit] | None:
    for source in sources:
        try:
            unit = source.unit_for_hook(entry.payload)
        except Exception as exc:  # a source's payload reader must not sink the batch
            report.errors.append(
                f"{entry.agent}: unit_for_hook failed: {type(exc).__name__}: {exc}"
            )
            continue
        if unit is not None:
            return source, unit
    return None


def _refreshed(source: TraceSource, unit: Unit, entry: SpoolEntry) -> Unit | None:
    """The unit re-stat'ed after settling (its signature moved while we waited)."""
    try:
        return source.unit_for_hook(entry.payload)
    except Exception:
        return None


def _index_one(
    source: TraceSource, unit: Unit, job: IndexJob, report: DrainReport
) -> tuple[bool, str]:
    if not owed(job.store, unit, TOP_TIER):
        return True, ""
    sub = IndexReport()
    written, ok = index_unit(source, unit, job, tier=TOP_TIER, report=sub)
    report.units += 1
    report.chunks_written += written
    if not ok:
        return False, sub.failures[-1].error
    return True, ""


def fail(spool: Spool, item: Claimed, error: str, params: SpoolParams, report: DrainReport) -> None:
    if spool.retry_or_park(item.name, item.entry, error, max_attempts=params.max_attempts):
        report.parked += 1
        log.warning("entry %s parked in failed/: %s", item.name, error)
    else:
        report.retried += 1


def claim_batch(spool: Spool, report: DrainReport, *, limit: int) -> list[Claimed]:
    """Claim up to `limit` waiting entries. Unreadable ones are parked at once."""
    out: list[Claimed] = []
    for name in spool.pending()[:limit]:
        got = spool.claim(name)
        if got is None:
            continue
        report.entries += 1
        if isinstance(got, EntryError):
            spool.park(name, f"unreadable spool entry: {got}")
            report.parked += 1
            agent = agent_of(name)
            if agent:  # the turn it pointed at is not lost: sweep its agent
                spool.enqueue(SpoolEntry(agent=agent, event="recovered", received_at=time.time()))
            continue
        out.append(Claimed(name, got))
    return out


def group_by_memory(claimed: Sequence[Claimed]) -> dict[str | None, list[Claimed]]:
    groups: dict[str | None, list[Claimed]] = {}
    for item in claimed:
        groups.setdefault(item.entry.memory, []).append(item)
    return groups
