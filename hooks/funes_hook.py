"""funes hook: turn an agent's hook call into one spool entry, make sure a worker drains it, exit 0.

Started by an agent at a turn boundary (Claude Code / Codex hooks, Codex `notify`, Hermes shell
hooks, the funes pi extension). Standard library only, and run with `python -I -S`: it never
imports funes, never reads a transcript, never touches the network.

    python3 -I -S funes-enqueue.py --agent claude_code --spool DIR [--python PY] [--home DIR]
        [--memory PATH] [--event Stop] [--sweep] [PAYLOAD_JSON]

(funes-enqueue.py is hooks/enqueue.py, a launcher that imports this module from its cached
bytecode; `python3 -I -S funes_hook.py ...` runs the same hook, compiled on every call.)

Payload: the agent's hook JSON on stdin (read with a deadline; a never-closed stdin costs at most
`--stdin-timeout` seconds), or the last argument when it is a JSON object (Codex `notify`, which
gives stdin /dev/null). Only pointer fields are kept (ids, paths, cwd, event names; see
`_keep`): transcript text such as `prompt`, `last_assistant_message` or Hermes'
`conversation_history` never reaches the spool.

Spool entry (`DIR/new/<time_ns>-<pid>-<rand>.<agent>.json`, written to DIR/tmp then os.replace'd):

    {"v": 1, "agent": "claude_code", "event": "Stop", "received_at": 1795941866.49,
     "session_id": "...", "transcript_path": "...", "cwd": "...", "sweep": false,
     "memory": null, "payload": {pointer fields}, "env": {"HERMES_HOME": ...}, "attempts": 0}

Then, unless a worker holds DIR/worker.lock or one is starting (DIR/worker.starting younger than
30 s), it spawns `PY -m funes spool drain --spool DIR` detached (own session, no inherited pipes)
and never waits for it. Prints nothing on stdout (a Claude Code Stop hook's stdout is read as a
decision), and exits 0 whatever happens; errors go to DIR/logs/hook.log (0600).
"""

import os
import sys
import time

ENTRY_VERSION = 1
AGENTS = {
    "claude": "claude_code",
    "claude_code": "claude_code",
    "claude-code": "claude_code",
    "codex": "codex",
    "pi": "pi",
    "hermes": "hermes",
}
# Fields that point at where a turn lives. Anything else (prompts, replies, histories,
# tool input/output) is transcript text and is dropped.
POINTER_KEYS = frozenset(
    {
        "session_id",
        "transcript_path",
        "agent_transcript_path",
        "cwd",
        "hook_event_name",
        "turn_id",
        "agent_id",
        "agent_type",
        "source",
        "reason",
        "thread-id",
        "turn-id",
        "type",
        "client",
        "session_file",
        "profile",
        "model",
        "permission_mode",
        "stop_hook_active",
        "prompt_id",
        "platform",
        "task_id",
        "parent_session_id",
        "child_session_id",
        "completed",
        "interrupted",
        "db_path",
        "state_db",
    }
)
POINTER_SUFFIXES = ("_id", "-id", "_path", "_file")
TEXT_KEYS = frozenset(
    {
        "prompt",
        "last_assistant_message",
        "last-assistant-message",
        "input-messages",
        "user_message",
        "assistant_response",
        "conversation_history",
        "messages",
        "message",
        "tool_input",
        "tool_response",
        "error_details",
        "custom_instructions",
        "compact_summary",
        "result",
        "error",
        "error_message",
    }
)
ENV_KEYS = ("HERMES_HOME", "CLAUDE_CONFIG_DIR", "CODEX_HOME", "PI_CODING_AGENT_DIR")
MAX_VALUE_CHARS = 4096
MAX_STDIN_BYTES = 64 << 20
STARTING_STALE_S = 30.0
LOG_MAX_BYTES = 1 << 20


class _ScanContext:
    """What `_json.make_scanner` reads from a JSONDecoder: the C scanner without importing `json`."""

    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int
    memo: dict[str, str] = {}

    @staticmethod
    def parse_constant(name: str) -> float:
        return {"NaN": float("nan"), "Infinity": float("inf"), "-Infinity": float("-inf")}[name]


def loads(text: str) -> object:
    """json.loads without importing `json` (which pulls in `re` and `enum`: ~60% of our start-up).

    Uses CPython's C scanner; falls back to the `json` module where `_json` is missing.
    Raises ValueError on invalid JSON.
    """
    try:
        import _json

        scan = _json.make_scanner(_ScanContext())
    except Exception:
        import json

        return json.loads(text)
    text = text.strip(" \t\n\r")
    try:
        value, end = scan(text, 0)
    except (StopIteration, SystemError):
        # The C scanner reports errors through json.decoder, which it only finds when that
        # module is already imported (else: SystemError). Errors are rare: let json say it.
        import json

        return json.loads(text)
    if end != len(text):
        raise ValueError("extra data after JSON value")
    return value


