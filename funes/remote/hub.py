"""A Hugging Face dataset repository as a remote memory (through `funes.hf`).

Reads: `head()` is one request (the branch's refs); `snapshot(commit)` downloads the files
of that commit into the standard HF cache once and then serves them from it. Writes stage a
copy of the snapshot in the caller's private scratch folder (funes.staging: immutable
data and index files are symlinked, small metadata files copied), let the caller's `build`
append (or delete) there, and upload exactly the new and changed files, deleting the removed
ones, in one `create_commit` whose `parent_commit` is the snapshot's commit (the Hub answers
412 when the branch moved: HeadMoved).
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

from funes import hf
from funes.errors import (
    HeadMoved,
    HubConflict,
    HubError,
    HubForbidden,
    HubNotFound,
    HubOffline,
    HubUnauthorized,
    RemoteError,
    RemoteMissing,
    RemoteOffline,
    RemoteUnauthorized,
)
from funes.paths import umask_at_least
from funes.remote.base import CARD, MANIFEST, RemoteState, Snapshot
from funes.remote.lance_export import TABLE

PATTERNS = (f"{TABLE}/**", MANIFEST, CARD)
_IMMUTABLE = (f"{TABLE}/data/", f"{TABLE}/_indices/", f"{TABLE}/_transactions/")
_LINK = "<symlink>"
TOKEN_HINT = "run `hf auth login` with a token that can write to it, or set HF_TOKEN"


def _mapped(exc: HubError, label: str, *, writing: bool = False) -> RemoteError:
    if isinstance(exc, HubOffline):
        return RemoteOffline(
            f"cannot reach the Hugging Face Hub for {label}: {exc.reason}"
            if exc.reason
            else f"cannot reach the Hugging Face Hub for {label} (offline?)",
            hint="check the network, or read the last cached copy with --offline",
        )
    if isinstance(exc, HubNotFound):
        return RemoteMissing(
            f"{label} does not exist, or your token cannot see it",
            hint="check the name; a private dataset needs a token of an account that can read it"
            + ("; `funes push <repo> --create` creates it (private)" if writing else ""),
        )
    if isinstance(exc, HubUnauthorized):
        return RemoteUnauthorized(
            f"the Hugging Face Hub refused your token for {label}", hint=TOKEN_HINT
        )
    if isinstance(exc, HubForbidden):
        return RemoteUnauthorized(
            f"your Hugging Face token cannot write to {label} (a read-only token?)",
            hint="create a token with write access at https://huggingface.co/settings/tokens, then "
            + TOKEN_HINT,
        )
    if isinstance(exc, HubConflict):
        return HeadMoved(f"{label} moved while pushing")
    return RemoteError(f"{label}: {exc}")


class HubRemote:
    """`org/repo` on the Hugging Face Hub (repo type: dataset)."""

    networked = True
    missing = "does not exist (or your token cannot see it)"  # a private dataset looks absent
    unreachable: str | None = None

    def __init__(self, repo_id: str) -> None:
        self.repo_id = repo_id
        self.label = f"hf://datasets/{repo_id}"
        self.key = "hf_" + re.sub(r"[^A-Za-z0-9._-]", "_", repo_id.replace("/", "__"))

    def state(self) -> RemoteState:
        try:
            if not hf.repo_exists(self.repo_id):
                return RemoteState.MISSING
            snap = self.snapshot(self.head())
        except (RemoteOffline, HubOffline) as exc:
            hub_exc = exc if isinstance(exc, HubOffline) else exc.__cause__
            self.unreachable = hub_exc.reason if isinstance(hub_exc, HubOffline) else None
            return RemoteState.OFFLINE
        except (RemoteUnauthorized, HubUnauthorized):
            return RemoteState.UNAUTHORIZED
        except RemoteMissing:
            return RemoteState.MISSING
        return RemoteState.READY if snap.has_dataset else RemoteState.EMPTY

    def require_write_access(self) -> None:
        if not hf.token():
            raise RemoteUnauthorized(
                f"no Hugging Face token: pushing to {self.label} needs one", hint=TOKEN_HINT
            )

    def create(self, *, private: bool) -> None:
        try:
            hf.create_repo(self.repo_id, private=private)
        except HubError as exc:
            raise _mapped(exc, self.label, writing=True) from exc

    def head(self) -> str:
        try:
            return hf.head_commit(self.repo_id)
        except HubError as exc:
            raise _mapped(exc, self.label) from exc

    def snapshot(self, commit: str, *, local_only: bool = False) -> Snapshot:
        try:
            root = hf.snapshot(
                self.repo_id, revision=commit, patterns=PATTERNS, local_only=local_only
            )
        except HubError as exc:
            raise _mapped(exc, self.label) from exc
        return Snapshot(commit, root)

    def files(
        self, patterns: Sequence[str], *, revision: str | None = None, local_only: bool = False
    ) -> Snapshot:
        """The repository's files matching `patterns` at `revision` (default: the head of
        main, which the HF cache then remembers), fetched into the HF cache once (a file
        already cached is not fetched again); `local_only`: the cached copy, no network.
        Raises RemoteOffline, RemoteMissing, RemoteUnauthorized, RemoteError."""
        try:
            root = hf.snapshot(
                self.repo_id, revision=revision or hf.BRANCH, patterns=patterns,
                local_only=local_only,
            )  # fmt: skip
        except HubError as exc:
            raise _mapped(exc, self.label) from exc
        return Snapshot(root.name, root)  # the cache folder is named after the commit

    def publish(
        self, base: Snapshot, build: Callable[[Path], None], *, message: str, scratch: Path
    ) -> str:
        """Stage a copy of `base` in a new folder under `scratch`, let `build` change it, and
        commit what changed on top of `base.commit` (module docstring)."""
        with tempfile.TemporaryDirectory(prefix="repo-", dir=scratch) as tmp:
            stage = Path(tmp) / "repo"
            with umask_at_least():  # the staged copy is the memory's text: private
                before = stage_copy(base.root, stage)
                build(stage)
            files = changed_files(stage, before)
            gone = removed_files(stage, before)
            if not files and not gone:
                return base.commit
            try:
                return hf.create_commit(
                    self.repo_id,
                    files,
                    message=message,
                    parent_commit=base.commit,
                    deletions=gone,
                )
            except HubError as exc:
                raise _mapped(exc, self.label, writing=True) from exc


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def stage_copy(src: Path, dest: Path) -> dict[str, str]:
    """Lay `src` (a snapshot folder) out at `dest` for writing; returns {relpath: sha256 or link}.

    Files that never change once written (data fragments, index files, transactions) become
    symlinks to the cached blobs; the rest (manifests, the version hint, card) are copied.
    """
    dest.mkdir(parents=True, mode=0o700)
    before: dict[str, str] = {}
    if not src.is_dir():
        return before
    for root, _, names in os.walk(src):
        for name in names:
            path = Path(root) / name
            rel = path.relative_to(src).as_posix()
            target = dest / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            real = path.resolve()
            if rel.startswith(_IMMUTABLE):
                target.symlink_to(real)
                before[rel] = _LINK
            else:
                shutil.copyfile(real, target)
                before[rel] = _sha256(target)
    return before


def changed_files(stage: Path, before: dict[str, str]) -> dict[str, Path]:
    """{relpath: file} of the files under `stage` that are new or differ from `before`."""
    out: dict[str, Path] = {}
    for root, _, names in os.walk(stage):
        for name in names:
            path = Path(root) / name
            rel = path.relative_to(stage).as_posix()
            if path.is_symlink() and before.get(rel) == _LINK:
                continue
            if before.get(rel) != _sha256(path):
                out[rel] = path
    return out


def removed_files(stage: Path, before: dict[str, str]) -> list[str]:
    """The paths of `before` that `build` removed from `stage` (a forget's compaction and
    cleanup drop the files that held the deleted rows)."""
    return sorted(rel for rel in before if not os.path.lexists(stage / rel))
