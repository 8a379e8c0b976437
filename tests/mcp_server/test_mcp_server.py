"""`python -m funes mcp` as a real subprocess, spoken to over newline-delimited JSON-RPC.

The initialize payloads are the ones Claude Code and Codex really send (captured in
shared/agent-e2e/captured/*/mcp-server-received.jsonl).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from support.claude import CWD, SESSION_ID, index_into_local_memory, write_claude_session

import funes

CLAUDE_INIT = {
    "protocolVersion": "2025-11-25",
    "capabilities": {"roots": {}, "elicitation": {}},
    "clientInfo": {"name": "claude-code", "title": "Claude Code", "version": "2.1.197"},
}
CODEX_INIT = {
    "protocolVersion": "2025-06-18",
    "capabilities": {
        "experimental": {"codex/auth-change": {}},
        "elicitation": {"form": {}, "url": {}},
    },
    "clientInfo": {"name": "codex-mcp-client", "title": "Codex", "version": "0.171.0"},
}
# Claude Code 2.1.332 opens with this 2026-07-28 probe before falling back to `initialize`.
CLAUDE_DISCOVER_PROBE = {
    "_meta": {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {
            "name": "claude-code",
            "title": "Claude Code",
            "version": "2.1.332",
        },
        "io.modelcontextprotocol/clientCapabilities": {
            "roots": {"listChanged": True},
            "elicitation": {"form": {}, "url": {}},
        },
    }
}
# How much later than a bare `import funes.cli` (the CLI the server is started through) the
# answer to `initialize` may come. Relative, because shared machines swing wall times 3x; the
# SDK import alone (1-2 s of CPU) or a model load would not fit in it.
EARLY_ANSWER_BUDGET_S = 0.5


class McpProcess:
    """A `python -m funes mcp` child and a minimal JSON-RPC client over its pipes."""

    def __init__(
        self,
        env: dict[str, str],
        *args: str,
        debug: bool = False,
        python_args: list[str] | None = None,  # instead of `-m funes mcp ARGS`
    ) -> None:
        self.started = time.perf_counter()
        command = python_args or ["-m", "funes", *(["--debug"] if debug else []), "mcp", *args]
        self.proc = subprocess.Popen(
            [sys.executable, *command],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
            start_new_session=True,  # its own process group, to find anything it leaves behind
        )
        self.lines: list[bytes] = []  # every stdout line, for the purity check
        self.stderr = b""
        self._next_id = 0
        self._stderr_reader = threading.Thread(target=self._drain_stderr, daemon=True)
        self._stderr_reader.start()

    def _drain_stderr(self) -> None:
        assert self.proc.stderr is not None
        self.stderr = self.proc.stderr.read()

    def send(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write((json.dumps(message) + "\n").encode())
        self.proc.stdin.flush()

    def request(
        self, method: str, params: dict[str, Any] | None = None, timeout_s: float = 120.0
    ) -> dict[str, Any]:
        """Send a request and return its response; notifications seen meanwhile are kept in `lines`."""
        self._next_id += 1
        rid = self._next_id
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)
        deadline = time.monotonic() + timeout_s
        assert self.proc.stdout is not None
        while time.monotonic() < deadline:
            line = self.proc.stdout.readline()
            if not line:
                raise AssertionError(
                    f"server closed stdout; stderr:\n{self.stderr.decode(errors='replace')}"
                )
            self.lines.append(line)
            frame = json.loads(line)
            if frame.get("id") == rid and "method" not in frame:
                return frame
        raise AssertionError(f"no response to {method} within {timeout_s} s")

    def initialize(self, params: dict[str, Any] = CLAUDE_INIT) -> dict[str, Any]:
        response = self.request("initialize", params)
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return response

    def call(
        self, name: str, arguments: dict[str, Any], meta: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        params: dict[str, Any] = {"name": name, "arguments": arguments}
        if meta:
            params["_meta"] = meta
        response = self.request("tools/call", params)
        assert "result" in response, response
        return response["result"]

    def children(self) -> list[int]:
        """PIDs whose parent is the server (Linux /proc)."""
        out = []
        for stat in Path("/proc").glob("[0-9]*/stat"):
            try:
                fields = stat.read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == self.proc.pid:
                out.append(int(stat.parent.name))
        return out

    def cpu_seconds(self) -> float:
        """User + system CPU time the server has used so far (Linux /proc)."""
        fields = Path(f"/proc/{self.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def mapped_libraries(self) -> str:
        return Path(f"/proc/{self.proc.pid}/maps").read_text()

    def close(self, timeout_s: float = 30.0) -> int:
        """Close stdin (what an agent does on exit) and wait for the server to leave."""
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        try:
            rc = self.proc.wait(timeout_s)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()
        self._stderr_reader.join(5)
        assert self.proc.stdout is not None
        self.lines.extend(self.proc.stdout.read().splitlines(keepends=True))
        return rc


@pytest.fixture
def server(funes_env: dict[str, str]):
    servers: list[McpProcess] = []

    def start(*args: str, env: dict[str, str] | None = None, debug: bool = False) -> McpProcess:
        servers.append(McpProcess(env or funes_env, *args, debug=debug))
        return servers[-1]

    yield start
    for s in servers:
        if s.proc.poll() is None:
            s.proc.kill()
            s.proc.wait()


@pytest.fixture
def indexed_memory(tmp_path: Path) -> dict[str, Any]:
    written = write_claude_session(tmp_path / "transcripts", session_id=SESSION_ID, cwd=CWD)
    assert index_into_local_memory(written.path) > 0
    return {"session_id": written.session_id, "turn_ids": written.turn_ids}


def text_of(result: dict[str, Any]) -> str:
    assert [c["type"] for c in result["content"]] == ["text"]
    return result["content"][0]["text"]


def cli(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "funes", *args],
        capture_output=True,
        text=True,
        env=env,
        stdin=subprocess.DEVNULL,
        timeout=300,
    )


def assert_pure_protocol(lines: list[bytes]) -> None:
    assert lines, "the server wrote nothing"
    for line in lines:
        frame = json.loads(line)
        assert frame.get("jsonrpc") == "2.0", line


def cli_import_seconds() -> float:
    """Wall time of a bare interpreter importing the CLI (what runs before the server starts)."""
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", "import funes.cli"], check=True)
    return time.perf_counter() - started


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
@pytest.mark.parametrize(
    ("client_init", "negotiated"),
    [
        (CLAUDE_INIT, "2025-11-25"),
        (CODEX_INIT, "2025-06-18"),
        ({**CODEX_INIT, "protocolVersion": "2099-01-01"}, "2025-11-25"),
    ],
    ids=["claude-code", "codex", "unknown-version"],
)
def test_initialize_and_tools_list_answer_before_the_sdk_or_any_model_loads(
    server, client_init, negotiated
) -> None:
    floor_s = cli_import_seconds()
    mcp = server(debug=True)
    init = mcp.initialize(client_init)
    init_s = time.perf_counter() - mcp.started
    listed = mcp.request("tools/list")
    list_s = time.perf_counter() - mcp.started
    maps = mcp.mapped_libraries()

    result = init["result"]
    assert result["protocolVersion"] == negotiated
    assert result["serverInfo"] == {
        "name": "funes",
        "title": "funes memory",
        "version": funes.__version__,
    }
    assert result["capabilities"] == {"tools": {"listChanged": False}}
    assert "recall" in result["instructions"]
    assert init_s < floor_s + EARLY_ANSWER_BUDGET_S, (init_s, floor_s)
    assert list_s < floor_s + EARLY_ANSWER_BUDGET_S, (list_s, floor_s)
    assert "onnxruntime" not in maps and "tokenizers" not in maps
    print(
        f"initialize answered {init_s:.2f} s after spawn (bare CLI import {floor_s:.2f} s)",
        file=sys.stderr,
    )

    tools = {t["name"]: t for t in listed["result"]["tools"]}
    assert set(tools) == {"recall", "get", "sessions", "status"}
    recall, get, status = (
        tools["recall"]["inputSchema"],
        tools["get"]["inputSchema"],
        tools["status"]["inputSchema"],
    )
    scope = {"project", "since", "until"}
    assert set(recall["properties"]) == {
        "query", "k", "block_type", "harness", "session", "all", "memory", *scope,
    }  # fmt: skip
    assert recall["required"] == ["query"]
    assert recall["properties"]["block_type"]["items"]["enum"] == [
        "text",
        "thinking",
        "tool_use",
        "tool_result",
    ]
    assert set(get["properties"]) == {"session_id", "turn_uuid", "window", "memory", *scope}
    assert get["required"] == ["session_id", "turn_uuid"]
    assert set(status["properties"]) == {"memory"}
    for word in ("past", "decisions", "errors", "critically", "provenance"):
        assert word in tools["recall"]["description"]

    # A tool call is the SDK's: once it is answered, the SDK serves the connection, and it
    # lists the same tools the early answer did.
    assert mcp.call("status", {})["isError"] is False
    assert mcp.request("tools/list")["result"] == listed["result"]
    assert mcp.close() == 0
    assert_pure_protocol(mcp.lines)
    log = mcp.stderr.decode()
    assert "answered 2 request(s) before the SDK loaded" in log
    assert "differed from the SDK" not in log  # the SDK's own reply to the replayed initialize


def test_recall_and_get_return_exactly_what_the_cli_prints(
    server, indexed_memory, funes_env
) -> None:
    mcp = server()
    mcp.initialize()
    # Claude Code sends a progressToken and its tool-use id in _meta.
    meta = {"claudecode/toolUseId": "toolu_fake_000000000001", "progressToken": 2}
    recalled = mcp.call(
        "recall", {"query": "why did we not move the ledger to postgres", "k": 3}, meta
    )
    assert recalled["isError"] is False
    text = text_of(recalled)
    cli_recall = cli(funes_env, "recall", "why did we not move the ledger to postgres", "-k", "3")
    assert cli_recall.returncode == 0, cli_recall.stderr

    # Scores carry a recency factor computed at call time: compare everything but their digits.
    def unscored(s: str) -> str:
        return re.sub(r"score=\d+\.\d{3}", "score=_", s)

    assert unscored(text) == unscored(cli_recall.stdout)
    assert "rejected moving to Postgres" in text
    get_line = next(line for line in text.splitlines() if line.startswith("  → get "))
    _, _, session_id, turn_id, _, memory = get_line.split()
    assert session_id == SESSION_ID and turn_id in indexed_memory["turn_ids"] and memory == "local"
    for line in mcp.lines:  # any progress notification is about this call and well formed
        frame = json.loads(line)
        if frame.get("method") == "notifications/progress":
            assert frame["params"]["progressToken"] == 2 and "loading" in frame["params"]["message"]

    miss = mcp.call("recall", {"query": "zzzzqqq nonexistentterm"})
    assert miss["isError"] is False
    assert text_of(miss).startswith("no supporting passage (best support ")
    assert len(text_of(miss).splitlines()) == 1
    assert text_of(miss).rstrip().endswith('"all": true shows the weak candidates)')  # its argument
    weak = text_of(mcp.call("recall", {"query": "zzzzqqq nonexistentterm", "all": True}))
    assert weak.splitlines()[0].endswith("weak candidates follow)") and "  → get " in weak

    got = mcp.call(
        "get", {"session_id": session_id, "turn_uuid": turn_id, "window": 1, "memory": memory}
    )
    assert got["isError"] is False
    cli_get = cli(
        funes_env,
        "get",
        session_id,
        turn_id,
        "--window",
        "1",
        "--memory",
        memory,
        "--format",
        "agent",
    )
    assert cli_get.returncode == 0, cli_get.stderr
    assert text_of(got) == cli_get.stdout
    assert f"turn={turn_id}" in text_of(got)

    filtered = mcp.call(
        "recall", {"query": "busy_timeout", "block_type": "tool_result", "harness": "claude"}
    )
    assert all(
        line.split()[3] == "tool_result"
        for line in text_of(filtered).splitlines()
        if line.startswith("[2026")
    )
    assert "src/db.py:14" in text_of(filtered)
    assert mcp.children() == []
    assert mcp.close() == 0
    assert_pure_protocol(mcp.lines)


def test_status_matches_the_cli_and_a_positional_memory_binds_the_default(
    server, indexed_memory, funes_env, tmp_path
) -> None:
    mcp = server()
    mcp.initialize()
    status = text_of(mcp.call("status", {}))
    cli_status = cli(funes_env, "status", "--format", "agent")
    assert status == cli_status.stdout
    assert status.startswith("memory: local\n") and "chunks: 7  sessions: 1" in status
    assert mcp.close() == 0

    other = tmp_path / "elsewhere.db"
    bound = server(str(other))
    bound.initialize()
    refused = bound.call("recall", {"query": "ledger"})
    assert refused["isError"] is True
    assert f"funes: no memory at {other}" in text_of(refused)
    overridden = bound.call("recall", {"query": "ledger", "memory": "local", "k": 1})
    assert overridden["isError"] is False
    assert "--memory local" in text_of(overridden)
    assert bound.close() == 0


def test_bad_calls_come_back_as_tool_errors_and_the_server_keeps_serving(server, tmp_path) -> None:
    mcp = server()
    mcp.initialize()
    no_memory = mcp.call("recall", {"query": "anything"})
    assert no_memory["isError"] is True
    assert text_of(no_memory) == (
        "funes: no memory yet\nhint: run `funes index` (or `funes add <agent>`) to build one from your agent sessions"
    )
    missing = mcp.call("status", {"memory": str(tmp_path / "absent.db")})  # as the CLI: an error
    assert missing["isError"] is True
    assert text_of(missing).startswith(f"funes: no memory at {tmp_path / 'absent.db'}\nhint: ")
    not_a_memory = mcp.call("get", {"session_id": "s", "turn_uuid": "t", "memory": "not a memory"})
    assert not_a_memory["isError"] is True
    assert "funes: not a memory: 'not a memory'\nhint: use `local`" in text_of(not_a_memory)
    bad_k = mcp.call("recall", {"query": "x", "k": "many"})
    assert bad_k["isError"] is True and "`k` must be an integer" in text_of(bad_k)
    no_query = mcp.call("recall", {})
    assert no_query["isError"] is True and "`query` is required" in text_of(no_query)
    unknown = mcp.call("forget", {})
    assert unknown["isError"] is True and "unknown tool 'forget'" in text_of(unknown)
    assert mcp.request("ping")["result"] == {}
    assert mcp.close() == 0
    assert_pure_protocol(mcp.lines)


def test_a_cold_model_cache_fails_the_first_recall_not_the_handshake(
    server, indexed_memory, funes_env, tmp_path
) -> None:
    # A memory stamped with the offline MiniLM, read with an embedder whose weights are not
    # cached and cannot be downloaded (HF_HUB_OFFLINE=1): the handshake must not notice.
    env = {
        **funes_env,
        "FUNES_EMBEDDER": "bge-small-en-v1.5",
        "HF_HOME": str(tmp_path / "empty-hf"),
    }
    mcp = server(env=env)
    mcp.initialize()
    assert {t["name"] for t in mcp.request("tools/list")["result"]["tools"]} == {
        "recall",
        "get",
        "sessions",
        "status",
    }
    failed = mcp.call("recall", {"query": "ledger"})
    assert failed["isError"] is True and text_of(failed).startswith("funes: ")
    assert mcp.call("status", {})["isError"] is False
    assert mcp.close() == 0
    assert_pure_protocol(mcp.lines)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_the_server_exits_when_stdin_closes_and_leaves_no_process_behind(
    server, indexed_memory
) -> None:
    mcp = server()
    mcp.initialize()
    assert mcp.call("recall", {"query": "database is locked", "k": 1})["isError"] is False
    assert mcp.children() == []
    assert mcp.close(timeout_s=30) == 0
    # The server leads its own process group: anything it had spawned would still be in it.
    with pytest.raises(ProcessLookupError):
        os.killpg(mcp.proc.pid, 0)


def test_the_early_answers_mirror_the_pinned_sdk() -> None:
    import mcp_types as types
    from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, LATEST_HANDSHAKE_VERSION

    from funes.mcp_server import tool_list
    from funes.mcp_server.wire import HANDSHAKE_VERSIONS
    from funes.mcp_server.wire import LATEST_HANDSHAKE_VERSION as OURS

    assert HANDSHAKE_VERSIONS == HANDSHAKE_PROTOCOL_VERSIONS and OURS == LATEST_HANDSHAKE_VERSION
    sdk = types.ListToolsResult(tools=[types.Tool.model_validate(t) for t in tool_list()])
    assert sdk.model_dump(by_alias=True, mode="json", exclude_none=True)["tools"] == tool_list()


MINIMAL_INIT = {  # every optional member left out
    "protocolVersion": "2025-06-18",
    "capabilities": {},
    "clientInfo": {"name": "scripted", "version": "1"},
}
INITIALIZE_PARAMS = [
    CLAUDE_INIT,
    CODEX_INIT,
    MINIMAL_INIT,
    {**MINIMAL_INIT, "_meta": {"progressToken": 1}, "extra": True},
    {**MINIMAL_INIT, "clientInfo": {"name": "x", "version": "1", "title": None, "icons": []}},
    {**CLAUDE_INIT, "capabilities": {"roots": None, "experimental": {"a": {}}}},
    None,
    {},
    [],
    "initialize",
    {"protocolVersion": "2025-06-18"},
    {**MINIMAL_INIT, "protocolVersion": 5},
    {**MINIMAL_INIT, "capabilities": None},
    {**MINIMAL_INIT, "capabilities": {"roots": 5}},
    {**MINIMAL_INIT, "capabilities": {"experimental": {"a": 1}}},
    {**MINIMAL_INIT, "clientInfo": {"name": "x"}},
    {**MINIMAL_INIT, "clientInfo": {"name": "x", "version": 1}},
    {**MINIMAL_INIT, "clientInfo": {"name": "x", "version": "1", "title": 5}},
    {**MINIMAL_INIT, "clientInfo": {"name": "x", "version": "1", "icons": [{}]}},
    {**MINIMAL_INIT, "_meta": 5},
]


@pytest.mark.parametrize("params", INITIALIZE_PARAMS)
def test_initialize_is_answered_early_exactly_when_the_pinned_sdk_accepts_its_params(
    params: Any,
) -> None:
    from mcp.server.runner import ServerRunner
    from mcp_types import methods
    from mcp_types.version import LATEST_HANDSHAKE_VERSION

    from funes.mcp_server.wire import acceptable_initialize

    try:  # what the SDK's runner checks before it answers `initialize` (mcp.server.runner)
        methods.validate_client_request("initialize", LATEST_HANDSHAKE_VERSION, params)
        ServerRunner._negotiate_initialize(params)
        sdk = True
    except (ValueError, TypeError, AttributeError):  # pydantic's ValidationError is a ValueError
        sdk = False
    assert acceptable_initialize(params) is sdk


@pytest.mark.parametrize(
    "params",
    [{}, None, {**MINIMAL_INIT, "clientInfo": {"name": "scripted"}}],
    ids=["empty", "absent", "no-client-version"],
)
def test_an_initialize_the_sdk_refuses_gets_its_error_and_logs_no_warning(
    server, params: Any
) -> None:
    # Answered early with a success, the SDK then refused the replayed request and the server
    # logged a WARNING ("early initialize answer differed") for the client's mistake.
    mcp = server()
    refused = mcp.request("initialize", params)
    assert refused["error"]["code"] == -32602, refused  # JSON-RPC invalid params
    assert mcp.initialize(MINIMAL_INIT)["result"]["protocolVersion"] == "2025-06-18"
    assert mcp.call("status", {})["isError"] is False
    assert mcp.close() == 0
    assert_pure_protocol(mcp.lines)
    assert "WARNING" not in mcp.stderr.decode(), mcp.stderr.decode()


def test_an_initialize_leaving_out_optional_members_is_answered_without_a_warning(
    server,
) -> None:
    mcp = server()
    assert mcp.initialize(MINIMAL_INIT)["result"]["protocolVersion"] == "2025-06-18"
    assert mcp.call("status", {})["isError"] is False
    assert mcp.close() == 0
    assert "WARNING" not in mcp.stderr.decode(), mcp.stderr.decode()


def test_a_model_load_two_recalls_wait_on_is_logged_once(indexed_memory, funes_env) -> None:
    # each cold recall logged "loading the embedding model": two recalls sent together (an
    # agent's parallel tool calls) wrote it twice for one load. Announced at once here
    # (slow_first_call_s=0) so the test does not depend on how long the load takes.
    mcp = McpProcess(
        funes_env,
        python_args=[
            "-c",
            "from funes.cli.main import _configure_logging; _configure_logging(False); "
            "from funes.mcp_server.server import serve; serve(slow_first_call_s=0.0)",
        ],
    )
    try:
        mcp.initialize()
        first = {"name": "recall", "arguments": {"query": "postgres"}}
        mcp.send(
            {"jsonrpc": "2.0", "id": 100, "method": "tools/call",
             "params": {**first, "_meta": {"progressToken": 1}}}
        )  # fmt: skip
        second = mcp.request(
            "tools/call",
            {"name": "recall", "arguments": {"query": "ledger"}, "_meta": {"progressToken": 2}},
        )
        assert second["result"]["isError"] is False
        third = mcp.call("recall", {"query": "importer"}, {"progressToken": 3})  # warm by now
        assert third["isError"] is False
    finally:
        assert mcp.close() == 0
    assert mcp.stderr.decode().count("loading the embedding model") == 1, mcp.stderr.decode()
    tokens = [
        frame["params"]["progressToken"]
        for frame in map(json.loads, mcp.lines)
        if frame.get("method") == "notifications/progress"
    ]
    assert sorted(tokens) == [1, 2]  # each waiting call is told, the warm one is not


def test_a_discover_probe_sent_first_is_declined_so_the_handshake_era_is_served(
    server, indexed_memory
) -> None:
    # Unanswered, the probe would reach the SDK first and make it serve the 2026 era, and the
    # `initialize` Claude Code falls back to after ~3 s would then be refused (seen with the
    # real CLI on a slow machine).
    mcp = server()
    probe = mcp.request("server/discover", CLAUDE_DISCOVER_PROBE)
    assert probe["error"]["code"] == -32601
    init = mcp.initialize({**CLAUDE_INIT, "protocolVersion": "2025-11-25"})
    assert init["result"]["protocolVersion"] == "2025-11-25"
    recalled = mcp.call("recall", {"query": "postgres", "k": 1}, {"progressToken": 7})
    assert recalled["isError"] is False and "Postgres" in text_of(recalled)
    assert mcp.close() == 0
    assert "differed from the SDK" not in mcp.stderr.decode()


def test_malformed_input_before_the_sdk_loads_does_not_break_the_session(server) -> None:
    mcp = server()
    assert mcp.proc.stdin is not None
    mcp.proc.stdin.write(b"this is not json\n")
    mcp.proc.stdin.flush()
    init = mcp.initialize()
    assert init["result"]["protocolVersion"] == "2025-11-25"
    assert mcp.call("status", {})["isError"] is False
    mcp.proc.stdin.write(b"\xff{not json either\n")  # and once the SDK serves
    mcp.proc.stdin.flush()
    assert mcp.call("status", {})["isError"] is False
    assert mcp.close() == 0
    assert_pure_protocol(mcp.lines)
    errors = [json.loads(line) for line in mcp.lines if b"-32700" in line]
    assert [e["error"]["code"] for e in errors] == [-32700, -32700]  # JSON-RPC 2.0 parse error
    assert all(e["id"] is None for e in errors)


def test_closing_stdin_before_the_sdk_loads_exits_at_once(server) -> None:
    mcp = server()
    mcp.initialize()
    assert mcp.close(timeout_s=30) == 0
    with pytest.raises(ProcessLookupError):
        os.killpg(mcp.proc.pid, 0)


@pytest.mark.parametrize("wait_for_sdk", [False, True], ids=["before-sdk", "after-sdk"])
def test_requests_written_before_stdin_closes_are_all_answered(
    server, indexed_memory, wait_for_sdk: bool
) -> None:
    # A scripted client (`printf … | funes mcp`) writes its requests and closes stdin at once;
    # it still reads stdout. Every request it sent gets its answer before the server exits.
    mcp = server()
    if wait_for_sdk:
        assert mcp.initialize()["result"]["protocolVersion"] == "2025-11-25"
    else:
        mcp.send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": CLAUDE_INIT})
        mcp.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    calls = {
        11: {"name": "status", "arguments": {}},
        12: {"name": "recall", "arguments": {"query": "postgres", "k": 1}},
        13: {"name": "get", "arguments": {"session_id": "nope", "turn_id": "nope"}},
    }
    for rid, params in calls.items():
        mcp.send({"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": params})
    mcp.send({"jsonrpc": "2.0", "id": 14, "method": "ping"})
    assert mcp.close(timeout_s=120) == 0
    replies = {
        frame["id"]: frame
        for frame in (json.loads(line) for line in mcp.lines)
        if "method" not in frame
    }
    assert set(calls) | {14} <= set(replies), (sorted(replies), mcp.stderr.decode()[-2000:])
    assert replies[11]["result"]["isError"] is False
    assert "Postgres" in text_of(replies[12]["result"])
    assert replies[13]["result"]["isError"] is True
    assert_pure_protocol(mcp.lines)


@pytest.mark.parametrize("wait_for_sdk", [False, True], ids=["before-sdk", "after-sdk"])
def test_lines_the_sdk_never_answers_do_not_hold_the_exit_at_eof(
    server, wait_for_sdk: bool
) -> None:
    # The SDK drops what it cannot read as a request (a batch array, a non-string method) and
    # reads an id that is neither an integer nor a string as a notification; none gets an
    # answer, so waiting for one held the exit for DRAIN_AT_EOF_S (300 s).
    mcp = server()
    if wait_for_sdk:
        mcp.initialize()
    else:
        mcp.send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": CLAUDE_INIT})
        mcp.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    mcp.send([{"jsonrpc": "2.0", "id": 21, "method": "tools/list"}])  # type: ignore[arg-type]
    mcp.send({"jsonrpc": "2.0", "id": 22, "method": 5})
    mcp.send({"jsonrpc": "2.0", "id": 2.5, "method": "tools/call"})
    mcp.send({"jsonrpc": "2.0", "id": True, "method": "tools/call"})
    mcp.send({"jsonrpc": "2.0", "id": 23, "method": "tools/call", "params": {"name": "status"}})
    assert mcp.close(timeout_s=60) == 0
    replies = {
        json.dumps(frame["id"])
        for frame in (json.loads(line) for line in mcp.lines)
        if "method" not in frame
    }
    assert "23" in replies, (sorted(replies), mcp.stderr.decode()[-2000:])
    assert "gave up waiting" not in mcp.stderr.decode()


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"query": "x", "k": 0}, "`k` must be between 1 and 50, got 0"),
        ({"query": "x", "k": 51}, "`k` must be between 1 and 50, got 51"),
        ({"query": "x", "k": True}, "`k` must be an integer, got True"),
        ({"query": "   "}, "`query` is required"),
        ({"query": 42}, "`query` must be a string, got int"),
        ({"query": "x", "block_type": "image"}, "unknown block_type 'image'"),
        ({"query": "x", "harness": "cursor"}, "unknown harness 'cursor'"),
    ],
)
def test_recall_arguments_are_checked_before_the_memory_is_opened(arguments, message) -> None:
    from funes.mcp_server import Tools
    from funes.memory import Runtime

    reply = Tools(Runtime.resolve()).call("recall", arguments)
    assert reply.is_error and message in reply.text


def test_recall_takes_several_block_types_and_a_bare_string_as_one(indexed_memory) -> None:
    # the tool took one block type; a list now means any of them, as a repeated --type does
    from funes.mcp_server import Tools
    from funes.memory import Runtime

    tools = Tools(Runtime.resolve())

    def types(block_type: object) -> set[str]:
        reply = tools.call("recall", {"query": "busy_timeout", "block_type": block_type, "k": 20})
        assert not reply.is_error, reply.text
        return {line.split()[3] for line in reply.text.splitlines() if line.startswith("[2026")}

    assert types(["tool_use", "tool_result"]) == {"tool_use", "tool_result"}
    assert types("tool_result") == types(["tool_result"]) == {"tool_result"}
    bad = tools.call("recall", {"query": "x", "block_type": ["text", 3]})
    assert bad.is_error and "`block_type` must be a string or a list of strings" in bad.text


def test_recall_notes_reach_the_agent_as_a_second_text_block(server, indexed_memory) -> None:
    # they went to the server's stderr log only: an agent never learned its --project matched
    # nothing, or that the vector leg was unavailable
    mcp = server()
    mcp.initialize()
    plain = mcp.call("recall", {"query": "why did we not move the ledger to postgres", "k": 3})
    assert [c["type"] for c in plain["content"]] == ["text"]  # no notes, no second block
    scoped = mcp.call("recall", {"query": "ledger", "project": "/nowhere/at/all"})
    assert scoped["isError"] is False
    result, notes = (c["text"] for c in scoped["content"])
    assert result.startswith("no results")
    assert notes.startswith("funes: no session in this memory matches --project /nowhere/at/all")


def test_the_block_types_the_schema_names_are_the_block_types_funes_stores() -> None:
    from funes.mcp_server.tools import BLOCK_TYPE_NAMES
    from funes.traces import BlockType

    assert tuple(t.value for t in BlockType) == BLOCK_TYPE_NAMES


def test_numbers_sent_as_strings_are_accepted() -> None:
    from funes.mcp_server import Tools
    from funes.memory import Runtime

    reply = Tools(Runtime.resolve()).call("recall", {"query": "x", "k": "3"})
    assert reply.is_error and "no memory yet" in reply.text  # got past the arguments


def test_an_embedding_model_that_failed_to_load_is_not_loaded_again_on_the_next_recall(
    indexed_memory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # each recall of a server loaded the model again: where the Hub is slow or unreachable
    # (not offline), a network timeout per recall. The load is tried once; both recalls
    # answer from BM25 and say why. (Here the model cache cannot hold the int8 graph.)
    from funes.inference import LazyEmbedder
    from funes.mcp_server import Tools
    from funes.memory import Runtime

    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("FUNES_MODEL_CACHE", str(blocker / "models"))
    tools = Tools(Runtime.resolve())
    first, second = (tools.call("recall", {"query": "ledger postgres"}) for _ in range(2))
    for reply in (first, second):
        assert not reply.is_error and "ledger" in reply.text, reply.text
        (note,) = reply.notes
        assert note.startswith("vector search unavailable (") and str(blocker) in note, note
    assert "the load failed at" in second.notes[0]
    embedder = tools.rt.embedder(tools.rt.embedder_spec_for(None))
    assert isinstance(embedder, LazyEmbedder) and embedder.load_attempts == 1
