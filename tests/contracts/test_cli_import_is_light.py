from __future__ import annotations

import subprocess
import sys


def test_importing_the_cli_does_not_load_models_or_heavy_libraries() -> None:
    code = (
        "import sys, funes.cli; "
        "print(sorted(m for m in ('onnxruntime', 'tokenizers', 'huggingface_hub', 'pyarrow', 'lance', 'mcp', 'watchdog') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_funes_version_loads_no_command() -> None:
    """Subcommands load when they run (funes.cli.main LazyGroup): `--version` imports none."""
    code = (
        "import sys; from funes.cli import main\n"
        "try:\n    main(['--version'])\nexcept SystemExit:\n    pass\n"
        "print(sorted(m for m in sys.modules if m.startswith('funes.') and m.count('.') >= 1))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip().endswith(
        "['funes.cli', 'funes.cli.common', 'funes.cli.main', 'funes.errors']"
    ), out.stdout


def test_the_memory_layer_loads_the_remote_machinery_only_for_a_remote_memory() -> None:
    code = (
        "import sys, funes.memory\n"
        "rt = funes.memory.Runtime.resolve()\n"
        "funes.memory.parse_memory(None, rt)\n"
        "print(sorted(m for m in ('funes.remote', 'rich', 'lance', 'pyarrow') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
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
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out.stdout
