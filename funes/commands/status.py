"""`funes status`: what the memory holds and what needs attention, with the next command to run."""

from __future__ import annotations

import datetime as dt
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from funes.chunks import EMBED_INPUT
from funes.commands.bindings import BindingStatus, binding_status, included
from funes.commands.curate import CurationStatus, curation_status
from funes.commands.push import receipts_dir
from funes.commands.scrub import held_back_summary
from funes.errors import (
    FunesError,
    IncompatibleStore,
    SecretScanFailed,
    StoreError,
    UsageError,
)
from funes.inference import embedder_name
from funes.memory import (
    MemoryKind,
    MemoryRef,
    MemoryState,
    Runtime,
    load_bindings,
    open_memory,
    probe,
    remote_for,
)
from funes.plurals import counted, plural
from funes.redact import RULES_VERSION, default_scanner
from funes.store import Store, StoreStats, receipt_status
from funes.traces import discover, installable

if TYPE_CHECKING:  # loaded where used: a verb imports only what it runs
    from funes.ingest import OwedChunks


@dataclass(slots=True)
class PushStatus:
    """What this host has published to one remote, from its push receipt (no network)."""

    remote: str
    commit: str
    checked_at: str
    published: int  # chunks of the local memory the remote is known to hold
    # local chunks not pushed yet that a push sends (of the sessions it sends, less those the
    # secrets gate holds back), and the sessions they are in
    pending_chunks: int
    pending_sessions: int
    # a project memory: local chunks (and sessions) its review did not include (never pushed)
    left_out_chunks: int = 0
    left_out_sessions: int = 0
    held_back_chunks: int = 0  # local chunks not pushed yet that the secrets gate holds back
    # blocks pushed there and rewritten or deleted here since: the next push replaces them
    # there (None: unknown, the next push compares every chunk)
    rewritten_blocks: int | None = 0


@dataclass(slots=True)
class SourceStatus:
    harness: str
    units: int  # sessions/files the agent has on this machine
    owed: int  # of which not (fully) indexed yet


@dataclass(slots=True)
class AgentHookStatus:
    """Automatic indexing of one agent: is the hook installed, does it fire, is the spool keeping up."""

    agent: str  # harness value
    hook_installed: bool
    mcp_registered: bool
    last_fired: str | None  # ISO-8601 UTC of the last hook call, None if never
    waiting: int  # spool entries not indexed yet
    failed: int  # spool entries parked in failed/
    warnings: list[str] = field(default_factory=list)


@dataclass(slots=True)
class StatusReport:
    memory: str
    exists: bool
    stats: StoreStats | None
    embedder: str | None  # the model the memory is stamped with
    reranker: str  # the active cross-encoder, or why there is none
    vectors_note: str | None = None
    sources: list[SourceStatus] = field(default_factory=list)
    attention: list[str] = field(default_factory=list)
    next_steps: list[str] = field(default_factory=list)
    agents: list[AgentHookStatus] = field(default_factory=list)  # local memory only
    pushes: list[PushStatus] = field(default_factory=list)
    remote_commit: str | None = None  # the commit read, for a remote memory
    push_held_back: int | None = None  # chunks the secrets gate would hold back; None: not scanned
    rescan_owed: int = 0  # chunks redacted under older secret rules (scrub or index re-scans)
    bindings: list[BindingStatus] = field(default_factory=list)  # local memory only
    curation: list[CurationStatus] = field(default_factory=list)  # project memories reviewed here
    path: str | None = None  # the memory file read (a remote's: its local cache)
    # chunks without a vector, from the memory's record of owed vectors (None: no vectors in
    # this memory, or one indexed before they were tracked and not counted yet)
    unembedded: int | None = None
    owed: OwedChunks | None = None  # what the next `funes index` writes (local memory only)
    forgotten: int = 0  # sessions forgotten (`funes forget`): never stored again
    forget_rules: list[str] = field(default_factory=list)  # rules later writes check
    # remote label → (forgotten sessions it still holds, their chunks), per this host's receipts
    forgotten_copies: dict[str, tuple[int, int]] = field(default_factory=dict)
    # a memory file is there but cannot be read (damaged, another funes' schema): `attention`
    # says why; its counts are unknown, not zero
    unreadable: bool = False


