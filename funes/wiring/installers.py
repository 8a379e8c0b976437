"""Running the agents' installers: load one, build its context, call it, report its checks.

The per-agent work lives in the top-level `installers/` folder (shipped in the wheel as
`funes/_bundled/installers`). funes loads those modules from that path at run time, as the
private package `_funes_installers`; it never imports them as part of funes. This module
installs the hook script into the data dir (so a funes upgrade never breaks a configured
hook path), builds the installer's context, and turns installer errors into AgentError.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

from funes.errors import AgentError, UsageError
from funes.inference import DEFAULT_RERANKER
from funes.memory import MemoryKind, MemoryRef, Runtime, parse_memory
from funes.paths import PRIVATE_FILE, bundled, ensure_private_dir
from funes.traces import AGENTS, Harness, installable
from funes.wiring import launcher

PACKAGE = "_funes_installers"


@dataclass(slots=True)
class AgentChanges:
    """What `add` / `remove` did to one agent."""

    agent: str
    changed: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    hook_installed: bool = False  # the hook script copy was (re)written
    created: list[str] = field(default_factory=list)  # of `changed`, files that did not exist
    # of `changed`, the agent's config files funes backed up: file → its copy from before
    # funes' first edit of it (what restores the user's own)
    backups: dict[str, str] = field(default_factory=dict)


@dataclass(slots=True)
class AgentCheck:
    """Whether funes is wired into one agent."""

    agent: str
    hooks: bool
    mcp: bool
    warnings: list[str] = field(default_factory=list)
    stale: bool = False  # its hook runs or feeds another funes install (a warning says which)
    unreadable: bool = False  # a config of it could not be read (a warning names the file)


def agent_harness(name: str) -> Harness:
    """Parse an agent name (`claude`, `codex`, `pi`, `hermes`). Raises UsageError."""
    try:
        harness = Harness.parse(name)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    if harness is None or AGENTS[harness].installer is None:
        names = ", ".join(agent.name for agent in installable())
        raise UsageError(f"funes cannot be added to {name!r}", hint=f"agents: {names}")
    return harness


def installer(harness: Harness) -> ModuleType:
    """The installer module of an agent, loaded from the bundled `installers/` folder."""
    if PACKAGE not in sys.modules:
        root = bundled("installers")
        spec = importlib.util.spec_from_file_location(
            PACKAGE, root / "__init__.py", submodule_search_locations=[str(root)]
        )
        if spec is None or spec.loader is None:
            raise AgentError(f"cannot load funes' installers from {root}")
        package = importlib.util.module_from_spec(spec)
        sys.modules[PACKAGE] = package
        spec.loader.exec_module(package)
    return importlib.import_module(f"{PACKAGE}.{AGENTS[harness].installer}")


def context(rt: Runtime, harness: Harness, memory: str | MemoryRef | None = None) -> Any:
    """The installer's Context for this machine (memory as given to `funes add`, or parsed).

    A local memory file binds the hooks (they index into it) and the MCP server; a shared
    memory (a Hub dataset, a shared directory) binds the MCP server only: the hooks index into
    the local memory, which is published to it at session boundaries.
    """
    make_context = installer(harness).Context
    bound = memory_path = None
    if memory is not None:
        ref = memory if isinstance(memory, MemoryRef) else parse_memory(memory, rt)
        if ref.kind is MemoryKind.PATH:
            assert ref.path is not None
            bound = memory_path = str(ref.path.resolve())
        elif ref.shared:
            bound = ref.label
    return make_context(
        agent_home=rt.homes.of(harness),
        user_home=rt.homes.home,
        python=launcher.command_python(rt),
        running=sys.executable,
        hook=rt.paths.installed_hook,
        spool=rt.paths.spool,
        backups=rt.paths.backups,
        funes_home=str(rt.paths.home) if rt.paths.home is not None else None,
        memory=bound,
        memory_path=memory_path,
        settings_env=settings_env(rt),
    )


def settings_env(rt: Runtime) -> dict[str, str]:
    """The funes settings this process was given that differ from the defaults, as env vars.

    Written into the MCP server's registration: Codex and Hermes start it with only a few
    whitelisted variables (PATH, HOME, ...), so a FUNES_RERANKER or HF_HOME the user exported
    would otherwise silently not apply to recall through the agent.
    """
    env: dict[str, str] = {}
    if rt.models.embedder:
        env["FUNES_EMBEDDER"] = rt.models.embedder
    if rt.models.reranker != DEFAULT_RERANKER:
        env["FUNES_RERANKER"] = rt.models.reranker
    if rt.models.model_path:
        env["FUNES_MODEL_PATH"] = os.pathsep.join(rt.models.model_path)
    env.update(rt.paths.hub_env)
    if rt.paths.model_cache is not None:
        env["FUNES_MODEL_CACHE"] = str(rt.paths.model_cache)
    return env


HOOK_MODULE = "funes_hook.py"  # the hook the launcher imports (hooks/enqueue.py)


def install_hook_script(rt: Runtime) -> bool:
    """Copy the hook (hooks/enqueue.py, the launcher agents run, and hooks/funes_hook.py, the
    hook it imports) into the data dir when missing or different. True when written."""
    folder = bundled("hooks")
    target = rt.paths.installed_hook
    files = {target: (folder / "enqueue.py").read_bytes()}
    files[target.with_name(HOOK_MODULE)] = (folder / HOOK_MODULE).read_bytes()
    unchanged = all(path.exists() and path.read_bytes() == data for path, data in files.items())
    rt.paths.ensure()
    ensure_private_dir(target.parent)
    # where Python caches the hook's bytecode: made here, private (it would get the umask's
    # 0755), and tightened for an install an older funes left
    ensure_private_dir(target.parent / "__pycache__")
    if unchanged:
        return False
    # the module first: a launcher never runs beside an older hook module
    for path, data in sorted(files.items(), key=lambda item: item[0] == target):
        tmp = path.with_suffix(".tmp")
        tmp.write_bytes(data)
        tmp.chmod(PRIVATE_FILE)
        tmp.replace(path)
    ensure_private_dir(rt.paths.spool)
    return True


def remove_hook_script(rt: Runtime) -> list[str]:
    """Delete the installed hook (launcher, module, its bytecode cache); the paths removed."""
    hook = rt.paths.installed_hook
    removed: list[str] = []
    for path in (hook, hook.with_name(HOOK_MODULE)):
        if path.exists():
            path.unlink()
            removed.append(str(path))
    cache = hook.parent / "__pycache__"
    if cache.is_dir():
        for pyc in cache.glob(HOOK_MODULE.removesuffix(".py") + ".*.pyc"):
            pyc.unlink(missing_ok=True)
        if not any(cache.iterdir()):
            cache.rmdir()
    if hook.parent.is_dir() and not any(hook.parent.iterdir()):
        hook.parent.rmdir()
    return removed


def call(harness: Harness, verb: str, ctx: Any) -> Any:
    module = installer(harness)
    try:
        return getattr(module, verb)(ctx)
    except module.InstallError as exc:
        raise AgentError(exc.message, hint=exc.hint) from None
    except OSError as exc:
        raise AgentError(f"cannot update {harness.agent_name}'s configuration: {exc}") from None


def run_checks(rt: Runtime) -> list[AgentCheck]:
    """Every agent's wiring state (never raises: a broken config becomes a warning)."""
    out = []
    for harness in (agent.harness for agent in installable()):
        try:
            check = call(harness, "check", context(rt, harness))
        except (AgentError, FileNotFoundError) as exc:
            out.append(AgentCheck(harness.agent_name, False, False, [str(exc)], unreadable=True))
            continue
        out.append(
            AgentCheck(
                harness.agent_name,
                bool(check.hooks),
                bool(check.mcp),
                list(check.warnings),
                stale=bool(check.stale),
                unreadable=bool(getattr(check, "unreadable", False)),
            )
        )
    return out
