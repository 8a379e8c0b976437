"""stdio for the MCP server: the wire, and early answers while the `mcp` SDK loads.

Importing the SDK costs 1-2 s of CPU on a small machine (pydantic models for every protocol
revision), and agents do not always wait that long: Codex 0.171 `exec` sends its first model
request about a second after starting its MCP servers and leaves out the tools of any server
that has not answered by then. So the server claims stdin/stdout at once, answers
`initialize` (one whose params the SDK accepts: acceptable_initialize; the SDK answers any
other with its error once loaded), `tools/list` and `ping` itself from static data while a
thread imports the SDK, then hands the connection to the SDK. (A `server/discover` probe of protocol 2026-07-28 that
comes first is answered "Method not found", so the client falls back to the `initialize`
handshake at once: see answer_early.) The `initialize` it already answered (and any
`notifications/initialized`) is replayed into the SDK so the session is set up exactly as
if the SDK had seen it first, the SDK's duplicate reply is dropped (after checking it matches
what was sent), and every message not answered early follows in order. Everything else,
tool calls included, is the SDK's.

The wire: frames are newline-delimited JSON. fd 0 and fd 1 are replaced by /dev/null and
stderr for the life of the process (so nothing a library prints or a child reads can touch
the protocol); the wire itself is served from private duplicates of the original fds.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import queue
import threading
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any

from funes import stdio

log = logging.getLogger("funes.mcp")

# Mirrors mcp_types.version (HANDSHAKE_PROTOCOL_VERSIONS, LATEST_HANDSHAKE_VERSION) of the pinned
# SDK; tests/mcp_server/test_mcp_server.py checks they agree, and the hand-over checks each early answer.
HANDSHAKE_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
LATEST_HANDSHAKE_VERSION = HANDSHAKE_VERSIONS[-1]

PARSE_ERROR = b'{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}\n'
READY = object()  # queued by the SDK loader once the SDK can take over
EOF = None  # queued by the reader when stdin closes
Item = bytes | object | None


class Wire:
    """The process's stdin/stdout, claimed: a reader thread queues lines, `send` writes frames."""

    def __init__(self) -> None:
        self._in = os.dup(0)
        self._out = os.dup(1)
        devnull = os.open(os.devnull, os.O_RDONLY)
        os.dup2(devnull, 0)
        os.close(devnull)
        os.dup2(2, 1)
        self._lock = threading.Lock()
        self.items: queue.Queue[Item] = queue.Queue()
        threading.Thread(target=self._read, name="mcp-stdin", daemon=True).start()

    def _read(self) -> None:
        with os.fdopen(self._in, "rb") as stream:
            for line in stream:
                if not line.strip():
                    continue
                if _parses(line):
                    self.items.put(line)
                else:  # JSON-RPC 2.0: a line that is not JSON gets a Parse error, id null
                    log.info("answered a line that is not JSON with a parse error")
                    with contextlib.suppress(OSError):  # noted; the server's next send ends it
                        self.send(PARSE_ERROR)
        self.items.put(EOF)

    def send(self, frame: bytes) -> None:
        """Write one frame (a line ending in \\n) atomically with respect to other senders."""
        with self._lock:
            view = memoryview(frame)
            try:
                while view:
                    view = view[os.write(self._out, view) :]
            except OSError as exc:  # the client went away, or a full disk: the CLI ends quietly
                stdio.note_output_failure(exc)
                raise


@dataclass
class EarlyPhase:
    """What happened before the SDK took over: lines to replay, and the answers given."""

    replay: list[bytes] = field(default_factory=list)  # in arrival order
    initialize_id: Any = None  # the id of an `initialize` answered early
    initialize_result: dict[str, Any] | None = None
    answered: int = 0
    closed: bool = False  # stdin reached EOF before the SDK was ready


# Optional members of `initialize`'s params, checked when present and not null: capabilities
# that are objects (the first two: objects of objects), clientInfo fields that are strings.
_CAPABILITIES = ("experimental", "extensions", "sampling", "elicitation", "roots", "tasks")
_CLIENT_INFO_TEXT = ("title", "description", "websiteUrl")


def _optional(value: Any, kind: type) -> bool:
    return value is None or isinstance(value, kind)


