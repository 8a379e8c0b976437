"""The files that ride along with every push: `funes.json` (manifest) and `README.md` (card).

The card is funes' own until someone edits it by hand: a card with the stats markers gets its
stats region refreshed; a card without them is left alone; no card gets a full one.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

from funes.remote.lance_export import COLUMNS, FORMAT, TABLE

STATS_START = "<!-- funes:stats -->"
STATS_END = "<!-- /funes:stats -->"


@dataclass(frozen=True, slots=True)
class PushFacts:
    """What the manifest and card say about the dataset after a push."""

    label: str  # hf://datasets/org/repo or file:///dir
    recall_name: str  # what to pass to --memory (org/repo, or the directory)
    model_id: str
    dim: int
    rows: int
    pushed_at: str  # ISO 8601 UTC
    host: str | None


def manifest(facts: PushFacts) -> bytes:
    """`funes.json`: the format, table, model pin and size, for tools that read before opening."""
    doc = {
        "format": FORMAT,
        "table": TABLE,
        "embedding_model": facts.model_id,
        "embedding_dim": facts.dim,
        "chunks": facts.rows,
        "updated_at": facts.pushed_at,
        "columns": [name for name, _, _, _ in COLUMNS],
    }
    return (json.dumps(doc, indent=2, sort_keys=False) + "\n").encode()


def _size_category(rows: int) -> str:
    for limit, name in (
        (1_000, "n<1K"),
        (10_000, "1K<n<10K"),
        (100_000, "10K<n<100K"),
        (1_000_000, "100K<n<1M"),
    ):
        if rows < limit:
            return name
    return "1M<n<10M"


def _stats(facts: PushFacts) -> str:
    return "\n".join(
        [
            STATS_START,
            "| | |",
            "|---|---|",
            f"| chunks | {facts.rows:,} |",
            f"| embedding model | `{facts.model_id}` ({facts.dim}-d) |",
            f"| updated | {facts.pushed_at} |",
            STATS_END,
        ]
    )


def _schema_table() -> str:
    lines = ["| column | type | nullable |", "|---|---|---|"]
    for name, kind, nullable, _ in COLUMNS:
        shown = "fixed_size_list<float32, dim>" if kind == "vector" else kind
        lines.append(f"| `{name}` | {shown} | {'yes' if nullable else 'no'} |")
    return "\n".join(lines)


def card(facts: PushFacts) -> str:
    """A complete dataset card (YAML front matter, description, usage, schema, stats)."""
    return f"""---
pretty_name: funes memory
tags:
- funes
- agent-memory
- agent-traces
- embeddings
- lance
size_categories:
- {_size_category(facts.rows)}
---

# funes memory

Passages from AI coding-agent sessions (Claude Code, Codex, pi, Hermes), chunked, redacted and
embedded by [funes](https://github.com/huggingface/funes), with exact provenance (session,
turn, time, working directory). Written by `funes push`; read it with:

```sh
funes recall "how did we fix the flaky test" --memory {facts.recall_name}
```

**Private by default.** `funes push --create` creates the repository private; transcripts
can hold internal details even after secret redaction, so review before making it public.
Every push runs a secrets gate that holds back any block in which a secret is detected.

## Layout

- `{TABLE}/`: a [Lance](https://lancedb.github.io/lance/) dataset, one row per chunk, with a
  full-text index (`text_idx`) and, once large enough, a vector index (`vector_idx`).
- `funes.json`: format, embedding model and size.

Schema metadata pins `embedding_model`; funes refuses to mix vectors of different models.

## Schema

{_schema_table()}

## Stats

{_stats(facts)}
"""


def refresh(existing: str | None, facts: PushFacts) -> str | None:
    """The card to write, or None to leave a hand-written card alone."""
    if existing is None:
        return card(facts)
    start, end = existing.find(STATS_START), existing.find(STATS_END)
    if start < 0 or end < start:
        return None
    return existing[:start] + _stats(facts) + existing[end + len(STATS_END) :]


def write_atomic(path: Path, data: bytes) -> None:
    """Replace `path` with `data` (temp file + rename: readers see the old or the new file)."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)


def write_sidecars(root: Path, facts: PushFacts) -> None:
    """Write `funes.json` and (unless hand-written) `README.md` under `root`."""
    write_atomic(root / "funes.json", manifest(facts))
    readme = root / "README.md"
    existing = readme.read_text(encoding="utf-8") if readme.exists() else None
    new = refresh(existing, facts)
    if new is not None and new != existing:
        write_atomic(readme, new.encode())
