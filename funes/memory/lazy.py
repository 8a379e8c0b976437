"""Where each name of the funes.memory face lives, loaded on first use (PEP 562).

Every command is handed a Runtime (runtime.py) before it does anything; the rest of the face
(opening a memory and the store under it, bindings, publishing, curation) loads when used, so
`funes recall` can start loading its model before it imports the store (issue 15: cold start).
"""

from __future__ import annotations

# name on the face → (module of funes.memory, its name there)
EXPORTS: dict[str, tuple[str, str]] = {
    "Binding": ("binding", "Binding"),
    "bind": ("binding", "bind"),
    "bindings_path": ("binding", "bindings_path"),
    "bound_agents": ("binding", "bound_agents"),
    "load_bindings": ("binding", "load_bindings"),
    "Curation": ("curation", "Curation"),
    "all_curations": ("curation", "all_curations"),
    "curation_path": ("curation", "curation_path"),
    "load_curation": ("curation", "load_curation"),
    "save_curation": ("curation", "save_curation"),
    "OpenMemory": ("opening", "OpenMemory"),
    "open_for_read": ("opening", "open_for_read"),
    "open_for_write": ("opening", "open_for_write"),
    "open_memory": ("opening", "open_memory"),
    "foreign_owner": ("owner", "foreign_owner"),
    "PublishQueue": ("publishing", "PublishQueue"),
    "PublishState": ("publishing", "PublishState"),
    "MemoryKind": ("ref", "MemoryKind"),
    "MemoryRef": ("ref", "MemoryRef"),
    "as_push_target": ("ref", "as_push_target"),
    "bound_ref": ("ref", "bound_ref"),
    "parse_memory": ("ref", "parse_memory"),
    "remote_for": ("ref", "remote_for"),
    "RERANKER_RETRY_S": ("runtime", "RERANKER_RETRY_S"),
    "Runtime": ("runtime", "Runtime"),
    "MemoryState": ("state", "MemoryState"),
    "Probe": ("state", "Probe"),
    "probe": ("state", "probe"),
    "state": ("state", "state"),
}
