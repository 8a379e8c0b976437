"""Which memory, in what state, and how to open it; the Runtime every command is handed.

    ref.py      MemoryRef: `local`, a path, a directory export or a Hub dataset, parsed once
    state.py    state(ref) → MemoryState (READY, EMPTY, MISSING, …), asked without raising
    opening.py  open a memory for reading (a remote one through its cache) or for writing
    runtime.py  Runtime: resolved locations, model choice, lazily loaded models
    binding.py  which memory each agent is bound to on this host (bindings.json)
    publishing.py  this host's publishing to each shared memory (requests, failures, last push)
    curation.py which sessions a project memory may receive (this host's review, a text file)
    owner.py    whose memory it is: the user's own, or a third party's (labelled in outputs)

Sits between the commands and the pipelines: commands (and the CLI and MCP adapters) use it;
it uses the store and the remote pipeline. Other packages import from this face.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from funes.faces import lazy_face
from funes.memory.lazy import EXPORTS

if TYPE_CHECKING:
    from funes.memory.binding import Binding, bind, bindings_path, bound_agents, load_bindings
    from funes.memory.curation import (
        Curation,
        all_curations,
        curation_path,
        load_curation,
        save_curation,
    )
    from funes.memory.opening import OpenMemory, open_for_read, open_for_write, open_memory
    from funes.memory.owner import foreign_owner
    from funes.memory.publishing import PublishQueue, PublishState
    from funes.memory.ref import (
        MemoryKind,
        MemoryRef,
        as_push_target,
        bound_ref,
        parse_memory,
        remote_for,
    )
    from funes.memory.runtime import RERANKER_RETRY_S, Runtime
    from funes.memory.state import MemoryState, Probe, probe, state

__all__ = [
    "RERANKER_RETRY_S",
    "Binding",
    "Curation",
    "MemoryKind",
    "MemoryRef",
    "MemoryState",
    "OpenMemory",
    "Probe",
    "PublishQueue",
    "PublishState",
    "Runtime",
    "all_curations",
    "as_push_target",
    "bind",
    "bindings_path",
    "bound_ref",
    "curation_path",
    "bound_agents",
    "load_bindings",
    "load_curation",
    "foreign_owner",
    "open_for_read",
    "open_for_write",
    "open_memory",
    "parse_memory",
    "probe",
    "remote_for",
    "save_curation",
    "state",
]

lazy_face(__name__, EXPORTS)  # each name imports its module when first read
