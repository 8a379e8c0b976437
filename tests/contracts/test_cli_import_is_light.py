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
