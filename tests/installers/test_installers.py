"""`funes add` / `funes remove` against a temporary HOME, for all four agents."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import time
import tomllib
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest
import tomlkit
from ruamel.yaml import YAML
from support.claude import append_turns, session_path, stop_payload, write_claude_session
from support.cli import Ran

from funes.commands import run_add, run_remove
from funes.commands.recall import RecallRequest, run_recall
from funes.commands.spool import run_drain
from funes.commands.status import run_status
from funes.errors import AgentError
from funes.ingest import Spool, SpoolEntry
from funes.memory import Runtime, parse_memory
from funes.settings import SPOOL
from funes.wiring import agent_harness, launcher, run_checks

AGENTS = ("claude", "codex", "hermes", "pi")

USER_CLAUDE_SETTINGS = """{
  "model": "opus",
  "hooks": {
    "Stop": [
      {
        "hooks": [
          {
            "type": "command",
            "command": "notify-send done"
          }
        ]
      }
    ]
  },
  "permissions": {
    "allow": [
      "Bash(ls:*)"
    ]
  }
}
"""
USER_CLAUDE_JSON = '{\n  "numStartups": 3,\n  "mcpServers": {\n    "ping": {\n      "type": "stdio",\n      "command": "ping-server"\n    }\n  }\n}\n'
USER_CODEX_TOML = """# my codex config
model = "gpt-5"  # the default model

[mcp_servers.ping]
command = "ping-server"   # keep me
args = ["--quiet"]

[projects."/home/me/proj"]
trust_level = "trusted"
"""
USER_CODEX_HOOKS = '{\n  "hooks": {\n    "Stop": [\n      {\n        "hooks": [\n          {\n            "type": "command",\n            "command": "say done"\n          }\n        ]\n      }\n    ]\n  }\n}\n'
USER_HERMES_YAML = """# Hermes settings, hand-written
model:
  provider: custom   # my local server
  default: "some-model"
hooks:
  post_llm_call:
    - command: "~/bin/log-turn.sh"
      timeout: 5
mcp_servers:
  ping: {command: ping-server, args: ["--quiet"]}
"""
USER_HERMES_ALLOWLIST = '{\n  "approvals": [\n    {\n      "approved_at": "2026-01-01T00:00:00Z",\n      "command": "~/bin/log-turn.sh",\n      "event": "post_llm_call",\n      "script_mtime_at_approval": null\n    }\n  ]\n}\n'


def seed_user_configs(home: Path) -> dict[Path, str]:
    files = {
        home / ".claude" / "settings.json": USER_CLAUDE_SETTINGS,
        home / ".claude.json": USER_CLAUDE_JSON,
        home / ".codex" / "config.toml": USER_CODEX_TOML,
        home / ".codex" / "hooks.json": USER_CODEX_HOOKS,
        home / ".hermes" / "config.yaml": USER_HERMES_YAML,
        home / ".hermes" / "shell-hooks-allowlist.json": USER_HERMES_ALLOWLIST,
        home / ".pi" / "agent" / "extensions" / "mine.ts": "export default function (pi: any) {}\n",
    }
    for path, text in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return files


def snapshot(*roots: Path) -> dict[str, bytes]:
    out = {}
    for root in roots:
        paths = [root] if root.is_file() else sorted(p for p in root.rglob("*") if p.is_file())
        out.update({str(p): p.read_bytes() for p in paths})
    return out


def add_then_remove(rt: Runtime, path: Path, text: str, agent: str) -> str:
    """Write the user's config `text` at `path`, add then remove `agent`; what is left there."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    run_add(rt, agent_harness(agent))
    run_remove(rt, agent_harness(agent))
    return path.read_text()


@pytest.fixture
def rt() -> Runtime:
    return Runtime.resolve()


@pytest.mark.parametrize("agent", AGENTS)
def test_adding_twice_changes_nothing_the_second_time(
    rt: Runtime, isolated_env: Path, agent: str
) -> None:
    seed_user_configs(isolated_env)
    first = run_add(rt, agent_harness(agent))
    assert first.changed and first.hook_installed
    before = snapshot(isolated_env, rt.paths.data)
    again = run_add(rt, agent_harness(agent))
    assert again.changed == [] and not again.hook_installed
    assert snapshot(isolated_env, rt.paths.data) == before


@pytest.mark.parametrize("agent", AGENTS)
def test_remove_restores_the_users_files_byte_for_byte(
    rt: Runtime, isolated_env: Path, agent: str
) -> None:
    seeded = seed_user_configs(isolated_env)
    before = snapshot(isolated_env)
    run_add(rt, agent_harness(agent))
    assert snapshot(isolated_env) != before
    removed = run_remove(rt, agent_harness(agent))
    assert removed.changed
    assert snapshot(isolated_env) == before
    assert all(path.read_text() == text for path, text in seeded.items())
    assert not rt.paths.installed_hook.exists()  # no agent uses it any more


@pytest.mark.parametrize("agent", AGENTS)
def test_add_names_the_backup_of_each_users_config_it_edits(
    rt: Runtime, isolated_env: Path, agent: str
) -> None:
    # the backups were taken but add never said where they were
    seeded = seed_user_configs(isolated_env)
    added = run_add(rt, agent_harness(agent))
    edited = {path for path in map(Path, added.changed) if path in seeded}
    assert edited or agent == "pi"  # pi's extension is a file of funes' own: nothing to back up
    assert {Path(path) for path in added.backups} == edited
    assert all(Path(added.backups[str(p)]).read_text() == seeded[p] for p in edited)
    assert all(Path(copy).parent == rt.paths.backups for copy in added.backups.values())


HAND_LAID_JSON = {
    "claude": (
        (".claude", "settings.json"),
        '{\n    "model": "opus",\n    "permissions": {"allow": ["Bash(ls)", "Read"]},\n'
        '    "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "echo hi"}]}]}\n}',
    ),
    "claude.json": ((".claude.json",), '{"numStartups": 3, "projects": {}}'),
    "codex": (
        (".codex", "hooks.json"),
        '{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "say done"}]}]}}\n',
    ),
}


@pytest.mark.parametrize("agent", ["claude", "codex"])
def test_remove_gives_back_a_hand_laid_json_config_byte_for_byte(
    rt: Runtime, isolated_env: Path, agent: str
) -> None:
    # inline arrays, a 4-space indent, no final newline: json.dumps cannot reproduce these
    files = [HAND_LAID_JSON[agent]] + ([HAND_LAID_JSON["claude.json"]] if agent == "claude" else [])
    for parts, text in files:
        path = isolated_env.joinpath(*parts)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    run_add(rt, agent_harness(agent))
    assert all(isolated_env.joinpath(*parts).read_text() != text for parts, text in files)
    run_remove(rt, agent_harness(agent))
    for parts, text in files:
        assert isolated_env.joinpath(*parts).read_text() == text


