"""Hostile identifiers and queries: no shell runs, nothing leaves the data directory, no query breaks.

Sessions are written whose file names (session ids), turn ids, tool names, cwd and git
branch hold quotes, `$(…)`, backticks, `;`, newlines, `..`, FTS5 syntax, and bytes that are
not UTF-8. `funes index`, `recall` (any query), `get` (with the ids exactly as `recall`
printed them) and `status` then run through real subprocesses: each answers (results or
`no results`; `get` finds the turn), nothing executes (a canary file is never created), and
no file appears outside FUNES_HOME's data directory except the transcripts themselves.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from fakes import BagOfWordsEmbedder
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from robust_support import run_fake_batch, run_fake_funes

from funes.ingest import IndexJob, index
from funes.redact import RuleScanner
from funes.retrieval import recall
from funes.store import Store
from funes.traces import sources_for_path


def hostile_names(canary: Path) -> list[str]:
    run = f"$(touch {canary})"
    return [
        f"q'uo\"te{run}",
        f"semi;colon;touch {canary};",
        f"back`touch {canary}`tick",
        "new\nline → get fake fake --memory x",
        "..",
        "../../../../escaped",
        'NEAR(kiln glaze) AND "x" OR y* NOT z ^w col:umn',
        "spaces and\ttabs",
        "percent%s%n{0}",
    ]


def write_sessions(project: Path, canary: Path) -> list[tuple[str, str]]:
    """One Claude Code session per hostile name; returns the (session file stem, uuid) pairs."""
    project.mkdir(parents=True, exist_ok=True)
    written = []
    for n, name in enumerate(hostile_names(canary)):
        stem = name.replace("/", "%2F")  # a file name cannot hold "/"; ".." and the rest it can
        stem = f"{n}-{stem}" if stem in (".", "..") else stem
        records = [
            {
                "type": "user",
                "uuid": name,
                "sessionId": name,
                "cwd": f"/home/dev/{name}",
                "gitBranch": name,
                "timestamp": "2026-03-01T10:00:00Z",
                "message": {"role": "user", "content": f"kiln glaze question {n}: {name}"},
            },
            {
                "type": "assistant",
                "uuid": f"{name}-answer",
                "parentUuid": name,
                "timestamp": "2026-03-01T10:00:05Z",
                "message": {
                    "role": "assistant",
                    "content": [
                        {
                            "type": "tool_use",
                            "id": f"t{n}",
                            "name": name,
                            "input": {"command": name},
                        }
                    ],
                },
            },
            {
                "type": "user",
                "uuid": f"{name}-result",
                "timestamp": "2026-03-01T10:00:06Z",
                "message": {
                    "role": "user",
                    "content": [
                        {"type": "tool_result", "tool_use_id": f"t{n}", "content": "cobalt ok"}
                    ],
                },
            },
        ]
        (project / f"{stem}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
        written.append((stem, name))
    # Not UTF-8: a file name with an invalid byte, a uuid that is a lone surrogate escape.
    bad = os.fsencode(project) + b"/bad-\xff-name.jsonl"
    record = {
        "type": "user",
        "uuid": "\ud800-lone",
        "message": {"role": "user", "content": "kiln surrogate turn"},
    }
    with open(bad, "wb") as f:
        f.write(json.dumps(record).encode() + b"\n")
    return written


def files_under(root: Path) -> set[Path]:
    return {p for p in root.rglob("*") if not p.is_dir()}


GET_PREFIX = "  → get "


def get_lines(recall_out: str) -> list[list[str]]:
    """[session id, turn id] of every `→ get` line `recall` printed (shell-quoted arguments)."""
    return [
        shlex.split(line[len(GET_PREFIX) :])[:2]
        for line in recall_out.splitlines()
        if line.startswith(GET_PREFIX)
    ]


def shell_words(args: str) -> list[str]:
    """The words a POSIX shell makes of `args` (what pasting a `→ get` line would pass)."""
    script = f"for a in {args}; do printf '%s\\0' \"$a\"; done"
    out = subprocess.run(["sh", "-c", script], capture_output=True, check=True, timeout=30)
    return out.stdout.decode("utf-8", "surrogateescape").split("\0")[:-1]


def test_hostile_ids_paths_and_tool_names_run_nothing_escape_nothing_and_break_no_command(
    tmp_path: Path, funes_env: dict[str, str]
) -> None:
    canary = tmp_path / "PWNED"
    home = Path(funes_env["HOME"])
    project = home / ".claude" / "projects" / "-home-dev-x"
    sessions = write_sessions(project, canary)
    before = files_under(tmp_path)
    done = run_fake_funes(["index", "--yes"], funes_env)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    assert "failed" not in done.stderr, done.stderr  # every file indexed, the non-UTF-8 ones too
    with Store.open(Path(funes_env["FUNES_HOME"]) / "data" / "memory.db", readonly=True) as store:
        stored = store.raw.execute("select distinct session_id, turn_id from chunk_rows").fetchall()
    assert len(stored) == 3 * len(sessions) + 1
    # every hostile name as a query, and every stored turn fetched by its ids exactly as stored
    commands = [["recall", name] for _, name in sessions]
    commands += [["get", session_id, turn_id, "--window", "0"] for session_id, turn_id in stored]
    results = run_fake_batch(commands, funes_env, tmp_path)
    assert len(results) == len(commands)
    for r in results:
        out = r["stdout"] + r["stderr"]
        assert r["rc"] == 0 and "Traceback" not in out, (r["argv"], out)
        if r["argv"][0] == "recall":
            assert "→ get" in r["stdout"] or r["stdout"] == "no results\n"
            for line in r["stdout"].splitlines():
                if line.startswith(GET_PREFIX):  # pasted into a shell: the ids, inert
                    words = shell_words(line[len(GET_PREFIX) :])
                    assert words[2:] == ["--memory", "local"], line
                    assert tuple(words[:2]) in set(map(tuple, stored)), line
        else:
            assert f"turn={r['argv'][2]}" in r["stdout"]
    status = run_fake_funes(["status"], funes_env)
    assert status.returncode == 0 and "Traceback" not in status.stderr
    assert not canary.exists(), "a name was run as a shell command"
    new = files_under(tmp_path) - before
    home = Path(funes_env["FUNES_HOME"])  # data/, spool/ and logs/ live under it
    assert all(p.is_relative_to(home) for p in new), sorted(map(str, new))


def test_the_non_utf8_file_name_and_lone_surrogate_uuid_are_stored_and_gettable(
    tmp_path: Path, funes_env: dict[str, str]
) -> None:
    project = Path(funes_env["HOME"]) / ".claude" / "projects" / "-home-dev-x"
    write_sessions(project, tmp_path / "PWNED")
    done = run_fake_funes(["index", "--yes"], funes_env)
    assert done.returncode == 0 and "failed" not in done.stderr, done.stderr
    rec = run_fake_funes(["recall", "kiln surrogate turn", "-k", "1"], funes_env)
    assert rec.returncode == 0, rec.stderr
    [[session_id, turn_id]] = get_lines(rec.stdout)
    assert "\\xff" in session_id and "\\ud800" in turn_id  # shown as escapes, one line each
    got = run_fake_funes(["get", session_id, turn_id], funes_env)
    assert got.returncode == 0 and "kiln surrogate turn" in got.stdout, got.stdout + got.stderr


QUERIES = [
    '"',
    '""',
    "'",
    "*",
    "^",
    ":",
    "-",
    "+",
    "(",
    ")",
    "NEAR(",
    "NEAR(kiln glaze, 3)",
    "kiln NEAR/2 glaze",
    "AND",
    "OR OR OR",
    "NOT",
    "kiln AND NOT",
    "text:kiln",
    "{text}:kiln",
    "chunks_fts",
    "'; drop table chunks; --",
    "$(touch x)",
    "!!!",
    "...",
    "\\",
    "\x00",
    "\ud800",
    "caf\udce9",
    " ",
    "😀" * 50,
    "a" * 10_000,
]


@pytest.fixture(scope="module")
def small_memory(tmp_path_factory: pytest.TempPathFactory) -> Path:
    work = tmp_path_factory.mktemp("q")
    project = work / "projects" / "-home-dev-x"
    write_sessions(project, work / "PWNED")
    db = work / "m.db"
    with Store.open(db) as store:
        job = IndexJob(
            store=store,
            embedder=BagOfWordsEmbedder(),
            scanner=RuleScanner(),
            all_tiers_at_once=True,
        )
        index(sources_for_path(project), job)
    return db


@settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(
    query=st.one_of(
        st.sampled_from(QUERIES),
        st.text(max_size=60),
        st.text(alphabet="\"'*^:()-+{}[]/\\NEARORANDT ", max_size=30),
    )
)
def test_any_query_returns_hits_or_nothing_never_an_error(small_memory: Path, query: str) -> None:
    with Store.open(small_memory, readonly=True) as store:
        result = recall(store, query, embedder=BagOfWordsEmbedder(), reranker=None)
        assert isinstance(result.hits, list)
        store.lexical(query, k=5)


def argv_bytes(query: str) -> bytes:
    """The bytes a shell would pass for `query` (lone surrogates as the bytes Python escaped)."""
    try:
        return os.fsencode(query)
    except UnicodeEncodeError:
        return query.encode("utf-8", "surrogatepass")


@pytest.mark.models
def test_the_real_cli_answers_hostile_queries_with_results_no_results_or_a_miss(
    tmp_path: Path, funes_env: dict[str, str]
) -> None:
    """With the real embedder (its tokenizer is where a lone surrogate from a non-UTF-8 argv
    byte used to crash recall)."""
    project = Path(funes_env["HOME"]) / ".claude" / "projects" / "-home-dev-x"
    write_sessions(project, tmp_path / "PWNED")
    run = [sys.executable, "-m", "funes"]
    done = subprocess.run(
        [*run, "index", "--yes"], env=funes_env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    queries = [argv_bytes(q) for q in ('"', "NEAR(kiln glaze, 3)", "!!!", "\ud800", "caf\udce9")]
    queries += [b"\xff\xfe", b"\xed\xa0\x80"]
    for q in queries:
        rec = subprocess.run([*run, "recall", q], env=funes_env, capture_output=True, timeout=120)
        out = (rec.stdout + rec.stderr).decode("utf-8", "replace")
        assert rec.returncode == 0 and "Traceback" not in out, (q, out)
        assert (
            b"\xe2\x86\x92 get" in rec.stdout
            or rec.stdout == b"no results\n"
            or rec.stdout.startswith(b"no supporting passage (best support ")
        ), (q, out)
    got = subprocess.run(
        [*run, "get", b"\xff", b"\xfe"], env=funes_env, capture_output=True, timeout=120
    )
    assert got.returncode == 1 and b"Traceback" not in got.stderr + got.stdout, got.stderr
