"""Hermes: shell hooks and `mcp_servers.funes` in config.yaml, plus the consent allowlist.

Hooks: `post_llm_call` (a turn completed), `on_session_finalize` (the session ended) and
`on_session_start` with `--sweep` (catch-up). Hermes splits a hook command into argv (no shell)
and runs it only once the exact `(event, command)` pair is approved in
`$HERMES_HOME/shell-hooks-allowlist.json`; non-interactive runs silently skip unapproved hooks,
so funes writes the approvals itself (the same entry shape Hermes writes).

config.yaml is edited with ruamel.yaml in round-trip mode, keeping the user's comments, quoting
and key order; the indentation is the one that reproduces the file as it was. A comment ruamel
hangs on a node funes deletes or replaces (the line after a user's value, once funes' entries
went in after it) is moved to where it printed (`_drop`, `_replace`). `add` notes how
`hooks`, the events it hooks and `mcp_servers` looked before its entries went in (a key there
with an empty list or mapping, or with no value: `note_keys_before`), and `remove` gives a key
it empties back as it was, deleting only the keys `add` created; when the result is the
document from before `add`'s first edit, `remove` writes that file's bytes back, and a file
with nothing of funes' in it is left as it is. What ruamel drops around the document (blank
lines first, comments before `---` and the `---`, all from `...` on, a byte-order mark) is kept
as text (`_split`): a file of nothing else (empty, comments only) is an empty mapping. The
file's line endings (`\r\n`) are kept.
"""

from __future__ import annotations

import datetime as dt
import functools
import io
import json
import os
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedBase, CommentedMap, CommentedSeq
from ruamel.yaml.error import CommentMark, YAMLError
from ruamel.yaml.tokens import CommentToken

from ._common import (
    FIX_HINT,
    MCP_NAME,
    Changes,
    Check,
    Context,
    InstallError,
    is_our_mcp,
    is_ours,
    keys_before,
    load_json_object,
    note_keys_before,
    read_text,
    remove_if_created,
    restored_text,
    stale_hook_warnings,
    write_if_changed,
)

AGENT = "hermes"
EVENTS = {
    "post_llm_call": False,
    "on_session_finalize": False,
    "on_session_start": True,
}  # event → sweep
TIMEOUT_S = 30
ALLOWLIST = "shell-hooks-allowlist.json"
_INDENTS = ((2, 4, 2), (2, 2, 0), (4, 4, 2), (4, 6, 4), (4, 4, 0))
# How a key funes puts its entries under looked before they went in (an absent key is not noted:
# funes created it, and `remove` deletes it once empty).
KEPT, NULL = "kept", "null"  # a list or mapping (empty or not) / the key with no value


def config_path(ctx: Context) -> Path:
    return ctx.agent_home / "config.yaml"


def allowlist_path(ctx: Context) -> Path:
    return ctx.agent_home / ALLOWLIST


def _yaml(indent: tuple[int, int, int], version: Any = None) -> YAML:
    """A round-trip YAML writing with `indent` and the `%YAML` version of the file it read."""
    yaml = YAML()
    yaml.version = version
    yaml.preserve_quotes = True
    yaml.width = 4096
    yaml.indent(mapping=indent[0], sequence=indent[1], offset=indent[2])
    return yaml


@dataclass(frozen=True)
class Layout:
    """How config.yaml is written around the document ruamel reads and writes back: the lines
    before and after it, kept as they are (`_split`), and the file's line ending (ruamel reads
    and writes `\n`)."""

    head: str = ""
    tail: str = ""
    newline: str = "\n"


def _load(path: Path) -> tuple[CommentedMap, YAML, Layout]:
    """The config as a round-trip mapping, a YAML that re-emits it unchanged (as near as ruamel
    can) and its layout. Raises InstallError for a file that is not YAML or not a mapping."""
    text = read_text(path)  # `\r\n` read as `\n`
    newline = _newline(path)
    if text is None:
        return CommentedMap(), _yaml(_INDENTS[0]), Layout(newline=newline)
    reader = _yaml(_INDENTS[0])
    try:
        data, head, tail = _parse(reader, text)
    except YAMLError as exc:
        raise InstallError(
            f"{path} is not valid YAML ({exc}); funes will not rewrite it", hint=FIX_HINT
        ) from None
    if not isinstance(data, CommentedMap):
        raise InstallError(
            f"{path} does not hold a mapping; funes will not rewrite it", hint=FIX_HINT
        )
    layout = Layout(head, tail, newline)
    for indent in _INDENTS:
        yaml = _yaml(indent, reader.version)
        if _dump(yaml, data, Layout(head, tail)) == text:
            return data, yaml, layout
    return data, _yaml(_INDENTS[0], reader.version), layout


