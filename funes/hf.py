"""Hugging Face Hub transport: token and offline resolution, pinned downloads, commits.

Knows nothing of memories or models; used by `inference` (weights) and `remote` (datasets).
The only module that imports huggingface_hub. Downloads land in the standard HF cache
(`HF_HOME` / `HF_HUB_CACHE` are honoured by huggingface_hub itself), keyed by commit, so a
file fetched once at a commit is never fetched again.

Every Hub failure surfaces as one of the `HubError` subclasses below, classified from the
client's typed errors and HTTP status codes (never from message text):

    HubError
    ├── HubUnavailable   a file is neither cached nor downloadable (weights)
    ├── HubOffline       no connection, HF_HUB_OFFLINE, or the Hub answered 5xx
    ├── HubNotFound      the repository does not exist or this token cannot see it
    ├── HubUnauthorized  401: no token, or an invalid one
    ├── HubForbidden     403: the token may read but not write
    └── HubConflict      409/412: the branch head moved (stale parent commit)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from funes.errors import (
    HubConflict,
    HubError,
    HubForbidden,
    HubNotFound,
    HubOffline,
    HubUnauthorized,
    HubUnavailable,
)

REPO_TYPE = "dataset"
BRANCH = "main"


def _classify(exc: BaseException, what: str) -> HubError:
    """Map a huggingface_hub / transport exception to a HubError (by type and status only)."""
    import httpx2
    from huggingface_hub.errors import (
        HfHubHTTPError,
        LocalEntryNotFoundError,
        OfflineModeIsEnabled,
        RepositoryNotFoundError,
        RevisionNotFoundError,
    )

    if isinstance(exc, HubError):
        return exc
    if isinstance(exc, OfflineModeIsEnabled | httpx2.TransportError | LocalEntryNotFoundError):
        return HubOffline(f"{what}: the Hub cannot be reached ({type(exc).__name__})")
    if isinstance(exc, RepositoryNotFoundError | RevisionNotFoundError):
        status = exc.response.status_code if exc.response is not None else None
        return HubNotFound(f"{what}: not found", status=status)
    if isinstance(exc, HfHubHTTPError):
        status = exc.response.status_code if exc.response is not None else None
        if status == 401:
            return HubUnauthorized(f"{what}: the Hub refused the token (401)", status=status)
        if status == 403:
            return HubForbidden(f"{what}: forbidden (403)", status=status)
        if status in (409, 412):
            return HubConflict(f"{what}: the branch moved ({status})", status=status)
        if status == 404:
            return HubNotFound(f"{what}: not found (404)", status=status)
        if status is not None and status >= 500:
            return HubOffline(f"{what}: the Hub answered {status}", status=status)
        return HubError(f"{what}: HTTP {status}", status=status)
    if isinstance(exc, ConnectionError | TimeoutError):
        return HubOffline(f"{what}: the Hub cannot be reached ({type(exc).__name__})")
    return HubError(f"{what}: {type(exc).__name__}: {exc}")


def _unresolvable_endpoint() -> str | None:
    """Why the Hub endpoint's host name cannot be resolved, or None when it can.

    huggingface_hub retries a failed connection five times with backoff (about 25 s) before
    giving up; a name that does not resolve (no network, no DNS) will not resolve on the
    second try either, so a download is refused at once instead.
    """
    import socket
    from urllib.parse import urlsplit

    from huggingface_hub import constants

    host = urlsplit(constants.ENDPOINT).hostname
    if not host:
        return None
    try:
        socket.getaddrinfo(host, None)
    except socket.gaierror as exc:
        return f"cannot resolve {host} ({exc.strerror or exc}): offline?"
    except OSError:
        return None  # let the client decide
    return None


def _api() -> Any:
    from huggingface_hub import HfApi
    from huggingface_hub.utils import logging as hf_logging

    hf_logging.set_verbosity_error()  # type: ignore[no-untyped-call]  # failures surface as HubError; its warnings are noise here
    return HfApi()


def token() -> str | None:
    """The token huggingface_hub would send (HF_TOKEN, or the one `hf auth login` stored)."""
    from huggingface_hub import get_token

    value: str | None = get_token()
    return value


def offline_mode() -> bool:
    """True when huggingface_hub is in offline mode (HF_HUB_OFFLINE=1)."""
    from huggingface_hub import constants

    return bool(constants.is_offline_mode())


def head_commit(repo_id: str, *, repo_type: str = REPO_TYPE, branch: str = BRANCH) -> str:
    """The commit sha `branch` points to: one request (`GET /api/{type}s/{id}/refs`).

    Raises HubOffline, HubNotFound (also when the branch is absent), HubUnauthorized.
    """
    try:
        refs = _api().list_repo_refs(repo_id, repo_type=repo_type)
    except Exception as exc:
        raise _classify(exc, repo_id) from exc
    for ref in refs.branches:
        if ref.name == branch:
            return str(ref.target_commit)
    raise HubNotFound(f"{repo_id}: no branch {branch!r}")


def repo_exists(repo_id: str, *, repo_type: str = REPO_TYPE) -> bool:
    """Whether the repository exists and this token can see it (one `repo_info` request).

    Raises HubOffline, HubUnauthorized (an invalid token), HubError.
    """
    try:
        _api().repo_info(repo_id, repo_type=repo_type)
    except Exception as exc:
        err = _classify(exc, repo_id)
        if isinstance(err, HubNotFound):
            return False
        raise err from exc
    return True


def create_repo(repo_id: str, *, private: bool, repo_type: str = REPO_TYPE) -> None:
    """Create the repository (no-op when it exists). Raises HubForbidden / HubUnauthorized."""
    try:
        _api().create_repo(repo_id, repo_type=repo_type, private=private, exist_ok=True)
    except Exception as exc:
        raise _classify(exc, repo_id) from exc


def create_commit(
    repo_id: str,
    files: Mapping[str, Path | bytes],
    *,
    message: str,
    parent_commit: str | None,
    repo_type: str = REPO_TYPE,
    branch: str = BRANCH,
    deletions: Sequence[str] = (),
) -> str:
    """One commit adding/replacing `files` ({path in repo: local file or bytes}) and deleting
    the paths in `deletions`; returns its sha.

    With `parent_commit`, the Hub refuses the commit when the branch moved (HubConflict).
    Raises HubForbidden (read-only token), HubNotFound, HubOffline, HubConflict.
    """
    from huggingface_hub import CommitOperationAdd, CommitOperationDelete

    ops: list[Any] = [
        CommitOperationAdd(
            path_in_repo=path, path_or_fileobj=src if isinstance(src, bytes) else str(src)
        )
        for path, src in sorted(files.items())
    ]
    ops += [CommitOperationDelete(path_in_repo=path) for path in sorted(deletions)]
    try:
        info = _api().create_commit(
            repo_id,
            ops,
            commit_message=message,
            repo_type=repo_type,
            revision=branch,
            parent_commit=parent_commit,
        )
    except Exception as exc:
        raise _classify(exc, repo_id) from exc
    return str(info.oid)


def snapshot(
    repo_id: str,
    *,
    revision: str,
    patterns: Sequence[str],
    repo_type: str = REPO_TYPE,
    local_only: bool = False,
) -> Path:
    """The cache folder holding the files matching `patterns` at commit `revision`.

    Downloads only what is not cached yet (nothing, when this commit was fetched before). The
    folder may not exist when no file matches. With `local_only` no request is made.
    Raises HubOffline (also: not cached while offline), HubNotFound, HubUnauthorized.
    """
    from huggingface_hub import snapshot_download
    from huggingface_hub.utils import logging as hf_logging
    from huggingface_hub.utils.tqdm import disable_progress_bars

    disable_progress_bars()  # a memory's files are small; bars would garble agents' stderr
    hf_logging.set_verbosity_error()  # type: ignore[no-untyped-call]
    try:
        path = snapshot_download(
            repo_id,
            repo_type=repo_type,
            revision=revision,
            allow_patterns=list(patterns),
            local_files_only=local_only,
        )
    except Exception as exc:
        raise _classify(exc, f"{repo_id}@{revision[:12]}") from exc
    return Path(path)


@dataclass(frozen=True, slots=True)
class Identity:
    """Who the token belongs to and whether it may write (`role` is None for fine-grained tokens)."""

    name: str
    role: str | None


def whoami() -> Identity:
    """The token's owner (`GET /api/whoami-v2`). Raises HubUnauthorized, HubOffline."""
    try:
        info = _api().whoami()
    except Exception as exc:
        raise _classify(exc, "whoami") from exc
    access = (info.get("auth") or {}).get("accessToken") or {}
    return Identity(str(info.get("name", "")), access.get("role"))


