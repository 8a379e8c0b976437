"""What every agent installer shares: the context, marker-keyed merges, atomic writes, backups.

Ownership rule: a hook handler is funes' when its command contains `MARKER` (the installed
hook's file name); an MCP server entry is funes' when it is named `funes` and runs `funes mcp`.
Everything else in an agent's configuration is the user's and is kept as it was.
"""

from __future__ import annotations

import json
import os
import shlex
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .json_layout import dumps, layout_of
from .line_endings import keep_line_endings

MARKER = "funes-enqueue.py"
MCP_NAME = "funes"
# The first lines of funes' launcher (funes.wiring.launcher): a script that execs one install's
# Python, so hooks and MCP registrations name a path that survives that install moving.
LAUNCHER_MARK = "# funes launcher"


FIX_HINT = "fix the file (or move it away) and run the command again"


class InstallError(Exception):
    """A configuration funes will not edit (it does not parse, or a name is taken)."""

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint


@dataclass(frozen=True)
class Context:
    """Where things are, resolved by funes before it runs an installer."""

    agent_home: (
        Path  # ~/.claude, ~/.codex, ~/.pi/agent or ~/.hermes (after the agents' env overrides)
    )
    user_home: Path
    python: str  # interpreter for the hook (-I -S) and the worker / MCP server (-m funes):
    # funes' launcher in its data dir where there is one (it execs the current install's Python)
    hook: Path  # the installed copy of hooks/enqueue.py
    spool: Path
    backups: Path  # one-time backups of edited files
    funes_home: str | None = None  # FUNES_HOME at install time, passed on to hook, worker and MCP
    memory: str | None = None  # bound memory (`funes add <agent> <memory>`)
    memory_path: str | None = None  # the bound memory when it is a local path (hooks index into it)
    # funes' settings from the environment `funes add` ran in (FUNES_EMBEDDER, FUNES_RERANKER,
    # HF_HOME, ...): Codex and Hermes start MCP servers with a whitelisted environment, so the
    # server only sees them when they are written into its registration
    settings_env: dict[str, str] = field(default_factory=dict)
    running: str = ""  # the Python of the funes running this installer (sys.executable)

    def hook_base(self, agent: str) -> list[str]:
        """The hook's argv without its event: interpreter, script, agent, spool, worker, home, memory."""
        argv = [
            self.python,
            "-I",
            "-S",
            str(self.hook),
            "--agent",
            agent,
            "--spool",
            str(self.spool),
            "--python",
            self.python,
        ]
        if self.funes_home:
            argv += ["--home", self.funes_home]
        if self.memory_path:
            argv += ["--memory", self.memory_path]
        return argv

    def hook_argv(self, agent: str, event: str, *, sweep: bool = False) -> list[str]:
        return [*self.hook_base(agent), "--event", event, *(["--sweep"] if sweep else [])]

    def hook_command(self, agent: str, event: str, *, sweep: bool = False) -> str:
        """The hook as one command line (POSIX shell quoting: sh -c and shlex-style splitters)."""
        return shlex.join(self.hook_argv(agent, event, sweep=sweep))

    def mcp_args(self) -> list[str]:
        return ["-m", "funes", "mcp", *([self.memory] if self.memory else [])]

    def mcp_env(self) -> dict[str, str]:
        """The MCP server's environment: FUNES_HOME and the settings_env funes add ran with."""
        env = {"FUNES_HOME": self.funes_home} if self.funes_home else {}
        env.update(self.settings_env)
        return env


@dataclass
class Changes:
    """What an install or uninstall did."""

    changed: list[str] = field(default_factory=list)  # files written or removed
    created: list[str] = field(default_factory=list)  # of those, files that did not exist
    warnings: list[str] = field(default_factory=list)  # things that would silently stop indexing
    notes: list[str] = field(default_factory=list)  # what the user should know or do next
    # of `changed`, the files that have a backup: file → its copy from before funes' first edit
    backups: dict[str, str] = field(default_factory=dict)


