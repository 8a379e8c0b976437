"""`python -m funes` and the `funes` console script: the CLI, with Ctrl-C handled from the start.

The CLI's modules are imported inside `main`, so an interrupt while they load (click, rich and
the rest take a noticeable moment on a slow machine) exits 130 like one anywhere later, never
with a traceback (funes.cli.main handles it once the CLI runs); a SIGTERM then exits 143 with
`funes: terminated`, as later (Python's default died of the signal, without a word). Before
anything else, the standard streams are made safe to use (funes.stdio).

The cyclic garbage collector is off while the CLI's modules load: every collection of an older
generation walks every object the imports have created so far, ~7% of a cold `funes recall`
(A/B, dev-set memory, 25 runs each: p50 235 → 219 ms). Once they are loaded they are frozen
(never walked again) and collection resumes, except in a recall: a short process whose work is
bounded by its candidate pool, where reference counting frees everything but cycles, which
wait for its exit (a first recall that builds its model's int8 graph keeps that build's cycles
until then too; its prefetch child leaves with os._exit).
"""

from __future__ import annotations

import gc
import sys


def main() -> None:
    gc.disable()
    early = _EarlySigterm()
    try:
        early.install()
        from funes import stdio

        stdio.guard()  # closed standard streams reopened, stdout's failures recorded
        if _embeds_a_query(sys.argv[1:]):
            # the query's model loads in a child process on the other core while this one
            # imports the CLI and opens the memory (funes.inference.prefetch)
            from funes.inference import ready_query_model, warm_up

            warm_up(ready_query_model)
        from funes.cli import end_on_sigterm
        from funes.cli import main as cli_main

        early.remove()
        end_on_sigterm()
    except KeyboardInterrupt:
        # clear CPython's mark of an unhandled interrupt, or `python -m funes` ends by SIGINT
        # (funes.cli.main._forget_unhandled_interrupt, not imported: it may be what was cut)
        exec("")
        print("funes: terminated" if early.fired else "funes: aborted", file=sys.stderr)
        sys.exit(143 if early.fired else 130)
    if _verb(sys.argv[1:]) != "recall":
        gc.freeze()
        gc.enable()
    cli_main()


class _EarlySigterm:
    """SIGTERM as Ctrl-C until the CLI sets its own handler (funes.cli.end_on_sigterm); left
    alone where the parent ignores SIGTERM (nohup-like), as the CLI's is."""

    def __init__(self) -> None:
        self.fired = False
        self.installed = False

    def install(self) -> None:
        import signal

        if signal.getsignal(signal.SIGTERM) == signal.SIG_DFL:
            signal.signal(signal.SIGTERM, self._on_sigterm)
            self.installed = True

    def _on_sigterm(self, signum: int, frame: object) -> None:
        self.fired = True
        raise KeyboardInterrupt

    def remove(self) -> None:
        """Back to the default, for the CLI's handler to take its place."""
        import signal

        if self.installed:
            signal.signal(signal.SIGTERM, signal.SIG_DFL)


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
