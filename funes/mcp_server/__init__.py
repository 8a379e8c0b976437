"""`funes mcp [memory]`: the stdio MCP server (tools `recall`, `get`, `sessions`, `status`), on the `mcp` SDK.

    server.py  serve(): claim the wire, answer early, then hand over to the SDK
    tools.py   the tools: schemas, calls into funes.commands, agent-format replies
    wire.py    stdin/stdout framing before and under the SDK

Other packages import from this face, never from its modules.
"""

from __future__ import annotations

from funes.mcp_server.server import serve
from funes.mcp_server.tools import TOOLS, ToolReply, Tools, error_text, tool_list

__all__ = ["TOOLS", "ToolReply", "Tools", "error_text", "serve", "tool_list"]
