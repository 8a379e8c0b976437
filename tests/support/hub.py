"""Simulated machines against the Hub stand-in (tests/hubfake): one HOME, FUNES_HOME and HF
cache each, funes run as separate processes (huggingface_hub reads HF_ENDPOINT at import).

    machine(tmp_path, "a", hub)   the environment of one machine (a write token by default)
    funes(env, *args)             `python -m funes ARGS` on that machine
    bounded(env, bounds, *args)   the same with funes.hf's Hub bounds set (seconds)
"""

from __future__ import annotations

import json
import os
import secrets
import string
import subprocess
import sys
from pathlib import Path

from hubfake import HubFake, Token

WRITE = "hf_fake_write_token_alice"
READ = "hf_fake_read_token_alice"
TOKENS = {WRITE: Token("alice", "write", ("team",)), READ: Token("alice", "read", ("team",))}


def machine(
    tmp_path: Path, name: str, hub: HubFake, *, token: str | None = WRITE, **extra: str
) -> dict[str, str]:
    """The environment of one simulated machine: its own HOME, FUNES_HOME and HF cache."""
    root = tmp_path / name
    (root / "home").mkdir(parents=True, exist_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("HF_")}
    env.update(
        HOME=str(root / "home"),
        FUNES_HOME=str(root / "funes"),
        HF_HOME=str(root / "hf"),
        HF_ENDPOINT=hub.url,
        HF_HUB_DISABLE_TELEMETRY="1",
        HF_HUB_DISABLE_PROGRESS_BARS="1",
        FUNES_REMOTE_TTL_S="0",
    )
    if token:
        env["HF_TOKEN"] = token
    env.update(extra)
    return env


def funes(
    env: dict[str, str], *args: str, timeout: float = 300
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "funes", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
    )


_BOUNDED = """
import json, sys
import funes.hf as hf
for name, value in json.loads(sys.argv.pop(1)).items():
    setattr(hf, name, value)
from funes.__main__ import main
main()
"""


def bounded(
    env: dict[str, str], bounds: dict[str, float], *args: str, timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    """`funes ARGS` on that machine with funes.hf's module constants in `bounds` set first
    (e.g. {"ANSWER_TIMEOUT_S": 1.0}): a test of a bound need not wait out its default."""
    return subprocess.run(
        [sys.executable, "-c", _BOUNDED, json.dumps(bounds), *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
    )


def minted_github_token() -> str:
    """A fresh GitHub token shape (made at run time: no secret is ever committed)."""
    alphabet = string.ascii_letters + string.digits
    return "ghp_" + "".join(secrets.choice(alphabet) for _ in range(36))


def index_without_redaction(env: dict[str, str]) -> None:
    """Index the machine's agent sessions as a funes whose rule set predates GitHub tokens
    (an empty rule set): the memory then holds raw secrets, which the push gate must stop."""
    script = (
        "from funes.memory import Runtime\n"
        "from funes.commands.index import sources_for, IndexRequest\n"
        "from funes.memory import parse_memory, open_for_write\n"
        "from funes.ingest import IndexJob, index\n"
        "from funes.redact import RuleScanner\n"
        "rt = Runtime.resolve()\n"
        "store = open_for_write(rt, parse_memory(None, rt))\n"
        "spec = rt.embedder_spec_for(None)\n"
        "job = IndexJob(store=store, embedder=rt.embedder(spec), scanner=RuleScanner(rules=()), "
        "all_tiers_at_once=True)\n"
        "index(sources_for(rt, IndexRequest()), job)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
