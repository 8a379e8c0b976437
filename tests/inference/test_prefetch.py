"""A cold recall's query model loaded in a forked child (funes.inference.prefetch): the same
vector as in process, the parent never loading the model, and every way short of it falling
back to the in-process embedding with no child left behind.

Each case runs in a fresh interpreter, as the console script does: pytest's own process has
onnxruntime imported and threads running, where no child is forked."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from funes.inference import MINILM_L6_INT8_PKG
from funes.inference.onnx_backend import OnnxEmbedder

pytestmark = [
    pytest.mark.models,
    pytest.mark.skipif(sys.platform != "linux", reason="the child is forked on Linux only"),
]

QUERY = "why did the nightly backfill hit EMFILE on the station directories?"

# argv: mode, the query sent to the child, the query then embedded. Prints one JSON line:
# whether the child was asked (and its pid), the vector embed_query returned, whether this
# process imported onnxruntime or loaded the model.
SCRIPT = """
import json, sys, threading
from funes.commands.recall import RecallRequest, prefetch_query
from funes.inference.prefetch import take_warm, warm_up
from funes.inference import ready_query_model
from funes.memory import Runtime

mode, query, asked = sys.argv[1], sys.argv[2], sys.argv[3]
if mode == "thread":
    stop = threading.Event()
    threading.Thread(target=stop.wait, daemon=True).start()
if mode != "no-warm-up":
    warm_up(ready_query_model)  # as the console script does first thing for `funes recall`
if mode in ("other-model", "text-only"):
    child = take_warm()
    model = "some-other-model" if mode == "other-model" else Runtime.resolve().models.embedder
    child.ask(model, query)  # no tokens: the child tokenizes the text itself
    sent = child.result(384)  # float32 bytes, little-endian
    import numpy as np
    vector = None if sent is None else np.frombuffer(sent, "<f4").tolist()
    print(json.dumps({"child": child.pid, "vector": vector}))
    sys.exit(0)
if mode == "stuck":  # the child stops dead: the parent waits a bounded time, then embeds
    import os, signal
    from funes.inference import prefetch
    prefetch.ANSWER_WAIT_S = 1.0
    os.kill(prefetch._warm.pid, signal.SIGSTOP)
if mode == "default-not-local":  # FUNES_EMBEDDER unset, the default model not downloaded
    from funes.inference import prefetch
    child = prefetch._warm.pid if prefetch._warm is not None else None
    embedder = prefetch_query(Runtime.resolve(), RecallRequest(query))
    print(json.dumps({"child": child, "asked_child": embedder is not None}))
    sys.exit(0)
if mode == "unasked":
    from funes.inference import prefetch
    print(json.dumps({"child": prefetch._warm.pid}))
    sys.exit(0)  # the child is stopped at exit
rt = Runtime.resolve()
embedder = prefetch_query(rt, RecallRequest(query))
asked_child = embedder is not None
child = embedder._prefetch.pid if asked_child else None
embedder = embedder or rt.embedder(rt.embedder_spec_for(None))
vector = embedder.embed_query(asked) if mode != "cancel" else []
embedder.cancel_prefetch()
print(json.dumps({
    "asked_child": asked_child,
    "child": child,
    "vector": [float(x) for x in vector],
    "ort_imported": "onnxruntime" in sys.modules,
    "model_loaded": embedder.loaded,
}))
if mode == "thread":
    stop.set()
