from __future__ import annotations

import time
from pathlib import Path

import pytest

from funes.memory import Runtime


def test_a_failed_reranker_download_is_remembered_and_reported(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))  # an empty cache
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")  # the download fails at once
    monkeypatch.setenv("FUNES_RERANKER", "ms-marco-minilm-l6-v2")
    first = Runtime.resolve()
    assert "not downloaded yet" in first.reranker_status()
    assert first.reranker() is None
    assert first.reranker_note and "cannot be downloaded" in first.reranker_note
    later = Runtime.resolve()
    started = time.perf_counter()
    assert later.reranker() is None
    assert time.perf_counter() - started < 1.0
    assert later.reranker_note and "download failed at" in later.reranker_note
    assert "download failed at" in later.reranker_status()


def test_a_disabled_reranker_says_so() -> None:
    rt = Runtime.resolve()  # tests run with FUNES_RERANKER=none
    assert rt.reranker() is None
    assert rt.reranker_status() == "none (FUNES_RERANKER=none)"
