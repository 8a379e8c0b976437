"""The CLI end to end with the real offline embedder: in subprocesses where the process is
what is tested (indexing, models, the exit of `python -m funes`), in-process (`main()`) for
error paths, which need none."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from support.claude import conversation, write_session
from support.cli import Ran, funes

from funes.paths import Paths
from funes.store import Store

pytestmark = pytest.mark.models

PAIRS = [
    ("user", "The nightly export keeps dying halfway, what is going on?"),
    (
        "assistant",
        "The worker gets OOM-killed: the export builds the whole CSV in memory before writing it.",
    ),
    ("user", "Stream it instead."),
    (
        "assistant",
        "Done: rows are now written in batches of 5000 through a generator, peak RSS dropped to 180 MB.",
    ),
]


def test_index_recall_get_round_trip_with_provenance(isolated_env: Path) -> None:
    write_session(isolated_env, conversation(PAIRS))
    idx = funes("index")
    assert "indexed 4 new chunks" in idx.stderr
    # counted by the kind of file read, and said so (`funes status` counts chunks by agent)
    assert "  new chunks by source format: claude_code 4\n" in idx.stderr
    assert idx.stdout == ""
    rec = funes("recall", "why did the nightly export run out of memory", "-k", "2")
    first = rec.stdout.split("---\n")[0].splitlines()
    assert re.fullmatch(
        r"\[2026-04-02T10:00:0\d\.000Z\] claude_code -home-dev-shop/0b9f6c1e text  score=\d\.\d{3}",
        first[0],
    )
    get_line = first[1]
    assert get_line.startswith("  → get 0b9f6c1e-5d1a-4c55-9a53-7f0d2c1e9a10 ")
    assert get_line.endswith(" --memory local")
    assert "OOM-killed" in rec.stdout
    session, turn = get_line.split()[2:4]
    got = funes("get", session, turn, "--window", "1", "--format", "agent")
    assert f"turn={turn}" in got.stdout
    assert got.stdout.count("---\n") >= 2


def test_a_query_nothing_supports_prints_the_miss_line_and_all_shows_the_candidates(
    isolated_env: Path,
) -> None:
    write_session(isolated_env, conversation(PAIRS))
    funes("index")
    miss = funes("recall", "zzzzqqq nonexistentterm")
    assert miss.returncode == 0
    assert re.fullmatch(
        r"no supporting passage \(best support 0\.\d{3} < 0\.320; --all shows the weak "
        r"candidates\)\n",
        miss.stdout,
    )
    weak = funes("recall", "zzzzqqq nonexistentterm", "--all")
    lines = weak.stdout.splitlines()
    assert lines[0].endswith("; weak candidates follow)")
    assert lines[2].startswith("  → get ") and weak.stdout.endswith("---\n")
    answered = funes("recall", "why did the nightly export run out of memory", "--all")
    assert "no supporting passage" not in answered.stdout


def test_get_of_an_unknown_turn_says_so_and_exits_1(isolated_env: Path) -> None:
    write_session(isolated_env, conversation(PAIRS))
    funes("index")
    out = funes("get", "0b9f6c1e-5d1a-4c55-9a53-7f0d2c1e9a10", "nope", check=False)
    assert out.returncode == 1
    assert (
        out.stdout.strip() == "turn nope not found in session 0b9f6c1e-5d1a-4c55-9a53-7f0d2c1e9a10"
    )


def test_get_takes_a_turn_prefix_as_it_takes_a_session_prefix(isolated_env: Path) -> None:
    """`funes get a45e9651 8f558f91` (both ids shortened) said the turn was not found, though
    the session prefix worked (new-user trial)."""
    # the conversation's turn ids share their first 34 characters: give each its own head
    lines = [json.loads(line) for line in conversation(PAIRS)]
    for line in lines:
        for key in ("uuid", "parentUuid"):
            if line.get(key):
                line[key] = f"{int(line[key][-4:], 16):x}" + line[key][1:]
    write_session(isolated_env, [json.dumps(line) for line in lines])
    funes("index")
    hit = funes("recall", "export", "-k", "1").stdout.splitlines()[1].split()
    session, turn = hit[2], hit[3]
    whole = funes("get", session, turn, "--format", "agent").stdout
    assert funes("get", session[:8], turn[:8], "--format", "agent").stdout == whole
    several = funes("get", session, "0000", check=False)  # no turn id starts so here
    assert several.returncode == 1 and several.stdout.startswith("turn 0000 not found")
    blank = funes("get", session, " ", check=False)  # a usage error, not a prefix of every turn
    assert blank.returncode == 1 and "needs a session id and a turn id" in blank.stderr


def test_recall_before_any_index_explains_what_to_run(
    isolated_env: Path, run: Callable[..., Ran]
) -> None:
    out = run("recall", "anything")
    assert out.returncode == 1
    assert "no memory yet" in out.stderr and "funes index" in out.stderr
    assert out.stdout == ""


def test_a_broken_symlink_path_is_a_missing_file_not_a_hub_dataset(
    isolated_env: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, run: Callable[..., Ran]
) -> None:
    """`bad/loop.jsonl` reads like org/repo; a symlink there (looping or dangling) is still
    a path the user named, for `index` and for `--memory`."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "loop.jsonl").symlink_to("loop.jsonl")
    (tmp_path / "bad" / "dangling.jsonl").symlink_to("nowhere.jsonl")
    for name in ("bad/loop.jsonl", "bad/dangling.jsonl"):
        for out in (run("index", name), run("recall", "x", "--memory", name)):
            assert out.returncode == 1 and name in out.stderr, out.stderr
            assert "Hugging Face" not in out.stderr and "hf://" not in out.stderr, out.stderr