def dumps(value: object) -> str:
    """Compact JSON for the envelope's plain values (str, int, float, bool, None, dict, list)."""
    try:
        from _json import encode_basestring_ascii as quote
    except ImportError:
        import json

        return json.dumps(value, separators=(",", ":"))
    return _dump(value, quote)


def _dump(value: object, quote: object) -> str:
    if isinstance(value, str):
        return quote(value)  # type: ignore[operator,no-any-return]
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return int.__repr__(value)
    if isinstance(value, float):
        return (
            float.__repr__(value)
            if value == value and value not in (float("inf"), float("-inf"))
            else "null"
        )
    if isinstance(value, dict):
        return "{" + ",".join(quote(str(k)) + ":" + _dump(v, quote) for k, v in value.items()) + "}"  # type: ignore[operator]
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(_dump(v, quote) for v in value) + "]"
    return quote(str(value))  # type: ignore[operator,no-any-return]


def _keep(key: object, value: object) -> bool:
    if not isinstance(key, str) or key in TEXT_KEYS:
        return False
    if key not in POINTER_KEYS and not key.endswith(POINTER_SUFFIXES):
        return False
    if isinstance(value, str):
        return len(value) <= MAX_VALUE_CHARS
    return value is None or isinstance(value, (bool, int, float))


def pointer_fields(payload: object) -> dict[str, object]:
    """The pointer fields of a hook payload (one nested `extra` mapping is filtered the same way)."""
    if not isinstance(payload, dict):
        return {}
    out: dict[str, object] = {k: v for k, v in payload.items() if _keep(k, v)}
    extra = payload.get("extra")
    if isinstance(extra, dict):
        kept = {k: v for k, v in extra.items() if _keep(k, v)}
        if kept:
            out["extra"] = kept
    return out


def _read_stdin(timeout_s: float) -> bytes:
    """All of stdin, or what arrived before the deadline. b'' for a terminal or a closed stdin."""
    try:
        fd = sys.stdin.fileno()
    except (AttributeError, OSError, ValueError):
        return b""
    try:
        if os.isatty(fd):
            return b""
    except OSError:
        return b""
    if os.name == "nt":  # select() does not work on Windows pipes
        import threading

        box: list[bytes] = []
        reader = threading.Thread(
            target=lambda: box.append(sys.stdin.buffer.read(MAX_STDIN_BYTES)), daemon=True
        )
        reader.start()
        reader.join(timeout_s)
        return box[0] if box else b""
    import select

    deadline = time.monotonic() + timeout_s
    parts: list[bytes] = []
    size = 0
    while size < MAX_STDIN_BYTES:
        left = deadline - time.monotonic()
        if left <= 0:
            break
        try:
            ready, _, _ = select.select([fd], [], [], left)
        except (OSError, ValueError):
            break
        if not ready:
            break
        try:
            chunk = os.read(fd, 1 << 20)
        except OSError:
            break
        if not chunk:
            break
        parts.append(chunk)
        size += len(chunk)
    return b"".join(parts)


def _salvage(raw: bytes) -> dict[str, object]:
    """Pointer strings from a payload that is not valid JSON (cut short, or not closed in time)."""
    import re

    head = raw[: 1 << 16].decode("utf-8", "replace")
    found: dict[str, object] = {}
    for key, value in re.findall(r'"([A-Za-z_-]+)"\s*:\s*"((?:[^"\\]|\\.)*)"', head):
        if key not in found and _keep(key, value):
            try:
                found[key] = loads(f'"{value}"')
            except ValueError:
                continue
    return found


def parse_payload(raw: bytes) -> tuple[dict[str, object], str | None]:
    """(pointer fields, problem or None)."""
    text = raw.strip()
    if not text:
        return {}, None
    try:
        data = loads(text.decode("utf-8", "replace"))
    except ValueError:
        return _salvage(text), f"payload is not valid JSON ({len(raw)} bytes); pointers salvaged"
    if not isinstance(data, dict):
        return {}, "payload is not a JSON object"
    return pointer_fields(data), None


