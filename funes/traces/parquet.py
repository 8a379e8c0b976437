"""Import agent traces from Parquet (the Hugging Face agent-traces layout) as turns.

One row per session. Columns: `session_id` (string) and `messages` (list of JSON strings,
each an OpenAI-style chat message) are required; `sent_at` (session start), `harness`,
`file_path` and `metadata` (a JSON object string with `cwd`, `host`, `project`) are
optional. Messages map as: `user` → text; `assistant` → thinking (`reasoning_content` or
`reasoning`) + text + one tool_use per `tool_calls` entry; `tool` → tool_result (name from
`name`, else back-filled from the call's `tool_call_id`); `system`/`developer` are skipped.

`messages[i]` becomes the turn with `seq = i` and `turn_id = str(i)` whether or not earlier
messages were skipped, so message indexes stay valid turn indexes. Turn `ts` = the message's
own timestamp when it has one, else the row's `sent_at`. A row's `harness` names the agent
(`claude_code`, `codex`, `pi`, `hermes`); anything else is `parquet`.

The unit is the whole file (signature size:mtime): an unchanged file is never opened again.
It is read in small record batches, never as one table.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from funes.traces.jsonl import compact_json
from funes.traces.model import Block, BlockType, Harness, Role, Turn, normalize_ts
from funes.traces.source import ReadStats, Unit, file_unit, walk_files

REQUIRED = ("session_id", "messages")
OPTIONAL = ("sent_at", "harness", "file_path", "metadata")
_BATCH_ROWS = 8
_TS_KEYS = ("timestamp", "created_at", "ts", "sent_at")


class ParquetSource:
    """Agent-traces Parquet files: explicit files, or every `*.parquet` under a directory.

    `named=(root, base)` keys the files under `root` as `base/<path under root>` instead of
    by their location (a Hub dataset's files sit in an HF cache folder named after the commit;
    keyed `hf://datasets/org/repo/<file>`, a file unchanged by a later commit, the same cached
    blob, is not read again), and records that name as each turn's source path.
    """

    harness = Harness.PARQUET

    def __init__(self, paths: Iterable[Path] = (), named: tuple[Path, str] | None = None) -> None:
        self.paths = tuple(paths)
        self.named = named

    def units(self) -> Iterable[Unit]:
        for root in self.paths:
            files = [root] if root.is_file() else walk_files(root, "*.parquet")
            for path in files:
                unit = file_unit(path, self.harness)
                if unit is not None and self.named is not None:
                    base, name = self.named
                    unit = replace(unit, key=f"{name}/{path.relative_to(base).as_posix()}")
                if unit is not None:
                    yield unit

    def read(self, unit: Unit, stats: ReadStats) -> Iterator[Turn]:
        source = unit.key if self.named is not None else None
        return read_parquet_file(unit.path, stats, source_path=source)

    def unit_for_hook(self, payload: Mapping[str, object]) -> Unit | None:
        return None  # imports are explicit; no agent hook points at a parquet file


def read_parquet_file(
    path: Path, stats: ReadStats, *, source_path: str | None = None
) -> Iterator[Turn]:
    """Turns of every session row of one agent-traces Parquet file, row by row
    (`source_path`: what turns record as their source, default the file's path).

    Raises OSError when the file cannot be opened or is not Parquet.
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        pf = pq.ParquetFile(path)
    except (pa.ArrowInvalid, pa.ArrowIOError) as exc:
        raise OSError(f"not a readable Parquet file: {exc}") from exc
    names = set(pf.schema_arrow.names)
    if not set(REQUIRED) <= names:
        stats.notes.append(f"{path.name}: no session_id/messages columns; not an agent-traces file")
        return
    columns = [*REQUIRED, *(c for c in OPTIONAL if c in names)]
    try:
        for batch in pf.iter_batches(batch_size=_BATCH_ROWS, columns=columns):
            for row in batch.to_pylist():
                yield from _row_turns(row, source_path or str(path), stats)
    except pa.ArrowException as exc:
        stats.corrupt_records += 1
        stats.notes.append(
            f"{path.name}: stopped at an unreadable row group ({type(exc).__name__})"
        )


def _row_turns(row: Mapping[str, Any], source: str, stats: ReadStats) -> Iterator[Turn]:
    session_id = row.get("session_id")
    messages = row.get("messages")
    if not isinstance(session_id, str) or not session_id.strip() or not isinstance(messages, list):
        stats.corrupt_records += 1
        return
    harness = _harness(row.get("harness"))
    meta = _metadata(row.get("metadata"))
    cwd = meta.get("cwd") if isinstance(meta.get("cwd"), str) and meta["cwd"] else None
    host = meta.get("host") if isinstance(meta.get("host"), str) and meta["host"] else None
    sent_at = normalize_ts(row.get("sent_at"))
    tool_names: dict[str, str] = {}
    for i, raw in enumerate(messages):
        message = _message(raw)
        if message is None:
            stats.corrupt_records += 1
            continue
        stats.records += 1
        role, blocks = _blocks(message, tool_names)
        if role is None:
            if message.get("role") not in ("system", "developer"):
                stats.unknown_records += 1
            continue
        if not blocks:
            continue
        yield Turn(
            harness=harness,
            session_id=session_id,
            turn_id=str(i),
            seq=i,
            ts=_message_ts(message) or sent_at,
            role=role,
            blocks=blocks,
            source_path=source,
            cwd=cwd,
            host=host,
        )
        stats.turns += 1


def _harness(value: Any) -> Harness:
    """The row's agent (`claude_code`/`claude`, `codex`, `pi`, `hermes`), else PARQUET."""
    if not isinstance(value, str) or not value.strip():
        return Harness.PARQUET
    try:
        return Harness.parse(value) or Harness.PARQUET
    except ValueError:
        return Harness.PARQUET


def _message(raw: Any) -> dict[str, Any] | None:
    if isinstance(raw, dict):
        return raw
    if not isinstance(raw, str | bytes):
        return None
    try:
        value = json.loads(raw)
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def _metadata(raw: Any) -> dict[str, Any]:
    if isinstance(raw, dict):
        return raw
    if isinstance(raw, str) and raw.strip():
        try:
            value = json.loads(raw)
        except (ValueError, RecursionError):
            return {}
        return value if isinstance(value, dict) else {}
    return {}


def _message_ts(message: Mapping[str, Any]) -> str:
    for key in _TS_KEYS:
        ts = normalize_ts(message.get(key))
        if ts:
            return ts
    return ""


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            p["text"]
            for p in content
            if isinstance(p, dict)
            and p.get("type") in (None, "text", "input_text", "output_text")
            and isinstance(p.get("text"), str)
        )
    return ""


