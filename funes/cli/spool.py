"""`funes spool …`: the hook drop-box. `drain` is what hooks start; `status` shows the backlog."""

from __future__ import annotations

import datetime as dt
import logging
from pathlib import Path

import click

from funes.cli.common import pass_runtime
from funes.commands import retry_failed, run_drain, run_spool_status
from funes.memory import Runtime
from funes.plurals import counted
from funes.settings import PublishParams


@click.group()
def spool() -> None:
    """The spool where agent hooks leave a note after every turn."""


@spool.command(hidden=True)
@click.option(
    "--spool",
    "spool_root",
    type=click.Path(path_type=Path),
    default=None,
    help="Spool folder (default: funes' own).",
)
@click.option(
    "--wait-lock",
    type=click.FloatRange(min=0),
    default=1.0,
    show_default=True,
    help="Seconds to wait for another worker.",
)
@pass_runtime
def drain(rt: Runtime, spool_root: Path | None, wait_lock: float) -> None:
    """Index every waiting spool entry, then exit (started by the hooks)."""
    logging.getLogger("funes").setLevel(logging.INFO)
    report = run_drain(
        rt, spool_root=spool_root, wait_lock_s=wait_lock, publish=PublishParams.resolve()
    )
    stamp = dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    click.echo(
        f"{stamp} drain: entries={report.entries} acked={report.acked} retried={report.retried} "
        f"parked={report.parked} released={report.released} reclaimed={report.reclaimed} "
        f"units={report.units} sweeps={report.sweeps} chunks={report.chunks_written} "
        f"publish-requests={report.publish_requests} pushes={report.pushes} "
        f"push-failures={report.push_failures} push-parked={report.pushes_parked}"
        + (" busy" if report.busy else "")
        + (" memory-busy" if report.store_busy else ""),
        err=True,
    )


@spool.command()
@pass_runtime
def status(rt: Runtime) -> None:
    """Entries waiting and failed per agent, and when each agent's hook last fired."""
    st = run_spool_status(rt)
    click.echo(f"spool: {st.root}")
    click.echo(f"worker: {'running' if st.worker_running else 'idle'}")
    for agent, b in sorted(st.agents.items()):
        fired = _when(b.last_fired)
        click.echo(f"{agent}: waiting={b.waiting} failed={b.failed} last fired={fired}")
    for name, error in st.failed:
        click.echo(f"failed: {name}: {error}")
    if st.failed_count:
        click.echo("next: funes spool retry")


@spool.command()
@pass_runtime
def retry(rt: Runtime) -> None:
    """Give every failed entry another try."""
    moved = retry_failed(rt)
    click.echo(f"{counted(moved, 'failed entry', 'failed entries')} queued again", err=True)
    if moved:
        run_drain(rt, wait_lock_s=5.0)


def _when(epoch: float | None) -> str:
    if epoch is None:
        return "never"
    return dt.datetime.fromtimestamp(epoch, dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