def test_a_query_of_only_punctuation_answers_no_results(isolated_env: Path) -> None:
    write_session(isolated_env, conversation(PAIRS))
    funes("index")
    out = funes("recall", '"*"', "--harness", "codex")
    assert out.stdout == "no results\n"


def test_json_output_is_utf8_for_a_query_whose_bytes_are_not(isolated_env: Path) -> None:
    """An argument that is not UTF-8 reaches Python as surrogate escapes; --json wrote them
    back as the raw bytes, a document no JSON reader accepts (new-user trial)."""
    write_session(isolated_env, conversation(PAIRS))
    funes("index")
    for query in (b"nightly export \xff\xfe", b"nightly export \xed\xa0\x80"):
        ran = subprocess.run(
            [sys.executable, "-m", "funes", "recall", query, "--json"],
            capture_output=True,
            timeout=300,
            env=os.environ.copy(),
        )
        assert ran.returncode == 0, ran.stderr
        document = json.loads(ran.stdout.decode("utf-8"))
        assert document["query"].startswith("nightly export \ufffd")
        assert document["hits"] and "OOM-killed" in ran.stdout.decode("utf-8")


def test_index_while_another_writer_holds_the_memory_past_its_wait_exits_75(
    isolated_env: Path,
) -> None:
    write_session(isolated_env, conversation(PAIRS))
    paths = Paths.resolve().ensure()
    store = Store.open(paths.memory_db, lock_path=paths.lock_file)
    with store.writing():
        out = funes("index", "--wait", "1", check=False)
    store.close()
    assert out.returncode == 75
    assert "waiting up to 1 s" in out.stderr
    assert "another funes process is writing to this memory (waited 1 s)" in out.stderr