def _first(payload: dict[str, object], *keys: str) -> object:
    for key in keys:
        value = payload.get(key)
        if value not in (None, ""):
            return value
    extra = payload.get("extra")
    if isinstance(extra, dict):
        for key in keys:
            value = extra.get(key)
            if value not in (None, ""):
                return value
    return None


def build_entry(
    args: dict[str, object], payload: dict[str, object], now: float
) -> dict[str, object]:
    event = args.get("event") or _first(payload, "hook_event_name", "type")
    cwd = _first(payload, "cwd")
    if cwd is None:
        try:
            cwd = os.getcwd()
        except OSError:
            cwd = None
    return {
        "v": ENTRY_VERSION,
        "agent": args["agent"],
        "event": event,
        "received_at": now,
        "session_id": _first(payload, "session_id", "thread-id"),
        "transcript_path": _first(
            payload, "agent_transcript_path", "transcript_path", "session_file"
        ),
        "cwd": cwd,
        "sweep": bool(args.get("sweep")),
        "memory": args.get("memory"),
        "payload": payload,
        "env": {k: os.environ[k] for k in ENV_KEYS if os.environ.get(k)},
        "attempts": 0,
    }


def _ensure_dir(path: str) -> None:
    os.makedirs(path, mode=0o700, exist_ok=True)


def write_entry(spool: str, agent: str, entry: dict[str, object], now: float) -> str:
    """Write the entry atomically into spool/new; returns its final path."""
    name = f"{int(now * 1e9):020d}-{os.getpid()}-{os.urandom(4).hex()}.{agent}.json"
    tmp_dir = os.path.join(spool, "tmp")
    new_dir = os.path.join(spool, "new")
    for d in (spool, tmp_dir, new_dir):
        if not os.path.isdir(d):
            _ensure_dir(d)
    tmp = os.path.join(tmp_dir, name)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        os.write(fd, dumps(entry).encode("ascii"))
    finally:
        os.close(fd)
    final = os.path.join(new_dir, name)
    os.replace(tmp, final)
    return final


def mark_seen(spool: str, agent: str) -> None:
    """Touch spool/seen/<agent>: its mtime is when this agent's hook last fired."""
    seen = os.path.join(spool, "seen")
    path = os.path.join(seen, agent)
    try:
        os.utime(path)
    except FileNotFoundError:
        _ensure_dir(seen)
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT, 0o600))


def worker_lock_held(spool: str) -> bool:
    """True when a drain worker holds spool/worker.lock (an OS lock, as filelock takes it)."""
    path = os.path.join(spool, "worker.lock")
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    except OSError:
        return False
    try:
        if os.name == "nt":
            import msvcrt

            try:
                msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
            except OSError:
                return True
            msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)
            return False
        import fcntl

        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return True
        fcntl.flock(fd, fcntl.LOCK_UN)
        return False
    finally:
        os.close(fd)


