"""The production model path: pinned revision + sha256, downloaded with huggingface_hub into the
HF cache on first use, then loaded offline. Exercised against the loopback Hub stand-in (the
real Hub is unreachable here) with the offline MiniLM weights published as a model repo."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from hubfake import HubFake, Token

from funes.inference import MINILM_L6_INT8_PKG
from funes.inference.onnx_backend import resolve_file

pytestmark = pytest.mark.models

REPO = "acme/minilm-int8"

SCRIPT = """
import json, sys
from funes.errors import ModelUnavailable
from funes.inference import ModelFile, ModelSpec, Pooling, load_embedder
spec = ModelSpec(name="acme", model_id="acme@x", repo_id=sys.argv[1], revision=sys.argv[2],
                 onnx=ModelFile("onnx/model.onnx", sys.argv[3]), tokenizer=ModelFile("tokenizer.json", sys.argv[4]),
                 max_tokens=128, dim=384, pooling=Pooling.MEAN)
try:
    emb = load_embedder(spec)
except ModelUnavailable as exc:
    print(json.dumps({"error": exc.message, "hint": exc.hint}))
    sys.exit(3)
v = emb.embed(["connection refused by postgres", "the database rejected the connection", "pancakes"])
print(json.dumps({"sims": [float(v[0] @ v[1]), float(v[0] @ v[2])]}))
"""


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@pytest.fixture
def published(tmp_path: Path) -> Iterator[tuple[HubFake, str, bytes, bytes]]:
    onnx = resolve_file(MINILM_L6_INT8_PKG, MINILM_L6_INT8_PKG.onnx).read_bytes()
    tokenizer = resolve_file(MINILM_L6_INT8_PKG, MINILM_L6_INT8_PKG.tokenizer).read_bytes()
    hub = HubFake(tmp_path / "hub", {"t": Token("acme", "write", ("acme",))})
    hub.state.create("model", REPO, private=False)
    first = hub.state.commit(
        "model",
        REPO,
        "main",
        {"onnx/model.onnx": onnx, "tokenizer.json": tokenizer},
        set(),
        "v1",
        None,
    )
    # A later commit changes the tokenizer: a spec pinned to `first` must not see it.
    hub.state.commit(
        "model", REPO, "main", {"tokenizer.json": b'{"broken": true}'}, set(), "v2", first
    )
    with hub:
        yield hub, first, onnx, tokenizer


def _load(
    hub_url: str,
    hf_home: Path,
    revision: str,
    onnx_sha: str,
    tok_sha: str,
    *,
    offline: bool = False,
) -> tuple[int, dict[str, object]]:
    env = dict(
        os.environ,
        HF_ENDPOINT=hub_url,
        HF_HOME=str(hf_home),
        HF_HUB_DISABLE_TELEMETRY="1",
        HF_HUB_DISABLE_XET="1",
    )
    env["HF_HUB_OFFLINE"] = "1" if offline else "0"
    out = subprocess.run(
        [sys.executable, "-c", SCRIPT, REPO, revision, onnx_sha, tok_sha],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    return out.returncode, json.loads(out.stdout.strip().splitlines()[-1])


def test_a_pinned_model_downloads_once_then_loads_offline(
    published: tuple[HubFake, str, bytes, bytes], tmp_path: Path
) -> None:
    hub, first, onnx, tokenizer = published
    code, result = _load(hub.url, tmp_path / "hf", first, _sha(onnx), _sha(tokenizer))
    assert code == 0, result
    related, unrelated = result["sims"]  # type: ignore[misc]
    assert related > 0.4 > unrelated
    blobs = list((tmp_path / "hf" / "hub" / "models--acme--minilm-int8" / "blobs").iterdir())
    assert len(blobs) == 2
    hub.stop()
    code, result = _load(hub.url, tmp_path / "hf", first, _sha(onnx), _sha(tokenizer), offline=True)
    assert code == 0, result


def test_a_file_whose_hash_differs_from_the_pin_is_refused(
    published: tuple[HubFake, str, bytes, bytes], tmp_path: Path
) -> None:
    hub, first, onnx, tokenizer = published
    code, result = _load(hub.url, tmp_path / "hf", first, _sha(onnx), "0" * 64)
    assert code == 3
    assert "tokenizer.json" in str(result["error"]) and "sha256" in str(result["error"])


def test_an_uncached_model_offline_is_unavailable_with_a_hint(
    published: tuple[HubFake, str, bytes, bytes], tmp_path: Path
) -> None:
    hub, first, onnx, tokenizer = published
    code, result = _load(
        hub.url, tmp_path / "empty-hf", first, _sha(onnx), _sha(tokenizer), offline=True
    )
    assert code == 3
    assert "cannot be downloaded" in str(result["error"])
    assert "FUNES_EMBEDDER" in str(result["hint"])


def test_an_unresolvable_hub_fails_the_download_at_once_without_retries(tmp_path: Path) -> None:
    # `.invalid` never resolves (RFC 2606); huggingface_hub alone would retry 5× over ~25 s.
    env = dict(
        os.environ,
        HF_ENDPOINT="http://hub.funes-test.invalid",
        HF_HOME=str(tmp_path / "hf"),
        HF_HUB_OFFLINE="0",
        HF_HUB_DISABLE_TELEMETRY="1",
    )
    out = subprocess.run(
        [sys.executable, "-c", SCRIPT, REPO, "a" * 40, "0" * 64, "0" * 64],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 3, out.stderr
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert "cannot resolve hub.funes-test.invalid" in str(result["error"])
    assert "Retrying" not in out.stderr and "thrown while requesting" not in out.stderr
