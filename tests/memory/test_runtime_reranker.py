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
    assert "HF_HUB_OFFLINE is set so it cannot be downloaded" in first.reranker_status()
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


def test_status_says_what_the_first_recall_does_with_a_reranker_that_is_not_here(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Status said the first recall downloads the reranker also where HF_HUB_OFFLINE forbids
    it: that recall runs without rerank. Offline it says so; online the download is tried,
    and status says what happens where the Hub cannot be reached."""
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))  # an empty cache
    monkeypatch.setenv("FUNES_RERANKER", "ms-marco-minilm-l6-v2")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    offline = Runtime.resolve()
    said = offline.reranker_status()
    assert said == (
        "ms-marco-minilm-l6-v2: not on this machine, and HF_HUB_OFFLINE is set so it cannot be "
        "downloaded; recall runs without rerank (FUNES_RERANKER=none silences its note)"
    )
    assert offline.reranker() is None  # as said: no rerank
    assert offline.reranker_note and "cannot be downloaded" in offline.reranker_note

    monkeypatch.setenv("HF_HUB_OFFLINE", "0")
    monkeypatch.setenv("FUNES_HOME", str(tmp_path / "fresh"))  # no failure remembered
    online = Runtime.resolve().reranker_status()
    assert online.startswith("ms-marco-minilm-l6-v2: not downloaded yet (the first recall ")
    assert "where the Hub cannot be reached, recall runs without rerank" in online
