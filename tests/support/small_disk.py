"""A command run with a small, empty filesystem (tmpfs) mounted on a folder, in a mount
namespace of its own: a full disk for that process alone, gone when it exits."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path

import pytest

# Runs the command with the tmpfs mounted, then lists what is left on it (the mount and its
# files vanish with the namespace, so they are listed from inside).
_SCRIPT = """
mount -t tmpfs -o "size=$1,mode=0700" tmpfs "$2" || exit 97
listing=$3
mountpoint=$2
shift 3
"$@"
status=$?
(cd "$mountpoint" && find . -mindepth 1) > "$listing"
exit $status
"""


def _namespace(mountpoint: Path) -> list[str]:
    """The `unshare` prefix that gives a process a mount namespace it may mount in; skips the
    test where there is none: not Linux, no `unshare`, neither unprivileged user namespaces
    (`unshare --user --map-root-user --mount`) nor root's CAP_SYS_ADMIN (`unshare --mount`)."""
    if shutil.which("unshare") is None:
        pytest.skip("no `unshare`: a small filesystem cannot be mounted for one process here")
    for prefix in (["unshare", "--user", "--map-root-user", "--mount"], ["unshare", "--mount"]):
        probe = subprocess.run(
            [*prefix, "mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(mountpoint)],
            capture_output=True,
        )
        if probe.returncode == 0:
            return prefix
    pytest.skip(
        "cannot mount a tmpfs in a mount namespace here (needs unprivileged user namespaces, "
        "or root with CAP_SYS_ADMIN)"
    )


def run_on_small_disk(
    mountpoint: Path,
    size: str,
    command: Sequence[str],
    env: Mapping[str, str],
    *,
    timeout_s: float = 300,
) -> tuple[subprocess.CompletedProcess[str], list[str]]:
    """Run `command` with a tmpfs of `size` (`1m`, `150m`) mounted on `mountpoint` (an
    existing folder). Returns the finished process and the paths left on the tmpfs after it
    (relative, `./models/x`), sorted. Skips the test where no mount namespace is possible."""
    prefix = _namespace(mountpoint)
    listing = mountpoint.parent / f".{mountpoint.name}-left"
    ran = subprocess.run(
        [*prefix, "sh", "-c", _SCRIPT, "sh", size, str(mountpoint), str(listing), *command],
        capture_output=True,
        text=True,
        timeout=timeout_s,
        env=dict(env),
    )
    assert ran.returncode != 97, f"mounting a tmpfs failed: {ran.stderr}"
    left = sorted(listing.read_text().split()) if listing.exists() else []
    return ran, left
