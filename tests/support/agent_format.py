"""The agent format read back by its published grammar (AGENTS.md): a line is passage text
exactly when it starts with `>`; every other line must be structure funes wrote."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import pytest

HEADER = re.compile(
    r"^\[(?P<ts>[^\]\s]*)\] (?P<harness>\S+) (?P<where>\S+) (?P<type>\S+)  score=(?P<score>\d\.\d{3})"
    r"(?:  owner=(?P<owner>\S+))?$"
)
GET_LINE = re.compile(r"^  → get .+ --memory \S+$")  # arguments shell-quoted
ALSO = re.compile(r"^  = also \S+ \S+$")  # both ids shell-quoted (one token each here)
MISS = re.compile(r"^no supporting passage \(best support \S+ < \S+; [^)]+\)$")
NEIGHBOR = re.compile(r"^  ~ \[\S+ \S+ seq\d+\] [^\n]*$")
TURN_HEADER = re.compile(r"^\[[^\]\s]*\] \S+ seq\d+ turn=.+$")  # the id as stored (printable)


@dataclass
class ParsedHit:
    header: str
    score: str
    owner: str | None
    get: str = ""
    text: list[str] = field(default_factory=list)
    also: list[str] = field(default_factory=list)
    neighbors: list[str] = field(default_factory=list)


def parse_recall(out: str) -> tuple[str | None, list[ParsedHit]]:
    """The recall agent format by its published grammar; raises on any line it does not allow."""
    lines = out.rstrip("\n").split("\n")
    first = lines[0] if lines and lines[0].startswith("third-party memory: ") else None
    hits: list[ParsedHit] = []
    current: ParsedHit | None = None
    for line in lines[1 if first else 0 :]:
        if line == ">" or line.startswith("> "):
            assert current is not None and current.get, line
            current.text.append(line[2:])
        elif m := HEADER.match(line):
            assert current is None, f"a header inside a hit: {line!r}"
            current = ParsedHit(line, m["score"], m["owner"])
        elif GET_LINE.match(line):
            assert current is not None and not current.get and not current.text, line
            current.get = line
        elif ALSO.match(line):
            assert current is not None and current.get and not current.text, line
            current.also.append(line)
        elif MISS.match(line):
            assert current is None and not hits, f"a miss line after a hit: {line!r}"
        elif NEIGHBOR.match(line):
            assert current is not None and current.get, line
            current.neighbors.append(line)
        elif line == "---":
            assert current is not None, "a separator outside a hit"
            hits.append(current)
            current = None
        else:
            pytest.fail(f"a line the grammar does not allow: {line!r}")
    assert current is None, "the last hit is not closed"
    return first, hits
