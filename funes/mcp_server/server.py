"""`funes mcp [memory]`: the stdio MCP server (tools `recall`, `get`, `sessions`, `status`), on the `mcp` SDK.

Each tool returns the agent-format string the CLI prints, verbatim, as one text content block
(see tools.py); a FunesError comes back as a tool error (`isError: true`) with its message and
hint, and the server keeps serving. Tool calls run one at a time in a worker thread, with
`sys.stdout` redirected to stderr, while the event loop keeps answering pings.

Start-up: the wire is claimed first and `initialize`/`tools/list` are answered from static
data while a thread imports the SDK (wire.py says why and how the SDK then takes over).
Models are never loaded at start-up: the embedding model loads on the first `recall`, which,
when still running after SLOW_FIRST_CALL_S, says so in a progress notification (to clients that
sent a progressToken: every recall waiting on the load) and once on stderr. The server exits when stdin closes, once it has answered
every request it read (wire.Outstanding).
"""

from __future__ import annotations

import logging
import threading
import time
from typing import TYPE_CHECKING, Any

from funes.mcp_server.tools import (
    INSTRUCTIONS,
    SERVER_NAME,
    SERVER_TITLE,
    SERVER_VERSION,
    Tools,
    call_quietly,
    tool_list,
)
from funes.mcp_server.wire import READY, FrameSink, LineSource, Outstanding, Wire, answer_early

if TYPE_CHECKING:
    from funes.memory import Runtime

log = logging.getLogger("funes.mcp")

SLOW_FIRST_CALL_S = 1.0  # a first recall still running after this long says it is loading models
SERVER_INFO = {"name": SERVER_NAME, "title": SERVER_TITLE, "version": SERVER_VERSION}


def serve(
    memory: str | None = None,
    *,
    runtime: Runtime | None = None,
    slow_first_call_s: float = SLOW_FIRST_CALL_S,
) -> None:
    """Serve the tools over stdin/stdout until stdin closes. Blocks; returns normally at EOF.

    `memory` is the default memory (None: local); a call's own `memory` argument overrides it.
    `slow_first_call_s`: how long a first recall runs before it says the model is loading.
    """
    wire = Wire()
    loaded: dict[str, Any] = {}
    loader = threading.Thread(
        target=_load, args=(wire, loaded, runtime), name="mcp-sdk-import", daemon=True
    )
    loader.start()
    phase = answer_early(wire, tool_list, SERVER_INFO, INSTRUCTIONS)
    if phase.answered:
        log.info("answered %d request(s) before the SDK loaded", phase.answered)
    loader.join()
    if "error" in loaded:
        raise loaded["error"]
    if phase.closed and not phase.replay:
        return
    import anyio

    anyio.run(_serve, wire, phase, Tools(loaded["runtime"], memory), slow_first_call_s)


def _load(wire: Wire, loaded: dict[str, Any], runtime: Runtime | None) -> None:
    """Import what the SDK phase needs (never a model), then let it take over."""
    try:
        import anyio.to_thread  # noqa: F401
        import mcp.server.lowlevel  # noqa: F401
        import mcp.server.stdio  # noqa: F401
        import mcp_types  # noqa: F401

        import funes.commands  # noqa: F401
        from funes.memory import Runtime
        from funes.render import agent  # noqa: F401

        loaded["runtime"] = runtime or Runtime.resolve()
    except BaseException as exc:  # surfaced by serve() in the main thread
        loaded["error"] = exc
    finally:
        wire.items.put(READY)


async def _serve(wire: Wire, phase: Any, tools: Tools, slow_first_call_s: float) -> None:
    import anyio
    import anyio.to_thread
    import mcp_types as types
    from mcp.server.lowlevel import Server
    from mcp.server.stdio import stdio_server

    one_at_a_time = anyio.CapacityLimiter(1)
    warm = False
    logged = False  # the load under way is on stderr (once, however many recalls wait on it)

    async def list_tools(ctx: Any, params: Any) -> Any:
        return types.ListToolsResult(tools=[types.Tool.model_validate(t) for t in tool_list()])

    async def announce_if_slow(ctx: Any) -> None:
        nonlocal logged
        await anyio.sleep(slow_first_call_s)
        note = "loading the embedding model (first recall of this server)…"
        if not logged:
            logged = True
            log.warning("%s", note)
        try:  # best effort: needs a progressToken from the client
            await ctx.session.report_progress(0, None, note)
        except Exception:
            log.debug("progress notification not sent", exc_info=True)

    async def call_tool(ctx: Any, params: Any) -> Any:
        nonlocal warm, logged
        name, arguments = params.name, params.arguments
        cold = name == "recall" and not warm
        started = time.perf_counter()
        async with anyio.create_task_group() as tg:
            if cold:
                tg.start_soon(announce_if_slow, ctx)
            reply = await anyio.to_thread.run_sync(
                call_quietly, tools, name, arguments, limiter=one_at_a_time
            )
            tg.cancel_scope.cancel()
        elapsed = time.perf_counter() - started
        if cold and not reply.is_error:
            warm = True
        elif cold:  # the model may not have loaded: the next recall's load is a new one
            logged = False
        log.info("tool %s took %.2f s", name, elapsed)
        texts = [reply.text] if (notes := reply.note_text()) is None else [reply.text, notes]
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=t) for t in texts],
            is_error=reply.is_error,
        )

    server: Server[Any] = Server(
        SERVER_NAME,
        version=SERVER_VERSION,
        title=SERVER_TITLE,
        instructions=INSTRUCTIONS,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )
    outstanding = Outstanding()
    source = LineSource(wire, phase.replay, phase.closed, outstanding)
    sink = FrameSink(wire, phase, outstanding)
    async with stdio_server(stdin=source, stdout=sink) as (read_stream, write_stream):  # type: ignore[arg-type]
        await server.run(read_stream, write_stream, server.create_initialization_options())