def _newline(path: Path) -> str:
    """The line ending of the file at `path` (its first line's; `\n` when it has none)."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return "\n"
    end = raw.find(b"\n")
    return "\r\n" if end > 0 and raw[end - 1 : end] == b"\r" else "\n"


def _parse(yaml: YAML, text: str) -> tuple[Any, str, str]:
    """The document in `text` (`\n` line endings) and the head and tail around it (`_split`).
    A file with nothing but those (comments, blank lines, a `---`) is an empty mapping: ruamel
    reads it as no document at all. Raises YAMLError (not YAML, or more than one document)."""
    head, body, tail = _split(text)
    if head or tail:
        yaml.load(text)  # a second document after the `---` in the head
    data = yaml.load(body)
    if data is None and not body.strip():
        data = CommentedMap()
    return data, head, tail


_LINE = re.compile(r"[^\n]*\n|[^\n]+\Z")


def _split(text: str) -> tuple[str, str, str]:
    """`text` as (head, body, tail). The head is a byte-order mark, the blank and comment lines
    before the first key and a bare `---` among them; the tail, a bare `...` line and the blank
    and comment lines after it. ruamel drops a first blank line, the comments before `---`,
    the `---` and all from `...` on; funes writes them back as they were."""
    bom = "\ufeff" if text.startswith("\ufeff") else ""
    lines = _LINE.findall(text[len(bom) :])
    start, opened = 0, False
    while start < len(lines) and (
        _quiet(lines[start]) or (not opened and _marker(lines[start], "---"))
    ):
        opened = opened or not _quiet(lines[start])
        start += 1
    end = len(lines)
    while end > start and _quiet(lines[end - 1]):
        end -= 1
    end = end - 1 if end > start and _marker(lines[end - 1], "...") else len(lines)
    return bom + "".join(lines[:start]), "".join(lines[start:end]), "".join(lines[end:])


def _quiet(line: str) -> bool:
    """A blank line or a comment line."""
    return not line.strip() or line.lstrip().startswith("#")


def _marker(line: str, mark: str) -> bool:
    """A document marker (`---`, `...`) alone on its line, or with a comment after it."""
    rest = line.rstrip("\n").removeprefix(mark)
    return line.startswith(mark) and (not rest or (rest[0] in " \t" and _quiet(rest)))


def _dump(yaml: YAML, data: Any, layout: Layout = Layout()) -> str:
    if isinstance(data, CommentedMap) and not data:  # its comment lines alone, no `{}`
        seen: set[int] = set()
        lines = _slot_lines(data.ca.comment or [], (0, 1), seen)
        lines += _slot_lines([data.ca.end], (0,), seen)
        body = "".join(line + "\n" for line in lines)
    else:
        _drop_end_slots(data, set())
        out = io.StringIO()
        yaml.dump(data, out)
        body = out.getvalue()
    if layout.tail and body.endswith("\n...\n"):  # ruamel's own, after a `|+` scalar last
        body = body[: -len("...\n")]
    text = layout.head + body + layout.tail
    return text.replace("\n", layout.newline) if layout.newline != "\n" else text


def _drop_end_slots(node: Any, seen: set[int]) -> None:
    """Take out what an earlier dump left in `node`'s comment lists: ruamel's representer
    appends a collection's `ca.end` to its `ca.comment` (the list itself) and prints that third
    slot, so after one dump an end comment set later would go in a fourth slot, never printed."""
    if not isinstance(node, CommentedBase) or id(node) in seen:
        return
    seen.add(id(node))
    if node.ca.comment is not None:
        del node.ca.comment[2:]
    for value in node.values() if isinstance(node, dict) else node:
        _drop_end_slots(value, seen)


def _normal(yaml: YAML, text: str) -> str | None:
    """`text` as `yaml` re-emits it (`null` and `~` become an empty value, …); None when it does
    not parse. Two texts with the same normal form hold one document laid out one way."""
    try:
        data, head, tail = _parse(yaml, text.replace("\r\n", "\n"))
        return _dump(yaml, data, Layout(head, tail))
    except YAMLError:
        return None


def desired_commands(ctx: Context) -> dict[str, str]:
    return {event: ctx.hook_command(AGENT, event, sweep=sweep) for event, sweep in EVENTS.items()}


def _holds_ours(entries: Any) -> bool:
    return isinstance(entries, list) and any(
        isinstance(e, dict) and is_ours(e.get("command")) for e in entries
    )


def _was(value: Any) -> str:
    return NULL if value is None else KEPT


def _before(data: CommentedMap, noted: dict[str, Any]) -> dict[str, Any]:
    """How `hooks`, the events funes hooks and `mcp_servers` looked before funes' entries went
    in: a key holding funes' entry already keeps what was `noted` when they did; any other
    key is noted as it is now (a key funes will create is not noted)."""
    out: dict[str, Any] = {}
    old_events = _events(noted)
    hooks = data.get("hooks")
    ours_in_hooks = False
    if isinstance(hooks, dict):
        events = {}
        for event in EVENTS:
            if event in hooks and not _holds_ours(hooks[event]):
                events[event] = _was(hooks[event])
            elif event in hooks and event in old_events:
                events[event] = old_events[event]
        if events:
            out["events"] = events
        ours_in_hooks = any(_holds_ours(v) for k, v in hooks.items() if k != "outbound")
    if "hooks" in data:
        was = noted.get("hooks") if ours_in_hooks else _was(hooks)
        if was is not None:
            out["hooks"] = was
    if "mcp_servers" in data:
        servers = data["mcp_servers"]
        ours = isinstance(servers, dict) and is_our_mcp(_plain(servers.get(MCP_NAME)))
        was = noted.get("mcp_servers") if ours else _was(servers)
        if was is not None:
            out["mcp_servers"] = was
    return out


def _events(note: dict[str, Any]) -> dict[str, Any]:
    events = note.get("events")
    return events if isinstance(events, dict) else {}


# -- the user's comments -------------------------------------------------------------------
# funes writes no comments: every comment in config.yaml is the user's. ruamel keeps a comment
# line on the node before it (on the last scalar of a block collection), so once add's entries
# went in after a user's value, the comment that followed that value rides on funes' nodes and
# would go with them when one is deleted or replaced. Before that, its lines move to the next
# node that stays (the comment lines before a key or item), or to the end of the file: the same
# place in the text. `Where` is the (container, key) chain from the document down to an entry.

Where = list[tuple[Any, Any]]


def _drop(where: Where) -> None:
    """Delete the entry at the end of `where`, keeping the comments on it and inside it."""
    container, key = where[-1]
    lines = _entry_lines(container, key, set())
    _place(lines, where)
    if isinstance(container, dict):
        container.ca.items.pop(key, None)  # CommentedMap leaves it behind
    del container[key]


def _replace(where: Where, value: Any) -> None:
    """Put `value` in place of the entry's value at the end of `where`, keeping the comments
    inside the old one (a key's own comments stay with the key, and so does a comment at the
    end of its line)."""
    container, key = where[-1]
    seen: set[int] = set()
    slots = container.ca.items.get(key) or []
    eol = _line_comment(slots, seen) if isinstance(container, dict) else None
    lines = _node_lines(container[key], seen)
    if isinstance(container, dict):
        lines += _slot_lines(slots, (3, 2), seen)
        for i in (2, 3):
            if i < len(slots):
                slots[i] = None
        if eol is not None:
            slots[2] = eol
    _place(lines, where)
    container[key] = value


def _line_comment(slots: list[Any], seen: set[int]) -> CommentToken | None:
    """Take the comment at the end of a key's line out of its value's slot (`seen`: a block
    collection holds it too), leaving the whole lines after it there; None when it has none."""
    post = slots[2] if len(slots) > 2 else None
    if post is None:
        return None
    line, _, rest = post.value.partition("\n")
    if not line.strip():
        return None
    seen.add(id(post))
    slots[2] = CommentToken("\n" + rest, CommentMark(0)) if rest else None
    return CommentToken(line + "\n", CommentMark(post.column))


def _entry_lines(container: Any, key: Any, seen: set[int]) -> list[str]:
    """The comment lines of one entry of a mapping or sequence, in the order they print."""
    slots = container.ca.items.get(key) or []
    if isinstance(container, dict):  # key: post (eol), pre; value: post (eol + lines), pre
        first, last = (1, 0, 3), (2,)
    else:  # item: post, pre
        first, last = (1,), (0,)
    return (
        _slot_lines(slots, first, seen)
        + _node_lines(container[key], seen)
        + _slot_lines(slots, last, seen)
    )


def _node_lines(node: Any, seen: set[int]) -> list[str]:
    if not isinstance(node, CommentedBase):
        return []
    lines = _slot_lines(node.ca.comment or [], (0, 1), seen)
    for key in node if isinstance(node, dict) else range(len(node)):
        lines += _entry_lines(node, key, seen)
    return lines + _slot_lines([node.ca.end], (0,), seen)


def _slot_lines(slots: list[Any], order: tuple[int, ...], seen: set[int]) -> list[str]:
    """The lines of comment slots: a token holds the text after a value (an end-of-line
    comment, then whole lines), a list holds whole lines, one token each."""
    lines: list[str] = []
    for i in order:
        slot = slots[i] if i < len(slots) else None
        for token in slot if isinstance(slot, list) else [slot]:
            if token is None or id(token) in seen:
                continue
            seen.add(id(token))
            value = token.value
            if isinstance(slot, list):
                text = " " * token.column + value if value.strip() else value
            else:  # the text after a value: what is left of its line, then whole lines
                eol, _, text = value.partition("\n")
                if eol.strip():  # a comment at the end of a line that goes: a line of its own
                    text = " " * token.column + eol + "\n" + text
            lines += text.split("\n")[:-1] if text.endswith("\n") else text.split("\n")
    return lines


def _place(lines: list[str], where: Where) -> None:
    """Put comment `lines` that follow the entry at the end of `where` before the next entry
    that stays (an entry after it in its container, else after the container, ...), or at the
    end of the document."""
    if not lines:
        return
    tokens = _tokens(lines)
    for depth in reversed(range(len(where))):
        container, key = where[depth]
        keys = list(container) if isinstance(container, dict) else list(range(len(container)))
        later = keys[keys.index(key) + 1 :]
        if later:
            _before_entry(container, later[0], tokens)
            return
        if depth and container.ca.end:  # lines after the container's last entry
            container.ca.end[:0] = tokens
            return
    root = where[0][0]
    if root.ca.comment is None:  # ruamel prints `end` only beside a `comment`
        root.ca.comment = [None, None]
    root.ca.end = tokens + (root.ca.end or [])


def _tokens(lines: list[str]) -> list[CommentToken]:
    """Whole comment lines as ruamel keeps them before a key or item: one token a line."""
    return [
        CommentToken(line.lstrip(" ") + "\n", CommentMark(len(line) - len(line.lstrip(" "))))
        for line in lines
    ]


def _before_entry(container: Any, key: Any, tokens: list[CommentToken]) -> None:
    """Put comment lines before an entry of a mapping or sequence."""
    value = container[key]
    own = value.ca.comment if isinstance(value, CommentedBase) else None
    if isinstance(container, list) and own and own[1]:
        own[1][:0] = tokens  # an item's own lines before it: ruamel prints those, not the list's
        return
    slots = container.ca.items.setdefault(key, [None] * (4 if isinstance(container, dict) else 2))
    slots[1] = tokens + (slots[1] or [])


def _give_back(where: Where, was: object) -> None:
    """A key funes emptied, as it was before funes' entries went in (see `_before`)."""
    parent, key = where[-1]
    if was == KEPT:  # left empty, written `[]` / `{}` (block style would put a comment wrong)
        value = parent[key]
        fa = getattr(value, "fa", None)
        if fa is not None:
            fa.set_flow_style()
        if isinstance(value, CommentedBase):  # lines inside it would print inside `[]`
            seen: set[int] = set()
            lines = _slot_lines(value.ca.comment or [], (1,), seen)
            lines += _slot_lines([value.ca.end], (0,), seen)
            if value.ca.comment:
                value.ca.comment[1] = None
            value.ca.end = None
            _place(lines, where)
        return
    if was == NULL:
        _replace(where, None)
    else:
        _drop(where)


