"""Whose memory a command reads: the user's own, or someone else's (labelled in its output).

A memory is the user's own when it is local (the default memory or a SQLite file named by
path), a Hub dataset in the namespace of the account the Hugging Face token belongs to, or a
directory export owned by this user (its uid). Anything else is third-party: another
account's or an organisation's dataset, a directory someone else owns, and a Hub dataset
whose reader has no token, or is offline with no remembered answer (safe side: labelled).
Its owner is the dataset's namespace, or the user name owning the directory.

Which account a token belongs to is asked once (`whoami`) and remembered for a day per token
(a hash of it, never the token) in `<data>/whoami.json`.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from pathlib import Path

from funes import hf
from funes.errors import HubError
from funes.memory.ref import MemoryKind, MemoryRef
from funes.memory.runtime import Runtime
from funes.paths import PRIVATE_FILE

WHOAMI_TTL_S = 24 * 3600.0


def foreign_owner(rt: Runtime, ref: MemoryRef) -> str | None:
    """The owner of `ref` when it is not the user's own memory, else None (module docstring)."""
    if ref.kind is MemoryKind.REMOTE and ref.repo:
        namespace = ref.repo.split("/", 1)[0]
        return None if _account(rt) == namespace else namespace
    if ref.kind is MemoryKind.DIR and ref.path is not None:
        return _directory_owner(ref.path)
    return None


def _directory_owner(path: Path) -> str | None:
    """The user name owning `path` when it is not this user (None: ours, or unknowable)."""
    getuid = getattr(os, "getuid", None)
    try:
        uid = path.stat().st_uid
    except OSError:
        return None  # opening it fails with its own message
    if getuid is None or uid == getuid():
        return None
    try:
        import pwd

        return pwd.getpwuid(uid).pw_name
    except (ImportError, KeyError):
        return f"uid {uid}"


def _account(rt: Runtime) -> str | None:
    """The Hub account of this user's token (remembered for WHOAMI_TTL_S), None when unknown."""
    token = hf.token()
    if not token:
        return None
    import hashlib  # here: only a memory opened with a Hub token hashes it

    key = hashlib.sha256(token.encode()).hexdigest()[:16]
    cache = rt.paths.data / "whoami.json"
    try:
        known = json.loads(cache.read_text())
        entry = known.get(key) if isinstance(known, dict) else None
        if isinstance(entry, dict) and time.time() - float(entry["at"]) < WHOAMI_TTL_S:
            return str(entry["name"])
    except (OSError, ValueError, KeyError, TypeError):
        known = {}
    if rt.offline or hf.offline_mode():
        return None
    try:
        name = hf.whoami().name
    except HubError:
        return None
    with contextlib.suppress(OSError):
        rt.paths.ensure()
        tmp = cache.with_suffix(".tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, PRIVATE_FILE)
        with os.fdopen(fd, "w") as f:
            json.dump(
                {
                    **(known if isinstance(known, dict) else {}),
                    key: {"name": name, "at": time.time()},
                },
                f,
            )
        os.replace(tmp, cache)
    return name