def acceptable_initialize(params: Any) -> bool:
    """Whether the SDK accepts `params` of an `initialize` request (without loading it).

    The schema requires `protocolVersion` (a string), `capabilities` (an object) and
    `clientInfo` (an object with string `name` and `version`); everything else is optional.
    Params it refuses (`{}`, no params, a missing `clientInfo.version`) are not answered early:
    the SDK answers them with its JSON-RPC error (-32602 Invalid params), whenever they come.
    tests/mcp_server/test_mcp_server.py checks this against the pinned SDK's validation.
    """
    if not isinstance(params, dict) or not isinstance(params.get("protocolVersion"), str):
        return False
    capabilities, client = params.get("capabilities"), params.get("clientInfo")
    if not isinstance(capabilities, dict) or not isinstance(client, dict):
        return False
    if not _optional(params.get("_meta"), dict):
        return False
    for i, name in enumerate(_CAPABILITIES):
        value = capabilities.get(name)
        if not _optional(value, dict):
            return False
        if i < 2 and value and not all(isinstance(v, dict) for v in value.values()):
            return False
    if not (isinstance(client.get("name"), str) and isinstance(client.get("version"), str)):
        return False
    if not all(_optional(client.get(k), str) for k in _CLIENT_INFO_TEXT):
        return False
    icons = client.get("icons")
    if not _optional(icons, list):
        return False
    return all(isinstance(icon, dict) and isinstance(icon.get("src"), str) for icon in icons or [])


def initialize_result(
    params: Any, server_info: dict[str, Any], instructions: str
) -> dict[str, Any]:
    """The `initialize` result the SDK's low-level Server gives a tools-only server."""
    requested = params.get("protocolVersion") if isinstance(params, dict) else None
    version = requested if requested in HANDSHAKE_VERSIONS else LATEST_HANDSHAKE_VERSION
    return {
        "protocolVersion": version,
        "capabilities": {"tools": {"listChanged": False}},
        "serverInfo": server_info,
        "instructions": instructions,
    }


def answer_early(
    wire: Wire,
    tools: Callable[[], list[dict[str, Any]]],
    server_info: dict[str, Any],
    instructions: str,
) -> EarlyPhase:
    """Answer `initialize`, `tools/list` and `ping` until READY (or EOF) comes off the queue."""
    phase = EarlyPhase()
    while True:
        item = wire.items.get()
        if item is READY:
            return phase
        if item is EOF:
            phase.closed = True
            return phase
        assert isinstance(item, bytes)
        try:
            message = json.loads(item)
        except ValueError:
            message = None
        if not isinstance(message, dict):
            phase.replay.append(item)  # the SDK answers malformed input its own way
            continue
        method, rid = message.get("method"), message.get("id")
        result: dict[str, Any] | None = None
        if method == "server/discover" and rid is not None and phase.initialize_result is None:
            # A 2026-07-28 client probes before `initialize`. Unanswered, Claude Code falls back to
            # `initialize` after ~3 s, and the SDK, seeing the probe first, would then serve the
            # modern era and refuse that `initialize`. "Method not found" is the spec's fallback
            # signal: the client handshakes at once and the connection is handshake-era.
            error = {"code": -32601, "message": "Method not found"}
            wire.send(_frame({"jsonrpc": "2.0", "id": rid, "error": error}))
            phase.answered += 1
            continue
        if (
            method == "initialize"
            and rid is not None
            and phase.initialize_result is None
            and acceptable_initialize(message.get("params"))
        ):
            result = initialize_result(message.get("params"), server_info, instructions)
            phase.initialize_id, phase.initialize_result = rid, result
            phase.replay.append(item)
        elif method == "tools/list" and rid is not None and phase.initialize_result is not None:
            result = {"tools": tools()}
        elif method == "ping" and rid is not None:
            result = {}
        else:
            phase.replay.append(item)
            continue
        wire.send(_frame({"jsonrpc": "2.0", "id": rid, "result": result}))
        phase.answered += 1


