"""Parse pi coding-agent sessions (`$PI_CODING_AGENT_DIR/sessions/**/*.jsonl`) into turns.

Line 1 is the header `{"type":"session", "version"?, "id", "timestamp", "cwd", …}` (no
`version` = v1). Every later line is an entry; `message` entries become turns by
`message.role`: `user` (string or part-list content), `assistant` (thinking, text and
`toolCall` parts in order), `toolResult` (inline `toolName`), `bashExecution` (a `!cmd` run
by the user: the command and its output), and the harness' own context messages (`custom`
/ `hookMessage`, `branchSummary`, `compactionSummary`) flagged as scaffolding. `compaction`,
`branch_summary` and `custom_message` entries are scaffolding turns too; state entries
(`model_change`, `label`, …) are not turns.

Session id = the file stem (`<ts>_<uuid>`, as the Rust reference). Turn id = the entry `id`
(v2+), or `line-<n>` for v1 entries that have none (line numbers are stable: the file only
grows — if pi migrates the file to v2 it rewrites it with ids, and it re-indexes under
them). The file is a tree (`parentId`), read in file order.

Status and models: a `toolResult` with `isError: true` is marked `ToolStatus.ERROR`; the tool
calls of an assistant message that ended with `stopReason` `error` or `aborted` never ran
(pi executes calls only after a complete response) and are marked `ToolStatus.NOT_RUN`. An
assistant turn's model is its message's `model`, else the last `model_change`, else a v1
header's `modelId`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from funes.traces.jsonl import compact_json, read_records
from funes.traces.labels import short_id
from funes.traces.model import Block, BlockType, Harness, Role, ToolStatus, Turn, normalize_ts
from funes.traces.source import ReadStats, Unit, file_unit, walk_files

_SCAFFOLD_ROLES = frozenset({"custom", "hookMessage", "branchSummary", "compactionSummary"})
_SUMMARY_ENTRIES = frozenset({"compaction", "branch_summary"})
_NEVER_RAN = frozenset({"error", "aborted"})


class PiSource:
    """pi sessions under `<pi agent dir>/sessions`."""

    harness = Harness.PI

    def __init__(self, home: Path) -> None:
        self.home = home
        self.root = home / "sessions"

    def units(self) -> Iterable[Unit]:
        for path in walk_files(self.root, "*.jsonl"):
            unit = file_unit(path, self.harness)
            if unit is not None:
                yield unit

    def read(self, unit: Unit, stats: ReadStats) -> Iterator[Turn]:
        return read_pi_file(unit.path, stats)

    def unit_for_hook(self, payload: Mapping[str, object]) -> Unit | None:
        """funes' pi extension sends `{session_file, session_id, cwd}` (`transcript_path` is
        accepted too). Without a usable path, the session is found by its header id in the
        file names under the sessions root."""
        for key in ("session_file", "transcript_path"):
            value = payload.get(key)
            if isinstance(value, str) and value.endswith(".jsonl"):
                unit = file_unit(Path(value), self.harness)
                if unit is not None:
                    return unit
        sid = payload.get("session_id")
        if isinstance(sid, str) and re.fullmatch(r"[0-9A-Za-z-]+", sid.strip()):
            for path in walk_files(self.root, f"*_{sid.strip()}.jsonl"):
                return file_unit(path, self.harness)
        return None


def is_pi_header(record: Mapping[str, Any]) -> bool:
    return record.get("type") == "session"


def read_pi_file(path: Path, stats: ReadStats) -> Iterator[Turn]:
    """Turns of one pi session file, in file order (see module docstring)."""
    session_id = path.stem
    cwd: str | None = None
    parent_session: str | None = None
    model: str | None = None
    seq = 0
    first = True
    for line_no, rec in read_records(path, stats):
        is_first, first = first, False
        kind = rec.get("type")
        if kind == "session":
            if is_first:
                cwd = rec["cwd"] if isinstance(rec.get("cwd"), str) and rec["cwd"] else None
                parent_session = _session_ref(rec.get("parentSession") or rec.get("branchedFrom"))
                model = _text(rec.get("modelId")) or model
            continue
        if kind == "model_change":  # state, not a turn (counted with the other state entries)
            model = _text(rec.get("modelId")) or model
        entry_id = rec.get("id") if isinstance(rec.get("id"), str) and rec["id"] else None
        parsed = _entry(rec, kind)
        if parsed is None:
            stats.unknown_records += 1
            continue
        role, blocks, scaffold, msg_ts = parsed
        if not blocks:
            continue
        message = rec.get("message")
        own = _text(message.get("model")) if isinstance(message, dict) else None
        yield Turn(
            harness=Harness.PI,
            session_id=session_id,
            turn_id=entry_id or f"line-{line_no}",
            seq=seq,
            ts=normalize_ts(rec.get("timestamp")) or normalize_ts(msg_ts),
            role=role,
            blocks=blocks,
            source_path=str(path),
            cwd=cwd,
            parent_id=rec["parentId"] if isinstance(rec.get("parentId"), str) else None,
            parent_session_id=parent_session,
            scaffold=scaffold,
            model=(own or model) if role is Role.ASSISTANT else None,
            project=cwd,
            session_label=short_id(session_id),
        )
        stats.turns += 1
        seq += 1


def _text(value: Any) -> str | None:
    return value.strip() if isinstance(value, str) and value.strip() else None


def _session_ref(value: Any) -> str | None:
    """A parent session reference (a session file path, or an id) as a session id (stem)."""
    if not isinstance(value, str) or not value.strip():
        return None
    name = value.strip().replace("\\", "/").rsplit("/", 1)[-1]
    return name.removesuffix(".jsonl") or None


def _entry(rec: Mapping[str, Any], kind: Any) -> tuple[Role, tuple[Block, ...], bool, Any] | None:
    """(role, blocks, scaffold, message timestamp) of an entry; None when it is not a turn."""
    if kind == "message":
        message = rec.get("message")
        if not isinstance(message, dict):
            return None
        return _message(message)
    if isinstance(kind, str) and kind in _SUMMARY_ENTRIES:
        return Role.USER, _text_blocks(rec.get("summary")), True, None
    if kind == "custom_message":
        return Role.USER, _text_blocks(rec.get("content")), True, None
    return None


def _message(message: Mapping[str, Any]) -> tuple[Role, tuple[Block, ...], bool, Any] | None:
    role = message.get("role")
    ts = message.get("timestamp")
    content = message.get("content")
    if role == "user":
        return Role.USER, _text_blocks(content), False, ts
    if role == "assistant":
        stop = message.get("stopReason")
        ran = not (isinstance(stop, str) and stop in _NEVER_RAN)
        return Role.ASSISTANT, _assistant_blocks(content, ran=ran), False, ts
    if role == "toolResult":
        text = "\n".join(_texts(content))
        call_id = message.get("toolCallId") if isinstance(message.get("toolCallId"), str) else None
        name = message.get("toolName") if isinstance(message.get("toolName"), str) else None
        if not text.strip():
            return Role.TOOL, (), False, ts
        status = ToolStatus.ERROR if message.get("isError") is True else None
        block = Block.make(
            BlockType.TOOL_RESULT, text, tool_name=name, tool_use_id=call_id, status=status
        )
        return Role.TOOL, (block,), False, ts
    if role == "bashExecution":
        return Role.USER, _bash_blocks(message), False, ts
    if isinstance(role, str) and role in _SCAFFOLD_ROLES:
        body = content if content is not None else message.get("summary")
        return Role.USER, _text_blocks(body), True, ts
    return None


def _texts(content: Any) -> list[str]:
    if isinstance(content, str):
        return [content]
    if not isinstance(content, list):
        return []
    return [
        p["text"]
        for p in content
        if isinstance(p, dict) and p.get("type") == "text" and isinstance(p.get("text"), str)
    ]


def _text_blocks(content: Any) -> tuple[Block, ...]:
    return tuple(Block.make(BlockType.TEXT, t) for t in _texts(content) if t.strip())


def _assistant_blocks(content: Any, *, ran: bool = True) -> tuple[Block, ...]:
    if isinstance(content, str):
        return _text_blocks(content)
    if not isinstance(content, list):
        return ()
    out: list[Block] = []
    for part in content:
        if not isinstance(part, dict):
            continue
        kind = part.get("type")
        if kind == "text" and isinstance(part.get("text"), str) and part["text"].strip():
            out.append(Block.make(BlockType.TEXT, part["text"]))
        elif (
            kind == "thinking"
            and isinstance(part.get("thinking"), str)
            and part["thinking"].strip()
        ):
            out.append(Block.make(BlockType.THINKING, part["thinking"]))
        elif kind == "toolCall":
            args = part.get("arguments")
            text = args if isinstance(args, str) else compact_json(args if args is not None else {})
            out.append(
                Block.make(
                    BlockType.TOOL_USE,
                    text,
                    tool_name=part.get("name") if isinstance(part.get("name"), str) else None,
                    tool_use_id=part.get("id") if isinstance(part.get("id"), str) else None,
                    status=None if ran else ToolStatus.NOT_RUN,
                )
            )
        # image parts and unknown kinds: not text
    return tuple(out)


def _bash_blocks(message: Mapping[str, Any]) -> tuple[Block, ...]:
    command = message.get("command")
    if not isinstance(command, str) or not command.strip():
        return ()
    blocks = [Block.make(BlockType.TOOL_USE, compact_json({"command": command}), tool_name="bash")]
    output = message.get("output")
    if isinstance(output, str) and output.strip():
        blocks.append(Block.make(BlockType.TOOL_RESULT, output, tool_name="bash"))
    return tuple(blocks)