def download_file(repo_id: str, filename: str, *, revision: str, repo_type: str = "model") -> Path:
    """The local path of `filename` at `revision` of `repo_id`, downloading it on first use.

    Uses the cached copy when present (also with HF_HUB_OFFLINE=1). Raises HubUnavailable when
    the file is neither cached nor downloadable.
    """
    from huggingface_hub import hf_hub_download
    from huggingface_hub.errors import HfHubHTTPError, LocalEntryNotFoundError
    from huggingface_hub.utils import logging as hf_logging

    hf_logging.set_verbosity_error()  # type: ignore[no-untyped-call]  # its retry chatter is noise; failures raise
    cached = cached_file(repo_id, filename, revision=revision, repo_type=repo_type)
    if cached is not None:
        return cached
    if not offline_mode() and (unresolved := _unresolvable_endpoint()) is not None:
        raise HubUnavailable(f"{repo_id}@{revision[:12]}/{filename}: {unresolved}")
    try:
        return Path(hf_hub_download(repo_id, filename, revision=revision, repo_type=repo_type))
    except (LocalEntryNotFoundError, HfHubHTTPError, OSError, ValueError) as exc:
        raise HubUnavailable(f"{repo_id}@{revision[:12]}/{filename}: {exc}") from exc


def cached_file(
    repo_id: str, filename: str, *, revision: str, repo_type: str = "model"
) -> Path | None:
    """The cached copy of `filename` at `revision`, or None; never touches the network."""
    from huggingface_hub import try_to_load_from_cache

    found = try_to_load_from_cache(repo_id, filename, revision=revision, repo_type=repo_type)
    return Path(found) if isinstance(found, str) else None
