"""The dynamic-int8 graph of an embedder, built once on this machine and cached.

Both embedders ship as float32 compute: bge-small's ONNX graph is float32, and the offline
MiniLM is int8 only in its stored weights (each weight is `Cast(int8) * scale`, which
onnxruntime folds back to float32 at load). A *dynamic* int8 graph runs its matrix products
in int8 (MatMulInteger): weights quantized once here, activations quantized per run.

Built from the verified source graph in four steps, all deterministic (same bytes for the
same source, onnxruntime and onnx versions):
1. onnxruntime's basic graph optimizations (constant folding: the offline MiniLM's
   `Cast * scale` weights become float32 initializers; standard ONNX ops only), saved;
2. each layer's attention rewritten as one MultiHeadAttention (without a key padding mask:
   the graph runs one unpadded text per call) and each GELU as one Gelu (funes.inference.fusion;
   checked against the float graph, skipped when it does not match);
3. `onnxruntime.quantization.quantize_dynamic`: int8 weights per output channel with a 7-bit
   range (`reduce_range`), uint8 activations. The 7-bit range keeps the int16 sums of AVX2's
   u8×s8 kernel from saturating, so the integer products are exact on AVX2 and VNNI machines
   alike; per-channel scales keep the vectors within cosine ~0.99 of the float32 graph's
   (dev set, 40 texts: mean 0.991, min 0.985; per-tensor scales: mean 0.954);
4. onnxruntime's extended graph optimizations (its fusions: BiasGelu, MatMulIntegerToFloat,
   DynamicQuantizeMatMul, …) applied once and saved, so a session does not redo them each
   time it is built: every process that embeds (a recall, the spool worker draining one
   turn) builds one. Session build 105–220 → 40–125 ms on the 2-core bench machine under
   load; the outputs are the same bits (a session applies the same fusions at load; tested).
   Extended, not "all": the saved graph holds no layout specific to this CPU. It does hold
   onnxruntime's own operators, so a graph built by another onnxruntime version is rebuilt.
   Without `DISABLED_OPTIMIZERS` (here and in every session that runs the graph):
   onnxruntime 1.32's SkipLayerNormalization kernel took ~230 µs for one 128 × 384 input
   where Add + LayerNormalization take ~25; it was 22% of an embedding.
5. saved as ONNX external data: the graph's nodes in the `.onnx` file (~50 KB), its weights
   (~23 MB) in a `.data` file beside it, which onnxruntime maps into memory at load instead
   of parsing them out of one protobuf and copying them. A query session (the one a cold
   recall's first byte waits on) builds in 8–11 ms instead of 45–56 (fresh processes, 2-core
   bench machine), each process holds ~33 MB less, and the outputs are the same bits (dev
   set, 828 texts, with and without weight prepacking; tested).

Measured on the dev set's prose and tool output (555 texts, 2 workers, interleaved, 2-core
bench machine): steps 2 and 4's SkipLayerNormalization left out embed 1.48× as fast as the
previous build (dynamic-int8-pc7-ext); the vectors moved by cosine 0.999 on average (min 0.995),
and are as close to the float32 graph's as before (mean 0.991, min 0.980).

The result is cached as `<name>-<source sha256[:16]>-<QUANTIZATION>.onnx` and `.data` with a
manifest (`.json`: the source's, the graph's and the weights' sha256, the versions that built
it); both files are re-hashed against the manifest before use (funes.inference.files.verify
remembers a verified file by size and mtime). A missing, partial or altered graph is rebuilt.
Needs the `onnx` package (onnxruntime.quantization reads and writes graphs with it);
imported only while building.
"""

from __future__ import annotations

import errno
import json
import os
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from funes.errors import ModelUnavailable
from funes.inference.spec import ModelSpec
from funes.paths import ensure_private_dir

# Names the graph recipe; part of the cache key. Change it whenever the build changes.
QUANTIZATION = "dynamic-int8-pc7-mha-unmasked-ext-mapped"
# Graph optimizations left out when the int8 graph is built and whenever a session runs it
# (a session re-applies its fusions at load): see step 4 above.
DISABLED_OPTIMIZERS = ("SkipLayerNormFusion",)


def sha256_file(path: Path) -> str:
    import hashlib  # building only: finding a built graph (a cold recall's child) hashes nothing

    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def graph_path(spec: ModelSpec, cache_dir: Path) -> Path:
    """Where the int8 graph of `spec` lives in `cache_dir` (it may not exist yet)."""
    return cache_dir / f"{spec.name}-{spec.onnx.sha256[:16]}-{QUANTIZATION}.onnx"


def weights_path(graph: Path) -> Path:
    """The file beside `graph` that holds its weights (step 5 of the build; the graph names
    it by this file name, which onnxruntime resolves in the graph's folder)."""
    return graph.with_suffix(".data")