def test_index_waits_for_a_hook_worker_holding_the_memory_then_indexes(isolated_env: Path) -> None:
    """A manual index that finds the writer lock taken waits (default ~30 s), saying so."""
    import threading

    write_session(isolated_env, conversation(PAIRS))
    paths = Paths.resolve().ensure()
    store = Store.open(paths.memory_db, lock_path=paths.lock_file)
    holding, release = threading.Event(), threading.Event()

    def worker() -> None:
        with store.writing():
            holding.set()
            release.wait(60)

    thread = threading.Thread(target=worker)
    thread.start()
    holding.wait(10)
    proc = subprocess.Popen(
        [sys.executable, "-m", "funes", "index"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=os.environ.copy(),
    )
    time.sleep(3)  # the index is waiting now
    assert proc.poll() is None
    release.set()
    thread.join()
    store.close()
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err
    assert "waiting up to 30 s for it" in err and "indexed 4 new chunks" in err


def test_status_counts_sessions_and_points_at_the_next_step(isolated_env: Path) -> None:
    write_session(isolated_env, conversation(PAIRS))
    before = funes("status", "--format", "agent").stdout
    assert "1 not indexed" in before and "next: funes index" in before
    funes("index")
    after = funes("status", "--format", "agent").stdout
    assert "chunks: 4  sessions: 1" in after
    assert "claude_code: 1 session, 4 chunks" in after
    assert "0 not indexed" in after


def test_the_same_file_by_relative_and_absolute_path_is_one_unit(
    isolated_env: Path, tmp_path: Path
) -> None:
    path = write_session(isolated_env, conversation(PAIRS))
    first = subprocess.run(
        [sys.executable, "-m", "funes", "index", str(path)],
        capture_output=True,
        text=True,
        timeout=300,
        env=os.environ.copy(),
    )
    assert first.returncode == 0, first.stderr
    relative = os.path.relpath(path, tmp_path)
    again = subprocess.run(
        [sys.executable, "-m", "funes", "index", relative],
        capture_output=True,
        text=True,
        timeout=300,
        env=os.environ.copy(),
        cwd=tmp_path,
    )
    assert again.returncode == 0, again.stderr
    assert "1 unchanged" in again.stderr and "0 turns read" in again.stderr


def test_an_explicit_path_that_holds_no_transcript_is_an_error(
    isolated_env: Path, tmp_path: Path, run: Callable[..., Ran]
) -> None:
    junk = tmp_path / "notes.txt"
    junk.write_text("just some notes\n")
    out = run("index", str(junk))
    assert out.returncode == 1
    assert "holds no transcript funes can read" in out.stderr and "hint:" in out.stderr


def test_an_explicit_path_none_of_which_can_be_read_is_an_error(
    isolated_env: Path, tmp_path: Path, run: Callable[..., Ran]
) -> None:
    broken = tmp_path / "traces.parquet"
    broken.write_bytes(b"PAR1 this is not a Parquet file at all")
    out = run("index", str(broken))
    assert out.returncode == 1 and out.stdout == ""
    assert f"cannot read {broken}" in out.stderr and "hint:" in out.stderr
    assert "Traceback" not in out.stderr


def test_index_summaries_are_not_hard_wrapped_when_stderr_is_a_pipe(isolated_env: Path) -> None:
    write_session(isolated_env, conversation(PAIRS))
    out = funes("index")
    line = next(x for x in out.stderr.splitlines() if x.startswith("indexed "))
    assert line.rstrip().endswith("s"), line  # "… in 0.4s" on the same line, not wrapped at 80


def test_a_usage_error_exits_1_not_2_which_is_kept_for_a_refused_push(
    isolated_env: Path, run: Callable[..., Ran]
) -> None:
    out = run("recall", "anything", "--no-such-flag")
    assert out.returncode == 1
    assert "No such option" in out.stderr and out.stdout == ""


def test_every_harness_the_filters_take_is_named_in_their_help_and_errors(
    isolated_env: Path, run: Callable[..., Ran]
) -> None:
    """`--harness parquet` (rows imported from a parquet without a known agent) worked, but
    the help and the error for an unknown value named only the four agents (new-user trial)."""
    for verb in ("recall", "sessions", "index"):
        bad = run(verb, *(["q"] if verb == "recall" else []), "--harness", "cursor")
        assert bad.returncode == 1
        assert "expected one of: claude, codex, pi, hermes, parquet" in bad.stderr, bad.stderr
        assert "parquet" in run(verb, "--help").stdout
    write_session(isolated_env, conversation(PAIRS))
    funes("index")
    assert run("recall", "q", "--harness", "parquet").returncode == 0


def test_a_query_that_starts_with_a_dash_is_told_how_to_pass_it(
    isolated_env: Path, run: Callable[..., Ran]
) -> None:
    out = run("recall", "-v verbose")
    assert out.returncode == 1 and "No such option" in out.stderr
    assert 'funes recall -- "-v' in out.stderr
    other = run("status", "--bogus")  # no free text there: click's message alone
    assert other.returncode == 1 and "hint:" not in other.stderr
    write_session(isolated_env, conversation(PAIRS))
    funes("index")
    passed = run("recall", "--", "-v export")
    assert passed.returncode == 0, passed.stderr


def test_a_huge_window_and_a_nan_half_life_are_answered_not_tracebacks(
    isolated_env: Path,
) -> None:
    write_session(isolated_env, conversation(PAIRS))
    funes("index")
    rec = funes("recall", "export", "-k", "1", "--neighbors", str(10**20))
    session, turn = rec.stdout.splitlines()[1].split()[2:4]
    got = funes("get", session, turn, "--window", str(10**20), "--format", "agent")
    assert got.stdout.count("---\n") == 4  # the whole 4-turn session
    nan = funes("recall", "export", "--half-life", "nan", check=False)
    assert nan.returncode == 1 and "score=nan" not in nan.stdout
    assert "--half-life" in nan.stderr and "Traceback" not in nan.stderr


def test_an_empty_recall_query_is_a_usage_error_not_arbitrary_hits(
    isolated_env: Path, run: Callable[..., Ran]
) -> None:
    write_session(isolated_env, conversation(PAIRS))
    funes("index")
    for query in ("", "   "):
        out = run("recall", query)
        assert out.returncode == 1 and out.stdout == ""
        assert "a recall query is required" in out.stderr


def test_a_blank_get_id_is_a_usage_error_not_an_empty_not_found(
    isolated_env: Path, run: Callable[..., Ran]
) -> None:
    write_session(isolated_env, conversation(PAIRS))
    funes("index")
    for args in (("", ""), ("  ", "t1"), ("s1", "")):
        out = run("get", *args)
        assert out.returncode == 1 and out.stdout == ""
        assert "get needs a session id and a turn id" in out.stderr


def test_a_memory_whose_folder_cannot_be_made_is_a_clear_error(
    isolated_env: Path, tmp_path: Path, run: Callable[..., Ran]
) -> None:
    write_session(isolated_env, conversation(PAIRS))
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the memory's folder should be")
    out = run("index", "--memory", f"file://{blocker}/team/memory.db")
    assert out.returncode != 0 and "Traceback" not in out.stderr
    assert "cannot create the folder of memory" in out.stderr and str(blocker) in out.stderr


@pytest.mark.parametrize("kind", ["below a file", "a file", "in a read-only folder"])
def test_a_model_cache_that_cannot_hold_the_int8_graph_is_a_clear_error_naming_its_variable(
    isolated_env: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    run: Callable[..., Ran],
    kind: str,
) -> None:
    """The first index builds the embedder's int8 graph into FUNES_MODEL_CACHE. One that is
    not a directory, cannot be created or cannot be written was an OSError traceback from
    deep in the build; it is funes' error with a hint naming the variable, and a file found
    there is left exactly as it was (not chmodded 0700 as a directory would be)."""
    write_session(isolated_env, conversation(PAIRS))
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    blocker.chmod(0o644)
    readonly = tmp_path / "read-only"
    readonly.mkdir(mode=0o555)
    if kind == "in a read-only folder" and _can_create_in(readonly):
        pytest.skip("this process writes into a read-only folder (root)")
    cache = {
        "below a file": blocker / "models",
        "a file": blocker,
        "in a read-only folder": readonly / "models",
    }[kind]
    monkeypatch.setenv("FUNES_MODEL_CACHE", str(cache))
    out = run("index", "--yes")
    assert out.returncode == 1 and "Traceback" not in out.stderr, out.stderr
    first, hint = out.stderr.strip().splitlines()[-2:]
    assert first.startswith("funes: ") and str(cache) in first, first
    assert hint.strip().startswith("hint:") and "FUNES_MODEL_CACHE" in hint, hint
    assert blocker.read_text() == "not a folder" and blocker.stat().st_mode & 0o777 == 0o644


def test_a_memory_whose_model_cannot_be_loaded_is_recalled_from_bm25_with_a_note(
    isolated_env: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, run: Callable[..., Ran]
) -> None:
    """Offline, a first index with a model that is not cached stores the chunks (BM25 finds
    them, status says so) and stops before any vector. A recall with that model then failed
    with "not cached and cannot be downloaded"; it answers from BM25 and says why on stderr."""
    write_session(isolated_env, conversation(PAIRS))
    monkeypatch.setenv("FUNES_EMBEDDER", "bge-small-en-v1.5")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "empty-hf"))
    failed = run("index", "--yes")
    assert failed.returncode == 1 and "cannot be downloaded" in failed.stderr
    out = run("recall", "--all", "why did the nightly export run out of memory")
    assert out.returncode == 0, out.stderr
    assert "OOM-killed" in out.stdout and "funes:" not in out.stdout
    note = next(line for line in out.stderr.splitlines() if "vector search unavailable" in line)
    assert note.startswith("funes: ") and "bge-small-en-v1.5" in note and "BM25" in note, note
    # one short line: why in brief, and where the fix is (status gives the whole hint)
    assert note == (
        "funes: vector search unavailable (model bge-small-en-v1.5 is not cached and cannot be "
        "downloaded): lexical (BM25) results only; `funes status` says what fixes it"
    )
    status = run("status", "--format", "agent").stdout
    hint = failed.stderr.splitlines()[-1].removeprefix("  hint: ")
    assert f"next: {hint}\n" in status and "pip install" in hint


