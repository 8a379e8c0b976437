"""Every registered source, on its fixtures: the same guarantees for all of them."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from trace_fixtures import (
    CLAUDE_PROJECT,
    CODEX_046,
    CODEX_NEW,
    CODEX_PRE,
    PARQUET,
    PI_V1,
    PI_V3,
    read_all,
    read_unit,
)

from funes.traces import (
    AGENTS,
    AgentHomes,
    BlockType,
    Harness,
    Role,
    TraceSource,
    discover,
    sources_for_path,
)
from funes.traces.parquet import ParquetSource


def source_for(harness: Harness, homes: AgentHomes) -> TraceSource:
    if harness is Harness.PARQUET:  # no default location: an import names its file
        return ParquetSource([PARQUET])
    return AGENTS[harness].make(homes)


ALL = pytest.mark.parametrize("harness", list(AGENTS), ids=[h.value for h in AGENTS])


def test_every_agent_and_the_parquet_import_are_registered() -> None:
    assert set(AGENTS) == set(Harness)


@ALL
def test_each_source_reads_its_fixture_into_prompts_thinking_tool_calls_results_and_answers(
    harness: Harness, homes: AgentHomes
) -> None:
    source = source_for(harness, homes)
    turns = [t for _, ts, _ in read_all(source) for t in ts]
    assert turns, f"{harness}: no turns from the fixtures"
    roles = {t.role for t in turns}
    assert {Role.USER, Role.ASSISTANT, Role.TOOL} <= roles
    blocks = [b for t in turns for b in t.blocks]
    kinds = {b.type for b in blocks}
    assert kinds == {BlockType.TEXT, BlockType.THINKING, BlockType.TOOL_USE, BlockType.TOOL_RESULT}
    for b in blocks:
        assert b.text.strip(), "blank blocks are dropped"
        if b.type in (BlockType.TOOL_USE, BlockType.TOOL_RESULT):
            assert b.tool_name, f"{harness}: a tool block without a tool name: {b}"
    if harness is not Harness.PARQUET:
        assert {t.harness for t in turns} == {harness}
    assert all(t.session_id and t.turn_id and t.source_path for t in turns)


@ALL
def test_rereading_a_unit_yields_the_same_turns_with_the_same_ids(
    harness: Harness, homes: AgentHomes
) -> None:
    source = source_for(harness, homes)
    units = list(source.units())
    assert units
    for unit in units:
        first, _ = read_unit(source, unit)
        again, _ = read_unit(source, unit)
        assert first == again


@ALL
def test_turn_ids_are_unique_per_session_and_seq_grows_in_file_order(
    harness: Harness, homes: AgentHomes
) -> None:
    source = source_for(harness, homes)
    seen: dict[str, set[str]] = {}
    for _unit, turns, _stats in read_all(source):
        last: dict[str, int] = {}
        for t in turns:
            ids = seen.setdefault(t.session_id, set())
            assert t.turn_id not in ids, f"duplicate turn id {t.turn_id} in {t.session_id}"
            ids.add(t.turn_id)
            assert t.seq > last.get(t.session_id, -1)
            last[t.session_id] = t.seq


@ALL
def test_units_are_stamped_with_a_signature_and_their_harness(
    harness: Harness, homes: AgentHomes
) -> None:
    units = list(source_for(harness, homes).units())
    assert units
    for unit in units:
        assert unit.signature
        assert unit.harness is harness
        assert unit.path.exists()


def test_discover_builds_one_source_per_registered_harness_and_filters_by_harness(
    homes: AgentHomes,
) -> None:
    assert [s.harness for s in discover(homes)] == list(AGENTS)
    only = discover(homes, Harness.PI)
    assert [s.harness for s in only] == [Harness.PI]


def test_discover_over_missing_agent_homes_yields_no_units(tmp_path: Path) -> None:
    empty = AgentHomes(
        tmp_path,
        {
            Harness.CLAUDE_CODE: tmp_path / "c",
            Harness.CODEX: tmp_path / "x",
            Harness.PI: tmp_path / "p",
            Harness.HERMES: tmp_path / "h",
        },
    )
    for source in discover(empty):
        assert list(source.units()) == []
    assert not (tmp_path / "h" / "state.db").exists(), "a missing Hermes db is never created"


@pytest.mark.parametrize(
    ("path", "harness"),
    [
        (CLAUDE_PROJECT / "a45e9651-f47f-59d5-bfa2-5b9d95d22ceb.jsonl", Harness.CLAUDE_CODE),
        (CODEX_NEW, Harness.CODEX),
        (CODEX_046, Harness.CODEX),
        (CODEX_PRE, Harness.CODEX),
        (PI_V3, Harness.PI),
        (PI_V1, Harness.PI),
        (PARQUET, Harness.PARQUET),
    ],
    ids=["claude", "codex-0.171", "codex-0.46", "codex-pre-envelope", "pi-v3", "pi-v1", "parquet"],
)
def test_a_path_given_to_index_is_routed_to_the_agent_that_wrote_it(
    path: Path, harness: Harness
) -> None:
    units = [u for s in sources_for_path(path) for u in s.units()]
    assert [u.harness for u in units] == [harness]
    source = sources_for_path(path)[0]
    turns, _ = read_unit(source, units[0])
    assert turns


def test_a_sqlite_file_is_routed_to_hermes_whatever_its_name(
    hermes_home: Path, tmp_path: Path
) -> None:
    by_name = sources_for_path(hermes_home / "state.db")
    assert [s.harness for s in by_name] == [Harness.HERMES]
    renamed = tmp_path / "backup-of-hermes.sqlite"
    shutil.copy2(hermes_home / "state.db", renamed)
    sources = sources_for_path(renamed)
    assert [s.harness for s in sources] == [Harness.HERMES]
    units = list(sources[0].units())
    assert {u.session for u in units} == {"20260317_201533_7c1e9a", "20260318_074502_a1b2c3"}


def test_a_directory_yields_its_transcripts_parquet_files_and_hermes_databases(
    hermes_home: Path, tmp_path: Path
) -> None:
    tree = tmp_path / "mixed"
    shutil.copytree(CLAUDE_PROJECT, tree / "claude")
    shutil.copy2(CODEX_NEW, tree / CODEX_NEW.name)
    shutil.copy2(PI_V3, tree / PI_V3.name)
    (tree / "import").mkdir()
    shutil.copy2(PARQUET, tree / "import" / PARQUET.name)
    shutil.copytree(hermes_home, tree / "hermes")
    harnesses = [u.harness for s in sources_for_path(tree) for u in s.units()]
    assert harnesses.count(Harness.CLAUDE_CODE) == 3  # main, edge, subagent
    assert harnesses.count(Harness.CODEX) == 1
    assert harnesses.count(Harness.PI) == 1
    assert harnesses.count(Harness.PARQUET) == 1
    assert harnesses.count(Harness.HERMES) == 3  # two sessions + the profile's one
    only_pi = [u.harness for s in sources_for_path(tree, Harness.PI) for u in s.units()]
    assert only_pi == [Harness.PI]
