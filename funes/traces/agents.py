"""One record per agent: everything funes knows about an agent that is not parsing code.

Every place that needs to know the agents reads `AGENTS`: discovery (`discover`,
`sources_for_path`), the agents' homes and their override variables (`AgentHomes`), `funes
watch` (session folders and file names), `funes add/remove/status` (the installer module),
the MCP tools' harness filter and the hook script (both checked against it by
tests/traces/test_agents.py, because they must stay free of funes imports). Adding an agent
= a `Harness` value, a record here, a parser module beside this one, and an installer in the
top-level `installers/` folder.

The agent-traces Parquet import is a record too (no home, no installer): `funes index PATH`
recognises its files the way it recognises each agent's.
"""

from __future__ import annotations

import fnmatch
import importlib
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from funes.paths import environment, user_home
from funes.traces.model import Harness, Turn
from funes.traces.source import ReadStats, TraceSource, Unit

FileReader = Callable[[Path, ReadStats], Iterator[Turn]]


def _parser(module: str, name: str) -> Callable[..., Any]:
    """`name` of the parser module funes.traces.`module`, imported on the first call: the
    registry names every agent's parsing code, and a command that never parses (`funes
    recall`, `get`, `status`: homes and labels only) loads none of it (issue 15: cold start)."""

    def call(*args: Any, **kwargs: Any) -> Any:
        return getattr(importlib.import_module(f"funes.traces.{module}"), name)(*args, **kwargs)

    call.__name__ = call.__qualname__ = name
    return call


@dataclass(frozen=True, slots=True)
class Agent:
    """One agent (or import format) funes reads sessions from."""

    harness: Harness  # the stored facet
    name: str  # the name on the command line (`funes add claude`)
    label: str  # the name people use ("Claude Code")
    source: Callable[[Path], TraceSource]  # the source over the agent's home
    sniff: Callable[[Mapping[str, Any]], bool]  # does this first JSONL record belong to it?
    read_file: FileReader | None = None  # parse one JSONL file of it (None: not file-based)
    file_unit: Callable[[Path], Unit | None] | None = None  # its Unit of one file (None: plain)
    home_var: str | None = None  # the agent's own override of its home (None: no home)
    home_default: tuple[str, ...] = ()  # its home under the user's HOME
    session_dirs: tuple[str, ...] = ()  # under its home, where it writes sessions ("": the home)
    session_files: tuple[str, ...] = ("*.jsonl",)  # names of its session files (fnmatch)
    watch_recursive: bool = True  # its session folders nest (`funes watch` observes subfolders)
    installer: str | None = None  # its module in installers/ (None: funes cannot be added)
    hook_events: Mapping[str, bool] = field(default_factory=dict)  # event → asks for a sweep
    # session boundaries: after these hook events a memory the agent is bound to is published
    # (the session ended, or a new one started: a catch-up for an end whose hook never ran)
    publish_events: tuple[str, ...] = ()

    def make(self, homes: AgentHomes) -> TraceSource:
        """The source over this agent's home on this machine."""
        return self.source(homes.of(self.harness))

    def is_session_file(self, name: str) -> bool:
        return any(fnmatch.fnmatchcase(name, pattern) for pattern in self.session_files)


def _codex_sniff(first: Mapping[str, Any]) -> bool:
    if first.get("type") == "session_meta":
        return True
    # pre-envelope rollouts start with a bare header: {id, timestamp, instructions?, …}
    return "type" not in first and "payload" not in first and "id" in first and "timestamp" in first


def _any_record(first: Mapping[str, Any]) -> bool:
    return True  # Claude Code files have no distinctive first record: it is the fallback


def _never(first: Mapping[str, Any]) -> bool:
    return False  # not a JSONL source


