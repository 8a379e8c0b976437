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

huggingface_hub's HTTP client sets no timeout, and most of its calls pass none: every request
that would wait forever is given funes' bounds (`_install_bounds`: ANSWER_TIMEOUT_S to connect
and for each read of an answer, COMMIT_ANSWER_TIMEOUT_S for an upload's, UPLOAD_STALL_TIMEOUT_S
for each write of a body). They bound waits without progress, never a whole transfer. A request
ended by one, or one that could not connect, is a HubOffline whose `reason` names the endpoint
and what to check.
"""

from __future__ import annotations

import threading
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

METADATA_TIMEOUT_S = 10.0
"""Seconds a file download waits for the Hub to answer its first request (the metadata `HEAD`
of `…/resolve/<rev>/<file>`) before it is refused with HubUnavailable, naming the endpoint.

The Hub answers that request in well under a second, so 10 s (huggingface_hub's own default
metadata timeout) leaves room for a slow link while a user sees the error within seconds.
Without this bound huggingface_hub, finding no cached copy, retries the request five more
times with a 60 s timeout each and 23 s of backoff: ~390 s against an endpoint that accepts
connections and never answers (a proxy or firewall swallowing traffic), ~25 s against one that
refuses them. HF_HUB_ETAG_TIMEOUT, when set, replaces this value (as it does for the client).
It bounds the wait for an answer only, never a transfer: a body that keeps arriving, however
slowly, is read to the end (huggingface_hub gives up on one only after HF_HUB_DOWNLOAD_TIMEOUT
seconds without a byte, resuming it five times)."""

ANSWER_TIMEOUT_S = 10.0
"""Seconds any other Hub request (list refs, repo info, tree listing, preupload, whoami, create
repository…) waits to connect, and then for each part of the answer: its first byte, and every
later read of it (no byte for this long ends it). Not a deadline: an answer that keeps arriving
is read to the end.

huggingface_hub's own client sets no timeout on these requests, so an endpoint that accepts
the connection and never answers (a proxy or firewall swallowing traffic) held `recall
--memory org/repo`, `status` and `push` forever. The Hub answers them in well under a second;
10 s, as METADATA_TIMEOUT_S, leaves room for a slow link. Requests for which huggingface_hub
chooses its own timeout (file downloads: HF_HUB_ETAG_TIMEOUT, HF_HUB_DOWNLOAD_TIMEOUT) keep it.
A failure is a HubOffline naming the endpoint; preupload and LFS requests are retried by
huggingface_hub (5 times, 23 s of backoff), the others are not."""

COMMIT_ANSWER_TIMEOUT_S = 300.0
"""Seconds a request that uploads (the commit `POST …/commit/<rev>`, an LFS object `PUT`) waits
for the server's answer once its body is handed to the network, and then for each part of it.

