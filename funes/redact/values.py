"""Is this a secret value, and is this a secret-bearing name? The heuristics behind the rules.

Pure string functions, no state. A *value* is the text a rule would replace; a *name* is the
key it is assigned to (`DB_PASSWORD`, `"api_key"`, `--token`). Placeholders (`${API_KEY}`,
`YOUR_KEY_HERE`, `<token>`, `xxx`, `OPENAI_API_KEY` used as a value, our own
`[REDACTED:…]`) and code references (`os.environ["X"]`, `get_token()`, `self.token`) are not
secrets; every rule asks `is_placeholder` before reporting a finding.
"""

from __future__ import annotations

import math
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
# `<qualifier>_key` names that are not credentials: database, cache and data-structure keys,
# public or publishable keys, key metadata. Any other `<qualifier>_key` (MAILGUN_KEY,
# COSMOS_KEY, artifactoryKey) is a KEY-family name: a credential when its value looks minted.
_NOT_SECRET_KEY_QUALIFIERS = frozenset(
    ("primary", "foreign", "sort", "partition", "hash", "range", "cache", "public",
     "publishable", "anon", "object", "idempotency", "dedup", "dedupe", "lookup", "map", "index",
     "unique", "composite", "natural", "surrogate", "routing", "shard", "lock", "row", "column",
     "group", "dict", "translation", "i18n", "message", "label", "field", "attr", "attribute",
     "property", "prop", "name", "type", "kind", "path", "file", "prefix", "suffix", "length",
     "size", "max", "min", "default", "sequence", "order", "parent", "child", "list", "item",
     "entry", "record", "event", "metric", "tag", "config", "setting", "settings", "option",
     "options", "query", "search", "site", "gpg", "pgp", "fingerprint", "hot", "shortcut",
     "keyboard", "react", "redis", "storage_account", "meta", "metadata", "json", "yaml",
     "sort_order", "bucket", "s3_object", "registry", "cursor", "page", "next", "start", "end")
)  # fmt: skip
# `<qualifier>_auth` names whose value is a credential (BASIC_AUTH, proxy_auth, npm _auth).
_AUTH_QUALIFIERS = frozenset(
    ("basic", "http", "proxy", "bearer", "api", "client", "service", "registry", "docker", "npm",
     "git", "github", "gitlab", "bot", "app", "webhook", "header", "smtp", "db", "database")
)  # fmt: skip
# Trailing segments that qualify a secret name without changing what it holds:
# API_KEY_PROD, DB_PASSWORD_2, MJ_APIKEY_PRIVATE, SECRET_KEY_BASE, TOKEN_B64.
_MODIFIERS = frozenset(
    ("private", "prod", "production", "dev", "development", "stage", "staging", "test", "testing",
     "qa", "uat", "live", "sandbox", "new", "old", "current", "prev", "previous", "secondary",
     "backup", "base", "raw", "plain", "plaintext", "value", "b64", "base64", "hex", "encoded",
     "str", "string", "override", "local", "main", "ro", "rw", "read", "write", "readonly",
     "admin", "root", "v1", "v2", "v3", "v4")
)  # fmt: skip
_SEGMENT = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")


class Family(StrEnum):
    """What kind of secret a name announces (decides which values count)."""

    PASSWORD = (
        "password"  # pragma: allowlist secret -- people pick these: any value counts, even short
    )
    TOKEN = "token"  # machines mint these: long and mixed
    KEY = "key"  # an ambiguous `*_key` / `key` name: only a minted-looking value counts


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
    if len(segs) >= 2 and (segs[-1] in _MODIFIERS or segs[-1].isdigit()):
        trimmed = _without_modifiers(segs)
        if trimmed and trimmed != segs:
            return secret_name("_".join(trimmed))
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
        if len(segs) >= 2 and (segs[-2] in _NOT_SECRET_KEY_QUALIFIERS or "public" in segs):
            return None
        return Family.KEY
    if last == "auth":
        if len(segs) == 1 or segs[-2] in _AUTH_QUALIFIERS:
            return Family.TOKEN  # docker config.json "auth", BASIC_AUTH, proxy_auth
        return Family.KEY
    return None


def _without_modifiers(segs: list[str]) -> list[str]:
    """`[api, key, prod]` → `[api, key]`: trailing modifier segments dropped."""
    out = list(segs)
    while len(out) >= 2 and (out[-1] in _MODIFIERS or out[-1].isdigit()):
        out.pop()
    return out


_PLACEHOLDER_WORDS = frozenset(
    (
        "none", "null", "nil", "true", "false", "undefined", "empty", "password", "passwd",
        "secret", "token", "string", "str", "value", "key", "pass", "required", "optional",
        "n/a", "na", "tbd", "todo", "changeme", "change_me", "dummy", "test", "fake", "hidden",
        "masked", "redacted", "placeholder", "notset", "unset", "default", "...", "…",
        "secretkey", "apikey", "mytoken", "mysecret", "mypassword", "foo", "bar", "baz", "xyz",
        "abc", "foobar",
    )
)  # fmt: skip
_PLACEHOLDER_PARTS = ("example", "placeholder", "redacted", "xxxx", "change_me", "changeme",
                      "replace_me", "replaceme", "insert_", "dummy", "<", ">", "..")  # fmt: skip