def run_status(rt: Runtime, memory: MemoryRef) -> StatusReport:
    """Summarise `memory`. Never raises for the local memory before its first index, an empty
    memory or one that cannot be read: it says so instead. A memory named by path that is not
    there raises StoreError (`no memory at …`), as every read of it does: reporting "no memory
    yet" and `next: funes index` would send the user to build the local one instead."""
    report = StatusReport(memory.label, False, None, None, rt.reranker_status())
    if memory.shared:
        return _remote_status(rt, memory, report)
    assert memory.path is not None
    found = probe(memory)
    held: frozenset[str] = frozenset()  # the chunks the secrets gate holds back (never pushed)
    # funes' folders that index and add cannot create (FUNES_HOME a file): their error, first
    unusable = rt.paths.unusable() if memory.kind is MemoryKind.LOCAL else None
    if unusable is not None:
        report.attention.append(unusable.message)
        if unusable.hint:
            report.next_steps.append(unusable.hint)
        if found.state is MemoryState.MISSING:  # nothing else to check: the folder comes first
            report.sources = _source_status(rt, None)
            return report
    if found.state in (MemoryState.INCOMPATIBLE, MemoryState.UNREADABLE):
        problem = found.problem or f"memory {memory.label} cannot be read"
        report.attention.append(problem + (f" ({found.hint})" if found.hint else ""))
        report.unreadable = True
        return report
    if found.state is MemoryState.MISSING:
        if memory.kind is not MemoryKind.LOCAL:
            raise StoreError(found.problem or f"no memory at {memory.path}", hint=found.hint)
        _model_status(rt, None, report)
        report.sources = _source_status(rt, None)
    else:
        store = Store.open(memory.path, readonly=True)
        try:
            report.exists = True
            report.path = str(memory.path)
            report.stats = store.stats()
            report.embedder = store.model_id
            embeds = _model_status(rt, store, report)
            report.unembedded = _unembedded(store)
            if not store.vectors_available:
                report.vectors_note = store.vectors_unavailable_reason
                report.attention.append(
                    f"vector search unavailable ({store.vectors_unavailable_reason}): lexical only"
                )
            if memory.kind is MemoryKind.LOCAL:
                report.sources = _source_status(rt, store)
                from funes.ingest import count_owed

                report.owed = count_owed(discover(rt.homes), store, default_scanner(), host=rt.host)
                _recipe_status(store, report, embeds=embeds)
            held = _secrets_status(store, report)
            if memory.kind is MemoryKind.LOCAL:
                report.pushes = _push_status(rt, None, held)
                _rewritten_status(report)
            _forgotten_status(store, report)
        except FunesError as exc:  # damaged pages past the header: say so (and what to do)
            report.attention.append(exc.message + (f" ({exc.hint})" if exc.hint else ""))
            report.unreadable = True
            return report
        finally:
            store.close()
    if memory.kind is MemoryKind.LOCAL:
        _agent_hooks(rt, report)
        _agent_models(rt, report)
        _bindings(rt, report, held)
    owed = sum(s.owed for s in report.sources)
    if owed:
        # files whose chunks are all stored (indexed from a copy): the index only records them
        known = report.owed is not None and report.owed.complete and not report.owed.total
        report.attention.append(
            f"{counted(owed, 'agent session file')} not indexed yet"
            + (f" ({plural(owed, 'it holds', 'they hold')} nothing new)" if known else "")
        )
        if "funes index" not in report.next_steps:  # also offered for chunks owed vectors
            report.next_steps.append("funes index")
    if not report.exists or (report.stats and report.stats.chunks == 0):
        if "funes index" not in report.next_steps:
            report.next_steps.append("funes index")
        if not any(a.hook_installed for a in report.agents):
            names = "|".join(agent.name for agent in installable())
            report.next_steps.append(f"funes add <{names}>  (index every turn automatically)")
    elif not report.next_steps:
        report.next_steps.append('funes recall "<what you want to remember>"')
    return report