def _set_hooks(
    data: CommentedMap, wanted: dict[str, str], path: Path, before: dict[str, Any]
) -> None:
    """Make `data["hooks"]` hold exactly our `wanted` entries, in place, leaving the user's alone
    (a key funes empties goes back to what `before` says it was). Raises InstallError when
    `wanted` has to go in a `hooks` that is not a mapping (with nothing wanted, there is nothing
    of funes' in it)."""
    hooks = data.get("hooks")
    if not wanted and not isinstance(hooks, dict):
        return
    if hooks is None:
        hooks = data["hooks"] = CommentedMap()
    if not isinstance(hooks, dict):
        raise InstallError(
            f"{path}: `hooks` is not a mapping; funes will not rewrite it", hint=FIX_HINT
        )
    events_before = _events(before)
    emptied = False
    for event in list(hooks):
        entries = hooks[event]
        if entries is None and event in wanted:  # the event's key with no value: ours goes in
            _unshared(hooks, "hooks", path)
            entries = hooks[event] = CommentedSeq()
        if event in wanted and not isinstance(entries, list):
            raise InstallError(
                f"{path}: `hooks.{event}` is not a list; funes will not rewrite it", hint=FIX_HINT
            )
        if event == "outbound" or not isinstance(entries, list):
            continue
        where: Where = [(data, "hooks"), (hooks, event)]
        placed = removed = False
        for i in reversed(range(len(entries))):
            entry = entries[i]
            if isinstance(entry, dict) and is_ours(entry.get("command")):
                if event in wanted and not placed and entry.get("command") == wanted[event]:
                    placed = True
                    continue
                _drop([*where, (entries, i)])
                removed = True
        if event in wanted and not placed:
            _unshared(entries, f"hooks.{event}", path)
            entries.append(CommentedMap([("command", wanted[event]), ("timeout", TIMEOUT_S)]))
        if removed and not entries:
            _give_back(where, events_before.get(event))
            emptied = True
    for event, command in wanted.items():
        if event not in hooks:
            _unshared(hooks, "hooks", path)
            hooks[event] = [CommentedMap([("command", command), ("timeout", TIMEOUT_S)])]
    if emptied and not hooks:
        _give_back([(data, "hooks")], before.get("hooks"))