def test_remove_after_the_user_edited_the_config_keeps_the_edit(
    rt: Runtime, isolated_env: Path
) -> None:
    path = isolated_env / ".claude" / "settings.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text('{"model": "opus"}')
    run_add(rt, agent_harness("claude"))
    settings = json.loads(path.read_text())
    settings["model"] = "sonnet"  # changed after add: the pre-add bytes are no longer the truth
    path.write_text(json.dumps(settings))
    run_remove(rt, agent_harness("claude"))
    assert json.loads(path.read_text()) == {"model": "sonnet"}


@pytest.mark.parametrize("agent", AGENTS)
def test_remove_deletes_the_files_add_created_in_an_empty_home(
    rt: Runtime, isolated_env: Path, agent: str
) -> None:
    run_add(rt, agent_harness(agent))
    assert any(p.is_file() for p in isolated_env.rglob("*"))
    run_remove(rt, agent_harness(agent))
    assert [p for p in isolated_env.rglob("*") if p.is_file()] == []


@pytest.mark.parametrize("agent", AGENTS)
def test_remove_never_touches_the_memory_or_transcripts(
    rt: Runtime, isolated_env: Path, agent: str
) -> None:
    transcript = append_turns(
        session_path(isolated_env / ".claude", "/w", "kept"), "kept", "/w", range(2)
    )
    run_add(rt, agent_harness(agent))
    Spool(rt.paths.spool).enqueue(
        SpoolEntry(agent="claude_code", payload=stop_payload(transcript, "kept", "/w"))
    )
    run_drain(rt, params=replace(SPOOL, settle_s=0.0, idle_exit_s=0.0))
    memory = rt.paths.memory_db.read_bytes()
    run_remove(rt, agent_harness(agent))
    assert rt.paths.memory_db.read_bytes() == memory and transcript.exists()


def test_the_first_edit_is_backed_up_once(rt: Runtime, isolated_env: Path) -> None:
    seed_user_configs(isolated_env)
    run_add(rt, agent_harness("claude"))
    run_remove(rt, agent_harness("claude"))
    run_add(rt, agent_harness("claude"))
    backups = sorted(rt.paths.backups.glob("*settings.json.orig"))
    assert len(backups) == 1 and backups[0].read_text() == USER_CLAUDE_SETTINGS


def test_claude_hooks_keep_the_users_own_stop_hook_and_register_the_mcp_server(
    rt: Runtime, isolated_env: Path
) -> None:
    seed_user_configs(isolated_env)
    run_add(rt, agent_harness("claude"), "/tmp/some-memory")
    settings = json.loads((isolated_env / ".claude" / "settings.json").read_text())
    stop = settings["hooks"]["Stop"]
    assert stop[0]["hooks"][0]["command"] == "notify-send done"
    ours = stop[1]["hooks"][0]
    argv = shlex.split(ours["command"])
    # the hook and MCP server run funes' launcher, which runs this install's Python
    assert argv[:4] == [str(rt.paths.launcher), "-I", "-S", str(rt.paths.installed_hook)]
    assert launcher.target(rt.paths.launcher) == sys.executable
    assert argv[argv.index("--python") + 1] == str(rt.paths.launcher)
    assert argv[argv.index("--spool") + 1] == str(rt.paths.spool) and argv[-2:] == [
        "--event",
        "Stop",
    ]
    assert argv[argv.index("--memory") + 1] == "/tmp/some-memory"
    assert "--sweep" in settings["hooks"]["SessionStart"][0]["hooks"][0]["command"]
    assert set(settings["hooks"]) == {"Stop", "SubagentStop", "SessionEnd", "SessionStart"}
    servers = json.loads((isolated_env / ".claude.json").read_text())["mcpServers"]
    assert servers["ping"] == {"type": "stdio", "command": "ping-server"}
    assert servers["funes"]["command"] == str(rt.paths.launcher)
    assert servers["funes"]["args"] == ["-m", "funes", "mcp", "/tmp/some-memory"]


def test_claude_settings_that_would_stop_the_hooks_are_warned_about(
    rt: Runtime, isolated_env: Path
) -> None:
    path = isolated_env / ".claude" / "settings.json"
    path.parent.mkdir(exist_ok=True)
    path.write_text('{"disableAllHooks": true, "cleanupPeriodDays": 3}')
    warnings = " ".join(run_add(rt, agent_harness("claude")).warnings)
    assert "disableAllHooks" in warnings and "cleanupPeriodDays=3" in warnings


def test_a_settings_file_that_is_not_json_is_refused_untouched(
    rt: Runtime, isolated_env: Path
) -> None:
    path = isolated_env / ".claude" / "settings.json"
    path.parent.mkdir(exist_ok=True)
    path.write_text("{ not json")
    with pytest.raises(AgentError, match="not valid JSON"):
        run_add(rt, agent_harness("claude"))
    assert path.read_text() == "{ not json"


@pytest.mark.parametrize(
    ("agent", "relative"),
    [("claude", ".claude/settings.json"), ("codex", ".codex/config.toml"),
     ("hermes", ".hermes/config.yaml")],
)  # fmt: skip
def test_a_config_that_is_not_utf8_is_refused_untouched(
    rt: Runtime, isolated_env: Path, agent: str, relative: str
) -> None:
    path = isolated_env / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    latin1 = b"# caf\xe9\n"
    path.write_bytes(latin1)
    with pytest.raises(AgentError, match="is not UTF-8 text"):
        run_add(rt, agent_harness(agent))
    assert path.read_bytes() == latin1


BROKEN_CONFIG = {  # a config of an agent funes was added to, broken after the add
    "claude": (".claude/settings.json", '{"model": "opus", "hooks": {\n'),
    "codex": (".codex/config.toml", "model = [unclosed\n"),
    "hermes": (".hermes/config.yaml", "hooks: [unclosed\n"),
}


@pytest.mark.parametrize("agent", sorted(BROKEN_CONFIG))
def test_status_lists_an_added_agent_whose_config_broke_before_its_hook_fired(
    agent: str, rt: Runtime, isolated_env: Path
) -> None:
    """The agent stays listed and the broken file is an attention line, though no hook ever
    fired (a fired hook used to be the only thing that kept the agent in the report)."""
    run_add(rt, agent_harness(agent))
    name, text = BROKEN_CONFIG[agent]
    path = isolated_env / name
    path.write_text(text)
    report = run_status(rt, parse_memory(None, rt))
    harness = agent_harness(agent).value
    assert harness in {a.agent for a in report.agents}
    assert any(line.startswith(f"{agent}: {path} is not valid") for line in report.attention), (
        report.attention
    )


