"""The click adapter: parse → commands → render → exit code. One module per verb.

    main.py     the `funes` group, logging, main(): FunesError → message + hint + exit code
    common.py   the Runtime injection, output-format choice, shared options and types
    index.py  recall.py  get.py  sessions.py  status.py  add.py  remove.py  push.py  scrub.py
    ask.py
    spool.py  watch.py  mcp.py (`funes mcp` only starts funes.mcp_server)

Results go to stdout; progress, warnings and errors go to stderr.
"""

from __future__ import annotations

from funes.cli.common import pass_runtime
from funes.cli.main import cli, end_on_sigterm, main

__all__ = ["cli", "end_on_sigterm", "main", "pass_runtime"]
