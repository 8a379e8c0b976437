"""Odd and hostile things where transcripts should be: indexing carries on, counts, retries.

An agent home holding, beside good sessions: empty files, a directory named like a
transcript, a FIFO, symlink loops, dangling links, NUL bytes, invalid UTF-8, garbage,
unknown record types and a 50 MB line. `funes index` (over the agent homes, and over an
explicit path) finishes, indexes every good turn, and reports what it skipped. A file that
cannot be read when its turn comes (gone, replaced by a directory or a FIFO) is a failure:
not marked indexed, and indexed by the next run once it is readable again. A 100k-turn
session is indexed with bounded memory.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest
from fakes import BagOfWordsEmbedder
from robust_support import claude_lines, run_fake_funes, scale

from funes.ingest import IndexJob, IndexReport, index
from funes.redact import RuleScanner
from funes.store import Store
from funes.traces import AgentHomes, ReadStats, TraceSource, Turn, Unit, discover

SESSION = "6a1d2c3b-0000-4000-8000-00000000beef"
PROJECT = "-home-dev-src-kilnbook"


def good_session(root: Path, session: str = SESSION, turns: int = 6) -> Path:
    path = root / ".claude" / "projects" / PROJECT / f"{session}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(claude_lines(session, turns)) + "\n")
    return path


def hostile_home(home: Path) -> dict[str, int]:
    """Populate `home` with good sessions and every odd thing; the counts a run must report."""
    good_session(home)
    project = home / ".claude" / "projects" / PROJECT
    (project / "00000000-0000-4000-8000-000000000001.jsonl").write_bytes(b"")  # empty
    (project / "dir-named-like-a-transcript.jsonl").mkdir()
    (project / "dir-named-like-a-transcript.jsonl" / "inner.jsonl").write_bytes(b"{}\n")
    os.mkfifo(project / "a-fifo.jsonl")
    (project / "loop-a.jsonl").symlink_to(project / "loop-b.jsonl")
    (project / "loop-b.jsonl").symlink_to(project / "loop-a.jsonl")
    (project / "dangling.jsonl").symlink_to(project / "nowhere.jsonl")
    (project / "dir-loop").symlink_to(project, target_is_directory=True)
    mixed = project / "00000000-0000-4000-8000-000000000002.jsonl"
    lines = list(claude_lines("00000000-0000-4000-8000-000000000002", 4))
    with mixed.open("wb") as f:
        f.write(lines[0].encode() + b"\n")
        f.write(b"\x00\x00\x00 not json at all\n")  # corrupt
        f.write(
            b'{"type":"user","uuid":"bad-utf8","message":{"role":"user","content":"caf\xe9 kiln"}}\n'
        )
        f.write(b'{"type":"progress","uuid":"p1","data":{}}\n')  # unknown record type
        f.write(b'{"type":"brand-new-record-type","uuid":"n1"}\n')  # unknown record type
        f.write(b"[1, 2, 3]\n")  # corrupt (not an object)
        f.write(lines[1].encode().replace(b"turn 1", b"turn\\u0000 1") + b"\n")  # NUL in the text
        f.write(
            b'{"type":"user","uuid":"u-huge","message":{"role":"user","content":"'
            + b"x" * (50 << 20)
            + b'"}}\n'
        )
        f.write(lines[2].encode() + b"\n")
        f.write(b"\xff\xfe\xfd\n")  # invalid UTF-8 and not JSON
        f.write(lines[3].encode() + b"\n")
        f.write(b'{"type":"assistant","uuid":"half')  # the agent is still writing
    # Codex and pi homes with an unreadable-shaped and an empty rollout.
    codex = home / ".codex" / "sessions" / "2026" / "03" / "14"
    codex.mkdir(parents=True)
    (codex / "rollout-2026-03-14T09-12-05-00000000-0000-4000-8000-00000000000c.jsonl").write_bytes(
        b""
    )
    os.mkfifo(codex / "rollout-2026-03-14T09-12-06-00000000-0000-4000-8000-00000000000d.jsonl")
    pi = home / ".pi" / "agent" / "sessions" / "--home-dev--"
    pi.mkdir(parents=True)
    (pi / "2026-03-21T10-20-33-118Z_x.jsonl").mkdir()
    hermes = home / ".hermes"
    hermes.mkdir()
    (hermes / "state.db").write_bytes(b"SQLite format 3\x00" + b"\x00" * 100)  # damaged
    return {
        "turns": 6 + 4 + 1,  # the good session, the mixed file's good lines, the café line
        "corrupt": 3,
        "unknown": 3,  # two record types, and {} in the directory named like a transcript
        "oversized": 1,
        "invalid_utf8": 1,  # the café line (the \xff\xfe\xfd line is corrupt: counted once)
    }


def job(store: Store) -> IndexJob:
    return IndexJob(
        store=store, embedder=BagOfWordsEmbedder(), scanner=RuleScanner(), all_tiers_at_once=True
    )


def test_an_agent_home_full_of_odd_files_is_indexed_with_what_was_skipped_counted(
    isolated_env: Path, tmp_path: Path
) -> None:
    expected = hostile_home(isolated_env)
    with Store.open(tmp_path / "m.db") as store:
        report = index(discover(AgentHomes.resolve()), job(store))
        again = index(discover(AgentHomes.resolve()), job(store))
        turn_ids = {r[0] for r in store.raw.execute("select turn_id from chunks")}
    assert report.failures == []
    assert report.turns == expected["turns"]
    assert report.read.corrupt_records == expected["corrupt"]
    assert report.read.unknown_records == expected["unknown"]
    assert report.read.oversized_records == expected["oversized"]
    assert report.read.invalid_utf8 == expected["invalid_utf8"]
    assert report.read.truncated_tail
    assert "bad-utf8" in turn_ids and "u-huge" not in turn_ids
    assert again.chunks_written == 0 and again.turns == 0  # all recorded, nothing re-read


def test_indexing_an_explicit_directory_of_odd_files_finishes_and_says_what_it_skipped(
    isolated_env: Path, funes_env: dict[str, str]
) -> None:
    """`funes index PATH` sniffs each file's first record: it must not open a FIFO (which
    blocks forever) or follow a symlink loop."""
    hostile_home(isolated_env)
    done = run_fake_funes(["index", str(isolated_env)], funes_env, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    said = " ".join(done.stderr.split())  # rich wraps stderr lines at 80 columns
    assert "skipped: 3 corrupt records, 3 unknown records, 1 oversized line" in said
    # a line with invalid UTF-8 is kept (its bad bytes read as U+FFFD), and said so
    assert "kept 1 line with invalid UTF-8" in said
    assert "still being written" in said


def test_a_transcript_cut_off_long_ago_is_reported_as_truncated_not_still_being_written(
    isolated_env: Path, funes_env: dict[str, str]
) -> None:
    path = good_session(isolated_env)
    with path.open("ab") as f:
        f.write(b'{"type":"assistant","uuid":"half')  # a crash cut the last record
    long_ago = path.stat().st_mtime - 2 * 86400
    os.utime(path, (long_ago, long_ago))
    done = run_fake_funes(["index", str(path)], funes_env, timeout=120)
    assert done.returncode == 0, done.stderr
    said = " ".join(done.stderr.split())  # rich wraps stderr lines at 80 columns
    assert "still being written" not in said
    assert "1 transcript ends in a cut-off line" in said
    assert "6 turns read" in said  # every complete turn before it


class Unreadable:
    """The real Claude source; `spoil(path)` runs between units() and read() (the agent or the
    user replaced or removed the file meanwhile)."""

    def __init__(self, inner: TraceSource, spoil: object) -> None:
        self.inner = inner
        self.harness = inner.harness
        self.spoil = spoil

    def units(self) -> list[Unit]:
        units = list(self.inner.units())
        for unit in units:
            self.spoil(unit.path)  # type: ignore[operator]
        return units

    def read(self, unit: Unit, stats: ReadStats) -> Iterator[Turn]:
        return self.inner.read(unit, stats)

    def unit_for_hook(self, payload: Mapping[str, object]) -> Unit | None:
        return None


def _gone(path: Path) -> None:
    path.rename(path.with_suffix(".away"))


def _directory(path: Path) -> None:
    path.rename(path.with_suffix(".away"))
    path.mkdir()


def _fifo(path: Path) -> None:
    path.rename(path.with_suffix(".away"))
    os.mkfifo(path)


def _loop(path: Path) -> None:
    path.rename(path.with_suffix(".away"))
    path.symlink_to(path)


def _restore(path: Path) -> None:
    if path.is_symlink() or path.is_fifo() or path.is_file():
        path.unlink()
    elif path.is_dir():
        shutil.rmtree(path)
    path.with_suffix(".away").rename(path)


@pytest.mark.parametrize(
    "spoil", [_gone, _directory, _fifo, _loop], ids=["gone", "directory", "fifo", "symlink-loop"]
)
def test_a_file_unreadable_when_its_turn_comes_is_not_marked_indexed_and_is_retried(
    isolated_env: Path, tmp_path: Path, spoil: object
) -> None:
    path = good_session(isolated_env)
    (claude,) = [s for s in discover(AgentHomes.resolve()) if s.harness.value == "claude_code"]
    with Store.open(tmp_path / "m.db") as store:
        report: IndexReport = _with_timeout(lambda: index([Unreadable(claude, spoil)], job(store)))
        assert len(report.failures) == 1 and report.failures[0].key == str(path)
        assert store.unit(str(path)) is None
        assert report.units_indexed == 0
        _restore(path)
        retry = index(discover(AgentHomes.resolve()), job(store))
        assert retry.failures == [] and retry.units_indexed == 1 and retry.chunks_written == 6
        assert store.unit(str(path)) is not None


def _with_timeout(work: object, seconds: float = 20) -> IndexReport:
    """Run `work()` in a thread; fail (instead of hanging the suite) if it blocks."""
    import threading

    out: list[object] = []
    thread = threading.Thread(target=lambda: out.append(_call(work)), daemon=True)
    thread.start()
    thread.join(seconds)
    if thread.is_alive():
        # unblock a reader stuck opening a FIFO, then fail
        for fifo in Path(os.environ["HOME"]).rglob("*.jsonl"):
            if fifo.is_fifo():
                with open(fifo, "wb"):
                    pass
        thread.join(5)
        raise AssertionError(f"indexing blocked for {seconds}s")
    result = out[0]
    if isinstance(result, BaseException):
        raise result
    return result  # type: ignore[return-value]


def _call(work: object) -> object:
    try:
        return work()  # type: ignore[operator]
    except BaseException as exc:  # handed back to the test thread
        return exc


MEMORY_PROBE = """
import json, sys
sys.path.insert(0, {tests!r})
sys.path.insert(0, {here!r})
from pathlib import Path
from fakes import BagOfWordsEmbedder
from robust_support import claude_lines, codex_lines, pi_lines
from funes.ingest import IndexJob, index
from funes.redact import RuleScanner
from funes.store import Store
from funes.traces import ReadStats, sources_for_path
from funes.traces.codex import read_codex_file
from funes.traces.pi import read_pi_file
agent, turns, corpus, db = {agent!r}, {turns!r}, Path({corpus!r}), {db!r}
session = "0000000a-0000-4000-8000-000000000000"
name = {{"claude": session + ".jsonl", "codex": "rollout-2026-03-14T09-12-05-" + session + ".jsonl",
        "pi": "2026-03-21T10-20-33-118Z_" + session + ".jsonl"}}[agent]