def test_an_index_whose_model_cannot_load_stores_every_tier_and_says_what_it_stored(
    isolated_env: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, run: Callable[..., Ran]
) -> None:
    """A budgeted index reads prose, embeds it, then reads tool calls and output. When the
    model could not be loaded it stopped at the prose's vectors: tool calls and output were
    never stored, and what it had stored went unsaid. It stores every tier for BM25, prints
    its summary, and ends with the model's error (exit 1)."""
    from support.claude import write_claude_session

    write_claude_session(isolated_env / ".claude")
    monkeypatch.setenv("FUNES_EMBEDDER", "bge-small-en-v1.5")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "empty-hf"))
    out = run("index")
    assert out.returncode == 1 and "Traceback" not in out.stderr, out.stderr
    assert re.search(r"indexed \d+ new chunks from 1 of 1 session file", out.stderr), out.stderr
    assert "still owed a vector" in out.stderr
    assert out.stderr.strip().splitlines()[-2].startswith("funes: model bge-small-en-v1.5 is not")
    found = run("recall", "--all", "--type", "tool_result", "busy_timeout")
    assert "PRAGMA busy_timeout = 0" in found.stdout, found.stdout


def test_recall_with_another_model_after_an_index_that_stored_no_vector_points_at_index(
    isolated_env: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, run: Callable[..., Ran]
) -> None:
    """After an offline first index with the default model (chunks stored, no vector), a
    recall with the offline weights was refused with "move memory.db away and run `funes
    index --yes`": losing the stored chunks for nothing. The hint names `funes index`, and
    following it works: the index takes the memory over and recall finds the passage."""
    write_session(isolated_env, conversation(PAIRS))
    offline = os.environ["FUNES_EMBEDDER"]
    monkeypatch.setenv("FUNES_EMBEDDER", "bge-small-en-v1.5")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "empty-hf"))
    assert run("index", "--yes").returncode == 1
    monkeypatch.setenv("FUNES_EMBEDDER", offline)
    query = "why did the nightly export run out of memory"
    refused = run("recall", query)
    assert refused.returncode == 1 and refused.stdout == ""
    hint = refused.stderr.strip().splitlines()[-1]
    assert "hint:" in hint and "`funes index`" in hint and "away" not in hint, hint
    assert run("index").returncode == 0
    found = run("recall", "--all", query)
    assert found.returncode == 0 and "OOM-killed" in found.stdout
    assert "vector search unavailable" not in found.stderr, found.stderr


