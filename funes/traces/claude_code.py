"""Parse Claude Code transcripts (`<config>/projects/**/*.jsonl`) into turns.

Knows Claude Code's JSONL record shapes and nothing else. Only `user` and `assistant`
records become turns; every other record type (summary, system, attachment, progress,
queue-operation, …) is counted as unknown and skipped, because Claude Code adds types
between releases. One API response is written as several records (one per content block),
each with its own `uuid`: each record is one turn, keyed by that `uuid` (a line repeated with
the same `uuid` is read once). Block mapping, slash commands and spilled tool output:
`funes.traces.claude_blocks`.

Sessions. Session id = the file stem (as the Rust reference), so a subagent file
(`…/<session>/subagents/agent-<id>.jsonl`, or 2.0's flat `agent-<id>.jsonl`) is its own session
whose `parent_session_id` is the `sessionId` its records carry, labelled
`<parent>/<agent type>-<id>` from its `agent-<id>.meta.json` (`agentType`, else a slug of
`description`), else the id's prefix (`aside_question`), else `agent`.

Inline sidechains (Claude Code 1.x, and 2.0's "Warmup" pair): records with `isSidechain: true`
inside a main session file are a subagent's traffic — the prompt the main agent wrote for it,
its replies and tool calls. Each chain (followed through `parentUuid` from a sidechain record
whose parent is not a sidechain record) becomes a session of its own, `sidechain-<root uuid>`,
linked to the file's session (`parent_session_id`) and labelled `<parent>/<kind>-<root>`, where
kind is the `subagent_type` of the Task call whose prompt the chain starts with, `warmup` for
a chain that starts with the literal prompt `Warmup` (all of it scaffolding), else
`sidechain`. The main session keeps only its own turns, numbered without gaps.

Order. A tool_result record written before the tool_use it answers (seen for Write/Edit) is
held back until that call has been read — at most `HOLD_RECORDS` records — and then follows
it, named after it. Facets: `cwd` per record, `project` = the file's first cwd (one workdir
facet for the whole session even after a `cd`), `model` = `message.model` of assistant records
(not the `<synthetic>` of API-error records).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from funes.traces.claude_blocks import (
    content_blocks,
    first_text,
    is_scaffold_text,
    spill_dir,
    task_prompts,
    tool_use_names,
)
from funes.traces.jsonl import read_records
from funes.traces.labels import child_label, short_id, slug
from funes.traces.model import Block, BlockType, Harness, Role, Turn, normalize_ts
from funes.traces.source import (
    ReadStats,
    Unit,
    file_unit,
    open_regular,
    walk_files,
)

HOLD_RECORDS = 20  # records a result waits for its call before it is emitted where it stands
SIDECHAIN_PREFIX = "sidechain-"
_META_MAX_BYTES = 64 * 1024
_SYNTHETIC_MODEL = "<synthetic>"


def is_subagent_file(path: Path) -> bool:
    return path.stem.startswith("agent-") or path.parent.name == "subagents"


def meta_path(path: Path) -> Path:
    """`agent-<id>.meta.json` beside a subagent transcript."""
    return path.with_name(f"{path.stem}.meta.json")


def claude_unit(path: Path, *, secondary: bool | None = None) -> Unit | None:
    """A Unit for one Claude Code transcript. Its signature also covers the files the read
    takes text from besides the transcript — the session's spilled tool results and a
    subagent's `.meta.json` — so one that appears after the transcript line is read again."""
    side = is_subagent_file(path) if secondary is None else secondary
    unit = file_unit(path, Harness.CLAUDE_CODE, secondary=side)
    if unit is None or unit.signature is None:
        return unit
    extra = _dir_stamp(spill_dir(path))
    if is_subagent_file(path):
        extra += _file_stamp(meta_path(path))
    return replace(unit, signature=f"{unit.signature}{extra}") if extra else unit


def _dir_stamp(folder: Path) -> str:
    count = size = newest = 0
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return ""
    for entry in entries:
        try:
            st = entry.stat(follow_symlinks=False)
        except OSError:
            continue
        count += 1
        size += st.st_size
        newest = max(newest, st.st_mtime_ns)
    return f"+tr{count}:{size}:{newest}" if count else ""


def _file_stamp(path: Path) -> str:
    try:
        st = path.stat()
    except OSError:
        return ""
    return f"+meta{st.st_size}:{st.st_mtime_ns}"


