"""`funes index`: sweep the agents' session directories (or one path) into the memory."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from funes.commands.spool import run_drain
from funes.errors import SourceError, UsageError
from funes.inference import embedder_name
from funes.memory import MemoryKind, MemoryRef, Runtime, open_for_write, remote_for
from funes.redact import default_scanner
from funes.settings import INDEX, SPOOL, IndexParams
from funes.traces import (
    FilesSource,
    Harness,
    ParquetSource,
    TraceSource,
    discover,
    sources_for_path,
)

if TYPE_CHECKING:  # loaded where used: a verb imports only what it runs
    from funes.ingest import (
        DrainReport,
        IndexReport,
        Progress,
        ReembedReport,
    )

DRAIN_WAIT_S = 5.0  # how long `funes index` waits for a running spool worker


TRACE_FILES = ("*.parquet", "**/*.parquet")  # what `funes index org/repo` fetches


@dataclass(frozen=True, slots=True)
class IndexRequest:
    path: Path | None = None
    dataset: MemoryRef | None = None  # a Hub dataset of agent traces (`funes index org/repo`)
    harness: Harness | None = None
    limit: int | None = None
    include_thinking: bool = True
    unbudgeted: bool = False  # --yes, or an explicit path: no wall-clock budget
    lock_wait_s: float = INDEX.lock_wait_s  # --wait: how long to wait for another writer


@dataclass(slots=True)
class IndexOutcome:
    report: IndexReport
    sources: list[str]
    memory: str
    model_id: str | None
    vectors: bool
    vectors_note: str | None
    drain: DrainReport | None = None  # the spool drained after the sweep (None: not attempted)
    reembed: ReembedReport | None = None  # stored chunks moved to the current embedding recipe
    # files under an explicit path that no agent reads (funes.traces.FilesSource.passed_over)
    passed_over: list[str] = field(default_factory=list)


def sources_for(rt: Runtime, request: IndexRequest) -> list[TraceSource]:
    """The sources a request names (a path, a Hub traces dataset, or this machine's agents).

    Raises UsageError for a path that does not exist, RemoteError (offline with nothing
    cached, missing, refused) for a dataset that cannot be fetched.
    """
    if request.dataset is not None:
        return [_hub_traces(rt, request.dataset)]
    if request.path is not None:
        if not request.path.exists():
            raise UsageError(f"no such file or directory: {request.path}")
        # Absolute keys: the same file indexed as `x/a.jsonl` and `/abs/x/a.jsonl` is one unit.
        return sources_for_path(Path(os.path.abspath(request.path)), request.harness)
    return discover(rt.homes, request.harness)


def _hub_traces(rt: Runtime, ref: MemoryRef) -> TraceSource:
    """An agent-traces dataset on the Hub: its Parquet files at its head (or the pinned
    commit) fetched into the HF cache, only the files not cached yet (offline: the last
    cached copy). Files are keyed `hf://datasets/org/repo/<file>`, so a file a later commit
    left unchanged is not read again."""
    from funes.remote import HubRemote  # the Hub client loads only for a dataset

    remote = remote_for(ref)
    assert isinstance(remote, HubRemote)
    snap = remote.files(TRACE_FILES, revision=ref.revision, local_only=rt.offline)
    return ParquetSource([snap.root], named=(snap.root, remote.label))


def run_index(
    rt: Runtime,
    memory: MemoryRef,
    request: IndexRequest,
    *,
    progress: Callable[[Progress], None] | None = None,
    vector_progress: Callable[[int, int], None] | None = None,
    reembed_progress: Callable[[int, int], None] | None = None,
    on_wait: Callable[[float], None] | None = None,
) -> IndexOutcome:
    """Index what the request names into `memory` (see IndexRequest).

    A sweep (no path) of a memory built with an older embedding recipe also re-embeds its
    stored chunks with the current one (funes.ingest.reembed), within what is left of the
    time budget; `reembed_progress(done, total)` follows it. When another writer (a hook's
    worker, another index) holds the memory, it waits up to `request.lock_wait_s`, telling
    `on_wait` first and asking a worker embedding a backlog to let go after its current batch
    (Store.writing(announce=True)).

    Raises StoreLocked when another writer holds the memory for longer, IncompatibleStore when
    the memory was built with another embedding model. An embedding model that cannot be
    loaded is not raised: the chunks are stored without vectors and the report says why
    (`IndexReport.model_unavailable`).
    """
    from funes.ingest import IndexJob, index, reembed

    started = time.monotonic()
    sources = sources_for(rt, request)
    explicit = request.path is not None or request.dataset is not None
    unbudgeted = request.unbudgeted or explicit
    params: IndexParams = replace(
        INDEX,
        budget_s=0.0 if unbudgeted else INDEX.budget_s,
        include_thinking=request.include_thinking,
        limit=request.limit,
    )
    store = open_for_write(rt, memory)
    try:
        with store.writing(wait_s=request.lock_wait_s, announce=True, on_wait=on_wait):
            spec = rt.embedder_spec_for(store.model_id)
            store.check_model(spec.model_id, writing=True, selector=embedder_name(store.model_id))
            embedder = rt.embedder(spec) if store.vectors_available else None
            job = IndexJob(
                store=store,
                embedder=embedder,
                scanner=default_scanner(),
                params=params,
                host=rt.host,
                progress=progress,
                vector_progress=vector_progress,
                all_tiers_at_once=unbudgeted,
            )
            report = index(sources, job)
            upgraded = None
            if embedder is not None and not explicit and report.model_unavailable is None:
                deadline = None if unbudgeted else started + params.budget_s
                upgraded = reembed(store, embedder, deadline=deadline, progress=reembed_progress)
        if request.path is not None:
            _check_read(str(request.path), report)
        elif request.dataset is not None:
            _check_read(request.dataset.label, report)
        outcome = IndexOutcome(
            report=report,
            sources=[s.harness.value for s in sources],
            memory=memory.label,
            model_id=store.model_id,
            vectors=store.vectors_available,
            vectors_note=store.vectors_unavailable_reason,
            reembed=upgraded,
            passed_over=[
                str(p) for s in sources if isinstance(s, FilesSource) for p in s.passed_over
            ],
        )
    finally:
        store.close()
    if not explicit and memory.kind is MemoryKind.LOCAL:
        # `funes index` also drains what hooks left in the spool (most of it is now
        # unchanged and only acked); a running worker keeps it if it does not let go soon.
        outcome.drain = run_drain(
            rt, wait_lock_s=DRAIN_WAIT_S, params=replace(SPOOL, idle_exit_s=0.0)
        )
    return outcome


def _check_read(path: str, report: IndexReport) -> None:
    """An explicit PATH that yields nothing readable is an error (a sweep never is: one bad
    transcript must not sink it, and its failures are in the report).

    Raises SourceError when PATH holds no transcript funes recognises, or when every unit it
    holds failed to be read (none indexed, none already up to date).
    """
    if report.units_seen == 0:
        raise SourceError(
            f"{path} holds no transcript funes can read",
            hint="give a Claude Code, Codex or pi JSONL transcript (or a directory of them), "
            "a Hermes state.db, an agent-traces .parquet file, or a Hub dataset of them",
        )
    if report.failures and report.units_indexed == 0 and report.units_unchanged == 0:
        first = report.failures[0]
        raise SourceError(
            f"cannot read {path}: {first.error}"
            + (f" (and {len(report.failures) - 1} more)" if len(report.failures) > 1 else ""),
            hint="check that the file is complete and readable by this user; nothing was indexed",
        )
