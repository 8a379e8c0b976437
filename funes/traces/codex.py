"""Parse Codex CLI rollouts (`$CODEX_HOME/sessions/YYYY/MM/DD/rollout-*.jsonl`) into turns.

Two on-disk generations are read: the envelope format (`{timestamp, type, payload}` lines,
`session_meta` first) and the pre-envelope format (a bare `{id, timestamp, …}` header, then
bare response items without timestamps).

Codex mirrors most messages into two record streams: the model history (`response_item`)
and UI events (`event_msg`: `user_message`, `agent_message`, `agent_reasoning`, or newer
`item_completed`), in either order depending on the version. Each stream is a faithful copy,
so the k-th occurrence of a given (role, text) is emitted exactly once, by whichever stream
shows it first, under an id built from (file, role, text, k): the same id whatever the
order, and a turn never changes id when the file grows. Tool calls and their outputs exist
only in `response_item` and are keyed by `call_id`.

Scaffolding: developer/system messages (permissions, skills, collaboration instructions)
are skipped; user-role harness text (`<environment_context>`, AGENTS.md dumps, …) and
compaction summaries are kept with `Turn.scaffold` set.

Facets: `cwd` from `session_meta` (or, in old rollouts whose header has none, the `<cwd>` of
the first `<environment_context>` block), then each `turn_context`; `project` stays the first
one (one workdir facet per session); `model` from `turn_context.model` on assistant turns.
Tool outputs written as a JSON envelope `{"output": "…", "metadata": {…}}` (older
`function_call_output` and `custom_tool_call_output` items) are indexed by their output text.

Session id = `session_meta.payload.id` (else the uuid in the file name). One thread can
span several rollout files: turn ids hash the file stem, and a continuation file (its
`session_meta` line written more than `_CONTINUATION_S` after the thread began) numbers its
`seq` from `1000 × seconds since the thread began`, so neither collides with the first
file's.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from funes.traces.jsonl import compact_json, read_records
from funes.traces.labels import child_label, short_id
from funes.traces.model import Block, BlockType, Harness, Role, Turn, normalize_ts, parse_ts
from funes.traces.source import ReadStats, Unit, file_unit, walk_files

ROLLOUT_GLOB = "rollout-*.jsonl"
_STEM = re.compile(
    r"^rollout-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-"
    r"([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})$"
)
_ENVELOPE_TYPES = frozenset(
    {"session_meta", "turn_context", "response_item", "event_msg", "compacted"}
)
_ITEM_TYPES = frozenset(
    {
        "message",
        "reasoning",
        "function_call",
        "function_call_output",
        "custom_tool_call",
        "custom_tool_call_output",
        "local_shell_call",
        "web_search_call",
    }
)
_SCAFFOLD_PREFIXES = (
    "<environment_context>",
    "<user_instructions>",
    "<permissions instructions>",
    "<skills_instructions>",
    "<collaboration_mode>",
    "<INSTRUCTIONS>",
    "<turn_aborted>",
    "# AGENTS.md instructions for",
)
_ENV_CWD = re.compile(r"<cwd>([^<\n]+)</cwd>")
_SEQ_PER_SECOND = 1000
_CONTINUATION_S = 300


def is_rollout(path: Path) -> bool:
    return path.name.startswith("rollout-") and path.suffix == ".jsonl"


class CodexSource:
    """Codex rollouts under `<codex home>/sessions` and `<codex home>/archived_sessions`."""

    harness = Harness.CODEX

    def __init__(self, home: Path) -> None:
        self.home = home
        self.roots = (home / "sessions", home / "archived_sessions")

    def units(self) -> Iterable[Unit]:
        for root in self.roots:
            for path in walk_files(root, ROLLOUT_GLOB):
                unit = file_unit(path, self.harness)
                if unit is not None:
                    yield unit

    def read(self, unit: Unit, stats: ReadStats) -> Iterator[Turn]:
        return read_codex_file(unit.path, stats)

    def unit_for_hook(self, payload: Mapping[str, object]) -> Unit | None:
        """A Stop/SessionEnd payload (`transcript_path`, `session_id`) or a legacy `notify`
        payload (`thread-id`). A null transcript path is resolved by the thread id in the
        rollout file names; with several files, the most recently written one."""
        value = payload.get("transcript_path")
        if isinstance(value, str) and value:
            path = Path(value)
            if is_rollout(path) or any(_inside(path, r) for r in self.roots):
                unit = file_unit(path, self.harness)
                if unit is not None:
                    return unit
        for key in ("session_id", "thread-id", "thread_id"):
            thread = payload.get(key)
            if isinstance(thread, str) and thread.strip():
                found = self.files_for_thread(thread.strip())
                if found:
                    return file_unit(found[-1], self.harness)
        return None

    def files_for_thread(self, thread_id: str) -> list[Path]:
        """Rollout files of one thread, oldest write first."""
        if not re.fullmatch(r"[0-9A-Za-z-]+", thread_id):
            return []
        hits: list[tuple[float, Path]] = []
        for root in self.roots:
            for path in walk_files(root, f"rollout-*-{thread_id}.jsonl"):
                try:
                    hits.append((path.stat().st_mtime, path))
                except OSError:
                    continue
        return [p for _, p in sorted(hits)]


def _inside(path: Path, root: Path) -> bool:
    try:
        return path.resolve().is_relative_to(root.resolve())
    except (OSError, RuntimeError):
        return False


@dataclass(slots=True)
class _State:
    """What one read of a rollout knows so far."""

    path: Path
    session_id: str
    cwd: str | None = None
    project: str | None = None
    model: str | None = None
    git_branch: str | None = None
    parent_session: str | None = None
    agent_kind: str | None = None
    header_ts: str = ""
    seq_base: int = 0
    seq: int = 0
    tool_names: dict[str, str] = field(default_factory=dict)
    seen: dict[tuple[str, str], int] = field(default_factory=dict)  # (stream, key) → count
    emitted: dict[str, int] = field(default_factory=dict)  # key → occurrences emitted

    def claim(self, stream: str, key: str) -> int | None:
        """The occurrence number to emit, or None when another stream already emitted it."""
        n = self.seen.get((stream, key), 0) + 1
        self.seen[(stream, key)] = n
        if n > self.emitted.get(key, 0):
            self.emitted[key] = n
            return n
        return None

    def turn_id(self, kind: str, ident: str, occurrence: int) -> str:
        raw = f"{self.path.stem}\x1f{kind}\x1f{ident}\x1f{occurrence}"
        return f"{kind}-{hashlib.sha1(raw.encode('utf-8', 'replace')).hexdigest()[:16]}"


def _stem_thread_id(path: Path) -> str | None:
    m = _STEM.match(path.stem)
    return m.group(1) if m else None


def read_codex_file(path: Path, stats: ReadStats) -> Iterator[Turn]:
    """Turns of one Codex rollout, in file order (see module docstring)."""
    st = _State(path=path, session_id=_stem_thread_id(path) or path.stem)
    first = True
    for _line_no, rec in read_records(path, stats):
        is_first, first = first, False
        kind = rec.get("type")
        if not isinstance(kind, str):
            kind = None  # a list or dict here is not a type name (and not hashable)
        payload = rec.get("payload")
        turns: Iterator[Turn] = iter(())
        if kind in _ENVELOPE_TYPES and isinstance(payload, dict):
            ts = normalize_ts(rec.get("timestamp")) or st.header_ts
            turns = _envelope(st, kind, payload, ts, is_first, stats)
        elif kind in _ITEM_TYPES:  # pre-envelope: a bare response item
            turns = _response_item(st, rec, st.header_ts, stats)
        elif is_first and "id" in rec and "timestamp" in rec and "payload" not in rec:
            _session_meta(st, rec, "")  # pre-envelope bare header
        else:
            stats.unknown_records += 1
        for turn in turns:
            stats.turns += 1
            yield turn


def _session_meta(st: _State, meta: Mapping[str, Any], written: str) -> None:
    sid = meta.get("id")
    if isinstance(sid, str) and sid.strip():
        st.session_id = sid.strip()
    if isinstance(meta.get("cwd"), str) and meta["cwd"]:
        st.cwd = meta["cwd"]
        st.project = st.project or st.cwd
    for key in ("agent_role", "agent_nickname"):
        if isinstance(meta.get(key), str) and meta[key].strip():
            st.agent_kind = meta[key].strip()
            break
    git = meta.get("git")
    if isinstance(git, dict) and isinstance(git.get("branch"), str) and git["branch"]:
        st.git_branch = git["branch"]
    for key in ("parent_thread_id", "forked_from_id"):
        if isinstance(meta.get(key), str) and meta[key]:
            st.parent_session = meta[key]
            break
    st.header_ts = normalize_ts(meta.get("timestamp"))
    started, at = parse_ts(st.header_ts), parse_ts(written)
    if started is not None and at is not None:
        gap_s = int((at - started).total_seconds())
        if gap_s > _CONTINUATION_S:  # a continuation file of an older thread
            st.seq_base = gap_s * _SEQ_PER_SECOND


def _envelope(
    st: _State, kind: str, payload: dict[str, Any], ts: str, is_first: bool, stats: ReadStats
) -> Iterator[Turn]:
    if kind == "session_meta":
        if is_first:
            _session_meta(st, payload, ts)
        return
    if kind == "turn_context":
        if isinstance(payload.get("cwd"), str) and payload["cwd"]:
            st.cwd = payload["cwd"]
            st.project = st.project or st.cwd
        if isinstance(payload.get("model"), str) and payload["model"].strip():
            st.model = payload["model"].strip()
        return
    if kind == "response_item":
        yield from _response_item(st, payload, ts, stats)
    elif kind == "event_msg":
        yield from _event(st, payload, ts, stats)
    elif kind == "compacted":
        text = payload.get("message")
        if isinstance(text, str) and text.strip():
            n = st.claim("compacted", _key("compacted", text))
            if n is not None:
                block = Block.make(BlockType.TEXT, text)
                yield _turn(st, "sum", _key("compacted", text), n, ts, Role.USER, (block,), True)


def _key(role: str, text: str) -> str:
    norm = " ".join(text.split())
    return f"{role}:{hashlib.sha1(norm.encode('utf-8', 'replace')).hexdigest()}"


def _turn(
    st: _State,
    kind: str,
    ident: str,
    occurrence: int,
    ts: str,
    role: Role,
    blocks: tuple[Block, ...],
    scaffold: bool = False,
) -> Turn:
    turn = Turn(
        harness=Harness.CODEX,
        session_id=st.session_id,
        turn_id=st.turn_id(kind, ident, occurrence),
        seq=st.seq_base + st.seq,
        ts=ts,
        role=role,
        blocks=blocks,
        source_path=str(st.path),
        cwd=st.cwd,
        git_branch=st.git_branch,
        parent_session_id=st.parent_session,
        scaffold=scaffold,
        model=st.model if role is Role.ASSISTANT else None,
        project=st.project,
        session_label=_label(st),
    )
    st.seq += 1
    return turn


def _label(st: _State) -> str:
    if st.parent_session:  # a sub-agent (or forked) thread: named under its parent
        kind = st.agent_kind or "agent"
        return child_label(st.parent_session, kind, short_id(st.session_id))
    return short_id(st.session_id)


def _environment_cwd(st: _State, text: str) -> None:
    """An old rollout records its cwd only in the `<environment_context>` it sends."""
    if st.cwd is None and text.lstrip().startswith("<environment_context>"):
        m = _ENV_CWD.search(text)
        if m and m.group(1).strip():
            st.cwd = m.group(1).strip()
            st.project = st.project or st.cwd


def _message(st: _State, stream: str, role: str, text: str, ts: str) -> Iterator[Turn]:
    """One user/assistant message seen in `stream`, emitted unless another stream did."""
    if not text.strip():
        return
    key = _key(role, text)
    n = st.claim(stream, key)
    if n is None:
        return
    if role == "thinking":
        yield _turn(
            st, "think", key, n, ts, Role.ASSISTANT, (Block.make(BlockType.THINKING, text),)
        )
        return
    scaffold = role == "user" and text.lstrip().startswith(_SCAFFOLD_PREFIXES)
    if role == "user":
        _environment_cwd(st, text)
    turn_role = Role.USER if role == "user" else Role.ASSISTANT
    yield _turn(st, "msg", key, n, ts, turn_role, (Block.make(BlockType.TEXT, text),), scaffold)


def _content_text(content: Any) -> str:
    """Text parts (`input_text`/`output_text`/`text`) of a message content, joined by newlines."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    parts = []
    for part in content:
        if isinstance(part, dict) and isinstance(part.get("text"), str):
            if part.get("type") in (None, "input_text", "output_text", "text", "Text"):
                parts.append(part["text"])
        elif isinstance(part, str):
            parts.append(part)
    return "\n".join(parts)


