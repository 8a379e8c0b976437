"""The tombstones of a memory, kept beside it: `<memory>.forgotten.json`.

A memory's tombstones (funes.store.forgetting: forgotten session ids and forget rules) live in
its `forgotten` table, which a rebuild does not have: moving a damaged memory.db away and
running `funes index` again (the advice for a damaged file or a model change) read the
transcripts again and brought every forgotten session back. This file keeps them beside the
memory's path: `Store.forget` rewrites it after each forget, and every writer
(`Store.writing`) adopts what it holds that the memory's table lacks before it writes. So a
memory built again at the same path keeps out what was forgotten, as long as its transcripts
remain; deleting this file is how a user lets those sessions come back.

Layout (JSON, 0600): `{"format": FORMAT, "sessions": [session id, …], "rules": [the rule's
canonical JSON (ForgetRule.encode), …]}`, both sorted. Written whole to a temporary file in
the same folder, then renamed over the old one: a reader sees the old set or the new one.
A file that cannot be read or parsed is reported by `read` (ValueError or OSError); writers
then go on with the table alone and the next forget writes it again from the table.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

FORMAT = "funes-forgotten/1"
SUFFIX = ".forgotten.json"


def path_for(db: Path) -> Path:
    """Where the tombstones of the memory at `db` are kept."""
    return db.with_name(db.name + SUFFIX)


def read(path: Path) -> tuple[list[str], list[str]] | None:
    """(session ids, encoded rules) the file at `path` holds; None when there is no file.

    Raises OSError when it cannot be read, ValueError when it is not this format."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    doc = json.loads(text)  # json.JSONDecodeError is a ValueError
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise ValueError(f"{path} is not a {FORMAT} file")
    sessions, rules = doc.get("sessions"), doc.get("rules")
    if not isinstance(sessions, list) or not isinstance(rules, list):
        raise ValueError(f"{path}: `sessions` and `rules` must be lists")
    if not all(isinstance(v, str) for v in sessions + rules):
        raise ValueError(f"{path}: `sessions` and `rules` must hold strings")
    return sessions, rules


def write(path: Path, sessions: list[str], rules: list[str]) -> None:
    """Replace the file at `path` with these tombstones (0600). Raises OSError."""
    doc = {"format": FORMAT, "sessions": sorted(set(sessions)), "rules": sorted(set(rules))}
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(json.dumps(doc, indent=1) + "\n")
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
