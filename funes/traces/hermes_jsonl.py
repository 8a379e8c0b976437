"""Hermes' secondary transcripts, `$HERMES_HOME/sessions/<YYYYMMDD_HHMMSS>_<hex>.jsonl`, read when
given as a path (`funes index ~/.hermes/sessions/x.jsonl`); the sweep reads `state.db`.

Line 1 is `{"role": "session_meta", "model", "platform", "tools", "timestamp"}`; every later
line is an OpenAI-style message `{"role": "user"|"assistant"|"tool", "content", "reasoning"?,
"tool_calls"? (a list), "tool_call_id"?, "name"?|"tool_name"?, "timestamp" (naive local
ISO, read as UTC)}`. Mapped as the database rows are (`funes.traces.hermes`): harness Hermes,
session id = the file stem (`<profile>:<stem>` under a profile's home), turn id `line-<n>`.
A directory that also holds a Hermes `state.db` is indexed from the database only: these files
mirror it, under other turn ids.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from funes.traces.hermes import DB_NAME, is_cron_preamble, session_key, text_blocks
from funes.traces.jsonl import compact_json, read_records
from funes.traces.labels import short_id
from funes.traces.model import Block, BlockType, Harness, Role, Turn, normalize_ts
from funes.traces.source import ReadStats


def is_hermes_jsonl_header(record: Mapping[str, Any]) -> bool:
    return record.get("role") == "session_meta"


def read_hermes_jsonl(path: Path, stats: ReadStats) -> Iterator[Turn]:
    """Turns of one Hermes `sessions/*.jsonl` file, in file order (see module docstring)."""
    home = path.parent.parent if path.parent.name == "sessions" else path.parent
    session = session_key(home / DB_NAME, path.stem)
    model: str | None = None
    names: dict[str, str] = {}
    seq = 0
    for line_no, rec in read_records(path, stats):
        role = rec.get("role")
        if role == "session_meta":
            if isinstance(rec.get("model"), str) and rec["model"].strip():
                model = rec["model"].strip()
            continue
        if role == "user":
            turn_role, blocks = Role.USER, text_blocks(rec.get("content"))
        elif role == "assistant":
            turn_role, blocks = Role.ASSISTANT, _assistant(rec, names)
        elif role == "tool":
            turn_role, blocks = Role.TOOL, _tool(rec, names)
        else:
            stats.unknown_records += 1
            continue
        if not blocks:
            continue
        yield Turn(
            harness=Harness.HERMES,
            session_id=session,
            turn_id=f"line-{line_no}",
            seq=seq,
            ts=normalize_ts(rec.get("timestamp")),
            role=turn_role,
            blocks=blocks,
            source_path=str(path),
            scaffold=turn_role is Role.USER and is_cron_preamble(blocks[0].text),
            model=model if turn_role is Role.ASSISTANT else None,
            session_label=short_id(session),
        )
        stats.turns += 1
        seq += 1


def _assistant(rec: Mapping[str, Any], names: dict[str, str]) -> tuple[Block, ...]:
    blocks: list[Block] = []
    for key in ("reasoning_content", "reasoning"):
        value = rec.get(key)
        if isinstance(value, str) and value.strip():
            blocks.append(Block.make(BlockType.THINKING, value))
            break
    blocks.extend(text_blocks(rec.get("content")))
    calls = rec.get("tool_calls")
    if isinstance(calls, str):
        try:
            calls = json.loads(calls)
        except (ValueError, RecursionError):
            calls = []
    for call in calls if isinstance(calls, list) else []:
        if not isinstance(call, dict):
            continue
        raw = call.get("function")
        fn: dict[str, Any] = raw if isinstance(raw, dict) else {}
        name = fn.get("name") if isinstance(fn.get("name"), str) else None
        call_id = call.get("id") if isinstance(call.get("id"), str) else None
        if call_id and name:
            names[call_id] = name
        args = fn.get("arguments")
        text = args if isinstance(args, str) else compact_json(args if args is not None else {})
        blocks.append(Block.make(BlockType.TOOL_USE, text, tool_name=name, tool_use_id=call_id))
    return tuple(blocks)


def _tool(rec: Mapping[str, Any], names: Mapping[str, str]) -> tuple[Block, ...]:
    body = text_blocks(rec.get("content"))
    if not body:
        return ()
    call_id = rec.get("tool_call_id") if isinstance(rec.get("tool_call_id"), str) else None
    name = next(
        (rec[k] for k in ("tool_name", "name") if isinstance(rec.get(k), str) and rec[k]),
        names.get(call_id or ""),
    )
    return (Block.make(BlockType.TOOL_RESULT, body[0].text, tool_name=name, tool_use_id=call_id),)
