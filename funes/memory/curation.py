"""This host's review of which sessions a project memory may receive (`funes curate`).

    <data>/curation/<remote key>.txt     one file per project memory, human-readable, 0600:

    # funes curate: which of this host's sessions may be published to <memory>
    # …
    memory hf://datasets/acme/widget-memory
    project acme/widget
    include 5e0d1c2a-7b3f-4a56-9c8d-0e1f2a3b4c5d  2026-11-20T10:00:00Z  fix the flaky retry test
    exclude 9b1c0d2e-…  2026-11-21T09:30:00Z  notes about the salary review

Only the first two words of a decision line are read (the rest is a reminder for whoever edits
the file by hand); `#` starts a comment. A memory with such a file is a *project memory*: a
push to it sends only the sessions marked `include` (funes.commands.push).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from funes.paths import PRIVATE_FILE, Paths, ensure_private_dir

DECISIONS = ("include", "exclude")
HEADER = """\
# funes curate: which of this host's sessions may be published to {memory}
# Sessions whose checkout has a git remote of the project are reviewed; a push to this
# memory sends only the sessions marked include. One line per reviewed session:
#   include|exclude <session id>  <started>  <opening prompt>
# Edit by hand if you like: only the first two words of a line are read.
"""


@dataclass(slots=True)
class Curation:
    """One project memory's review on this host."""

    memory: str  # the memory's label
    project: str  # owner/name
    decisions: dict[str, str] = field(default_factory=dict)  # session id → include | exclude
    notes: dict[str, str] = field(default_factory=dict)  # session id → "<started>  <prompt>"

    @property
    def included(self) -> frozenset[str]:
        return frozenset(s for s, d in self.decisions.items() if d == "include")


def curation_path(paths: Paths, key: str) -> Path:
    return paths.data / "curation" / f"{key}.txt"


def load_curation(paths: Paths, key: str) -> Curation | None:
    """The review of the remote keyed `key`, or None when it was never curated here (or its
    file names no project: it is then not a project memory)."""
    try:
        text = curation_path(paths, key).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    return parse_curation(text)


def parse_curation(text: str) -> Curation | None:
    memory = project = ""
    decisions: dict[str, str] = {}
    notes: dict[str, str] = {}
    for raw in text.splitlines():
        if raw.lstrip().startswith("#"):
            continue
        words = raw.strip().split(None, 2)
        if len(words) < 2:
            continue
        if words[0] == "memory":
            memory = words[1]
        elif words[0] == "project":
            project = words[1].lower()
        elif words[0] in DECISIONS:
            decisions[words[1]] = words[0]
            if len(words) > 2:
                notes[words[1]] = words[2]
    if not project:
        return None
    return Curation(memory, project, decisions, notes)


def save_curation(paths: Paths, key: str, curation: Curation) -> Path:
    """Write the review atomically (decisions in the order of `curation.decisions`)."""
    target = curation_path(paths, key)
    ensure_private_dir(target.parent)
    lines = [HEADER.format(memory=curation.memory), f"memory {curation.memory}"]
    lines.append(f"project {curation.project}")
    for session, decision in curation.decisions.items():
        note = curation.notes.get(session, "")
        lines.append(f"{decision} {session}" + (f"  {note}" if note else ""))
    from filelock import FileLock  # writers only: readers never load it

    with FileLock(str(target.with_suffix(".lock")), mode=PRIVATE_FILE):
        tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, PRIVATE_FILE)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write("\n".join(lines) + "\n")
        os.replace(tmp, target)
    return target


def all_curations(paths: Paths) -> dict[str, Curation]:
    """Every project memory reviewed on this host, by remote key."""
    out: dict[str, Curation] = {}
    folder = paths.data / "curation"
    for path in sorted(folder.glob("*.txt")) if folder.is_dir() else ():
        try:
            found = parse_curation(path.read_text(encoding="utf-8", errors="replace"))
        except OSError:
            continue
        if found is not None:
            out[path.stem] = found
    return out
