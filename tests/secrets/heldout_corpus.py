"""The held-out secrets corpus: values from heldout_values.py placed in Claude Code sessions.

A second, separate measurement beside field_corpus.py, built after it and not tuned on: other
scanners' published test data, other vendor formats, and more ways a secret reaches a
transcript. Each value is placed in up to `PER_VALUE` contexts drawn (seeded) from the ones
that fit it, and published values also in the line their scanner published them in:

* `env_file`      a `.env` / `.env.production` printed by `cat` or the Read tool (quoted,
                  `export`-ed, spaced, commented variants);
* `shell`         a Bash command that sets it (`export`, `VAR=… cmd`, `docker run -e`,
                  `gh secret set --body`, `fly secrets set`, `kubectl create secret`);
* `yaml`          docker-compose `environment:`, a Kubernetes env `name`/`value` pair or Secret
                  `stringData`, a Helm values file, an application config;
* `json`          `config.json`, `appsettings.json`, a VS Code settings file, docker's
                  `config.json` auth;
* `ini_toml`      TOML / INI sections, `.npmrc`, `.pypirc`, `.netrc`, `~/.aws/credentials`,
                  `git credential fill` output;
* `curl`          curl / wget / httpie with the vendor's header, `-u`, query string or body;
* `code`          a source file (Python, JavaScript, TypeScript, Go, Java, Ruby, PHP, Rust,
                  C#, Kotlin, shell) read by the agent;
* `prompt`        pasted by the user, in varied wording (English, German, French, Spanish,
                  bare paste, "use this", after a colon, in parentheses);
* `bare_output`   alone in a tool result (`gh auth token`, `op read`, `cat ~/.ssh/id_…`) —
                  only for self-identifying values and keys;
* `log`           a stack trace or log line that shows it (request headers, URL, config dump);
* `git_diff`      a `git diff` / `git show` hunk adding it;
* `assistant`     the assistant repeating it in its reply;
* `db_cli`        passwords on `psql` / `mysql` / `redis-cli` / `mongosh` / `sqlcmd` /
                  `docker login` / `ldapsearch` / `sshpass` / `smbclient` command lines;
* `url`           passwords and tokens in connection strings and git remotes;
* `published`     the scanner's own test line, in the file it was published in.

`placements(seed) -> list[Placement]`; `needles(placement)` are the strings that must not
survive (raw and JSON-escaped); `write_sessions` (field_corpus) writes them as sessions.
"""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass
from functools import cache
from urllib.parse import quote

from field_corpus import Gen
from heldout_contexts import MAKERS, Blocks
from heldout_values import Value, secret_part, values

PER_VALUE = 5
CONTEXTS = ("env_file", "shell", "yaml", "json", "ini_toml", "curl", "code", "prompt",
            "bare_output", "log", "git_diff", "assistant", "db_cli", "url", "published")  # fmt: skip


@dataclass(frozen=True, slots=True)
class Placement:
    value: Value
    context: str
    variant: str  # which template of the context
    blocks: tuple[tuple[str, object], ...]


def applicable(v: Value) -> list[str]:
    """The contexts `v` can realistically appear in (published is added separately)."""
    if v.kind in ("gcp_service_account", "jwk_private"):
        return ["json", "prompt", "bare_output"]
    if v.family == "key":
        return ["env_file", "yaml", "code", "prompt", "bare_output", "git_diff"]
    if v.kind == "docker_config_auth":
        return ["json"]
    if v.kind == "azure_sas_signature" or v.kind.endswith("webhook_url"):
        return ["env_file", "yaml", "code", "prompt", "curl", "bare_output"]
    common = ["env_file", "shell", "yaml", "json", "ini_toml", "curl", "code", "prompt", "log",
              "git_diff", "assistant"]  # fmt: skip
    if v.family == "password":
        return common + ["db_cli", "url", "db_cli", "url"]
    out = common + ["url"] if v.auth in ("user", "basic_user") else list(common)
    if v.self_identifying:
        out += ["bare_output", "prompt"]
    return out


def needles(p: Placement) -> list[str]:
    """Strings that must not survive: each secret part, raw, JSON-escaped and URL-encoded."""
    out: list[str] = []
    parts = secret_part(p.value)
    if p.value.kind.endswith("webhook_url"):
        parts = [p.value.value.rstrip("/").rsplit("/", 1)[-1]]
    elif p.value.kind == "azure_sas_signature":
        parts = [p.value.value.rsplit("sig=", 1)[-1]]
    for part in parts:
        for form in (part, json.dumps(part, ensure_ascii=False)[1:-1], quote(part, safe="")):
            if form not in out:
                out.append(form)
    return out


def _strings(obj: object) -> list[str]:
    if isinstance(obj, str):
        return [obj]
    if isinstance(obj, dict):
        return [s for x in obj.values() for s in _strings(x)]
    return []


def _sentinel_safe(blocks: Blocks, v: Value) -> bool:
    """The template around the value does not itself contain a needle (short passwords)."""
    text = "\n".join(s for b in blocks for s in _strings(b[1]))
    for form in (v.value, quote(v.value, safe=""), v.value.replace("\n", "\\n")):
        text = text.replace(form, "\x00")
    return not any(part in text for part in secret_part(v) if part)


@cache
def placements(seed: int = 43, values_seed: int = 41) -> tuple[Placement, ...]:
    """Every value in `PER_VALUE` fitting contexts (published values also in their own line)."""
    g = Gen(seed)
    out: list[Placement] = []
    for v in values(values_seed):
        pool = applicable(v)
        chosen: list[str] = []
        while len(chosen) < min(PER_VALUE, len(set(pool))):
            c = g.r.choice(pool)
            if c not in chosen:
                chosen.append(c)
        if v.line is not None:
            chosen.append("published")
        for ctx in chosen:
            for _ in range(5):
                variant, blocks = MAKERS[ctx](v, g)
                if _sentinel_safe(blocks, v):
                    break
            else:
                continue
            out.append(Placement(v, ctx, variant, tuple(blocks)))
    return tuple(out)


def block_texts(p: Placement) -> list[str]:
    """The texts funes indexes for a placement's blocks (tool inputs as compact JSON)."""
    out = []
    for _, payload in p.blocks:
        if isinstance(payload, str):
            out.append(payload)
        else:
            out.append(json.dumps(payload["input"], ensure_ascii=False, separators=(",", ":")))  # type: ignore[index]
    return out


def leaked(p: Placement, text: str) -> bool:
    """Some secret part of `p` (in any of its encodings) is in `text`."""
    return any(n in text for n in needles(p))


def docker_auth_password(v: Value) -> str:
    """The password inside a docker `auth` value (user:password, base64)."""
    return base64.b64decode(v.value).decode().split(":", 1)[1]