class ClaudeCodeSource:
    """Claude Code sessions under `<claude home>/projects`."""

    harness = Harness.CLAUDE_CODE

    def __init__(self, home: Path) -> None:
        self.home = home
        self.root = home / "projects"

    def units(self) -> Iterable[Unit]:
        for path in walk_files(self.root, "*.jsonl"):
            unit = claude_unit(path)
            if unit is not None:
                yield unit

    def unit_for_hook(self, payload: Mapping[str, object]) -> Unit | None:
        for key in ("agent_transcript_path", "transcript_path"):
            value = payload.get(key)
            if isinstance(value, str) and value.endswith(".jsonl"):
                path = Path(value)
                if _inside(path, self.root):
                    return claude_unit(path)
        return None

    def read(self, unit: Unit, stats: ReadStats) -> Iterator[Turn]:
        return read_claude_file(unit.path, stats)


def _inside(path: Path, root: Path) -> bool:
    try:
        return path.resolve().is_relative_to(root.resolve())
    except (OSError, RuntimeError):
        return False


def read_claude_file(path: Path, stats: ReadStats) -> Iterator[Turn]:
    """Turns of one Claude Code transcript, in file order (see module docstring)."""
    return _Reader(path).turns(stats)


@dataclass(slots=True)
class _Held:
    turn: dict[str, Any]  # a Turn's fields but its seq
    left: int = HOLD_RECORDS


@dataclass(slots=True)
class _Reader:
    path: Path
    subagent: bool = False
    project: str | None = None
    cwd: str | None = None
    parent: str | None = None  # a subagent file's parent session (its records' sessionId)
    tool_names: dict[str, str] = field(default_factory=dict)
    seen: set[str] = field(default_factory=set)
    seqs: dict[str, int] = field(default_factory=dict)
    chains: dict[str, str] = field(default_factory=dict)  # sidechain record uuid → chain root
    kinds: dict[str, str] = field(default_factory=dict)  # chain root → agent kind
    prompts: dict[str, str] = field(default_factory=dict)  # Task prompt → subagent type
    held: list[_Held] = field(default_factory=list)
    labels: dict[str, str] = field(default_factory=dict)  # session id → label
    stem: str = ""
    source: str = ""

    def __post_init__(self) -> None:
        self.subagent = is_subagent_file(self.path)
        self.stem, self.source = self.path.stem, str(self.path)

    def turns(self, stats: ReadStats) -> Iterator[Turn]:
        for _line_no, rec in read_records(self.path, stats):
            yield from self._tick(stats)
            kind = rec.get("type")
            uuid = rec.get("uuid")
            side = not self.subagent and rec.get("isSidechain") is True
            if side and isinstance(uuid, str) and uuid:
                self._link(uuid, rec.get("parentUuid"))
            if kind not in ("user", "assistant"):
                stats.unknown_records += 1
                continue
            message = rec.get("message")
            if not isinstance(message, dict) or not isinstance(uuid, str) or not uuid:
                stats.corrupt_records += 1
                continue
            if uuid in self.seen:
                continue  # the same record written twice
            self.seen.add(uuid)
            turn = self._turn(rec, kind, message, uuid, side)
            if turn is None:
                continue
            if turn["role"] is Role.TOOL and any(
                b.tool_use_id and b.tool_use_id not in self.tool_names for b in turn["blocks"]
            ):
                self.held.append(_Held(turn))  # its call comes later: wait for it
                continue
            yield self._emit(turn, stats)
            yield from self._release(stats)
        for held in self.held:
            yield self._emit(held.turn, stats)
        self.held = []

    # -- sidechains ---------------------------------------------------------------------

    def _link(self, uuid: str, parent: Any) -> None:
        root = self.chains.get(parent) if isinstance(parent, str) else None
        self.chains[uuid] = root or uuid

    def _session_for(self, uuid: str, side: bool) -> tuple[str, str, str | None]:
        """(session id, label, parent session) of a record."""
        if side:
            root = self.chains.get(uuid, uuid)
            session = f"{SIDECHAIN_PREFIX}{root}"
            label = self.labels.get(session)
            if label is None:
                kind = self.kinds.get(root, "sidechain")
                label = self.labels[session] = child_label(self.stem, kind, root)
            return session, label, self.stem
        label = self.labels.get(self.stem)
        if label is None:
            label = self._subagent_label() if self.subagent else short_id(self.stem)
            if not self.subagent or self.parent is not None:
                self.labels[self.stem] = label
        return self.stem, label, self.parent if self.subagent else None

    def _subagent_label(self) -> str:
        agent = self.stem.removeprefix("agent-")
        kind = _meta_kind(meta_path(self.path))
        prefix, _, rest = agent.rpartition("-")
        if prefix and rest:
            kind, agent = kind or prefix, rest
        if self.parent is None:
            return short_id(self.stem) if kind is None else f"{slug(kind)}-{agent[:8]}"
        return child_label(self.parent, kind or "agent", agent)

    # -- one record ---------------------------------------------------------------------

    def _turn(
        self, rec: Mapping[str, Any], kind: str, message: Mapping[str, Any], uuid: str, side: bool
    ) -> dict[str, Any] | None:
        """A Turn's fields (all but its seq) for one record, None when it has no blocks."""
        if isinstance(rec.get("cwd"), str) and rec["cwd"]:
            self.cwd = rec["cwd"]
            self.project = self.project or rec["cwd"]
        sid = rec.get("sessionId")
        if self.subagent and self.parent is None and isinstance(sid, str) and sid != self.stem:
            self.parent = sid
        content = message.get("content")
        self.tool_names.update(tool_use_names(content))
        root = self.chains.get(uuid, uuid) if side else None
        if root == uuid and kind == "user":  # a chain's first prompt names its agent
            prompt = first_text(content)
            named = "warmup" if prompt == "Warmup" else self.prompts.get(prompt)
            self.kinds[uuid] = named or "sidechain"
        if kind == "assistant" and not side:
            self.prompts.update(task_prompts(content))
        blocks = content_blocks(content, self.tool_names, self.path, user=kind == "user")
        if not blocks:
            return None
        session, label, parent = self._session_for(uuid, side)
        if not side and not self.subagent and isinstance(sid, str) and sid != self.stem:
            parent = sid  # a record copied from another session (resume)
        branch = rec.get("gitBranch")
        parent_uuid = rec.get("parentUuid")
        return {
            "harness": Harness.CLAUDE_CODE,
            "session_id": session,
            "turn_id": uuid,
            "ts": normalize_ts(rec.get("timestamp")),
            "role": _role(kind, message, blocks),
            "blocks": blocks,
            "source_path": self.source,
            "cwd": self.cwd,
            "parent_id": parent_uuid if isinstance(parent_uuid, str) else None,
            "git_branch": branch or None if isinstance(branch, str) else None,
            "parent_session_id": parent,
            "scaffold": _is_scaffold(rec, blocks) or self.kinds.get(root or "") == "warmup",
            "model": _model(kind, message.get("model")),
            "project": self.project,
            "session_label": label,
        }

    def _emit(self, fields: dict[str, Any], stats: ReadStats) -> Turn:
        session = fields["session_id"]
        seq = self.seqs.get(session, 0)
        self.seqs[session] = seq + 1
        stats.turns += 1
        if fields["role"] is Role.TOOL:
            fields["blocks"] = tuple(self._named(b) for b in fields["blocks"])
        return Turn(seq=seq, **fields)

    def _named(self, block: Block) -> Block:
        if block.tool_name or not block.tool_use_id or block.type is not BlockType.TOOL_RESULT:
            return block
        name = self.tool_names.get(block.tool_use_id)
        return replace(block, tool_name=name) if name else block

    def _release(self, stats: ReadStats) -> Iterator[Turn]:
        ready = [
            h
            for h in self.held
            if all(not b.tool_use_id or b.tool_use_id in self.tool_names for b in h.turn["blocks"])
        ]
        for held in ready:
            self.held.remove(held)
            yield self._emit(held.turn, stats)

    def _tick(self, stats: ReadStats) -> Iterator[Turn]:
        """Count a record against every held result; one that waited long enough is emitted
        where it stands (its call is not in this file, or far away)."""
        if not self.held:
            return
        for held in self.held:
            held.left -= 1
        while self.held and self.held[0].left <= 0:
            yield self._emit(self.held.pop(0).turn, stats)


