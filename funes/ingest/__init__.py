"""The write path: sources → redact → chunk → embed → store, and the spool that feeds it.

    indexing.py  the index loop over sources (tiers, budget, per-unit guard, backfill)
    pump.py      owed vectors embedded on a background thread while the loop stores
    spool.py     the spool directory: entry format, enqueue/claim/ack/park, worker lock
    drain.py     a worker's drain: claim, settle, index the named units, ack or retry
    scrub.py     rewriting stored rows under newer redaction rules
    reembed.py   re-embedding stored chunks in place under the current recipe
    outstanding.py  what the next index owes, counted in chunks per tier (funes status)
    watch.py     a watchdog observer that drains and indexes as files change

Other layers import from this package, never from its modules.
"""

from __future__ import annotations

from funes.ingest.drain import (
    Claimed,
    DrainPlan,
    DrainReport,
    apply_plan,
    claim_batch,
    entry_sources,
    fail,
    group_by_memory,
    plan_entries,
    process,
    settle,
)
from funes.ingest.indexing import (
    TIERS,
    TOP_TIER,
    IndexJob,
    IndexReport,
    Progress,
    UnitFailure,
    backfill_vectors,
    index,
    index_unit,
    order_units,
    owed,
)
from funes.ingest.outstanding import OWED_BUDGET_S, OwedChunks, count_owed
from funes.ingest.reembed import ReembedReport, chunks_owed, reembed
from funes.ingest.scrub import ScrubReport, scrub
from funes.ingest.spool import (
    AgentBacklog,
    Spool,
    SpoolEntry,
    agent_of,
    worker_active,
    worker_lock,
)
from funes.ingest.watch import Watcher, WatchRoot

__all__ = [
    "OWED_BUDGET_S",
    "TIERS",
    "TOP_TIER",
    "AgentBacklog",
    "Claimed",
    "DrainPlan",
    "DrainReport",
    "IndexJob",
    "IndexReport",
    "OwedChunks",
    "Progress",
    "ReembedReport",
    "ScrubReport",
    "Spool",
    "SpoolEntry",
    "UnitFailure",
    "Watcher",
    "WatchRoot",
    "agent_of",
    "apply_plan",
    "backfill_vectors",
    "chunks_owed",
    "claim_batch",
    "count_owed",
    "entry_sources",
    "fail",
    "group_by_memory",
    "index",
    "index_unit",
    "order_units",
    "owed",
    "plan_entries",
    "process",
    "reembed",
    "scrub",
    "settle",
    "worker_active",
    "worker_lock",
]
