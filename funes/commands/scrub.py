"""`funes scrub`: rewrite the local memory so it holds no detectable secret; the push gate helper.

`run_scrub` takes the writer lock, rescans every block (or only blocks stored under older
rules), redacts in place, re-embeds rewritten chunks and reports counts (see
funes.ingest.scrub). Source transcripts are never modified.

`gate_store(store)` runs the publish gate (funes.redact.gate) over every chunk of an open
store, as `funes push` does over what it sends; `held_back_summary(store)` is the same
verdict kept up to date beside the memory for `funes status`. Both raise SecretScanFailed when
the scanner cannot be trusted.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from funes.errors import NoIndex
from funes.inference import embedder_name
from funes.memory import MemoryRef, Runtime, open_for_write
from funes.redact import GateResult, GateRow, Scanner, default_scanner, gate, gate_scanner
from funes.store import Store

if TYPE_CHECKING:  # loaded where used: a verb imports only what it runs
    from funes.ingest import ScrubReport


@dataclass(slots=True)
class ScrubOutcome:
    report: ScrubReport
    memory: str


def run_scrub(rt: Runtime, memory: MemoryRef, *, outdated_only: bool = False) -> ScrubOutcome:
    """Scrub `memory` in place under its writer lock.

    Raises NoIndex when the memory does not exist (scrub never creates one), StoreLocked when
    another writer holds the memory, IncompatibleStore when its embedding model cannot be
    matched, UsageError for a remote memory.
    """
    from funes.ingest import scrub

    if memory.path is not None and not memory.path.exists():
        raise NoIndex(
            f"no memory at {memory.path}: nothing to scrub", hint="run `funes index` first"
        )
    store = open_for_write(rt, memory)
    try:
        with store.writing():
            embedder = None
            if store.vectors_available and store.model_id is not None:
                spec = rt.embedder_spec_for(store.model_id)
                store.check_model(spec.model_id, selector=embedder_name(store.model_id))
                embedder = rt.embedder(spec)
            # the gate's cache stays: the memory logs the blocks scrub rewrites or drops, and
            # the next status judges those again (held_back_summary)
            report = scrub(store, default_scanner(), embedder, only_outdated=outdated_only)
        return ScrubOutcome(report, memory.label)
    finally:
        store.close()


def gate_store(store: Store, scanner: Scanner | None = None) -> GateResult:
    """The publish gate over every chunk of `store`, as `funes push` runs it: the gate's own
    detector set (default `gate_scanner()`) on every block and the current index-time rules on
    blocks stored under older ones (raises SecretScanFailed: publish nothing)."""
    rows = (GateRow(*row) for row in store.gate_rows())
    return gate(rows, scanner or gate_scanner(), rescan=default_scanner())


def gate_cache_path(store: Store) -> Path:
    """Where `held_back_summary` remembers its last scan, beside the memory file."""
    return store.path.with_name(store.path.name + ".gate.json")


@dataclass(frozen=True, slots=True)
class HeldBack:
    """What a push of the whole memory would hold back (chunk ids)."""

    ids: frozenset[str]
    # of those, the chunks `funes scrub` makes publishable: today's index-time rules redact
    # what held their blocks back (GateResult.redactable_ids)
    redactable: frozenset[str] = frozenset()


def held_back_summary(store: Store, scanner: Scanner | None = None) -> HeldBack:
    """What a push would hold back, judging again only the blocks changed since the last call.

    The verdict is cached beside the memory. A later call judges the blocks that gained chunks
    (rowids only grow) and those the memory logged as rewritten in place or losing chunks
    (`Store.rewritten_blocks`: a re-read transcript, scrub, forget), and forgets held ids no
    longer stored; it judges everything again when either detector set changed, the cache is
    damaged, or the memory's log no longer reaches back to it. So `funes status` stays fast on
    a large memory and says what `funes push` would do. Raises SecretScanFailed when the
    scanner cannot be trusted.
    """
    scanner = scanner or gate_scanner()
    rescan = default_scanner()
    versions = [scanner.version, rescan.version]
    cache = gate_cache_path(store)
    # Marks first, rows after: what a writer commits meanwhile is judged (again) next time.
    top, mark = store.max_rowid(), store.rewrite_mark()
    held: set[str] = set()
    redactable: set[str] = set()
    after = 0
    changed: list[tuple[int, int, str, int]] = []  # (session key, turn seq, turn id, block)
    try:
        saved = json.loads(cache.read_text())
        if saved["versions"] == versions and 0 < saved["watermark"] <= top:
            since = store.rewritten_blocks(int(saved["mark"])) if saved["mark"] <= mark else None
            if since is not None:
                held, redactable = set(saved["held"]), set(saved["redactable"])
                after, changed = int(saved["watermark"]), since
    except (OSError, ValueError, KeyError, TypeError):
        pass
    if after == 0 or after < top or changed:
        judged: set[str] = set()

        def rows() -> Iterator[GateRow]:
            for row in store.gate_rows(after_rowid=after, blocks=changed):
                judged.add(row[0])
                yield GateRow(*row)

        result = gate(rows(), scanner, rescan=rescan)
        held -= judged  # a block judged again keeps only its new verdict
        if changed and held:  # chunks deleted since: no longer held back
            held &= store.existing_ids(sorted(held))
        held.update(result.held_back_ids)
        redactable = (redactable & held) - judged | set(result.redactable_ids)
        saved = {
            "versions": versions,
            "watermark": top,
            "mark": mark,
            "held": sorted(held),
            "redactable": sorted(redactable),
        }
        try:
            tmp = cache.with_suffix(".tmp")
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "w") as f:
                json.dump(saved, f)
            os.replace(tmp, cache)
        except OSError:
            pass  # a read-only location: the next status scans again
    return HeldBack(frozenset(held), frozenset(redactable))
