"""Discovery: the sources of the agents on this machine, and what an explicit path holds.

`discover` builds a source per registered agent (funes.traces.agents: a missing home simply
yields no units); `sources_for_path` builds a source over an
explicit path given to `funes index PATH`, sniffing the format when the path does not say.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path

from funes.traces.agents import AGENTS, Agent, AgentHomes
from funes.traces.claude_code import is_subagent_file
from funes.traces.hermes import DB_NAME, HermesSource, is_sqlite_file
from funes.traces.jsonl import read_records
from funes.traces.model import Harness, Turn
from funes.traces.parquet import ParquetSource
from funes.traces.source import ReadStats, TraceSource, Unit, file_unit, walk_files


def _sniff_order() -> list[Agent]:
    # Claude Code is the fallback, so it is asked last.
    return sorted(AGENTS.values(), key=lambda e: e.harness is Harness.CLAUDE_CODE)


def discover(homes: AgentHomes, only: Harness | None = None) -> list[TraceSource]:
    """Sources for every registered agent (or `only` one). A missing root simply yields no units."""
    return [e.make(homes) for e in AGENTS.values() if only is None or e.harness is only]


class FilesSource:
    """JSONL transcripts under an explicit path, each read by the agent its first record names.

    `passed_over`: the `*.jsonl` files the last `units()` found and no agent reads (empty,
    not JSON, records of no agent funes knows), for the index summary to name."""

    def __init__(
        self, root: Path, harness: Harness | None = None, *, skip: frozenset[Harness] = frozenset()
    ) -> None:
        self.root = root
        self.forced = harness
        self.harness = harness or Harness.CLAUDE_CODE
        self.skip = skip  # agents whose files under `root` are read from elsewhere
        self.passed_over: list[Path] = []

    def _entry_for(self, path: Path) -> Agent | None:
        if self.forced is not None and path == self.root:
            return AGENTS.get(self.forced)  # one file named with --harness: read it as told
        stats = ReadStats()
        try:
            for _, first in read_records(path, stats):
                for entry in _sniff_order():
                    if entry.read_file is not None and entry.sniff(first):
                        return entry
                break
        except OSError:
            return None
        return None

    def units(self) -> Iterable[Unit]:
        paths = [self.root] if self.root.is_file() else walk_files(self.root, "*.jsonl")
        self.passed_over = []
        for path in paths:
            entry = self._entry_for(path)
            if entry is None or entry.read_file is None:
                self.passed_over.append(path)
                continue
            if self.forced is not None and entry.harness is not self.forced:
                continue  # --harness over a directory: only that agent's files
            if entry.harness in self.skip:
                continue
            if entry.file_unit is not None:
                unit = entry.file_unit(path)
            else:
                unit = file_unit(path, entry.harness, secondary=is_subagent_file(path))
            if unit is not None:
                yield unit

    def read(self, unit: Unit, stats: ReadStats) -> Iterator[Turn]:
        entry = AGENTS[unit.harness]
        if entry.read_file is None:
            return iter(())
        return entry.read_file(unit.path, stats)

    def unit_for_hook(self, payload: Mapping[str, object]) -> Unit | None:
        return None


def sources_for_path(path: Path, harness: Harness | None = None) -> list[TraceSource]:
    """Sources over an explicit file or directory.

    A `.parquet` file is an agent-traces import, a SQLite file (`state.db`, or any file with
    the SQLite header) a Hermes database, anything else JSONL transcripts (sniffed per file
    unless `harness` is given). A directory yields its JSONL transcripts plus any Parquet
    files and Hermes `state.db` files under it; where it holds a Hermes database, Hermes'
    `sessions/*.jsonl` mirrors under it are left to the database.
    """
    if path.is_file():
        if path.suffix == ".parquet":
            return [ParquetSource([path])]
        if path.name == DB_NAME or is_sqlite_file(path):
            return [HermesSource(databases=[path])]
        return [FilesSource(path, harness)]
    dbs = [p for p in walk_files(path, DB_NAME) if is_sqlite_file(p)]
    skip = frozenset({Harness.HERMES}) if dbs else frozenset()
    sources: list[TraceSource] = [FilesSource(path, harness, skip=skip)]
    if harness in (None, Harness.PARQUET) and any(walk_files(path, "*.parquet")):
        sources.append(ParquetSource([path]))
    if harness in (None, Harness.HERMES) and dbs:
        sources.append(HermesSource(databases=dbs))
    return sources