lines = {{"claude": claude_lines, "codex": codex_lines, "pi": pi_lines}}[agent]
with (corpus / name).open("w") as f:
    for line in lines(session, turns, words=12):
        f.write(line + "\\n")
def status_kib(field):
    # /proc, not getrusage: ru_maxrss survives exec, so a child would inherit the peak of the
    # (large) test process that forked it; VmHWM is this program's own high-water mark.
    with open("/proc/self/status") as f:
        return next(int(l.split()[1]) for l in f if l.startswith(field + ":"))
base = status_kib("VmRSS")
if db:  # the whole pipeline: parse, redact, chunk, embed, store
    with Store.open(Path(db)) as store:
        job = IndexJob(store=store, embedder=BagOfWordsEmbedder(), scanner=RuleScanner(), all_tiers_at_once=True)
        report = index(sources_for_path(corpus), job)
    out = {{"turns": report.turns, "chunks": report.chunks_written, "failures": len(report.failures)}}
else:  # the parser alone
    reader = {{"codex": read_codex_file, "pi": read_pi_file}}[agent]
    out = {{"turns": sum(1 for _ in reader(corpus / name, ReadStats()))}}
out["grew_mib"] = (status_kib("VmHWM") - base) / 1024
print(json.dumps(out))
"""


def huge_session(tmp_path: Path, agent: str, turns: int, *, pipeline: bool) -> dict[str, float]:
    """Write a `turns`-turn session and read (or index) it in a fresh interpreter; how much its
    peak RSS grew beyond the interpreter with everything imported."""
    corpus = tmp_path / agent
    corpus.mkdir()
    code = MEMORY_PROBE.format(
        tests=str(Path(__file__).resolve().parent.parent),
        here=str(Path(__file__).resolve().parent),
        agent=agent,
        turns=turns,
        corpus=str(corpus),
        db=str(tmp_path / f"{agent}.db") if pipeline else "",
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.slow
def test_a_100k_turn_session_is_indexed_with_bounded_memory(tmp_path: Path) -> None:
    turns = scale("FUNES_ROBUST_FULL", 100_000, 1_000_000)
    result = huge_session(tmp_path, "claude", turns, pipeline=True)
    assert result["failures"] == 0 and result["turns"] == result["chunks"] == turns
    print(f"\nindexing {turns} Claude Code turns grew peak RSS by {result['grew_mib']:.0f} MiB")
    assert result["grew_mib"] < 64


@pytest.mark.slow
@pytest.mark.parametrize("agent", ["codex", "pi"])
def test_the_codex_and_pi_parsers_read_a_100k_turn_session_with_bounded_memory(
    tmp_path: Path, agent: str
) -> None:
    """Codex remembers each message key to drop the mirrored copy (~230 bytes per turn): bounded
    for any real session, though not constant; pi keeps nothing per turn."""
    turns = scale("FUNES_ROBUST_FULL", 100_000, 1_000_000)
    result = huge_session(tmp_path, agent, turns, pipeline=False)
    assert result["turns"] == turns
    print(f"\nreading {turns} {agent} turns grew peak RSS by {result['grew_mib']:.0f} MiB")
    assert result["grew_mib"] < 48 * max(1, turns // 100_000)
