"""`funes status` through the CLI: what a push would hold back, as the memory changes; a named
memory that is not there."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest
from support.claude import write_claude_session
from support.cli import Ran

pytestmark = pytest.mark.models

# held back by the push gate's own detectors, let through by index-time redaction
LEAK = "The key you pasted (`opensesameforever`) returns 401"
ADVICE = "take the secret out of the transcript"


def _held_back(run: Callable[..., Ran]) -> tuple[int, str]:
    """(chunks a push would hold back, the agent-format report)."""
    report = json.loads(run("status", "--json").stdout)
    return report["push_held_back"], run("status", "--format", "agent").stdout


def test_status_follows_a_secret_taken_out_of_a_transcript_and_one_put_in(
    isolated_env: Path, run: Callable[..., Ran]
) -> None:
    written = write_claude_session(
        isolated_env / ".claude",
        [("user", "why does the ocelot login fail?"), ("assistant", LEAK)],
    )
    assert run("index", "--yes").returncode == 0
    held, agent = _held_back(run)
    assert held == 1 and ADVICE in agent

    # taken out: the re-read rewrites the chunk in place, and status no longer counts it
    text = written.path.read_text(encoding="utf-8")
    written.path.write_text(text.replace("opensesameforever", "the usual one"), encoding="utf-8")
    assert run("index", "--yes").returncode == 0
    held, agent = _held_back(run)
    assert held == 0 and ADVICE not in agent and "held back by the secrets gate" in agent

    # put back in: the same chunk rewritten again holds a secret, and status counts it
    written.path.write_text(text, encoding="utf-8")
    assert run("index", "--yes").returncode == 0
    held, agent = _held_back(run)
    assert held == 1 and ADVICE in agent


def test_status_of_a_named_memory_that_is_not_there_says_so_and_exits_1(
    isolated_env: Path, run: Callable[..., Ran], tmp_path: Path
) -> None:
    typo, empty = tmp_path / "typo.db", tmp_path / "no-memory-here"
    empty.mkdir()
    for args in (
        ("status", str(typo)),
        ("status", "--memory", str(typo), "--json"),
        ("status", str(empty), "--format", "agent"),
    ):
        out = run(*args)
        assert out.returncode == 1 and out.stdout == "", args
        first, hint = out.stderr.splitlines()
        assert first.startswith("funes: no memory at ") and hint.startswith("  hint: "), args
    assert run("status", str(typo)).stderr == run("recall", "x", "--memory", str(typo)).stderr

    # the local memory before its first index still says what to run
    local = run("status", "--format", "agent")
    assert local.returncode == 0 and "(no memory yet)" in local.stdout
    assert "next: funes index" in local.stdout


def _next_and_attention(run: Callable[..., Ran]) -> tuple[list[str], list[str]]:
    """(`next:` lines, `attention:` lines) of the agent-format status."""
    out = run("status", "--format", "agent")
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    return (
        [line.removeprefix("next: ") for line in lines if line.startswith("next: ")],
        [line.removeprefix("attention: ") for line in lines if line.startswith("attention: ")],
    )


def test_status_with_another_embedding_model_gives_the_next_step_recall_gives(
    isolated_env: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, run: Callable[..., Ran]
) -> None:
    """Status said `next: funes recall` when FUNES_EMBEDDER named another model than the
    memory's, and that recall then stopped (exit 1) on the mismatch. Status says so, and its
    next step is the hint recall's error gives, for a memory holding vectors and one not."""
    write_claude_session(isolated_env / ".claude")
    offline = os.environ["FUNES_EMBEDDER"]
    assert run("index", "--yes").returncode == 0
    monkeypatch.setenv("FUNES_EMBEDDER", "bge-small-en-v1.5")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "empty-hf"))  # it could not load either
    refused = run("recall", "database locked")
    assert refused.returncode == 1
    hint = refused.stderr.splitlines()[-1].removeprefix("  hint: ")
    steps, attention = _next_and_attention(run)
    assert steps[0] == hint and not any(step.startswith("funes recall") for step in steps)
    assert any(
        "built with" in line and "not BAAI/bge-small-en-v1.5" in line and "refuse it" in line
        for line in attention
    ), attention
    assert not any("embed" in line for line in attention), attention  # no index embeds it

    # a memory an offline first index stamped without a vector: index takes it over
    monkeypatch.setenv("FUNES_HOME", str(tmp_path / "second"))
    assert run("index", "--yes").returncode == 1  # bge cannot load offline: chunks, no vector
    monkeypatch.setenv("FUNES_EMBEDDER", offline)
    refused = run("recall", "database locked")
    assert refused.returncode == 1
    hint = refused.stderr.splitlines()[-1].removeprefix("  hint: ")
    steps, attention = _next_and_attention(run)
    assert steps[0] == hint and "`funes index`" in hint
    assert not any(step.startswith("funes recall") for step in steps), steps


def test_status_of_a_memory_whose_model_cannot_load_promises_no_embedding(
    isolated_env: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, run: Callable[..., Ran]
) -> None:
    """Offline, a first index with a model that is not cached stores the chunks and fails.
    Status then promised that the next `funes index` embeds them, and that index failed the
    same way. It says the model cannot load, and its next step is the index error's hint."""
    write_claude_session(isolated_env / ".claude")
    monkeypatch.setenv("FUNES_EMBEDDER", "bge-small-en-v1.5")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "empty-hf"))
    failed = run("index", "--yes")
    assert failed.returncode == 1
    hint = failed.stderr.splitlines()[-1].removeprefix("  hint: ")
    steps, attention = _next_and_attention(run)
    assert steps[0] == hint
    assert any(
        line.startswith("the embedding model cannot load (model bge-small-en-v1.5 is not cached")
        and "HF_HUB_OFFLINE" in line
        and "BM25" in line
        for line in attention
    ), attention
    assert not any("embed them" in line for line in attention), attention
    assert any("not searchable by meaning yet" in line for line in attention), attention