def _unshared(node: Any, name: str, path: Path) -> None:
    """Raise InstallError when `node`, which funes is about to put an entry in, is anchored:
    the entry would show wherever the anchor is used (another event's hooks, say)."""
    anchor = node.anchor.value if isinstance(node, CommentedBase) else None
    if anchor is not None:
        raise InstallError(
            f"{path}: `{name}` is anchored (`&{anchor}`), and funes' entry in it would show "
            "wherever that anchor is used; funes will not rewrite it",
            hint=f"write its value out where `*{anchor}` stands (or drop the `&{anchor}`), then "
            "run the command again",
        )


def _mcp_entry(ctx: Context) -> CommentedMap:
    entry = CommentedMap([("command", ctx.python), ("args", ctx.mcp_args())])
    if ctx.mcp_env():
        entry["env"] = ctx.mcp_env()
    return entry


def preflight(ctx: Context) -> None:
    """Raise InstallError when a file `install` edits is one funes will not rewrite (checked
    before `funes add` writes anything)."""
    _with_entries(ctx, Changes())
    load_json_object(allowlist_path(ctx))


def install(ctx: Context) -> Changes:
    changes = Changes()
    path = config_path(ctx)
    text, before = _with_entries(ctx, changes)
    note_keys_before(path, ctx.backups, before)
    if text is not None:
        write_if_changed(path, text, ctx, changes)
    _set_approvals(ctx, desired_commands(ctx), changes)
    changes.notes.append("Hermes reads hooks when a session starts (restart a running gateway)")
    return changes