def test_a_broken_claude_json_does_not_hide_the_hooks_in_settings_json(
    rt: Runtime, isolated_env: Path
) -> None:
    run_add(rt, agent_harness("claude"))
    broken = isolated_env / ".claude.json"
    broken.write_text('{"mcpServers": {')
    [check] = [c for c in run_checks(rt) if c.agent == "claude"]
    assert check.hooks and not check.mcp and check.unreadable
    assert any(str(broken) in w and "not valid JSON" in w for w in check.warnings)
    report = run_status(rt, parse_memory(None, rt))
    [agent] = [a for a in report.agents if a.agent == "claude_code"]
    assert agent.hook_installed and any(str(broken) in line for line in report.attention)


UNREWRITABLE = {
    "claude": (".claude/settings.json", "{ not json", "not valid JSON"),
    "codex": (".codex/config.toml", "model = [unclosed", "not valid TOML"),
    "hermes": (".hermes/config.yaml", "hooks: [unclosed", "not valid YAML"),
    "pi": (".pi/agent/extensions/funes.ts", "// my own extension\n", "not written by funes"),
}


@pytest.mark.parametrize("agent", AGENTS)
def test_add_refuses_a_config_it_will_not_rewrite_before_writing_or_indexing_anything(
    agent: str, isolated_env: Path, run: Callable[..., Ran]
) -> None:
    """Checked first: no hook script, launcher, memory or first index is left behind by an
    `add` that then refuses the agent's configuration."""
    name, text, error = UNREWRITABLE[agent]
    path = isolated_env / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    write_claude_session(isolated_env / ".claude")  # history a first index would read
    refused = run("add", agent, "--yes")
    assert refused.returncode != 0 and error in refused.stderr, refused.stderr
    assert "\n  hint: " in refused.stderr  # what to do about it, for every agent
    assert path.read_text() == text
    assert not Path(os.environ["FUNES_HOME"]).exists()


def test_codex_gets_notify_and_mcp_in_config_toml_with_comments_kept(
    rt: Runtime, isolated_env: Path
) -> None:
    seed_user_configs(isolated_env)
    changes = run_add(rt, agent_harness("codex"))
    text = (isolated_env / ".codex" / "config.toml").read_text()
    assert "# my codex config" in text and "# the default model" in text and "# keep me" in text
    doc = tomlkit.parse(text)
    notify = list(doc["notify"])
    assert notify[3] == str(rt.paths.installed_hook) and notify[-2:] == [
        "--event",
        "agent-turn-complete",
    ]
    assert doc["mcp_servers"]["funes"]["args"] == ["-m", "funes", "mcp"]
    hooks = json.loads((isolated_env / ".codex" / "hooks.json").read_text())["hooks"]
    assert hooks["Stop"][0]["hooks"][0]["command"] == "say done"  # the user's group keeps index 0
    assert "funes-enqueue.py" in hooks["Stop"][1]["hooks"][0]["command"]
    assert any("/hooks" in w for w in changes.warnings)


def test_codex_keeps_a_users_own_notify_program_and_says_so(
    rt: Runtime, isolated_env: Path
) -> None:
    config = isolated_env / ".codex" / "config.toml"
    config.parent.mkdir(exist_ok=True)
    config.write_text('notify = ["terminal-notifier", "-title", "Codex"]\n')
    changes = run_add(rt, agent_harness("codex"))
    assert list(tomlkit.parse(config.read_text())["notify"]) == [
        "terminal-notifier",
        "-title",
        "Codex",
    ]
    assert any("another notify program" in w for w in changes.warnings)
    run_remove(rt, agent_harness("codex"))
    assert config.read_text() == 'notify = ["terminal-notifier", "-title", "Codex"]\n'


def test_hermes_hooks_are_approved_with_the_exact_command_strings(
    rt: Runtime, isolated_env: Path
) -> None:
    seed_user_configs(isolated_env)
    run_add(rt, agent_harness("hermes"))
    text = (isolated_env / ".hermes" / "config.yaml").read_text()
    assert "# Hermes settings, hand-written" in text and "# my local server" in text
    config = YAML(typ="safe").load(text)
    ours = {event: entries[-1]["command"] for event, entries in config["hooks"].items()}
    assert config["hooks"]["post_llm_call"][0] == {"command": "~/bin/log-turn.sh", "timeout": 5}
    assert set(ours) == {"post_llm_call", "on_session_finalize", "on_session_start"}
    approvals = json.loads((isolated_env / ".hermes" / "shell-hooks-allowlist.json").read_text())[
        "approvals"
    ]
    approved = {(a["event"], a["command"]) for a in approvals}
    assert {(e, c) for e, c in ours.items()} <= approved and (
        "post_llm_call",
        "~/bin/log-turn.sh",
    ) in approved
    assert config["mcp_servers"]["funes"]["args"] == ["-m", "funes", "mcp"]
    assert config["mcp_servers"]["ping"] == {"command": "ping-server", "args": ["--quiet"]}
    assert next(c for c in run_checks(rt) if c.agent == "hermes").warnings == []


def test_an_unapproved_hermes_hook_is_reported(rt: Runtime, isolated_env: Path) -> None:
    run_add(rt, agent_harness("hermes"))
    (isolated_env / ".hermes" / "shell-hooks-allowlist.json").write_text('{"approvals": []}')
    [hermes] = [c for c in run_checks(rt) if c.agent == "hermes"]
    assert hermes.hooks and any("not approved" in w for w in hermes.warnings)


def test_pi_gets_an_extension_that_runs_the_hook_and_offers_recall(
    rt: Runtime, isolated_env: Path
) -> None:
    run_add(rt, agent_harness("pi"), "org/team-memory")
    text = (isolated_env / ".pi" / "agent" / "extensions" / "funes.ts").read_text()
    config = json.loads(
        text[
            text.index("const FUNES = ") + len("const FUNES = ") : text.index(
                ";\n\nfunction session"
            )
        ]
    )
    assert config["hook"][:4] == [str(rt.paths.launcher), "-I", "-S", str(rt.paths.installed_hook)]
    assert config["memory"] == "hf://datasets/org/team-memory"
    for needle in (
        'pi.on("agent_end"',
        'pi.on("session_shutdown"',
        '"funes_recall"',
        '"funes_get"',
        '"funes_sessions"',
        '"funes_status"',
        '"--project"',
    ):
        assert needle in text


