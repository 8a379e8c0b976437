"""What funes does when asked: one module per verb, shared by the CLI and the MCP server.

No click, no rich, no printing: commands take a Runtime and return result objects.
"""