def test_another_model_is_refused_with_the_funes_embedder_value_of_the_memorys_own(
    isolated_env: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, run: Callable[..., Ran]
) -> None:
    """FUNES_EMBEDDER naming another model than the memory's: the refusal told to "use the
    model it was built with (FUNES_EMBEDDER)" without the value that selects it. It names it
    (or unsetting it), for recall and index, and for a memory stamped without a vector."""
    write_session(isolated_env, conversation(PAIRS))
    offline = os.environ["FUNES_EMBEDDER"]
    assert run("index", "--yes").returncode == 0
    monkeypatch.setenv("FUNES_EMBEDDER", "bge-small-en-v1.5")
    for args in (("recall", "nightly export"), ("index", "--yes")):
        refused = run(*args)
        assert refused.returncode == 1, refused.stderr
        assert "this memory was built with sentence-transformers/all-MiniLM-L6-v2" in refused.stderr
        assert (
            f"hint: use the model it was built with (FUNES_EMBEDDER={offline}, or "
            "FUNES_EMBEDDER unset), or rebuild" in refused.stderr
        )
    monkeypatch.delenv("FUNES_EMBEDDER")
    assert run("recall", "--all", "nightly export").returncode == 0  # unset: its own model

    # stamped by an offline first index with bge (no vector), read with the offline model
    monkeypatch.setenv("FUNES_HOME", str(tmp_path / "second"))
    monkeypatch.setenv("FUNES_EMBEDDER", "bge-small-en-v1.5")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "empty-hf"))
    assert run("index", "--yes").returncode == 1
    monkeypatch.setenv("FUNES_EMBEDDER", offline)
    refused = run("recall", "nightly export")
    assert refused.returncode == 1
    assert (
        "(or use the model it was stamped with: FUNES_EMBEDDER=bge-small-en-v1.5, or "
        "FUNES_EMBEDDER unset)" in refused.stderr
    )


def test_recall_through_a_model_cache_that_cannot_hold_the_graph_answers_from_bm25(
    isolated_env: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, run: Callable[..., Ran]
) -> None:
    """A memory with vectors, recalled where FUNES_MODEL_CACHE cannot hold the int8 graph:
    the passages still come back (BM25), and the note names the variable to fix."""
    write_session(isolated_env, conversation(PAIRS))
    assert run("index", "--yes").returncode == 0
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("FUNES_MODEL_CACHE", str(blocker / "models"))
    out = run("recall", "--all", "why did the nightly export run out of memory")
    assert out.returncode == 0 and "Traceback" not in out.stderr, out.stderr
    assert "OOM-killed" in out.stdout
    note = next(line for line in out.stderr.splitlines() if "vector search unavailable" in line)
    assert "FUNES_MODEL_CACHE" in note and str(blocker / "models") in note, note
    assert note.endswith("; `funes status` says what fixes it"), note