def test_a_users_own_pi_funes_extension_is_never_overwritten(
    rt: Runtime, isolated_env: Path
) -> None:
    path = isolated_env / ".pi" / "agent" / "extensions" / "funes.ts"
    path.parent.mkdir(parents=True)
    path.write_text("// my own funes.ts\n")
    with pytest.raises(AgentError, match="not written by funes"):
        run_add(rt, agent_harness("pi"))
    run_remove(rt, agent_harness("pi"))
    assert path.read_text() == "// my own funes.ts\n"


def hook_commands(rt: Runtime, home: Path) -> dict[str, list[str]]:
    """The argv each agent would run for a completed turn, read back from its configuration."""
    claude = json.loads((home / ".claude" / "settings.json").read_text())["hooks"]["Stop"][0][
        "hooks"
    ][0]["command"]
    hermes = YAML(typ="safe").load((home / ".hermes" / "config.yaml").read_text())["hooks"][
        "post_llm_call"
    ][0]["command"]
    notify = list(tomlkit.parse((home / ".codex" / "config.toml").read_text())["notify"])
    return {"claude": ["sh", "-c", claude], "hermes": shlex.split(hermes), "codex": notify}


def test_the_installed_hooks_index_a_turn_end_to_end(rt: Runtime, isolated_env: Path) -> None:
    for agent in ("claude", "codex", "hermes"):
        run_add(rt, agent_harness(agent))
    path = session_path(isolated_env / ".claude", "/w/e2e", "e2e-session")
    append_turns(path, "e2e-session", "/w/e2e", range(3))
    commands = hook_commands(rt, isolated_env)
    done = subprocess.run(
        commands["claude"],
        input=json.dumps(stop_payload(path, "e2e-session", "/w/e2e")).encode(),
        capture_output=True,
        timeout=60,
    )
    assert done.returncode == 0 and done.stdout == b""
    notify = subprocess.run(
        [*commands["codex"], '{"type":"agent-turn-complete","thread-id":"t-1","cwd":"/w"}'],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=60,
    )
    hermes = subprocess.run(
        commands["hermes"],
        input=b'{"hook_event_name":"post_llm_call","session_id":"h-1"}',
        capture_output=True,
        timeout=60,
    )
    assert notify.returncode == hermes.returncode == 0 and notify.stdout == hermes.stdout == b""
    spool = Spool(rt.paths.spool)
    deadline = time.monotonic() + 120
    while (
        spool.pending() or list(spool.claimed.glob("*.json")) or spool.starting_marker.exists()
    ) and time.monotonic() < deadline:
        time.sleep(0.2)
    outcome = run_recall(rt, parse_memory(None, rt), RecallRequest("frobnicator widget 2"))
    assert any(h.chunk.session_id == "e2e-session" for h in outcome.result.hits)
    agents = {a.agent: a for a in run_status(rt, parse_memory(None, rt)).agents}
    assert agents["claude_code"].hook_installed and agents["claude_code"].last_fired is not None
    assert agents["codex"].last_fired is not None and agents["hermes"].last_fired is not None
    assert agents["claude_code"].waiting == agents["claude_code"].failed == 0


def registered_mcp_env(agent: str, home: Path) -> dict[str, str]:
    """The environment each agent will start `funes mcp` with, read from its own config."""
    if agent == "claude":
        return json.loads((home / ".claude.json").read_text())["mcpServers"]["funes"]["env"]
    if agent == "codex":
        doc = tomlkit.parse((home / ".codex" / "config.toml").read_text()).unwrap()
        return doc["mcp_servers"]["funes"].get("env", {})
    if agent == "hermes":
        data = YAML(typ="safe").load((home / ".hermes" / "config.yaml").read_text())
        return data["mcp_servers"]["funes"].get("env", {})
    text = (home / ".pi" / "agent" / "extensions" / "funes.ts").read_text()
    start = text.index("const FUNES = ") + len("const FUNES = ")
    return json.loads(text[start : text.index(";\n\nfunction session")])["env"]


@pytest.mark.parametrize("agent", AGENTS)
def test_the_mcp_server_is_registered_with_the_model_settings_add_ran_with(
    isolated_env: Path, monkeypatch: pytest.MonkeyPatch, agent: str
) -> None:
    # Codex and Hermes start MCP servers with only PATH/HOME/...: a FUNES_RERANKER or HF_HOME
    # exported in the user's shell never reaches the server unless it is registered with it.
    monkeypatch.setenv("FUNES_RERANKER", "none")
    monkeypatch.setenv("HF_HOME", str(isolated_env / "hf"))
    rt = Runtime.resolve()
    run_add(rt, agent_harness(agent))
    assert registered_mcp_env(agent, isolated_env) == {
        "FUNES_HOME": str(rt.paths.home),
        "FUNES_EMBEDDER": "all-minilm-l6-v2-int8",
        "FUNES_RERANKER": "none",
        "HF_HOME": str(isolated_env / "hf"),
        "FUNES_MODEL_CACHE": os.environ["FUNES_MODEL_CACHE"],  # set by the test run (conftest)
    }


@pytest.mark.parametrize("agent", AGENTS)
def test_default_model_settings_are_not_written_into_the_mcp_registration(
    isolated_env: Path, monkeypatch: pytest.MonkeyPatch, agent: str
) -> None:
    monkeypatch.delenv("FUNES_EMBEDDER")
    monkeypatch.delenv("FUNES_MODEL_CACHE")
    monkeypatch.setenv("FUNES_RERANKER", "ms-marco-minilm-l6-v2")  # the default, spelled out
    rt = Runtime.resolve()
    run_add(rt, agent_harness(agent))
    assert registered_mcp_env(agent, isolated_env) == {"FUNES_HOME": str(rt.paths.home)}


@pytest.mark.parametrize(
    ("parts", "text"),
    [
        ((".claude.json",), '{\n  "numStartups": 3,\n  "mcpServers": {}\n}\n'),
        ((".claude", "settings.json"), '{\n  "hooks": {}\n}\n'),
    ],
)
def test_remove_gives_back_an_empty_object_the_user_had(
    rt: Runtime, isolated_env: Path, parts: tuple[str, ...], text: str
) -> None:
    assert add_then_remove(rt, isolated_env.joinpath(*parts), text, "claude") == text


