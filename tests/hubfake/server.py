"""A loopback stand-in for the Hugging Face Hub: exactly the endpoints huggingface_hub 2.x calls
for funes' operations, served by the stdlib on 127.0.0.1, state on disk (see state.py).

Endpoints (repo type `dataset` shown; `model`/`space` route the same way):

    GET  /api/whoami-v2                                  token owner and role
    POST /api/repos/create                               create (409 + url when it exists)
    POST /api/validate-yaml                              README front matter check
    GET  /api/datasets/{ns}/{name}[/revision/{rev}]      repo info: sha, private, siblings
    GET  /api/datasets/{ns}/{name}/refs                  branches → target commits
    GET  /api/datasets/{ns}/{name}/tree/{rev}[/{path}]   file listing (?recursive=1)
    POST /api/datasets/{ns}/{name}/paths-info/{rev}      entries for given paths
    POST /api/datasets/{ns}/{name}/preupload/{rev}       upload mode per file (regular | lfs)
    POST /api/datasets/{ns}/{name}/commit/{rev}          NDJSON commit; stale parentCommit → 412
    HEAD/GET /datasets/{ns}/{name}/resolve/{rev}/{path}  file bytes + X-Repo-Commit, ETag
    HEAD/GET /{ns}/{name}/resolve/{rev}/{path}           the same for model repos (no type prefix)
    POST /datasets/{ns}/{name}.git/info/lfs/objects/batch   legacy LFS (with HF_HUB_DISABLE_XET=1)
    PUT  /_lfs/{sha256}                                  LFS object upload

Auth: `Authorization: Bearer <token>`; `tokens` maps a token to its user, role (read|write)
and namespaces. Private repos answer 401/404 `RepoNotFound` to outsiders; writes with a read
token answer 403. Fidelity gaps: no Xet, no pagination, no PRs/tags, no rate limits, no
`Range` (a resumed download gets the whole body again).

Faults a test switches on (HubFake): `fail(status)` answers everything with a status,
`hold_commits` holds commits, `silence()` answers nothing, `pace(step, every_s)` trickles file
bodies and reads uploads (commits, LFS objects) as slowly, `cut_after(n)` ends a file body after n
bytes and then answers nothing.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import sys
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

from hubfake.state import Conflict, FileEntry, HubState

_REPO = r"(?P<type>model|dataset|space)s/(?P<ns>[^/]+)/(?P<name>[^/]+?)"
ROUTES: list[tuple[str, re.Pattern[str], str]] = [
    ("GET", re.compile(r"^/api/whoami-v2$"), "whoami"),
    ("POST", re.compile(r"^/api/repos/create$"), "create"),
    ("POST", re.compile(r"^/api/validate-yaml$"), "validate_yaml"),
    ("GET", re.compile(rf"^/api/{_REPO}/refs$"), "refs"),
    ("GET", re.compile(rf"^/api/{_REPO}/tree/(?P<rev>[^/]+)(?:/(?P<path>.*))?$"), "tree"),
    ("POST", re.compile(rf"^/api/{_REPO}/paths-info/(?P<rev>[^/]+)$"), "paths_info"),
    ("POST", re.compile(rf"^/api/{_REPO}/preupload/(?P<rev>[^/]+)$"), "preupload"),
    ("POST", re.compile(rf"^/api/{_REPO}/commit/(?P<rev>[^/]+)$"), "commit"),
    ("GET", re.compile(rf"^/api/{_REPO}(?:/revision/(?P<rev>[^/]+))?$"), "info"),
    ("HEAD", re.compile(rf"^/{_REPO}/resolve/(?P<rev>[^/]+)/(?P<path>.+)$"), "resolve"),
    ("GET", re.compile(rf"^/{_REPO}/resolve/(?P<rev>[^/]+)/(?P<path>.+)$"), "resolve"),
    # Model files resolve without a type prefix: /{ns}/{name}/resolve/{rev}/{path}.
    (
        "HEAD",
        re.compile(r"^/(?P<ns>[^/]+)/(?P<name>[^/]+)/resolve/(?P<rev>[^/]+)/(?P<path>.+)$"),
        "resolve_model",
    ),
    (
        "GET",
        re.compile(r"^/(?P<ns>[^/]+)/(?P<name>[^/]+)/resolve/(?P<rev>[^/]+)/(?P<path>.+)$"),
        "resolve_model",
    ),
    ("POST", re.compile(rf"^/{_REPO}\.git/info/lfs/objects/batch$"), "lfs_batch"),
    ("PUT", re.compile(r"^/_lfs/(?P<oid>[0-9a-f]{64})$"), "lfs_put"),
]
_BINARY = (".lance", ".idx", ".manifest", ".txn")


@dataclass(frozen=True)
class Token:
    user: str
    role: str = "write"  # read | write
    namespaces: tuple[str, ...] = ()

    def may_read(self, ns: str) -> bool:
        return ns == self.user or ns in self.namespaces

    def may_write(self, ns: str) -> bool:
        return self.role == "write" and self.may_read(ns)


@dataclass
class Config:
    tokens: Mapping[str, Token]
    lfs: bool = False  # preupload answers `lfs` for binary files (needs HF_HUB_DISABLE_XET=1)
    rendezvous: int = 0  # hold the first N commit requests until all N arrived (forces a race)
    _arrived: int = 0
    _cond: threading.Condition = field(default_factory=threading.Condition)

    def wait_for_peers(self, timeout_s: float = 60.0) -> None:
        """Block a commit request until `rendezvous` of them are waiting (first N only)."""
        with self._cond:
            if self._arrived >= self.rendezvous:
                return
            self._arrived += 1
            self._cond.notify_all()
            self._cond.wait_for(lambda: self._arrived >= self.rendezvous, timeout=timeout_s)

    log: list[tuple[str, str, int]] = field(default_factory=list)  # (method, path, status)
    # Faults a test switches on (see HubFake.fail / hold_commits):
    fail_status: int | None = None  # answer every request with this status (503: "Hub errors")
    hold: int = 0  # commit requests still to hold before answering (the first ones that arrive)
    held: threading.Event = field(default_factory=threading.Event)  # set once one is held
    released: threading.Event = field(default_factory=threading.Event)
    apply_held: bool = True  # a released held commit is applied (else dropped, never committed)
    releasing: threading.Event = field(default_factory=threading.Event)  # the held one woke
    silent: bool = False  # read every request, answer none (a proxy or firewall eating traffic)
    pace: tuple[int, float] | None = None  # bodies sent / uploads read (bytes, every s): slow link
    cut_after: int | None = None  # a file body stops after this many bytes, then `silent` is set
    stopping: threading.Event = field(default_factory=threading.Event)  # set by stop()


class Server(ThreadingHTTPServer):
    daemon_threads = True
    state: HubState
    config: Config

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that went away (a test killed it mid-request) is not the fake's error."""
        if isinstance(sys.exc_info()[1], ConnectionError):
            return
        super().handle_error(request, client_address)


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: Server

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        return

    # -- plumbing -----------------------------------------------------------------------

    def _dispatch(self, method: str) -> None:
        url = urlsplit(self.path)
        path = unquote(url.path)
        self.query = parse_qs(url.query)
        upload = method in ("POST", "PUT") and ("/commit/" in path or path.startswith("/_lfs/"))
        self.body = self._read_body(int(self.headers.get("Content-Length") or 0), paced=upload)
        if self.server.config.silent:
            self.server.config.log.append((method, path, 0))  # 0: never answered
            self.server.config.stopping.wait(timeout=300)
            self.close_connection = True
            return
        if self.server.config.fail_status is not None:
            status = self.server.config.fail_status
            self._error(status, None, f"the stand-in answers {status} (fault injected)")
            return
        for verb, pattern, name in ROUTES:
            m = pattern.match(path)
            if verb == method and m:
                try:
                    getattr(self, f"do_{name}")(**{k: v for k, v in m.groupdict().items()})
                except ConnectionError:
                    raise  # the client went away: nothing to answer
                except Exception as exc:  # a bug in the fake must be loud, not a hang
                    self._json(500, {"error": f"{type(exc).__name__}: {exc}"})
                return
        self._json(404, {"error": f"no route {method} {path}"})

    def _read_body(self, length: int, *, paced: bool) -> bytes:
        """The request body; a `paced` one (an upload) with `config.pace` set is read `step`
        bytes at a time, `every_s` seconds apart (a slow link: the answer comes once the last
        byte is read)."""
        pace = self.server.config.pace
        if not paced or pace is None or length <= pace[0]:
            return self.rfile.read(length) if length else b""
        step, every_s = pace
        parts: list[bytes] = []
        got = 0
        while got < length:
            if got and self.server.config.stopping.wait(timeout=every_s):
                break
            part = self.rfile.read(min(step, length - got))
            if not part:
                break
            parts.append(part)
            got += len(part)
        return b"".join(parts)

    def do_GET(self) -> None:  # noqa: N802
        self._dispatch("GET")

    def do_POST(self) -> None:  # noqa: N802
        self._dispatch("POST")

    def do_HEAD(self) -> None:  # noqa: N802
        self._dispatch("HEAD")

    def do_PUT(self) -> None:  # noqa: N802
        self._dispatch("PUT")

    def _send(
        self,
        status: int,
        body: bytes,
        headers: Mapping[str, str] | None = None,
        *,
        paced: bool = False,
    ) -> None:
        """Answer `status` with `body`; a `paced` body (a file's) goes out as `config.pace` and
        `config.cut_after` say."""
        self.server.config.log.append((self.command, urlsplit(self.path).path, status))
        self.send_response(status)
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command == "HEAD":
            return
        config = self.server.config
        if not paced or (config.pace is None and config.cut_after is None):
            self.wfile.write(body)
            return
        step, every_s = config.pace or (len(body) or 1, 0.0)
        end = len(body) if config.cut_after is None else min(config.cut_after, len(body))
        for start in range(0, end, step):
            self.wfile.write(body[start : min(start + step, end)])
            self.wfile.flush()
            if every_s and config.stopping.wait(timeout=every_s):
                return
        if end < len(body):  # the link dies: this body stops here, later requests go unanswered
            config.silent = True
            config.stopping.wait(timeout=300)
            self.close_connection = True

    def _json(self, status: int, obj: Any, headers: Mapping[str, str] | None = None) -> None:
        self._send(
            status,
            json.dumps(obj).encode(),
            {"Content-Type": "application/json", **(headers or {})},
        )

    def _error(
        self, status: int, code: str | None, message: str, headers: Mapping[str, str] | None = None
    ) -> None:
        extra = {"X-Error-Message": message, **(headers or {})}
        if code:
            extra["X-Error-Code"] = code
        self._json(status, {"error": message}, extra)

    @property
    def base(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host}:{port}"

    def _token(self) -> Token | None | bool:
        """The caller's Token; None when anonymous; False when the token is unknown."""
        auth = self.headers.get("Authorization") or ""
        if not auth.startswith("Bearer "):
            return None
        return self.server.config.tokens.get(auth[len("Bearer ") :].strip(), False)

    def _repo(self, type: str, ns: str, name: str, *, write: bool = False) -> str | None:
        """repo id when the caller may access it; otherwise answers the error and returns None."""
        token = self._token()
        if token is False:
            self._error(401, None, "Invalid credentials in Authorization header")
            return None
        repo_id = f"{ns}/{name}"
        state = self.server.state
        visible = state.exists(type, repo_id) and (
            not state.is_private(type, repo_id) or (isinstance(token, Token) and token.may_read(ns))
        )
        if not visible:
            self._error(401 if token is None else 404, "RepoNotFound", "Repository not found")
            return None
        if write and not (isinstance(token, Token) and token.may_write(ns)):
            if token is None:
                self._error(401, None, "Invalid credentials in Authorization header")
            else:
                self._error(403, None, "You don't have the rights to write to this repository")
            return None
        return repo_id

    def _commit_for(self, type: str, repo_id: str, rev: str) -> str | None:
        commit = self.server.state.resolve(type, repo_id, unquote(rev))
        if commit is None:
            self._error(404, "RevisionNotFound", f"Invalid rev id: {rev}")
        return commit

    @staticmethod
    def _entry(f: FileEntry) -> dict[str, Any]:
        out: dict[str, Any] = {"type": "file", "oid": f.git_oid, "size": f.size, "path": f.path}
        if f.lfs:
            out["lfs"] = {"oid": f.sha256, "size": f.size, "pointerSize": 134}
        return out

    # -- endpoints ------------------------------------------------------------------------

    def do_whoami(self) -> None:
        token = self._token()
        if not isinstance(token, Token):
            self._error(401, None, "Invalid credentials in Authorization header")
            return
        orgs = [{"name": n, "type": "org"} for n in token.namespaces]
        self._json(
            200,
            {
                "type": "user",
                "name": token.user,
                "orgs": orgs,
                "auth": {"accessToken": {"role": token.role}},
            },
        )

    def do_create(self) -> None:
        token = self._token()
        if not isinstance(token, Token):
            self._error(401, None, "Invalid credentials in Authorization header")
            return
        body = json.loads(self.body or b"{}")
        ns = body.get("organization") or token.user
        repo_type = body.get("type") or "model"
        repo_id = f"{ns}/{body['name']}"
        url = (
            f"{self.base}/{repo_type}s/{repo_id}"
            if repo_type != "model"
            else f"{self.base}/{repo_id}"
        )
        if not token.may_write(ns):
            self._error(
                403, None, "You don't have the rights to create a repository in this namespace"
            )
            return
        private = body.get("visibility", "private" if body.get("private") else "public") != "public"
        if not self.server.state.create(repo_type, repo_id, private=private):
            self._json(409, {"error": "You already created this repo", "url": url})
            return
        self._json(200, {"url": url, "name": repo_id, "id": repo_id})

    def do_validate_yaml(self) -> None:
        self._json(200, {"errors": [], "warnings": []})

    def do_info(self, type: str, ns: str, name: str, rev: str | None = None) -> None:
        repo_id = self._repo(type, ns, name)
        if repo_id is None:
            return
        commit = self._commit_for(type, repo_id, rev or "main")
        if commit is None:
            return
        files = self.server.state.files(type, repo_id, commit)
        self._json(
            200,
            {
                "id": repo_id,
                "author": ns,
                "sha": commit,
                "private": self.server.state.is_private(type, repo_id),
                "disabled": False,
                "gated": False,
                "tags": [],
                "siblings": [{"rfilename": p} for p in sorted(files)],
            },
        )

    def do_refs(self, type: str, ns: str, name: str) -> None:
        repo_id = self._repo(type, ns, name)
        if repo_id is None:
            return
        head = self.server.state.head(type, repo_id)
        branches = (
            [{"name": "main", "ref": "refs/heads/main", "targetCommit": head}] if head else []
        )
        self._json(200, {"branches": branches, "converts": [], "tags": []})

    def do_tree(self, type: str, ns: str, name: str, rev: str, path: str | None = None) -> None:
        repo_id = self._repo(type, ns, name)
        if repo_id is None:
            return
        commit = self._commit_for(type, repo_id, rev)
        if commit is None:
            return
        recursive = (self.query.get("recursive") or ["false"])[0].lower() in ("1", "true")
        prefix = (path or "").strip("/")
        files = self.server.state.files(type, repo_id, commit)
        out: list[dict[str, Any]] = []
        dirs: set[str] = set()
        for p, f in sorted(files.items()):
            if prefix and not p.startswith(prefix + "/"):
                continue
            rest = p[len(prefix) + 1 :] if prefix else p
            parts = rest.split("/")
            for i in range(1, len(parts)):
                d = "/".join(([prefix] if prefix else []) + parts[:i])
                if (recursive or i == 1) and d not in dirs:
                    dirs.add(d)
                    out.append(
                        {
                            "type": "directory",
                            "oid": hashlib.sha1(d.encode()).hexdigest(),
                            "size": 0,
                            "path": d,
                        }
                    )
            if recursive or len(parts) == 1:
                out.append(self._entry(f))
        if prefix and not out:
            self._error(404, "EntryNotFound", f"{prefix} does not exist", {"X-Repo-Commit": commit})
            return
        self._json(200, out)

    def do_paths_info(self, type: str, ns: str, name: str, rev: str) -> None:
        repo_id = self._repo(type, ns, name)
        if repo_id is None:
            return
        commit = self._commit_for(type, repo_id, rev)
        if commit is None:
            return
        form = parse_qs(self.body.decode())
        wanted = form.get("paths", [])
        files = self.server.state.files(type, repo_id, commit)
        self._json(200, [self._entry(files[p]) for p in wanted if p in files])

    def do_preupload(self, type: str, ns: str, name: str, rev: str) -> None:
        repo_id = self._repo(type, ns, name, write=True)
        if repo_id is None:
            return
        commit = self._commit_for(type, repo_id, rev)
        if commit is None:
            return
        files = self.server.state.files(type, repo_id, commit)
        out = []
        for f in json.loads(self.body)["files"]:
            lfs = self.server.config.lfs and f["size"] > 0 and f["path"].endswith(_BINARY)
            existing = files.get(f["path"])
            out.append(
                {
                    "path": f["path"],
                    "uploadMode": "lfs" if lfs else "regular",
                    "shouldIgnore": False,
                    "oid": existing.git_oid if existing else None,
                }
            )
        self._json(200, {"files": out, "commitOid": commit})

    def do_commit(self, type: str, ns: str, name: str, rev: str) -> None:
        repo_id = self._repo(type, ns, name, write=True)
        if repo_id is None:
            return
        self.server.config.wait_for_peers()
        if not self._wait_if_held():
            return
        header: dict[str, Any] = {}
        added: dict[str, bytes | tuple[str, bool]] = {}
        deleted: set[str] = set()
        for line in self.body.splitlines():
            if not line.strip():
                continue
            item = json.loads(line)
            key, value = item["key"], item["value"]
            if key == "header":
                header = value
            elif key == "file":
                added[value["path"]] = base64.b64decode(value["content"])
            elif key == "lfsFile":
                if not self.server.state.has_blob(value["oid"]):
                    self._error(422, None, f"LFS object {value['oid']} was not uploaded")
                    return
                added[value["path"]] = (value["oid"], True)
            elif key in ("deletedFile", "deletedFolder"):
                deleted.add(value["path"])
        try:
            oid = self.server.state.commit(
                type,
                repo_id,
                unquote(rev),
                added,
                deleted,
                header.get("summary", ""),
                header.get("parentCommit"),
            )
        except Conflict as exc:
            self._error(
                412, None, f"A commit has happened since. Please refresh and try again. ({exc})"
            )
            return
        prefix = f"{type}s/" if type != "model" else ""
        self._json(
            200,
            {
                "commitOid": oid,
                "commitUrl": f"{self.base}/{prefix}{repo_id}/commit/{oid}",
                "success": True,
            },
        )

    def _wait_if_held(self) -> bool:
        """Hold this commit request while the test asks for it (HubFake.hold_commits); False
        when the held commit is to be dropped (the connection is closed, nothing committed)."""
        config = self.server.config
        with config._cond:
            hold = config.hold > 0
            if hold:
                config.hold -= 1
        if not hold:
            return True
        config.held.set()
        config.released.wait(timeout=120)
        config.releasing.set()
        if config.apply_held:
            return True
        self.close_connection = True
        return False

    def do_resolve(self, type: str, ns: str, name: str, rev: str, path: str) -> None:
        repo_id = self._repo(type, ns, name)
        if repo_id is None:
            return
        commit = self._commit_for(type, repo_id, rev)
        if commit is None:
            return
        f = self.server.state.files(type, repo_id, commit).get(path)
        if f is None:
            self._error(404, "EntryNotFound", f"{path} does not exist", {"X-Repo-Commit": commit})
            return
        headers = {
            "X-Repo-Commit": commit,
            "ETag": f'"{f.git_oid}"',
            "Content-Type": "application/octet-stream",
        }
        if f.lfs:
            headers.update({"X-Linked-Etag": f'"{f.sha256}"', "X-Linked-Size": str(f.size)})
        self._send(200, self.server.state.blob(f.sha256), headers, paced=True)

    def do_resolve_model(self, ns: str, name: str, rev: str, path: str) -> None:
        self.do_resolve("model", ns, name, rev, path)

    def do_lfs_batch(self, type: str, ns: str, name: str) -> None:
        if self._repo(type, ns, name, write=True) is None:
            return
        objects = []
        for obj in json.loads(self.body)["objects"]:
            entry: dict[str, Any] = {"oid": obj["oid"], "size": obj["size"]}
            if not self.server.state.has_blob(obj["oid"]):
                entry["actions"] = {"upload": {"href": f"{self.base}/_lfs/{obj['oid']}"}}
            objects.append(entry)
        self._json(200, {"transfer": "basic", "objects": objects})

    def do_lfs_put(self, oid: str) -> None:
        if hashlib.sha256(self.body).hexdigest() != oid:
            self._error(400, None, "sha256 mismatch")
            return
        self.server.state.put_blob(self.body)
        self._send(200, b"")


