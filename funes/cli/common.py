"""Shared CLI pieces: the Runtime, output-format choice, the option types, the shared options."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import wraps
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

if TYPE_CHECKING:  # imported where used: `funes --version` and light verbs load none of them
    from rich.console import Console

    from funes.memory import Runtime
    from funes.traces import BlockType, Harness
    from funes.wiring import AgentChanges

F = TypeVar("F", bound=Callable[..., Any])


def pass_runtime(func: F) -> F:
    """Inject a Runtime (built once per process, on first use) as the first argument."""

    @click.pass_context
    @wraps(func)
    def wrapper(ctx: click.Context, *args: Any, **kwargs: Any) -> Any:
        root = ctx.find_root()
        root.ensure_object(dict)
        if "runtime" not in root.obj:
            from funes.memory import Runtime

            root.obj["runtime"] = rt = Runtime.resolve()
            _heal_launcher(rt)
        return func(root.obj["runtime"], *args, **kwargs)

    return wrapper  # type: ignore[return-value]


def _heal_launcher(rt: Runtime) -> None:
    """When the funes that agents' hooks and MCP servers run is gone (moved, reinstalled
    elsewhere), point them at this one, and say so (funes.wiring.launcher). Without a
    launcher (no `funes add` yet) the wiring code is not loaded."""
    if not rt.paths.launcher.exists():
        return
    from funes.wiring import launcher

    gone = launcher.heal(rt)
    if gone is not None:
        click.echo(
            f"funes: agents' hooks and MCP servers ran {gone}, which is gone; they run this "
            f"funes now ({sys.executable})",
            err=True,
        )


class HarnessType(click.ParamType):  # type: ignore[type-arg]  # generic only in newer click
    """An agent name (`claude`, `codex`, `pi`, `hermes`, or a stored facet like `claude_code`),
    or `parquet`: the stored harness of rows imported from an agent-traces parquet without a
    known agent, which recall and sessions can select and index the parquet files of a folder
    by. Harness.parse's own error names the agents alone (what `funes add` takes)."""

    name = "harness"

    def convert(
        self, value: Any, param: click.Parameter | None, ctx: click.Context | None
    ) -> Harness:
        from funes.traces import Harness

        if isinstance(value, Harness):
            return value
        try:
            harness = Harness.parse(str(value))
        except ValueError:
            names = ", ".join(h.agent_name for h in Harness)
            self.fail(f"unknown harness {value!r} (expected one of: {names})", param, ctx)
        assert harness is not None
        return harness


class BlockTypeType(click.ParamType):  # type: ignore[type-arg]
    name = "type"

    def convert(
        self, value: Any, param: click.Parameter | None, ctx: click.Context | None
    ) -> BlockType:
        from funes.traces import BlockType

        try:
            return BlockType(str(value).strip().lower())
        except ValueError:
            self.fail(
                f"unknown block type {value!r} (expected text, thinking, tool_use or tool_result)",
                param,
                ctx,
            )


@contextmanager
def resumable(again: str) -> Iterator[None]:
    """Work that an interrupt (Ctrl-C, or SIGTERM: funes.cli.main) may stop and that running
    the command again takes up where it stopped: the interrupt ends the command as usual
    (exit 130 / 143) and its line says `again`: `funes: aborted; <again>`. Raises click.Abort
    carrying `again`."""
    try:
        yield
    except KeyboardInterrupt as exc:
        click.echo(err=True)  # past the `^C` the terminal echoed, as click does
        raise click.Abort(again) from exc


def err_console() -> Console:
    """stderr for progress and summaries; lines are never hard-wrapped when stderr is a file
    or a pipe (logs and agents read them whole)."""
    from rich.console import Console

    return Console(stderr=True, soft_wrap=True)


def wants_human(fmt: str | None) -> bool:
    """Human rendering only when asked, or when both stdin and stdout are terminals."""
    if fmt is not None:
        return fmt == "human"
    return sys.stdin.isatty() and sys.stdout.isatty()


format_option = click.option(
    "--format",
    "fmt",
    type=click.Choice(["human", "agent", "json"]),
    default=None,
    help="Output format (default: human at a terminal, else agent; json is --json).",
)
json_option = click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="Print one JSON document (versioned schema in AGENTS.md), for scripts.",
)


def output_mode(fmt: str | None, as_json: bool) -> str:
    """`json`, `human` or `agent`: --json (or --format json), else --format, else human only
    at a terminal."""
    if as_json:
        if fmt not in (None, "json"):
            raise click.UsageError("--json and --format cannot be combined")
        return "json"
    if fmt == "json":
        return "json"
    return "human" if wants_human(fmt) else "agent"


offline_option = click.option(
    "--offline",
    is_flag=True,
    help="A remote memory: read its last cached commit, no network (also HF_HUB_OFFLINE=1).",
)


def scope_options(*, session: bool = True) -> Callable[[F], F]:
    """--project, --since, --until (and --session): what a read is restricted to
    (funes.commands.scope), passed on as one `scope` argument."""

    def decorate(func: F) -> F:
        @wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            from funes.commands import Scope

            kwargs["scope"] = Scope(
                kwargs.pop("project"),
                kwargs.pop("since"),
                kwargs.pop("until"),
                kwargs.pop("session", None),
            )
            return func(*args, **kwargs)

        options = [
            click.option(
                "--project",
                metavar="PATH|NAME",
                help="Only sessions run in this project: a path (inside a git repository: the "
                "whole repository) or a directory name.",
            ),
            click.option(
                "--since",
                metavar="WHEN",
                help="Only turns at or after WHEN: 2026-04-02, 2026-04-02T15:30, today, "
                "yesterday, 12h, 7d, 2w.",
            ),
            click.option(
                "--until",
                metavar="WHEN",
                help="Only turns before WHEN (a bare date or day counts whole).",
            ),
        ]
        if session:
            options.append(
                click.option(
                    "--session",
                    metavar="ID",
                    help="Only this session (its id, a prefix of it, or the label a recall header shows).",
                )
            )
        decorated: Any = wrapper
        for option in reversed(options):
            decorated = option(decorated)
        return decorated  # type: ignore[no-any-return]

    return decorate


memory_option = click.option(
    "--memory",
    default=None,
    metavar="MEMORY",
    help="local (default), a path to a memory, org/repo, or hf://datasets/org/repo.",
)


def report_changes(console: Console, changes: AgentChanges, *, verb: str) -> None:
    """What `add` / `remove` changed in an agent's configuration, on stderr: each file created,
    updated or removed, and after an updated one the backup of it from before funes' first
    edit (`backup of <file>: <copy>`) where `changes` names one."""
    if changes.changed:
        console.print(f"funes {verb} {changes.agent}:", highlight=False)
        for path in changes.changed:
            done = (
                "created"
                if path in changes.created
                else ("updated" if Path(path).exists() else "removed")
            )
            console.print(f"  {done} {path}", highlight=False, markup=False)
            if path in changes.backups:  # the copy that restores the user's own file
                console.print(
                    f"  backup of {path}: {changes.backups[path]}", highlight=False, markup=False
                )
    else:
        console.print(f"{changes.agent}: nothing to change", highlight=False)
    for warning in changes.warnings:
        console.print(f"  [yellow]warning[/]: {warning}", highlight=False)
    for note in changes.notes:
        console.print(f"  note: {note}", highlight=False)
