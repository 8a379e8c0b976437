"""On-disk state of the Hub stand-in: repositories, git-like commits, branch heads, blobs.

    <root>/blobs/<sha256>                                   file contents (content-addressed)
    <root>/repos/<type>s/<namespace>/<name>/repo.json      {"private": bool}
    <root>/repos/<type>s/<namespace>/<name>/refs/<branch>  the branch's commit oid
    <root>/repos/<type>s/<namespace>/<name>/commits/<oid>.json
        {"oid", "parent", "summary", "files": {path: {"sha256", "size", "git_oid"}}}

A commit records the whole file map (a snapshot), like a git tree. Every mutation runs under
one lock; `commit()` is compare-and-swap on the branch head (stale parent → Conflict).
State survives the server: a new HubFake on the same root sees the same repositories.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from dataclasses import dataclass
from pathlib import Path


class Conflict(Exception):
    """The branch head is not the parent commit the writer started from."""


def git_blob_oid(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\x00" % len(data) + data).hexdigest()


@dataclass(frozen=True)
class FileEntry:
    path: str
    sha256: str
    size: int
    git_oid: str
    lfs: bool = False


class HubState:
    def __init__(self, root: Path) -> None:
        self.root = root
        (root / "blobs").mkdir(parents=True, exist_ok=True)
        (root / "repos").mkdir(parents=True, exist_ok=True)
        self.lock = threading.RLock()

    # -- repositories -------------------------------------------------------------------

    def _repo(self, repo_type: str, repo_id: str) -> Path:
        return self.root / "repos" / f"{repo_type}s" / repo_id

    def exists(self, repo_type: str, repo_id: str) -> bool:
        return (self._repo(repo_type, repo_id) / "repo.json").is_file()

    def is_private(self, repo_type: str, repo_id: str) -> bool:
        return bool(
            json.loads((self._repo(repo_type, repo_id) / "repo.json").read_text())["private"]
        )

    def create(self, repo_type: str, repo_id: str, *, private: bool) -> bool:
        """Create the repository with an initial commit (`.gitattributes`). False if it exists."""
        with self.lock:
            if self.exists(repo_type, repo_id):
                return False
            repo = self._repo(repo_type, repo_id)
            (repo / "refs").mkdir(parents=True)
            (repo / "commits").mkdir()
            (repo / "repo.json").write_text(json.dumps({"private": private}))
            self.commit(
                repo_type,
                repo_id,
                "main",
                {".gitattributes": b"*.lance filter=lfs\n"},
                set(),
                "initial commit",
                None,
            )
            return True

    # -- blobs ----------------------------------------------------------------------------

    def put_blob(self, data: bytes) -> str:
        digest = hashlib.sha256(data).hexdigest()
        path = self.root / "blobs" / digest
        if not path.exists():
            tmp = path.with_suffix(f".{threading.get_ident()}.tmp")
            tmp.write_bytes(data)
            tmp.replace(path)
        return digest

    def has_blob(self, sha256: str) -> bool:
        return (self.root / "blobs" / sha256).is_file()

    def blob(self, sha256: str) -> bytes:
        return (self.root / "blobs" / sha256).read_bytes()

    # -- commits ----------------------------------------------------------------------------

    def head(self, repo_type: str, repo_id: str, branch: str = "main") -> str | None:
        ref = self._repo(repo_type, repo_id) / "refs" / branch
        return ref.read_text().strip() if ref.is_file() else None

    def resolve(self, repo_type: str, repo_id: str, revision: str) -> str | None:
        """A branch name or a full commit oid → commit oid (None when unknown)."""
        head = self.head(repo_type, repo_id, revision)
        if head is not None:
            return head
        if (self._repo(repo_type, repo_id) / "commits" / f"{revision}.json").is_file():
            return revision
        return None

    def files(self, repo_type: str, repo_id: str, commit: str) -> dict[str, FileEntry]:
        doc = json.loads(
            (self._repo(repo_type, repo_id) / "commits" / f"{commit}.json").read_text()
        )
        return {
            p: FileEntry(p, f["sha256"], f["size"], f["git_oid"], f.get("lfs", False))
            for p, f in doc["files"].items()
        }

    def commit(
        self,
        repo_type: str,
        repo_id: str,
        branch: str,
        added: dict[str, bytes | tuple[str, bool]],
        deleted: set[str],
        summary: str,
        parent_commit: str | None,
    ) -> str:
        """Commit on `branch`. `added` maps paths to bytes (a regular file), or to (sha256 of an
        uploaded blob, True) for an LFS file.

        Raises Conflict when `parent_commit` is given and is not the branch head.
        """
        with self.lock:
            head = self.head(repo_type, repo_id, branch)
            if parent_commit is not None and parent_commit != head:
                raise Conflict(f"parent {parent_commit} is not the head {head}")
            files = dict(self.files(repo_type, repo_id, head)) if head else {}
            for path in deleted:
                for existing in [
                    p for p in files if p == path or p.startswith(path.rstrip("/") + "/")
                ]:
                    del files[existing]
            for path, src in added.items():
                data = src if isinstance(src, bytes) else self.blob(src[0])
                digest = self.put_blob(data)
                files[path] = FileEntry(
                    path, digest, len(data), git_blob_oid(data), not isinstance(src, bytes)
                )
            doc = {
                "parent": head,
                "summary": summary,
                "time": time.time(),
                "files": {
                    p: {"sha256": f.sha256, "size": f.size, "git_oid": f.git_oid, "lfs": f.lfs}
                    for p, f in sorted(files.items())
                },
            }
            oid = hashlib.sha1(json.dumps(doc, sort_keys=True).encode()).hexdigest()
            repo = self._repo(repo_type, repo_id)
            (repo / "commits" / f"{oid}.json").write_text(json.dumps({"oid": oid, **doc}))
            (repo / "refs" / branch).write_text(oid)
            return oid

    def history(self, repo_type: str, repo_id: str, branch: str = "main") -> list[str]:
        """Commit oids from the head back to the first commit."""
        out: list[str] = []
        oid = self.head(repo_type, repo_id, branch)
        while oid:
            out.append(oid)
            oid = json.loads(
                (self._repo(repo_type, repo_id) / "commits" / f"{oid}.json").read_text()
            )["parent"]
        return out