def _model_status(rt: Runtime, store: Store | None, report: StatusReport) -> bool:
    """Whether the next `funes index` can embed into the memory (`store`; None: the local
    memory before its first index) with the embedding model this environment chooses for it
    (`Runtime.embedder_spec_for`, as recall and index choose it).

    What stands in the way goes to `attention`, and what fixes it to `next_steps`: a model
    that does not fit the memory, in the words of the error `funes recall` stops with (its
    hint is the fix); a model that cannot load here (`Runtime.check_embedder`: not cached
    while HF_HUB_OFFLINE is set, a package not installed, a file whose bytes differ from its
    pin, a FUNES_MODEL_CACHE that cannot hold its int8 graph, a graph to build without the
    `onnx` package), with the hint of the error the load raises. A model that is not here but
    may download is said too, with what to do where the Hub cannot be reached. An unknown
    FUNES_EMBEDDER is said as recall and index stop on it; the memory is still read."""
    try:
        spec = rt.embedder_spec_for(store.model_id if store is not None else None)
    except UsageError as exc:
        report.attention.append(
            f"FUNES_EMBEDDER: {exc.message}"
            + (f" ({exc.hint})" if exc.hint else "")
            + ": `funes recall` and `funes index` stop on it"
        )
        report.next_steps.append("set FUNES_EMBEDDER to a known embedder, or unset it")
        return False
    if store is not None:
        try:
            store.check_model(spec.model_id, selector=embedder_name(store.model_id))
        except IncompatibleStore as exc:
            try:
                store.check_model(
                    spec.model_id, writing=True, selector=embedder_name(store.model_id)
                )  # no vector yet: index takes over
                refused, embeds = "`funes recall` refuses it", True
            except IncompatibleStore:
                refused, embeds = "`funes recall` and `funes index` refuse it", False
            chosen = f" (FUNES_EMBEDDER={rt.models.embedder})" if rt.models.embedder else ""
            report.attention.append(f"{exc.message}{chosen}: {refused}")
            if exc.hint:
                report.next_steps.append(exc.hint)
            return embeds
    check = rt.check_embedder(spec)
    if check.error is not None:
        report.attention.append(
            f"the embedding model cannot load ({check.error.message}): `funes index` stores "
            "chunks without vectors and `funes recall` answers from BM25 alone"
        )
        if check.error.hint:
            report.next_steps.append(check.error.hint)
        return False
    if check.download is not None:
        report.attention.append(
            f"the embedding model {spec.name} is not on this machine yet: the next `funes "
            "index` downloads it from the Hugging Face Hub"
            + (
                f" (where the Hub cannot be reached: {check.download.hint})"
                if check.download.hint
                else ""
            )
        )
    return True


def _unembedded(store: Store) -> int | None:
    """Chunks owed a vector (store `vectors_owed`: no scan); None when the memory has no
    vectors or its owed vectors are not counted yet."""
    if not store.vectors_available or store.model_id is None:
        return None
    counts = store.owed_counts()
    return None if counts is None else sum(counts.values())