class HubFake:
    """The stand-in, serving on 127.0.0.1:<port> from a thread. `url` goes into HF_ENDPOINT."""

    def __init__(
        self, root: Path, tokens: Mapping[str, Token], *, lfs: bool = False, port: int = 0
    ) -> None:
        self.state = HubState(root)
        self.config = Config(dict(tokens), lfs=lfs)
        self._port = port
        self._server: Server | None = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        """The endpoint (still the same after `stop()`: connecting to it is then refused)."""
        assert self._port, "start() the stand-in first"
        return f"http://127.0.0.1:{self._port}"

    @property
    def log(self) -> list[tuple[str, str, int]]:
        return self.config.log

    def fail(self, status: int | None) -> None:
        """Answer every request with `status` (e.g. 503) until `fail(None)`."""
        self.config.fail_status = status

    def hold_commits(self, n: int = 1, *, apply: bool = True) -> None:
        """Hold the next `n` commit requests until `release()`: `config.held` is set once one
        waits. A released commit is applied (`apply`), or dropped without committing."""
        self.config.held.clear()
        self.config.released.clear()
        self.config.releasing.clear()
        self.config.apply_held = apply
        self.config.hold = n

    def release(self) -> None:
        self.config.released.set()

    def silence(self, on: bool = True) -> None:
        """Accept connections and read requests but answer none (until `silence(False)` or
        `stop()`): a proxy or firewall that swallows traffic. Such requests are logged with
        status 0."""
        self.config.silent = on

    def pace(self, step: int | None, every_s: float = 0.0) -> None:
        """Send file bodies (resolve GETs) `step` bytes at a time, `every_s` seconds apart, and
        read uploads (commit bodies, LFS objects) the same way: a slow link that keeps
        delivering. None: full speed again."""
        self.config.pace = None if step is None else (step, every_s)

    def cut_after(self, n: int | None) -> None:
        """Stop sending a file body (resolve GET) after `n` bytes and go `silence()`d: a link
        that dies mid-transfer. None: bodies are whole again (`silence(False)` too)."""
        self.config.cut_after = n

    def start(self) -> HubFake:
        self.config.stopping.clear()
        self._server = Server(("127.0.0.1", self._port), Handler)
        self._server.state = self.state
        self._server.config = self.config
        self._port = self._server.server_address[1]  # a restart reuses the port
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving (clients then get connection refused: the Hub is 'offline')."""
        self.config.stopping.set()  # release silent and paced handlers
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> HubFake:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def checkout(self, repo_id: str, dest: Path, *, repo_type: str = "dataset") -> Path:
        """Write the files of the repository's head commit under `dest` (a plain folder)."""
        head = self.state.head(repo_type, repo_id)
        assert head is not None
        for path, f in self.state.files(repo_type, repo_id, head).items():
            target = dest / path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(self.state.blob(f.sha256))
        return dest

    def stored_bytes(self) -> list[Path]:
        """Every file the stand-in holds (blobs and metadata), for tests that inspect them."""
        return [p for p in self.state.root.rglob("*") if p.is_file()]
