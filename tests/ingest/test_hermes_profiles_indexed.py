"""Two Hermes profiles holding the same session id (issue 13): two sessions in the memory, whose
chunks never overwrite each other — also when the previous release had already stored one
profile's conversation under the bare id."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import replace
from pathlib import Path

import pytest
from fakes import BagOfWordsEmbedder

from funes.ingest import IndexJob, index
from funes.redact import RuleScanner
from funes.store import Store
from funes.traces import ReadStats, Turn, Unit
from funes.traces.hermes import HermesSource

SID = "api-1acbeb1e8217dd4e"


def _db(path: Path, prompt: str, answer: str, *, at: float) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path)
    conn.executescript(
        """create table sessions (id text primary key, source text, model text,
               started_at real, cwd text);
           create table messages (id integer primary key autoincrement, session_id text,
               role text, content text, tool_call_id text, tool_calls text, tool_name text,
               timestamp real);"""
    )
    conn.execute("insert into sessions values (?, 'api_server', 'hermes-4-70b', 1.0, null)", (SID,))
    for i, (role, content) in enumerate((("user", prompt), ("assistant", answer))):
        conn.execute(
            "insert into messages (session_id, role, content, timestamp) values (?, ?, ?, ?)",
            (SID, role, content, at + i),
        )
    conn.commit()
    conn.close()
    return path


class PreviousRelease:
    """Hermes read as the previous release stored it: every database's sessions under their
    bare id, no model, no label, signed `<max id>:<count>`."""

    harness = HermesSource.harness

    def __init__(self, home: Path, first: str) -> None:
        self.inner = HermesSource(home)
        self.first = first  # which database that release happened to index first

    def units(self) -> Iterable[Unit]:
        for unit in self.inner.units():
            ahead = ("profiles" in unit.key) == (self.first == "profile")
            yield replace(
                unit,
                signature=(unit.signature or "").split("@")[0],
                sort_key=2.0 if ahead else 1.0,
            )

    def read(self, unit: Unit, stats: ReadStats) -> Iterator[Turn]:
        for turn in self.inner.read(unit, stats):
            yield replace(
                turn, session_id=unit.session or turn.session_id, model=None, session_label=None
            )

    def unit_for_hook(self, payload: Mapping[str, object]) -> Unit | None:
        return None


def _home(tmp_path: Path) -> Path:
    home = tmp_path / ".hermes"
    # the default home's session is the newer: the current sweep reads it first
    _db(home / "state.db", "Summarise the March invoices", "Twelve invoices, 4,310 EUR.", at=2e9)
    _db(
        home / "profiles" / "work" / "state.db", "Draft the standup notes", "Notes drafted.", at=1e9
    )
    return home


def _texts(store: Store) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for session, text in store.raw.execute(
        "select session_id, text from chunk_rows order by session_id, seq"
    ):
        out.setdefault(session, []).append(text)
    return out


def _job(store: Store) -> IndexJob:
    return IndexJob(store=store, embedder=BagOfWordsEmbedder(), scanner=RuleScanner())


EXPECTED = {
    SID: ["Summarise the March invoices", "Twelve invoices, 4,310 EUR."],
    f"work:{SID}": ["Draft the standup notes", "Notes drafted."],
}


def test_two_profiles_sessions_of_one_id_are_both_kept(tmp_path: Path) -> None:
    home = _home(tmp_path)
    with Store.open(tmp_path / "m.db") as store:
        index([HermesSource(home)], _job(store))
        assert _texts(store) == EXPECTED
        again = index([HermesSource(home)], _job(store))
        assert (again.chunks_written, again.chunks_updated, again.chunks_superseded) == (0, 0, 0)


@pytest.mark.parametrize("first", ["profile", "default"])
def test_a_memory_that_stored_one_profile_under_the_bare_id_converges(
    tmp_path: Path, first: str
) -> None:
    home = _home(tmp_path)
    with Store.open(tmp_path / "m.db") as store:
        old = index([PreviousRelease(home, first)], _job(store))
        assert not old.failures
        # the previous release kept one of the two conversations under the shared ids
        assert len(_texts(store)) == 1 and len(next(iter(_texts(store).values()))) == 2
        report = index([HermesSource(home)], _job(store))
        assert not report.failures
        assert _texts(store) == EXPECTED
        count = store.raw.execute("select count(*) from chunks").fetchone()[0]
        assert store.raw.execute("select count(*) from chunks_vec").fetchone()[0] == count == 4