def _recipe_status(store: Store, report: StatusReport, *, embeds: bool) -> None:
    """A memory whose vectors an older funes made: `funes index` re-embeds it (reembed.py);
    chunks still without a vector (a budgeted first index embeds them over later runs).
    `embeds` False: the next index cannot embed (`_model_status` said why), so neither is
    promised."""
    from funes.ingest import chunks_owed

    owed = chunks_owed(store)
    if owed:
        line = (
            f"{counted(owed, 'chunk')} {plural(owed, 'has', 'have')} vectors of the "
            f"`{store.embedding_input}` embedding recipe of an older funes"
        )
        if embeds:
            line += (
                f": `funes index --yes` re-embeds {plural(owed, 'it', 'them')} with `{EMBED_INPUT}`"
            )
            report.next_steps.append("funes index --yes")
        report.attention.append(line)
    counts = store.owed_counts()
    if counts is None or not store.vectors_available or store.model_id is None:
        return
    searched = sum(n for priority, n in counts.items() if priority < 2)
    calls = sum(n for priority, n in counts.items() if priority >= 2)
    if searched:
        line = (
            f"{counted(searched, 'chunk')} {plural(searched, 'is', 'are')} not searchable by "
            f"meaning yet (BM25 finds {plural(searched, 'it', 'them')})"
        )
        if embeds:
            line += (
                ": the next `funes index`, and the hook after each turn, embed "
                f"{plural(searched, 'it', 'them')}, prose first"
            )
            if "funes index" not in report.next_steps:
                report.next_steps.append("funes index")
        if calls:  # the rest of `without vectors`: tool calls, embedded after everything else
            line += (
                f"; {counted(calls, 'tool-call chunk')} {plural(calls, 'waits', 'wait')} "
                "for a vector too, embedded last"
            )
        report.attention.append(line)


def _forgotten_status(store: Store, report: StatusReport) -> None:
    """Forgotten sessions, the rules kept, and the remote copies this host knows remain."""
    sessions, rules = store.forgotten()
    report.forgotten, report.forget_rules = len(sessions), [r.label for r in rules]
    report.forgotten_copies = store.forgotten_copies()
    for remote, (n, chunks) in sorted(report.forgotten_copies.items()):
        report.attention.append(
            f"{remote} still holds {counted(n, 'forgotten session')} ({counted(chunks, 'chunk')}) "
            f"this host pushed: `funes forget --remote {remote}` deletes "
            f"{plural(n, 'it', 'them')} there"
        )


def _secrets_status(store: Store, report: StatusReport) -> frozenset[str]:
    """How many chunks a push would hold back (the real gate; incremental, see
    held_back_summary). Returns their ids (none when the scanner cannot run)."""
    if report.stats is None or report.stats.chunks == 0:
        report.push_held_back = 0
        return frozenset()
    try:
        held = held_back_summary(store)
    except SecretScanFailed as exc:
        report.attention.append(f"{exc.message}: a push would publish nothing")
        return frozenset()
    report.push_held_back = len(held.ids)
    report.rescan_owed = store.owed_rescan(RULES_VERSION)
    if report.rescan_owed:
        report.attention.append(
            f"{counted(report.rescan_owed, 'chunk')} {plural(report.rescan_owed, 'was', 'were')} "
            f"redacted under older secret rules (now v{RULES_VERSION}): `funes scrub "
            f"--outdated-only` or the next `funes index` re-scans "
            f"{plural(report.rescan_owed, 'it', 'them')}"
        )
    n = len(held.ids)
    if n:
        report.attention.append(
            f"{counted(n, 'chunk')} {plural(n, 'contains', 'contain')} secrets and "
            f"would be held back by a push ({plural(n, 'it stays', 'they stay')} on this "
            "machine; the rest is published)"
        )
        # what today's index-time rules redact (text stored under older ones): scrub publishes
        redactable = len(held.redactable & held.ids)
        if redactable:
            some = "them" if redactable == n else f"{redactable} of them"
            report.next_steps.append(f"funes scrub  (redact {some} in place)")
        if redactable < n:  # the gate's own detectors found what index-time redaction let through
            report.next_steps.append(
                "to publish them too: take the secret out of the transcript, then "
                "`funes index --yes` (it re-reads the changed file)"
            )
    return frozenset(held.ids)