def test_status_through_a_model_cache_that_cannot_hold_the_graph_names_it_and_the_fix(
    isolated_env: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, run: Callable[..., Ran]
) -> None:
    """A FUNES_MODEL_CACHE that cannot hold the int8 graph: recall answers from BM25 and
    index cannot embed. Status names the cache and says what fixes it."""
    write_claude_session(isolated_env / ".claude")
    assert run("index", "--yes").returncode == 0
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("FUNES_MODEL_CACHE", str(blocker / "models"))
    steps, attention = _next_and_attention(run)
    assert any(
        line.startswith("the embedding model cannot load (")
        and f"the model cache {blocker / 'models'} cannot hold its int8 graph" in line
        for line in attention
    ), attention
    assert steps[0].startswith("point FUNES_MODEL_CACHE at a directory"), steps
    assert run("recall", "database locked").returncode == 0  # BM25, as status says


def test_status_with_an_unknown_embedder_reads_the_memory_and_names_the_variable(
    isolated_env: Path, monkeypatch: pytest.MonkeyPatch, run: Callable[..., Ran]
) -> None:
    """recall and index stop on a FUNES_EMBEDDER funes does not know; status says so, and
    still reads the memory (it is not damaged)."""
    write_claude_session(isolated_env / ".claude")
    assert run("index", "--yes").returncode == 0
    monkeypatch.setenv("FUNES_EMBEDDER", "bogus")
    assert run("recall", "database locked").stderr.startswith("funes: unknown embedder 'bogus'")
    out = run("status", "--format", "agent")
    assert (
        out.returncode == 0 and "chunks: ?" not in out.stdout and "cannot be read" not in out.stdout
    )
    steps, attention = _next_and_attention(run)
    assert any(line.startswith("FUNES_EMBEDDER: unknown embedder 'bogus'") for line in attention)
    assert steps[0] == "set FUNES_EMBEDDER to a known embedder, or unset it"


def _corrupt_hub_cache(hf_home: Path) -> Path:
    """An HF cache holding bge-small's files at its pinned revision, with other bytes than
    the pins (a damaged download); returns the tokenizer's blob, the file a load hashes
    first. Laid out as huggingface_hub lays it out: snapshot links into blobs/."""
    from funes.inference import BGE_SMALL

    repo = hf_home / "hub" / f"models--{BGE_SMALL.repo_id.replace('/', '--')}"
    snapshot = repo / "snapshots" / BGE_SMALL.revision
    (repo / "blobs").mkdir(parents=True)
    (snapshot / "onnx").mkdir(parents=True)
    for name, file in (("a" * 40, BGE_SMALL.tokenizer), ("b" * 40, BGE_SMALL.onnx)):
        blob = repo / "blobs" / name
        blob.write_bytes(b"not the pinned bytes")
        (snapshot / file.path).symlink_to(blob)
    return repo / "blobs" / ("a" * 40)


def test_status_names_a_corrupt_model_file_recall_falls_back_on_and_what_to_delete(
    isolated_env: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, run: Callable[..., Ran]
) -> None:
    """A model file in the HF cache whose bytes differ from its pin: index stores chunks
    without vectors and recall answers from BM25, with a note sending the user to `funes
    status`; status said nothing of the model. It says the model cannot load, why, and
    that deleting the cache's copy (the blob) fixes it, as the index error's hint does."""
    write_claude_session(isolated_env / ".claude")
    monkeypatch.setenv("FUNES_EMBEDDER", "bge-small-en-v1.5")
    from huggingface_hub import constants

    blob = _corrupt_hub_cache(tmp_path / "hf")
    # read at import: this process's cache is the one huggingface_hub holds
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "hf" / "hub"))
    failed = run("index", "--yes")
    assert failed.returncode == 1 and "sha256" in failed.stderr
    hint = failed.stderr.splitlines()[-1].removeprefix("  hint: ")
    assert f"delete {blob}" in hint
    recalled = run("recall", "database locked")
    assert recalled.returncode == 0 and "`funes status` says what fixes it" in recalled.stderr
    steps, attention = _next_and_attention(run)
    assert any(
        line.startswith("the embedding model cannot load (model bge-small-en-v1.5: tokenizer.json")
        and "sha256" in line
        and "BM25" in line
        for line in attention
    ), attention
    assert steps[0] == hint


def test_status_with_funes_home_a_file_says_what_index_says_not_the_model_cache(
    isolated_env: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, run: Callable[..., Ran]
) -> None:
    """FUNES_HOME naming a file: index and add stop on `cannot use <dir> for funes' files`
    with a hint naming FUNES_HOME, while status blamed FUNES_MODEL_CACHE (the models live
    under <data>/models). Status says what index says, its hint first, and creates nothing."""
    monkeypatch.delenv("FUNES_MODEL_CACHE")  # the default cache: <data>/models
    a_file = tmp_path / "afile"
    a_file.write_text("not a folder")
    for home in (a_file, a_file / "below"):
        monkeypatch.setenv("FUNES_HOME", str(home))
        refused = run("index")
        assert refused.returncode == 1
        message, hint = refused.stderr.splitlines()[-2:]
        assert message.startswith("funes: cannot use ") and "FUNES_HOME" in hint
        steps, attention = _next_and_attention(run)
        assert attention == [message.removeprefix("funes: ")], attention
        assert steps == [hint.removeprefix("  hint: ")], steps
        assert a_file.read_text() == "not a folder"
