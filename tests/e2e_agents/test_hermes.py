"""Hermes (the real `hermes -z`) with funes added: a turn is indexed by funes' shell hooks,
approved by the allowlist `funes add` writes (no HERMES_ACCEPT_HOOKS), and the model can call
funes' recall tool over MCP.

`funes add hermes --yes` writes hooks and `mcp_servers.funes` into ~/.hermes/config.yaml and the
approvals into ~/.hermes/shell-hooks-allowlist.json. The test merges only the model block and
`security.allow_lazy_installs: false` into config.yaml. Hermes keeps its sessions in
~/.hermes/state.db (no transcript file): funes' session id is the `sessions.id`.
"""

from __future__ import annotations

import io
import json
import sqlite3
from collections.abc import Iterator

import pytest
from e2e_agents.support.harness import (
    AGENT_TIMEOUT_S,
    AgentRun,
    Sandbox,
    agent_bin,
    assert_turn_recalled,
    require_funes_mcp,
    sandbox,
)
from ruamel.yaml import YAML

pytestmark = pytest.mark.agent_e2e

WORDS = "heron timetable for the saffron viaduct"
NOTE = "the cobalt marmot winds every clock"
HERMES_TIMEOUT_S = 2 * AGENT_TIMEOUT_S  # the slowest start-up of the four (~50 plugins)


def configure(box: Sandbox) -> None:
    """Merge the scripted model and no-lazy-installs into the config.yaml `funes add` wrote."""
    path = box.home / ".hermes" / "config.yaml"
    yaml = YAML()
    data = yaml.load(path.read_text())
    data["model"] = {
        "provider": "custom",
        "base_url": f"{box.model.url}/v1",
        "default": "fake-model",
        "api_key": "sk-fake-000",  # pragma: allowlist secret
    }
    security = data.setdefault("security", {})
    security["allow_lazy_installs"] = False
    out = io.StringIO()
    yaml.dump(data, out)
    path.write_text(out.getvalue())


def hermes(box: Sandbox, prompt: str, *, what: str) -> AgentRun:
    # no HERMES_ACCEPT_HOOKS: funes' hooks must run on the strength of the allowlist alone
    env = box.agent_env(HERMES_DISABLE_LAZY_INSTALLS="1")
    argv = [str(agent_bin("hermes")), "-z", prompt]
    return box.run_agent(argv, env, what=what, timeout_s=HERMES_TIMEOUT_S)


def sessions(box: Sandbox) -> list[str]:
    db = box.home / ".hermes" / "state.db"
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
        return [row[0] for row in conn.execute("select id from sessions order by started_at")]


@pytest.fixture(scope="module")
def box(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Sandbox]:
    agent_bin("hermes")
    with sandbox("hermes", tmp_path_factory.mktemp("hermes")) as box:
        box.add()
        configure(box)
        yield box


@pytest.fixture(scope="module")
def first(box: Sandbox) -> tuple[AgentRun, str]:
    """One `hermes -z` session: the model reads a file with `read_file`, then answers."""
    (box.project / "notes.txt").write_text(NOTE + "\n")
    prompt = f'Plan the {WORDS} CALL_TOOL:read_file{{"path":"notes.txt"}}'
    run = hermes(box, prompt, what="hooks: read_file then answer")
    assert run.returncode == 0, run.explain()
    found = sessions(box)
    assert len(found) == 1, found
    return run, found[0]


def test_hermes_config_keeps_what_funes_add_wrote(box: Sandbox) -> None:
    data = YAML(typ="safe").load((box.home / ".hermes" / "config.yaml").read_text())
    for event in ("post_llm_call", "on_session_start"):
        assert any("funes-enqueue.py" in h["command"] for h in data["hooks"][event]), event
    assert data["mcp_servers"]["funes"]["args"][:3] == ["-m", "funes", "mcp"]
    allow = json.loads((box.home / ".hermes" / "shell-hooks-allowlist.json").read_text())
    approved = {(a["event"], a["command"]) for a in allow["approvals"]}
    for event, entries in data["hooks"].items():
        for entry in entries:
            assert (event, entry["command"]) in approved, event


def test_a_hermes_turn_is_indexed_by_the_allowlisted_hooks_and_recalled_with_its_session_and_turn(
    box: Sandbox, first: tuple[AgentRun, str]
) -> None:
    run, session_id = first
    assert "(tool results received: read_file)" in run.stdout, run.explain()
    assert NOTE in run.stdout  # the tool really ran
    assert box.hook_fired_since(run.started_at), f"no funes hook ran\n{run.explain()}"
    box.wait_drained()
    # on_session_start (sweep) and post_llm_call (on_session_finalize does not fire in -z)
    assert box.drained_entries() >= 2, box.worker_log()
    assert_turn_recalled(box, WORDS, session_id, f"Plan the {WORDS}")
    tool_hits = box.recall("cobalt marmot winds")
    assert any(h.session_id == session_id and NOTE in h.text for h in tool_hits), tool_hits


def test_without_funes_approvals_hermes_skips_the_hooks_so_the_allowlist_is_what_runs_them(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    agent_bin("hermes")
    with sandbox("hermes", tmp_path_factory.mktemp("hermes-unapproved")) as box:
        box.add()
        configure(box)
        allowlist = box.home / ".hermes" / "shell-hooks-allowlist.json"
        data = json.loads(allowlist.read_text())
        data["approvals"] = [a for a in data["approvals"] if "funes-enqueue.py" not in a["command"]]
        allowlist.write_text(json.dumps(data))
        run = hermes(box, f"Plan the {WORDS} again", what="control: hooks not approved")
        assert run.returncode == 0, run.explain()
        assert "FAKE_REPLY: Plan the" in run.stdout, run.explain()
        assert not box.hook_fired_since(run.started_at), "an unapproved hook ran"
        assert not box.spool.pending()


def test_hermes_calls_funes_recall_over_mcp_and_gets_the_earlier_session(
    box: Sandbox, first: tuple[AgentRun, str]
) -> None:
    require_funes_mcp()
    earlier = first[1]
    box.wait_drained()
    mark = box.model.mark()
    prompt = 'What did we find? CALL_TOOL:recall{"query":"heron timetable saffron viaduct","k":3}'
    run = hermes(box, prompt, what="mcp: recall")
    assert run.returncode == 0, run.explain()

    sent = box.model.requests_since(mark, "/chat/completions")
    offered = {
        (t.get("function") or {}).get("name") for r in sent for t in r["body"].get("tools") or []
    }
    assert "mcp__funes__recall" in offered, sorted(offered)
    results = [m for r in sent for m in r["body"]["messages"] if m.get("role") == "tool"]
    # Hermes hands the tool result on as JSON ({"result": ...}), so `→` may arrive as \u2192
    assert any(f" get {earlier} " in json.dumps(m, ensure_ascii=False) for m in results), results
    assert "TOOL_RESULT mcp__funes__recall:" in run.stdout, run.explain()
    assert f" get {earlier} " in run.stdout, run.explain()