# (graph path, graph sha256, weights sha256) as a built graph's manifest records them
CachedGraph = tuple[Path, str, str]


def cached_graph(
    spec: ModelSpec, cache_dir: Path, runtime_version: str | None = None
) -> CachedGraph | None:
    """(path, sha256 of the graph, sha256 of its weights file) as the manifest of an already
    built graph records them, else None; None too when `runtime_version` is given and another
    onnxruntime version built it (its saved fusions are that version's operators). The files'
    hashes are not checked here (`verify_graph` does)."""
    path = graph_path(spec, cache_dir)
    try:
        manifest = json.loads(path.with_suffix(".json").read_text())
    except (OSError, ValueError):
        return None
    if (
        not isinstance(manifest, dict)
        or manifest.get("source_sha256") != spec.onnx.sha256
        or manifest.get("quantization") != QUANTIZATION
        or not isinstance(manifest.get("sha256"), str)
        or not isinstance(manifest.get("weights_sha256"), str)
        or (runtime_version is not None and manifest.get("onnxruntime") != runtime_version)
        or not path.is_file()
        or not weights_path(path).is_file()
    ):
        return None
    return path, str(manifest["sha256"]), str(manifest["weights_sha256"])


def verify_graph(spec: ModelSpec, built: CachedGraph, stamp_dir: Path | None) -> None:
    """Raise ModelUnavailable unless the graph and its weights file hash to what `built`
    (its manifest) records; a file verified before at its size and mtime is not hashed again
    (funes.inference.files.verify, memo in `stamp_dir`). Raises OSError when one cannot be
    read."""
    from funes.inference.files import verify

    path, graph_sha, weights_sha = built
    verify(spec, path, graph_sha, stamp_dir)
    verify(spec, weights_path(path), weights_sha, stamp_dir)


def build_graph(spec: ModelSpec, source: Path, cache_dir: Path) -> CachedGraph:
    """Build the int8 graph of `source` (the verified graph of `spec`) into `cache_dir`.

    Returns (path, sha256 of the graph, sha256 of its weights file). Concurrent builders each
    write private temporary files and rename them into place, weights first, manifest last:
    a reader never sees a partial file, and trusts none before the manifest that names both
    (builders write the same bytes); a failed build leaves nothing of itself in `cache_dir`.

    Raises ModelUnavailable when the `onnx` package is missing, the graph cannot be quantized,
    `cache_dir` cannot hold it (not a directory, cannot be created, not writable, no space
    left or over quota: the message names `cache_dir` and the OS's reason), or `cache_dir` or
    `source` has a path that is not UTF-8 (onnxruntime cannot open it).
    """
    if (unopenable := _unopenable(spec, cache_dir, source)) is not None:
        raise unopenable
    from funes.inference.telemetry import keep_off

    keep_off()  # before onnxruntime's first import
    try:
        from onnxruntime.quantization import QuantType, quantize_dynamic
    except ImportError as exc:  # onnx missing: onnxruntime.quantization imports it
        raise ModelUnavailable(
            f"model {spec.name}: cannot build its int8 graph: {exc}",
            hint="pip install onnx (a dependency of funes)",
        ) from exc
    import onnxruntime as ort

    from funes.inference.fusion import fuse

    target = graph_path(spec, cache_dir)
    import tempfile  # building only: a recall that finds the graph cached does not load it

    try:
        ensure_private_dir(cache_dir)
        with tempfile.TemporaryDirectory(dir=cache_dir, prefix=".build-") as tmp:
            folded = Path(tmp) / "folded.onnx"
            fused = Path(tmp) / "fused.onnx"
            quantized = Path(tmp) / "int8.onnx"
            optimized = Path(tmp) / "int8-fused.onnx"
            built = Path(tmp) / target.name  # its weights file's name is written into it
            try:
                _optimized(ort, source, folded, ort.GraphOptimizationLevel.ORT_ENABLE_BASIC)
                fuse(str(folded), str(fused))
                with _quiet():
                    quantize_dynamic(
                        fused,
                        quantized,
                        per_channel=True,
                        reduce_range=True,
                        weight_type=QuantType.QInt8,
                    )
                _optimized(
                    ort,
                    quantized,
                    optimized,
                    ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED,
                    DISABLED_OPTIMIZERS,
                )
                _split_weights(optimized, built)
            except Exception as exc:  # onnxruntime and onnx raise their own types
                full = _write_failure(Path(tmp))  # their own types hide a full disk
                if full is not None:
                    raise _cache_unusable(spec, cache_dir, full) from exc
                raise ModelUnavailable(
                    f"model {spec.name}: cannot build its int8 graph: {type(exc).__name__}: {exc}",
                    reason=f"model {spec.name}: cannot build its int8 graph",
                ) from exc
            sha, weights_sha = sha256_file(built), sha256_file(weights_path(built))
            for done in (weights_path(built), built):
                os.chmod(done, 0o600)
                os.replace(done, cache_dir / done.name)
        _write_manifest(spec, target, sha, weights_sha, _versions())
    except OSError as exc:  # the cache itself: the build steps' own errors are raised above
        raise _cache_unusable(spec, cache_dir, exc) from exc
    return target, sha, weights_sha


