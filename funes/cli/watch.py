"""`funes watch`: keep indexing as agents write sessions (for setups where hooks cannot fire)."""

from __future__ import annotations

import signal
import threading
from types import FrameType

import click

from funes.cli.common import err_console, pass_runtime
from funes.commands import run_watch
from funes.ingest import DrainReport
from funes.memory import Runtime
from funes.plurals import counted


@click.command()
@pass_runtime
def watch(rt: Runtime) -> None:
    """Watch the agents' session folders and the hook spool; index changes as they happen.

    Use it where hooks cannot fire (pi without the extension, a declined hook). Stops cleanly
    on Ctrl-C or SIGTERM (a second signal stops at once; nothing indexed so far is lost).
    """
    console = err_console()
    stop = threading.Event()
    ready = threading.Event()

    def on_signal(signum: int, frame: FrameType | None) -> None:
        if stop.is_set():
            raise KeyboardInterrupt
        stop.set()

    previous = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGINT, signal.SIGTERM)}

    def on_round(keys: set[str], drained: DrainReport) -> None:
        what = ", ".join(sorted(keys))
        console.print(
            f"{what}: {counted(drained.chunks_written, 'new chunk')}"
            + (" (a hook worker is on it)" if drained.busy else ""),
            highlight=False,
        )

    def announce() -> None:
        ready.wait()
        if not stop.is_set():
            console.print(
                "watching agent sessions and the hook spool (Ctrl-C to stop)", highlight=False
            )

    threading.Thread(target=announce, daemon=True).start()
    try:
        report = run_watch(rt, stop, on_round=on_round, ready=ready)
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    console.print(
        f"stopped: {counted(report.rounds, 'round')}, {counted(report.chunks_written, 'chunk')} "
        "indexed",
        highlight=False,
    )
