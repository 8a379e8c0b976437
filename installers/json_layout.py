"""The layout of a user's JSON config (its indent and separators), so funes writes it back alike.

Python's json writes one layout per document; funes picks the one the file already uses:
- an indent of tabs or of n spaces (the first indented line of the file),
- or compact, all on one line (`{"a":1,"b":[2]}` or `{"a": 1, "b": [2]}`),
with the separators the file uses after `:` and `,`. A layout json cannot write (inline arrays
inside an indented file, mixed indents, `\\u00e9` escapes where the file had them) is written in
the nearest one it can; `remove` gives back the original bytes from funes' notes and backups.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class JsonLayout:
    """How to write a document: `indent` as json.dumps takes it (a string of spaces or tabs,
    or None for one line) and its `item` and `key` separators."""

    indent: str | None = "  "
    item: str = ","
    key: str = ": "


def layout_of(text: str | None) -> JsonLayout:
    """The layout of JSON `text`; 2-space indent (the agents' own) when there is none to read
    (no file, an empty one, `{}`)."""
    if not text or not text.strip():
        return JsonLayout()
    item, key = _separators(text)
    body = text.strip()
    if "\n" not in body:
        if key is None:  # `{}` or `[]`: nothing to tell
            return JsonLayout()
        return JsonLayout(indent=None, item=item or ", ", key=key)
    for line in body.split("\n")[1:]:
        stripped = line.lstrip(" \t")
        if stripped and len(stripped) < len(line):
            return JsonLayout(indent=line[: len(line) - len(stripped)], key=key or ": ")
    return JsonLayout(key=key or ": ")


def dumps(data: Any, layout: JsonLayout) -> str:
    """`data` as JSON text in `layout`, non-ASCII written as is (as the agents write it)."""
    return json.dumps(
        data, indent=layout.indent, separators=(layout.item, layout.key), ensure_ascii=False
    )


def _separators(text: str) -> tuple[str | None, str | None]:
    """The first item separator (`,` or `, `) and key separator (`:` or `: `) of `text`
    outside its strings; None for one the text does not hold."""
    item: str | None = None
    key: str | None = None
    in_string = escaped = False
    for i, ch in enumerate(text):
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
            continue
        if ch == '"':
            in_string = True
        elif ch in ",:":
            spaced = text[i + 1 : i + 2] == " "
            if ch == "," and item is None:
                item = ", " if spaced else ","
            elif ch == ":" and key is None:
                key = ": " if spaced else ":"
            if item is not None and key is not None:
                break
    return item, key