@pytest.mark.parametrize(
    "text",
    [
        "model: x\nhooks:\n  post_llm_call: []\n",
        "hooks:\n  post_llm_call: []  # none yet\n  on_session_start: []\nmcp_servers: {}\n",
        "hooks: {}  # none yet\nmcp_servers: {}\nmodel: x\n",
        "hooks:\n  post_llm_call:\n  pre_tool_call: []\nmcp_servers:\n",  # keys with no value
        "hooks:\n  post_llm_call: null\nmcp_servers: ~\n",
        "hooks:\nmodel: x\n",
        "hooks:\n  pre_tool_call: []\n",  # an event funes does not hook
        "model: x\n",  # no `hooks` or `mcp_servers`: none left behind
    ],
)
def test_remove_gives_back_the_hermes_config_add_found(
    rt: Runtime, isolated_env: Path, text: str
) -> None:
    # `post_llm_call: []` came back as no key at all, and `hooks: {}` / `mcp_servers: {}` with
    # it: remove deleted every key it emptied, whoever had made it.
    path = isolated_env / ".hermes" / "config.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    run_add(rt, agent_harness("hermes"))
    hooks = YAML(typ="safe").load(path.read_text())["hooks"]
    assert all(  # a key with no value takes funes' hook too
        any("funes-enqueue.py" in entry["command"] for entry in hooks[event])
        for event in ("post_llm_call", "on_session_finalize", "on_session_start")
    )
    run_remove(rt, agent_harness("hermes"))
    assert path.read_text() == text


def test_remove_gives_back_a_hermes_allowlist_laid_out_by_hand(
    rt: Runtime, isolated_env: Path
) -> None:
    text = '{"approvals": [], "version": 1}'
    assert (
        add_then_remove(rt, isolated_env / ".hermes" / "shell-hooks-allowlist.json", text, "hermes")
        == text
    )


def test_remove_after_an_edit_keeps_the_empty_hermes_keys_the_user_had_and_drops_adds_own(
    rt: Runtime, isolated_env: Path
) -> None:
    path = isolated_env / ".hermes" / "config.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("model: x\nhooks:\n  post_llm_call: []\n  pre_tool_call: []\n")
    run_add(rt, agent_harness("hermes"))
    run_add(rt, agent_harness("hermes"))  # a second add remembers what the first one found
    path.write_text(path.read_text().replace("model: x", "model: y"))  # edited after add
    run_remove(rt, agent_harness("hermes"))
    assert path.read_text() == "model: y\nhooks:\n  post_llm_call: []\n  pre_tool_call: []\n"
    path.write_text("model: y\n")  # the user drops the keys; the next add and remove
    run_add(rt, agent_harness("hermes"))  # leave none behind
    run_remove(rt, agent_harness("hermes"))
    assert path.read_text() == "model: y\n"


LINKED_CONFIGS = {
    "claude settings.json": ("claude", (".claude", "settings.json"), '{\n  "hooks": {}\n}\n'),
    "claude .claude.json": ("claude", (".claude.json",), '{"numStartups": 3, "mcpServers": {}}'),
    "codex config.toml": ("codex", (".codex", "config.toml"), 'model = "gpt-5"  # mine\n'),
    "codex hooks.json": ("codex", (".codex", "hooks.json"), '{"hooks": {}}\n'),
    "hermes config.yaml": (
        "hermes",
        (".hermes", "config.yaml"),
        "hooks:\n  on_session_finalize: []\n",
    ),
    "hermes allowlist": (
        "hermes",
        (".hermes", "shell-hooks-allowlist.json"),
        '{"approvals": [], "version": 1}\n',
    ),
}


@pytest.mark.parametrize("config", sorted(LINKED_CONFIGS))
def test_a_symlinked_config_is_edited_through_the_link_and_given_back_byte_for_byte(
    rt: Runtime, isolated_env: Path, config: str
) -> None:
    # a dotfiles setup: the atomic write renamed over the link, leaving a regular file, the
    # file was backed up under both names, and remove lost the `[]` / `{}` add had found
    agent, parts, text = LINKED_CONFIGS[config]
    target = isolated_env / "dotfiles" / parts[-1]
    target.parent.mkdir(exist_ok=True)
    target.write_text(text)
    link = isolated_env.joinpath(*parts)
    link.symlink_to(target)
    run_add(rt, agent_harness(agent))
    assert link.is_symlink() and link.resolve() == target.resolve()
    assert "funes" in target.read_text()
    run_add(rt, agent_harness(agent))
    run_remove(rt, agent_harness(agent))
    assert link.is_symlink() and link.resolve() == target.resolve()
    assert target.read_text() == text
    [backup] = rt.paths.backups.glob("*.orig")  # one, of the file the link points to
    assert backup.name.endswith("dotfiles_" + parts[-1] + ".orig") and backup.read_text() == text


def test_a_symlinked_pi_extension_is_rewritten_through_the_link(
    rt: Runtime, isolated_env: Path
) -> None:
    target = isolated_env / "dotfiles" / "funes.ts"
    target.parent.mkdir()
    target.write_text(
        "// funes: generated by `funes add pi`; `funes remove pi` deletes it. Edits are "
        "overwritten.\nold\n"
    )
    link = isolated_env / ".pi" / "agent" / "extensions" / "funes.ts"
    link.parent.mkdir(parents=True)
    link.symlink_to(target)
    run_add(rt, agent_harness("pi"))
    assert link.is_symlink() and "funes-enqueue.py" in target.read_text()


def test_a_symlink_to_a_config_not_there_yet_is_created_through_and_removed_again(
    rt: Runtime, isolated_env: Path
) -> None:
    target = isolated_env / "dotfiles" / "claude-settings.json"
    target.parent.mkdir()
    link = isolated_env / ".claude" / "settings.json"
    link.symlink_to(target)
    run_add(rt, agent_harness("claude"))
    assert link.is_symlink() and "funes-enqueue.py" in target.read_text()
    run_remove(rt, agent_harness("claude"))
    assert link.is_symlink() and not target.exists()  # funes' file goes, the user's link stays


HERMES_COMMENTED = [
    "hooks:\n  post_llm_call: []\n  # on_session_finalize: [{command: foo}]   (disabled for now)\n",
    "hooks:\n  post_llm_call: []\n# --- MCP servers below; keep in sync with work laptop ---\n"
    "mcp_servers:\n  other: {command: x}\n",
    "model: x\nmcp_servers: {}\n\n# trailing comment\n",
    "model: x\nhooks: {}\n\n# trailing comment\n",
    "mcp_servers: {}\nhooks: {}\n\n# trailing comment\n",
    "hooks:\n  post_llm_call:\n    - command: ~/bin/log.sh\n  # more to come\nmodel: x  # mine\n",
]


