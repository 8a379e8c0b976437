"""Is this a secret value, and is this a secret-bearing name? The heuristics behind the rules.

Pure string functions, no state. A *value* is the text a rule would replace; a *name* is the
key it is assigned to (`DB_PASSWORD`, `"api_key"`, `--token`). Placeholders (`${API_KEY}`,
`YOUR_KEY_HERE`, `<token>`, `xxx`, `OPENAI_API_KEY` used as a value, our own
`[REDACTED:…]`) and code references (`os.environ["X"]`, `get_token()`, `self.token`) are not
secrets; every rule asks `is_placeholder` before reporting a finding.
"""

from __future__ import annotations

import re
from enum import StrEnum

# Name tails (after lower-casing and dropping every non-alphanumeric character).
_PASSWORD_TAILS = ("password", "passwd", "passphrase", "passcode")
_QUALIFIED_PASSWORD_TAILS = ("pass", "pwd", "pw")  # only as a separate segment: DB_PASS, MYSQL_PWD
_KEY_QUALIFIERS = (
    "api", "access", "secret", "private", "auth", "encryption", "signing", "master", "license",
    "app", "client", "service", "account", "subscription", "webhook", "hmac", "shared", "session",
    "storage", "admin", "deploy", "bot", "sas", "consumer",
)  # fmt: skip
_NOT_SECRET_TAILS = (
    "padtoken", "eostoken", "bostoken", "unktoken", "septoken", "clstoken", "masktoken",
    "pagetoken", "nexttoken", "continuationtoken", "cancellationtoken", "synctoken",
    "resumetoken", "starttoken", "endtoken", "stoptoken", "specialtoken", "maxtoken",
    "publickey", "publishablekey", "accesskeyid", "credentialsprovider", "credentialsfile",
    "credentialspath", "credentialid", "credentialsid",
)  # fmt: skip
# Credential-like name tails: a last segment, or the end of the flattened name.
_CREDENTIAL_TAILS = ("pat", "credential", "credentials", "creds", "cred")
_CREDENTIAL_FLAT_TAILS = (
    "authkey",
    "accesskey",
    "secretkey",
    "apitoken",
    "privatekey",
    "signingkey",
)
_SEGMENT = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")


class Family(StrEnum):
    """What kind of secret a name announces (decides how short a value may be)."""

    PASSWORD = (
        "password"  # pragma: allowlist secret -- people pick these: any value counts, even short
    )
    TOKEN = "token"  # machines mint these: long and mixed


def _segments(name: str) -> list[str]:
    """`DB_PASSWORD` → [db, password]; `apiKey` → [api, key]; `x-api-key` → [x, api, key]."""
    return [s.lower() for s in _SEGMENT.findall(name)]


def secret_name(name: str) -> Family | None:
    """The family of secret `name` announces, or None when it is not a secret-bearing name.

    `DB_PASSWORD`, `PGPASSWORD`, `api_key`, `apiKey`, `GITHUB_TOKEN`, `client_secret`,
    `aws_secret_access_key`, `x-api-key`, `MYSQL_PWD`, `GITHUB_PAT`, `TS_AUTHKEY`, `credentials`
    are; `PWD`, `max_tokens`, `public_key`,
    `primary_key`, `api_key_env`, `token_type`, `eos_token` are not.
    """
    flat = re.sub(r"[^a-z0-9]", "", name.lower())
    if not flat or flat.endswith(_NOT_SECRET_TAILS):
        return None
    if flat.endswith(_PASSWORD_TAILS):
        return Family.PASSWORD
    segs = _segments(name)
    if not segs:
        return None
    last = segs[-1]
    if last in _QUALIFIED_PASSWORD_TAILS:
        return Family.PASSWORD if len(segs) >= 2 else None
    if last in ("secret", "token") or flat.endswith(("secret", "token")):
        return Family.TOKEN
    if last in _CREDENTIAL_TAILS or flat.endswith(_CREDENTIAL_FLAT_TAILS):
        return Family.TOKEN  # GITHUB_PAT, TS_AUTHKEY, AZURE_ACCESSKEY, credentials
    if last in ("key", "apikey") or flat.endswith("apikey"):
        if flat.endswith("apikey"):
            return Family.TOKEN
        if len(segs) >= 2 and segs[-2] in _KEY_QUALIFIERS:
            return Family.TOKEN
        return None
    if last == "auth" and len(segs) == 1:
        return Family.TOKEN  # docker config.json: "auth": "<base64 user:pass>"
    return None