_FILLER = re.compile(r"[xX*#._\-•0]+")
_TEMPLATE = re.compile(r"\{\{?[^{}]*\}\}?")
_SELECTOR = re.compile(r"#[a-z]+(?:-[a-z]+)+")
_URL_ESCAPE = re.compile(r"%[0-9A-Fa-f]{2}")
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
    if len(v) > 2 and v[0] in "'\"" and v[-1] == v[0]:
        v = v[1:-1]  # a value quoted twice: "'$X'"
    if not v:
        return True
    first = v[0]
    if first in "$<[*(" or v.startswith(("&lt;", "&#", "arn:")):
        return True  # a variable, a tag, an HTML-escaped <x>, an AWS ARN
    if first == "#" and _SELECTOR.fullmatch(v):
        return True  # #add-password: an anchor or CSS id

    if first == "{":
        return _TEMPLATE.fullmatch(v) is not None  # `{{ vault_pw }}`, `{DB_PASSWORD}`
    if first == "%":
        return _URL_ESCAPE.match(v) is None  # `%(password)s`, `%DB_PASS%`; not `%40abc`
    if first == "`":
        return len(v) > 1 and v.endswith("`")  # `cat ~/.token`; not a password starting with `
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


# Keys vendors publish by design (Stripe and Clerk publishable keys, PostHog project keys,
# Mapbox public tokens): never secrets, whatever surrounds them.
_PUBLIC_PREFIXES = ("pk_live_", "pk_test_", "pk.eyJ", "phc_", "pub_", "sb_publishable_")


def is_public(value: str) -> bool:
    """`value` is a key its vendor publishes by design (`pk_live_…`, `phc_…`)."""
    return value.startswith(_PUBLIC_PREFIXES)


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


_MINTED_CHARS = re.compile(r"[A-Za-z0-9+/=_\-.~:!@#$%^&*()]+")
_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
_PATHLIKE = re.compile(r"(?:[\w\-]+/)+[\w\-.]*\.[a-z0-9]{1,5}|(?:[a-z][a-z\-]*/){2,}[\w\-.]*")
_PARTS = re.compile(r"[:/._\-]+")
_HOST_PATH = re.compile(r"[A-Za-z0-9\-]+(?:\.[A-Za-z0-9\-]+)*\.[a-z]{2,6}/")


def entropy(value: str) -> float:
    """Shannon entropy of `value`'s characters, in bits per character."""
    counts: dict[str, int] = {}
    for ch in value:
        counts[ch] = counts.get(ch, 0) + 1
    n = len(value)
    return -sum(c / n * math.log2(c / n) for c in counts.values()) if n else 0.0


def minted(value: str, *, min_len: int = 16, allow_uuid: bool = True) -> bool:
    """`value` looks generated by a machine, not written by a person or a program: one run of
    token characters, long enough, letters mixed with digits (or both cases over 24+), at
    least 3 bits of entropy per character; not a path, URL, dotted or snake_case identifier,
    number, or (unless `allow_uuid`) a UUID. Hex digests count (a name decides first)."""
    if len(value) < min_len or len(value) > 1024 or not _MINTED_CHARS.fullmatch(value):
        return False
    if _UUID.fullmatch(value):
        return allow_uuid
    if "://" in value or value.startswith(("/", "./", "~/", "../")) or _PATHLIKE.fullmatch(value):
        return False
    if _HOST_PATH.match(value):
        return False  # bucket.s3.amazonaws.com/key: a host and a path
    letters = sum(c.isalpha() for c in value)
    digits = sum(c.isdigit() for c in value)
    has_upper = any(c.isupper() for c in value)
    has_lower = any(c.islower() for c in value)
    if letters < 2:
        return False
    parts = [p for p in _PARTS.split(value) if p]
    if sum(p.isalpha() and p.islower() and len(p) >= 3 for p in parts) >= 2 and all(
        (p.isalpha() and p.islower()) or p.isdigit() for p in parts
    ):
        return False  # user:1234:profile, db-0.sql.gz: words and numbers, not minted
    if digits == 0 and not (has_upper and has_lower and len(value) >= 24):
        return False
    if is_code_reference(value) and word_like(value) >= 0.7:
        return False  # getUserById2, X509_VERIFY_PARAM_set1_name: words, not noise
    return entropy(value) >= 3.0


def word_like(value: str) -> float:
    """Share of `value`'s letters in camelCase/snake_case segments of 3+ letters holding a
    vowel: identifiers are made of words (~0.8–1.0), minted strings of noise (~0.2–0.5)."""
    segs = [x for x in _SEGMENT.findall(value) if x.isalpha()]
    total = sum(len(x) for x in segs)
    wordy = sum(len(x) for x in segs if len(x) >= 3 and any(c in "aeiouAEIOU" for c in x))
    return wordy / total if total else 0.0


def strong_enough(value: str, family: Family) -> bool:
    """Could `value` be a secret of `family`? Passwords: anything; tokens: ≥ 8 and mixed;
    KEY-family names: only a minted-looking value."""
    if family is Family.PASSWORD:
        return True
    if family is Family.KEY:
        return minted(value)
    if len(value) >= 20:
        return True
    return len(value) >= 8 and char_classes(value) >= 2
