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
    ├── NothingRecalled        `funes ask`: recall found nothing to ground an answer in
    ├── RemoteError            a remote memory cannot be read or written
    │   ├── RemoteOffline      it cannot be reached (and nothing usable is cached)
    │   ├── RemoteMissing      it does not exist, or these credentials cannot see it
    │   ├── RemoteUnauthorized no credentials, or ones that may not do this
    │   └── HeadMoved          another writer committed first (a push redoes its work)
    ├── PushRefused (2)        every pending row was held back by the secrets gate
    └── SecretScanFailed       the secret scanner cannot run: publish nothing (fail closed)

Each error carries an optional `hint` (what to do next). Only the CLI and MCP
adapters catch FunesError and render it; library code raises and never prints.

Two internal trees are never shown as they are; the package that meets them translates them
at its edge (a FunesError, or a skip that is counted):

    HubError (funes.hf)        a Hub transfer failed: HubUnavailable, HubOffline, HubNotFound,
                               HubUnauthorized, HubForbidden, HubConflict
    EntryError (ValueError)    a spool file that is not a readable entry (funes.ingest)

This module is the lowest layer: every module may import it, and it imports nothing of funes.
The installers (outside the package, loaded at run time) raise their own InstallError, which
funes.wiring turns into AgentError.
"""

from __future__ import annotations


class FunesError(Exception):
    """Root of every error meant for a user's eyes."""

    exit_code = 1

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint


class FoldersUnusable(FunesError, OSError):
    """funes' own folders (FUNES_HOME, or the platform's data and log folders) cannot be
    created or used. An OSError too: callers that treat a failed write as optional keep doing
    so."""


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
    """Model weights are not available locally and cannot be downloaded or verified.

    `reason`: the same in a few words, for a one-line note (the message may carry a
    transport's whole error); `brief` falls back to the message."""

    def __init__(self, message: str, *, hint: str | None = None, reason: str | None = None) -> None:
        super().__init__(message, hint=hint)
        self.reason = reason

    @property
    def brief(self) -> str:
        return self.reason or self.message


class SourceError(FunesError):
    """A transcript source cannot be read at all (not one bad line: the whole source)."""


class AgentError(FunesError):
    """An agent program or its configuration cannot be used."""


class RemoteError(FunesError):
    """A remote memory cannot be read or written."""


class PushRefused(FunesError):
    """Every pending row was held back by the secrets gate, some of them for the first time;
    nothing was published. `fix`: what makes those rows publishable (None: nothing the user
    can do to them, the scanner itself failed)."""

    exit_code = 2

    def __init__(self, message: str, *, hint: str | None = None, fix: str | None = None) -> None:
        super().__init__(message, hint=hint)
        self.fix = fix


class SecretScanFailed(FunesError):
    """The secret scanner could not run or cannot be trusted: nothing may be published."""


class NothingRecalled(FunesError):
    """Recall found no passage for the question: nothing to ground an answer in."""


class RemoteOffline(RemoteError):
    """The remote cannot be reached (no network, offline mode, server error)."""


class RemoteMissing(RemoteError):
    """The remote does not exist (or is invisible to these credentials)."""


class RemoteUnauthorized(RemoteError):
    """No credentials, invalid ones, or ones that may read but not write."""


class PushBusy(RemoteError):
    """Another process on this host is pushing to the same remote (its push lock is held)."""

    exit_code = 75  # EX_TEMPFAIL: safe to retry


class HeadMoved(RemoteError):
    """Another writer committed since the snapshot a publish started from."""


# -- internal: translated at their package's edge, never shown as they are --------------


class HubError(Exception):
    """A Hub operation failed. `status` is the HTTP status when there was one; `reason`, when
    set, says why in a user's terms without naming the repository (the message does)."""

    def __init__(
        self, message: str, *, status: int | None = None, reason: str | None = None
    ) -> None:
        super().__init__(message)
        self.status = status
        self.reason = reason


class HubUnavailable(HubError):
    """A file could not be obtained from the Hub (offline, missing, unauthorized)."""


class HubOffline(HubError):
    """The Hub cannot be reached (no connection, offline mode, or a 5xx answer)."""


class HubNotFound(HubError):
    """The repository (or revision) does not exist, or the token cannot see it."""


class HubUnauthorized(HubError):
    """No token, or a token the Hub does not accept (401)."""


class HubForbidden(HubError):
    """The token is valid but may not do this (403: typically a read-only token)."""


class HubConflict(HubError):
    """The branch moved since `parent_commit` was read (409 or 412)."""


class EntryError(ValueError):
    """A spool file that is not a readable entry of a version this funes knows."""