def _bindings(rt: Runtime, report: StatusReport, held: frozenset[str]) -> None:
    """Each agent's bound memory and its publishing (a parked push says what fixes it), and
    each project memory's sessions waiting for review. `held`: the local chunks the secrets
    gate holds back."""
    report.bindings = binding_status(rt, held=held)
    report.curation = curation_status(rt)
    for c in report.curation:
        if c.pending:
            report.attention.append(
                f"{counted(c.pending, 'session')} of {c.project} "
                f"{plural(c.pending, 'waits', 'wait')} "
                f"for review before {c.memory} can receive {plural(c.pending, 'it', 'them')}"
            )
            report.next_steps.append(f"funes curate {c.memory}")
    for b in report.bindings:
        if b.state == "parked":
            report.attention.append(f"publishing to {b.memory} stopped: {b.reason}")
            if b.fix and b.fix not in report.next_steps:
                report.next_steps.append(b.fix)


def _source_status(rt: Runtime, store: Store | None) -> list[SourceStatus]:
    from funes.ingest import TOP_TIER, owed

    out: list[SourceStatus] = []
    for source in discover(rt.homes):
        units = list(source.units())
        if not units:
            continue
        # Owed = new, changed, or not indexed to the last tier yet (a budgeted sweep indexes
        # prose first and tool output later).
        owed_units = sum(1 for u in units if store is None or owed(store, u, TOP_TIER))
        out.append(SourceStatus(source.harness.value, len(units), owed_units))
    return out


def _agent_models(rt: Runtime, report: StatusReport) -> None:
    """Warn when the agents' funes processes (the launcher's settings) would embed with
    another model than the memory's, or cannot load it (funes.commands.agent_models)."""
    wired = [a.agent for a in report.agents if a.hook_installed or a.mcp_registered]
    if not wired or not report.embedder:
        return
    from funes.commands.agent_models import launcher_model_problem
    from funes.traces import Harness

    problem = launcher_model_problem(rt, report.embedder)
    if problem is None:
        return
    agents = [Harness(a).agent_name for a in wired]
    report.attention.append(f"{', '.join(agents)}: {problem.message}: {problem.consequence}")
    add = f"funes add {agents[0]}" if len(agents) == 1 else f"funes add <{'|'.join(agents)}>"
    report.next_steps.append(
        f"{add}  (from a shell where FUNES_EMBEDDER and FUNES_MODEL_PATH are set as for "
        "`funes index`: it rewrites the launcher's settings; then restart the agent)"
    )


STALE_BACKLOG_S = 600.0  # entries older than this with no worker running need a nudge


