"""onnxruntime's own telemetry stays off in every funes process that loads a model.

onnxruntime 1.29 and later write a device id and an event queue under
~/.cache/Microsoft/DeveloperTools the first time a process loads a model, and upload the
events to Microsoft; funes sets ORT_DISABLE_TELEMETRY before any import of onnxruntime
(funes.inference.telemetry). onnxruntime stays quiet by itself on a CI machine, so both processes run
without the variables it recognises one by.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from funes.inference import MINILM_L6_INT8_PKG
from funes.inference.files import resolve_file

pytestmark = pytest.mark.models

# What onnxruntime 1.32 reads to tell a CI machine (strings of its native module), and the
# variable under test
_QUIETING = (
    "CI", "CONTINUOUS_INTEGRATION", "TF_BUILD", "GITHUB_ACTIONS", "GITLAB_CI", "CIRCLECI",
    "TRAVIS", "JENKINS_URL", "CODEBUILD_BUILD_ID", "BUILDKITE", "TEAMCITY_VERSION", "APPVEYOR",
    "BITBUCKET_BUILD_NUMBER", "ORT_DISABLE_TELEMETRY",
)  # fmt: skip


def _left_behind(code: str, home: Path) -> list[str]:
    """Files under `home`/.cache after `code` ran in a fresh interpreter whose home is `home`
    (the test fails when it fails)."""
    env = {k: v for k, v in os.environ.items() if k not in _QUIETING and k != "XDG_CACHE_HOME"}
    env["HOME"] = str(home)
    home.mkdir()
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return sorted(str(p.relative_to(home)) for p in (home / ".cache").rglob("*") if p.is_file())


def test_loading_a_model_writes_no_telemetry(tmp_path: Path, model_cache: Path) -> None:
    spec = MINILM_L6_INT8_PKG
    funes = _left_behind(
        "import os\n"
        "from pathlib import Path\n"
        "from funes.inference import MINILM_L6_INT8_PKG, load_embedder\n"
        f"embedder = load_embedder(MINILM_L6_INT8_PKG, cache_dir=Path({str(model_cache)!r}))\n"
        "assert embedder.embed(['pool size']).shape == (1, 384)\n"
        "assert embedder.embed_query('why did the parser break').shape == (384,)\n"
        "assert os.environ['ORT_DISABLE_TELEMETRY'] == '1'\n",
        tmp_path / "funes",
    )
    assert funes == []
    # the same onnxruntime loading the same file without funes: what the test guards against
    alone = _left_behind(
        "import onnxruntime as ort\n"
        f"ort.InferenceSession({str(resolve_file(spec, spec.onnx))!r}, "
        "providers=['CPUExecutionProvider'])\n",
        tmp_path / "alone",
    )
    assert any("Microsoft" in p for p in alone), (
        "onnxruntime wrote nothing: the test proves nothing"
    )


def test_the_test_harness_writes_no_telemetry(tmp_path: Path) -> None:
    """pytest run as the README says (one file, its header printed) imports onnxruntime only
    through funes: its report header used to import it first, into the user's real home."""
    tests = Path(__file__).resolve().parents[1]
    left = _left_behind(
        "import sys, pytest\n"
        f"sys.exit(pytest.main(['--collect-only', '-p', 'no:cacheprovider', {str(tests / 'inference' / 'test_telemetry.py')!r}]))\n",
        tmp_path / "user",
    )
    assert left == []
