"""Watch folders with a watchdog observer and report which ones changed, debounced.

The only module that imports watchdog. It knows nothing of agents or the spool: each root
carries a key (an agent's harness value, or "spool"), a recursion flag and a file-name filter,
and `Watcher.run` calls `on_change(keys)` from the calling thread once a root has been quiet for
`debounce_s` after its last event. Reads (open / close-without-write) are ignored, so the
indexer reading a transcript never triggers itself. Roots that do not exist yet are picked up
when they appear (checked every `rescan_s`).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

log = logging.getLogger(__name__)

_CHANGES = frozenset({"created", "modified", "moved", "deleted", "closed"})


@dataclass(frozen=True, slots=True)
class WatchRoot:
    """One folder to observe."""

    key: str  # what `on_change` is told
    path: Path
    recursive: bool = True
    match: Callable[[str], bool] | None = None  # file name filter; None = any file
    creations_only: bool = False  # only files appearing (created / moved in), e.g. a spool


class Watcher:
    """A watchdog observer over `roots` that batches their events per key."""

    def __init__(
        self,
        roots: Sequence[WatchRoot],
        on_change: Callable[[set[str]], None],
        *,
        debounce_s: float = 2.0,
        rescan_s: float = 10.0,
    ) -> None:
        self.roots = list(roots)
        self.on_change = on_change
        self.debounce_s = debounce_s
        self.rescan_s = rescan_s
        self._lock = threading.Lock()
        self._last_event: dict[str, float] = {}
        self.ready = threading.Event()  # set once every existing root is scheduled

    def _record(self, key: str) -> None:
        with self._lock:
            self._last_event[key] = time.monotonic()

    def _due(self) -> set[str]:
        now = time.monotonic()
        with self._lock:
            keys = {k for k, t in self._last_event.items() if now - t >= self.debounce_s}
            for k in keys:
                del self._last_event[k]
        return keys

    def _handler(self, root: WatchRoot) -> object:
        from watchdog.events import FileSystemEventHandler

        watcher = self

        class Handler(FileSystemEventHandler):
            def on_any_event(self, event: object) -> None:
                kind = getattr(event, "event_type", "")
                if kind not in _CHANGES or getattr(event, "is_directory", False):
                    return
                if root.creations_only and kind not in ("created", "moved"):
                    return
                path = getattr(event, "dest_path", "") or getattr(event, "src_path", "")
                if isinstance(path, bytes):
                    path = path.decode(errors="replace")
                if root.creations_only and Path(path).parent != root.path:
                    return
                if root.match is not None and not root.match(Path(path).name):
                    return
                watcher._record(root.key)

        return Handler()

    def run(self, stop: threading.Event) -> None:
        """Observe until `stop` is set; call `on_change` (in this thread) for quiet, changed keys."""
        from watchdog.observers import Observer

        observer = Observer()
        scheduled: set[Path] = set()

        def schedule_existing() -> None:
            for root in self.roots:
                if root.path in scheduled or not root.path.is_dir():
                    continue
                try:
                    observer.schedule(self._handler(root), str(root.path), recursive=root.recursive)  # type: ignore[arg-type]
                except OSError as exc:  # e.g. the inotify watch limit
                    log.warning("cannot watch %s: %s", root.path, exc)
                    continue
                scheduled.add(root.path)
                if root.path not in {r.path for r in self.roots if r.key == "spool"}:
                    self._record(root.key)  # a root that just appeared may already hold sessions

        schedule_existing()
        observer.start()
        self.ready.set()
        next_scan = time.monotonic() + self.rescan_s
        try:
            while not stop.wait(0.2):
                if time.monotonic() >= next_scan:
                    schedule_existing()
                    next_scan = time.monotonic() + self.rescan_s
                due = self._due()
                if due:
                    self.on_change(due)
        finally:
            observer.stop()
            observer.join(timeout=5)
