"""The Store's tombstone file: a memory's forgotten sessions and forget rules, kept beside it
(funes.store.forgotten_file) so that a memory built again at the same path keeps them. The
tombstones' SQL lives in forgetting.py.
"""

from __future__ import annotations

import logging
from pathlib import Path

from funes.store import forgetting, forgotten_file
from funes.store.forgetting import ForgetRule
from funes.store.meta import now_utc
from funes.store.upkeep import RedactionUpkeep

log = logging.getLogger(__name__)


class KeptTombstones(RedactionUpkeep):
    """Keeping the tombstones file in step with the `forgotten` table (the base of `Store`)."""

    @property
    def tombstones_path(self) -> Path | None:
        """The file beside this memory that keeps its tombstones (funes.store.forgotten_file);
        None for an in-memory database."""
        return None if str(self.path) == ":memory:" else forgotten_file.path_for(Path(self.path))

    def keep_tombstones(self) -> int:
        """Adopt the tombstones kept beside this memory that its table lacks (a memory built
        again at this path), deleting the sessions they forget, then write the file from the
        table when the two differ (a memory forgotten in before the file existed). Every
        writer runs this first (`writing`). Returns chunks deleted. Never raises for the file:
        one that cannot be read or written is logged and the table alone applies."""
        path = self.tombstones_path
        if path is None or not self._has_schema:
            return 0
        try:
            kept = forgotten_file.read(path)
        except (OSError, ValueError) as exc:
            log.warning("tombstones beside the memory not read (%s): %s", path, exc)
            return 0
        sessions = set(forgetting.forgotten_sessions(self._raw))
        rules = set(forgetting.summary(self._raw)[1])
        deleted = 0
        if kept is not None:
            new_rules = [
                r for r in sorted(set(kept[1]) - rules) if ForgetRule.decode(r) is not None
            ]
            doomed = set(kept[0]) - sessions
            for rule in map(ForgetRule.decode, new_rules):
                if rule is not None:
                    doomed.update(forgetting.sessions_matching(self._raw, rule))
            if doomed or new_rules:
                at = now_utc()
                with self._tx():
                    forgetting.record(self._raw, "session", sorted(doomed), at=at)
                    forgetting.record(self._raw, "rule", new_rules, at=at)
                    deleted = forgetting.delete_sessions(
                        self._raw,
                        sorted(doomed),
                        vectors=self._conn.vectors and self.model_id is not None,
                    )
                sessions |= doomed
                rules |= set(new_rules)
                if deleted:
                    self.purge_freed_text()
        if (sessions or rules) and (
            kept is None or (set(kept[0]), set(kept[1])) != (sessions, rules)
        ):
            self._save_tombstones()
        return deleted

    def _save_tombstones(self) -> None:
        """Write the file beside this memory from its table. Never raises (logged)."""
        path = self.tombstones_path
        if path is None or not self._has_schema:
            return
        sessions = forgetting.forgotten_sessions(self._raw)
        rules = forgetting.summary(self._raw)[1]
        try:
            forgotten_file.write(path, sessions, rules)
        except OSError as exc:
            log.warning("tombstones beside the memory not written (%s): %s", path, exc)
