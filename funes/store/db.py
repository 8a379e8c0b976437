"""Open the memory's SQLite file: a binding that can load extensions, sqlite-vec, pragmas.

Many Python builds compile the stdlib `sqlite3` without extension loading. funes uses
`sqlean` (sqlean-py: a drop-in sqlite3 module with extension loading and FTS5) and falls back
to the stdlib module when sqlean is absent; when sqlite-vec cannot be loaded either way the
memory still opens, lexical-only (`Connection.vectors` is False) and the caller warns.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from funes.paths import create_private_file, make_private_file

BUSY_TIMEOUT_MS = 5000


def sqlite_module() -> ModuleType:
    """The DB-API module funes uses (sqlean when installed, else the stdlib sqlite3)."""
    try:
        import sqlean

        module: ModuleType = sqlean
        return module
    except ImportError:  # pragma: no cover - exercised only where sqlean-py has no wheel
        import sqlite3

        return sqlite3


@dataclass(slots=True)
class Connection:
    """A raw DB-API connection plus what it can do."""

    raw: Any
    vectors: bool  # sqlite-vec is loaded
    vector_error: str | None  # why not, when it is not
    module: ModuleType

    def close(self) -> None:
        self.raw.close()


def create_private(path: Path) -> None:
    """Create `path` as an empty 0600 file if it does not exist (whatever the umask)."""
    create_private_file(path)


def _private_sidecars(path: Path) -> None:
    """SQLite gives -wal/-shm the database file's mode; make sure of it (0600)."""
    for suffix in ("-wal", "-shm"):
        sidecar = Path(f"{path}{suffix}")
        if sidecar.exists():
            make_private_file(sidecar)


def connect(path: Path | str, *, readonly: bool = False) -> Connection:
    """Open (creating when writable) the memory database with funes' pragmas.

    busy_timeout is set before the journal mode is switched to WAL, so a concurrent opener
    waits instead of failing with "database is locked" (and the switch itself is retried: see
    `_switch_to_wal`). Raises the binding's
    OperationalError / DatabaseError when the file cannot be opened or is not a database.
    """
    sqlite = sqlite_module()
    target = str(path)
    if readonly and target != ":memory:":
        raw = _connect_readonly(sqlite, Path(target))
    else:
        if target != ":memory:":
            create_private(Path(target))
        raw = sqlite.connect(target, timeout=BUSY_TIMEOUT_MS / 1000, check_same_thread=False)
    try:
        raw.execute(f"pragma busy_timeout = {BUSY_TIMEOUT_MS}")
        if not readonly:
            _switch_to_wal(raw, sqlite)
            raw.execute("pragma synchronous = normal")
            # Deleted or rewritten text (funes scrub) is zeroed, not left in free pages.
            raw.execute("pragma secure_delete = on")
            if target != ":memory:":
                _private_sidecars(Path(target))
        vectors, error = _load_vec(raw)
    except BaseException:
        raw.close()  # not a database, damaged, locked past the timeout: keep no handle on it
        raise
    return Connection(raw, vectors, error, sqlite)


def readonly_uri(path: Path) -> str:
    """The `file:` URI that opens `path` read-only, `&immutable=1` added when it must be.

    A WAL database is read through its `-shm` index, which a read-only opener still has to
    create when it is missing; in a directory it cannot write (a read-only mount, another
    user's memory) that fails with SQLITE_CANTOPEN. With no `-wal` file beside the database
    every committed page is in the main file, so reading it as immutable sees exactly what
    a writer would. as_uri() percent-encodes the path, so `?`, `#` or spaces in it cannot
    alter the URI.
    """
    uri = path.resolve().as_uri() + "?mode=ro"
    if not os.access(path.parent, os.W_OK) and not Path(f"{path}-wal").exists():
        uri += "&immutable=1"
    return uri


def _connect_readonly(sqlite: ModuleType, path: Path) -> Any:
    return sqlite.connect(
        readonly_uri(path), uri=True, timeout=BUSY_TIMEOUT_MS / 1000, check_same_thread=False
    )


