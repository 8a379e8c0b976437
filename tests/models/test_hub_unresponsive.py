"""A Hub endpoint that takes connections but does not answer, or stops answering mid-transfer,
fails a model download within a bound, with an error naming the endpoint and what to check;
a slow transfer that keeps delivering bytes is not cut short. Driven through the real
huggingface_hub client against the loopback stand-in's faults (tests/hubfake: `silence`,
`pace`, `cut_after`), in child processes (huggingface_hub reads HF_ENDPOINT at import).

Before the fix a silent endpoint held one load ~390 s (huggingface_hub retried the metadata
request five times with 60 s timeouts and 23 s of backoff), and a transfer that stalled
escaped as httpx2.ReadTimeout instead of HubUnavailable.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from hubfake import HubFake, Token
from support.claude import write_claude_session
from support.hub import machine

pytestmark = pytest.mark.hub

REPO = "acme/tiny-model"
FILE = "weights.bin"
BODY = hashlib.sha256(b"funes").digest() * 1536  # 48 KiB, fixed bytes
METADATA_S = 2.0  # funes.hf.METADATA_TIMEOUT_S in the child
# What else may pass before the answer is given up on: huggingface_hub's agent-registry
# request (3 s, once a process) and a loaded machine's slack.
SLACK_S = 3.0 + 5.0

SCRIPT = """
import json, sys, time
import funes.hf as hf
from funes.errors import HubUnavailable, ModelUnavailable
from funes.inference import ModelFile, ModelSpec, Pooling
from funes.inference.files import resolve_file
hf.METADATA_TIMEOUT_S = float(sys.argv[3])
started = time.monotonic()
try:
    if sys.argv[1] == "model":
        spec = ModelSpec(name="acme", model_id="acme@x", repo_id=sys.argv[2], revision="a" * 40,
                         onnx=ModelFile("onnx/model.onnx", "0" * 64),
                         tokenizer=ModelFile("tokenizer.json", "0" * 64),
                         max_tokens=128, dim=384, pooling=Pooling.MEAN)
        resolve_file(spec, spec.tokenizer)
        out = {}
    else:
        path = hf.download_file(sys.argv[2], sys.argv[1], revision=sys.argv[4])
        out = {"path": str(path), "cached": str(hf.cached_file(sys.argv[2], sys.argv[1],
                                                              revision=sys.argv[4]))}
except ModelUnavailable as exc:
    out = {"error": exc.message, "hint": exc.hint, "type": "ModelUnavailable"}
except HubUnavailable as exc:
    out = {"error": str(exc), "type": "HubUnavailable"}