def claim_start(spool: str, now: float) -> bool:
    """Create spool/worker.starting exclusively. False when a fresh one says a worker is starting."""
    marker = os.path.join(spool, "worker.starting")
    for _ in range(2):
        try:
            fd = os.open(marker, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            try:
                age = now - os.stat(marker).st_mtime
            except FileNotFoundError:
                continue
            if age < STARTING_STALE_S:
                return False
            try:  # noqa: SIM105 (contextlib would cost start-up time)
                os.unlink(marker)  # the worker that made it died before taking the lock
            except FileNotFoundError:
                pass
            continue
        os.write(fd, str(os.getpid()).encode())
        os.close(fd)
        return True
    return False


def spawn_worker(spool: str, python: str, home: str | None, log_path: str) -> None:
    """Start `python -m funes spool drain` detached: own session, stdin/stdout to devnull.

    posix_spawn where available: importing subprocess (threading, signal, selectors…) would
    double this hook's cost on the first turn after the worker went idle.
    """
    env = dict(os.environ)
    if home:
        env["FUNES_HOME"] = home
    for var in ("PYTHONHOME", "PYTHONPATH", "PYTHONSTARTUP"):
        env.pop(var, None)
    argv = [python, "-m", "funes", "spool", "drain", "--spool", spool]
    err = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    try:
        if os.name != "nt" and hasattr(os, "posix_spawn"):
            try:
                here: str | None = os.getcwd()
            except OSError:
                here = None
            try:
                os.chdir(spool)  # `-m funes` must not find a ./funes folder of the agent's project
                os.posix_spawn(
                    python,
                    argv,
                    env,
                    setsid=True,
                    file_actions=[
                        (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
                        (os.POSIX_SPAWN_OPEN, 1, os.devnull, os.O_WRONLY, 0),
                        (os.POSIX_SPAWN_DUP2, err, 2),
                    ],
                )
                return
            except (NotImplementedError, TypeError, AttributeError):
                pass  # no setsid support here: fall back to subprocess
            finally:
                if here is not None:
                    os.chdir(here)
        import subprocess

        kwargs: dict[str, object] = {}
        if os.name == "nt":
            kwargs["creationflags"] = (
                0x00000008 | 0x00000200 | 0x08000000
            )  # DETACHED, NEW_GROUP, NO_WINDOW
        else:
            kwargs["start_new_session"] = True
        subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=err,
            close_fds=True,
            env=env,
            cwd=spool,
            **kwargs,  # type: ignore[arg-type]
        )
    finally:
        os.close(err)


def log(spool: str | None, message: str) -> None:
    """Append one line to spool/logs/hook.log (0600, rotated at 1 MiB). Never raises."""
    if not spool:
        return
    try:
        logs = os.path.join(spool, "logs")
        _ensure_dir(logs)
        path = os.path.join(logs, "hook.log")
        try:
            if os.stat(path).st_size > LOG_MAX_BYTES:
                os.replace(path, path + ".1")
        except FileNotFoundError:
            pass
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        try:
            stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
            os.write(fd, f"{stamp} pid={os.getpid()} {message}\n".encode("utf-8", "replace"))
        finally:
            os.close(fd)
    except Exception:
        pass


def parse_args(argv: list[str]) -> dict[str, object]:
    """A tiny argv parser (argparse costs ~10 ms of start-up). Unknown flags are ignored."""
    args: dict[str, object] = {"stdin_timeout": 1.0}
    valued = {"--agent", "--spool", "--python", "--event", "--home", "--memory", "--stdin-timeout"}
    rest: list[str] = []
    i = 0
    while i < len(argv):
        arg = argv[i]
        if "=" in arg and arg.split("=", 1)[0] in valued:
            key, value = arg.split("=", 1)
            args[key[2:].replace("-", "_")] = value
        elif arg in valued and i + 1 < len(argv):
            args[arg[2:].replace("-", "_")] = argv[i + 1]
            i += 1
        elif arg == "--sweep":
            args["sweep"] = True
        elif arg == "--no-worker":
            args["no_worker"] = True
        else:
            rest.append(arg)
        i += 1
    if rest and rest[-1].lstrip().startswith("{"):
        args["argv_payload"] = rest[-1]
    return args


def run(argv: list[str]) -> None:
    args = parse_args(argv)
    spool = args.get("spool")
    agent = AGENTS.get(str(args.get("agent", "")).strip().lower())
    if not isinstance(spool, str) or not spool or agent is None:
        log(spool if isinstance(spool, str) else None, f"bad arguments: {argv!r}")
        return
    args["agent"] = agent
    if "argv_payload" in args:
        raw = str(args["argv_payload"]).encode("utf-8", "replace")
    else:
        try:
            timeout_s = float(str(args.get("stdin_timeout")))
        except ValueError:
            timeout_s = 1.0
        raw = _read_stdin(timeout_s)
    payload, problem = parse_payload(raw)
    if problem:
        log(spool, f"agent={agent} {problem}")
    now = time.time()
    write_entry(spool, agent, build_entry(args, payload, now), now)
    try:
        mark_seen(spool, agent)
    except OSError as exc:
        log(spool, f"agent={agent} cannot mark seen: {exc}")
    if args.get("no_worker") or worker_lock_held(spool) or not claim_start(spool, now):
        return
    python = args.get("python") or sys.executable
    home = args.get("home")
    try:
        _ensure_dir(os.path.join(spool, "logs"))
        spawn_worker(
            spool,
            str(python),
            str(home) if home else None,
            os.path.join(spool, "logs", "worker.log"),
        )
    except Exception as exc:
        try:  # noqa: SIM105
            os.unlink(os.path.join(spool, "worker.starting"))
        except OSError:
            pass
        log(spool, f"agent={agent} cannot start the worker ({python}): {type(exc).__name__}: {exc}")


def main() -> None:
    try:
        run(sys.argv[1:])
    except BaseException as exc:  # the agent must never see a failure from us
        spool = None
        argv = sys.argv[1:]
        if "--spool" in argv and argv.index("--spool") + 1 < len(argv):
            spool = argv[argv.index("--spool") + 1]
        log(spool, f"hook failed: {type(exc).__name__}: {exc}")
    finally:
        try:  # noqa: SIM105
            sys.stdout.flush()
        except Exception:
            pass
        os._exit(0)


if __name__ == "__main__":
    main()