@pytest.mark.parametrize("text", HERMES_COMMENTED)
def test_remove_keeps_the_comments_of_the_hermes_config(
    rt: Runtime, isolated_env: Path, text: str
) -> None:
    # a comment after the user's value sits, once add appended its entries, after funes' own
    # nodes: ruamel attached it to them and remove took it out with them
    path = isolated_env / ".hermes" / "config.yaml"
    path.write_text(text)
    run_add(rt, agent_harness("hermes"))
    added = path.read_text()
    comments = [line.strip() for line in text.splitlines() if line.strip().startswith("#")]
    assert all(comment in added for comment in comments)
    run_remove(rt, agent_harness("hermes"))
    assert path.read_text() == text


@pytest.mark.parametrize("text", HERMES_COMMENTED)
def test_remove_after_an_edit_keeps_the_edit_and_the_comments_of_the_hermes_config(
    rt: Runtime, isolated_env: Path, text: str
) -> None:
    path = isolated_env / ".hermes" / "config.yaml"
    path.write_text("editor: vi\n" + text)
    run_add(rt, agent_harness("hermes"))
    path.write_text(path.read_text().replace("editor: vi", "editor: emacs"))  # edited after add
    run_remove(rt, agent_harness("hermes"))
    assert path.read_text() == "editor: emacs\n" + text


def test_readding_hermes_with_other_settings_keeps_a_comment_after_its_mcp_entry(
    rt: Runtime, isolated_env: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = isolated_env / ".hermes" / "config.yaml"
    text = "mcp_servers: {}\n# the end\n"
    path.write_text(text)
    run_add(rt, agent_harness("hermes"))
    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:9")  # written into funes' MCP entry
    run_add(Runtime.resolve(), agent_harness("hermes"))
    assert "# the end" in path.read_text()
    run_remove(rt, agent_harness("hermes"))
    assert path.read_text() == text


@pytest.mark.parametrize(
    "text",
    [
        "model: x\r\nhooks:\r\n  post_llm_call: []\r\n",
        "# mine\r\nmcp_servers:\r\n  other: {command: x}  # keep\r\n\r\n# the end\r\n",
    ],
)
def test_add_and_remove_keep_the_crlf_line_endings_of_a_hermes_config(
    rt: Runtime, isolated_env: Path, text: str
) -> None:
    # ruamel reads and writes `\n`: the file came back with LF line endings
    path = isolated_env / ".hermes" / "config.yaml"
    path.write_bytes(text.encode())
    run_add(rt, agent_harness("hermes"))
    added = path.read_bytes()
    assert b"funes-enqueue.py" in added and added.count(b"\n") == added.count(b"\r\n")
    path.write_bytes(b"editor: vi\r\n" + added)  # an edit: the pre-add bytes do not apply
    run_remove(rt, agent_harness("hermes"))
    assert path.read_bytes() == b"editor: vi\r\n" + text.encode()
    path.write_bytes(text.encode())
    run_add(rt, agent_harness("hermes"))
    run_remove(rt, agent_harness("hermes"))
    assert path.read_bytes() == text.encode()


@pytest.mark.parametrize(
    ("agent", "parts", "text"),
    [
        ("claude", (".claude", "settings.json"), '{\r\n  "model": "opus"\r\n}\r\n'),
        ("codex", (".codex", "config.toml"), 'model = "gpt-5"\r\n'),
    ],
    ids=["claude", "codex"],
)
def test_remove_gives_back_a_crlf_config_byte_for_byte(
    rt: Runtime, isolated_env: Path, agent: str, parts: tuple[str, ...], text: str
) -> None:
    # the copy from before add was read with `\r\n` turned into `\n`
    path = isolated_env.joinpath(*parts)
    path.write_bytes(text.encode())
    run_add(rt, agent_harness(agent))
    run_remove(rt, agent_harness(agent))
    assert path.read_bytes() == text.encode()


@pytest.mark.parametrize(
    ("agent", "parts", "text"),
    [
        ("claude", (".claude", "settings.json"), '{\r\n  "model": "opus"\r\n}\r\n'),
        ("claude", (".claude.json",), '{\r\n  "numStartups": 3,\r\n  "projects": {}\r\n}\r\n'),
        ("codex", (".codex", "hooks.json"), '{\r\n  "hooks": {}\r\n}\r\n'),
        ("claude", (".claude", "settings.json"), '{\r\n  "model": "opus",\n  "x": 1\r\n}\n'),
    ],
    ids=["claude-settings", "claude-json", "codex-hooks", "mixed"],
)
def test_add_keeps_the_line_endings_of_a_json_config(
    rt: Runtime, isolated_env: Path, agent: str, parts: tuple[str, ...], text: str
) -> None:
    # the JSON configs were read with `\r\n` as `\n` and written back whole: a CRLF
    # settings.json stayed LF for as long as funes was installed
    path = isolated_env.joinpath(*parts)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.encode())
    run_add(rt, agent_harness(agent))
    added = path.read_bytes()
    assert added != text.encode() and b"funes" in added
    before = text.encode().split(b"\n")[:-1]
    after = added.split(b"\n")[:-1]
    # a line that is still there as it was keeps its ending; every other line (added, or
    # changed: a comma after it) takes the ending of the file's first line
    first_crlf = before[0].endswith(b"\r")
    kept = set(before)
    assert all(line.endswith(b"\r") == first_crlf for line in after if line not in kept)
    if all(line.endswith(b"\r") for line in before):
        assert added.count(b"\n") == added.count(b"\r\n")
    else:
        assert b'"opus",\n' in added and added.endswith(b"}\n")  # the LF ones kept theirs
    assert json.loads(added) is not None
    run_remove(rt, agent_harness(agent))
    assert path.read_bytes() == text.encode()


CODEX_LINE_ENDINGS = {
    "CRLF": '# mine\r\nmodel = "gpt-5"\r\n\r\n[projects."/p"]\r\ntrust_level = "trusted"\r\n',
    "LF": '# mine\nmodel = "gpt-5"\n\n[projects."/p"]\ntrust_level = "trusted"\n',
    "mixed, CRLF first": '# mine\r\nmodel = "gpt-5"\n\n[tui]\r\nnotifications = true\n',
    "mixed, LF first": '# mine\nmodel = "gpt-5"\r\n\r\n[tui]\nnotifications = true\r\n',
}


