"""What state a memory is in, asked without raising: the domain's answer, not an error sniffed.

`state(ref)` says whether a local memory is there, readable and holds chunks; `probe(ref)`
adds, for a memory that cannot be read, what is wrong and what to do. This is the one place
that turns the store's open errors into states (`status` asks it instead of catching them).
A shared memory (a Hub dataset or a directory export) is read through its local cache: its
state is SHARED here, and opening it (funes.memory.opening) says what is wrong, if anything.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from funes.errors import IncompatibleStore, StoreError
from funes.memory.ref import MemoryKind, MemoryRef
from funes.store import Store, StoreState


class MemoryState(StrEnum):
    READY = "ready"  # opens and holds chunks
    EMPTY = "empty"  # opens, holds no chunks yet (or no writer has created its schema yet)
    MISSING = "missing"  # no memory file where the reference points
    INCOMPATIBLE = "incompatible"  # written by a newer funes (a schema this one does not know)
    UNREADABLE = "unreadable"  # not a SQLite database, damaged, or not readable by this user
    SHARED = "shared"  # a Hub dataset or directory export, read through its local cache


@dataclass(frozen=True, slots=True)
class Probe:
    """A memory's state and, when it cannot be read, why (`problem`) and what to do (`hint`)."""

    state: MemoryState
    problem: str | None = None
    hint: str | None = None


def probe(ref: MemoryRef) -> Probe:
    """The state of the memory `ref` names (see MemoryState). Never raises for a memory that
    is absent, empty, damaged or too new; opens a local one read-only (an older schema is
    upgraded in place on the way, as every read does) and closes it again."""
    if ref.shared:
        return Probe(MemoryState.SHARED)
    assert ref.path is not None
    if not ref.path.exists():
        return missing(ref)
    try:
        store = Store.open(ref.path, readonly=True)
    except IncompatibleStore as exc:
        return Probe(MemoryState.INCOMPATIBLE, exc.message, exc.hint)
    except StoreError as exc:
        return Probe(MemoryState.UNREADABLE, exc.message, exc.hint)
    try:
        ready = store.state() is StoreState.READY
    except StoreError as exc:
        return Probe(MemoryState.UNREADABLE, exc.message, exc.hint)
    finally:
        store.close()
    return Probe(MemoryState.READY if ready else MemoryState.EMPTY)


def missing(ref: MemoryRef) -> Probe:
    """The state of a memory that is not there: the local one before its first index (nothing
    more to say: the next index builds it), or a path named explicitly, where nothing was
    found (`problem` and `hint` say so: a caller must not report another memory instead)."""
    if ref.kind is MemoryKind.LOCAL:
        return Probe(MemoryState.MISSING)
    return Probe(
        MemoryState.MISSING,
        f"no memory at {ref.path}",
        "check the path: a memory file, or a directory holding memory.db "
        "(`funes index --memory <path>` builds one there)",
    )


def state(ref: MemoryRef) -> MemoryState:
    """The state of the memory `ref` names (see `probe` for why it cannot be read)."""
    return probe(ref).state
