"""Redaction: throughput of default_scanner() on a synthetic 5 MB transcript-like text, and
detection quality on the test corpus (tests/secrets/secret_corpus.py: fake secret shapes that
must be caught, look-alikes that must not be flagged — target 0 false positives), the field and
held-out corpora through a real index and push (`field_quality`, `heldout_quality`), and the
publish gate's hold-backs on realistic text with no secret (`gate_false_positives`: the coding
dev set, LoCoMo dev, generated technical prose). `python -m bench.secrets` prints them all."""

from __future__ import annotations

import random
import sys
import time
from pathlib import Path
from typing import Any

from funes.redact import default_scanner, redact

SECRET_TESTS = Path(__file__).resolve().parent.parent / "tests" / "secrets"

_LINES = (
    "Running cargo build --release in /home/dev/src/quarry",
    "error[E0432]: unresolved import `clap::Parser`",
    "  --> src/main.rs:3:5",
    'Traceback (most recent call last):\n  File "/app/ledger/tasks.py", line 88, in send_invoice',
    'psycopg.OperationalError: connection to server at "127.0.0.1", port 6432 failed: Connection refused',
    "test result: ok. 148 passed; 0 failed; 2 ignored; finished in 3.41s",
    '{"station": "44025", "ts": "2025-02-03T04:00:00Z", "wave_height_m": 1.82, "period_s": 7.1}',
    "export DATABASE_URL=postgres://app:app@localhost:5432/ledger",
    "I think the cleanest fix is to move the pool size into settings and read it once at startup.",
    "diff --git a/src/auth/jwt.ts b/src/auth/jwt.ts\n@@ -12,7 +12,9 @@ export function sign(payload) {",
    "sha256: 9f2c1e7a4b3d8e6f0a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f6071",
)


def synthetic_transcript(size_bytes: int = 5_000_000, *, seed: int = 11) -> str:
    rng = random.Random(seed)
    parts: list[str] = []
    total = 0
    while total < size_bytes:
        line = rng.choice(_LINES)
        parts.append(line)
        total += len(line) + 1
    return "\n".join(parts)


def measure(size_bytes: int = 5_000_000) -> dict[str, Any]:
    text = synthetic_transcript(size_bytes)
    scanner = default_scanner()
    t0 = time.perf_counter()
    _, findings = redact(text, scanner)
    elapsed = time.perf_counter() - t0
    return {
        "source": "bench (funes.redact.default_scanner on synthetic text)",
        "mb": round(len(text.encode()) / 1e6, 2),
        "mb_per_s": round(len(text.encode()) / 1e6 / elapsed, 1),
        "findings": len(findings),
        **corpus_quality(),
    }


def corpus_quality() -> dict[str, Any]:
    """Misses on the secret shapes and false positives on the look-alikes of the test corpus."""
    if not SECRET_TESTS.is_dir():
        return {"corpus": "tests/secrets not found"}
    sys.path.insert(0, str(SECRET_TESTS))
    from secret_bench import false_positive_count, missed_secret_count
    from secret_corpus import lookalike_cases, secret_cases

    return {
        "secret_shapes": len(secret_cases()),
        "missed": missed_secret_count(),
        "lookalikes": len(lookalike_cases()),
        "false_positives": false_positive_count(),
    }


def redaction_seconds(texts: list[str]) -> float:
    """Seconds default_scanner() takes to redact `texts` (the dev set's blocks)."""
    scanner = default_scanner()
    t0 = time.perf_counter()
    for t in texts:
        redact(t, scanner)
    return time.perf_counter() - t0