out["s"] = time.monotonic() - started
print(json.dumps(out))
"""


@pytest.fixture
def hub(tmp_path: Path) -> Iterator[tuple[HubFake, str]]:
    """The stand-in serving one public model repo holding FILE; yields (hub, commit)."""
    fake = HubFake(tmp_path / "hub", {"t": Token("acme", "write", ("acme",))})
    fake.state.create("model", REPO, private=False)
    commit = fake.state.commit("model", REPO, "main", {FILE: BODY}, set(), "v1", None)
    with fake:
        yield fake, commit


def _child(
    hub: HubFake, hf_home: Path, *args: str, timeout_s: float = 60, **env: str
) -> dict[str, object]:
    """Run SCRIPT with `args` against `hub`; its JSON result. A child still waiting after
    `timeout_s` fails the test (it is the hang this file is about)."""
    environ = {k: v for k, v in os.environ.items() if not k.startswith("HF_")}
    environ.update(
        HF_ENDPOINT=hub.url,
        HF_HOME=str(hf_home),
        HF_HUB_OFFLINE="0",
        HF_HUB_DISABLE_TELEMETRY="1",
        HF_HUB_DISABLE_XET="1",
        **env,
    )
    out = subprocess.run(
        [sys.executable, "-c", SCRIPT, *args],
        env=environ,
        capture_output=True,
        text=True,
        timeout=timeout_s,
    )
    assert out.returncode == 0, out.stderr
    result: dict[str, object] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def test_a_hub_that_never_answers_fails_the_load_within_the_bound(
    hub: tuple[HubFake, str], tmp_path: Path
) -> None:
    fake, _ = hub
    fake.silence()
    result = _child(fake, tmp_path / "hf", "model", REPO, str(METADATA_S))
    assert result["type"] == "ModelUnavailable", result
    assert float(result["s"]) < METADATA_S + SLACK_S, result  # type: ignore[arg-type]
    error = str(result["error"])
    assert f"{fake.url} (HF_ENDPOINT) took the connection but did not answer within 2 s" in error
    assert "HTTPS_PROXY" in error and "HF_ENDPOINT" in error
    assert result["hint"]
    assert [status for _, _, status in fake.log if status != 0] == []  # nothing was answered
    heads = [path for method, path, _ in fake.log if method == "HEAD"]
    assert len(heads) == 1  # one metadata request, no retries


def test_funes_index_against_a_silent_hub_says_so_within_seconds(
    hub: tuple[HubFake, str], tmp_path: Path
) -> None:
    """The user's view: `funes index` with a model to download and a Hub that swallows
    requests stores the chunks and ends with the error, not a six-minute wait."""
    fake, _ = hub
    fake.silence()
    env = machine(
        tmp_path,
        "a",
        fake,
        token=None,
        FUNES_EMBEDDER="bge-small-en-v1.5",
        FUNES_RERANKER="none",
        HF_HUB_ETAG_TIMEOUT="2",  # the user's setting replaces METADATA_TIMEOUT_S
    )
    session = write_claude_session(tmp_path / "claude")
    started = time.monotonic()
    out = subprocess.run(
        [sys.executable, "-m", "funes", "index", str(session.path)],
        env=env,
        capture_output=True,
        text=True,
        timeout=90,
        stdin=subprocess.DEVNULL,
    )
    took_s = time.monotonic() - started
    assert out.returncode == 1, out.stderr
    assert "indexed 7 new chunks" in out.stderr  # the chunks are stored all the same
    assert "model bge-small-en-v1.5 is not cached and cannot be downloaded" in out.stderr
    assert f"{fake.url} (HF_ENDPOINT) took the connection but did not answer within 2 s" in (
        out.stderr
    )
    assert "hint: " in out.stderr
    assert took_s < 30, took_s


def test_a_slow_but_steady_download_is_not_cut_short(
    hub: tuple[HubFake, str], tmp_path: Path
) -> None:
    fake, commit = hub
    fake.pace(4096, 0.4)  # 12 steps: ~4.4 s, longer than either bound below
    result = _child(fake, tmp_path / "hf", FILE, REPO, "1", commit, HF_HUB_DOWNLOAD_TIMEOUT="2")
    assert "error" not in result, result
    assert float(result["s"]) > 4.0, result  # type: ignore[arg-type]
    assert Path(str(result["path"])).read_bytes() == BODY
    assert result["cached"] == result["path"]


def test_a_transfer_that_stalls_is_refused_leaving_no_file_and_resumes_later(
    hub: tuple[HubFake, str], tmp_path: Path
) -> None:
    fake, commit = hub
    fake.cut_after(8192)  # then the link goes silent: resumes get no answer
    result = _child(fake, tmp_path / "hf", FILE, REPO, "1", commit, HF_HUB_DOWNLOAD_TIMEOUT="1")
    assert result["type"] == "HubUnavailable", result
    assert f"the transfer from {fake.url} (HF_ENDPOINT) stalled" in str(result["error"])
    assert float(result["s"]) < 25, result  # type: ignore[arg-type]  # 6 tries × (1 s + 1 s)
    repo_dir = tmp_path / "hf" / "hub" / "models--acme--tiny-model"
    assert not any((repo_dir / "snapshots").rglob("*.bin"))  # nothing at the cache path
    assert [
        p.name for p in (repo_dir / "blobs").iterdir() if not p.name.endswith(".incomplete")
    ] == []

    fake.stop()  # the link comes back
    fake.cut_after(None)
    fake.silence(False)
    fake.start()
    result = _child(fake, tmp_path / "hf", FILE, REPO, "1", commit)
    assert "error" not in result, result
    assert Path(str(result["path"])).read_bytes() == BODY