def _blocks(
    message: Mapping[str, Any], tool_names: dict[str, str]
) -> tuple[Role | None, tuple[Block, ...]]:
    role = message.get("role")
    text = _text(message.get("content"))
    if role == "user":
        return Role.USER, (Block.make(BlockType.TEXT, text),) if text.strip() else ()
    if role == "assistant":
        blocks: list[Block] = []
        thinking = message.get("reasoning_content") or message.get("reasoning")
        if isinstance(thinking, str) and thinking.strip():
            blocks.append(Block.make(BlockType.THINKING, thinking))
        if text.strip():
            blocks.append(Block.make(BlockType.TEXT, text))
        calls = message.get("tool_calls")
        for call in calls if isinstance(calls, list) else []:
            if isinstance(call, dict):
                blocks.append(_tool_use(call, tool_names))
        return Role.ASSISTANT, tuple(blocks)
    if role == "tool":
        call_id = (
            message.get("tool_call_id") if isinstance(message.get("tool_call_id"), str) else None
        )
        name = message.get("name") if isinstance(message.get("name"), str) else None
        name = name or tool_names.get(call_id or "")
        if not text.strip():
            return Role.TOOL, ()
        return Role.TOOL, (
            Block.make(BlockType.TOOL_RESULT, text, tool_name=name, tool_use_id=call_id),
        )
    return None, ()


def _tool_use(call: Mapping[str, Any], tool_names: dict[str, str]) -> Block:
    fn_raw = call.get("function")
    fn: dict[str, Any] = fn_raw if isinstance(fn_raw, dict) else {}
    name = fn.get("name") if isinstance(fn.get("name"), str) else None
    call_id = call.get("id") if isinstance(call.get("id"), str) else None
    if call_id and name:
        tool_names[call_id] = name
    args = fn.get("arguments")
    text = args if isinstance(args, str) else compact_json(args if args is not None else {})
    return Block.make(BlockType.TOOL_USE, text, tool_name=name, tool_use_id=call_id)
