"""Where sessions come from: one TraceSource per agent, all emitting the same Turn/Block model.

Knows nothing of chunks, storage, models or the network. Adding an agent = one module here,
one entry in `SOURCES`, fixtures under fixtures/<agent>/, and an installer.
"""

from __future__ import annotations

from funes.traces.discover import SOURCES, SourceEntry, discover, sources_for_path
from funes.traces.model import (
    Block,
    BlockType,
    Harness,
    Role,
    ToolStatus,
    Turn,
    iso_utc,
    normalize_ts,
    parse_ts,
    printable,
    strip_terminal_controls,
    workdir_facet,
)
from funes.traces.source import ReadStats, TraceSource, Unit

__all__ = [
    "SOURCES",
    "Block",
    "BlockType",
    "Harness",
    "ReadStats",
    "Role",
    "SourceEntry",
    "ToolStatus",
    "TraceSource",
    "Turn",
    "Unit",
    "discover",
    "iso_utc",
    "normalize_ts",
    "parse_ts",
    "printable",
    "sources_for_path",
    "strip_terminal_controls",
    "workdir_facet",
]