def _with_entries(ctx: Context, changes: Changes) -> tuple[str | None, dict[str, Any]]:
    """config.yaml's text with funes' hooks and MCP server in (None when they are in as they
    should be: the file stays as the user laid it out), and how the keys they go under looked
    before (`_before`); nothing is written. Warns in `changes` of an MCP server named funes that
    is not funes'. Raises InstallError for a file funes will not rewrite."""
    path = config_path(ctx)
    data, yaml, layout = _load(path)
    untouched = _dump(yaml, data, layout)
    wanted = desired_commands(ctx)
    before = _before(data, keys_before(path, ctx.backups))
    _set_hooks(data, wanted, path, before)
    servers = data.get("mcp_servers")
    if servers is None:
        servers = data["mcp_servers"] = CommentedMap()
    if not isinstance(servers, dict):
        raise InstallError(
            f"{path}: `mcp_servers` is not a mapping; funes will not rewrite it", hint=FIX_HINT
        )
    current = servers.get(MCP_NAME)
    if current is not None and not is_our_mcp(_plain(current)):
        changes.warnings.append(
            f"{path} already has an MCP server named funes that is not funes' own: left as is"
        )
    elif current is None:
        _unshared(servers, "mcp_servers", path)
        servers[MCP_NAME] = _mcp_entry(ctx)
    elif _plain(current) != _plain(_mcp_entry(ctx)):
        _replace([(data, "mcp_servers"), (servers, MCP_NAME)], _mcp_entry(ctx))
    text = _dump(yaml, data, layout)
    if text == untouched:
        return None, before
    _keeps_comments(path, text, adding=True)
    return text, before