@pytest.mark.parametrize("case", CODEX_LINE_ENDINGS)
def test_codex_add_keeps_the_line_endings_of_config_toml(
    rt: Runtime, isolated_env: Path, case: str
) -> None:
    # add wrote the whole file back with `\n` (it was read with `\r\n` as `\n`): a CRLF
    # config.toml stayed LF for as long as funes was installed
    text = CODEX_LINE_ENDINGS[case]
    path = isolated_env / ".codex" / "config.toml"
    path.write_bytes(text.encode())
    run_add(rt, agent_harness("codex"))
    added = path.read_bytes().decode()
    lines = added.splitlines(keepends=True)
    assert all(line in lines for line in text.splitlines(keepends=True))  # each as it was
    first = text.splitlines(keepends=True)[0].removeprefix("# mine")
    new = [line for line in lines if line not in text.splitlines(keepends=True)]
    assert new and all(line.endswith(first) and not line.endswith("\r" + first) for line in new)
    config = tomllib.loads(added)
    assert config["model"] == "gpt-5" and "funes-enqueue.py" in " ".join(config["notify"])
    assert config["mcp_servers"]["funes"]["args"][:3] == ["-m", "funes", "mcp"]
    run_remove(rt, agent_harness("codex"))
    assert path.read_bytes() == text.encode()


@pytest.mark.parametrize("text", ["", "\n", "# nothing here yet\n\n#   model: x\n"])
def test_add_then_remove_gives_back_an_empty_or_comments_only_hermes_config(
    rt: Runtime, isolated_env: Path, text: str
) -> None:
    # an empty file came back as `{}`, and add refused a comments-only one ("does not hold a
    # mapping")
    path = isolated_env / ".hermes" / "config.yaml"
    path.write_text(text)
    run_add(rt, agent_harness("hermes"))
    added = path.read_text()
    assert "funes-enqueue.py" in added
    assert all(line in added for line in text.splitlines() if line.startswith("#"))
    run_remove(rt, agent_harness("hermes"))
    assert path.read_text() == text


@pytest.mark.parametrize("text", ["", "\n", "# nothing here yet\n", "model: [a,b]\n"])
def test_remove_leaves_a_hermes_config_it_never_touched_as_it_is(
    rt: Runtime, isolated_env: Path, text: str
) -> None:
    # remove wrote `{}` into an empty file, refused a comments-only one (exit 1), and wrote
    # back the others as ruamel lays them out (`[a, b]`)
    path = isolated_env / ".hermes" / "config.yaml"
    path.write_text(text)
    removed = run_remove(rt, agent_harness("hermes"))
    assert str(path) not in removed.changed
    assert path.read_text() == text


def test_a_config_deleted_between_two_installs_is_not_left_behind_by_the_second_remove(
    rt: Runtime, isolated_env: Path
) -> None:
    path = isolated_env / ".claude.json"
    path.write_text('{"a": 1}\n')
    run_add(rt, agent_harness("claude"))
    run_remove(rt, agent_harness("claude"))
    path.unlink()  # the user (or Claude Code) deletes it
    run_add(rt, agent_harness("claude"))
    assert path.exists()
    run_remove(rt, agent_harness("claude"))
    assert not path.exists()


@pytest.mark.parametrize("agent", AGENTS)
def test_hooks_left_on_another_funes_install_are_reported_until_added_again(
    rt: Runtime, isolated_env: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, agent: str
) -> None:
    # funes was first installed in another venv; its hooks still name that interpreter.
    old_bin = tmp_path / "old-venv" / "bin"
    old_bin.mkdir(parents=True)
    old_python = old_bin / "python3"
    old_python.symlink_to(sys.executable)  # a venv's python is a link to the base interpreter
    with monkeypatch.context() as m:
        m.setattr(sys, "executable", str(old_python))
        run_add(rt, agent_harness(agent))

    def warnings() -> list[str]:
        [check] = [c for c in run_checks(rt) if c.agent == agent]
        assert check.hooks
        return [w for w in check.warnings if "funes hook" in w]

    [other] = warnings()
    assert str(old_python) in other and f"funes add {agent}" in other and "another funes" in other
    old_python.unlink()  # the old venv is deleted
    [gone] = warnings()
    assert f"{old_python}, which is gone" in gone
    assert any(gone in line for line in run_status(rt, parse_memory(None, rt)).attention)
    run_add(rt, agent_harness(agent))
    assert warnings() == []


@pytest.mark.parametrize("agent", AGENTS)
def test_one_install_reached_through_a_symlinked_directory_is_not_another_funes(
    rt: Runtime, isolated_env: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, agent: str
) -> None:
    # The checkout (or venv) is reached through a linked path, e.g. ~/src -> /data/src: the
    # hook was written with one spelling of the bin directory, `funes status` runs with another.
    venv_bin = tmp_path / "data" / "venv" / "bin"
    venv_bin.mkdir(parents=True)
    (venv_bin / "python3").symlink_to(sys.executable)
    (tmp_path / "src").symlink_to(tmp_path / "data")
    linked_python = tmp_path / "src" / "venv" / "bin" / "python3"
    with monkeypatch.context() as m:
        m.setattr(sys, "executable", str(linked_python))
        run_add(rt, agent_harness(agent))
    monkeypatch.setattr(sys, "executable", str(venv_bin / "python3"))
    [check] = [c for c in run_checks(rt) if c.agent == agent]
    assert check.hooks
    assert [w for w in check.warnings if "funes hook" in w] == []


def test_remove_gives_back_a_codex_config_whose_last_table_is_the_users_own_server(
    rt: Runtime, isolated_env: Path
) -> None:
    # tomlkit puts a blank line before the [mcp_servers.funes] it appends; removing the table
    # left that line behind at the end of the user's [mcp_servers.other].
    text = '# my codex\nmodel = "o3"\n\n[mcp_servers.other]\ncommand = "x"\n'
    assert add_then_remove(rt, isolated_env / ".codex" / "config.toml", text, "codex") == text


def test_remove_takes_out_the_pi_extensions_directory_add_created(
    rt: Runtime, isolated_env: Path
) -> None:
    agent_dir = isolated_env / ".pi" / "agent"
    agent_dir.mkdir(parents=True, exist_ok=True)
    (agent_dir / "settings.json").write_text('{"theme": "x"}\n')
    run_add(rt, agent_harness("pi"))
    assert (agent_dir / "extensions" / "funes.ts").exists()
    run_remove(rt, agent_harness("pi"))
    assert sorted(p.name for p in agent_dir.iterdir()) == ["settings.json"]


@pytest.mark.parametrize("agent", AGENTS)
def test_folders_add_creates_in_an_agent_home_are_private_whatever_the_umask(
    rt: Runtime, isolated_env: Path, agent: str
) -> None:
    """An agent loads code and settings from the folders `add` creates (pi's extensions/):
    under umask 000 they were made 0777, writable by every user of the machine."""
    before = {p for p in isolated_env.rglob("*") if p.is_dir()}
    old = os.umask(0)
    try:
        run_add(rt, agent_harness(agent))
    finally:
        os.umask(old)
    made = {p for p in isolated_env.rglob("*") if p.is_dir()} - before
    assert made or agent != "pi"
    loose = {str(p): oct(p.stat().st_mode & 0o777) for p in made if p.stat().st_mode & 0o077}
    assert loose == {}


