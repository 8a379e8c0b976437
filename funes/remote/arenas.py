"""How many glibc malloc arenas a process that writes Lance datasets may hold.

Lance (Rust, the system allocator) builds its indexes on a pool of native threads. glibc gives
each new thread its own malloc arena, up to 8 per core, and memory freed in one arena is never
handed to another, so a push kept the pages freed by each append's index build resident in the
arena that freed them while the next build grew another one. On two cores a push of 240k chunks
peaked at 626 MB with the default arenas and at 469 MB with two (bench/push_memory.py; the
default allows 8 arenas per core, so the gap grows with the cores of the machine). Capping
arenas only makes threads share them (a lock per malloc, nothing measurable next to k-means).

`cap_malloc_arenas` sets glibc's M_ARENA_MAX for the rest of the process: arenas already made
stay, so it is called before the process first touches Lance. Off glibc (macOS, musl) it does
nothing; a `MALLOC_ARENA_MAX` in the environment (glibc read it at start) is left to rule.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

MALLOC_ARENAS = 2  # the main arena and one that Lance's threads share
_M_ARENA_MAX = -8  # glibc malloc.h


def _glibc() -> Any | None:
    """The C library of this process when it is glibc, else None."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        version = os.confstr("CS_GNU_LIBC_VERSION")
    except (ValueError, OSError):
        return None
    if not version or not version.startswith("glibc"):
        return None
    import ctypes

    try:
        return ctypes.CDLL(None)
    except OSError:
        return None


def cap_malloc_arenas(arenas: int = MALLOC_ARENAS) -> bool:
    """Allow at most `arenas` malloc arenas from now on; True when the cap was set (glibc and
    no MALLOC_ARENA_MAX in the environment)."""
    if "MALLOC_ARENA_MAX" in os.environ:
        return False
    libc = _glibc()
    if libc is None:
        return False
    return bool(libc.mallopt(_M_ARENA_MAX, arenas))


def count_malloc_arenas(scratch: Path) -> int | None:
    """The malloc arenas this process holds (glibc's `malloc_info`, written through the file
    `scratch`, which is removed); None off glibc."""
    libc = _glibc()
    if libc is None:
        return None
    import ctypes

    libc.fopen.restype = ctypes.c_void_p
    libc.fopen.argtypes = [ctypes.c_char_p, ctypes.c_char_p]
    libc.malloc_info.argtypes = [ctypes.c_int, ctypes.c_void_p]
    libc.fclose.argtypes = [ctypes.c_void_p]
    stream = libc.fopen(os.fsencode(scratch), b"w")
    if not stream:
        raise OSError(f"cannot write {scratch}")
    try:
        libc.malloc_info(0, stream)
    finally:
        libc.fclose(stream)
    try:
        return scratch.read_text(encoding="utf-8").count("<heap nr=")
    finally:
        scratch.unlink(missing_ok=True)
