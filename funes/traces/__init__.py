"""Where sessions come from: one TraceSource per agent, all emitting the same Turn/Block model.

Knows nothing of chunks, storage, models or the network. Adding an agent = a `Harness`
value, its record in `AGENTS` (agents.py), its parser module here, fixtures under
fixtures/<agent>/, and its installer in installers/.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from funes.faces import lazy_face
from funes.traces.lazy import EXPORTS

if TYPE_CHECKING:
    from funes.traces.agents import AGENTS, Agent, AgentHomes, installable
    from funes.traces.checkout import checkout_identities, repo_identity
    from funes.traces.discover import FilesSource, discover, sources_for_path
    from funes.traces.hermes import names_session
    from funes.traces.jsonl import STALE_TAIL_S
    from funes.traces.labels import MAX_LABEL, short_id
    from funes.traces.model import (
        MAX_BLOCK_CHARS,
        Block,
        BlockType,
        Harness,
        Role,
        ToolStatus,
        Turn,
        clean_text,
        iso_utc,
        normalize_ts,
        one_line,
        parse_ts,
        printable,
        quote_passage,
        strip_terminal_controls,
        workdir_facet,
    )
    from funes.traces.parquet import ParquetSource
    from funes.traces.source import ReadStats, TraceSource, Unit

__all__ = [
    "AGENTS",
    "MAX_BLOCK_CHARS",
    "MAX_LABEL",
    "Agent",
    "AgentHomes",
    "Block",
    "BlockType",
    "FilesSource",
    "Harness",
    "ParquetSource",
    "ReadStats",
    "Role",
    "STALE_TAIL_S",
    "ToolStatus",
    "TraceSource",
    "Turn",
    "Unit",
    "checkout_identities",
    "clean_text",
    "discover",
    "installable",
    "iso_utc",
    "names_session",
    "normalize_ts",
    "one_line",
    "parse_ts",
    "printable",
    "quote_passage",
    "repo_identity",
    "short_id",
    "sources_for_path",
    "strip_terminal_controls",
    "workdir_facet",
]

lazy_face(__name__, EXPORTS)  # each name imports its module when first read