def _split_weights(graph: Path, target: Path) -> None:
    """Step 5: save `graph` as `target`, its weights (every tensor of 1 KiB or more) in one
    `weights_path(target)` file beside it, in the graph's order."""
    import onnx
    from onnx.external_data_helper import convert_model_to_external_data

    model = onnx.load(str(graph))
    convert_model_to_external_data(
        model, all_tensors_to_one_file=True, location=weights_path(target).name
    )
    onnx.save_model(model, str(target))


# What `_write_failure` writes into a failed build's folder to ask the OS why it failed:
# a disk that cannot take 1 MiB more cannot take the graph either (the offline MiniLM's int8
# graph is 23 MB, its build's temporary files ~260 MB at their peak).
_PROBE_BYTES = 1 << 20


def _write_failure(folder: Path) -> OSError | None:
    """The OSError that writing `_PROBE_BYTES` into `folder` (and syncing them) raises now,
    or None when they can be written. Called while a failed build's temporary files are
    still there: onnxruntime reports a write that ran out of space as `INVALID_PROTOBUF :
    Protobuf serialization failed`, and the quantizer a graph cut short by it as onnx's
    `DecodeError`; the probe recovers the OS's reason (ENOSPC, EDQUOT)."""
    probe = folder / "write-probe"
    try:
        with probe.open("wb") as f:
            f.write(bytes(_PROBE_BYTES))
            f.flush()
            os.fsync(f.fileno())
    except OSError as exc:
        return OSError(exc.errno, exc.strerror)  # its file vanishes with the build folder
    finally:
        probe.unlink(missing_ok=True)
    return None


def _cache_unusable(spec: ModelSpec, cache_dir: Path, exc: OSError) -> ModelUnavailable:
    """The error for a model cache that cannot hold the int8 graph of `spec`: something other
    than a directory is there, it cannot be created, this user cannot write it, its disk
    is full (or the user's quota on it), or a directory sits where a file of the graph goes
    (EISDIR: the hint names it)."""
    reason = exc.strerror or str(exc)
    # os.replace's error names the temporary source first, the file in the cache second
    where = exc.filename2 if exc.filename2 is not None else exc.filename
    if where is not None and os.fsdecode(where) != str(cache_dir):
        reason += f" ({os.fsdecode(where)})"
    if exc.errno == errno.EISDIR and where is not None:
        hint = (
            f"remove {os.fsdecode(where)}: funes writes a file of the graph there (the "
            "next `funes index` or `funes recall` builds it)"
        )
    elif exc.errno in (errno.ENOSPC, errno.EDQUOT):
        hint = (
            "free space on that disk (building the graph takes a few hundred MB for a while; "
            "it then keeps tens of MB) or point FUNES_MODEL_CACHE at a directory on a disk "
            "with room"
        )
    else:
        hint = (
            "point FUNES_MODEL_CACHE at a directory this user can write (funes builds the "
            "graph there once; default `<data>/models`)"
        )
    return ModelUnavailable(
        f"model {spec.name}: the model cache {cache_dir} cannot hold its int8 graph: {reason}",
        hint=hint,
        reason=f"model {spec.name}: the model cache {cache_dir} (FUNES_MODEL_CACHE) cannot "
        "hold its int8 graph",
    )


def _unopenable(
    spec: ModelSpec, cache_dir: Path, source: Path | None = None
) -> ModelUnavailable | None:
    """The error for a model cache (or a source graph, `source`) whose path is not UTF-8:
    onnxruntime takes paths as UTF-8 text only (its bindings refuse a str holding Python's
    surrogate escapes for other bytes), so it can neither build the graph there nor load it.
    None when both paths are UTF-8. The paths are shown with their odd bytes as `\\xNN`."""
    for path, where in ((cache_dir, "cache"), (source, "source")):
        if path is None:
            continue
        try:
            str(path).encode("utf-8")
        except UnicodeEncodeError:
            shown = os.fsencode(path).decode("utf-8", "backslashreplace")
            if where == "source":
                return ModelUnavailable(
                    f"model {spec.name}: cannot build its int8 graph: onnxruntime cannot open "
                    f"{shown}: its path is not UTF-8",
                    hint="install the model's package in a folder whose path is UTF-8 "
                    "(FUNES_MODEL_PATH; README: Models)",
                    reason=f"model {spec.name}: cannot build its int8 graph",
                )
            return ModelUnavailable(
                f"model {spec.name}: the model cache {shown} cannot hold its int8 graph: its "
                "path is not UTF-8, and onnxruntime opens UTF-8 paths only",
                hint="point FUNES_MODEL_CACHE at a directory whose path is UTF-8 (funes builds "
                "the graph there once; default `<data>/models`, under FUNES_HOME)",
                reason=f"model {spec.name}: the model cache (FUNES_MODEL_CACHE) cannot hold its "
                "int8 graph",
            )
    return None