def field_quality(work_dir: Path) -> dict[str, Any]:
    """Issue-17 figures on the labelled field corpus (tests/secrets/field_corpus.py).

    * `reach_store`: placements whose value is still in the SQLite memory (its bytes, WAL
      included) after the real `funes.ingest.index` of Claude Code sessions, one memory per
      context (so a value found in a memory is that placement's);
    * `reach_push`: placements whose value is in the rows a real `funes push` wrote to a
      directory remote (read back from the Lance dataset);
    * `non_secret_redacted` / `code_data_redacted`: candidates the index-time scanner changes;
      `gate_held_back_non_secret`: candidates the publish gate would hold back.
    The push needs vectors: a bag-of-words embedder stands in (vectors do not matter to the
    gate; `index_with_vs_without_redaction` measures the scanner against the real model).
    """
    if not SECRET_TESTS.is_dir():
        return {"corpus": "tests/secrets not found"}
    sys.path.insert(0, str(SECRET_TESTS))
    sys.path.insert(0, str(SECRET_TESTS.parent))
    from fakes import BagOfWordsEmbedder
    from field_corpus import (
        CONTEXTS,
        non_secrets,
        placements,
        realistic_code,
        write_sessions,
    )

    from funes.ingest import IndexJob, index
    from funes.redact import gate_scanner
    from funes.remote import lance_export
    from funes.remote.directory import DirRemote
    from funes.remote.push import PushOptions, push
    from funes.store import Store
    from funes.traces import sources_for_path

    ps = placements()
    scanner = default_scanner()
    reach_store: dict[str, int] = {}
    reach_push: dict[str, int] = {}
    held = 0
    t0 = time.perf_counter()
    for ctx in CONTEXTS:
        mine = [p for p in ps if p.context == ctx]
        root = work_dir / ctx
        paths = write_sessions(root / "home", [list(p.blocks) for p in mine])
        db = root / "memory.db"
        with Store.open(db) as store:
            job = IndexJob(
                store=store, embedder=BagOfWordsEmbedder(), scanner=scanner, all_tiers_at_once=True
            )
            for path in paths:
                index(sources_for_path(path), job)
        raw = b"".join(p.read_bytes() for p in (db, Path(f"{db}-wal")) if p.exists())
        remote = DirRemote(root / "remote")
        report = push(
            db,
            remote,
            scanner=gate_scanner(),
            receipts=root / "receipts",
            staging=root / "staging",
            options=PushOptions(create=True, assume_yes=True),
        )
        held += report.held_back
        pushed = "\n".join(
            t
            for batch in lance_export.iter_rows(root / "remote" / lance_export.TABLE)
            for t in batch.columns["text"]
        )
        reach_store[ctx] = sum(
            1 for p in mine if _leaked(p.secret.value, raw.decode("utf-8", "replace"))
        )
        reach_push[ctx] = sum(1 for p in mine if _leaked(p.secret.value, pushed))
    gate = gate_scanner()
    groups: dict[str, list[int]] = {}
    gate_held = 0
    candidates = non_secrets() + realistic_code()
    for c in candidates:
        changed = bool(scanner.scan(c.text))
        kind = "code_data" if c.group in ("code", "data") else "non_secret"
        groups.setdefault(kind, [0, 0])
        groups[kind][0] += changed
        groups[kind][1] += 1
        if kind == "non_secret":
            gate_held += bool(gate.scan(redact(c.text, scanner)[0]))
    return {
        **_reach([(p.secret.value, p.secret.kind) for p in ps], reach_store, reach_push, held),
        "non_secret": groups["non_secret"][1],
        "non_secret_redacted": groups["non_secret"][0],
        "non_secret_redacted_pct": round(
            100 * groups["non_secret"][0] / groups["non_secret"][1], 2
        ),
        "code_data": groups["code_data"][1],
        "code_data_redacted": groups["code_data"][0],
        "code_data_redacted_pct": round(100 * groups["code_data"][0] / groups["code_data"][1], 2),
        "gate_held_back_non_secret": gate_held,
        "seconds": round(time.perf_counter() - t0, 1),
    }


def _leaked(value: str, text: str) -> bool:
    """The value (or, for a PEM key, any of its body lines) is in `text`."""
    if "\n" not in value:
        return value in text
    return any(line in text for line in value.split("\n")[1:-1] if len(line) > 16)


