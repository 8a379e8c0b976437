"""`python -m bench [--quick] [--devset DIR] [--out FILE]`: run every measurement, print one
table, write bench/results/latest.json. See bench/README.md for what each figure means."""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent


def main(argv: list[str] | None = None) -> int:
    from funes.inference.telemetry import keep_off

    keep_off()  # before any bench module imports onnxruntime, as in every funes process
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__)
    parser.add_argument(
        "--quick", action="store_true", help="fewer latency repetitions, 20k instead of 100k chunks"
    )
    parser.add_argument(
        "--devset",
        default=None,
        help="dev set directory (default: $FUNES_DEVSET or ../shared/bench/devset)",
    )
    parser.add_argument(
        "--quality-only",
        action="store_true",
        help="recall quality and honest misses only (dev set and LoCoMo), no speed or size",
    )
    parser.add_argument(
        "--locomo",
        default=None,
        help="LoCoMo dev-half directory (default: $FUNES_LOCOMO or ../shared/bench/locomo-dev)",
    )
    parser.add_argument(
        "--out", default=str(REPO / "bench" / "results" / "latest.json"), help="JSON output file"
    )
    args = parser.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")  # the bench never downloads
    # the int8 graph built from the offline model, kept with the bench's other caches
    os.environ.setdefault("FUNES_MODEL_CACHE", str(REPO / "bench" / "cache" / "models"))
    from bench.devset import resolve_devset
    from bench.locomo import resolve_locomo
    from bench.run import run_all

    devset = resolve_devset(args.devset)
    if not (devset / "sessions.jsonl").is_file() or not (devset / "questions.jsonl").is_file():
        print(f"bench: no dev set at {devset} (set FUNES_DEVSET or pass --devset)", file=sys.stderr)
        return 2
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="funes-bench-") as tmp:
        results = run_all(
            devset,
            Path(tmp),
            quick=args.quick,
            repo=REPO,
            locomo=resolve_locomo(args.locomo),
            quality_only=args.quality_only,
        )
    results["elapsed_s"] = round(time.perf_counter() - started, 1)
    from bench.report import print_table

    print_table(results)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(results, indent=2, sort_keys=False, default=_json_default) + "\n")
    print(f"written: {out}  ({results['elapsed_s']} s)")
    return 0


def _json_default(value: Any) -> Any:
    if isinstance(value, float) and value != value:
        return None
    return str(value)


if __name__ == "__main__":
    raise SystemExit(main())