class Outstanding:
    """Ids of the requests handed to the SDK that it has not answered yet.

    At stdin's EOF the SDK answers what is still queued with "Connection closed" and drops the
    reply of a tool call in flight, yet a scripted client (`printf … | funes mcp`) closes
    stdin right after writing and still reads stdout: LineSource holds EOF back until this is
    empty (or DRAIN_AT_EOF_S passes). A request the client cancels (`notifications/cancelled`)
    needs no answer.
    """

    def __init__(self) -> None:
        self._ids: set[str] = set()

    def __bool__(self) -> bool:
        return bool(self._ids)

    def sent(self, text: str) -> None:
        """Note a line handed to the SDK, read exactly as the SDK's stdio transport reads it.

        Only a line it reads as a request is owed an answer: it drops what fails validation
        (a batch array, a non-string method) unanswered, and reads an id that is neither an
        integer nor a string (`1.5`, `true`) as a notification. Needs the SDK imported.
        """
        from mcp import types

        try:
            message = types.jsonrpc_message_adapter.validate_json(text, by_name=False)
        except ValueError:  # pydantic's ValidationError
            return
        if isinstance(message, types.JSONRPCRequest):
            self._ids.add(_key(message.id))
        elif (
            isinstance(message, types.JSONRPCNotification)
            and message.method == "notifications/cancelled"
            and isinstance(message.params, dict)
        ):
            self._ids.discard(_key(message.params.get("requestId")))

    def answered(self, text: str) -> None:
        for message in _messages(text):
            if "method" not in message and "id" in message:
                self._ids.discard(_key(message["id"]))


DRAIN_AT_EOF_S = 300.0  # longest wait at stdin's EOF for the answers still owed


class LineSource:
    """The SDK's stdin: the replayed lines, then live lines until EOF (an async text iterator).

    EOF is passed on only once every request it handed over has been answered (Outstanding).
    """

    def __init__(
        self, wire: Wire, replay: list[bytes], closed: bool, outstanding: Outstanding
    ) -> None:
        self._wire = wire
        self._replay = replay
        self._closed = closed
        self._outstanding = outstanding

    def __aiter__(self) -> AsyncIterator[str]:
        return self._lines()

    async def _lines(self) -> AsyncIterator[str]:
        import anyio
        import anyio.to_thread

        for line in self._replay:
            text = line.decode("utf-8", errors="replace")
            self._outstanding.sent(text)
            yield text
        while not self._closed:
            item = await anyio.to_thread.run_sync(self._wire.items.get, abandon_on_cancel=True)
            if item is EOF:
                break
            if isinstance(item, bytes):
                text = item.decode("utf-8", errors="replace")
                self._outstanding.sent(text)
                yield text
        with anyio.move_on_after(DRAIN_AT_EOF_S):
            while self._outstanding:
                await anyio.sleep(0.02)
        if self._outstanding:
            log.warning("stdin closed; gave up waiting for the last answers")


class FrameSink:
    """The SDK's stdout: frames go to the wire, except its reply to a replayed `initialize`."""

    def __init__(self, wire: Wire, phase: EarlyPhase, outstanding: Outstanding) -> None:
        self._wire = wire
        self._drop_id = phase.initialize_id
        self._sent = phase.initialize_result
        self._outstanding = outstanding

    async def write(self, text: str) -> None:
        self._outstanding.answered(text)
        if self._sent is not None and _is_reply_to(text, self._drop_id):
            sdk = json.loads(text).get("result")
            if sdk != self._sent:
                log.warning(
                    "early initialize answer differed from the SDK's: sent %s, SDK %s",
                    self._sent,
                    sdk,
                )
            self._sent = None
            return
        self._wire.send(text.encode("utf-8"))

    async def flush(self) -> None:
        return None


def _messages(raw: bytes | str) -> list[dict[str, Any]]:
    """The JSON-RPC messages of one line (a batch array counts each); [] for anything else."""
    try:
        data = json.loads(raw)
    except ValueError:
        return []
    items = data if isinstance(data, list) else [data]
    return [m for m in items if isinstance(m, dict)]


def _parses(line: bytes) -> bool:
    """Whether `line` is JSON at all (what it means is the SDK's to judge)."""
    try:
        json.loads(line)
    except ValueError:  # UnicodeDecodeError included
        return False
    return True


def _key(rid: Any) -> str:
    return json.dumps(rid)


def _frame(message: dict[str, Any]) -> bytes:
    return json.dumps(message, separators=(",", ":")).encode() + b"\n"


def _is_reply_to(text: str, rid: Any) -> bool:
    try:
        frame = json.loads(text)
    except ValueError:
        return False
    return isinstance(frame, dict) and "method" not in frame and frame.get("id") == rid
