"""`funes scrub [MEMORY]`: redact secrets in the stored memory in place."""

from __future__ import annotations

import click

from funes.cli.common import err_console, pass_runtime
from funes.commands import run_scrub
from funes.memory import Runtime, parse_memory
from funes.plurals import counted


@click.command()
@click.argument("memory", required=False)
@click.option(
    "--outdated-only", is_flag=True, help="Only rescan chunks stored under older redaction rules."
)
@pass_runtime
def scrub(rt: Runtime, memory: str | None, outdated_only: bool) -> None:
    """Rescan the memory for secrets and redact them in place.

    Blocks are rescanned whole; secrets are replaced by [REDACTED:<kind>] in every chunk they
    touch, rewritten chunks are re-embedded, and a block whose redaction cannot be verified is
    removed. Your agents' transcripts are never modified.
    """
    outcome = run_scrub(rt, parse_memory(memory, rt), outdated_only=outdated_only)
    r = outcome.report
    console = err_console()
    console.print(
        f"scanned {counted(r.chunks_scanned, 'chunk')} in {counted(r.blocks_scanned, 'block')} "
        f"(rules v{r.version}) in {r.elapsed_s:.1f}s",
        highlight=False,
    )
    console.print(
        f"  redacted {counted(r.findings, 'secret')}: "
        f"{counted(r.chunks_rewritten, 'chunk')} rewritten "
        f"({r.chunks_reembedded} re-embedded), {counted(r.chunks_dropped, 'chunk')} in "
        f"{counted(r.blocks_dropped, 'block')} removed",
        highlight=False,
    )
    for note in r.notes:
        console.print(f"  note: {note}", highlight=False)
    click.echo(
        f"scrubbed {outcome.memory}: {counted(r.findings, 'secret')}, {r.chunks_rewritten} rewritten, "
        f"{r.chunks_dropped} removed"
    )