@pytest.mark.parametrize("agent", AGENTS)
def test_hooks_that_queue_into_another_funes_home_are_reported(
    isolated_env: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, agent: str
) -> None:
    # Added under one FUNES_HOME, checked under another: the hook's turns go to the first
    # one's spool and memory, so this status would say "not fired yet" forever.
    run_add(Runtime.resolve(), agent_harness(agent))
    first_spool = Runtime.resolve().paths.spool
    monkeypatch.setenv("FUNES_HOME", str(tmp_path / "other-funes"))
    rt = Runtime.resolve()
    [check] = [c for c in run_checks(rt) if c.agent == agent]
    assert check.hooks
    [warning] = [w for w in check.warnings if "funes hook" in w]
    assert str(first_spool) in warning and f"funes add {agent}" in warning
    attention = run_status(rt, parse_memory(None, rt)).attention
    assert any(warning in line for line in attention)
    assert not any("not fired yet" in line for line in attention)  # it fires, elsewhere
    run_add(rt, agent_harness(agent))
    [check] = [c for c in run_checks(rt) if c.agent == agent]
    assert [w for w in check.warnings if "funes hook" in w] == []


CODEX_LAYOUTS = {
    "empty": "",
    "a key": 'model = "o3"\n',
    "own notify": 'notify = ["terminal-notifier", "-title", "Codex"]\n',
    "key and own notify": '# mine\nmodel = "o3"\nnotify = [\n  "say",\n  "done",\n]\n',
    "own notify, a table": 'notify = ["say"]\n\n[projects."/p"]\ntrust_level = "trusted"\n',
    "own notify, own server": 'notify = ["say"]\n\n[mcp_servers.other]\ncommand = "x"\n',
    "key, own server": 'model = "o3"\n\n[mcp_servers.other]\ncommand = "x"\n',
    "own notify, empty servers": 'notify = ["say"]\n\n[mcp_servers]\n\n[tui]\nnotifications = true\n',
    "own notify, CRLF": 'notify = ["say"]\r\n\r\n[mcp_servers.x]\r\ncommand = "x"\r\n',
}
CODEX_ENDINGS = {"final newline": "", "no final newline": None, "a blank line": "\n", "two": "\n\n"}
CODEX_TRUST = '\n[hooks.state."/h/.codex/hooks.json:stop:0:0"]\ntrusted_hash = "sha256:ab"\n'


@pytest.mark.parametrize("history", ["untouched", "codex wrote since", "an earlier add"])
@pytest.mark.parametrize("ending", CODEX_ENDINGS)
@pytest.mark.parametrize("layout", CODEX_LAYOUTS)
def test_codex_add_then_remove_gives_back_the_users_config_toml_byte_for_byte(
    rt: Runtime, isolated_env: Path, layout: str, ending: str, history: str
) -> None:
    """Over layouts with and without the user's own notify, each with or without final newline
    and trailing blank lines: remove gave back tomlkit's re-serialisation whenever the bytes
    from before funes' first edit no longer matched (Codex records the trust of funes' hooks in
    config.toml; an earlier add/remove kept the backup of another config), leaving a blank line
    behind or taking the user's away. Whatever Codex wrote since add is kept."""
    path = isolated_env / ".codex" / "config.toml"
    if history == "an earlier add":
        add_then_remove(rt, path, 'model = "gpt-5"\n', "codex")
    suffix = CODEX_ENDINGS[ending]
    text = CODEX_LAYOUTS[layout]
    text = text.rstrip("\r\n") if suffix is None else text + suffix
    path.write_bytes(text.encode())
    run_add(rt, agent_harness("codex"))
    expected = text
    if history == "codex wrote since":
        added = path.read_bytes()
        path.write_bytes(b'approval_policy = "never"\n' + added + CODEX_TRUST.encode())
        expected = 'approval_policy = "never"\n' + text + CODEX_TRUST
    run_remove(rt, agent_harness("codex"))
    assert path.read_bytes() == expected.encode()


CLAUDE_LAYOUTS = {
    "one line": '{"model":"opus","permissions":{"allow":["Bash(ls:*)"]}}',
    "one line, spaced": '{"model": "opus", "permissions": {"allow": ["Bash(ls:*)"]}}',
    "tabs": '{\n\t"model": "opus",\n\t"permissions": {\n\t\t"allow": [\n\t\t\t"Bash(ls:*)"\n\t\t]\n\t}\n}',
    "4 spaces": '{\n    "model": "opus",\n    "permissions": {\n        "allow": [\n            "Bash(ls:*)"\n        ]\n    }\n}',
    "2 spaces": '{\n  "model": "opus",\n  "permissions": {\n    "allow": [\n      "Bash(ls:*)"\n    ]\n  }\n}',
}


@pytest.mark.parametrize("history", ["untouched", "an earlier add"])
@pytest.mark.parametrize("final_newline", [True, False])
@pytest.mark.parametrize("layout", CLAUDE_LAYOUTS)
def test_claude_add_keeps_the_layout_of_settings_json_and_remove_gives_its_bytes_back(
    rt: Runtime, isolated_env: Path, layout: str, final_newline: bool, history: str
) -> None:
    """A settings.json written on one line or indented with tabs was rewritten by add with a
    2-space indent: the user's own settings, untouched by funes, changed layout. Now add writes
    the file in its own layout (funes' hooks appended after the user's keys, which stay byte
    for byte), and remove gives back the original bytes."""
    path = isolated_env / ".claude" / "settings.json"
    if history == "an earlier add":
        add_then_remove(rt, path, '{\n  "model": "sonnet"\n}\n', "claude")
    text = CLAUDE_LAYOUTS[layout] + ("\n" if final_newline else "")
    path.write_text(text)
    run_add(rt, agent_harness("claude"))
    added = path.read_text()
    user_part = text.rstrip()[:-1].rstrip()  # up to the user's last value
    assert added.startswith(user_part + ",")
    assert ("\n" in added.rstrip("\n")) == ("\n" in text.rstrip("\n"))
    assert added.endswith("\n") == final_newline
    indent = "\t" if layout == "tabs" else " " * 4 if layout == "4 spaces" else "  "
    if not layout.startswith("one line"):
        assert f'\n{indent}"hooks": {{\n{indent * 2}"Stop": [' in added
    run_remove(rt, agent_harness("claude"))
    assert path.read_text() == text