"""


def _run(mode: str, asked: str = QUERY) -> dict[str, object]:
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, mode, QUERY, asked],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    result: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    if result.get("child") is not None:  # reaped by its parent: neither running nor a zombie
        assert not Path(f"/proc/{result['child']}").exists()
    return result


@pytest.fixture
def in_process() -> list[float]:
    """The query's vector embedded here (this also builds the int8 graph into the run's
    shared model cache, which the child needs ready)."""
    embedder = OnnxEmbedder(MINILM_L6_INT8_PKG)
    return [float(x) for x in embedder.embed_query(QUERY)]


def test_the_child_sends_the_in_process_vector_and_the_parent_never_loads_the_model(
    in_process: list[float],
) -> None:
    got = _run("warm")
    assert got["asked_child"] is True
    assert got["vector"] == in_process  # bit for bit: the same code on the same session options
    assert got["ort_imported"] is False  # the vector came through the pipe
    assert got["model_loaded"] is False


def test_another_query_discards_the_child_and_embeds_in_process(in_process: list[float]) -> None:
    got = _run("warm", asked="something else entirely")
    assert got["asked_child"] is True
    assert got["model_loaded"] is True
    expected = OnnxEmbedder(MINILM_L6_INT8_PKG).embed_query("something else entirely")
    assert got["vector"] == [float(x) for x in expected]


def test_a_child_asked_for_another_model_sends_nothing(in_process: list[float]) -> None:
    got = _run("other-model")
    assert got["vector"] is None


def test_a_child_sent_the_text_alone_tokenizes_it_itself(in_process: list[float]) -> None:
    got = _run("text-only")
    assert got["vector"] == in_process


def test_query_tokens_give_the_query_vector_bit_for_bit() -> None:
    from funes.inference.tokens import query_tokens

    embedder = OnnxEmbedder(MINILM_L6_INT8_PKG)
    for query in (QUERY, "ok", "word " * 300):  # the last one is cut at the recipe's cap
        tokens = query_tokens(MINILM_L6_INT8_PKG, query)
        assert np.array_equal(embedder.embed_query_tokens(tokens), embedder.embed_query(query))


def test_a_stuck_child_is_stopped_and_the_parent_embeds_the_query(
    in_process: list[float],
) -> None:
    got = _run("stuck")
    assert got["asked_child"] is True
    assert got["model_loaded"] is True
    assert got["vector"] == in_process


def test_a_default_model_not_on_this_machine_is_not_tokenized_from_the_hub(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # the parent tokenized the query with the default model's tokenizer, which went to the Hub
    # (with retries) for a model the recall might not even use
    monkeypatch.delenv("FUNES_EMBEDDER")
    monkeypatch.setenv("HF_HUB_CACHE", "/nonexistent/hub-cache")
    got = _run("default-not-local")
    assert got["asked_child"] is False


def test_a_child_nobody_asks_is_stopped_at_exit(in_process: list[float]) -> None:
    # `funes recall --help`, a usage error: the child is killed and reaped when the parent exits
    got = _run("unasked")
    assert got["child"] is not None


def test_a_child_whose_vector_is_not_wanted_is_stopped_and_reaped(in_process: list[float]) -> None:
    # a memory of another model, or without vectors: recall never asks; the CLI cancels
    got = _run("cancel")
    assert got["asked_child"] is True
    assert got["model_loaded"] is False


def test_a_model_not_ready_offline_is_loaded_by_the_parent(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, in_process: list[float]
) -> None:
    # an empty model cache: the int8 graph would have to be built, which the child leaves to
    # the parent (it reports progress and failures; a killed child would leave a partial file)
    monkeypatch.setenv("FUNES_MODEL_CACHE", str(tmp_path / "empty-cache"))
    got = _run("warm")
    assert got["asked_child"] is True
    assert got["model_loaded"] is True
    assert got["vector"] == in_process


@pytest.mark.parametrize("mode", ["thread", "no-warm-up"])
def test_without_a_child_the_model_loads_in_process(mode: str, in_process: list[float]) -> None:
    # a process with a thread running is not forked; a caller other than the console script
    # has no child to ask
    got = _run(mode)
    assert got["asked_child"] is False
    assert got["model_loaded"] is True
    assert got["vector"] == in_process


def test_a_process_that_imported_onnxruntime_is_not_forked() -> None:
    import onnxruntime  # noqa: F401 - its thread pools would not survive a fork

    from funes.inference.prefetch import can_fork

    assert can_fork() is False


def test_a_parent_killed_while_the_child_loads_takes_the_child_with_it() -> None:
    """A parent killed before its exit handlers could stop the child (SIGKILL, a SIGTERM before
    the CLI's handler: new-user trial) left it loading the model on its own for seconds; the
    kernel now kills it with its parent (the loader here sleeps a minute)."""
    script = (
        "import os, signal, time\n"
        "from funes.inference import prefetch\n"
        "prefetch.warm_up(lambda: time.sleep(60))\n"
        "print(prefetch._warm.pid, flush=True)\n"
        "os.kill(os.getpid(), signal.SIGKILL)\n"
    )
    ran = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert ran.returncode == -signal.SIGKILL, ran.stderr
    child = int(ran.stdout)
    deadline = time.monotonic() + 5.0
    while _running(child) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _running(child)


def _running(pid: int) -> bool:
    """Whether `pid` is a live process (not gone, not a zombie waiting to be reaped)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"