def _can_create_in(folder: Path) -> bool:
    try:
        (folder / "probe").mkdir()
    except OSError:
        return False
    (folder / "probe").rmdir()
    return True


def test_scrub_without_a_memory_says_so_and_creates_none(
    isolated_env: Path, run: Callable[..., Ran]
) -> None:
    out = run("scrub")
    assert out.returncode == 1 and out.stdout == ""
    assert "nothing to scrub" in out.stderr
    assert not Paths.resolve().memory_db.exists()


def test_add_and_remove_notes_are_not_hard_wrapped_when_stderr_is_a_pipe(
    isolated_env: Path,
) -> None:
    (isolated_env / ".claude").mkdir()
    added = funes("add", "claude", "--no-index")
    note = next(x for x in added.stderr.splitlines() if "note:" in x)
    assert note.rstrip().endswith("without them"), note  # one line, not wrapped at 80
    removed = funes("remove", "claude")
    assert all(len(x) < 200 for x in removed.stderr.splitlines())


def test_add_off_a_terminal_builds_the_first_index_prose_first(isolated_env: Path) -> None:
    """Issue 15: `funes add` from a script builds the same budgeted first index as at a
    terminal (it used to print a hint and leave the memory empty): every chunk stored, prose
    embedded before tool calls and output, the rest owed to later runs and turns."""
    write_session(isolated_env, conversation(PAIRS))
    added = funes("add", "claude")  # stdin and stderr are pipes here
    assert "indexed 4 chunks" in added.stderr, added.stderr
    with Store.open(Paths.resolve().memory_db, readonly=True) as store:
        assert store.stats().chunks == 4
        have = store.raw.execute("select count(*) from chunks_vec").fetchone()[0]
        assert have + store.owed_total() == 4
        hits = funes("recall", "export dying OOM").stdout
    assert "OOM-killed" in hits
    funes("remove", "claude")


def test_a_cold_recall_gets_its_query_vector_from_the_child_that_loaded_the_model(
    isolated_env: Path, run: Callable[..., Ran]
) -> None:
    write_session(isolated_env, conversation(PAIRS))
    funes("index")
    query = "why did the nightly export run out of memory"
    import onnxruntime  # noqa: F401 - in this process no child forks: the reference recall

    here = run("recall", query, "-k", "2")
    cold = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "funes", "recall", query, "-k", "2"],
        capture_output=True,
        text=True,
        timeout=300,
        env=os.environ.copy(),
    )
    assert cold.returncode == 0, cold.stderr
    assert cold.stdout == here.stdout
    assert "OOM-killed" in cold.stdout
    imported = {
        line.rsplit("|", 1)[-1].strip()
        for line in cold.stderr.splitlines()
        if line.startswith("import time:")
    }
    assert "funes.store" in imported  # the import log is this process's own
    # the model ran in the child (funes.inference.prefetch); this process tokenized the query
    assert "onnxruntime" not in imported
    assert "tokenizers" in imported
    # nor numpy, the largest import of that start (~50 ms): the child imports it, and the
    # store takes the vector's bytes as they came (funes.store.meta.query_blob)
    assert "numpy" not in imported


def test_only_recall_warms_a_model_child_first_thing() -> None:
    from funes.__main__ import _embeds_a_query, _verb

    assert _verb(["recall", "status"]) == "recall"
    assert _verb(["--debug", "recall", "x"]) == "recall"
    assert _verb(["status", "recall"]) == "status"
    assert _verb([]) is None
    assert _embeds_a_query(["recall", "why"]) and _embeds_a_query(["recall", "--", "-h"])
    assert not _embeds_a_query(["recall", "--help"]) and not _embeds_a_query(["recall", "x", "-h"])
    assert not _embeds_a_query(["status"])


@pytest.mark.parametrize(
    ("argv", "collects"),
    [(["recall", "why"], False), (["status"], True), (["mcp"], True), (["--debug", "index"], True)],
)
def test_only_a_recall_runs_without_the_cyclic_garbage_collector(
    argv: list[str], collects: bool
) -> None:
    """The console script loads the CLI with the collector off (funes.__main__); every command
    but a short recall runs with it on again — a long one (the MCP server, watch, an index of
    hours) would otherwise keep every reference cycle it made."""
    code = (
        "import gc, sys, funes.cli\n"
        "funes.cli.main = lambda: print(gc.isenabled(), gc.get_freeze_count() > 0)\n"
        f"sys.argv = ['funes', *{argv!r}]\n"
        "from funes.__main__ import main\n"
        "main()\n"
    )
    ran = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.split() == (["True", "True"] if collects else ["False", "False"])


