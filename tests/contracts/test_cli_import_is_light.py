from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest


def test_importing_the_cli_does_not_load_models_or_heavy_libraries() -> None:
    code = (
        "import sys, funes.cli; "
        "print(sorted(m for m in ('onnxruntime', 'tokenizers', 'huggingface_hub', 'pyarrow', 'lance', 'mcp', 'watchdog') if m in sys.modules))"
    )
    out = _python(code)
    assert out.stdout.strip() == "[]"


def test_funes_version_loads_no_command() -> None:
    """Subcommands load when they run (funes.cli.main LazyGroup): `--version` imports none."""
    code = (
        "import sys; from funes.cli import main\n"
        "try:\n    main(['--version'])\nexcept SystemExit:\n    pass\n"
        "print(sorted(m for m in sys.modules if m.startswith('funes.') and m.count('.') >= 1))"
    )
    out = _python(code)
    assert out.stdout.strip().endswith(
        "['funes.cli', 'funes.cli.common', 'funes.cli.main', 'funes.errors', 'funes.stdio']"
    ), out.stdout


def test_the_memory_layer_loads_the_remote_machinery_only_for_a_remote_memory() -> None:
    code = (
        "import sys, funes.memory\n"
        "rt = funes.memory.Runtime.resolve()\n"
        "funes.memory.parse_memory(None, rt)\n"
        "print(sorted(m for m in ('funes.remote', 'rich', 'lance', 'pyarrow') if m in sys.modules))"
    )
    out = _python(code)
    assert out.stdout.strip() == "[]", out.stdout


def test_the_recall_verb_loads_no_indexing_sharing_or_wiring_code() -> None:
    """`funes recall` imports its command module and what recall runs; the write path
    (funes.ingest), sharing (funes.remote) and agent wiring (funes.wiring) load only in the
    verbs that use them."""
    code = (
        "import sys, funes.cli.recall\n"
        "print(sorted(m for m in ('funes.ingest', 'funes.remote', 'funes.wiring', 'watchdog', "
        "'rich', 'pyarrow') if m in sys.modules))"
    )
    out = _python(code)
    assert out.stdout.strip() == "[]", out.stdout


def test_the_commands_face_loads_a_verb_module_only_when_a_name_of_it_is_used() -> None:
    """funes.commands names every verb's entry points but imports each module on first use:
    `funes recall` does not load add, ask, index, forget, status, spool or watch."""
    code = (
        "import sys, funes.commands as c\n"
        "before = sorted(m for m in sys.modules if m.startswith('funes.commands.') and m != 'funes.commands.lazy')\n"
        "c.run_recall\n"
        "after = {m for m in sys.modules if m.startswith('funes.commands.')}\n"
        "print(before, sorted(m for m in ('add', 'ask', 'index', 'forget', 'status', 'spool', "
        "'watch') if 'funes.commands.' + m in after), 'funes.commands.recall' in after)"
    )
    out = _python(code)
    assert out.stdout.strip() == "[] [] True", out.stdout


def test_the_recall_verb_loads_neither_the_publish_gate_nor_the_sharing_sql() -> None:
    """The store's and the secret scanner's faces load a module on first use: recall opens a
    Store and may redact an outdated row, but the fail-closed publish gate (funes.redact.gate),
    the push outbox and receipts (funes.store.export) and a project memory's review
    (funes.store.curation) load only in the verbs that use them (issue 15: cold start)."""
    code = (
        "import sys, funes.cli.recall\n"
        "from funes.store import Store\n"
        "from funes.redact import default_scanner, redact\n"
        "print(sorted(m for m in ('funes.redact.gate', 'funes.store.export', "
        "'funes.store.curation', 'calendar', 'funes.retrieval.sessions') if m in sys.modules))"
    )
    out = _python(code)
    assert out.stdout.strip() == "[]", out.stdout