AGENTS: dict[Harness, Agent] = {
    agent.harness: agent
    for agent in (
        Agent(
            Harness.CLAUDE_CODE,
            name="claude",
            label="Claude Code",
            source=_parser("claude_code", "ClaudeCodeSource"),
            sniff=_any_record,
            read_file=_parser("claude_code", "read_claude_file"),
            file_unit=_parser(
                "claude_code", "claude_unit"
            ),  # also signs the spilled tool results and .meta.json
            home_var="CLAUDE_CONFIG_DIR",
            home_default=(".claude",),
            session_dirs=("projects",),
            installer="claude_code",
            hook_events={
                "Stop": False,
                "SubagentStop": False,
                "SessionEnd": False,
                "SessionStart": True,
            },
            publish_events=("SessionEnd", "SessionStart"),
        ),
        Agent(
            Harness.CODEX,
            name="codex",
            label="Codex",
            source=_parser("codex", "CodexSource"),
            sniff=_codex_sniff,
            read_file=_parser("codex", "read_codex_file"),
            home_var="CODEX_HOME",
            home_default=(".codex",),
            session_dirs=("sessions", "archived_sessions"),
            installer="codex",
            hook_events={"agent-turn-complete": False, "Stop": False, "SessionStart": True},
            publish_events=("SessionStart",),  # `codex exec` does not run SessionEnd reliably
        ),
        Agent(
            Harness.PI,
            name="pi",
            label="pi",
            source=_parser("pi", "PiSource"),
            sniff=_parser("pi", "is_pi_header"),
            read_file=_parser("pi", "read_pi_file"),
            home_var="PI_CODING_AGENT_DIR",
            home_default=(".pi", "agent"),
            session_dirs=("sessions",),
            installer="pi",
            hook_events={"agent_end": False, "session_shutdown": False, "session_start": True},
            publish_events=("session_shutdown", "session_start"),
        ),
        Agent(
            Harness.HERMES,
            name="hermes",
            label="Hermes",
            source=_parser("hermes", "HermesSource"),
            sniff=_parser(
                "hermes_jsonl", "is_hermes_jsonl_header"
            ),  # a sessions/*.jsonl given as a path
            read_file=_parser("hermes_jsonl", "read_hermes_jsonl"),  # (the sweep reads state.db)
            home_var="HERMES_HOME",
            home_default=(".hermes",),
            session_dirs=("",),
            session_files=("state.db*",),
            watch_recursive=False,
            installer="hermes",
            hook_events={
                "post_llm_call": False,
                "on_session_finalize": False,
                "on_session_start": True,
            },
            publish_events=("on_session_finalize", "on_session_start"),
        ),
        Agent(
            Harness.PARQUET,
            name="parquet",
            label="agent-traces Parquet",
            source=lambda home: _parser(
                "parquet", "ParquetSource"
            )(),  # imports only: there is no default location
            sniff=_never,
            session_files=("*.parquet",),
        ),
    )
}


def installable() -> list[Agent]:
    """The agents `funes add` can wire into (those with an installer), in registry order."""
    return [agent for agent in AGENTS.values() if agent.installer is not None]


@dataclass(frozen=True, slots=True)
class AgentHomes:
    """Each agent's home directory on this machine, honouring the agents' override variables.

    `dirs` holds the homes resolved (or given); an agent missing from it lives at its
    record's default under `home`. Resolved once at the edge, like `funes.paths.Paths`.
    """

    home: Path  # the user's home
    dirs: Mapping[Harness, Path] = field(default_factory=dict)

    @classmethod
    def resolve(cls, env: Mapping[str, str] | None = None) -> AgentHomes:
        """Every agent's home: its override variable when set, else its default under HOME."""
        env = environment(env)
        return cls(user_home(env)).with_overrides(env)

    def of(self, harness: Harness) -> Path:
        """The home of one agent (the user's home for a record without one)."""
        found = self.dirs.get(harness)
        if found is not None:
            return found
        return self.home.joinpath(*AGENTS[harness].home_default)

    def with_overrides(self, env: Mapping[str, str]) -> AgentHomes:
        """These homes with the agents' override variables found in `env` applied.

        A hook records the variables its agent ran with (a Hermes profile's HERMES_HOME, a
        CLAUDE_CONFIG_DIR) so the worker reads the right home. Pure: reads only `env`.
        """
        changes = {
            agent.harness: Path(env[agent.home_var]).expanduser()
            for agent in AGENTS.values()
            if agent.home_var and env.get(agent.home_var)
        }
        return replace(self, dirs={**self.dirs, **changes}) if changes else self

    def session_roots(self) -> dict[Harness, list[Path]]:
        """Where each agent writes sessions (what `funes watch` observes)."""
        return {
            agent.harness: [
                self.of(agent.harness) / d if d else self.of(agent.harness)
                for d in agent.session_dirs
            ]
            for agent in AGENTS.values()
            if agent.session_dirs
        }