def _meta_kind(path: Path) -> str | None:
    """The agent kind a subagent's `.meta.json` names (`agentType`, else `description`)."""
    try:
        with open_regular(path) as f:
            value = json.loads(f.read(_META_MAX_BYTES).decode("utf-8", errors="replace"))
    except (OSError, ValueError, RecursionError):
        return None
    if not isinstance(value, dict):
        return None
    for key in ("agentType", "description"):
        if isinstance(value.get(key), str) and slug(value[key]):
            return slug(value[key])
    return None


def _model(kind: str, value: Any) -> str | None:
    if kind != "assistant" or not isinstance(value, str) or value == _SYNTHETIC_MODEL:
        return None
    return value.strip() or None


def _role(kind: str, message: Mapping[str, Any], blocks: tuple[Block, ...]) -> Role:
    if all(b.type is BlockType.TOOL_RESULT for b in blocks):
        return Role.TOOL
    role = message.get("role") or kind
    return Role.ASSISTANT if role == "assistant" else Role.USER


def _is_scaffold(rec: Mapping[str, Any], blocks: tuple[Block, ...]) -> bool:
    if rec.get("isMeta") or rec.get("isCompactSummary") or rec.get("isApiErrorMessage"):
        return True
    first = blocks[0]
    return first.type is BlockType.TEXT and is_scaffold_text(first.text)
