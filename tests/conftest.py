"""Shared fixtures: every test runs with its own FUNES_HOME and HOME under tmp_path."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from support.cli import Ran

    from funes.store import Store

REPO = Path(__file__).resolve().parent.parent
FIXTURES = REPO / "fixtures"
SHARED = REPO.parent / "shared"

sys.path.insert(0, str(Path(__file__).resolve().parent))

# Kingfisher compiles its rule catalogue once (~7 s) and caches it: one cache for the whole
# run (and for the `funes` subprocesses tests start), not one per test HOME.
_KF_CACHE = REPO / ".pytest_cache" / "kingfisher-rules"
_KF_CACHE.mkdir(parents=True, exist_ok=True, mode=0o700)
os.environ.setdefault("KF_RULE_CACHE_DIR", str(_KF_CACHE))

OFFLINE_EMBEDDER = "all-minilm-l6-v2-int8"


def pytest_report_header(config: pytest.Config) -> list[str]:
    from funes.store.db import versions

    lines = [f"funes store: {versions()}"]
    # its version from the package's metadata: importing onnxruntime here, before any funes
    # module turned its telemetry off, wrote a device id into the real home
    # (tests/inference/test_telemetry.py)
    from importlib.metadata import PackageNotFoundError, version

    try:
        lines.append(f"onnxruntime {version('onnxruntime')}")
    except PackageNotFoundError:
        lines.append("onnxruntime not installed")
    return lines


@pytest.fixture(scope="session")
def model_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One cache of built int8 graphs for the whole run (building one takes seconds)."""
    return tmp_path_factory.mktemp("model-cache")


@pytest.fixture(autouse=True)
def isolated_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, model_cache: Path) -> Path:
    """FUNES_HOME and HOME point into tmp_path; agent home overrides are cleared; the int8
    graphs funes builds are shared by every test (FUNES_MODEL_CACHE)."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("FUNES_HOME", str(tmp_path / "funes"))
    from funes.traces import AGENTS

    for var in (agent.home_var for agent in AGENTS.values() if agent.home_var):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("FUNES_EMBEDDER", OFFLINE_EMBEDDER)
    monkeypatch.setenv("FUNES_RERANKER", "none")
    monkeypatch.setenv("FUNES_MODEL_CACHE", str(model_cache))
    return home


@pytest.fixture
def funes_env() -> dict[str, str]:
    """The environment a `python -m funes` subprocess should run with (the isolated one)."""
    return dict(os.environ)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    """An empty, writable memory at tmp_path/memory.db (closed after the test).

    Fill it with support.memory.fill; a test that needs a second memory opens it beside.
    """
    from funes.store import Store

    opened = Store.open(tmp_path / "memory.db")
    yield opened
    opened.close()


@pytest.fixture
def run(capsys: pytest.CaptureFixture[str]) -> Callable[..., Ran]:
    """`funes ARGS` in this process, through main() (the CLI's one error boundary)."""
    import logging

    from support.cli import Ran

    from funes.cli import main

    def invoke(*args: str) -> Ran:
        root = logging.getLogger()
        handlers, level = root.handlers[:], root.level
        try:
            with pytest.raises(SystemExit) as done:
                main(list(args))
        finally:
            root.handlers[:], root.level = handlers, level
        out = capsys.readouterr()
        code = done.value.code
        return Ran(code if isinstance(code, int) else 1, out.out, out.err)

    return invoke