def open_hint(exc: BaseException, path: Path | None = None) -> str:
    """What to do about a SQLite error on a memory, from its message.

    A lock held past the busy timeout passes; a file or directory funes may not read (or
    write, for a writer) is a permissions matter; anything else (`malformed`, `not a
    database`, an unreadable page or vector blob) is a damaged file, unless the file is not
    named as a memory (`*.db`) and is no SQLite file at all: then it is not a memory.
    """
    text = str(exc).lower()
    where = f"{path} and its directory" if path is not None else "the memory and its directory"
    if "locked" in text or "busy" in text:
        return "retry in a moment"
    if "unable to open" in text or "readonly" in text or "permission" in text:
        return f"check that this user may read (and, to index, write) {where}"
    named_as_memory = path is not None and path.suffix == ".db"
    if (
        "not a database" in text
        and path is not None
        and not named_as_memory
        and not _sqlite_header(path)
    ):
        return (
            f"{path} is not a funes memory: name a memory file (memory.db), a folder holding "
            "one, org/repo or hf://datasets/org/repo"
        )
    target = f"move {path} away" if path is not None else "move the file away"
    return f"the file is damaged: {target} and run `funes index --yes` to rebuild ({REBUILD_LOSES})"


# What a rebuild from the transcripts cannot give back: said wherever funes advises one.
REBUILD_LOSES = (
    "a rebuild reads the transcripts again: passages of transcripts deleted since are gone; "
    "sessions you forgot stay out as long as the file of tombstones beside the memory "
    "(<memory>.forgotten.json) stays where it is"
)


def _sqlite_header(path: Path) -> bool:
    """Whether `path` starts as an SQLite database does (a damaged memory most often still
    does; a file that is no database at all, such as a mistyped --memory, does not)."""
    try:
        with path.open("rb") as f:
            return f.read(16) == b"SQLite format 3\x00"
    except OSError:
        return False


def _switch_to_wal(raw: Any, sqlite: ModuleType) -> None:
    """Put the database in WAL mode (a no-op when it already is).

    The switch needs an exclusive lock, and SQLite answers SQLITE_BUSY at once, without
    calling the busy handler, when another connection is switching or migrating the same new
    file (two writers creating the memory together); so it is retried here, with backoff, for
    up to the busy timeout. Raises the binding's OperationalError after that.
    """
    deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
    delay_s = 0.005
    while True:
        try:
            if str(raw.execute("pragma journal_mode").fetchone()[0]).lower() != "wal":
                raw.execute("pragma journal_mode = wal")
            return
        except sqlite.OperationalError as exc:
            text = str(exc).lower()
            if ("locked" not in text and "busy" not in text) or time.monotonic() > deadline:
                raise
            time.sleep(delay_s)
            delay_s = min(delay_s * 2, 0.1)


def _vec_extension() -> str | None:
    """The path of sqlite-vec's loadable extension (`vec0`, no suffix: SQLite adds the
    platform's), found without importing the `sqlite_vec` package: its `__init__` imports the
    standard sqlite3 module and numpy.typing (~15 ms of a cold `funes recall`) only for helpers
    funes does not use. None when the package is not installed."""
    import importlib.util
    import os.path

    try:
        found = importlib.util.find_spec("sqlite_vec")
    except (ImportError, ValueError):  # a broken install, or an entry blocked in sys.modules
        return None
    if found is None or not found.submodule_search_locations:
        return None
    return os.path.join(next(iter(found.submodule_search_locations)), "vec0")


def _load_vec(raw: Any) -> tuple[bool, str | None]:
    extension = _vec_extension()
    if extension is None:
        return False, "sqlite-vec is not installed"
    try:
        raw.enable_load_extension(True)
        try:
            raw.load_extension(extension)
        finally:
            raw.enable_load_extension(False)
    except Exception as exc:  # AttributeError (no extension support) or OperationalError
        return False, f"cannot load sqlite-vec: {exc}"
    return True, None


def versions() -> dict[str, str]:
    """SQLite, sqlite-vec and binding versions (for `pytest --report-header` and bench)."""
    conn = connect(":memory:")
    out = {
        "sqlite": conn.raw.execute("select sqlite_version()").fetchone()[0],
        "binding": conn.module.__name__,
    }
    if conn.vectors:
        out["sqlite_vec"] = conn.raw.execute("select vec_version()").fetchone()[0]
    conn.close()
    return out
