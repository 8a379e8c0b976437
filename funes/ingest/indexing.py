"""The index loop: sources → redact → chunk → store, then embed what is owed.

`index()` walks units newest first (subagent files after main sessions), skips units whose
signature and tier are already recorded, and writes chunks in batches, one transaction each.
Chunks are stored lexical first (BM25 finds them at once) and recorded as owing a vector
(store `vectors_owed`); what is owed is embedded in priority order — prose (text, thinking),
tool output, tool calls — newest turn first, within the run's time budget, and later runs (and
hook workers, a slice per turn) go on where it stopped. A budgeted sweep therefore reads the
prose of every unit, embeds it, then reads tool calls and output, then embeds tool output and
tool calls; the model runs on a background thread while the pass goes on storing
(funes.ingest.pump: fed as each batch of chunks is committed, drained after the pass). A unit
is recorded as indexed only after all of its chunks are committed, so a crash at any point is
repaired by the next run (chunk ids are stable; a stored chunk is embedded again only when its
text or embedding context changed). A re-read unit is reconciled with what is stored
(`funes.ingest.reconcile`): a rewritten chunk owes its vector again.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace

from funes.chunks import chunk_turn
from funes.errors import IncompatibleStore, ModelUnavailable, StoreLocked
from funes.inference import Embedder
from funes.ingest.pump import BACKFILL_BATCH, VectorPump
from funes.ingest.reconcile import UnitWriter
from funes.ingest.scrub import ScrubReport, scrub
from funes.redact import Scanner, redact
from funes.settings import INDEX, IndexParams
from funes.store import Store
from funes.traces import Block, BlockType, ReadStats, TraceSource, Turn, Unit

TIERS: tuple[tuple[BlockType, ...], ...] = (
    (BlockType.TEXT, BlockType.THINKING),
    (BlockType.TOOL_USE,),
    (BlockType.TOOL_RESULT,),
)
TOP_TIER = len(TIERS) - 1


@dataclass(slots=True)
class Progress:
    """A progress event: `done` of `total` units in tier `tier`, the unit just finished."""

    tier: int
    done: int
    total: int
    unit: str
    chunks_written: int


@dataclass(slots=True)
class UnitFailure:
    key: str
    error: str


@dataclass(slots=True)
class IndexReport:
    """What an index run did. Counts only; never transcript text."""

    units_seen: int = 0
    units_indexed: int = 0
    units_unchanged: int = 0
    units_pending: int = 0  # left for a later run by the time budget
    turns: int = 0
    chunks_written: int = 0
    chunks_existing: int = 0
    chunks_updated: int = 0  # stored chunks a re-read brought up to date in place
    chunks_superseded: int = 0  # stored chunks a re-read no longer produces for its turns
    vectors_backfilled: int = 0  # chunks embedded by this run
    vectors_owed: int = 0  # chunks still without a vector after it (a later run embeds them)
    redactions: int = 0
    forgotten: int = 0  # chunks not stored: their session was forgotten (`funes forget`)
    failures: list[UnitFailure] = field(default_factory=list)
    read: ReadStats = field(default_factory=ReadStats)
    # chunks written per source format (the unit's harness: a Parquet export is `parquet`)
    per_harness: dict[str, int] = field(default_factory=dict)
    elapsed_s: float = 0.0
    budget_exhausted: bool = False
    upgrade: ScrubReport | None = None  # stored rows rescanned because the rules improved
    # why no vector could be computed: the embedder's model cannot be loaded (the run stored
    # its chunks for BM25 all the same; they owe their vectors, `vectors_owed`, to a later run)
    model_unavailable: ModelUnavailable | None = None


@dataclass(frozen=True, slots=True)
class IndexJob:
    """Everything one index run needs."""

    store: Store
    embedder: Embedder | None  # None: this memory has no vectors (lexical-only)
    scanner: Scanner
    params: IndexParams = INDEX
    host: str | None = None
    progress: Callable[[Progress], None] | None = None
    all_tiers_at_once: bool = False  # no budget: read each unit once for every tier
    # (vectors computed, vectors owed when the run began) after each embedded batch
    vector_progress: Callable[[int, int], None] | None = None


def order_units(units: Iterable[Unit]) -> list[Unit]:
    """Main sessions newest first, then secondary (subagent) units newest first."""
    return sorted(units, key=lambda u: (u.secondary, -u.sort_key, u.key))


def index(sources: Sequence[TraceSource], job: IndexJob) -> IndexReport:
    """Index every owed unit of `sources` into `job.store` (see module docstring).

    Raises StoreLocked / IncompatibleStore before writing anything; per-unit failures are
    recorded in the report, never raised. An embedder whose model cannot be loaded is
    recorded too (`report.model_unavailable`): the run goes on storing chunks without
    vectors. Stored rows redacted by older rules (`store.redaction_floor < scanner.version`)
    are rescanned and rewritten in place.
    """
    started = time.monotonic()
    report = IndexReport()
    embedder = job.embedder  # None from the first time its model cannot be loaded
    if embedder is not None:
        job.store.stamp_model(embedder.model_id, embedder.dim)
    work: list[tuple[TraceSource, Unit]] = []
    for source in sources:
        for unit in source.units():
            work.append((source, unit))
    report.units_seen = len(work)
    by_unit = {u.key: s for s, u in work}
    ordered = order_units(u for _, u in work)
    thinking = job.params.include_thinking
    if job.params.limit is not None:
        ordered = [u for u in ordered if owed(job.store, u, TOP_TIER, include_thinking=thinking)]
        ordered = ordered[: max(job.params.limit, 0)]
    deadline = started + job.params.budget_s if job.params.budget_s > 0 else None
    tiers = [TOP_TIER] if job.all_tiers_at_once else list(range(len(TIERS)))
    indexed: set[str] = set()
    failed: set[str] = set()
    # embeds what the pass has stored while it reads on: while a budgeted sweep stores prose,
    # prose alone; while it stores the rest, prose and tool output (what the vector leg
    # searches); tool calls wait for the last drain, as they did
    pump = _Pump(job, report, embedder)
    try:
        for tier in tiers:
            feed_priority = 0 if tier == 0 and len(tiers) > 1 else 1
            due = [
                u
                for u in ordered
                if u.key not in failed and owed(job.store, u, tier, include_thinking=thinking)
            ]
            for done, unit in enumerate(due, 1):
                if deadline is not None and time.monotonic() > deadline:
                    report.budget_exhausted = True
                    report.units_pending = len(due) - done + 1
                    break
                # A unit re-read for a later tier adds chunks but is not counted again.
                first_read = unit.key not in indexed
                written, ok = index_unit(
                    by_unit[unit.key],
                    unit,
                    job,
                    tier=tier,
                    report=report,
                    count=first_read,
                    stored=functools.partial(pump.feed, max_priority=feed_priority),
                )
                (indexed if ok else failed).add(unit.key)
                if job.progress is not None:
                    job.progress(Progress(tier, done, len(due), unit.key, written))
                pump.feed(max_priority=feed_priority)  # what finished meanwhile, and more
            if report.budget_exhausted:
                break
            if tier == 0 and len(tiers) > 1:
                # prose is embedded before tool calls and output are read
                pump.drain(deadline=deadline, max_priority=0)
        if job.store.redaction_floor < job.scanner.version:
            # a deadline already past: the batch in flight is written, nothing more fetched
            # (the rescan embeds with the same model on this thread)
            pump.drain(deadline=0.0)
            report.upgrade = scrub(job.store, job.scanner, pump.embedder, only_outdated=True)
        report.units_indexed = len(indexed)
        report.forgotten = job.store.forgotten_refused
        report.units_unchanged = sum(
            1
            for u in ordered
            if u.key not in indexed
            and u.key not in failed
            and not owed(job.store, u, TOP_TIER, include_thinking=thinking)
        )
        pump.drain(deadline=deadline)
    except BaseException:
        pump.close(wait=False)  # an interrupt does not wait for the model (funes.ingest.pump)
        raise
    pump.close()
    report.vectors_owed = job.store.owed_total()
    if deadline is not None and report.vectors_owed and time.monotonic() > deadline:
        report.budget_exhausted = True
    report.elapsed_s = time.monotonic() - started
    return report


class _Pump:
    """An index run's VectorPump, counted in its report: embedding stops, and the run goes on
    storing, from the first time the embedder's model cannot be loaded (ModelUnavailable,
    kept in `report.model_unavailable`; the chunks stay stored, owing their vectors)."""

    def __init__(self, job: IndexJob, report: IndexReport, embedder: Embedder | None) -> None:
        self.job = job
        self.report = report
        self.embedder = embedder
        self._pump = (
            VectorPump(job.store, embedder)
            if embedder is not None and job.store.vectors_available
            else None
        )

    def feed(self, *, max_priority: int | None) -> None:
        if self._pump is not None:
            self._run(lambda p: p.feed(max_priority=max_priority))

    def drain(self, *, deadline: float | None, max_priority: int | None = None) -> None:
        if self._pump is not None:
            self._run(
                lambda p: p.drain(
                    max_priority=max_priority, deadline=deadline, progress=self.job.vector_progress
                )
            )

    def _run(self, step: Callable[[VectorPump], int]) -> None:
        assert self._pump is not None
        try:
            self.report.vectors_backfilled += step(self._pump)
        except ModelUnavailable as exc:
            self.report.model_unavailable = exc
            self.close()
            self.embedder = None

    def close(self, *, wait: bool = True) -> None:
        if self._pump is not None:
            self._pump.close(wait=wait)
            self._pump = None


# A unit indexed with --no-thinking is recorded under its signature plus this suffix, so a later
# run that wants thinking blocks re-reads it (a full record also satisfies a --no-thinking run).
NO_THINKING = "+no-thinking"


def _recorded_signature(unit: Unit, include_thinking: bool) -> str | None:
    if unit.signature is None or include_thinking:
        return unit.signature
    return unit.signature + NO_THINKING


def _first_owed_tier(store: Store, unit: Unit, *, include_thinking: bool = True) -> int:
    """The lowest tier not yet stored for this unit at its current signature."""
    record = store.unit(unit.key)
    if record is None or unit.signature is None:
        return 0
    if record.signature == unit.signature or (
        not include_thinking and record.signature == unit.signature + NO_THINKING
    ):
        return record.level + 1
    return 0


def owed(store: Store, unit: Unit, tier: int, *, include_thinking: bool = True) -> bool:
    """Whether tier `tier` of `unit` still has to be read (changed, new, or not that deep yet)."""
    return _first_owed_tier(store, unit, include_thinking=include_thinking) <= tier


def index_unit(
    source: TraceSource,
    unit: Unit,
    job: IndexJob,
    *,
    tier: int,
    report: IndexReport,
    count: bool = True,
    stored: Callable[[], None] | None = None,
) -> tuple[int, bool]:
    """Read one unit and store its chunks of tiers ≤ `tier`. Returns (chunks written, success).
    `stored()` is called after each batch of chunks is committed (a long session is written
    in several: the vector pump embeds the first while the rest is read).

    Any exception while reading or writing this unit is recorded as a failure (the unit is
    not marked indexed, so the next run retries it); StoreLocked / IncompatibleStore propagate.
    With `count` False (a re-read for a later tier) turns and skipped records are not added to
    the report again; redactions are counted as their chunks are stored (UnitWriter).
    """
    thinking = job.params.include_thinking
    first = _first_owed_tier(job.store, unit, include_thinking=thinking)
    types = {t for level in TIERS[first : tier + 1] for t in level}
    if not job.params.include_thinking:
        types.discard(BlockType.THINKING)
    stats = ReadStats()
    writer = UnitWriter(job, report, frozenset(types), first_read=first == 0, stored=stored)
    # The first read after a change compares every stored chunk of the unit's turns the memory
    # knows (UnitWriter.knows); the later tier passes of the same signature only their own
    # block types (the rest is up to date), as does the first read of a turn never stored: its
    # other blocks are redacted and chunked by the pass that writes them.
    compared = None if first == 0 else types
    # block types a later tier would read: a unit holding none of them (a prose-only session)
    # is complete after this pass, and is not re-read, nor reported as not indexed, for them
    later = {t for level in TIERS[tier + 1 :] for t in level}
    deeper = False
    turns = 0
    ok = True
    try:
        for turn in source.read(unit, stats):
            turns += 1
            deeper = deeper or any(b.type in later for b in turn.blocks)
            stats.cut_blocks += sum(
                1
                for b in turn.blocks
                if b.cut_chars and (thinking or b.type is not BlockType.THINKING)
            )
            scope = types if compared is None and not writer.knows(turn) else compared
            turn, findings = _redacted(turn, job.scanner, scope)
            writer.add(turn, chunk_turn(turn, types=scope, host=job.host), findings)
        writer.finish()
    except (StoreLocked, IncompatibleStore, ModelUnavailable):
        raise  # not about this unit: every other unit would fail the same way
    except Exception as exc:  # the per-unit guard: one bad unit never sinks the run
        report.failures.append(UnitFailure(unit.key, f"{type(exc).__name__}: {exc}"))
        ok = False
    written = writer.written
    if count or not ok:
        report.read.merge(stats)
        report.turns += turns
    if written:
        key = unit.harness.value
        report.per_harness[key] = report.per_harness.get(key, 0) + written
    if ok:
        job.store.record_unit(
            unit.key,
            harness=unit.harness.value,
            signature=_recorded_signature(unit, thinking),
            level=tier if deeper else TOP_TIER,
            turns=turns,
            chunks=written,
        )
    return written, ok


def _redacted(
    turn: Turn, scanner: Scanner, types: set[BlockType] | None = None
) -> tuple[Turn, dict[int, int]]:
    """The turn with the secrets of its blocks of `types` (None: all) redacted, and {block
    index: secrets redacted in it} (blocks without any left out). Only the blocks the pass
    chunks need it: a chunk is made of its own block alone (funes.chunks.chunk_turn). The
    report counts a block's secrets once a chunk of it is stored
    (funes.ingest.reconcile.UnitWriter), never those of a forgotten session's."""
    blocks: list[Block] = []
    found: dict[int, int] = {}
    for idx, block in enumerate(turn.blocks):
        if types is not None and block.type not in types:
            blocks.append(block)  # not chunked by this pass
            continue
        text, findings = redact(block.text, scanner)
        if findings:
            found[idx] = len(findings)
            block = replace(block, text=text)
        blocks.append(block)
    return (replace(turn, blocks=tuple(blocks)) if found else turn), found


def backfill_vectors(
    store: Store,
    embedder: Embedder,
    *,
    deadline: float | None = None,
    max_priority: int | None = None,
    batch: int = BACKFILL_BATCH,
    progress: Callable[[int, int], None] | None = None,
    stop: Callable[[], bool] | None = None,
) -> int:
    """Embed chunks owed a vector (store `vectors_owed`), highest priority and newest first,
    until none is left (of priority ≤ `max_priority` when given), `deadline`
    (time.monotonic()) passes or `stop()` says so; checked between batches. Returns how many
    were embedded. The embedding input is each chunk's under the memory's recipe
    (funes.ingest.embed_input); the store's reads and writes overlap the model
    (funes.ingest.pump)."""
    if not store.vectors_available or store.model_id is None:
        return 0
    with VectorPump(store, embedder, batch=batch) as pump:
        return pump.drain(
            max_priority=max_priority, deadline=deadline, stop=stop, progress=progress
        )
