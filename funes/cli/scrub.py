"""`funes scrub [MEMORY]`: redact secrets in the stored memory in place."""

from __future__ import annotations

import click

from funes.cli.common import err_console, pass_runtime
from funes.commands import run_scrub
from funes.memory import Runtime, parse_memory


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
        f"scanned {r.chunks_scanned} chunks in {r.blocks_scanned} blocks (rules v{r.version}) in {r.elapsed_s:.1f}s",
        highlight=False,
    )
    console.print(
        f"  redacted {r.findings} secrets: {r.chunks_rewritten} chunks rewritten "
        f"({r.chunks_reembedded} re-embedded), {r.chunks_dropped} chunks in {r.blocks_dropped} blocks removed",
        highlight=False,
    )
    for note in r.notes:
        console.print(f"  note: {note}", highlight=False)
    click.echo(
        f"scrubbed {outcome.memory}: {r.findings} secrets, {r.chunks_rewritten} rewritten, {r.chunks_dropped} removed"
    )
