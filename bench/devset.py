"""The labelled dev set (../shared/bench/devset) as a funes TraceSource plus its questions.

`DevsetSource` reads `sessions.jsonl` directly (it does not depend on the parquet parser):
one unit per session, turn i of a session is `turns[i]` with `seq = i` and
`turn_id = "turn-<i>"`, so a stored chunk maps back to the gold `(session_id, turn)` through
`(chunk.session_id, chunk.seq)`. Harness, cwd, host and timestamps come from the file.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from funes.traces import Block, BlockType, Harness, ReadStats, Role, Turn, Unit, parse_ts

_REPO = Path(__file__).resolve().parent.parent
# ../shared next to the repository; a git worktree one level deeper (…/wt/<name>) looks one up.
_CANDIDATES = tuple(
    root / "shared" / "bench" / "devset" for root in (_REPO.parent, _REPO.parent.parent)
)
DEFAULT_DEVSET = next((c for c in _CANDIDATES if c.is_dir()), _CANDIDATES[0])


def resolve_devset(cli_value: str | None, env: Mapping[str, str] | None = None) -> Path:
    """--devset wins, then FUNES_DEVSET, then ../shared/bench/devset next to the repository."""
    env = os.environ if env is None else env
    if cli_value:
        return Path(cli_value).expanduser()
    if env.get("FUNES_DEVSET"):
        return Path(env["FUNES_DEVSET"]).expanduser()
    return DEFAULT_DEVSET


def turn_id_for(index: int) -> str:
    return f"turn-{index}"


@dataclass(frozen=True, slots=True)
class Question:
    qid: str
    question: str
    gold: tuple[tuple[str, int], ...]  # (session_id, turn index); empty for no-answer
    category: str
    block_type: str
    project: str
    vocab_mismatch: bool

    @property
    def answerable(self) -> bool:
        return bool(self.gold)


def load_questions(devset: Path) -> list[Question]:
    out = []
    with (devset / "questions.jsonl").open(encoding="utf-8") as f:
        for line in f:
            if not line.strip():
                continue
            q = json.loads(line)
            out.append(
                Question(
                    qid=q["qid"],
                    question=q["question"],
                    gold=tuple((g["session_id"], int(g["turn"])) for g in q["gold"]),
                    category=q["category"],
                    block_type=q["block_type"],
                    project=q["project"],
                    vocab_mismatch=bool(q["vocab_mismatch"]),
                )
            )
    return out


class DevsetSource:
    """The dev set's sessions.jsonl as a TraceSource (one unit per session, newest first)."""

    harness = Harness.PARQUET  # nominal; each turn carries its session's own harness

    def __init__(self, path: Path) -> None:
        self.path = path / "sessions.jsonl" if path.is_dir() else path
        self._sessions: dict[str, dict[str, Any]] = {}
        with self.path.open(encoding="utf-8") as f:
            for line in f:
                if line.strip():
                    s = json.loads(line)
                    s["_sig"] = hashlib.sha1(line.encode("utf-8")).hexdigest()[:16]
                    self._sessions[s["session_id"]] = s

    @property
    def sessions(self) -> dict[str, dict[str, Any]]:
        return self._sessions

    def last_activity(self) -> datetime:
        """The latest turn timestamp in the set (aware, UTC)."""
        stamps = [parse_ts(t["at"]) for s in self._sessions.values() for t in s["turns"]]
        return max(ts for ts in stamps if ts is not None)

    def fixed_now(self) -> datetime:
        """The reproducible "now" of recency scoring: one day after the last activity."""
        return self.last_activity() + timedelta(days=1)

    def units(self) -> Iterable[Unit]:
        for sid, s in self._sessions.items():
            started = parse_ts(s["started_at"])
            yield Unit(
                key=f"{self.path}#{sid}",
                signature=s["_sig"],
                harness=Harness.parse(s["harness"]) or Harness.PARQUET,
                path=self.path,
                sort_key=started.timestamp() if started else 0.0,
                session=sid,
            )

    def read(self, unit: Unit, stats: ReadStats) -> Iterator[Turn]:
        s = self._sessions[unit.session or ""]
        harness = Harness.parse(s["harness"]) or Harness.PARQUET
        for i, t in enumerate(s["turns"]):
            stats.records += 1
            blocks = tuple(
                Block.make(
                    BlockType(b["type"]),
                    b["text"],
                    tool_name=b.get("tool_name"),
                    tool_use_id=b.get("tool_use_id"),
                )
                for b in t["blocks"]
            )
            stats.turns += 1
            yield Turn(
                harness=harness,
                session_id=s["session_id"],
                turn_id=turn_id_for(i),
                seq=i,
                ts=t["at"],
                role=Role(t["role"]),
                blocks=blocks,
                source_path=f"{self.path}#{s['session_id']}",
                cwd=s.get("cwd"),
                host=s.get("host"),
            )

    def turns(self) -> Iterator[Turn]:
        """Every turn of every unit, in unit order (for chunk-text baselines)."""
        stats = ReadStats()
        for unit in self.units():
            yield from self.read(unit, stats)

    def unit_for_hook(self, payload: Mapping[str, object]) -> Unit | None:
        return None
