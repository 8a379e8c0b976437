"""Where funes keeps its files (and the user's home the agents' homes are found under).

The only module that reads location environment variables (`environment`). Everything else
receives a `Paths` (and a funes.traces `AgentHomes`) resolved once at the edge (CLI, MCP
server, worker).

Layout (FUNES_HOME set → everything under it; else platformdirs):
    data/memory.db      the local memory (SQLite, 0600)
    data/memory.lock    the single-writer lock file
    data/hooks/         the hook script agents run, and the launcher (funes-python)
    spool/{tmp,new,claimed,failed}/   hook drop-box (0700)
    spool/logs/         the hook's and the worker's logs (hook.log, worker.log: 0600 files)
    data/models/        the int8 graphs funes builds from the embedders (FUNES_MODEL_CACHE)
    data/staging/       private scratch (0700): a push's staging, a copy of a live Hermes
                        database; removed when done, or swept once orphaned (funes.staging)
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from funes.errors import FoldersUnusable

PRIVATE_DIR = 0o700
PRIVATE_FILE = 0o600
HUB_CACHE_VARS = ("HF_HOME", "HF_HUB_CACHE", "HF_ENDPOINT")


def ensure_private_dir(path: Path) -> Path:
    """Create `path` (and any missing parents) 0700, whatever the umask; make `path` 0700.

    Parents that already exist are left as they are; parents created here are 0700 too
    (`Path.mkdir(parents=True)` would create them with the umask's default mode).
    Returns the path. Raises OSError when it cannot be created, and NotADirectoryError when
    something other than a directory is there (a file's mode is never touched).
    """
    missing: list[Path] = []
    probe = path
    while not probe.exists():
        missing.append(probe)
        if probe.parent == probe:
            break
        probe = probe.parent
    for directory in reversed(missing):
        directory.mkdir(mode=PRIVATE_DIR, exist_ok=True)
        directory.chmod(PRIVATE_DIR)
    st = path.stat()
    if not stat.S_ISDIR(st.st_mode):
        raise NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR), str(path))
    if (st.st_mode & 0o777) != PRIVATE_DIR:
        path.chmod(PRIVATE_DIR)
    return path


def make_private_file(path: Path) -> None:
    """chmod an existing file to 0600 (no-op when it already is)."""
    if (path.stat().st_mode & 0o777) != PRIVATE_FILE:
        path.chmod(PRIVATE_FILE)


@contextmanager
def umask_at_least(mask: int = 0o077) -> Iterator[None]:
    """Run the block with the process umask tightened to include `mask` (0o077: what is
    created gets no group or other access), then restore it. For files written by code that
    takes no mode (Lance's writers); the umask is the process's, so other threads' files are
    tightened too meanwhile, never loosened. Follow with `restrict_tree` where it must hold."""
    old = os.umask(0o077)
    os.umask(old | mask)
    try:
        yield
    finally:
        os.umask(old)


def restrict_tree(
    root: Path, *, file_mode: int = PRIVATE_FILE, dir_mode: int = PRIVATE_DIR
) -> None:
    """chmod every file under `root` to `file_mode` and every directory below it to `dir_mode`
    (where they differ; `root` itself and symlinks are left alone). Raises OSError."""
    for folder, dirs, files in os.walk(root):
        for name in dirs:
            _chmod_if(Path(folder, name), dir_mode)
        for name in files:
            _chmod_if(Path(folder, name), file_mode)


def _chmod_if(path: Path, mode: int) -> None:
    st = path.lstat()
    if not stat.S_ISLNK(st.st_mode) and stat.S_IMODE(st.st_mode) != mode:
        path.chmod(mode)


def create_private_file(path: Path) -> Path:
    """Create `path` as an empty 0600 file unless it exists (then make it 0600), whatever the
    umask. For the memory, spool entries and logs. Returns the path; raises OSError."""
    try:
        fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, PRIVATE_FILE)
    except FileExistsError:
        make_private_file(path)
        return path
    try:
        os.fchmod(fd, PRIVATE_FILE)
    finally:
        os.close(fd)
    return path


@dataclass(frozen=True, slots=True)
class Paths:
    """funes' own directories."""

    data: Path
    spool: Path
    logs: Path
    home: Path | None = None  # FUNES_HOME when set (installed hooks pass it on to the worker)
    # HF_HOME / HF_HUB_CACHE / HF_ENDPOINT when set: where the model cache lives and which Hub
    # serves shared memories (`funes add` passes them on to the MCP server, which some agents
    # start with a whitelisted environment)
    hub_env: tuple[tuple[str, str], ...] = ()
    model_cache: Path | None = None  # FUNES_MODEL_CACHE when set

    @property
    def models(self) -> Path:
        """Where the int8 graphs built from the embedders are cached (rebuilt when missing)."""
        return self.model_cache if self.model_cache is not None else self.data / "models"

    @property
    def verified_models(self) -> Path:
        """Stamps of the model files a load has hashed (funes.inference.files.verify)."""
        return self.data / "verified-models"

    @property
    def memory_db(self) -> Path:
        return self.data / "memory.db"

    @property
    def lock_file(self) -> Path:
        return self.data / "memory.lock"

    @property
    def worker_lock(self) -> Path:
        return self.spool / "worker.lock"

    @property
    def backups(self) -> Path:
        return self.data / "backups"

    @property
    def remote_cache(self) -> Path:
        return self.data / "remotes"

    @property
    def staging(self) -> Path:
        """Where pushes (and `forget --remote`) stage what they send, and a live Hermes
        database is copied to be read: one 0700 folder each, removed when done, or by the next
        one made when its process was killed (funes.staging)."""
        return self.data / "staging"

    @property
    def installed_hook(self) -> Path:
        """The copy of hooks/enqueue.py that agents run (outside the wheel: upgrades keep it)."""
        return self.data / "hooks" / "funes-enqueue.py"

    @property
    def launcher(self) -> Path:
        """funes' launcher: the one path agents' hooks and MCP servers run (funes.wiring)."""
        return self.data / "hooks" / "funes-python"

    def ensure(self) -> Paths:
        """Create the directories with private permissions; returns self. Raises
        FoldersUnusable (a FunesError and an OSError) naming the folder, the OS's reason and
        the variable that chose it when one cannot be made (FUNES_HOME a file, not writable)."""
        for d in (self.data, self.spool, self.logs):
            try:
                ensure_private_dir(d)
            except OSError as exc:
                raise self._unusable(d, exc.strerror or str(exc)) from exc
        return self

    def unusable(self) -> FoldersUnusable | None:
        """The error `ensure` would raise, judged without creating anything (for readers such
        as `funes status`): a folder, or the nearest existing one above it, that is no
        directory, or a missing one this user cannot create. None when none is seen."""
        for d in (self.data, self.spool, self.logs):
            found = d
            while not found.exists() and found.parent != found:
                found = found.parent
            if not found.is_dir():
                return self._unusable(d, os.strerror(errno.ENOTDIR))
            if found != d and not os.access(found, os.W_OK | os.X_OK):
                return self._unusable(d, os.strerror(errno.EACCES))
        return None

    def _unusable(self, folder: Path, reason: str) -> FoldersUnusable:
        return FoldersUnusable(
            f"cannot use {folder} for funes' files: {reason}",
            hint="FUNES_HOME names where funes keeps its files: point it at a folder you can write"
            if self.home is not None
            else "make that folder writable, or set FUNES_HOME to a folder you can write",
        )

    @classmethod
    def resolve(cls, env: Mapping[str, str] | None = None) -> Paths:
        """Where funes keeps its files. FUNES_HOME, if set, holds everything."""
        env = environment(env)
        hub = tuple((var, env[var]) for var in HUB_CACHE_VARS if env.get(var))
        models = (
            Path(env["FUNES_MODEL_CACHE"]).expanduser() if env.get("FUNES_MODEL_CACHE") else None
        )
        if home := env.get("FUNES_HOME"):
            root = Path(home).expanduser()
            spool = root / "spool"
            return cls(root / "data", spool, spool / "logs", root, hub, models)
        from platformdirs import PlatformDirs

        dirs = PlatformDirs("funes", appauthor=False)
        data = Path(dirs.user_data_dir)
        return cls(data, data / "spool", data / "spool" / "logs", None, hub, models)


def environment(env: Mapping[str, str] | None = None) -> Mapping[str, str]:
    """`env`, or this process's environment when None: the one place locations read it."""
    return os.environ if env is None else env


def user_home(env: Mapping[str, str]) -> Path:
    """The user's home directory: HOME from `env`, else the platform's idea of it."""
    return Path(env.get("HOME") or Path.home()).expanduser()


def bundled(name: str) -> Path:
    """A folder shipped beside the package: `hooks` or `installers`.

    In a wheel they live in `funes/_bundled/<name>`; in a source checkout, at the top level.
    Raises FileNotFoundError when neither exists.
    """
    package = Path(__file__).resolve().parent
    for candidate in (package / "_bundled" / name, package.parent / name):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(f"funes is missing its bundled {name!r} folder (looked in {package})")
