"""`funes watch`: index as files change, for agents or setups where hooks cannot fire.

Observes the spool's new/ folder and every registered agent's session folders. A change in an
agent's folder becomes a sweep entry in the spool (so hooks, `funes index` and `watch` share
one drain path and one worker lock); then the spool is drained. Stops when `stop` is set.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from funes.commands.spool import run_drain
from funes.memory import Runtime
from funes.settings import SPOOL, SpoolParams
from funes.traces import AGENTS

if TYPE_CHECKING:  # loaded where used: a verb imports only what it runs
    from funes.ingest import DrainReport, WatchRoot


@dataclass(slots=True)
class WatchReport:
    """What a watch session did."""

    roots: list[str] = field(default_factory=list)  # folders observed (or waited for)
    rounds: int = 0  # debounced change batches handled
    chunks_written: int = 0
    busy_rounds: int = 0  # rounds left to a running hook worker


def watch_roots(rt: Runtime) -> list[WatchRoot]:
    """The spool's new/ folder and the session folders of every registered agent."""
    from funes.ingest import Spool, WatchRoot

    spool = Spool(rt.paths.spool).ensure()
    roots = [
        WatchRoot(
            "spool",
            spool.new,
            recursive=False,
            match=lambda n: n.endswith(".json"),
            creations_only=True,
        )
    ]
    for harness, folders in rt.homes.session_roots().items():
        agent = AGENTS[harness]
        for folder in folders:
            roots.append(
                WatchRoot(
                    harness.value,
                    folder,
                    recursive=agent.watch_recursive,
                    match=agent.is_session_file,
                )
            )
    return roots


def run_watch(
    rt: Runtime,
    stop: threading.Event,
    *,
    params: SpoolParams = SPOOL,
    on_round: Callable[[set[str], DrainReport], None] | None = None,
    ready: threading.Event | None = None,
) -> WatchReport:
    """Watch and index until `stop` is set (see the module docstring)."""
    from funes.ingest import Spool, SpoolEntry, Watcher

    roots = watch_roots(rt)
    report = WatchReport(roots=[str(r.path) for r in roots])
    spool = Spool(rt.paths.spool)
    drain_params = replace(params, idle_exit_s=0.0)

    def on_change(keys: set[str]) -> None:
        for agent in sorted(keys - {"spool"}):
            spool.enqueue(SpoolEntry(agent=agent, event="watch", received_at=time.time()))
        drained = run_drain(rt, wait_lock_s=1.0, params=drain_params)
        report.rounds += 1
        report.chunks_written += drained.chunks_written
        report.busy_rounds += drained.busy
        if on_round is not None:
            on_round(keys, drained)

    watcher = Watcher(roots, on_change, debounce_s=params.watch_debounce_s)
    if ready is not None:

        def relay(done: threading.Event) -> None:
            watcher.ready.wait()
            done.set()

        threading.Thread(target=relay, args=(ready,), daemon=True).start()
    watcher.run(stop)
    return report