def _reach(
    placed: list[tuple[str, str]],
    reach_store: dict[str, int],
    reach_push: dict[str, int],
    held: int,
) -> dict[str, Any]:
    """The placement figures both corpora report: `placed` is (value, kind) per placement,
    `reach_store` / `reach_push` placements that reached the store / a push per context,
    `held` the chunks the gate held back."""
    n = len(placed)
    return {
        "placements": n,
        "values": len({v for v, _ in placed}),
        "kinds": len({k for _, k in placed}),
        "reach_store": sum(reach_store.values()),
        "reach_store_pct": round(100 * sum(reach_store.values()) / n, 2),
        "reach_store_by_context": reach_store,
        "reach_push": sum(reach_push.values()),
        "push_held_back_chunks": held,
    }


def heldout_quality(work_dir: Path) -> dict[str, Any]:
    """Issue-17 figures on the held-out corpus (tests/secrets/heldout_corpus.py), measured
    apart from the field corpus it was not tuned on: other scanners' published test data,
    other vendor formats, 15 transcript contexts.

    Same method as `field_quality`: one real memory per context, every placement its own
    Claude Code session, indexed with `funes.ingest.index`; a placement *reaches the store*
    when any of its secret parts (raw, JSON-escaped or URL-encoded) is in its session's stored
    chunks or in the memory's bytes (WAL included); it *reaches a push* when it is in the
    rows a real `funes push` wrote to a directory remote. Non-secrets: the share of candidates
    and of real code/data slices the index-time scanner changes, and the share of each the
    gate would hold back after index-time redaction.
    """
    if not SECRET_TESTS.is_dir():
        return {"corpus": "tests/secrets not found"}
    sys.path.insert(0, str(SECRET_TESTS))
    sys.path.insert(0, str(SECRET_TESTS.parent))
    from fakes import BagOfWordsEmbedder
    from field_corpus import write_sessions
    from heldout_corpus import CONTEXTS, leaked, placements
    from heldout_negatives import candidates, realistic

    from funes.ingest import IndexJob, index
    from funes.redact import gate_scanner
    from funes.remote import lance_export
    from funes.remote.directory import DirRemote
    from funes.remote.push import PushOptions, push
    from funes.store import Store
    from funes.traces import sources_for_path

    ps = placements()
    scanner = default_scanner()
    reach_store: dict[str, int] = {}
    reach_push: dict[str, int] = {}
    missed: list[tuple[str, str, str]] = []
    held = 0
    t0 = time.perf_counter()
    for ctx in CONTEXTS:
        mine = [p for p in ps if p.context == ctx]
        if not mine:
            continue
        root = work_dir / f"heldout-{ctx}"
        paths = write_sessions(root / "home", [list(p.blocks) for p in mine])
        db = root / "memory.db"
        with Store.open(db) as store:
            job = IndexJob(
                store=store, embedder=BagOfWordsEmbedder(), scanner=scanner, all_tiers_at_once=True
            )
            for path in paths:
                index(sources_for_path(path), job)
        stored = _session_texts(db)
        raw = b"".join(p.read_bytes() for p in (db, Path(f"{db}-wal")) if p.exists())
        raw_text = raw.decode("utf-8", "replace")
        report = push(
            db,
            DirRemote(root / "remote"),
            scanner=gate_scanner(),
            receipts=root / "receipts",
            staging=root / "staging",
            options=PushOptions(create=True, assume_yes=True),
        )
        held += report.held_back
        pushed: dict[str, list[str]] = {}
        for batch in lance_export.iter_rows(root / "remote" / lance_export.TABLE):
            for sid, text in zip(batch.columns["session_id"], batch.columns["text"], strict=True):
                pushed.setdefault(sid, []).append(text)
        n_store = n_push = 0
        for p, path in zip(mine, paths, strict=True):
            sid = path.stem
            in_store = leaked(p, "\n".join(stored.get(sid, []))) or any(
                len(n) >= 12 and n in raw_text for n in _needles(p)
            )
            n_store += in_store
            n_push += leaked(p, "\n".join(pushed.get(sid, [])))
            if in_store:
                missed.append((p.value.kind, ctx, p.variant))
        reach_store[ctx], reach_push[ctx] = n_store, n_push
    scanner_gate = gate_scanner()
    cands, code = candidates(), realistic()
    return {
        **_reach([(p.value.value, p.value.kind) for p in ps], reach_store, reach_push, held),
        "reach_push_by_context": reach_push,
        "missed_examples": sorted(set(missed))[:40],
        "non_secret": len(cands),
        "non_secret_redacted": (c1 := sum(1 for c in cands if scanner.scan(c.text))),
        "non_secret_redacted_pct": round(100 * c1 / len(cands), 2),
        "code_data": len(code),
        "code_data_languages": len({c.group for c in code}),
        "code_data_redacted": (c2 := sum(1 for c in code if scanner.scan(c.text))),
        "code_data_redacted_pct": round(100 * c2 / max(len(code), 1), 2),
        "gate_held_back_non_secret": (
            c3 := sum(1 for c in cands if scanner_gate.scan(redact(c.text, scanner)[0]))
        ),
        "gate_held_back_non_secret_pct": round(100 * c3 / len(cands), 2),
        "gate_held_back_code_data": (
            c4 := sum(1 for c in code if scanner_gate.scan(redact(c.text, scanner)[0]))
        ),
        "gate_held_back_code_data_pct": round(100 * c4 / max(len(code), 1), 2),
        "seconds": round(time.perf_counter() - t0, 1),
    }