Generous on purpose: the wait includes the tail of the body still queued in the socket's send
buffer (up to a few MiB, autotuned: ~4 MiB takes 40 s at 100 KiB/s) and the Hub's work on the
commit (many files, LFS pointers checked), neither of which shows as progress on the client. A
commit the Hub accepts is answered well within 5 minutes; past that no answer is coming, and
the push fails (HubOffline) rather than holding the remote's push lock for good. A commit whose
answer was lost may have landed: the next push finds the branch moved (412), re-reads it and
sends only the chunks the remote lacks."""

UPLOAD_STALL_TIMEOUT_S = 60.0
"""Seconds a request body may make no progress (the socket accepts no byte) before the request
fails: a no-progress bound, never a deadline, so an upload over a slow but live link runs to
the end. 60 s outlasts TCP's retransmission backoff over a lossy link (1+2+4+8+16+32 s), where
a stalled upload, unlike a download, cannot resume: the whole push is tried again."""


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
    if (transport := _transport_failure(exc)) is not None:
        timeout_s = _bound_of(transport)
        if timeout_s is None:
            timeout_s = ANSWER_TIMEOUT_S
        unreachable = _unreachable(transport, timeout_s=timeout_s, transfer=False)
        if unreachable is not None:
            return HubOffline(f"{what}: {unreachable}", reason=unreachable)
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


def _transport_failure(exc: BaseException) -> BaseException | None:
    """The HTTP client's transport error (no connection, a timeout) that `exc` is or was
    raised from, or None. huggingface_hub wraps some (snapshot_download: "cannot find the
    files… Got: ReadTimeout") in its own errors."""
    seen: set[int] = set()
    cause: BaseException | None = exc
    while cause is not None and id(cause) not in seen:
        seen.add(id(cause))
        if "TransportError" in {cls.__name__ for cls in type(cause).__mro__}:
            return cause
        cause = cause.__cause__ or cause.__context__
    return None


def _bound_of(exc: BaseException) -> float | None:
    """The timeout (seconds) that ended the request of the transport error `exc`: its connect,
    read or write bound, as the request carried it; None when unknown."""
    kind = {"ConnectTimeout": "connect", "ReadTimeout": "read", "WriteTimeout": "write"}
    name = next((kind[c.__name__] for c in type(exc).__mro__ if c.__name__ in kind), None)
    try:
        timeout = exc.request.extensions.get("timeout") or {}  # type: ignore[attr-defined]
    except (AttributeError, RuntimeError):  # httpx raises RuntimeError when none was set
        return None
    value = timeout.get(name) if name else None
    return float(value) if isinstance(value, int | float) else None


_installed = False
_install_lock = threading.Lock()


def _install_bounds() -> None:
    """Have huggingface_hub's shared HTTP client bound every request it would let wait forever
    (once a process; `set_client_factory` survives the client being closed and recreated)."""
    global _installed
    with _install_lock:
        if _installed:
            return
        _installed = True
        try:
            from huggingface_hub import set_client_factory
            from huggingface_hub.utils._http import default_client_factory
        except ImportError:  # a huggingface_hub before 1.0 (requests): left as it is
            return

        def factory() -> Any:
            client = default_client_factory()  # its hooks, redirects, proxies from the env
            client.event_hooks["request"].append(_bound_request)
            return client

        set_client_factory(factory)


def _bound_request(request: Any) -> None:
    """Request hook: a request that carries no timeout (huggingface_hub's client has none, and
    most of its calls pass none) gets ANSWER_TIMEOUT_S to connect and for each read of the
    answer (COMMIT_ANSWER_TIMEOUT_S for an upload: a commit, a `PUT`) and
    UPLOAD_STALL_TIMEOUT_S for each write of its body; the pool is not bounded (a request
    waiting behind slow transfers is not failing). A request with a timeout of its own keeps
    it (downloads: HF_HUB_ETAG_TIMEOUT, HF_HUB_DOWNLOAD_TIMEOUT)."""
    timeout = request.extensions.get("timeout") or {}
    if any(value is not None for value in timeout.values()):
        return
    path = request.url.path
    uploading = request.method == "PUT" or (request.method == "POST" and "/commit/" in path)
    read_s = COMMIT_ANSWER_TIMEOUT_S if uploading else ANSWER_TIMEOUT_S
    bounds = {"connect": ANSWER_TIMEOUT_S, "read": read_s, "write": UPLOAD_STALL_TIMEOUT_S}
    request.extensions = {**request.extensions, "timeout": {**bounds, "pool": None}}


def _unresolvable_endpoint() -> str | None:
    """Why the Hub endpoint's host name cannot be resolved, or None when it can.

    A name that does not resolve (no network, no DNS) will not resolve on a second try either,
    so a download is refused at once, saying so, before any request is made.
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

    _install_bounds()

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
    _install_bounds()
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

    Uses the cached copy when present (also with HF_HUB_OFFLINE=1). Before downloading, asks
    the Hub once for the file's metadata (no retries): an endpoint that does not answer within
    METADATA_TIMEOUT_S seconds, or cannot be connected to, refuses the download at once. A
    transfer is aborted when no byte arrives for HF_HUB_DOWNLOAD_TIMEOUT seconds (default 10)
    across huggingface_hub's five resumes (~1 min); one that keeps receiving bytes runs to the
    end. An aborted transfer leaves no file at the cache path (only huggingface_hub's
    `blobs/<etag>.incomplete`, which the next download resumes).

    Raises HubUnavailable when the file is neither cached nor downloadable; its message names
    the endpoint when the Hub could not be reached.
    """
    from huggingface_hub import constants, hf_hub_download
    from huggingface_hub.errors import HfHubHTTPError, LocalEntryNotFoundError
    from huggingface_hub.utils import logging as hf_logging

    hf_logging.set_verbosity_error()  # type: ignore[no-untyped-call]  # its retry chatter is noise; failures raise
    _install_bounds()
    cached = cached_file(repo_id, filename, revision=revision, repo_type=repo_type)
    if cached is not None:
        return cached
    where = f"{repo_id}@{revision[:12]}/{filename}"
    if not offline_mode():
        if (unresolved := _unresolvable_endpoint()) is not None:
            raise HubUnavailable(f"{where}: {unresolved}")
        _check_answers(repo_id, filename, revision=revision, repo_type=repo_type, where=where)
    try:
        return Path(hf_hub_download(repo_id, filename, revision=revision, repo_type=repo_type))
    except (LocalEntryNotFoundError, HfHubHTTPError, OSError, ValueError) as exc:
        raise HubUnavailable(f"{where}: {exc}") from exc
    except Exception as exc:
        stall_s = float(constants.HF_HUB_DOWNLOAD_TIMEOUT)
        if (unreachable := _unreachable(exc, timeout_s=stall_s, transfer=True)) is None:
            raise
        raise HubUnavailable(f"{where}: {unreachable}") from exc


def _check_answers(
    repo_id: str, filename: str, *, revision: str, repo_type: str, where: str
) -> None:
    """Ask the Hub for `filename`'s metadata once (`HEAD …/resolve/…`, no retries, at most
    METADATA_TIMEOUT_S seconds, or HF_HUB_ETAG_TIMEOUT when set). Raises HubUnavailable when
    no answer came (no connection, or none within the time); any answer, an error status
    included, returns, so that the download reports it in its own terms."""
    from huggingface_hub import constants, get_hf_file_metadata, hf_hub_url

    timeout_s = METADATA_TIMEOUT_S
    if constants.HF_HUB_ETAG_TIMEOUT != constants.DEFAULT_ETAG_TIMEOUT:
        timeout_s = float(constants.HF_HUB_ETAG_TIMEOUT)
    url = hf_hub_url(repo_id, filename, repo_type=repo_type, revision=revision)
    import inspect

    once: dict[str, Any] = {"retry_on_errors": False}  # recent huggingface_hub retries
    if "retry_on_errors" not in inspect.signature(get_hf_file_metadata).parameters:
        once = {}
    try:
        get_hf_file_metadata(url, timeout=timeout_s, **once)
    except Exception as exc:
        unreachable = _unreachable(exc, timeout_s=timeout_s, transfer=False)
        if unreachable is not None:
            raise HubUnavailable(f"{where}: {unreachable}") from exc


def _unreachable(exc: BaseException, *, timeout_s: float, transfer: bool) -> str | None:
    """Why the Hub endpoint could not be reached, when `exc` is a transport failure (no
    connection, no answer within `timeout_s` seconds, or, when `transfer`, a body that stopped
    arriving); None for anything else. Names the endpoint and says what to check.

    Judged by the exception's class names (httpx's and requests' alike: huggingface_hub
    has used either HTTP client, and funes does not import one of its own)."""
    import os

    from huggingface_hub import constants

    names = {cls.__name__ for cls in type(exc).__mro__}
    endpoint = constants.ENDPOINT + (" (HF_ENDPOINT)" if os.environ.get("HF_ENDPOINT") else "")
    if "ConnectTimeout" in names:
        what = f"no connection to {endpoint} within {timeout_s:g} s"
    elif "WriteTimeout" in names:
        what = f"the upload to {endpoint} stalled (nothing sent for {timeout_s:g} s)"
    elif names & {"TimeoutException", "Timeout", "ReadTimeout"} and transfer:
        what = f"the transfer from {endpoint} stalled (nothing for {timeout_s:g} s, 5 resumes)"
    elif names & {"TimeoutException", "Timeout", "ReadTimeout"}:
        what = f"{endpoint} took the connection but did not answer within {timeout_s:g} s"
    elif names & {"ConnectError", "ConnectionError"} and "HTTPError" not in names:
        what = f"cannot connect to {endpoint}: {exc}"
    elif "TransportError" in names:
        what = f"cannot reach {endpoint}: {type(exc).__name__}: {exc}"
    else:
        return None
    return f"{what}; check the network, any proxy (HTTPS_PROXY) or firewall, and HF_ENDPOINT"


def cached_file(
    repo_id: str, filename: str, *, revision: str, repo_type: str = "model"
) -> Path | None:
    """The cached copy of `filename` at `revision`, or None; never touches the network."""
    from huggingface_hub import try_to_load_from_cache

    found = try_to_load_from_cache(repo_id, filename, revision=revision, repo_type=repo_type)
    return Path(found) if isinstance(found, str) else None
