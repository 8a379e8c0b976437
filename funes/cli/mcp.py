"""`funes mcp [memory]`: start the stdio MCP server (see funes.mcp_server). Nothing else."""

from __future__ import annotations

import click


@click.command("mcp")
@click.argument("memory", required=False)
def mcp(memory: str | None) -> None:
    """Serve the recall, get, sessions and status tools over stdio (MCP) until stdin closes.

    MEMORY binds the default memory (local when omitted); a tool call's own `memory`
    argument overrides it. Agents start this command themselves (`funes add <agent>`).
    """
    from funes.mcp_server import serve

    serve(memory)