def _session_texts(db: Path) -> dict[str, list[str]]:
    """Stored chunk texts per session id (read-only)."""
    import sqlite3

    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        out: dict[str, list[str]] = {}
        for sid, text in con.execute("select session_id, text from chunk_rows order by rowid"):
            out.setdefault(sid, []).append(text)
        return out
    finally:
        con.close()


def _needles(p: Any) -> list[str]:
    from heldout_corpus import needles

    return list(needles(p))


def gate_false_positives(
    work_dir: Path,
    *,
    devset: Path | None = None,
    locomo: Path | None = None,
    prose: int = 2000,
    spans: list[str] | None = None,
) -> dict[str, Any]:
    """The publish gate's hold-backs on realistic text that holds no secret.

    * `devset` (the coding dev set's sessions.jsonl) and each LoCoMo conversation under
      `locomo` (folders of traces.parquet) are indexed, each into its own memory, with the real
      `funes.ingest.index` (lexical only: the gate does not look at vectors) and the default
      index-time scanner; the gate then runs over every stored chunk as `funes push` runs it
      (`gate_scanner()`, the index-time set as `rescan`). A missing corpus is skipped.
    * `prose` paragraphs of tests/secrets/prose_corpus.py (technical prose using credential
      words in their ordinary senses), each redacted at index time then scanned by the gate.

    None of these texts holds a secret, so every hold-back is a false positive. Per corpus:
    chunks (blocks) scanned and held back, and findings per gate rule. `spans`, when given,
    receives one line per finding (`corpus rule: [matched] …context…`) for a reader to look
    at locally; the figures never hold matched text.
    """
    from bench.devset import DevsetSource
    from funes.traces import sources_for_path

    out: dict[str, Any] = {}
    if devset is not None and (devset / "sessions.jsonl").is_file():
        out["devset"] = _gate_memory(
            work_dir / "gate-devset", [DevsetSource(devset)], "devset", spans
        )
    parquets = sorted(locomo.glob("*/traces.parquet")) if locomo is not None else []
    if parquets:
        parts = [
            _gate_memory(
                work_dir / f"gate-{p.parent.name}", sources_for_path(p), p.parent.name, spans
            )
            for p in parquets
        ]
        out["locomo"] = _sum_gate(parts)
    if prose > 0 and SECRET_TESTS.is_dir():
        out["prose"] = _gate_prose(prose, spans)
    return out


