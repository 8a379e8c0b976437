"""bench/push_memory.py: the synthetic memory it pushes, the child's figures, the report rows."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench import push_memory
from bench.report import push_rows
from funes.remote.arenas import MALLOC_ARENAS, count_malloc_arenas
from funes.store import Store


def test_the_synthetic_memory_grows_in_place_and_a_child_pushes_all_of_it(tmp_path: Path) -> None:
    db = tmp_path / "memory.db"
    push_memory.fill(db, 300)
    push_memory.fill(db, 700)  # grows: the first 300 are kept, 400 added
    store = Store.open(db, readonly=True)
    try:
        assert store.stats().chunks == 700 and store.stats().sessions == 35
    finally:
        store.close()
    pushed = push_memory.child_push(db, tmp_path / "dest")
    assert pushed["pushed"] == 700
    assert pushed["index_actions"] == ["created vector_idx", "created text_idx"]
    assert pushed["peak_rss_mb"] > 0


def test_a_push_keeps_lance_threads_to_the_capped_malloc_arenas(tmp_path: Path) -> None:
    """The bounded-memory property that does not depend on timing: a fresh process that pushes
    enough rows for Lance's threaded vector-index build holds at most MALLOC_ARENAS glibc
    arenas (uncapped it held 16 on two cores, and each kept its freed pages: +157 MB at 240k)."""
    if count_malloc_arenas(tmp_path / "probe.xml") is None:
        pytest.skip("malloc arenas are glibc's: nothing to cap elsewhere")
    db = tmp_path / "memory.db"
    push_memory.fill(db, 700)
    child = push_memory._run_child("--child", str(db), str(tmp_path / "dest"))
    assert child["pushed"] == 700 and "created vector_idx" in child["index_actions"]
    assert 1 <= child["malloc_arenas"] <= MALLOC_ARENAS


def test_the_report_extrapolates_the_growth_between_the_two_largest_sizes() -> None:
    result = {
        "target_mb": 1024.0,
        "floor_mb": 120.0,
        "sizes": {
            "80000": {"peak_rss_mb": 500.0, "seconds": 60.0},
            "240000": {"peak_rss_mb": 580.0, "seconds": 170.0},
        },
        "kb_per_chunk": 0.512,
        "extrapolated_1m_mb": 960.0,
        "met": True,
    }
    rows = push_rows(result)
    assert [r[1] for r in rows[1:]] == ["500 MB", "580 MB", "960 MB"]
    assert "met" in rows[-1][4]
    assert push_rows(None) == []


def test_the_report_shows_a_measured_1m_peak_as_measured() -> None:
    result = {
        "target_mb": 1024.0,
        "floor_mb": 106.0,
        "sizes": {
            "240000": {"peak_rss_mb": 632.0, "seconds": 30.0},
            "1000000": {"peak_rss_mb": 833.0, "seconds": 120.0},
        },
        "kb_per_chunk": 0.27,
        "measured_1m_mb": 833.0,
        "met": True,
    }
    last = push_rows(result)[-1]
    assert "(measured)" in last[0] and last[1] == "833 MB" and "met" in last[4]


def test_measure_takes_the_1m_peak_as_measured_when_1m_is_pushed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The 1M figure is the pushed size's own peak (no line through smaller sizes): run here
    with the target size scaled down to 40 chunks."""
    monkeypatch.setattr(push_memory, "AT", 40)
    result = push_memory.measure(tmp_path, sizes=(10, 40))
    assert result["measured_1m_mb"] == result["sizes"]["40"]["peak_rss_mb"]
    assert "extrapolated_1m_mb" not in result
    assert result["met"] == (result["measured_1m_mb"] <= 1024)


@pytest.mark.parametrize("sizes", [(10, 30)])
def test_measure_reports_a_peak_per_size_and_the_1m_extrapolation(
    tmp_path: Path, sizes: tuple[int, int]
) -> None:
    result = push_memory.measure(tmp_path, sizes=sizes)
    assert set(result["sizes"]) == {"10", "30"}
    slope = (result["sizes"]["30"]["peak_rss_mb"] - result["sizes"]["10"]["peak_rss_mb"]) / 20
    expected = result["sizes"]["30"]["peak_rss_mb"] + max(slope, 0) * (1_000_000 - 30)
    assert result["extrapolated_1m_mb"] == pytest.approx(expected, abs=0.1)
    assert result["met"] == (result["extrapolated_1m_mb"] <= 1024)