def _keeps_comments(path: Path, text: str, *, adding: bool = False) -> None:
    """Raise InstallError when `text`, to be written at `path`, lacks a comment of the file
    there, or (`adding`) the file has a comment inside a `[...]` or `{...}`: ruamel drops or
    moves those, and `remove` could then not give the file back."""
    old = read_text(path)
    if not old:
        return
    comments, in_flow = _comments(old)
    lost = list((comments - _comments(text.replace("\r\n", "\n"))[0]).elements())
    if adding and in_flow:
        raise InstallError(
            f"{path}: funes cannot keep the comment `{in_flow[0]}` inside a `[...]` or `{{...}}` "
            "in it; funes will not rewrite it",
            hint="move the comment out of the brackets, then run the command again",
        )
    if lost:
        raise InstallError(
            f"{path}: funes cannot keep the comment `{lost[0]}` in it; funes will not rewrite it",
            hint="a comment inside a `[...]` or `{...}` is one it cannot keep: move it out of "
            "the brackets, then run the command again",
        )


_FLOW = {"[": 1, "{": 1, "]": -1, "}": -1}  # a token's id → how it changes the flow depth


def _comments(text: str) -> tuple[Counter[str], list[str]]:
    """The comments in YAML `text` (each line of one, stripped), every one, as ruamel's scanner
    finds them (its loader drops some), and those inside a `[...]` or `{...}`."""
    found: Counter[str] = Counter()
    in_flow: list[str] = []
    depth = 0
    for token in YAML().scan(text):
        depth += _FLOW.get(token.id, 0)
        slots = [getattr(token, "comment", None)]
        while slots:
            slot = slots.pop()
            if isinstance(slot, list):
                slots.extend(reversed(slot))
            elif isinstance(slot, CommentToken):
                lines = [line.strip() for line in slot.value.split("\n")]
                lines = [line for line in lines if line.startswith("#")]
                found.update(lines)
                in_flow += lines if depth else []
    return found, in_flow


