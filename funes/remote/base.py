"""What every remote memory location offers: the `Remote` protocol, its states and errors.

A remote holds one Lance dataset (`chunks.lance/`), a manifest (`funes.json`) and a dataset
card (`README.md`) at its root, versioned by *commits*: a Hub commit sha for a Hugging Face
dataset, `v<lance version>` for a plain directory. Reads pin a commit; writes are
compare-and-swap on the commit they started from (`publish` raises HeadMoved when another
writer got there first, and the caller redoes its work on the new head).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Protocol

from funes.remote.lance_export import TABLE

MANIFEST = "funes.json"
CARD = "README.md"


class RemoteState(StrEnum):
    READY = "ready"  # reachable and holds a funes dataset
    EMPTY = "empty"  # reachable and exists, but holds no dataset yet (a first push)
    MISSING = "missing"  # does not exist, or this token cannot see it
    OFFLINE = "offline"  # cannot be reached
    UNAUTHORIZED = "unauthorized"  # the credentials are refused


@dataclass(frozen=True, slots=True)
class Snapshot:
    """A remote's files at one commit, readable locally (never written through)."""

    commit: str
    root: Path  # the local folder holding the files at this commit
    version: int | None = None  # the Lance version to open (directories); None = latest in root

    @property
    def dataset(self) -> Path:
        return self.root / TABLE

    @property
    def has_dataset(self) -> bool:
        return self.version != 0 and (self.dataset / "_versions").is_dir()


def nothing_done(remote: Remote, what: str) -> str:
    """The message of a change to `remote` refused because it is OFFLINE: `cannot reach
    <label>: <what>`, then why, when `state()` said (remote.unreachable)."""
    message = f"cannot reach {remote.label}: {what}"
    return f"{message}; {remote.unreachable}" if remote.unreachable else message


class Remote(Protocol):
    """A place a memory is shared through (see module docstring)."""

    label: str  # how users and `→ get` lines name it: hf://datasets/org/repo, file:///dir
    key: str  # filesystem-safe and unique per remote: names caches and receipts
    networked: bool  # reads need the network (offline mode applies)
    missing: str  # what the MISSING state says after the label: "does not exist" (+ why, maybe)
    # why the last `state()` found it OFFLINE, naming the endpoint and what to check; or None
    unreachable: str | None

    def state(self) -> RemoteState:
        """Classify the remote. Never raises for the five states; other failures raise."""
        ...

    def require_write_access(self) -> None:
        """Raise RemoteUnauthorized when a push could not authenticate (checked before work)."""
        ...

    def create(self, *, private: bool) -> None:
        """Create the remote (no-op when it exists)."""
        ...

    def head(self) -> str:
        """The current commit. Raises RemoteOffline / RemoteMissing / RemoteUnauthorized."""
        ...

    def snapshot(self, commit: str, *, local_only: bool = False) -> Snapshot:
        """The files at `commit`, fetched once into a local cache (`local_only`: no network)."""
        ...

    def publish(
        self, base: Snapshot, build: Callable[[Path], None], *, message: str, scratch: Path
    ) -> str:
        """Apply `build(root)` to a copy of `base` and commit the result on top of `base.commit`.

        `build` writes the new dataset files, manifest and card under `root`. `scratch` is a
        private folder of the caller's (funes.staging) where a remote that stages its
        copy makes it (in a new subfolder, removed before returning). Returns the new commit;
        raises HeadMoved when the remote moved past `base.commit`.
        """
        ...
