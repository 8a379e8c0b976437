"""Where each name of the funes.traces face lives, loaded on first use (PEP 562).

A command that only reads a memory (`funes recall`, `get`, `status`) uses the shared model
(Harness, BlockType, Role) and the agent homes, not every agent's transcript parser; they load
when a name of theirs is used.
"""

from __future__ import annotations

# name on the face → (module of funes.traces, its name there)
EXPORTS: dict[str, tuple[str, str]] = {
    "AGENTS": ("agents", "AGENTS"),
    "Agent": ("agents", "Agent"),
    "AgentHomes": ("agents", "AgentHomes"),
    "installable": ("agents", "installable"),
    "checkout_identities": ("checkout", "checkout_identities"),
    "repo_identity": ("checkout", "repo_identity"),
    "discover": ("discover", "discover"),
    "FilesSource": ("discover", "FilesSource"),
    "sources_for_path": ("discover", "sources_for_path"),
    "names_session": ("hermes", "names_session"),
    "STALE_TAIL_S": ("jsonl", "STALE_TAIL_S"),
    "MAX_LABEL": ("labels", "MAX_LABEL"),
    "MAX_BLOCK_CHARS": ("model", "MAX_BLOCK_CHARS"),
    "short_id": ("labels", "short_id"),
    "Block": ("model", "Block"),
    "BlockType": ("model", "BlockType"),
    "Harness": ("model", "Harness"),
    "Role": ("model", "Role"),
    "ToolStatus": ("model", "ToolStatus"),
    "Turn": ("model", "Turn"),
    "clean_text": ("model", "clean_text"),
    "iso_utc": ("model", "iso_utc"),
    "normalize_ts": ("model", "normalize_ts"),
    "parse_ts": ("model", "parse_ts"),
    "one_line": ("model", "one_line"),
    "printable": ("model", "printable"),
    "quote_passage": ("model", "quote_passage"),
    "strip_terminal_controls": ("model", "strip_terminal_controls"),
    "workdir_facet": ("model", "workdir_facet"),
    "ParquetSource": ("parquet", "ParquetSource"),
    "ReadStats": ("source", "ReadStats"),
    "TraceSource": ("source", "TraceSource"),
    "Unit": ("source", "Unit"),
}