def _response_item(
    st: _State, item: Mapping[str, Any], ts: str, stats: ReadStats
) -> Iterator[Turn]:
    kind = item.get("type")
    if kind == "message":
        role = item.get("role")
        if role in ("user", "assistant"):
            yield from _message(st, "item", role, _content_text(item.get("content")), ts)
        # developer/system: harness instructions, skipped
    elif kind == "reasoning":
        for text in _reasoning_texts(item):
            yield from _message(st, "item", "thinking", text, ts)
    elif isinstance(kind, str) and kind.endswith("_output"):
        yield from _tool_output(st, item, ts)
    elif isinstance(kind, str) and kind.endswith("_call"):
        yield from _tool_call(st, kind, item, ts)
    else:
        stats.unknown_records += 1


def _reasoning_texts(item: Mapping[str, Any]) -> list[str]:
    out = []
    for key in ("summary", "content"):
        parts = item.get(key)
        if isinstance(parts, list):
            for part in parts:
                if isinstance(part, dict) and isinstance(part.get("text"), str):
                    out.append(part["text"])
    return out


def _tool_name(kind: str, item: Mapping[str, Any]) -> str:
    name = item.get("name")
    if not isinstance(name, str) or not name:
        return kind.removesuffix("_call")
    namespace = item.get("namespace")
    if isinstance(namespace, str) and namespace and not name.startswith(namespace):
        return f"{namespace}__{name}"
    return name


