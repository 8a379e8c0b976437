"""Recall latency from a warm remote memory vs the local memory it was pushed from.

Target (issue 6): a warm remote recall within 1.2× of the local one on the same data.

    python -m bench.remote_latency --memory PATH/memory.db [--queries questions.jsonl]
                                   [--repeats 5] [--via dir|hub] [--ttl S]

prints one JSON object. `measure_remote_recall(...)` is the entry point for `make bench`.
What is timed is `funes.commands.recall.run_recall` (the path the CLI and MCP tools take),
in one process, after one warm-up call per memory: for `hub` every remote call still makes
the revision check (`GET …/refs` against the loopback Hub stand-in in tests/hubfake) unless
`ttl` > 0; for `dir` it reads the Lance version. Local and remote calls are interleaved so
machine noise hits both alike; medians are compared.

Run it in a fresh process: huggingface_hub reads HF_ENDPOINT when first imported.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_QUERIES = (
    "why did the build fail",
    "how do we deploy to staging",
    "connection refused database",
    "which parser did we choose and why",
    "timeout in the worker",
)


def _copy_memory(src: Path, dest: Path) -> None:
    """A consistent copy of a (possibly WAL-mode) memory file."""
    from funes.store.db import connect

    dest.parent.mkdir(parents=True, exist_ok=True)
    source = connect(src, readonly=True)
    target = connect(dest)
    try:
        source.raw.backup(target.raw)
    finally:
        source.close()
        target.close()


def _runtime(home: Path, ttl_s: float) -> Any:
    from funes.commands.runtime import Runtime
    from funes.paths import Paths
    from funes.settings import RemoteParams

    rt = Runtime.resolve()
    rt.paths = Paths(home / "data", home / "spool", home / "logs")
    rt.offline = False
    rt.remote = RemoteParams(revision_ttl_s=ttl_s)
    return rt


def _time_ms(fn: Any) -> float:
    start = time.perf_counter()
    fn()
    return (time.perf_counter() - start) * 1000.0


def measure_remote_recall(
    memory_db: Path,
    queries: list[str] | tuple[str, ...] = DEFAULT_QUERIES,
    *,
    via: str = "dir",
    repeats: int = 5,
    ttl_s: float = 0.0,
) -> dict[str, Any]:
    """Median recall latency (ms) local vs warm remote over `queries` × `repeats`.

    Returns {"via", "local_ms", "remote_ms", "ratio", "local_p95_ms", "remote_p95_ms",
    "pushed", "held_back", "queries", "repeats", "ttl_s"}. `via` is `dir` (a directory
    export) or `hub` (the loopback Hub stand-in; needs tests/hubfake and a fresh process).
    """
    with tempfile.TemporaryDirectory(prefix="funes-bench-remote-") as tmp:
        root = Path(tmp)
        if via == "hub":
            sys.path.insert(0, str(REPO_ROOT / "tests"))
            from hubfake import HubFake, Token  # type: ignore[import-not-found]

            fake = HubFake(root / "hub", {"bench-token": Token("bench", "write")}).start()
            os.environ.update(
                HF_ENDPOINT=fake.url,
                HF_TOKEN="bench-token",
                HF_HOME=str(root / "hf"),
                HF_HUB_DISABLE_TELEMETRY="1",
                HF_HUB_DISABLE_PROGRESS_BARS="1",
            )
            os.environ.pop("HF_HUB_OFFLINE", None)
            os.environ.pop("HF_HUB_CACHE", None)
            if "huggingface_hub" in sys.modules:
                raise RuntimeError(
                    "run the hub variant in a fresh process (HF_ENDPOINT is read at import)"
                )
            target = "bench/memory"
        else:
            fake = None
            target = str(root / "export")
        try:
            return _measure(
                memory_db, list(queries), root, target, via=via, repeats=repeats, ttl_s=ttl_s
            )
        finally:
            if fake is not None:
                fake.stop()


def _measure(
    memory_db: Path,
    queries: list[str],
    root: Path,
    target: str,
    *,
    via: str,
    repeats: int,
    ttl_s: float,
) -> dict[str, Any]:
    from funes.commands.memory import parse_memory
    from funes.commands.push import PushRequest, run_push
    from funes.commands.recall import RecallRequest, run_recall

    writer = _runtime(root / "writer", ttl_s)
    _copy_memory(memory_db, writer.paths.memory_db)
    report = run_push(
        writer, parse_memory(target, writer), PushRequest(create=True, assume_yes=True)
    )
    reader = _runtime(root / "reader", ttl_s)
    local = parse_memory(str(writer.paths.memory_db), reader)
    remote = parse_memory(target, reader)
    for ref in (local, remote):  # warm-up: load models, build the remote cache
        run_recall(reader, ref, RecallRequest(queries[0]))
    local_ms: list[float] = []
    remote_ms: list[float] = []
    for _ in range(repeats):
        for q in queries:
            local_ms.append(_time_ms(lambda q=q: run_recall(reader, local, RecallRequest(q))))
            remote_ms.append(_time_ms(lambda q=q: run_recall(reader, remote, RecallRequest(q))))
    med_local, med_remote = statistics.median(local_ms), statistics.median(remote_ms)

    def p95(xs: list[float]) -> float:
        return sorted(xs)[max(0, int(round(0.95 * len(xs))) - 1)]

    return {
        "via": via,
        "local_ms": round(med_local, 2),
        "remote_ms": round(med_remote, 2),
        "ratio": round(med_remote / med_local, 3) if med_local else None,
        "local_p95_ms": round(p95(local_ms), 2),
        "remote_p95_ms": round(p95(remote_ms), 2),
        "pushed": report.pushed,
        "held_back": report.held_back,
        "queries": len(queries),
        "repeats": repeats,
        "ttl_s": ttl_s,
    }


def _queries(path: Path | None) -> list[str]:
    if path is None:
        return list(DEFAULT_QUERIES)
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        line = line.strip()
        if not line:
            continue
        out.append(json.loads(line)["question"] if line.startswith("{") else line)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.remote_latency", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--memory", type=Path, required=True, help="a funes memory (SQLite file)")
    parser.add_argument(
        "--queries", type=Path, default=None, help="questions.jsonl or one query per line"
    )
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--via", choices=["dir", "hub"], default="dir")
    parser.add_argument(
        "--ttl",
        type=float,
        default=None,
        help="revision-check TTL in seconds (default: funes' own, FUNES_REMOTE_TTL_S; 0: every call)",
    )
    args = parser.parse_args(argv)
    if args.ttl is None:
        from funes.settings import RemoteParams

        args.ttl = RemoteParams.resolve().revision_ttl_s
    result = measure_remote_recall(
        args.memory, _queries(args.queries), via=args.via, repeats=args.repeats, ttl_s=args.ttl
    )
    print(json.dumps(result))
    return 0 if result["ratio"] is not None and result["ratio"] <= 1.2 else 1


if __name__ == "__main__":
    sys.exit(main())
