"""Tolerant, streaming JSONL reading for agent transcripts.

Agents append to their transcripts while we read them, crash mid-line, and write
multi-megabyte lines. This reader never raises on content: a corrupt line is skipped and
counted, an incomplete last line is noted (`truncated_tail`) and left for the next read (when
it can still become a record: it opens a JSON object in UTF-8; otherwise it is corrupt) —
unless the file has not changed for STALE_TAIL_S: then it is a truncated transcript, counted
(`cut_off_files`) instead, its complete lines read all the same. A line over
`max_line_bytes` is skipped without ever being held in memory, and invalid UTF-8 is decoded
with replacement characters. A UTF-8 byte-order mark before the first line is
dropped.
"""

from __future__ import annotations

import codecs
import json
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from funes.traces.source import ReadStats, open_regular

MAX_LINE_BYTES = 16 * 1024 * 1024
# An incomplete last line in a file unchanged for this long (seconds, by its mtime) is a cut-off
# transcript, not one being written: agents append each record in one write, so a live line
# stays half-written for milliseconds (seconds on a slow disk), never an hour; a crash, a full
# disk or a cut copy leaves it so for good. Either way the line is skipped and the file, once
# it changes (its signature is size:mtime), is read again.
STALE_TAIL_S = 3600.0
_CHUNK = 1024 * 1024
_BOM = b"\xef\xbb\xbf"


def read_records(
    path: Path, stats: ReadStats, *, max_line_bytes: int = MAX_LINE_BYTES
) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield `(line_number, record)` for every line that holds a JSON object.

    Line numbers are 1-based and count every physical line (blank and bad ones too), so they
    are stable as the file grows. Raises OSError only when the file cannot be opened (or is
    not a regular file).
    """
    with open_regular(path) as f:
        line_no = 0
        while True:
            raw, complete, oversized = _next_line(f, max_line_bytes)
            if raw is None:
                return
            line_no += 1
            if line_no == 1 and raw.startswith(_BOM):
                raw = raw[len(_BOM) :]  # a UTF-8 byte-order mark (Windows editors, PowerShell)
            if oversized:
                stats.oversized_records += 1
                continue
            if not raw.strip():
                continue
            record = _decode(raw, stats)
            if record is None:
                if not complete and _may_become_a_record(raw):
                    if _unchanged_for(f) >= STALE_TAIL_S:
                        stats.cut_off_files += 1  # nobody is writing it: truncated for good
                    else:
                        # The writer has not finished this line yet: the next read sees it whole.
                        stats.truncated_tail = True
                else:
                    stats.corrupt_records += 1
                continue
            if not isinstance(record, dict):
                stats.corrupt_records += 1
                continue
            stats.records += 1
            yield line_no, record


def _next_line(f: Any, limit: int) -> tuple[bytes | None, bool, bool]:
    """Read one line: (bytes without the newline, ended with a newline, was over the limit)."""
    first = f.readline(limit + 1)
    if not first:
        return None, False, False
    if first.endswith(b"\n"):
        return first[:-1], True, False
    if len(first) <= limit:
        return first, False, False  # EOF without a newline
    # Oversized: consume the rest of the line in bounded pieces and drop it.
    while True:
        piece = f.readline(_CHUNK)
        if not piece or piece.endswith(b"\n"):
            return b"", bool(piece), True


def _unchanged_for(f: Any) -> float:
    """Seconds since the open file `f` was last modified (0 when it cannot be told)."""
    try:
        return time.time() - os.fstat(f.fileno()).st_mtime
    except (OSError, ValueError):
        return 0.0


def _may_become_a_record(raw: bytes) -> bool:
    """Whether an unfinished last line could still grow into a record: it opens a JSON object
    and is UTF-8, but for a character its writer has not finished. Anything else (random
    bytes, a file that is not JSONL at all) is corrupt, whatever is appended to it."""
    if not raw.lstrip().startswith(b"{"):
        return False
    try:
        codecs.getincrementaldecoder("utf-8")().decode(raw, final=False)
    except UnicodeDecodeError:
        return False
    return True


def _decode(raw: bytes, stats: ReadStats) -> Any:
    """The line's JSON value, None when it holds none. Invalid UTF-8 is read as U+FFFD and
    counted in `stats.invalid_utf8` only for a line that is kept (a JSON object): a line
    that is corrupt anyway is counted once, as corrupt."""
    invalid = False
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        invalid = True
        text = raw.decode("utf-8", errors="replace")
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return None
    if invalid and isinstance(value, dict):
        stats.invalid_utf8 += 1
    return value


def compact_json(value: Any) -> str:
    """Compact JSON with non-ASCII kept literal (the tool_use text convention)."""
    try:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    except (TypeError, ValueError, RecursionError):
        return str(value)
