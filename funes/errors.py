"""The one exception tree for errors meant for a user's eyes.

    FunesError (exit 1)
    ├── UsageError             bad arguments or values the user can fix
    ├── StoreError             the memory file cannot be opened or is damaged
    │   ├── StoreLocked (75)   another writer holds the memory (EX_TEMPFAIL: retry later)
    │   ├── IncompatibleStore  the memory was built with another embedding model / newer schema
    │   └── NoIndex            the memory has no chunks yet
    ├── ModelUnavailable       weights not cached and cannot be fetched, or a hash mismatch
    ├── SourceError            a transcript source cannot be read at all
    ├── AgentError             an agent CLI or config cannot be used (installers, ask)
    ├── RemoteError            a remote memory cannot be read or written
    ├── PushRefused (2)        every pending row was held back by the secrets gate
    └── SecretScanFailed       the secret scanner cannot run: publish nothing (fail closed)

Each error carries an optional `hint` (what to do next). Only the CLI and MCP
adapters catch FunesError and render it; library code raises and never prints.
"""

from __future__ import annotations


class FunesError(Exception):
    """Root of every error meant for a user's eyes."""

    exit_code = 1

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint


class UsageError(FunesError):
    """Arguments or values the user can correct."""


class StoreError(FunesError):
    """The memory file cannot be opened, migrated or written."""


class StoreLocked(StoreError):
    """Another process holds the single-writer lock of this memory."""

    exit_code = 75  # EX_TEMPFAIL: safe to retry


class IncompatibleStore(StoreError):
    """The memory was built with another embedding model or a newer schema."""


class NoIndex(StoreError):
    """The memory exists but holds no chunks yet."""


class ModelUnavailable(FunesError):
    """Model weights are not available locally and cannot be downloaded or verified."""


class SourceError(FunesError):
    """A transcript source cannot be read at all (not one bad line: the whole source)."""


class AgentError(FunesError):
    """An agent program or its configuration cannot be used."""


class RemoteError(FunesError):
    """A remote memory cannot be read or written."""


class PushRefused(FunesError):
    """Every pending row was held back by the secrets gate; nothing was published."""

    exit_code = 2


class SecretScanFailed(FunesError):
    """The secret scanner could not run or cannot be trusted: nothing may be published."""