def _agent_hooks(rt: Runtime, report: StatusReport) -> None:
    """Fill `report.agents` from the installers' checks and the spool (hooks, backlog, failures)."""
    from funes.ingest import AgentBacklog, Spool, worker_active
    from funes.wiring import agent_harness, run_checks

    spool = Spool(rt.paths.spool)
    backlog = spool.backlog() if spool.root.is_dir() else {}
    bound = load_bindings(rt.paths)
    for check in run_checks(rt):
        harness = agent_harness(check.agent).value
        b = backlog.get(harness, AgentBacklog())
        # an agent funes was added to is always listed; so is one whose config funes cannot
        # read (it cannot tell whether funes is wired in, and the warning names the file)
        added = check.hooks or check.mcp or harness in bound or check.unreadable
        if not (added or b.waiting or b.failed or b.last_fired):
            continue
        fired = (
            dt.datetime.fromtimestamp(b.last_fired, dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
            if b.last_fired
            else None
        )
        report.agents.append(
            AgentHookStatus(
                harness, check.hooks, check.mcp, fired, b.waiting, b.failed, check.warnings
            )
        )
        for warning in check.warnings:
            report.attention.append(f"{check.agent}: {warning}")
        if check.hooks and b.last_fired is None and not check.stale:
            report.attention.append(
                f"{check.agent}: hook installed but it has not fired yet (restart the agent)"
            )
    failed = sum(b.failed for b in backlog.values())
    if failed:
        report.attention.append(
            f"{counted(failed, 'hook entry', 'hook entries')} failed to index "
            "(see `funes spool status`)"
        )
        report.next_steps.append("funes spool retry")
    pending = spool.pending() if backlog else []
    if pending and not worker_active(spool):
        oldest_s = time.time() - int(pending[0].split("-", 1)[0]) / 1e9
        if oldest_s > STALE_BACKLOG_S:
            report.attention.append(
                f"{counted(len(pending), 'hook entry', 'hook entries')} waiting with no worker "
                "running"
            )
            report.next_steps.append("funes index")


def _remote_status(rt: Runtime, memory: MemoryRef, report: StatusReport) -> StatusReport:
    """A remote memory: its stats at the commit read, and what this host has published to it
    (and how publishing to it stands, for the agents bound to it)."""
    held = _local_held_back(rt, memory)
    report.bindings = [b for b in binding_status(rt, held=held) if b.memory == memory.label]
    try:
        opened = open_memory(rt, memory)
    except FunesError as exc:
        report.attention.append(exc.message)
        if exc.hint:
            report.next_steps.append(exc.hint)
        report.pushes = _push_status(rt, memory, held)
        _rewritten_status(report)
        return report
    try:
        report.memory = opened.label
        report.exists = True
        report.path = str(opened.store.path)
        report.stats = opened.store.stats()
        report.embedder = opened.store.model_id
        report.attention.extend(opened.notes)
    finally:
        opened.close()
    report.pushes = _push_status(rt, memory, held)
    _rewritten_status(report)
    report.next_steps.append(f'funes recall "<what you want to remember>" --memory {memory.label}')
    return report


def _local_held_back(rt: Runtime, remote: MemoryRef) -> frozenset[str]:
    """The chunk ids of the local memory the secrets gate holds back, when this host has
    pushed to `remote` (its receipt counts them apart); none when it has not, or the local
    memory cannot be read or scanned (they are then counted as not pushed)."""
    from funes.remote import receipt_path

    local = rt.paths.memory_db
    if not local.exists() or not receipt_path(receipts_dir(rt), remote_for(remote)).exists():
        return frozenset()
    try:
        store = Store.open(local, readonly=True)
    except FunesError:
        return frozenset()
    try:
        return frozenset(held_back_summary(store).ids)
    except FunesError:
        return frozenset()
    finally:
        store.close()


def _rewritten_status(report: StatusReport) -> None:
    """Remotes holding the old text of blocks rewritten (scrub, a re-read transcript) or
    deleted here since this host pushed them: what the next push replaces there."""
    for push in report.pushes:
        if not push.rewritten_blocks:
            continue
        n = push.rewritten_blocks
        report.attention.append(
            f"{push.remote} holds the old text of {counted(n, 'block')} rewritten or deleted "
            f"here since {plural(n, 'it was', 'they were')} pushed"
        )
        report.next_steps.append(f"funes push {push.remote}  (replaces or deletes them there)")


def _push_status(
    rt: Runtime, memory: MemoryRef | None, held: frozenset[str] = frozenset()
) -> list[PushStatus]:
    """Receipts of this host (all of them, or the one for `memory`) against the local memory;
    `held`: the local chunk ids the secrets gate holds back (counted apart from pending)."""
    from funes.remote import receipt_path

    local = rt.paths.memory_db
    folder = receipts_dir(rt)
    if not local.exists() or not folder.is_dir():
        return []
    if memory is not None:
        paths = [receipt_path(folder, remote_for(memory))]
    else:
        paths = sorted(folder.glob("*.db"))
    out: list[PushStatus] = []
    for path in paths:
        if not path.exists():
            continue
        try:
            found = receipt_status(local, path, sessions=included(rt, path.stem), held=held)
        except Exception:  # a damaged receipt only costs its line; the next push rewrites it
            continue
        out.append(
            PushStatus(
                found.meta.get("remote", path.stem),
                found.meta.get("commit", "?"),
                found.meta.get("checked_at", "?"),
                found.published,
                found.pending_chunks,
                found.pending_sessions,
                found.left_out_chunks,
                found.left_out_sessions,
                found.held_back_chunks,
                found.rewritten_blocks,
            )
        )
    return out