@pytest.mark.parametrize(
    "package",
    [
        "funes.commands",
        "funes.memory",
        "funes.traces",
        "funes.store",
        "funes.redact",
        "funes.retrieval",
    ],
)
def test_every_name_of_a_lazy_face_is_its_module_s_object(package: str) -> None:
    import importlib

    face = importlib.import_module(package)
    exports = importlib.import_module(f"{package}.lazy").EXPORTS

    assert sorted(exports) == sorted(face.__all__)
    # every module first: importing `funes.memory.state` must not hide the `state` function
    for _, (module, _) in exports.items():
        importlib.import_module(f"{package}.{module}")
    for name, (module, attribute) in exports.items():
        owner = importlib.import_module(f"{package}.{module}")
        assert getattr(face, name) is getattr(owner, attribute), name
    try:
        face.no_such_name  # noqa: B018
    except AttributeError as exc:
        assert "no_such_name" in str(exc)
    else:
        raise AssertionError("an unknown name resolved")


PARSERS = ("claude_code", "codex", "pi", "hermes", "hermes_jsonl", "hermes_db", "parquet")


def test_reading_a_memory_loads_no_transcript_parser_nor_other_verbs() -> None:
    """`funes recall` resolves the agents' homes (the registry) and renders a recall without
    loading any agent's parsing code, the status verb, the stdlib sqlite3 module that the
    sqlite_vec package imports, or socket for the host name (issue 15: cold start)."""
    code = (
        f"PARSERS = {PARSERS!r}\n"
        "import sys, funes.cli.recall, funes.memory, funes.render.agent\n"
        "from funes.store.db import connect\n"
        "rt = funes.memory.Runtime.resolve()\n"
        "rt.homes.of(funes.traces.Harness.CODEX)\n"
        "assert connect(':memory:').vectors\n"
        "parsers = [m for m in sys.modules if m.split('.')[-1] in PARSERS and m.startswith('funes.traces.')]\n"
        "print(sorted(parsers), 'funes.commands.status' in sys.modules, "
        "'sqlite_vec' in sys.modules, 'sqlite3' in sys.modules, 'socket' in sys.modules)"
    )
    out = _python(code)
    assert out.stdout.strip() == "[] False False False False", out.stdout + out.stderr


def test_a_recall_whose_model_files_were_verified_loads_no_hash_library(tmp_path: Path) -> None:
    """hashlib (OpenSSL, ~4 ms) loads only to hash: a recall whose model files a load
    verified before (their stamps) reads the stamps and hashes nothing, in the parent
    (tokenizer) as in the prefetch child (graph, weights) (issue 15: cold start)."""
    weights = tmp_path / "weights.bin"
    weights.write_bytes(b"not really a model")
    import hashlib

    verified = (
        "import sys, funes.cli.recall, funes.memory, funes.render.agent\n"
        "from pathlib import Path\n"
        "from funes.inference.files import verify\n"
        "from funes.inference.spec import MINILM_L6_INT8_PKG\n"
        "from funes.inference.quantize import cached_graph\n"
        "funes.memory.Runtime.resolve()\n"
        f"weights, stamps = Path({str(weights)!r}), Path({str(tmp_path / 'stamps')!r})\n"
        f"verify(MINILM_L6_INT8_PKG, weights, {hashlib.sha256(weights.read_bytes()).hexdigest()!r}, "
        "stamps)\n"
        "cached_graph(MINILM_L6_INT8_PKG, stamps)\n"
        "print('hashlib' in sys.modules)"
    )
    assert _python(verified).stdout.strip() == "True"  # the first load hashes the file
    out = _python(verified)  # a later one finds its stamp
    assert out.stdout.strip() == "False", out.stdout + out.stderr


def test_the_agent_registry_loads_a_parser_when_it_is_used(tmp_path: Path) -> None:
    from funes.traces import AGENTS, Harness
    from funes.traces.claude_code import ClaudeCodeSource

    source = AGENTS[Harness.CLAUDE_CODE].source(tmp_path)
    assert isinstance(source, ClaudeCodeSource)
    assert AGENTS[Harness.PI].sniff({"type": "session", "version": 3}) in (True, False)


def _python(code: str) -> subprocess.CompletedProcess[str]:
    """`code` run in a fresh interpreter (nothing imported yet); raises when it fails."""
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
