"""Which memory each agent is bound to on this host (`funes add <agent> <memory>`).

    <data>/bindings.json   {"v": 1, "agents": {"claude_code": {"memory": "hf://datasets/o/r",
                                                                "since": "2026-…Z"}}}

A binding names the memory an agent's MCP server reads by default and, for a shared memory
(a Hugging Face dataset or a shared directory), the remote its turns are published to at
session boundaries (funes.commands.publish). The agent's own configuration carries the same
name (the installers write it into the MCP registration); this file is funes' side of it,
read by the spool worker (which boundary publishes where), `status` and recall (a memory
bound here also shows this host's turns not yet published). Written atomically under a lock,
0600. Absent or unreadable: no bindings (every agent uses the local memory).
"""

from __future__ import annotations

import datetime as dt
import json
import os
from dataclasses import dataclass
from pathlib import Path

from funes.paths import PRIVATE_FILE, Paths, ensure_private_dir

FORMAT_VERSION = 1


@dataclass(frozen=True, slots=True)
class Binding:
    """One agent bound to one memory."""

    agent: str  # the harness value (`claude_code`, `codex`, `pi`, `hermes`)
    memory: str  # the memory's label: hf://datasets/o/r, file:///dir, or a memory file path
    since: str  # ISO-8601 UTC of the `funes add` that bound it


def bindings_path(paths: Paths) -> Path:
    return paths.data / "bindings.json"


def load_bindings(paths: Paths) -> dict[str, Binding]:
    """Every binding on this host, by agent (harness value). Never raises: an absent or
    damaged file reads as none (the next `funes add` rewrites it)."""
    try:
        raw = json.loads(bindings_path(paths).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    agents = raw.get("agents") if isinstance(raw, dict) else None
    out: dict[str, Binding] = {}
    for agent, value in (agents or {}).items() if isinstance(agents, dict) else ():
        if isinstance(value, dict) and isinstance(value.get("memory"), str) and value["memory"]:
            out[str(agent)] = Binding(str(agent), value["memory"], str(value.get("since") or ""))
    return out


def bind(paths: Paths, agent: str, memory: str | None) -> Binding | None:
    """Record that `agent` uses `memory` (its label); None removes the agent's binding.

    Keeps `since` when the agent is bound to the same memory again; writes nothing (and
    creates no file) when the record would not change. Returns the binding.
    Raises OSError when the data directory cannot be written.
    """
    target = bindings_path(paths)
    if memory is None and agent not in load_bindings(paths):
        return None  # nothing to remove: an unbound agent leaves no file behind
    ensure_private_dir(paths.data)
    from filelock import FileLock  # writers only: readers never load it

    with FileLock(str(target.with_suffix(".lock")), mode=PRIVATE_FILE):
        current = load_bindings(paths)
        old = current.get(agent)
        if memory is None:
            if current.pop(agent, None) is None:
                return None
            made = None
        else:
            if old is not None and old.memory == memory:
                return old
            made = current[agent] = Binding(agent, memory, _now())
        doc = {
            "v": FORMAT_VERSION,
            "agents": {
                a: {"memory": b.memory, "since": b.since} for a, b in sorted(current.items())
            },
        }
        tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, PRIVATE_FILE)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(json.dumps(doc, indent=2) + "\n")
        os.replace(tmp, target)
    return made


def bound_agents(paths: Paths, memory: str) -> list[str]:
    """The agents bound to the memory labelled `memory` (sorted)."""
    return sorted(a for a, b in load_bindings(paths).items() if b.memory == memory)


def _now() -> str:
    return dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
