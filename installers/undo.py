"""Undo funes' own edit of a config file, line for line, keeping what others changed since.

`add` notes, beside its backups, the text of a config as it was without funes' entries
(`before`) and the text it wrote (`after`). `remove` then takes funes' lines out of the file as
it is now: when nobody touched the file since, that gives back `before` byte for byte; when the
agent or the user edited it meanwhile (Codex records the trust of funes' hooks in its
config.toml; Claude Code rewrites `~/.claude.json` as it runs), funes' hunks are reversed where
they still stand unchanged and the rest of the file is kept as it is. The caller checks that the
result parses to the document its own removal gives, and falls back to that removal otherwise.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from difflib import SequenceMatcher
from pathlib import Path
from typing import Any

from ._common import _slug, backup_text, dump_json, pruned, write_note


def _note(path: Path, backups: Path) -> Path:
    return backups / (_slug(path) + ".funes-edit.json")


def noted_edit(path: Path, backups: Path) -> tuple[str, str] | None:
    """The (before, after) texts `note_edit` recorded for the config at `path`, or None when
    there is no readable note (an install by a funes before the note)."""
    try:
        data: Any = json.loads(_note(path, backups).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict):
        return None
    before, after = data.get("before"), data.get("after")
    if isinstance(before, str) and isinstance(after, str):
        return before, after
    return None


def note_edit(path: Path, backups: Path, before: str | None, after: str | None) -> None:
    """Record that funes turned `before` (the config without any of funes' entries, "" for no
    file) into `after` (what it writes now). None for either drops the note. The note is a
    private file (0600) in `backups`: it holds the config's text, as the backup does."""
    note = _note(path, backups)
    if before is None or after is None:
        note.unlink(missing_ok=True)
        return
    data = json.dumps({"before": before, "after": after}, ensure_ascii=False).encode("utf-8")
    write_note(note, data, backups)


def drop_note(path: Path, backups: Path) -> None:
    """Forget the edit noted for `path` (after `remove` took funes' entries out)."""
    _note(path, backups).unlink(missing_ok=True)


def undo(before: str, after: str, current: str) -> str | None:
    """`current` with the edit `before` → `after` reversed, or None when one of its hunks is no
    longer in `current` as it was written (then only a parser can take funes' entries out).

    Lines are compared with their line endings. Each hunk of the edit (lines funes inserted or
    rewrote) is looked up in `current` by aligning `after` with it; everything else in `current`
    (lines added, removed or changed by others) is kept.
    """
    if current == after:
        return before
    old, new, now = _lines(before), _lines(after), _lines(current)
    where: dict[int, int] = {}
    for a, c, size in SequenceMatcher(None, new, now, autojunk=False).get_matching_blocks():
        where.update((a + k, c + k) for k in range(size))
    out = list(now)
    hunks = SequenceMatcher(None, old, new, autojunk=False).get_opcodes()
    for tag, i1, i2, j1, j2 in reversed(hunks):
        if tag == "equal":
            continue
        if j2 > j1:
            spots = [where.get(j) for j in range(j1, j2)]
            first = spots[0]
            if first is None or spots != list(range(first, first + j2 - j1)):
                return None
            start, end = first, first + j2 - j1
        elif j1 in where:
            start = end = where[j1]
        elif j1 > 0 and j1 - 1 in where:
            start = end = where[j1 - 1] + 1
        elif j1 == 0 == len(new):
            start = end = 0
        else:
            return None
        out[start:end] = old[i1:i2]
    return "".join(out)


def _lines(text: str) -> list[str]:
    """`text` split after each `\n`, the ending kept with its line (`\r\n` too)."""
    parts = text.split("\n")
    return [part + "\n" for part in parts[:-1]] + ([parts[-1]] if parts[-1] else [])


def undone(
    path: Path, backups: Path, current: str, removed: str, parse: Callable[[str], Any]
) -> str | None:
    """`current` with the noted edit of `path` reversed (`undo`), when `parse` reads the result
    as the same document as `removed` (the caller's own removal of funes' entries from
    `current`); None when there is no note, a hunk is gone, or the result means something
    else."""
    noted = noted_edit(path, backups)
    if noted is None:
        return None
    text = undo(*noted, current)
    if text is None:
        return None
    try:
        return text if parse(text) == parse(removed) else None
    except ValueError:
        return None


def raw_text(path: Path) -> str:
    """The text at `path` with its line endings as they are (`\r\n` too), "" for no file."""
    try:
        with open(path, encoding="utf-8", newline="") as f:
            return f.read()
    except FileNotFoundError:
        return ""


def json_without_funes(path: Path, backups: Path, text: str, removed: dict[str, Any]) -> str:
    """JSON config `text` (as read, line endings kept) as the user had it without funes, given
    `removed`, its document with funes' entries taken out: `text` itself when it holds none
    of them; `add`'s noted edit undone line for line when that reads as `removed` (empty
    objects and arrays aside: removal drops the ones it empties); else the bytes from before
    funes' first edit when they read as `removed`; else `removed` in `text`'s layout."""

    def parse(json_text: str) -> Any:
        return pruned(json.loads(json_text)) if json_text.strip() else {}

    if parse(text) == pruned(removed):
        return text  # nothing of funes' in it
    undone_text = undone(path, backups, text, dump_json(removed, text), parse)
    if undone_text is not None:
        return undone_text
    try:
        before = backup_text(path, backups)
        if parse(before) == pruned(removed):
            return before
    except (OSError, ValueError):
        pass
    return dump_json(removed, text)