def _gate_memory(
    root: Path, sources: list[Any], name: str, spans: list[str] | None
) -> dict[str, Any]:
    """Index `sources` into a fresh memory under `root`, then gate every chunk of it."""
    from funes.chunks import reassemble_spans
    from funes.ingest import IndexJob, index
    from funes.redact import GateRow, gate, gate_scanner
    from funes.store import Store

    root.mkdir(parents=True, exist_ok=True)
    with Store.open(root / "memory.db") as store:
        index(sources, IndexJob(store=store, embedder=None, scanner=default_scanner()))
        rows = [GateRow(*row) for row in store.gate_rows()]
    scanner = gate_scanner()
    result = gate(rows, scanner, rescan=default_scanner())
    if spans is not None:
        held = set(result.held_back_ids)
        blocks: dict[tuple[str, str, int], list[Any]] = {}
        for r in rows:
            if r.id in held:
                blocks.setdefault((r.session_id, r.turn_id, r.block_idx), []).append(r)
        for chunks in blocks.values():
            text, _ = reassemble_spans([r.text for r in sorted(chunks, key=lambda r: r.split_idx)])
            spans.extend(_span_lines(name, text, scanner))
    return {
        "chunks": len(rows),
        "chunks_held_back": len(result.held_back_ids),
        "blocks": result.blocks_scanned,
        "blocks_held_back": result.blocks_held_back,
        "findings_by_rule": dict(sorted(result.findings_by_rule.items())),
    }


def _gate_prose(n: int, spans: list[str] | None) -> dict[str, Any]:
    sys.path.insert(0, str(SECRET_TESTS))
    from prose_corpus import prose_chunks

    from funes.redact import gate_scanner

    scanner, index_time = gate_scanner(), default_scanner()
    held = 0
    rules: dict[str, int] = {}
    for chunk in prose_chunks(n):
        text = redact(chunk, index_time)[0]
        findings = scanner.scan(text)
        held += bool(findings)
        for f in findings:
            rules[f.rule] = rules.get(f.rule, 0) + 1
        if findings and spans is not None:
            spans.extend(_span_lines("prose", text, scanner))
    return {"chunks": n, "chunks_held_back": held, "findings_by_rule": dict(sorted(rules.items()))}


def _span_lines(name: str, text: str, scanner: Any) -> list[str]:
    def one_line(s: str) -> str:
        return s.replace("\n", "⏎")

    return [
        f"{name} {f.rule}: [{one_line(text[f.start : f.end])}] "
        f"…{one_line(text[max(0, f.start - 60) : f.end + 30])}…"
        for f in scanner.scan(text)
    ]


def _sum_gate(parts: list[dict[str, Any]]) -> dict[str, Any]:
    total: dict[str, Any] = {"findings_by_rule": {}}
    for part in parts:
        for k, v in part.items():
            if k == "findings_by_rule":
                for rule, n in v.items():
                    total[k][rule] = total[k].get(rule, 0) + n
            else:
                total[k] = total.get(k, 0) + v
    total["findings_by_rule"] = dict(sorted(total["findings_by_rule"].items()))
    return total


def main(argv: list[str] | None = None) -> int:
    """`python -m bench.secrets [--spans] [--gate-only]`: the corpus, field, held-out and
    gate false-positive figures as one JSON document on stdout; `--spans` also prints every
    gate finding on realistic text (matched span and context) to stderr, for local reading."""
    import argparse
    import json
    import tempfile

    from bench.devset import resolve_devset
    from bench.locomo import DEFAULT_LOCOMO

    parser = argparse.ArgumentParser(prog="python -m bench.secrets", description=main.__doc__)
    parser.add_argument("--spans", action="store_true", help="print the gate's findings")
    parser.add_argument(
        "--gate-only", action="store_true", help="only the gate false-positive figures"
    )
    args = parser.parse_args(argv)
    spans: list[str] | None = [] if args.spans else None
    out: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="funes-bench-secrets-") as tmp:
        work = Path(tmp)
        out["gate_false_positives"] = gate_false_positives(
            work, devset=resolve_devset(None), locomo=DEFAULT_LOCOMO, spans=spans
        )
        if not args.gate_only:
            out["corpus"] = corpus_quality()
            out["field"] = field_quality(work / "field")
            out["heldout"] = heldout_quality(work / "heldout")
    for line in spans or []:
        print(line, file=sys.stderr)
    print(json.dumps(out, indent=2, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