@pytest.mark.parametrize(
    ("sig", "code", "said"), [("SIGTERM", 143, "terminated"), ("SIGINT", 130, "aborted")]
)
def test_a_signal_while_the_cli_loads_exits_as_one_later_does(
    sig: str, code: int, said: str
) -> None:
    """A SIGTERM before the CLI had set its handler ended the process by the signal (-15),
    without a word (new-user trial: 11 of 40 early SIGTERMs); now 143 and `funes:
    terminated`, as a signal later gives (Ctrl-C: 130, `funes: aborted`). The CLI's import is
    held back here so the signal lands while it loads."""
    code_text = (
        "import importlib.abc, os, signal, sys, time\n"
        "class Slow(importlib.abc.MetaPathFinder):\n"
        "    def find_spec(self, name, path, target=None):\n"
        "        if name == 'funes.cli':\n"
        "            print('loading', flush=True)\n"
        "            time.sleep(30)\n"
        "        return None\n"
        "sys.meta_path.insert(0, Slow())\n"
        "sys.argv = ['funes', 'recall', 'why']\n"
        "from funes.__main__ import main\n"
        "main()\n"
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", code_text], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None and proc.stdout.readline() == "loading\n"
    proc.send_signal(getattr(signal, sig))
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == code, err
    assert err.strip() == f"funes: {said}"


@pytest.mark.parametrize("size", ["1m", "150m"], ids=["first-write", "later-write"])
def test_a_model_cache_on_a_full_disk_is_a_clear_error_and_leaves_nothing_behind(
    isolated_env: Path, tmp_path: Path, size: str
) -> None:
    """Building the int8 graph on a full disk failed with onnxruntime's `INVALID_PROTOBUF :
    Protobuf serialization failed`, onnx's `DecodeError … Wire format was corrupt` or a bare
    `[Errno 28]`, naming neither the cache nor the variable. It is the cache's error: its path
    and the OS's reason, and nothing of the failed build is left there. The disk is a tmpfs
    of `size` in the process's own mount namespace (the build needs ~260 MB: 1m fails at its
    first write, 150m at a later one)."""
    from support.small_disk import run_on_small_disk

    write_session(isolated_env, conversation(PAIRS))
    disk = tmp_path / "disk"
    disk.mkdir()
    cache = disk / "models"
    env = {**os.environ, "FUNES_MODEL_CACHE": str(cache)}
    ran, left = run_on_small_disk(
        disk, size, [sys.executable, "-m", "funes", "index", "--yes"], env
    )
    assert ran.returncode == 1 and "Traceback" not in ran.stderr, ran.stderr
    lines = ran.stderr.strip().splitlines()
    assert lines[-2].startswith("funes: ") and lines[-2].endswith(
        f"the model cache {cache} cannot hold its int8 graph: No space left on device"
    ), ran.stderr
    assert lines[-1].strip().startswith("hint: free space"), ran.stderr
    assert "FUNES_MODEL_CACHE" in lines[-1], ran.stderr
    assert left == ["./models"], left  # no graph, manifest or build folder a later run could find


def test_a_funes_home_that_cannot_hold_folders_is_a_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """FUNES_HOME naming a file (or a place that cannot be created) is said with the folder,
    the OS's reason and the variable, exit 1: it was a NotADirectoryError traceback."""
    a_file = tmp_path / "afile"
    a_file.write_text("not a folder")
    for home in (a_file, a_file / "below"):
        monkeypatch.setenv("FUNES_HOME", str(home))
        for args in (("index",), ("add", "claude", "--force")):
            ran = funes(*args, check=False)
            assert ran.returncode == 1, (args, ran.stderr)
            assert "Traceback" not in ran.stderr, ran.stderr
            assert "for funes' files: Not a directory" in ran.stderr, ran.stderr
            assert "FUNES_HOME" in ran.stderr
        assert a_file.read_text() == "not a folder"


def test_index_says_how_many_blocks_it_cut_at_parse_time(
    isolated_env: Path, run: Callable[..., Ran]
) -> None:
    """A block over 200,000 characters is kept cut to its first 200,000 (marked in the text,
    README says so), but the index summary did not count the cuts: a user could not tell
    that some output was stored in part. Said only when non-zero."""
    write_session(
        isolated_env,
        conversation([("user", "dump the log"), ("assistant", "x " * 100_001), *PAIRS[:1]]),
    )
    first = run("index", "--yes")
    assert first.returncode == 0, first.stderr
    said = " ".join(first.stderr.split())
    assert "cut 1 block longer than 200,000 characters to the first 200,000" in said
    assert "cut " not in run("index", "--yes").stderr  # nothing read again, nothing cut


def test_a_memory_whose_lock_file_cannot_be_opened_is_a_clear_error_and_still_reads(
    isolated_env: Path, run: Callable[..., Ran]
) -> None:
    """Writers open memory.lock first: one that cannot be opened (a read-only FUNES_HOME, no
    permission, a directory in its place) was filelock's OSError traceback from index,
    forget and every other writer."""
    write_session(isolated_env, conversation(PAIRS))
    assert run("index", "--yes").returncode == 0
    lock = Paths.resolve().lock_file
    lock.unlink()
    lock.mkdir()
    for args in (("index", "--yes"), ("forget", "--before", "2020-01-01", "--yes")):
        out = run(*args)
        assert out.returncode == 1 and "Traceback" not in out.stderr, out.stderr
        first, hint = out.stderr.strip().splitlines()[-2:]
        assert first.startswith("funes: cannot write to this memory") and str(lock) in first
        assert "FUNES_HOME" in hint and "recall" in hint, hint
    assert "OOM-killed" in run("recall", "why does the nightly export die").stdout


def test_a_read_only_funes_home_is_a_clear_error_for_writers(isolated_env: Path) -> None:
    """The same through a real read-only mount of FUNES_HOME (a mount namespace of its own;
    skipped where none can be made)."""
    import shutil

    if shutil.which("unshare") is None:
        pytest.skip("no `unshare`: no read-only mount for one process here")
    write_session(isolated_env, conversation(PAIRS))
    funes("index", "--yes")
    home = Path(os.environ["FUNES_HOME"])
    script = 'mount --bind "$1" "$1" && mount -o remount,ro,bind "$1" "$1" || exit 97; shift; "$@"'
    for prefix in (["unshare", "--user", "--map-root-user", "--mount"], ["unshare", "--mount"]):
        out = subprocess.run(
            [
                *prefix,
                "sh",
                "-c",
                script,
                "sh",
                str(home),
                sys.executable,
                "-m",
                "funes",
                "index",
                "--yes",
            ],  # fmt: skip
            capture_output=True,
            text=True,
            timeout=300,
        )
        if out.returncode != 97 and "unshare:" not in out.stderr:
            break
    else:
        pytest.skip("no mount namespace with a read-only bind mount here")
    assert out.returncode == 1 and "Traceback" not in out.stderr, out.stderr
    first, hint = out.stderr.strip().splitlines()[-2:]
    assert first.startswith("funes: cannot ") and str(home) in first, first
    assert hint.strip().startswith("hint: "), hint


def test_an_indexed_folder_names_the_jsonl_files_it_passed_over(
    isolated_env: Path, run: Callable[..., Ran]
) -> None:
    """`funes index FOLDER` said `1 of 1 session file` beside an empty .jsonl and one of
    random bytes, without a word of them."""
    session = write_session(isolated_env, conversation(PAIRS))
    folder = session.parent
    assert "passed over" not in run("index", str(folder), "--yes").stderr
    (folder / "empty.jsonl").write_bytes(b"")
    (folder / "noise.jsonl").write_bytes(bytes(range(256)) * 8)
    out = run("index", str(folder), "--yes")
    assert out.returncode == 0, out.stderr
    line = next(x for x in out.stderr.splitlines() if "passed over" in x)
    assert "passed over 2 .jsonl files that hold no transcript funes can read" in line
    assert str(folder / "empty.jsonl") in line and "and 1 more" in line


def test_a_budget_spent_on_vectors_says_what_is_left_not_zero_session_files() -> None:
    """The budget line said `0 session files not fully indexed yet` when every file was read
    and only vectors were owed (a new-user trial: 4,528 of them)."""
    from rich.console import Console

    from funes.cli.index import _summary
    from funes.commands.index import IndexOutcome
    from funes.ingest import IndexReport

    def said(report: IndexReport) -> str:
        console = Console(record=True, width=300, color_system=None)
        _summary(console, IndexOutcome(report, ["claude_code"], "local", "m", True, None))
        return next(x for x in console.export_text().splitlines() if "budget" in x)

    vectors = IndexReport(units_seen=3, vectors_owed=4528, budget_exhausted=True)
    line = said(vectors)
    assert "every session file is read; 4528 chunks still owe a vector" in line, line
    assert "0 session files" not in line and "funes index --yes" in line
    files = IndexReport(units_seen=3, units_pending=2, vectors_owed=9, budget_exhausted=True)
    assert "2 session files not fully indexed yet" in said(files)