@dataclass
class Check:
    """Whether funes is installed into an agent, and what stands in its way."""

    hooks: bool = False
    mcp: bool = False
    warnings: list[str] = field(default_factory=list)
    stale: list[str] = field(default_factory=list)  # its hook reaches another funes (also warned)
    # a config file funes could not read (also warned, naming the file): whether funes is
    # wired into the agent is then unknown, so status lists the agent whatever else it finds
    unreadable: bool = False

    @property
    def installed(self) -> bool:
        return self.hooks


def is_ours(command: object) -> bool:
    """A hook command (string or argv) written by funes."""
    if isinstance(command, str):
        return MARKER in command
    if isinstance(command, list):
        return any(isinstance(part, str) and MARKER in part for part in command)
    return False


def is_our_mcp(entry: object) -> bool:
    """An MCP server entry that runs `funes mcp` (command + args, or a `funes mcp` command)."""
    if not isinstance(entry, dict):
        return False
    command = entry.get("command")
    args = entry.get("args") or []
    if not isinstance(args, list):
        return False
    argv = [str(command), *map(str, args)]
    return argv[1:4] == ["-m", "funes", "mcp"] or (
        Path(argv[0]).name == "funes" and argv[1:2] == ["mcp"]
    )


def our_hook_commands(hooks: object) -> list[object]:
    """The commands of funes' handlers in a Claude Code / Codex style `hooks` object."""
    out: list[object] = []
    if not isinstance(hooks, dict):
        return out
    for groups in hooks.values():
        for group in groups if isinstance(groups, list) else []:
            for handler in (group.get("hooks") or []) if isinstance(group, dict) else []:
                if isinstance(handler, dict) and is_ours(handler.get("command")):
                    out.append(handler.get("command"))
    return out


def stale_hook_warnings(commands: list[object], ctx: Context, agent: str) -> list[str]:
    """Warnings for installed hook commands that no longer reach this funes (at most one):
    an interpreter that is gone or of another install, or a spool of another FUNES_HOME.

    A hook names two interpreters: the one that runs the hook script (argv[0]) and the one it
    starts the worker with (`--python`). After funes is reinstalled elsewhere (a new venv,
    pipx), the old path is gone, or still runs the old funes, which cannot read a memory the
    new one upgraded: turns then wait or fail in the spool until `funes add` rewrites them.
    """
    for command in commands:
        try:
            if isinstance(command, str):
                argv = shlex.split(command)
            elif isinstance(command, list):
                argv = [str(a) for a in command]
            else:
                continue
        except ValueError:
            continue
        pythons = argv[:1]
        if "--python" in argv[:-1]:
            pythons.append(argv[argv.index("--python") + 1])
        pythons = [launcher_target(p) or p for p in pythons]  # through funes' launcher
        for python in pythons:
            if not os.access(python, os.X_OK):
                return [
                    f"its funes hook runs {python}, which is gone: run `funes add {agent}` "
                    "again (or any funes command) to point it at this funes"
                ]
        current = ctx.running or ctx.python
        if len(pythons) > 1 and not _same_install(pythons[1], current):
            return [
                f"its funes hook starts workers with {pythons[1]}, another funes than this one "
                f"({current}), which may not write a memory this one upgraded (its turns then "
                f"park in the spool): run `funes add {agent}` again to switch it, then "
                "`funes spool retry`"
            ]
        spool = argv[argv.index("--spool") + 1] if "--spool" in argv[:-1] else None
        if spool is not None and os.path.realpath(spool) != os.path.realpath(ctx.spool):
            return [
                f"its funes hook queues turns in {spool}, not in this FUNES_HOME's spool "
                f"({ctx.spool}): they are indexed there; run `funes add {agent}` again to "
                "switch it"
            ]
    return []


def launcher_target(path: str) -> str | None:
    """The Python that funes' launcher at `path` runs; None when `path` is not one."""
    try:
        with open(path, encoding="utf-8") as f:
            head = f.read(4096)
    except (OSError, UnicodeDecodeError):
        return None
    if LAUNCHER_MARK not in head:
        return None
    for line in head.splitlines():
        if line.startswith("exec "):
            try:
                words = shlex.split(line)
            except ValueError:
                return None
            return words[1] if len(words) > 1 else None
    return None


