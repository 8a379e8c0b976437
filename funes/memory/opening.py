"""Opening a memory: for reading (a remote one through its local cache) or for writing.

Raises the errors of what went wrong (NoIndex, StoreError, IncompatibleStore, RemoteError);
a caller that only wants to know a memory's state asks `funes.memory.state` instead.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from funes.errors import IncompatibleStore, NoIndex, StoreError, UsageError
from funes.memory.ref import MemoryKind, MemoryRef, remote_for
from funes.memory.runtime import Runtime
from funes.memory.state import missing
from funes.plurals import counted, plural
from funes.store import Store, StoreState


@dataclass(slots=True)
class OpenMemory:
    """An open memory, the label of what was actually read, and notes for the reader."""

    store: Store
    label: str
    notes: list[str] = field(default_factory=list)

    def close(self) -> None:
        self.store.close()


def _accept_model(rt: Runtime, ref: MemoryRef) -> object:
    def accept(model_id: str | None, dim: int) -> None:
        spec = rt.embedder_spec_for(model_id)
        if model_id != spec.model_id or (spec.dim and dim != spec.dim):
            raise IncompatibleStore(
                f"{ref.label} was built with {model_id or 'an unknown model'} ({dim}-d vectors); "
                f"this funes embeds queries with {spec.model_id}",
                hint="set FUNES_EMBEDDER to the remote's model, or read a memory built with yours",
            )

    return accept


def open_memory(rt: Runtime, ref: MemoryRef) -> OpenMemory:
    """Open a memory for reading (a remote one through its local cache; see funes.remote.read).

    Raises:
        NoIndex: the memory does not exist yet or holds no chunks.
        StoreError / IncompatibleStore: it cannot be opened, or (remote) its embedding model is
            not the one this funes embeds queries with.
        RemoteError (RemoteOffline / RemoteMissing / RemoteUnauthorized): a remote memory
            cannot be read and nothing usable is cached.
    """
    if ref.shared:
        from funes.remote import open_cached  # Lance and the Hub client: remote memories only

        remote = remote_for(ref)
        cached = open_cached(
            remote,
            rt.paths.remote_cache,
            revision=ref.revision,
            offline=rt.offline and remote.networked,
            revision_ttl_s=rt.remote.revision_ttl_s,
            accept_model=_accept_model(rt, ref),  # type: ignore[arg-type]
        )
        notes = [cached.note] if cached.note else []
        if cached.skipped_rows:
            notes.append(
                f"{counted(cached.skipped_rows, 'row')} of {remote.label} could not be read and "
                f"{plural(cached.skipped_rows, 'was', 'were')} skipped"
            )
        return OpenMemory(Store.open(cached.path, readonly=True), cached.label, notes)
    return OpenMemory(open_for_read(rt, ref), ref.label)


def open_for_read(rt: Runtime, ref: MemoryRef) -> Store:
    """Open a memory for reading (see `open_memory`, which also says what was read)."""
    if ref.shared:
        return open_memory(rt, ref).store
    assert ref.path is not None
    if not ref.path.exists():
        if ref.kind is MemoryKind.LOCAL:
            raise NoIndex(
                "no memory yet",
                hint="run `funes index` (or `funes add <agent>`) to build one from your agent sessions",
            )
        absent = missing(ref)
        raise StoreError(absent.problem or f"no memory at {ref.path}", hint=absent.hint)
    store = Store.open(ref.path, readonly=True)
    if store.state() is StoreState.EMPTY:
        store.close()
        raise NoIndex(
            f"memory {ref.label} holds no chunks yet",
            hint="run `funes index` to index your agent sessions",
        )
    return store


def open_for_write(rt: Runtime, ref: MemoryRef) -> Store:
    """Open (creating) a local memory for writing. Remote memories are written by `push`.

    Raises StoreError when its folder cannot be made (a file in the way, no permission).
    """
    if ref.shared:
        raise UsageError(f"{ref.label} is a remote memory", hint="index locally, then `funes push`")
    assert ref.path is not None
    rt.paths.ensure()
    try:
        ref.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    except OSError as exc:
        raise StoreError(
            f"cannot create the folder of memory {ref.label}: {exc.strerror or exc}",
            hint=f"check {ref.path.parent} (a file in the way, or no permission)",
        ) from None
    lock = rt.paths.lock_file if ref.kind is MemoryKind.LOCAL else ref.path.with_suffix(".lock")
    return Store.open(ref.path, lock_path=lock)
