"""Which memory, in what state, and how to open it; the Runtime every command is handed.

    ref.py      MemoryRef: `local`, a path, a directory export or a Hub dataset, parsed once
    state.py    state(ref) → MemoryState (READY, EMPTY, MISSING, …), asked without raising
    opening.py  open a memory for reading (a remote one through its cache) or for writing
    runtime.py  Runtime: resolved locations, model choice, lazily loaded models
    owner.py    whose memory it is: the user's own, or a third party's (labelled in outputs)

Sits between the commands and the pipelines: commands (and the CLI and MCP adapters) use it;
it uses the store and the remote pipeline. Other packages import from this face.
"""

from __future__ import annotations

from funes.memory.opening import OpenMemory, open_for_read, open_for_write, open_memory
from funes.memory.owner import foreign_owner
from funes.memory.ref import MemoryKind, MemoryRef, as_push_target, parse_memory, remote_for
from funes.memory.runtime import RERANKER_RETRY_S, Runtime
from funes.memory.state import MemoryState, Probe, probe, state

__all__ = [
    "RERANKER_RETRY_S",
    "MemoryKind",
    "MemoryRef",
    "MemoryState",
    "OpenMemory",
    "Probe",
    "Runtime",
    "as_push_target",
    "foreign_owner",
    "open_for_read",
    "open_for_write",
    "open_memory",
    "parse_memory",
    "probe",
    "remote_for",
    "state",
]
