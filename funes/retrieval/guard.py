"""The read-side secret guard: rows redacted by older rules are rescanned before they are shown.

Every stored chunk records the redaction version it passed. A chunk below the current
scanner's version (a memory indexed before the rules improved, and not yet upgraded by
`funes index` / `funes scrub`) is redacted on the fly here, so recall, get and the MCP tools
never show what newer rules would catch. Up-to-date chunks cost nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from funes.redact import Scanner, redact
from funes.store import StoredChunk


def outdated(chunk: StoredChunk, scanner: Scanner) -> bool:
    return chunk.redaction_version < scanner.version


def guard_chunk(chunk: StoredChunk, scanner: Scanner) -> StoredChunk:
    """`chunk`, with its text redacted by `scanner` when it was stored under older rules."""
    if not outdated(chunk, scanner):
        return chunk
    text, findings = redact(chunk.text, scanner)
    return replace(chunk, text=text) if findings else chunk


def guard_chunks(chunks: Sequence[StoredChunk], scanner: Scanner) -> list[StoredChunk]:
    return [guard_chunk(c, scanner) for c in chunks]


def guard_block(text: str, chunks: Sequence[StoredChunk], scanner: Scanner) -> str:
    """A reassembled block's text, redacted when any of its chunks is outdated."""
    if not any(outdated(c, scanner) for c in chunks):
        return text
    return redact(text, scanner)[0]


def guard_text(text: str, version: int, scanner: Scanner) -> str:
    """Stored `text` that passed redaction `version`, redacted when that is older than `scanner`'s."""
    return redact(text, scanner)[0] if version < scanner.version else text
