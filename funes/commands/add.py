"""`funes add <agent> [memory]`: wire funes into an agent (hooks, MCP server), bound to a memory.

Binding an agent to a shared memory (a Hugging Face dataset or a shared directory) is checked
before anything is installed (`add_target`, `check_shared`): the memory must exist (a
missing one is created only when asked), be readable and hold vectors of the embedding model
this host's memory uses. The CLI then builds the first index, makes the first push (where the
wrong-memory question is asked, once) and installs (`run_add`), in that order; running it
again changes nothing, and is how another host joins the same memory.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import TYPE_CHECKING

from funes.errors import (
    AgentError,
    FunesError,
    HubError,
    IncompatibleStore,
    RemoteOffline,
    RemoteUnauthorized,
)
from funes.memory import (
    MemoryKind,
    MemoryRef,
    Runtime,
    bind,
    bindings_path,
    open_memory,
    parse_memory,
    remote_for,
)
from funes.store import Store
from funes.traces import AGENTS, Harness

if TYPE_CHECKING:  # loaded where used: a verb imports only what it runs
    from funes.remote import RemoteState
    from funes.wiring import AgentChanges

PERSONAL_MEMORY = "funes-memory"  # `<user>/funes-memory`: the memory `funes add` offers to set up


def agent_missing(rt: Runtime, harness: Harness) -> str | None:
    """Why the agent looks absent from this machine (no home folder, no program on PATH), or
    None when it is here."""
    agent = AGENTS[harness]
    home = rt.homes.of(harness)
    if home.is_dir() or shutil.which(agent.name):
        return None
    return f"{agent.label} is not set up on this machine (no {home}, no `{agent.name}` on PATH)"


def refuse_missing_agent(rt: Runtime, harness: Harness) -> None:
    """Raise AgentError (nothing changed yet) when the agent is not on this machine."""
    if (missing := agent_missing(rt, harness)) is not None:
        raise AgentError(
            f"{missing}: nothing was changed",
            hint=f"install {AGENTS[harness].label} and run it once, or `funes add "
            f"{AGENTS[harness].name} --force` to prepare its configuration anyway",
        )


def preflight_agent(rt: Runtime, harness: Harness) -> None:
    """Raise AgentError when a configuration file of the agent is one its installer will not
    rewrite (invalid JSON/TOML/YAML, someone else's extension), before `funes add` indexes,
    publishes or writes anything."""
    from funes.wiring import call, context

    call(harness, "preflight", context(rt, harness, None))


def run_add(
    rt: Runtime,
    harness: Harness,
    memory: str | MemoryRef | None = None,
    *,
    force: bool = False,
) -> AgentChanges:
    """Install funes' hooks and MCP server into an agent, bound to `memory` (None: the local
    memory), and record the binding. Idempotent.

    Raises AgentError, and (unless `force`) before creating anything when the agent is not
    on this machine (`agent_missing`).
    """
    from funes.wiring import (
        AgentChanges,
        call,
        context,
        install_hook_script,
        launcher,
        settings_env,
    )

    if not force:
        refuse_missing_agent(rt, harness)
    ref = memory if isinstance(memory, MemoryRef) or memory is None else parse_memory(memory, rt)
    before = _own_files(rt)
    result = AgentChanges(harness.agent_name, hook_installed=install_hook_script(rt))
    # hooks (and the spool workers they start) and the MCP server run this install from now
    # on, with the settings this `add` ran with
    launcher.write(rt, env=settings_env(rt))
    done = call(harness, "install", context(rt, harness, ref))
    result.changed, result.warnings, result.notes = (
        list(done.changed),
        list(done.warnings),
        list(done.notes),
    )
    result.created = list(getattr(done, "created", []))
    result.backups = dict(getattr(done, "backups", {}))
    bind(rt.paths, harness.value, binding_label(ref))
    after = _own_files(rt)
    for path in sorted(after, reverse=True):
        if after[path] != before.get(path):
            result.changed.insert(0, str(path))
            if path not in before:
                result.created.insert(0, str(path))
    return result


def _own_files(rt: Runtime) -> dict[Path, bytes]:
    """The files of funes' own that `add` writes beside the agent's configuration, with their
    bytes: the hooks folder (the hook, the module it imports, the launcher) and the bindings
    record with its lock."""
    bindings = bindings_path(rt.paths)
    folder = rt.paths.installed_hook.parent
    paths = [bindings, bindings.with_suffix(".lock")]
    if folder.is_dir():
        paths.extend(p for p in folder.iterdir() if p.is_file())
    out: dict[Path, bytes] = {}
    for path in paths:
        try:
            out[path] = path.read_bytes()
        except OSError:
            continue
    return out


def binding_label(ref: MemoryRef | None) -> str | None:
    """What a binding records: a shared memory's label, a local memory file's absolute path,
    or None for the default local memory."""
    if ref is None or ref.kind is MemoryKind.LOCAL:
        return None
    if ref.kind is MemoryKind.PATH:
        assert ref.path is not None
        return str(ref.path.resolve())
    return ref.label


def add_target(rt: Runtime, memory: str) -> MemoryRef:
    """The memory `funes add <agent> MEMORY` binds to.

    `org/repo`, `hf://datasets/…` and a directory holding a shared export are shared
    memories; a `*.db` file or a directory holding `memory.db` is a local memory file (the
    hooks index into it); any other directory, existing or not, is a shared directory (it
    receives a Lance export, as `funes push <dir>` does). Raises UsageError.
    """
    ref = parse_memory(memory, rt)
    if ref.kind is not MemoryKind.PATH:
        return ref
    given = Path(ref.label).expanduser()
    if given.suffix == ".db" or given.is_file() or (given / "memory.db").exists():
        return ref
    target = given.resolve()
    return MemoryRef(target.as_uri(), MemoryKind.DIR, target)


def check_shared(rt: Runtime, ref: MemoryRef) -> RemoteState:
    """Check a shared memory before binding to it: MISSING (the caller offers to create it),
    EMPTY (nothing published yet) or READY (readable, with this host's embedding model).

    Reading a ready memory downloads it into the local cache once (what the agent's first
    recall would do). Raises RemoteOffline, RemoteUnauthorized, IncompatibleStore, RemoteError.
    """
    from funes.remote import RemoteState

    remote = remote_for(ref)
    if rt.offline and remote.networked:
        raise RemoteOffline(
            f"offline (HF_HUB_OFFLINE): cannot check {ref.label} before binding to it",
            hint="run `funes add` again when online",
        )
    found = remote.state()
    if found is RemoteState.OFFLINE:
        why = f"; {remote.unreachable}" if remote.unreachable else ""
        raise RemoteOffline(
            f"cannot reach {ref.label}: nothing was installed{why}",
            hint="check the network, then run `funes add` again",
        )
    if found is RemoteState.UNAUTHORIZED:
        raise RemoteUnauthorized(
            f"{ref.label} refused these credentials: nothing was installed",
            hint="run `hf auth login` (or set HF_TOKEN) with a token that can read and write it",
        )
    if found is RemoteState.READY:
        opened = open_memory(rt, ref)
        try:
            theirs = opened.store.model_id
        finally:
            opened.close()
        ours = local_model(rt)
        if theirs != ours:
            raise IncompatibleStore(
                f"{ref.label} holds vectors of {theirs or 'an unknown model'}; this host's memory "
                f"uses {ours}: nothing was installed",
                hint="bind a memory built with the same embedding model (FUNES_EMBEDDER)",
            )
    return found


def local_model(rt: Runtime) -> str:
    """The embedding model of this host's memory (the one it would be created with if none)."""
    stamped: str | None = None
    if rt.paths.memory_db.exists():
        try:
            store = Store.open(rt.paths.memory_db, readonly=True)
        except FunesError:
            store = None
        if store is not None:
            try:
                stamped = store.model_id
            finally:
                store.close()
    return stamped or rt.embedder_spec_for(None).model_id


def create_shared(rt: Runtime, ref: MemoryRef) -> None:
    """Create a missing shared memory: a private Hub dataset, or the directory (0700)."""
    remote = remote_for(ref)
    remote.require_write_access()
    remote.create(private=True)


def local_chunks(rt: Runtime) -> int:
    """Chunks in this host's local memory (0 when there is none)."""
    if not rt.paths.memory_db.exists():
        return 0
    try:
        store = Store.open(rt.paths.memory_db, readonly=True)
    except FunesError:
        return 0
    try:
        stats = store.stats()
    finally:
        store.close()
    return stats.chunks


def has_hub_token() -> bool:
    """Whether this host has a Hugging Face token (HF_TOKEN, or one `hf auth login` stored)."""
    from funes import hf

    return hf.token() is not None


def personal_memory(rt: Runtime) -> str | None:
    """`<user>/funes-memory` for the owner of this host's Hugging Face token (one `whoami`
    request); None offline, or when the Hub cannot say who the token belongs to."""
    from funes import hf

    if rt.offline:
        return None
    try:
        who = hf.whoami()
    except HubError:
        return None
    return f"{who.name}/{PERSONAL_MEMORY}" if who.name else None
