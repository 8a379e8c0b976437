"""The `funes` group and `main()`: the one error boundary of the CLI.

Results go to stdout; progress, warnings and errors go to stderr. A FunesError becomes
`funes: <message>` (+ `hint: …`) on stderr and its exit code (1; 75 when the memory is locked;
2 when a push was refused for secrets). stdout that cannot be written (funes.stdio) ends the
command quietly with 0 when its reader closed the pipe (`| head`), else with 1 and the reason.
"""

from __future__ import annotations

import contextlib
import importlib
import logging
import os
import signal
import sys
import traceback
from typing import Any, NoReturn

import click

from funes import __version__, stdio
from funes.errors import FunesError

# Each verb's module, imported when that verb runs (or `--help` lists them all): a command
# loads only what it uses, and `funes --version` loads none (issue 15: cold start).
COMMANDS = (
    "index", "recall", "get", "sessions", "status", "add", "remove", "push", "curate", "forget",
    "scrub", "mcp", "ask", "spool", "watch",
)  # fmt: skip


class LazyGroup(click.Group):
    """A click group whose subcommands live in `funes.cli.<name>` and load on first use."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in COMMANDS:
            return None
        command: Any = getattr(importlib.import_module(f"funes.cli.{cmd_name}"), cmd_name)
        return command if isinstance(command, click.Command) else None


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="funes")
@click.option("--debug", is_flag=True, help="Show tracebacks and debug logs on stderr.")
@click.pass_context
def cli(ctx: click.Context, debug: bool) -> None:
    """funes: durable, local-first memory for AI coding agents.

    Index the transcripts Claude Code, Codex, pi and Hermes leave on disk, then recall raw
    passages from them with exact provenance.
    """
    ctx.ensure_object(dict)
    ctx.obj["debug"] = debug
    _configure_logging(debug)


# Libraries that log chatter (pylance sets its own logger to INFO; huggingface_hub prints its
# retry warnings itself and logs them again): only their errors reach the user's stderr.
_QUIET_LIBRARIES = ("pylance", "huggingface_hub", "filelock")


class _QuietLibraries(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        quiet = record.name.split(".")[0] in _QUIET_LIBRARIES
        return record.levelno >= logging.ERROR if quiet else record.levelno >= logging.WARNING


def _configure_logging(debug: bool) -> None:
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("funes: %(levelname)s %(name)s: %(message)s"))
    if not debug:
        handler.addFilter(_QuietLibraries())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(logging.DEBUG if debug else logging.WARNING)
    # Lance's Rust core logs through its own variable (KMeans chatter while indexing a push).
    os.environ.setdefault("LANCE_LOG", "debug" if debug else "error")


def main(argv: list[str] | None = None) -> None:
    """Entry point of the `funes` console script."""
    debug = "--debug" in (argv if argv is not None else sys.argv[1:])
    try:
        cli.main(args=argv, prog_name="funes", standalone_mode=False)
        sys.stdout.flush()  # a full disk under `> file` fails here, not at interpreter exit
    except FunesError as exc:
        if debug:
            traceback.print_exc()
        click.echo(f"funes: {exc.message}", err=True)
        if exc.hint:
            click.echo(f"  hint: {exc.hint}", err=True)
        sys.exit(exc.exit_code)
    except click.exceptions.Abort as exc:
        again = f"; {exc}" if str(exc) else ""  # what resumes it (funes.cli.common.resumable)
        click.echo(("funes: terminated" if _terminated else "funes: aborted") + again, err=True)
        _interrupted()
    except click.ClickException as exc:
        exc.show()
        _dash_hint(exc)
        # A usage error is exit 1 like any other error: AGENTS.md keeps 2 for a push the
        # secrets gate refused (click's own convention would be 2 for both).
        sys.exit(1 if isinstance(exc, click.UsageError) else exc.exit_code)
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)
    except KeyboardInterrupt:
        _interrupted()
    except OSError as exc:
        if not _from_output(exc):
            raise
        _output_failed(debug)
    except SystemExit:
        if stdio.reader_gone():  # click ends a closed pipe with status 1 itself
            _output_failed(debug)
        raise
    except BaseException as exc:
        # An extension module's import turns Ctrl-C into ImportError; an event loop's task
        # group wraps it in a BaseExceptionGroup (the MCP server).
        if _from_interrupt(exc):
            _interrupted()
        if _from_output(exc):
            _output_failed(debug)
        raise
    sys.exit(0)


def _output_failed(debug: bool) -> NoReturn:
    """stdout could not be written (funes.stdio): a reader that closed the pipe early
    (`| head -1`) took what it wanted, exit 0 quietly; a full disk or an I/O error is exit 1
    with the reason."""
    failure = stdio.output_failure()
    stdio.silence_stdout()
    if failure is None or isinstance(failure, BrokenPipeError):
        sys.exit(0)
    if debug:
        traceback.print_exception(failure)
    click.echo(f"funes: cannot write the output: {failure.strerror or failure}", err=True)
    sys.exit(1)


# verbs whose free text may start with a dash ("-v does nothing"), which click reads as options
_FREE_TEXT = {"recall": "query", "ask": "question"}


def _dash_hint(exc: click.ClickException) -> None:
    """After click's "No such option: -v" for a verb that takes free text: how to pass it."""
    if not isinstance(exc, click.NoSuchOption) or exc.ctx is None:
        return
    verb = exc.ctx.command.name or ""
    if verb in _FREE_TEXT:
        click.echo(
            f"  hint: a {_FREE_TEXT[verb]} that starts with '-' goes after --: "
            f'funes {verb} -- "{exc.option_name} …"',
            err=True,
        )


