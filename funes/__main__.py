"""`python -m funes` and the `funes` console script: the CLI, with Ctrl-C handled from the start.

The CLI's modules are imported inside `main`, so an interrupt while they load (click, rich and
the rest take a noticeable moment on a slow machine) exits 130 like one anywhere later, never
with a traceback (funes.cli.main handles it once the CLI runs). Before anything else, the
standard streams are made safe to use (funes.stdio).
"""

from __future__ import annotations

import sys


def main() -> None:
    try:
        from funes import stdio

        stdio.guard()  # closed standard streams reopened, stdout's failures recorded
        if _embeds_a_query(sys.argv[1:]):
            # the query's model loads in a child process on the other core while this one
            # imports the CLI and opens the memory (funes.inference.prefetch)
            from funes.inference import ready_query_model, warm_up

            warm_up(ready_query_model)
        from funes.cli import end_on_sigterm
        from funes.cli import main as cli_main

        end_on_sigterm()
    except KeyboardInterrupt:
        # clear CPython's mark of an unhandled interrupt, or `python -m funes` ends by SIGINT
        # (funes.cli.main._forget_unhandled_interrupt, not imported: it may be what was cut)
        exec("")
        sys.exit(130)
    cli_main()


def _embeds_a_query(args: list[str]) -> bool:
    """Whether this command line is a recall (that will embed its query), not its help."""
    if _verb(args) != "recall":
        return False
    options = args[: args.index("--")] if "--" in args else args
    return not any(arg in ("-h", "--help") for arg in options)


def _verb(args: list[str]) -> str | None:
    """The subcommand named on the command line (after the group's own `--debug`), if any."""
    for arg in args:
        if arg != "--debug":
            return arg
    return None


if __name__ == "__main__":
    main()
