"""Recall latency from a warm remote memory vs the local memory it was pushed from.

Target (issue 6): a warm remote recall within 1.2× of the local one on the same data.

    python -m bench.remote_latency --memory PATH/memory.db [--queries questions.jsonl]
                                   [--repeats 5] [--via dir|hub] [--ttl S [--ttl S …]]

prints one JSON object. `make bench` calls `run_isolated(...)`, which runs this module in a
fresh process (see below) and returns that object. What is timed is
`funes.commands.recall.run_recall` (the path the CLI and MCP tools take), in one process,
after one warm-up call per memory: for `hub` a remote call makes the revision check
(`GET …/refs` against the loopback Hub stand-in in tests/hubfake) when the last check is older
than `ttl` (0: on every call), and the stand-in counts the requests the timed calls made; for
`dir` the check is one listing of the Lance `_versions` folder. Local and remote calls are
interleaved so machine noise hits both alike; medians are compared.

Run it in a fresh process: huggingface_hub reads HF_ENDPOINT when first imported.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parent.parent
TARGET_RATIO = 1.2  # issue 6: warm remote recall p50 ≤ 1.2 × local
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
    from funes.memory import Runtime
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
    queries: Sequence[str] = DEFAULT_QUERIES,
    *,
    via: str = "dir",
    repeats: int = 5,
    ttls: Sequence[float] = (0.0,),
) -> dict[str, Any]:
    """Median recall latency (ms) local vs warm remote over `queries` × `repeats`, per TTL.

    Pushes a copy of `memory_db` once, then for each revision-check TTL in `ttls` (seconds)
    times interleaved local / remote calls. Returns {"via", "pushed", "held_back", "queries",
    "repeats", "runs": [{"ttl_s", "local_ms", "remote_ms", "ratio", "overhead_ms",
    "local_p95_ms", "remote_p95_ms", "remote_calls", "hub_requests"}]}; `hub_requests` (hub
    only, else None) is how many HTTP requests the stand-in received during the timed calls.
    `via` is `dir` (a directory export) or `hub` (the loopback Hub stand-in; needs
    tests/hubfake and a fresh process: RuntimeError when huggingface_hub is already imported).
    """
    with tempfile.TemporaryDirectory(prefix="funes-bench-remote-") as tmp:
        root = Path(tmp)
        if via == "hub":
            if "huggingface_hub" in sys.modules:
                raise RuntimeError(
                    "run the hub variant in a fresh process (HF_ENDPOINT is read at import)"
                )
            sys.path.insert(0, str(REPO_ROOT / "tests"))
            from hubfake import HubFake, Token

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
            target = "bench/memory"
            requests: Callable[[], int] | None = lambda: len(fake.log)  # noqa: E731
        else:
            fake = None
            target = str(root / "export")
            requests = None
        try:
            return _measure(
                memory_db,
                list(queries),
                root,
                target,
                via=via,
                repeats=repeats,
                ttls=list(ttls),
                requests=requests,
            )
        finally:
            if fake is not None:
                fake.stop()


def _p95(xs: list[float]) -> float:
    return sorted(xs)[max(0, int(round(0.95 * len(xs))) - 1)]


def _measure(
    memory_db: Path,
    queries: list[str],
    root: Path,
    target: str,
    *,
    via: str,
    repeats: int,
    ttls: list[float],
    requests: Callable[[], int] | None,
) -> dict[str, Any]:
    from funes.commands.push import PushRequest, run_push
    from funes.commands.recall import RecallRequest, run_recall
    from funes.memory import parse_memory
    from funes.settings import RemoteParams

    writer = _runtime(root / "writer", ttls[0])
    _copy_memory(memory_db, writer.paths.memory_db)
    report = run_push(
        writer, parse_memory(target, writer), PushRequest(create=True, assume_yes=True)
    )
    reader = _runtime(root / "reader", ttls[0])
    local = parse_memory(str(writer.paths.memory_db), reader)
    remote = parse_memory(target, reader)
    for ref in (local, remote):  # warm-up: load models, build the remote cache
        run_recall(reader, ref, RecallRequest(queries[0]))
    runs: list[dict[str, Any]] = []
    for ttl in ttls:
        reader.remote = RemoteParams(revision_ttl_s=ttl)
        run_recall(reader, remote, RecallRequest(queries[0]))  # a fresh check starts each TTL
        local_ms: list[float] = []
        remote_ms: list[float] = []
        sent_before = requests() if requests else 0
        for _ in range(repeats):
            for q in queries:
                local_ms.append(_time_ms(lambda q=q: run_recall(reader, local, RecallRequest(q))))
                remote_ms.append(_time_ms(lambda q=q: run_recall(reader, remote, RecallRequest(q))))
        sent = requests() - sent_before if requests else None
        med_local, med_remote = statistics.median(local_ms), statistics.median(remote_ms)
        runs.append(
            {
                "ttl_s": ttl,
                "local_ms": round(med_local, 2),
                "remote_ms": round(med_remote, 2),
                "ratio": round(med_remote / med_local, 3) if med_local else None,
                "overhead_ms": round(med_remote - med_local, 2),
                "local_p95_ms": round(_p95(local_ms), 2),
                "remote_p95_ms": round(_p95(remote_ms), 2),
                "remote_calls": len(remote_ms),
                "hub_requests": sent,
            }
        )
    return {
        "via": via,
        "pushed": report.pushed,
        "held_back": report.held_back,
        "queries": len(queries),
        "repeats": repeats,
        "runs": runs,
    }


def run_isolated(
    memory_db: Path,
    queries_file: Path | None,
    *,
    via: str,
    repeats: int,
    ttls: Sequence[float],
    timeout_s: float = 1800.0,
) -> dict[str, Any]:
    """`measure_remote_recall` in a fresh `python -m bench.remote_latency` process (the int8
    MiniLM embedder, FUNES_RERANKER=none).

    Returns its JSON object, or {"via", "error"} (the tail of its stderr) when it failed.
    """
    cmd = [sys.executable, "-m", "bench.remote_latency", "--memory", str(memory_db)]
    cmd += ["--via", via, "--repeats", str(repeats)]
    if queries_file is not None:
        cmd += ["--queries", str(queries_file)]
    for ttl in ttls:
        cmd += ["--ttl", str(ttl)]
    # the bench's embedder, no rerank (the cheapest recall: the hardest ratio to meet)
    env = dict(os.environ, FUNES_EMBEDDER="all-minilm-l6-v2-int8", FUNES_RERANKER="none")
    try:
        done = subprocess.run(
            cmd,
            cwd=REPO_ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=timeout_s,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return {"via": via, "error": f"timed out after {timeout_s:.0f} s"}
    lines = done.stdout.strip().splitlines()
    try:
        result: dict[str, Any] = json.loads(lines[-1])
    except (IndexError, ValueError):
        tail = " | ".join(done.stderr.strip().splitlines()[-3:])
        return {"via": via, "error": f"exit {done.returncode}: {tail}"}
    return result


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
        action="append",
        default=None,
        help="revision-check TTL in seconds, repeatable (default: funes' own, "
        "FUNES_REMOTE_TTL_S; 0: every call)",
    )
    args = parser.parse_args(argv)
    if not args.ttl:
        from funes.settings import RemoteParams

        args.ttl = [RemoteParams.resolve().revision_ttl_s]
    result = measure_remote_recall(
        args.memory, _queries(args.queries), via=args.via, repeats=args.repeats, ttls=args.ttl
    )
    print(json.dumps(result))
    ok = all(r["ratio"] is not None and r["ratio"] <= TARGET_RATIO for r in result["runs"])
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
