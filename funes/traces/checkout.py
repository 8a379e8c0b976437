"""Which repository a session worked on: the git remotes of the checkout it ran in.

A session records its working directory (`cwd`); the repository identity of that checkout is
the `owner/name` path of each of its git remotes (`git@github.com:acme/widget.git`,
`https://github.com/acme/widget`, `ssh://git@host:22/acme/widget.git` → `acme/widget`;
nested groups keep every segment: `group/sub/name`), lower-cased. Read from the checkout's
git config directly (worktrees and submodules followed through their `.git` file): no git
binary needed, nothing run. `funes curate` attributes sessions to a project with it.
"""

from __future__ import annotations

import re
from pathlib import Path

_SCP = re.compile(r"^[\w.+-]+@[\w.-]+:(?P<path>[^/].*)$")  # git@host:owner/name.git
_URL = re.compile(r"^[a-z][a-z0-9+.-]*://[^/]+/(?P<path>.+)$")  # scheme://[user@]host[:port]/…


def repo_identity(url: str) -> str | None:
    """The `owner/name` of a git remote URL, or None for a local path or anything else."""
    url = url.strip()
    found = _URL.match(url) or _SCP.match(url)
    if found is None:
        return None
    path = found.group("path").strip("/")
    path = path.removesuffix(".git").strip("/")
    parts = [p for p in path.split("/") if p]
    if len(parts) < 2:
        return None
    return "/".join(parts).lower()


def _git_dir(start: Path) -> Path | None:
    """The git directory of the checkout holding `start` (a `.git` file is followed)."""
    for folder in (start, *start.parents):
        dot = folder / ".git"
        if dot.is_dir():
            return dot
        if dot.is_file():
            try:
                line = dot.read_text(encoding="utf-8", errors="replace").strip()
            except OSError:
                return None
            if line.startswith("gitdir:"):
                target = Path(line[len("gitdir:") :].strip())
                return target if target.is_absolute() else (folder / target).resolve()
            return None
    return None


def _config(git_dir: Path) -> Path:
    """The config file of a git directory (a worktree's lives in the common directory)."""
    common = git_dir / "commondir"
    if common.is_file():
        try:
            target = Path(common.read_text(encoding="utf-8").strip())
        except OSError:
            return git_dir / "config"
        return (target if target.is_absolute() else git_dir / target) / "config"
    return git_dir / "config"


def checkout_identities(cwd: str | Path) -> tuple[str, ...]:
    """The repository identities of the checkout at `cwd` (origin first), () when it is no
    git checkout, has no remote with a host, or cannot be read. Never raises."""
    try:
        git_dir = _git_dir(Path(cwd).expanduser())
        if git_dir is None:
            return ()
        text = _config(git_dir).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ()
    remotes: list[tuple[str, str]] = []
    section: str | None = None
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line[0] in "#;":
            continue
        header = re.fullmatch(r'\[\s*remote\s+"(?P<name>[^"]*)"\s*\]', line)
        if line.startswith("["):
            section = header.group("name") if header else None
            continue
        key, _, value = line.partition("=")
        if section is not None and key.strip().lower() == "url" and value.strip():
            remotes.append((section, value.strip().strip('"')))
    remotes.sort(key=lambda r: r[0] != "origin")
    out: list[str] = []
    for _, url in remotes:
        identity = repo_identity(url)
        if identity and identity not in out:
            out.append(identity)
    return tuple(out)
