"""Drive a real agent CLI against the scripted model, with funes added, in a throwaway HOME.

Shapes:
- `Sandbox`: one temporary HOME (agent configs), FUNES_HOME (memory, spool, installed hook)
  and project folder, plus the scripted model it talks to. `funes(...)` runs `python -m funes`
  with that HOME/FUNES_HOME; `run_agent(...)` runs the agent with a clean environment (what
  `env -i` gives: a minimal PATH that reaches `node`, HOME, TERM, LANG, funes' model choice
  and the agent's own variables), stdin /dev/null, its own process group and a timeout.
- `FakeModel`: `support/fakellm.py` started with `--port 0 --port-file`, its request log read
  back as dicts; stopped (SIGTERM, then SIGKILL) in a finalizer.
- `Hit`: one parsed recall hit (header + `→ get` line + text).

Where the real CLIs are: AGENTS_DIR (default /var/cache/agent-e2e), as scripts/install-agents.sh
lays them out. A missing CLI skips its agent's tests with the reason (and the install log's
last line, when there is one); a present CLI must pass.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any, NoReturn

import pytest
from support.spool import wait_idle

from funes.ingest import Spool, worker_active
from funes.traces import short_id

HERE = Path(__file__).resolve().parent
FAKELLM = HERE / "fakellm.py"
AGENTS_DIR = Path(os.environ.get("AGENTS_DIR") or "/var/cache/agent-e2e")
BINARIES = {
    "claude": "claude/node_modules/.bin/claude",
    "codex": "codex/node_modules/.bin/codex",
    "pi": "pi/node_modules/.bin/pi",
    "hermes": "hermes/bin/hermes",
}
HARNESS = {"claude": "claude_code", "codex": "codex", "pi": "pi", "hermes": "hermes"}
# Idle runs take 2-25 s here; the README measured up to 10 minutes on a starved machine.
AGENT_TIMEOUT_S = float(os.environ.get("FUNES_E2E_AGENT_TIMEOUT_S") or 300)
# The whole layer's agent time is capped so CI stays inside its budget whatever hangs: a run
# gets at most what is left, and once it is spent the remaining agent runs skip (the run that
# timed out has already failed).
LAYER_BUDGET_S = float(os.environ.get("FUNES_E2E_BUDGET_S") or 900)
_layer_started: list[float] = []
DRAIN_TIMEOUT_S = float(os.environ.get("FUNES_E2E_DRAIN_TIMEOUT_S") or 120)
FUNES_TIMEOUT_S = 180
# funes' model choice for every funes process here, the agent's children included (hook →
# worker, MCP server): the offline embedder the test suite uses (tests/conftest.py), no
# reranker, no Hub. Fixed here: module-scoped fixtures run before conftest's monkeypatching.
MODEL_ENV = {
    "FUNES_EMBEDDER": "all-minilm-l6-v2-int8",
    "FUNES_RERANKER": "none",
    "HF_HUB_OFFLINE": "1",
}

TIMINGS: list[tuple[str, str, float, int]] = []  # (agent, what, wall seconds, exit status)


# CI sets FUNES_REQUIRE_AGENTS=1 (.ci/run): a test whose agent cannot run there fails instead
# of skipping, so the layer cannot be dropped silently; a developer's `make test` skips it (and
# tests/e2e_agents/conftest.py says so loudly at the end).
REQUIRE_AGENTS = os.environ.get("FUNES_REQUIRE_AGENTS") == "1"


def unavailable(why: str) -> NoReturn:
    """Skip the calling test because its agent cannot run here, or fail it under
    FUNES_REQUIRE_AGENTS=1."""
    if REQUIRE_AGENTS:
        pytest.fail(f"{why} (FUNES_REQUIRE_AGENTS=1: the real-agent layer must run here)")
    pytest.skip(why)


def agent_bin(agent: str) -> Path:
    """The pinned CLI of `agent`, or `unavailable` saying why it is not there."""
    path = AGENTS_DIR / BINARIES[agent]
    if os.access(path, os.X_OK):
        if agent != "hermes" and node_dir() is None:
            unavailable(f"{agent} needs node, and there is no `node` on PATH")
        return path
    why = f"{agent} CLI not installed at {path} (scripts/install-agents.sh installs it)"
    log = AGENTS_DIR / f"{agent}.log"
    try:
        tail = log.read_text(errors="replace").strip().splitlines()[-1:]
    except OSError:
        tail = []
    if tail:
        why += f"; install log {log}: {tail[0][:200]}"
    unavailable(why)


def node_dir() -> str | None:
    node = shutil.which("node")
    return str(Path(node).resolve().parent) if node else None


@cache
def funes_mcp_available() -> str | None:
    """None when `python -m funes mcp --help` works, else why not (for a skip reason)."""
    try:
        done = subprocess.run(
            [sys.executable, "-m", "funes", "mcp", "--help"],
            cwd=HERE,  # not the checkout's root: the funes the agents will start, not ./funes
            capture_output=True,
            text=True,
            timeout=60,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"funes mcp not available ({exc})"
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["?"])[-1]
        return f"funes mcp not available (`python -m funes mcp --help`: {last[:160]})"
    return None


def require_funes_mcp() -> None:
    why = funes_mcp_available()
    if why:
        unavailable(why)


# -- the scripted model ---------------------------------------------------------------------


class FakeModel:
    """support/fakellm.py on 127.0.0.1, a free port chosen by the OS."""

    def __init__(self, folder: Path) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        self.log = folder / "fakellm-requests.jsonl"
        port_file = folder / "fakellm.port"
        self._out = (folder / "fakellm.out").open("wb")
        self.proc = subprocess.Popen(
            [sys.executable, str(FAKELLM), "--port", "0", "--port-file", str(port_file)],
            stdin=subprocess.DEVNULL,
            stdout=self._out,
            stderr=subprocess.STDOUT,
            env={**os.environ, "FAKELLM_LOG": str(self.log)},
        )
        deadline = time.monotonic() + 30
        while not port_file.exists():
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"fakellm did not start (see {folder / 'fakellm.out'})")
            time.sleep(0.05)
        self.port = int(port_file.read_text())
        self.url = f"http://127.0.0.1:{self.port}"

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=5)
        self._out.close()

    def requests(self, path_suffix: str = "") -> list[dict[str, Any]]:
        """Logged requests whose path (query string dropped) ends with `path_suffix`."""
        if not self.log.exists():
            return []
        out = []
        for line in self.log.read_text().splitlines():
            rec = json.loads(line)
            if rec["path"].split("?")[0].rstrip("/").endswith(path_suffix):
                out.append(rec)
        return out

    def mark(self) -> int:
        """How many requests are logged now (to read only what a later run sent)."""
        return len(self.requests())

    def requests_since(self, mark: int, path_suffix: str = "") -> list[dict[str, Any]]:
        return [r for r in self.requests()[mark:] if r["path"].split("?")[0].endswith(path_suffix)]


# -- one sandbox per agent ------------------------------------------------------------------


@dataclass
class AgentRun:
    argv: list[str]
    returncode: int
    stdout: str
    stderr: str
    wall_s: float
    started_at: float  # epoch seconds

    def explain(self) -> str:
        return (
            f"rc={self.returncode} after {self.wall_s:.1f}s\n$ {' '.join(self.argv)}\n"
            f"--- stdout (tail)\n{self.stdout[-3000:]}\n--- stderr (tail)\n{self.stderr[-3000:]}"
        )


@dataclass
class Hit:
    harness: str
    workdir: str
    label: str  # the session label (AGENTS.md: `<workdir>/<session label>`)
    block_type: str
    session_id: str
    turn_id: str
    memory: str
    text: str


HEADER = re.compile(r"^\[(?P<ts>[^\]]*)\] (?P<harness>\S+) (?P<where>\S+) (?P<type>\S+)  score=")
GET_LINE = re.compile(r"^  → get (?P<sid>\S+) (?P<turn>\S+) --memory (?P<memory>\S+)$")


def parse_recall(out: str) -> list[Hit]:
    """The hits of `funes recall` agent-format output (see funes/render/agent.py)."""
    hits: list[Hit] = []
    for block in out.split("\n---\n"):
        lines = block.strip("\n").splitlines()
        if len(lines) < 2:
            continue
        head, get = HEADER.match(lines[0]), GET_LINE.match(lines[1])
        if not (head and get):
            continue
        workdir, _, label = head["where"].partition("/")  # a workdir facet holds no "/"
        text = "\n".join(line[2:] for line in lines[2:] if line == ">" or line.startswith("> "))
        hits.append(
            Hit(
                head["harness"],
                workdir,
                label,
                head["type"],
                get["sid"],
                get["turn"],
                get["memory"],
                text,
            )
        )
    return hits


@dataclass
class Sandbox:
    agent: str
    root: Path
    model: FakeModel
    # variables for every process of this sandbox (funes and the agent) over MODEL_ENV; None
    # removes one (a machine that reaches the Hub stand-in drops HF_HUB_OFFLINE)
    env: dict[str, str | None] = field(default_factory=dict)
    home: Path = field(init=False)
    funes_home: Path = field(init=False)
    project: Path = field(init=False)

    def __post_init__(self) -> None:
        self.home = self.root / "home"
        self.funes_home = self.root / "funes"
        self.project = self.root / "project"
        for d in (self.home, self.project):
            d.mkdir(parents=True, exist_ok=True)

    @property
    def spool(self) -> Spool:
        return Spool(self.funes_home / "spool")

    # -- funes --

    def funes_env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("FUNES_", "HF_"))}
        env.update(MODEL_ENV)
        for var in ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "PI_CODING_AGENT_DIR", "HERMES_HOME"):
            env.pop(var, None)
        env["HOME"] = str(self.home)
        env["FUNES_HOME"] = str(self.funes_home)
        return self._with_extra(env)

    def _with_extra(self, env: dict[str, str]) -> dict[str, str]:
        for key, value in self.env.items():
            if value is None:
                env.pop(key, None)
            else:
                env[key] = value
        return env

    def funes(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        """`python -m funes ARGS` for this sandbox (cwd: the project)."""
        done = subprocess.run(
            [sys.executable, "-m", "funes", *args],
            capture_output=True,
            text=True,
            env=self.funes_env(),
            cwd=self.project,
            stdin=subprocess.DEVNULL,
            timeout=FUNES_TIMEOUT_S,
        )
        if check:
            assert done.returncode == 0, (
                f"funes {' '.join(args)}: rc={done.returncode}\n{done.stdout}\n{done.stderr}"
            )
        return done

    def add(self) -> subprocess.CompletedProcess[str]:
        """`funes add <agent> --yes`: the real installer output, and the first index.

        The agent's home is made first, as its first run would: `funes add` changes nothing on
        a machine where the agent has no home and no program on PATH."""
        homes = {"claude": ".claude", "codex": ".codex", "pi": ".pi/agent", "hermes": ".hermes"}
        (self.home / homes[self.agent]).mkdir(parents=True, exist_ok=True)
        return self.funes("add", self.agent, "--yes")

    def recall(self, query: str) -> list[Hit]:
        """`funes recall QUERY` (no harness filter: the hit's harness is asserted, not chosen)."""
        out = self.funes("recall", query, "--neighbors", "0").stdout
        return parse_recall(out)

    def get(self, session_id: str, turn_id: str) -> str:
        return self.funes("get", session_id, turn_id, "--window", "0", "--format", "agent").stdout

    # -- the agent --

    def agent_env(self, **extra: str) -> dict[str, str]:
        """A clean environment (as `env -i` would leave it) for the agent process."""
        path = [d for d in (node_dir(), "/usr/local/bin", "/usr/bin", "/bin") if d]
        env = {
            "PATH": ":".join(dict.fromkeys(path)),
            "HOME": str(self.home),
            "TERM": "dumb",
            "LANG": "C.UTF-8",
        }
        env.update(MODEL_ENV)
        env.update(extra)
        return self._with_extra(env)

    def run_agent(
        self, argv: list[str], env: dict[str, str], *, what: str, timeout_s: float | None = None
    ) -> AgentRun:
        """Run the agent once (stdin /dev/null, own process group, killed whole on timeout)."""
        limit_s = min(timeout_s or AGENT_TIMEOUT_S, layer_time_left())
        started = time.time()
        t0 = time.monotonic()
        proc = subprocess.Popen(
            argv,
            cwd=self.project,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        try:
            out, err = proc.communicate(timeout=limit_s)
        except subprocess.TimeoutExpired:
            _kill_group(proc.pid)
            out, err = proc.communicate()
            err += f"\n[test harness: killed after {limit_s:.0f}s]"
        _kill_group(proc.pid)  # MCP servers or tools the agent left behind
        run = AgentRun(argv, proc.returncode, out, err, time.monotonic() - t0, started)
        TIMINGS.append((self.agent, what, run.wall_s, run.returncode))
        (self.root / f"{what}.stdout").write_text(out)
        (self.root / f"{what}.stderr").write_text(err)
        return run

    # -- the spool --

    def hook_fired_since(self, epoch: float) -> bool:
        stamp = self.spool.seen / HARNESS[self.agent]
        return stamp.exists() and stamp.stat().st_mtime >= epoch - 1

    def worker_log(self) -> str:
        path = self.spool.logs / "worker.log"
        return path.read_text(errors="replace") if path.exists() else ""

    def hook_log(self) -> str:
        path = self.spool.logs / "hook.log"
        return path.read_text(errors="replace") if path.exists() else ""

    def wait_drained(self, timeout_s: float = DRAIN_TIMEOUT_S) -> float:
        """Wait until the detached worker emptied the spool and exited. Returns the seconds waited.

        Fails (with the spool's logs) when entries are still waiting or parked at the deadline.
        """
        spool = self.spool
        waited = wait_idle(spool, timeout_s)
        if "drain:" not in self.worker_log():
            pytest.fail(f"no worker ran: worker.log is empty\nhook.log:\n{self.hook_log()}")
        failed = sorted(p.name for p in spool.failed.glob("*")) if spool.failed.exists() else []
        assert not failed, f"parked spool entries: {failed}\nworker.log:\n{self.worker_log()}"
        return waited

    def drained_entries(self) -> int:
        """Entries the workers reported (sum of `entries=` over worker.log's drain lines)."""
        return sum(int(n) for n in re.findall(r" drain: entries=(\d+)", self.worker_log()))


def layer_time_left() -> float:
    """Seconds of the layer's budget left (the clock starts at the first agent run); skips
    the calling test when too little is left to run an agent at all."""
    if not _layer_started:
        _layer_started.append(time.monotonic())
    left = LAYER_BUDGET_S - (time.monotonic() - _layer_started[0])
    if left < 30:
        pytest.skip(
            f"the agent e2e layer's budget ({LAYER_BUDGET_S:.0f}s, FUNES_E2E_BUDGET_S) is spent"
        )
    return left


def _kill_group(pid: int) -> None:
    with suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


@contextmanager
def sandbox(agent: str, root: Path, env: dict[str, str | None] | None = None) -> Iterator[Sandbox]:
    """A Sandbox with its own scripted model, stopped (and workers awaited) on exit."""
    model = FakeModel(root / "fakellm")
    box = Sandbox(agent, root, model, dict(env or {}))
    try:
        yield box
    finally:
        model.stop()
        deadline = time.monotonic() + 30  # let a worker still draining finish
        while worker_active(box.spool) and time.monotonic() < deadline:
            time.sleep(0.2)


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def assert_turn_recalled(box: Sandbox, query: str, session_id: str, words: str) -> Hit:
    """`funes recall QUERY` ranks first a passage of `session_id` (right agent, local memory),
    and among its hits is the turn holding `words`, whose `→ get` line opens that very turn
    (`funes get` shows the turn, with `words` in it); that hit is returned.

    The first hit may be another turn of the same exchange: replies and tool outputs are
    embedded with the prompt that opened their exchange, so for a query made of the prompt's
    own words a tool output that also shares one of them can outrank the prompt."""
    hits = box.recall(query)
    assert hits, f"funes recall {query!r} found nothing\nworker.log:\n{box.worker_log()}"
    top = hits[0]
    assert top.harness == HARNESS[box.agent], hits
    assert top.session_id == session_id, (top, session_id)
    assert top.label == short_id(session_id), top  # a main session: the label of its id
    assert top.memory == "local", top
    holding = [h for h in hits if h.session_id == session_id and words in h.text]
    assert holding, hits
    hit = holding[0]
    assert hit.harness == HARNESS[box.agent] and hit.memory == "local", hit
    shown = box.get(hit.session_id, hit.turn_id)
    assert f" turn={hit.turn_id}\n" in shown, shown
    assert words in shown, shown
    return hit