def _from_interrupt(exc: BaseException) -> bool:
    """Whether `exc` was raised because of a Ctrl-C: a KeyboardInterrupt in its chain
    (onnxruntime's import re-raises one as `ImportError: initialization failed`) or among an
    exception group's members (anyio's task groups, as the MCP server runs them)."""
    return any(isinstance(cause, KeyboardInterrupt) for cause in _causes(exc))


def _from_output(exc: BaseException) -> bool:
    """Whether `exc` is, wraps or was caused by a failure to write the output (funes.stdio):
    the MCP server's wire fails inside the SDK's task group."""
    return any(
        isinstance(cause, OSError) and stdio.output_failure(cause) is not None
        for cause in _causes(exc)
    )


def _causes(exc: BaseException) -> list[BaseException]:
    """`exc`, its causes and contexts, and the members of every exception group among them."""
    seen: set[int] = set()
    found: list[BaseException] = []
    pending: list[BaseException] = [exc]
    while pending:
        cause: BaseException | None = pending.pop()
        while cause is not None and id(cause) not in seen:
            seen.add(id(cause))
            found.append(cause)
            if isinstance(cause, BaseExceptionGroup):
                pending.extend(cause.exceptions)
            cause = cause.__cause__ or cause.__context__
    return found


_terminated = False  # a SIGTERM, not a Ctrl-C, interrupted the command


def end_on_sigterm() -> None:
    """Make SIGTERM stop a command as Ctrl-C does, with status 143: its `finally` blocks and
    context managers run (a push's temporary copy of the memory is removed; Python's default
    ends the process where it stands). Not where the parent ignores SIGTERM, nor outside the
    main thread. The console script calls it (funes.__main__); a test calling `main` keeps its
    own process's handlers."""
    with contextlib.suppress(ValueError):  # not the main thread
        if signal.getsignal(signal.SIGTERM) == signal.SIG_DFL:
            signal.signal(signal.SIGTERM, _on_sigterm)


def _on_sigterm(signum: int, frame: object) -> None:
    global _terminated
    _terminated = True
    raise KeyboardInterrupt


INTERRUPT_GRACE_S = 2.0  # how long exit may wait on other threads after Ctrl-C


def _interrupted() -> NoReturn:
    """Exit 130 after Ctrl-C (143 after SIGTERM), ignoring a second Ctrl-C while the
    interpreter shuts down (its threads are joined then, and an interrupt there would print a
    traceback); a second SIGTERM ends the process at once, as by default.

    A library's non-daemon thread that nothing will stop (anyio's idle worker once its event
    loop died of the interrupt) would keep the interpreter waiting forever at exit: a daemon
    watchdog ends the process with 130 once shutdown has waited on other threads for
    INTERRUPT_GRACE_S (the main thread has finished by then: every `finally` has run; SQLite
    rolls back an open transaction itself). A shutdown that finishes sooner exits as usual,
    and a caller that catches the SystemExit (a test) keeps running."""
    with contextlib.suppress(ValueError):  # not the main thread: nothing to ignore
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        if signal.getsignal(signal.SIGTERM) is _on_sigterm:
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
    import threading

    code = 143 if _terminated else 130
    _forget_unhandled_interrupt()
    threading.Thread(
        target=_exit_if_stuck, args=(code,), name="funes-exit-watchdog", daemon=True
    ).start()
    sys.exit(code)


def _forget_unhandled_interrupt() -> None:
    """Clear CPython's mark of an unhandled KeyboardInterrupt. A KeyboardInterrupt that ends
    code compiled from a string (`exec` of source text: dataclasses and namedtuple build their
    methods so while modules import) is marked unhandled even when a caller catches it, and
    `python -m funes` then ends by killing itself with SIGINT once the interpreter has shut
    down (exit -2 after `funes: terminated`, not 143). Running a string clears the mark."""
    exec("")


def _exit_if_stuck(code: int) -> None:
    """Once the main thread has finished (the interpreter is joining the others), wait
    INTERRUPT_GRACE_S, then end the process with `code`, output flushed (no atexit, no joins)."""
    import threading
    import time

    main = threading.main_thread()
    while main.is_alive():  # threading's shutdown marks it stopped before joining the others
        time.sleep(0.05)
    time.sleep(INTERRUPT_GRACE_S)
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(code)
