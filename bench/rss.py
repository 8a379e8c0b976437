"""Peak RSS of indexing a history of N chunks (issue 15: flat with history size).

    python -m bench.rss [--sizes 10000 300000] [--vectors 2000]

A synthetic Claude Code history (`write_history`: sessions of 20 turns in Claude Code's record
shapes, prose, tool calls and tool output in the dev set's proportions, words drawn from the
dev set) is indexed in a fresh process by funes' write path (`funes.ingest.index` over the
discovered Claude Code source, no time budget) with the current embedder loaded; then
`--vectors` owed vectors are embedded (the model's memory does not depend on the history, so
embedding all 300k would only take hours). The child prints its VmHWM (peak resident
set, the model's sessions included) next to the chunks it stored. Flat means the 300k figure
stays within a few per cent of the 10k one.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.machine import peak_rss_mb

TURNS_PER_SESSION = 20
# one turn's blocks: (record role, kind); about the dev set's mix of chunk kinds
PATTERN = (
    ("user", "text"),
    ("assistant", "thinking"),
    ("assistant", "text"),
    ("assistant", "tool_use"),
    ("user", "tool_result"),
)


def _words(devset: Path) -> list[str]:
    words: list[str] = []
    with (devset / "sessions.jsonl").open() as f:
        for line in f:
            for turn in json.loads(line).get("turns", []):
                for block in turn.get("blocks", []):
                    words.extend(str(block.get("text", "")).split())
    return [w for w in words if w.isprintable()] or ["word"]


def write_history(home: Path, chunks: int, devset: Path, *, seed: int = 15) -> int:
    """Write Claude Code sessions under `home/.claude/projects/` until about `chunks` blocks
    (each short enough to be one chunk); returns the number of blocks written."""
    rng = random.Random(seed)
    words = _words(devset)
    project = home / ".claude" / "projects" / "-home-dev-synthetic"
    project.mkdir(parents=True, exist_ok=True)
    written = 0
    session = 0
    while written < chunks:
        sid = f"00000000-0000-4000-8000-{session:012d}"
        lines = []
        parent: str | None = None
        for turn in range(TURNS_PER_SESSION):
            role, kind = PATTERN[turn % len(PATTERN)]
            text = " ".join(rng.choices(words, k=rng.randint(12, 140)))
            uuid = f"{session:08x}-0000-4000-8000-{turn:012d}"
            if kind == "text":
                content: Any = text if role == "user" else [{"type": "text", "text": text}]
            elif kind == "thinking":
                content = [{"type": "thinking", "thinking": text, "signature": "x"}]
            elif kind == "tool_use":
                content = [
                    {
                        "type": "tool_use",
                        "id": f"toolu_{session}_{turn}",
                        "name": "Bash",
                        "input": {"command": text[:200]},
                    }
                ]
            else:
                content = [
                    {
                        "type": "tool_result",
                        "tool_use_id": f"toolu_{session}_{turn - 1}",
                        "content": text,
                    }
                ]
            day = 1 + session % 28
            lines.append(
                json.dumps(
                    {
                        "parentUuid": parent,
                        "isSidechain": False,
                        "userType": "external",
                        "cwd": "/home/dev/synthetic",
                        "sessionId": sid,
                        "version": "2.1.197",
                        "gitBranch": "main",
                        "type": role,
                        "message": {"role": role, "content": content},
                        "uuid": uuid,
                        "timestamp": f"2025-03-{day:02d}T10:{turn:02d}:00.000Z",
                    }
                )
            )
            parent = uuid
            written += 1
        (project / f"{sid}.jsonl").write_text("\n".join(lines) + "\n")
        session += 1
    return written


def child(home: Path, funes_home: Path, vectors: int) -> dict[str, Any]:
    """Index the history under `home` into a fresh memory; the process's peak RSS."""
    from dataclasses import replace

    from funes.ingest import IndexJob, backfill_vectors, index
    from funes.memory import Runtime
    from funes.redact import default_scanner
    from funes.settings import INDEX
    from funes.store import Store
    from funes.traces import AgentHomes, discover

    rt = Runtime.resolve({**os.environ, "HOME": str(home), "FUNES_HOME": str(funes_home)})
    store = Store.open(rt.paths.ensure().memory_db)
    spec = rt.embedder_spec_for(None)
    embedder = rt.embedder(spec)
    embedder.embed(["warm up: the model is loaded before the history is read"])
    store.stamp_model(embedder.model_id, embedder.dim)
    t0 = time.perf_counter()
    report = index(
        discover(AgentHomes.resolve({"HOME": str(home)})),
        IndexJob(store, None, default_scanner(), params=replace(INDEX, budget_s=0)),
    )
    lexical_s = time.perf_counter() - t0
    done = [0]

    def count(n: int, _total: int) -> None:
        done[0] = n

    t1 = time.perf_counter()
    backfill_vectors(store, embedder, progress=count, stop=lambda: done[0] >= vectors)
    embed_s = time.perf_counter() - t1
    out = {
        "chunks": report.chunks_written,
        "units": report.units_indexed,
        "lexical_s": round(lexical_s, 1),
        "vectors": done[0],
        "embed_s": round(embed_s, 1),
        "owed_after": store.owed_total(),
        "peak_rss_mb": round(peak_rss_mb(), 1),
    }
    store.close()
    return out


def measure(sizes: list[int], devset: Path, *, vectors: int = 2000) -> dict[str, Any]:
    """Peak RSS of indexing each history size, each in a fresh child process."""
    out: dict[str, Any] = {"vectors_embedded": vectors}
    for size in sizes:
        with tempfile.TemporaryDirectory(prefix="funes-rss-") as tmp:
            home = Path(tmp) / "home"
            blocks = write_history(home, size, devset)
            done = subprocess.run(
                [sys.executable, "-m", "bench.rss", "--child", str(home), str(Path(tmp) / "f")]
                + ["--vectors", str(vectors)],
                capture_output=True,
                text=True,
                check=False,
            )
            if done.returncode != 0:
                raise RuntimeError(f"rss child failed: {done.stderr[-2000:]}")
            result = json.loads(done.stdout.strip().splitlines()[-1])
            result["blocks_written"] = blocks
            out[str(size)] = result
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.rss", description=__doc__)
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 300_000])
    parser.add_argument("--vectors", type=int, default=2000)
    parser.add_argument("--devset", default=None)
    parser.add_argument("--child", nargs=2, metavar=("HOME", "FUNES_HOME"))
    args = parser.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    if args.child:
        print(json.dumps(child(Path(args.child[0]), Path(args.child[1]), args.vectors)))
        return 0
    from bench.devset import resolve_devset

    print(json.dumps(measure(args.sizes, resolve_devset(args.devset), vectors=args.vectors)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
