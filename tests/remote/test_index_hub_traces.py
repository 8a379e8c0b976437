"""`funes index org/repo`: an agent-traces dataset on the Hub (Parquet shards, as a local
`.parquet` is read) indexed through the HF cache, incrementally: a shard a later commit leaves
unchanged is neither downloaded nor read again, and offline the cached copy is indexed."""

from __future__ import annotations

import json
import sqlite3
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from hubfake import HubFake
from support.hub import TOKENS, funes, machine

REPO_ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO_ROOT / "fixtures"))
from make_fixtures import write_parquet  # noqa: E402  (the generator of the committed fixture)

pytestmark = [pytest.mark.hub, pytest.mark.models]

TRACES = "team/agent-traces"


@pytest.fixture
def hub(tmp_path: Path) -> Iterator[HubFake]:
    with HubFake(tmp_path / "hub-state", TOKENS) as fake:
        yield fake


def shard(tmp_path: Path, rows: list[dict[str, object]], name: str) -> bytes:
    path = tmp_path / name
    write_parquet(rows, path)
    return path.read_bytes()


def sources(env: dict[str, str]) -> set[str]:
    db = Path(env["FUNES_HOME"]) / "data" / "memory.db"
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
        return {r[0] for r in conn.execute("select distinct source_path from chunk_rows")}


def test_a_hub_traces_dataset_is_indexed_through_the_cache_and_only_new_shards_are_read(
    tmp_path: Path, hub: HubFake
) -> None:
    rows = json.loads((REPO_ROOT / "fixtures" / "parquet" / "sessions.json").read_text())
    hub.state.create("dataset", TRACES, private=True)
    first_shard = "data/train-00000.parquet"
    hub.state.commit(
        "dataset", TRACES, "main", {first_shard: shard(tmp_path, rows[:1], "a.parquet")},
        set(), "first shard", None,
    )  # fmt: skip
    env = machine(tmp_path, "a", hub)

    first = funes(env, "index", TRACES)
    assert first.returncode == 0, first.stderr
    assert "from 1 of 1 session file" in first.stderr, first.stderr
    assert sources(env) == {f"hf://datasets/{TRACES}/{first_shard}"}
    found = funes(env, "recall", "kiln electricity cost February", "--neighbors", "0")
    assert "pq-kilnbook-0001"[:8] in found.stdout and "codex" in found.stdout, found.stderr

    second_shard = "data/train-00001.parquet"
    hub.state.commit(
        "dataset", TRACES, "main", {second_shard: shard(tmp_path, rows[1:], "b.parquet")},
        set(), "second shard", None,
    )  # fmt: skip
    mark = len(hub.log)
    second = funes(env, "index", f"hf://datasets/{TRACES}")
    assert second.returncode == 0, second.stderr
    assert "from 1 of 2 session files (1 unchanged" in second.stderr, second.stderr
    fetched = [p for m, p, _ in hub.log[mark:] if m == "GET" and "/resolve/" in p]
    assert fetched and all(p.endswith(second_shard) for p in fetched), fetched  # the new one only
    assert sources(env) == {f"hf://datasets/{TRACES}/{s}" for s in (first_shard, second_shard)}

    mark = len(hub.log)
    offline = funes(dict(env, HF_HUB_OFFLINE="1"), "index", TRACES)
    assert offline.returncode == 0, offline.stderr
    assert "indexed 0 new chunks from 0 of 2 session files (2 unchanged" in offline.stderr
    assert hub.log[mark:] == []  # the cached copy, no request


def test_a_missing_traces_dataset_is_a_clear_error(tmp_path: Path, hub: HubFake) -> None:
    env = machine(tmp_path, "a", hub)
    done = funes(env, "index", "team/no-such-traces")
    assert done.returncode == 1
    assert "does not exist, or your token cannot see it" in done.stderr
    not_a_path = funes(env, "index", "./team/no-such-traces")
    assert not_a_path.returncode == 1 and "no such file or directory" in not_a_path.stderr