def _tool_call(st: _State, kind: str, item: Mapping[str, Any], ts: str) -> Iterator[Turn]:
    name = _tool_name(kind, item)
    call_id = item.get("call_id") if isinstance(item.get("call_id"), str) else None
    if call_id:
        st.tool_names[call_id] = name
    raw: Any = None
    for field_name in ("arguments", "input", "action"):
        if item.get(field_name) is not None:
            raw = item[field_name]
            break
    text = raw if isinstance(raw, str) else compact_json(raw if raw is not None else {})
    ident = call_id or kind
    n = st.claim("call", f"call:{ident}")
    if n is None:
        return
    block = Block.make(BlockType.TOOL_USE, text, tool_name=name, tool_use_id=call_id)
    yield _turn(st, "call", ident, n, ts, Role.ASSISTANT, (block,))


def _tool_output(st: _State, item: Mapping[str, Any], ts: str) -> Iterator[Turn]:
    call_id = item.get("call_id") if isinstance(item.get("call_id"), str) else None
    text = _output_text(item.get("output"))
    ident = call_id or str(item.get("type"))
    n = st.claim("out", f"out:{ident}")
    if n is None or not text.strip():
        return
    block = Block.make(
        BlockType.TOOL_RESULT, text, tool_name=st.tool_names.get(call_id or ""), tool_use_id=call_id
    )
    yield _turn(st, "out", ident, n, ts, Role.TOOL, (block,))