def cache_problem(
    spec: ModelSpec, cache_dir: Path, *, stamp_dir: Path | None = None
) -> ModelUnavailable | None:
    """The error `build_graph` would raise for the int8 graph of `spec`, judged without
    writing anything: the `onnx` package it builds with is not installed, something other
    than a directory is at `cache_dir` or above it, this user cannot create or write it, or
    a directory is where a file of the graph goes.
    None when the graph is built there already and matches its manifest's sha256 (hashed
    only when no load verified it at its size and mtime: `stamp_dir`), or it can be built.
    A graph that fails that check is rebuilt by the load, so it needs what a build needs."""
    if (unopenable := _unopenable(spec, cache_dir)) is not None:
        return unopenable
    try:
        if (built := cached_graph(spec, cache_dir)) is not None:
            stamps = stamp_dir if stamp_dir is not None and stamp_dir.is_dir() else None
            try:
                verify_graph(spec, built, stamps)
                return None
            except (ModelUnavailable, OSError):
                pass  # altered or unreadable: the load builds it again
        graph = graph_path(spec, cache_dir)
        for path in (graph, weights_path(graph), graph.with_suffix(".json")):
            if path.is_dir():  # the build's rename onto it fails so
                raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), str(path))
        probe, child = cache_dir, cache_dir  # child: what a build creates (or writes) first
        while not probe.exists():
            if probe.parent == probe:
                break
            probe, child = probe.parent, probe
        if not probe.is_dir():
            raise NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR), str(cache_dir))
        if not os.access(probe, os.W_OK | os.X_OK):
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(child))
    except OSError as exc:  # also a folder above it that this user cannot search
        return _cache_unusable(spec, cache_dir, exc)
    import importlib.util

    if importlib.util.find_spec("onnx") is None:  # what build_graph's import of it raises
        return ModelUnavailable(
            f"model {spec.name}: cannot build its int8 graph: No module named 'onnx'",
            hint="pip install onnx (a dependency of funes)",
        )
    return None


def _optimized(
    ort: Any, source: Path, target: Path, level: Any, disabled: tuple[str, ...] = ()
) -> None:
    """Save `source` after onnxruntime's graph optimizations of `level` (less `disabled`) as
    `target`."""
    options = ort.SessionOptions()
    options.graph_optimization_level = level
    options.optimized_model_filepath = str(target)
    options.log_severity_level = 3
    ort.InferenceSession(
        str(source),
        options,
        providers=["CPUExecutionProvider"],
        disabled_optimizers=list(disabled),
    )


def _write_manifest(
    spec: ModelSpec, target: Path, sha: str, weights_sha: str, versions: dict[str, str]
) -> None:
    manifest = {
        "source": f"{spec.model_id}:{spec.onnx.path}",
        "source_sha256": spec.onnx.sha256,
        "quantization": QUANTIZATION,
        "sha256": sha,
        "weights_sha256": weights_sha,
        **versions,
    }
    import tempfile

    fd, name = tempfile.mkstemp(dir=target.parent, prefix=".manifest-")
    try:
        with os.fdopen(fd, "w") as f:
            json.dump(manifest, f, indent=1)
        os.replace(name, target.with_suffix(".json"))  # mkstemp made it 0600
    except BaseException:
        Path(name).unlink(missing_ok=True)  # a failed build leaves nothing of itself
        raise


def _versions() -> dict[str, str]:
    import onnx
    import onnxruntime

    return {"onnxruntime": onnxruntime.__version__, "onnx": onnx.__version__}


@contextmanager
def _quiet() -> Any:
    """quantize_dynamic logs advice on the root logger ("consider pre-processing"), which
    funes' CLI would print on stderr; nothing of it concerns a user. (logging is imported
    here: finding a built graph is on a cold recall's path, building one is not.)"""
    import logging

    previous = logging.root.manager.disable
    logging.disable(logging.WARNING)
    try:
        yield
    finally:
        logging.disable(previous)