def _set_approvals(ctx: Context, wanted: dict[str, str], changes: Changes) -> None:
    path = allowlist_path(ctx)
    data, original = load_json_object(path)
    approvals = data.get("approvals")
    if not isinstance(approvals, list):
        approvals = []
    kept = [a for a in approvals if not (isinstance(a, dict) and is_ours(a.get("command")))]
    ours = {
        (a.get("event"), a.get("command")): a
        for a in approvals
        if isinstance(a, dict) and is_ours(a.get("command"))
    }
    now = dt.datetime.now(dt.UTC).isoformat().replace("+00:00", "Z")
    for event, command in wanted.items():
        kept.append(
            ours.get((event, command))
            or {
                "approved_at": now,
                "command": command,
                "event": event,
                "script_mtime_at_approval": _mtime_iso(ctx.hook),
            }
        )
    if kept == approvals and original is not None:
        return
    data["approvals"] = kept
    if (
        not wanted
        and not kept
        and remove_if_created(path, ctx, changes, empty=set(data) == {"approvals"})
    ):
        return
    # Hermes writes this file with sorted keys and a 2-space indent; so do we (remove gives back
    # the bytes from before funes' first edit when they hold the same document).
    text = json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    if not wanted:
        text = restored_text(path, text, ctx, json.loads)
    written = write_if_changed(path, text, ctx, changes)
    if written and wanted:
        events = ", ".join(sorted(wanted))
        changes.notes.append(
            f"pre-approved funes' hook commands ({events}) in {path}: Hermes skips shell hooks "
            "nobody approved (`funes remove hermes` takes the approvals out again)"
        )


def _mtime_iso(path: Path) -> str | None:
    try:
        mtime = os.path.getmtime(path)
    except OSError:
        return None
    return dt.datetime.fromtimestamp(mtime, tz=dt.UTC).isoformat().replace("+00:00", "Z")


def _plain(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def uninstall(ctx: Context) -> Changes:
    changes = Changes()
    path = config_path(ctx)
    if path.exists():
        data, yaml, layout = _load(path)
        untouched = _dump(yaml, data)
        before = keys_before(path, ctx.backups)
        _set_hooks(data, {}, path, before)
        servers = data.get("mcp_servers")
        if isinstance(servers, dict) and is_our_mcp(_plain(servers.get(MCP_NAME))):
            _drop([(data, "mcp_servers"), (servers, MCP_NAME)])
            if not servers:
                _give_back([(data, "mcp_servers")], before.get("mcp_servers"))
        empty = not _dump(yaml, data, layout).strip()  # no key, and no comment either
        removed = remove_if_created(path, ctx, changes, empty=empty)
        if not removed and _dump(yaml, data) != untouched:  # else nothing of funes' was in it:
            text = _dump(yaml, data, layout)  # left as it is (ruamel may lay it out otherwise)
            text = restored_text(path, text, ctx, functools.partial(_normal, yaml))
            _keeps_comments(path, text)
            write_if_changed(path, text, ctx, changes)
    note_keys_before(path, ctx.backups, {})
    if allowlist_path(ctx).exists():
        _set_approvals(ctx, {}, changes)
    return changes


def check(ctx: Context) -> Check:
    result = Check()
    try:
        data, _, _ = _load(config_path(ctx))
        allow, _ = load_json_object(allowlist_path(ctx))
    except InstallError as exc:
        result.warnings.append(exc.message)
        result.unreadable = True
        return result
    hooks = data.get("hooks") if isinstance(data.get("hooks"), dict) else {}
    configured = {
        event: entry.get("command")
        for event, entries in hooks.items()
        if isinstance(entries, list)
        for entry in entries
        if isinstance(entry, dict) and is_ours(entry.get("command"))
    }
    result.hooks = "post_llm_call" in configured
    servers = data.get("mcp_servers")
    result.mcp = isinstance(servers, dict) and is_our_mcp(_plain(servers.get(MCP_NAME)))
    approved = {
        (a.get("event"), a.get("command"))
        for a in allow.get("approvals") or []
        if isinstance(a, dict)
    }
    missing = [event for event, command in configured.items() if (event, command) not in approved]
    if missing:
        result.warnings.append(
            f"Hermes hooks not approved ({', '.join(missing)}): Hermes skips them outside a "
            "terminal; run `funes add hermes` again or `hermes hooks` to approve"
        )
    result.stale = stale_hook_warnings(list(configured.values()), ctx, "hermes")
    result.warnings.extend(result.stale)
    return result
