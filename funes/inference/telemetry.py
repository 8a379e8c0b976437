"""onnxruntime's telemetry, kept off in every funes process.

onnxruntime 1.29 and later collect telemetry on Linux and macOS too: the first model a process
loads writes a persistent device id and an event queue under ~/.cache/Microsoft/DeveloperTools
and starts a thread that uploads the events to Microsoft. A local memory of someone's
transcripts phones nobody. onnxruntime reads its opt-out, the ORT_DISABLE_TELEMETRY
environment variable, when it is first imported: every module of funes that imports it calls
`keep_off` first (tests/inference/test_telemetry.py).
"""

from __future__ import annotations

import os


def keep_off() -> None:
    """Set ORT_DISABLE_TELEMETRY=1 in this process's environment (and so its children's),
    unless the user set it: their value is kept."""
    os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