def _same_install(a: str, b: str) -> bool:
    """Interpreters of one install: the same bin directory, the interpreter's own link not
    followed (every venv's python links to the same base interpreter; `python` and `python3`
    of one venv are one) but the directory's path resolved (a checkout reached through a
    linked directory is still one install)."""

    def bin_dir(python: str) -> str:
        return os.path.realpath(os.path.dirname(os.path.abspath(python)))

    return bin_dir(a) == bin_dir(b)


# -- files ----------------------------------------------------------------------------------


def _created_marker(path: Path, backups: Path) -> Path:
    return backups / (_slug(path) + ".created-by-funes")


def _slug(path: Path) -> str:
    return "".join(c if c.isalnum() or c in "._-" else "_" for c in str(path.resolve()).strip("/"))


def backup_path(path: Path, backups: Path) -> Path:
    """Where `backup_once` keeps its copy of the file at `path` (it may not exist)."""
    return backups / (_slug(path) + ".orig")


def backup_once(path: Path, backups: Path) -> Path | None:
    """Copy `path` into `backups` before funes first edits it; later edits keep that first copy.

    A file funes creates gets a `.created-by-funes` note instead, so uninstall can remove it.
    """
    make_dirs(backups)
    target = backup_path(path, backups)
    if _created_marker(path, backups).exists():
        return None
    if not path.exists():
        if target.exists():  # from an earlier install; the file has gone since: funes creates it
            target.replace(target.with_name(target.name + ".previous"))
        atomic_write(_created_marker(path, backups), (str(path) + "\n").encode())
        return None
    if target.exists():
        return None
    atomic_write(target, path.read_bytes(), mode=0o600)
    return target


def make_dirs(path: Path) -> None:
    """Create folder `path` and its missing parents, each 0700 whatever the umask (an agent
    loads code and settings from these folders: never group- or world-writable). Folders
    that exist are left as they are."""
    missing: list[Path] = []
    probe = path
    while not probe.exists() and probe.parent != probe:
        missing.append(probe)
        probe = probe.parent
    for folder in reversed(missing):
        folder.mkdir(mode=0o700, exist_ok=True)
        os.chmod(folder, 0o700)


def atomic_write(path: Path, data: bytes, *, mode: int | None = None) -> None:
    """Write `data` to `path` via a temp file in the same folder and os.replace.

    Keeps the existing file's permissions; a new file gets `mode` (default 0600). A `path`
    that is a symlink (a dotfiles setup) is written through: the file it points to is
    replaced in its own folder and the link stays a link.
    """
    path = Path(os.path.realpath(path))
    make_dirs(path.parent)
    try:
        keep = path.stat().st_mode & 0o777
    except FileNotFoundError:
        keep = mode if mode is not None else 0o600
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".funes-tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, keep)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_if_changed(
    path: Path, text: str, ctx: Context, changes: Changes, *, mode: int | None = None
) -> bool:
    """Write `text` to `path` unless it already holds exactly that. Backs up before the first
    edit, and names the backup (if the file has one) in `changes.backups`."""
    data = text.encode("utf-8")
    existed = True
    try:
        if path.read_bytes() == data:
            return False
    except FileNotFoundError:
        existed = False
    backup_once(path, ctx.backups)
    atomic_write(path, data, mode=mode)
    changes.changed.append(str(path))
    if not existed:
        changes.created.append(str(path))
    backup = backup_path(path, ctx.backups)
    if backup.exists():
        changes.backups[str(path)] = str(backup)
    return True


def _keys_note(path: Path, backups: Path) -> Path:
    return backups / (_slug(path) + ".keys-before-funes.json")


