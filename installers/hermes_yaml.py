"""Hermes' config.yaml read and written losslessly: the user's comments, quoting, key order,
indentation, line endings and the lines around the document come back as they were.

`installers/hermes.py` decides what funes puts in the file; this module hands it the file as a
ruamel.yaml round-trip mapping (`load`), turns the mapping back into the file's text (`dump`,
`normal`), deletes or replaces an entry and gives back a key funes emptied without losing a
comment (`drop`, `replace`, `give_back`), and refuses a text that lost one of the file's
comments (`keeps_comments`). It knows nothing of hooks, MCP servers or approvals.

ruamel's round trip is not lossless on its own; each gap is worked around here. It reads and
writes `\n` (the file's `\r\n` is put back: `_newline`). It drops a byte-order mark, a first
blank line, the comments before `---`, the `---` and all from `...` on (kept as text around the
document: `_split`, `Layout`), and reads a file of comments alone as no document (an empty
mapping here, written as its comment lines, not `{}`). It does not detect the file's
indentation (the one that reproduces the file is found among `_INDENTS`). It hangs a comment
line on the node before it, so deleting or replacing that node would take the user's comment
along (its lines move to where they printed: `_place`). Its representer appends a collection's
end comment to the collection's comment list on every dump, so an end comment set after one
dump would never print (`_drop_end_slots`), and it prints `ca.end` only beside a `ca.comment`.
Its loader drops or moves comments inside a `[...]` or `{...}` (the scanner's tokens are
counted instead: `_comments`).
"""

from __future__ import annotations

import io
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedBase, CommentedMap
from ruamel.yaml.error import CommentMark, YAMLError
from ruamel.yaml.tokens import CommentToken

from ._common import FIX_HINT, InstallError, read_text

_INDENTS = ((2, 4, 2), (2, 2, 0), (4, 4, 2), (4, 6, 4), (4, 4, 0))
# How a key funes puts its entries under looked before they went in (an absent key is not noted:
# funes created it, and `remove` deletes it once empty).
KEPT, NULL = "kept", "null"  # a list or mapping (empty or not) / the key with no value


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


def load(path: Path) -> tuple[CommentedMap, YAML, Layout]:
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
        if dump(yaml, data, Layout(head, tail)) == text:
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


def dump(yaml: YAML, data: Any, layout: Layout = Layout()) -> str:
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
    for value in _children(node):
        _drop_end_slots(value, seen)


def _children(node: CommentedBase) -> Iterable[Any]:
    """The values in a ruamel node: a mapping's values, a sequence's items; none in a scalar
    (a `TaggedScalar`, `!tag value`, is a node without entries)."""
    if isinstance(node, Mapping):
        return node.values()
    return node if isinstance(node, Iterable) else ()


def normal(yaml: YAML, text: str) -> str | None:
    """`text` as `yaml` re-emits it (`null` and `~` become an empty value, …); None when it does
    not parse. Two texts with the same normal form hold one document laid out one way."""
    try:
        data, head, tail = _parse(yaml, text.replace("\r\n", "\n"))
        return dump(yaml, data, Layout(head, tail))
    except YAMLError:
        return None


# -- the user's comments -------------------------------------------------------------------
# funes writes no comments: every comment in config.yaml is the user's. ruamel keeps a comment
# line on the node before it (on the last scalar of a block collection), so once add's entries
# went in after a user's value, the comment that followed that value rides on funes' nodes and
# would go with them when one is deleted or replaced. Before that, its lines move to the next
# node that stays (the comment lines before a key or item), or to the end of the file: the same
# place in the text. `Where` is the (container, key) chain from the document down to an entry.

Where = list[tuple[Any, Any]]


def drop(where: Where) -> None:
    """Delete the entry at the end of `where`, keeping the comments on it and inside it."""
    container, key = where[-1]
    lines = _entry_lines(container, key, set())
    _place(lines, where)
    if isinstance(container, CommentedMap):
        container.ca.items.pop(key, None)  # CommentedMap leaves it behind
    del container[key]


def replace(where: Where, value: Any) -> None:
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
    first: tuple[int, ...]
    last: tuple[int, ...]
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
    for key in _entries(node):
        lines += _entry_lines(node, key, seen)
    return lines + _slot_lines([node.ca.end], (0,), seen)


def _entries(node: CommentedBase) -> Iterable[Any]:
    """The keys of a ruamel mapping, the indices of a sequence, none for another node (a
    `TaggedScalar`, a set: no entry of theirs holds comments of its own)."""
    if isinstance(node, Mapping):
        return node
    return range(len(node)) if isinstance(node, Sequence) else ()


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


def give_back(where: Where, was: object) -> None:
    """A key funes emptied, as it was before funes' entries went in (see `hermes._before`)."""
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
        replace(where, None)
    else:
        drop(where)


def keeps_comments(path: Path, text: str, *, adding: bool = False) -> None:
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
