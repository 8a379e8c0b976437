"""Rewrite stored chunks in place so they hold no detectable secret (`funes scrub`, upgrades).

Blocks are rescanned whole (chunks reassembled); findings are redacted exactly in every chunk
they touch, rewritten chunks are re-embedded (their vector rows replaced), chunks of a block
whose redaction cannot be verified are deleted, and untouched chunks keep their vectors. Every
scanned chunk records the scanner's version. Source transcripts are never touched.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from funes.chunks import LEGACY_EMBED_INPUT
from funes.inference import Embedder
from funes.ingest.embed_input import stored_embedding_inputs
from funes.redact import Scanner, rewrite_block
from funes.store import BlockRows, Store

BATCH_BLOCKS = 256


@dataclass(slots=True)
class ScrubReport:
    """What a scrub did. Counts only; never text."""

    blocks_scanned: int = 0
    chunks_scanned: int = 0
    blocks_redacted: int = 0
    chunks_rewritten: int = 0
    blocks_dropped: int = 0
    chunks_dropped: int = 0
    findings: int = 0
    chunks_reembedded: int = 0
    version: int = 0
    elapsed_s: float = 0.0
    notes: list[str] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        return bool(self.chunks_rewritten or self.chunks_dropped)


def scrub(
    store: Store, scanner: Scanner, embedder: Embedder | None, *, only_outdated: bool
) -> ScrubReport:
    """Rescan every block (or only blocks with chunks below `scanner.version`) and rewrite.

    The caller holds the writer lock. Scanner errors propagate (nothing half-done is
    committed for the failing batch; earlier batches stay rewritten, which is safe).
    """
    started = time.monotonic()
    report = ScrubReport(version=scanner.version)
    todo = store.blocks_for_rescan(below_version=scanner.version if only_outdated else None)
    for start in range(0, len(todo), BATCH_BLOCKS):
        _batch(store, scanner, embedder, todo[start : start + BATCH_BLOCKS], report)
    store.set_redaction_floor(scanner.version)
    if report.changed:
        store.purge_freed_text()
    vectors = store.vectors_available and store.model_id is not None
    if report.chunks_rewritten and report.chunks_reembedded < report.chunks_rewritten and vectors:
        report.notes.append(
            "rewritten chunks without an embedder lost their vectors; `funes index` re-embeds them"
        )
    report.elapsed_s = time.monotonic() - started
    return report


def _batch(
    store: Store,
    scanner: Scanner,
    embedder: Embedder | None,
    blocks: list[BlockRows],
    report: ScrubReport,
) -> None:
    texts = store.chunk_texts([r for b in blocks for r in b.rowids])
    updates: list[tuple[int, str]] = []
    drop: list[int] = []
    passed: list[int] = []
    for block in blocks:
        rowids = [r for r in block.rowids if r in texts]
        report.blocks_scanned += 1
        report.chunks_scanned += len(rowids)
        outcome = rewrite_block([texts[r] for r in rowids], scanner)
        report.findings += outcome.findings
        if outcome.drop:
            report.blocks_dropped += 1
            report.chunks_dropped += len(rowids)
            drop.extend(rowids)
            continue
        if outcome.findings:
            report.blocks_redacted += 1
        for rowid, text, changed in zip(rowids, outcome.texts, outcome.changed, strict=True):
            if changed:
                updates.append((rowid, text))
            else:
                passed.append(rowid)
    vectors = None
    if updates and embedder is not None and store.vectors_available and store.model_id is not None:
        vectors = embedder.embed(stored_embedding_inputs(store, updates))
        report.chunks_reembedded += len(updates)
    report.chunks_rewritten += len(updates)
    store.rewrite_chunks(
        updates, vectors, redaction_version=scanner.version, drop=drop, passed=passed
    )
    _refresh_exchanges(store, embedder, [r for r, _ in updates], report)


def _refresh_exchanges(
    store: Store, embedder: Embedder | None, rewritten: list[int], report: ScrubReport
) -> None:
    """Re-embed the chunks whose embedding context is a prompt this batch rewrote.

    Under the prompt-context recipe an assistant or tool chunk is embedded with the user
    prompt that opened its exchange: when the prompt held a secret, so did their embedding
    input. Their texts and redaction versions stay as they are; only the vectors change
    (dropped without an embedder, for a later backfill)."""
    if store.embedding_input == LEGACY_EMBED_INPUT or not rewritten:
        return
    if not (store.vectors_available and store.model_id is not None):
        return
    rows = store.fetch(rewritten)
    prompts = [c for c in rows.values() if c.role == "user" and c.block_type == "text"]
    done = set(rewritten)
    stale: list[tuple[int, str]] = []
    for prompt in prompts:
        for rowid, text in store.exchange(prompt):
            if rowid not in done:
                done.add(rowid)
                stale.append((rowid, text))
    if not stale:
        return
    vectors = embedder.embed(stored_embedding_inputs(store, stale)) if embedder else None
    store.replace_vectors([r for r, _ in stale], vectors)
    report.chunks_reembedded += len(stale) if vectors is not None else 0