def _output_text(output: Any) -> str:
    """A tool output as text: strings verbatim (a JSON envelope `{"output": "…", "metadata":
    …}` by its output), content lists by their text parts, else JSON."""
    if isinstance(output, str):
        return _unwrapped(output)
    if isinstance(output, list):
        texts = [
            p["text"] for p in output if isinstance(p, dict) and isinstance(p.get("text"), str)
        ]
        if texts or not output:
            return "\n".join(texts)
    if isinstance(output, dict):
        for key in ("content", "output"):
            if key in output and isinstance(output[key], str | list):
                return _output_text(output[key])
    return compact_json(output) if output is not None else ""


def _unwrapped(output: str) -> str:
    """The output text of a JSON envelope string (older rollouts), else the string itself."""
    head = output.lstrip()
    if not head.startswith("{") or '"output"' not in head:
        return output
    try:
        value = json.loads(head)
    except (ValueError, RecursionError):
        return output
    inner = value.get("output") if isinstance(value, dict) else None
    return inner if isinstance(inner, str) else output


def _event(st: _State, payload: Mapping[str, Any], ts: str, stats: ReadStats) -> Iterator[Turn]:
    kind = payload.get("type")
    if kind == "user_message" and isinstance(payload.get("message"), str):
        yield from _message(st, "event", "user", payload["message"], ts)
    elif kind == "agent_message" and isinstance(payload.get("message"), str):
        yield from _message(st, "event", "assistant", payload["message"], ts)
    elif kind in ("agent_reasoning", "agent_reasoning_raw_content"):
        if isinstance(payload.get("text"), str):
            yield from _message(st, "event", "thinking", payload["text"], ts)
    elif kind == "item_completed" and isinstance(payload.get("item"), dict):
        yield from _completed_item(st, payload["item"], ts)
    # every other event (token counts, exec/patch ends, task lifecycle) mirrors or adds
    # nothing indexable


def _completed_item(st: _State, item: Mapping[str, Any], ts: str) -> Iterator[Turn]:
    kind = item.get("type")
    if kind == "UserMessage":
        yield from _message(st, "completed", "user", _content_text(item.get("content")), ts)
    elif kind == "AgentMessage":
        yield from _message(st, "completed", "assistant", _content_text(item.get("content")), ts)
    elif kind == "Reasoning":
        for key in ("summary_text", "raw_content"):
            parts = item.get(key)
            if isinstance(parts, list):
                for part in parts:
                    if isinstance(part, str):
                        yield from _message(st, "completed", "thinking", part, ts)
