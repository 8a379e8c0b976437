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
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[] [] True", out.stdout


def test_every_name_of_the_commands_face_is_its_module_s_object() -> None:
    import importlib

    import funes.commands as face
    from funes.commands.lazy import EXPORTS as exports

    assert sorted(exports) == sorted(face.__all__)
    for name, (module, attribute) in exports.items():
        owner = importlib.import_module(f"funes.commands.{module}")
        assert getattr(face, name) is getattr(owner, attribute), name
    try:
        face.no_such_command  # noqa: B018
    except AttributeError as exc:
        assert "no_such_command" in str(exc)
    else:
        raise AssertionError("an unknown name resolved")
