"""Hugging Face Hub transport: token and offline resolution, pinned file downloads.

Knows nothing of memories or models; used by `inference` (weights) and `remote` (datasets).
The only module that imports huggingface_hub. Downloads land in the standard HF cache
(`HF_HOME` / `HF_HUB_CACHE` are honoured by huggingface_hub itself).
"""

from __future__ import annotations

from pathlib import Path


class HubUnavailable(Exception):
    """A file could not be obtained from the Hub (offline, missing, unauthorized)."""


def download_file(repo_id: str, filename: str, *, revision: str, repo_type: str = "model") -> Path:
    """The local path of `filename` at `revision` of `repo_id`, downloading it on first use.

    Uses the cached copy when present (also with HF_HUB_OFFLINE=1). Raises HubUnavailable when
    the file is neither cached nor downloadable.
    """
    from huggingface_hub import hf_hub_download
    from huggingface_hub.errors import HfHubHTTPError, LocalEntryNotFoundError

    try:
        return Path(
            hf_hub_download(repo_id, filename, revision=revision, repo_type=repo_type)
        )
    except (LocalEntryNotFoundError, HfHubHTTPError, OSError, ValueError) as exc:
        raise HubUnavailable(f"{repo_id}@{revision[:12]}/{filename}: {exc}") from exc
