"""`funes ask claude|codex "<question>"`: recall, then one grounded answer from the agent's CLI."""

from __future__ import annotations

import click

from funes.cli.common import err_console, memory_option, pass_runtime
from funes.commands import DEFAULT_TIMEOUT_S, AskAgent, AskMiss, AskRequest, plan_ask, run_ask
from funes.memory import Runtime, parse_memory
from funes.plurals import counted
from funes.settings import RECALL


@click.command()
@click.argument("agent", type=click.Choice([a.value for a in AskAgent]))
@click.argument("question", nargs=-1, required=True)
@click.option(
    "-k",
    "k",
    type=click.IntRange(min=1, max=50),
    default=RECALL.k,
    show_default=True,
    help="Passages recalled into the prompt.",
)
@click.option(
    "--timeout",
    "timeout_s",
    type=click.FloatRange(min=1),
    default=DEFAULT_TIMEOUT_S,
    show_default=True,
    help="Seconds to wait for the agent's answer.",
)
@memory_option
@pass_runtime
def ask(
    rt: Runtime, agent: str, question: tuple[str, ...], k: int, timeout_s: float, memory: str | None
) -> None:
    """Ask claude or codex a question answered from recalled passages, citing sessions.

    funes recalls in-process and runs the agent once, non-interactively, with the passages in
    its prompt and no tools or MCP servers; the session is not saved. stdout is the agent's
    free-text answer. Quote the question (or put `--` before it) when it contains flag-like words.
    """
    request = AskRequest(AskAgent(agent), " ".join(question), k)
    plan = plan_ask(rt, parse_memory(memory, rt), request)
    for note in plan.notes:
        click.echo(f"funes: {note}", err=True)
    if isinstance(plan, AskMiss):  # nothing supports the question: no agent is spawned
        click.echo(plan.line)
        return
    console = err_console()
    status = f"asking {agent} with {counted(plan.passages, 'passage')} from {plan.memory}…"
    if console.is_terminal:
        with console.status(status, spinner="dots"):
            answer = run_ask(plan, timeout_s=timeout_s)
    else:
        answer = run_ask(plan, timeout_s=timeout_s)
    click.echo(answer.text, nl=not answer.text.endswith("\n"))