def keys_before(path: Path, backups: Path) -> dict[str, Any]:
    """What `note_keys_before` recorded for the config at `path` ({} when nothing, or when the
    note cannot be read: an install of a funes before the note treated every key as its own)."""
    try:
        data = json.loads(_keys_note(path, backups).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def note_keys_before(path: Path, backups: Path, keys: dict[str, Any]) -> None:
    """Record how the keys funes puts its entries under looked before funes' first edit of the
    config at `path` (an installer's own JSON shape), so `remove` leaves an emptied key as the
    user had it (an empty list or mapping, or a key with no value) and deletes one funes
    created. An empty `keys` drops the note. Written only when it changes."""
    note = _keys_note(path, backups)
    if not keys:
        note.unlink(missing_ok=True)
        return
    write_note(note, (json.dumps(keys, indent=2, sort_keys=True) + "\n").encode(), backups)


def write_note(note: Path, data: bytes, backups: Path) -> None:
    """Write `data` to the private (0600) file `note` in `backups` (made 0700 when missing),
    atomically, unless it already holds exactly `data`."""
    try:
        if note.read_bytes() == data:
            return
    except FileNotFoundError:
        pass
    make_dirs(backups)
    atomic_write(note, data, mode=0o600)


def remove_if_created(path: Path, ctx: Context, changes: Changes, *, empty: bool) -> bool:
    """Delete a file funes created when it holds nothing of the user's (`empty`)."""
    marker = _created_marker(path, ctx.backups)
    if not (empty and marker.exists() and path.exists()):
        return False
    Path(os.path.realpath(path)).unlink()  # the file funes created, not a link to it
    marker.unlink()
    changes.changed.append(str(path))
    return True


def make_dir_noted(path: Path, backups: Path) -> None:
    """Create directory `path` (and its parents) if missing, noting in `backups` that funes
    created it, so `remove_dir_if_created` can take it out again."""
    if path.is_dir():
        return
    make_dirs(backups)
    make_dirs(path)
    atomic_write(_created_marker(path, backups), b"")


def remove_dir_if_created(path: Path, ctx: Context, changes: Changes) -> None:
    """Delete directory `path` if funes created it (`make_dir_noted`) and it is empty again."""
    marker = _created_marker(path, ctx.backups)
    if not marker.exists():
        return
    try:
        path.rmdir()
    except FileNotFoundError:
        pass
    except OSError:  # it holds something of the user's now: theirs to keep
        return
    else:
        changes.changed.append(str(path))
    marker.unlink()


def read_text(path: Path, *, keep_endings: bool = False) -> str | None:
    """The text of the config at `path`, None when there is none; `keep_endings`: `\r\n` as
    it is (else read as `\n`). Raises InstallError for a file that is not UTF-8 (funes edits
    only text it can write back as it was)."""
    try:
        with open(path, encoding="utf-8", newline="" if keep_endings else None) as f:
            return f.read()
    except FileNotFoundError:
        return None
    except UnicodeDecodeError as exc:
        raise InstallError(
            f"{path} is not UTF-8 text (byte {exc.start}): funes leaves it untouched",
            hint="save it as UTF-8, then run the command again",
        ) from None


# -- JSON configs ---------------------------------------------------------------------------


def load_json_object(path: Path) -> tuple[dict[str, Any], str | None]:
    """(the JSON object in `path` or {}, its original text — line endings as they are — or
    None). Refuses anything else."""
    text = read_text(path, keep_endings=True)
    if text is None or not text.strip():
        return {}, text
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise InstallError(
            f"{path} is not valid JSON ({exc}); funes will not rewrite it",
            hint=FIX_HINT,
        ) from None
    if not isinstance(data, dict):
        raise InstallError(
            f"{path} does not hold a JSON object; funes will not rewrite it", hint=FIX_HINT
        )
    return data, text


def hooks_table(data: dict[str, Any], path: Path) -> dict[str, Any]:
    """The `"hooks"` object of a JSON config (Claude Code's settings.json, Codex's
    hooks.json), created empty when absent. Raises InstallError when it is something else."""
    hooks = data.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise InstallError(
            f'{path}: "hooks" is not an object; funes will not rewrite it', hint=FIX_HINT
        )
    return hooks


def dump_json(data: dict[str, Any], original: str | None) -> str:
    """Serialise in the layout of `original` (its indent of tabs or spaces, or all on one line:
    installers.json_layout; 2-space indent for a new file, as the agents write it), literal
    non-ASCII, keeping a final newline and `original`'s line endings (`\r\n` stays `\r\n`:
    installers.line_endings; json writes no newline inside a string)."""
    text = dumps(data, layout_of(original))
    if original is None or original.endswith("\n") or not original.strip():
        text += "\n"
    return text if original is None else keep_line_endings(original, text)


def restored_json(path: Path, data: dict[str, Any], original: str | None, ctx: Context) -> str:
    """The text `remove` writes for `data`: the bytes from before funes' first edit when they
    hold exactly `data` (the user's own layout comes back byte for byte), else `dump_json`.

    json cannot round-trip a hand-made layout (inline arrays, odd indents, no final newline),
    so the backup `backup_once` took is the only faithful copy of it.
    """
    try:
        before = backup_text(path, ctx.backups)
        if pruned(json.loads(before)) == pruned(data):
            return before
    except (OSError, ValueError):
        pass
    return dump_json(data, original)


def restored_text(path: Path, text: str, ctx: Context, parse: Callable[[str], Any]) -> str:
    """The text `remove` writes: the bytes from before funes' first edit when `parse` reads
    them as the same document as `text` (whitespace a serializer left behind, such as the
    blank line tomlkit puts before a table it appends, then goes with it), else `text`."""
    try:
        before = backup_text(path, ctx.backups)
        if parse(before) == parse(text):
            return before
    except (OSError, ValueError):
        pass
    return text


def backup_text(path: Path, backups: Path) -> str:
    """The copy `backup_once` kept of `path`, line endings as they were (`\r\n` too)."""
    with open(backup_path(path, backups), encoding="utf-8", newline="") as f:
        return f.read()


def pruned(value: Any) -> Any:
    """`value` without empty objects and arrays (removal drops the `hooks: {}` or
    `mcpServers: {}` it empties, which the user may have had before funes)."""
    if isinstance(value, dict):
        out = {k: pruned(v) for k, v in value.items()}
        return {k: v for k, v in out.items() if v not in ({}, [])}
    if isinstance(value, list):
        return [pruned(v) for v in value]
    return value


def upsert_hook_groups(hooks: dict[str, Any], desired: dict[str, dict[str, Any]]) -> None:
    """Make `hooks` (event → [{matcher?, hooks: [handler]}]) hold exactly our `desired` handlers.

    Claude Code / Codex shape. Our handler is replaced where it stands (positions, and so Codex's
    positional trust keys, of the user's groups never move); a missing one is appended as a new
    group; ours under events we no longer use are removed; groups and events left empty by our
    removal are pruned.
    """
    for event in list(hooks):
        groups = hooks[event]
        if not isinstance(groups, list):
            continue
        placed = False
        for group in list(groups):
            handlers = group.get("hooks") if isinstance(group, dict) else None
            if not isinstance(handlers, list):
                continue
            kept = []
            had_ours = False
            for handler in handlers:
                if isinstance(handler, dict) and is_ours(handler.get("command")):
                    had_ours = True
                    if event in desired and not placed:
                        kept.append(desired[event])
                        placed = True
                    continue
                kept.append(handler)
            if had_ours:
                if kept:
                    group["hooks"] = kept
                else:
                    groups.remove(group)
        if event in desired and not placed:
            groups.append({"hooks": [desired[event]]})
        if not groups:
            del hooks[event]
    for event, handler in desired.items():
        if event not in hooks:
            hooks[event] = [{"hooks": [handler]}]


def has_our_hook(hooks: object, event: str, expected: dict[str, Any] | None = None) -> bool:
    """Whether `hooks[event]` holds a funes handler (equal to `expected` when given)."""
    if not isinstance(hooks, dict):
        return False
    for group in hooks.get(event) or []:
        for handler in (group.get("hooks") or []) if isinstance(group, dict) else []:
            if isinstance(handler, dict) and is_ours(handler.get("command")):
                return expected is None or handler == expected
    return False
