"""`python -m funes` and the `funes` console script: the CLI, with Ctrl-C handled from the start.

The CLI's modules are imported inside `main`, so an interrupt while they load (click, rich and
the rest take a noticeable moment on a slow machine) exits 130 like one anywhere later, never
with a traceback (funes.cli.main handles it once the CLI runs).
"""

from __future__ import annotations

import sys


def main() -> None:
    try:
        from funes.cli import main as cli_main
    except KeyboardInterrupt:
        sys.exit(130)
    cli_main()


if __name__ == "__main__":
    main()
