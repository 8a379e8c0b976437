"""The publish gate and block rewriting: secrets judged on whole blocks, never on lone chunks.

Pure functions over stored chunk rows (no store, no network). Chunks of one block are
reassembled (`funes.chunks.reassemble_spans`) so a secret split across two chunks is still
seen; every chunk is also scanned on its own, in case reassembly glued pieces wrongly.

* `gate(rows, scanner, rescan=…) -> GateResult`: which chunk ids may be published and which
  are held back (every chunk of a block with any finding). Used by `funes push` and `funes
  status` with two independent detector sets: `scanner` is the gate's own set
  (`funes.redact.gate_scanner()`, run over every block) and `rescan` the current index-time
  set (`default_scanner()`), run over every block with a chunk stored under an older
  `redaction_version` (its text was redacted by older rules, so today's rules get a look
  before it leaves the machine). A held-back block is *redactable* when redacting it in
  place with `rescan`, as `funes scrub` does, leaves nothing the gate holds back; what only the
  gate's own set finds stays until the transcript no longer holds it and is re-read. Fail
  closed: a scanner that raises, or that misses a known fake secret (the canary), makes `gate`
  raise `SecretScanFailed`; publish nothing then.
* `rewrite_block(pieces, scanner) -> BlockRewrite`: the redacted text of each chunk of a block
  (`funes scrub`), or `drop=True` when the redaction cannot be verified.

Summaries count findings per rule; secret values never leave this module.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from funes.chunks import reassemble_spans
from funes.errors import SecretScanFailed
from funes.redact.scanner import MARKER_PREFIX, Finding, Scanner, merge

BlockKey = tuple[str, str, int]  # (session_id, turn_id, block_idx)


@dataclass(frozen=True, slots=True)
class GateRow:
    """One stored chunk as the gate needs it."""

    id: str
    session_id: str
    turn_id: str
    block_idx: int
    split_idx: int
    text: str
    redaction_version: int = -1  # the rules it was stored under; -1: unknown (rescan it)


@dataclass(slots=True)
class GateResult:
    """What may leave the machine. Ids keep input order; counts only, never secret values."""

    publishable_ids: list[str] = field(default_factory=list)
    held_back_ids: list[str] = field(default_factory=list)
    # of those, the chunks `funes scrub` makes publishable: today's index-time rules redact
    # what held their block back (text stored under older rules, mostly)
    redactable_ids: list[str] = field(default_factory=list)
    findings_by_rule: dict[str, int] = field(default_factory=dict)
    blocks_scanned: int = 0
    blocks_held_back: int = 0
    blocks_rescanned: int = 0  # blocks stored under older rules, rescanned with current ones
    scanner_version: int = 0

    @property
    def nothing_to_publish(self) -> bool:
        return not self.publishable_ids


_ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"


def _canary() -> str:
    # A fake AWS key id and GitHub token, assembled here so no source file holds one.
    body = "".join(_ALNUM[(i * 37 + 11) % 62] for i in range(36))
    return "id " + "AK" + "IA" + "Q7ZK3M5T2W4Y6B8D" + " and " + "gh" + "p_" + body


def check_scanner(scanner: Scanner) -> None:
    """Raise SecretScanFailed unless `scanner` runs and finds the canary secret."""
    try:
        found = scanner.scan(_canary())
    except Exception as exc:
        raise SecretScanFailed(
            f"the secret scanner cannot run ({type(exc).__name__})",
            hint="nothing was published; reinstall funes (detect-secrets must import) and retry",
        ) from exc
    if not found:
        raise SecretScanFailed(
            "the secret scanner missed a known test secret",
            hint="nothing was published; the scanner is broken or misconfigured",
        )


def _group(rows: Iterable[GateRow]) -> dict[BlockKey, list[GateRow]]:
    blocks: dict[BlockKey, list[GateRow]] = {}
    for row in rows:
        blocks.setdefault((row.session_id, row.turn_id, row.block_idx), []).append(row)
    for chunks in blocks.values():
        chunks.sort(key=lambda r: r.split_idx)
    return blocks


def block_findings(pieces: Sequence[str], scanner: Scanner) -> list[Finding]:
    """Findings of a block: on the reassembled text and on each piece (spans not comparable)."""
    text, _ = reassemble_spans(list(pieces))
    found = list(scanner.scan(text))
    if len(pieces) > 1:
        for piece in pieces:
            found.extend(scanner.scan(piece))
    return found


def gate(rows: Iterable[GateRow], scanner: Scanner, *, rescan: Scanner | None = None) -> GateResult:
    """Split `rows` into publishable and held-back chunk ids (see module docstring).

    Raises SecretScanFailed when a scanner cannot be trusted; the caller publishes nothing.
    """
    check_scanner(scanner)
    if rescan is not None:
        check_scanner(rescan)
    result = GateResult(scanner_version=scanner.version)
    held: set[str] = set()
    redactable: set[str] = set()
    order: list[str] = []
    try:
        for chunks in _group(rows).values():
            result.blocks_scanned += 1
            order.extend(r.id for r in chunks)
            pieces = [r.text for r in chunks]
            findings = block_findings(pieces, scanner)
            if rescan is not None and min(r.redaction_version for r in chunks) < rescan.version:
                result.blocks_rescanned += 1
                findings.extend(block_findings(pieces, rescan))
            if findings:
                result.blocks_held_back += 1
                held.update(r.id for r in chunks)
                if rescan is not None and _scrub_clears(pieces, rescan, scanner):
                    redactable.update(r.id for r in chunks)
                for f in findings:
                    result.findings_by_rule[f.rule] = result.findings_by_rule.get(f.rule, 0) + 1
    except SecretScanFailed:
        raise
    except Exception as exc:
        raise SecretScanFailed(
            f"the secret scan failed ({type(exc).__name__})",
            hint="nothing was published; report this with `funes --debug push`",
        ) from exc
    for chunk_id in order:
        (result.held_back_ids if chunk_id in held else result.publishable_ids).append(chunk_id)
        if chunk_id in redactable:
            result.redactable_ids.append(chunk_id)
    return result


def _scrub_clears(pieces: Sequence[str], rules: Scanner, scanner: Scanner) -> bool:
    """Whether `funes scrub` would make the block publishable: today's index-time `rules`
    redact something in it (`rewrite_block`), verifiably, and the gate's own set finds nothing
    in what is left."""
    rewrite = rewrite_block(pieces, rules)
    return rewrite.findings > 0 and not rewrite.drop and not block_findings(rewrite.texts, scanner)


@dataclass(frozen=True, slots=True)
class BlockRewrite:
    """The outcome of redacting one block in place.

    `texts[i]` is the new text of piece i (unchanged pieces keep theirs); `drop` means the
    redaction could not be verified and every chunk of the block must be removed.
    """

    texts: tuple[str, ...]
    changed: tuple[bool, ...]
    findings: int
    drop: bool = False


def _apply(text: str, spans: list[Finding]) -> str:
    parts: list[str] = []
    pos = 0
    for f in spans:
        parts.append(text[pos : f.start])
        parts.append(f"{MARKER_PREFIX}{f.rule}]")
        pos = f.end
    parts.append(text[pos:])
    return "".join(parts)


def rewrite_block(pieces: Sequence[str], scanner: Scanner) -> BlockRewrite:
    """Redact a stored block piece by piece, mapping block-level findings onto each piece.

    A finding on the reassembled block is cut to each piece it overlaps (a secret split across
    two chunks is redacted in both); each piece's own findings are added. The result is
    verified by scanning every new piece and their reassembly; any finding left → `drop`.
    """
    pieces = list(pieces)
    text, offsets = reassemble_spans(pieces)
    block = scanner.scan(text)
    new_texts: list[str] = []
    changed: list[bool] = []
    total = len(block)
    for piece, offset in zip(pieces, offsets, strict=True):
        local = [
            (f.rule, max(f.start, offset) - offset, min(f.end, offset + len(piece)) - offset)
            for f in block
            if f.start < offset + len(piece) and f.end > offset
        ]
        own = scanner.scan(piece) if len(pieces) > 1 else []
        total += len(own)
        local.extend((f.rule, f.start, f.end) for f in own)
        spans = merge(local)
        new_texts.append(_apply(piece, spans) if spans else piece)
        changed.append(bool(spans))
    if total == 0:
        return BlockRewrite(tuple(pieces), tuple(changed), 0)
    verified = not any(scanner.scan(t) for t in new_texts) and not scanner.scan(
        reassemble_spans(new_texts)[0]
    )
    return BlockRewrite(tuple(new_texts), tuple(changed), total, drop=not verified)