_PLACEHOLDER_WORDS = frozenset(
    (
        "none", "null", "nil", "true", "false", "undefined", "empty", "password", "passwd",
        "secret", "token", "string", "str", "value", "key", "pass", "required", "optional",
        "n/a", "na", "tbd", "todo", "changeme", "change_me", "dummy", "test", "fake", "hidden",
        "masked", "redacted", "placeholder", "notset", "unset", "default", "...", "…",
        "secretkey", "apikey", "mytoken", "mysecret", "mypassword", "foo", "bar", "baz",
    )
)  # fmt: skip
_PLACEHOLDER_PARTS = ("example", "placeholder", "redacted", "xxxx", "change_me", "changeme",
                      "replace_me", "replaceme", "insert_", "dummy", "<", ">", "..")  # fmt: skip
_FILLER = re.compile(r"[xX*#._\-•0]+")
_ENV_NAME = re.compile(r"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+")
_REFERENCE_PREFIXES = (
    "process.env", "os.environ", "os.getenv", "getenv", "env.", "env[", "env(", "environ[",
    "secrets.", "settings.", "config.", "vault:", "self.", "this.", "request.", "req.", "args.",
    "opts.", "options.", "params.", "ctx.", "context.", "keyring", "input(", "getpass",
)  # fmt: skip
_CODE = re.compile(
    r"[A-Za-z_][A-Za-z0-9_]*(?:(?:\.|->|::)[A-Za-z_][A-Za-z0-9_]*)*(?:\(.*|\[.*|\{.*)?", re.S
)


def is_placeholder(value: str) -> bool:
    """True for values that stand for a secret without being one (see module docstring)."""
    v = value.strip()
    if not v:
        return True
    if v[0] in "$%{<[*(`":
        return True
    low = v.lower()
    if low in _PLACEHOLDER_WORDS or _FILLER.fullmatch(v) or len(set(low)) == 1:
        return True  # a word that stands for the value, a filler run (`****`, `yyy`)
    if any(part in low for part in _PLACEHOLDER_PARTS):
        return True
    if low.startswith("your") or low.endswith("here"):
        return True  # YOUR_KEY_HERE, your-api-key, <paste token here>
    if _ENV_NAME.fullmatch(v):
        return True  # a variable's name used as the value: "…_env": "OPENAI_API_KEY"
    return low.startswith(_REFERENCE_PREFIXES)


def is_code_reference(value: str) -> bool:
    """An identifier, attribute path, call or subscript (`pw`, `self.token`, `get_token()`)."""
    return _CODE.fullmatch(value) is not None


def has_random_part(value: str) -> bool:
    """Some dot/underscore/hyphen-separated part of `value` is minted, not written: 12+
    characters with letters and at least two separate runs of digits (`hvs.CAESIJ…`, the
    segments of `a.b.c` bot tokens), which identifiers (`x509Certificate`, `sha256Digest`,
    `aws_ec2_client`) do not have."""
    for part in re.split(r"[._\-~]", value):
        if (
            len(part) >= 12
            and any(c.isalpha() for c in part)
            and len(re.findall(r"[0-9]+", part)) >= 2
        ):
            return True
    return False


def char_classes(value: str) -> int:
    """How many of lower, upper, digit, other characters `value` uses (0–4)."""
    lower = upper = digit = other = 0
    for ch in value:
        if ch.islower():
            lower = 1
        elif ch.isupper():
            upper = 1
        elif ch.isdigit():
            digit = 1
        else:
            other = 1
    return lower + upper + digit + other


def looks_random(value: str, *, min_len: int = 16) -> bool:
    """Long enough and mixed (letters and digits, or both cases): a minted token, not a word."""
    if len(value) < min_len or len(set(value)) < min(10, len(value) // 2):
        return False
    has_digit = any(c.isdigit() for c in value)
    has_upper = any(c.isupper() for c in value)
    has_lower = any(c.islower() for c in value)
    return (has_digit and (has_upper or has_lower)) or (has_upper and has_lower)


def strong_enough(value: str, family: Family) -> bool:
    """Could `value` be a secret of `family`? Passwords: anything; tokens: ≥ 8 and mixed."""
    if family is Family.PASSWORD:
        return True
    if len(value) >= 20:
        return True
    return len(value) >= 8 and char_classes(value) >= 2
