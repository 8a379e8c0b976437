"""funes' launcher: the one path agents' hooks and MCP registrations run, whatever install.

`funes add` writes `<data>/hooks/funes-python`, a two-line POSIX shell script that execs the
Python of the funes install that ran it (`sys.executable`), and names that script, never an
install's own interpreter, in every hook command and MCP registration. So:

- upgrading in place (`uv tool upgrade`, `pipx upgrade`, `make install` in the same clone)
  keeps the path the script names: nothing to rewrite;
- an install that moves or is replaced (a new clone, `uv tool install` after `pipx`, a venv
  rebuilt elsewhere) leaves a script naming a Python that is gone: the next funes command run
  from the new install points it there (`heal`, and says so), `funes add` always does, and
  `funes status` names the missing Python until then;
- two installs side by side: the last `funes add` wins; status warns that hooks run the other.

The script also carries the funes settings `funes add` ran with (`installers.settings_env`:
FUNES_EMBEDDER, FUNES_RERANKER, FUNES_MODEL_PATH, FUNES_MODEL_CACHE, HF_HOME …), each as a
default an exported variable overrides (`VAR=${VAR-value}`): a hook starts the spool worker
through this script in the agent's environment, which rarely holds them, and a worker that
cannot find the offline weights would store turns it can never embed. The MCP registrations
carry the same settings in their own `env`.

On Windows (no `sh`) the registrations name the interpreter itself, as before.
"""

from __future__ import annotations

import os
import re
import shlex
import sys
from collections.abc import Mapping
from pathlib import Path

from funes.memory import Runtime
from funes.paths import PRIVATE_DIR, ensure_private_dir

MARK = "# funes launcher"  # installers/_common.py LAUNCHER_MARK: the same text (a test checks)


_NAME = re.compile(r"[A-Z_][A-Z0-9_]*")
_SETTING = re.compile(
    r"^(?P<name>[A-Z_][A-Z0-9_]*)=\$\{(?P=name)-(?P<value>.*)\}; export (?P=name)$"
)


def script(python: str, settings: Mapping[str, str] | None = None) -> str:
    """The launcher's text for `python`, with `settings` as overridable defaults (names that
    are not environment variable names are left out)."""
    lines = [
        "#!/bin/sh",
        f"{MARK}: agents' hooks and MCP servers run funes through this file. `funes add`",
        "# writes it; any funes command points it at itself when the Python below is gone.",
    ]
    for name, value in sorted((settings or {}).items()):
        if _NAME.fullmatch(name):
            lines.append(f"{name}=${{{name}-{shlex.quote(value)}}}; export {name}")
    lines.append(f'exec {shlex.quote(python)} "$@"')
    return "\n".join(lines) + "\n"


def settings(path: Path) -> dict[str, str]:
    """The settings the launcher at `path` carries ({} when none, or no launcher)."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return {}
    out: dict[str, str] = {}
    for line in text.splitlines():
        m = _SETTING.match(line)
        if m:
            words = shlex.split(m["value"])
            out[m["name"]] = words[0] if words else ""
    return out


def supported() -> bool:
    return os.name != "nt"


def command_python(rt: Runtime) -> str:
    """What hook commands and MCP registrations run: the launcher (or, on Windows, this
    interpreter)."""
    return str(rt.paths.launcher) if supported() else sys.executable


def target(path: Path) -> str | None:
    """The Python the launcher at `path` runs (None: no launcher there, or not funes')."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    if MARK not in text:
        return None
    for line in text.splitlines():
        if line.startswith("exec "):
            words = shlex.split(line)
            return words[1] if len(words) > 1 else None
    return None


def write(rt: Runtime, python: str | None = None, *, env: Mapping[str, str] | None = None) -> bool:
    """Point the launcher at `python` (default: this interpreter) with the settings `env`
    (default: those it carries already). True when it changed."""
    if not supported():
        return False
    python = python or sys.executable
    path = rt.paths.launcher
    text = script(python, settings(path) if env is None else env)
    try:
        if path.read_text(encoding="utf-8") == text:
            return False
    except (OSError, UnicodeDecodeError):
        pass
    rt.paths.ensure()
    ensure_private_dir(path.parent)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, PRIVATE_DIR)  # 0700: executable
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(text)
    os.chmod(tmp, PRIVATE_DIR)
    os.replace(tmp, path)
    return True


def heal(rt: Runtime, python: str | None = None) -> str | None:
    """When the launcher runs a Python that is gone, point it at `python` (default: this
    interpreter) and return the gone one; else None (no launcher, or its Python is there)."""
    if not supported():
        return None
    gone = target(rt.paths.launcher)
    if gone is None or os.access(gone, os.X_OK):
        return None
    write(rt, python)
    return gone
