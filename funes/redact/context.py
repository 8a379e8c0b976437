"""Context rules: secrets recognised by where they stand in an agent transcript, not by format.

A password or an opaque API key has no format; what gives it away is the text around it:

* `curl -u/--user user:secret` in every form curl accepts: quoted, mixed quoting, `--user=`,
  an empty user (`-u ":pw"`), an empty password (`-u token:`: the user *is* the secret), the
  flag on a `\\` continuation line, in raw shell or inside a JSON-escaped tool call;
* `Authorization:` headers of any scheme (`Bearer`, `Token`, `SSWS`, `Api-Token`…) or none;
* request headers passed with `-H/--header` whose name announces a secret (`apikey:`,
  `X-Octopus-ApiKey:`, `PRIVATE-TOKEN:`, `DD-API-KEY:`);
* Kubernetes / ECS name–value pairs (`- name: DB_PASSWORD` + `value: …`, `{"name": …,
  "value": …}`) and Dockerfile `ENV NAME value`;
* URL query parameters that carry keys (`?key=`, `&appid=`, `&access_token=`, `&sig=`).

Secrets in prose are funes.redact.prose's.

Each rule is anchored on a literal (funes.redact.rules) and rejects placeholders, variables,
code references and words (`is_placeholder`, `_prose_value`).
"""

from __future__ import annotations

import re

from funes.redact.rules import Rule, Span, rule
from funes.redact.values import (
    Family,
    is_placeholder,
    is_public,
    minted,
    secret_name,
    strong_enough,
)

# -- curl -u / --user ------------------------------------------------------------------------

# Where a shell command ends: `;`, `|`, `&&`, or a line end that is not a `\` continuation
# (raw or JSON-escaped; a quote, backtick or comma may follow the backslash, as in a test's
# string list).
_COMMAND_END = re.compile(r";|\|\||\||&&")
_LINE_END = re.compile(r"\r?\n|\\r?\\n")
_CONTINUED = re.compile(r"\\\\?[ \t`'\",]*$")
_USER_FLAG = re.compile(r"(?:^|[ \t\n`])(?:-u|--user)(?:[ \t]*=[ \t]*|[ \t]+|(?=['\"\\]))")
_QUOTES = "'\""


def _command_end(text: str, start: int, limit: int) -> int:
    """Offset where the shell command that runs on from `start` ends (at most `limit`)."""
    pos = start
    while pos < limit:
        line_end = _LINE_END.search(text, pos, limit)
        stop = line_end.start() if line_end else limit
        sep = _COMMAND_END.search(text, pos, stop)
        if sep is not None:
            return sep.start()
        if line_end is None or not _CONTINUED.search(text, max(pos, stop - 8), stop):
            return stop
        pos = line_end.end()
    return limit


def _argument(text: str, i: int) -> tuple[list[tuple[str, int]], int]:
    """The shell word starting at `i`: its characters with their offsets (quotes removed)."""
    chars: list[tuple[str, int]] = []
    n = len(text)
    while i < n:
        c = text[i]
        if c in " \t\n" or (c == "\\" and text[i + 1 : i + 2] in ("n", "\n", "\\")):
            if c == "\\" and text[i + 1 : i + 2] == '"':
                pass
            else:
                break
        if c == "\\" and text[i + 1 : i + 2] == '"':  # a JSON-escaped double quote
            j = text.find('\\"', i + 2)
            if j < 0:
                break
            chars.extend((text[k], k) for k in range(i + 2, j))
            i = j + 2
            continue
        if c in _QUOTES:
            j = text.find(c, i + 1)
            if j < 0:
                break
            chars.extend((text[k], k) for k in range(i + 1, j))
            i = j + 1
            continue
        chars.append((c, i))
        i += 1
    return chars, i


def _weak_password(value: str) -> bool:
    low = value.lower()
    return (
        is_placeholder(value)
        or low in ("pass", "password", "pwd", "test", "token", "changeit", "changeme", "secret")
        or value.startswith(("$", "{", "%"))
        or len(value) < 3
    )


def _curl_user(text: str, m: re.Match[str]) -> Span | None:
    """The secret of the first `-u/--user` argument of the curl command at `m`."""
    start = m.end()
    end = _command_end(text, start, min(len(text), start + 2000))
    flag = _USER_FLAG.search(text, start, end)
    if flag is None:
        return None
    chars, _ = _argument(text, flag.end())
    word = "".join(c for c, _ in chars)
    if ":" not in word:
        return None
    colon = word.index(":")
    user, password = word[:colon], word[colon + 1 :]
    if password:
        if _weak_password(password) or _weak_password(user) and user.startswith("$"):
            return None
        first, last = chars[colon + 1][1], chars[-1][1]
        return first, last + 1
    if len(user) >= 8 and not _weak_password(user) and strong_enough(user, Family.TOKEN):
        return chars[0][1], chars[colon - 1][1] + 1  # `-u sk_live_…:`: the user is the key
    return None


# -- headers ---------------------------------------------------------------------------------

_HEADER_VALUE = r"(?P<v>[A-Za-z0-9._~+/=\-:@!#%^*]{8,})"
_AUTHORIZATION = re.compile(
    r"authorization\\?[\"']?[ \t]*[:=][ \t]*\\?[\"']?[ \t]*"
    r"(?:(?P<scheme>[a-z][a-z0-9_\-]{1,20})[ \t]+)?" + _HEADER_VALUE.replace("A-Za-z", "a-z"),
)


def _authorization(text: str, m: re.Match[str]) -> Span | None:
    start, end = m.span("v")
    value = text[start:end]
    if is_placeholder(value) or value.startswith("$") or not strong_enough(value, Family.TOKEN):
        return None
    if value.lower().startswith(("basic", "bearer", "token")) and m.group("scheme") is None:
        return None  # `Authorization: Bearer` with the value elsewhere
    return start, end


def _header_flag(text: str, m: re.Match[str]) -> Span | None:
    """`-H "Name: value"` where Name announces a secret (Authorization has its own rule)."""
    name = text[m.start("n") : m.end("n")]
    if name.lower() == "authorization" or secret_name(name) is None:
        return None
    start, end = m.span("v")
    value = text[start:end]
    if is_placeholder(value) or value.startswith("$") or not strong_enough(value, Family.TOKEN):
        return None
    return start, end


_X_HEADER = (
    r"(?P<n>x-[a-z0-9\-]{1,40})\\?[\"']?[ \t]*:[ \t]*\\?[\"']?[ \t]*"
    + _HEADER_VALUE.replace("A-Za-z", "a-z")
)


def _x_header(text: str, m: re.Match[str]) -> Span | None:
    """`X-Auth-Key: …`, `"X-Api-Key":"…"`, `'X-Vault-Token:…'` anywhere (httpie, logs, JSON
    header maps): an `X-` header whose name announces a secret."""
    return _header_flag(text, m)


# -- name/value pairs, Dockerfile ENV, query parameters --------------------------------------

_V = r"""(?:\\?["'](?P<vq>[^"'\\\r\n]+)\\?["']|(?P<vb>[^\s"'\\,}]+))"""


def _named_value(text: str, m: re.Match[str]) -> Span | None:
    name = m.group("n")
    family = secret_name(name)
    if family is None:
        return None
    group = "vq" if m.group("vq") is not None else "vb"
    start, end = m.span(group)
    value = text[start:end]
    if is_placeholder(value) or not strong_enough(value, family):
        return None
    return start, end


_QUERY_NAMES = frozenset(
    ("key", "api_key", "apikey", "appid", "app_id", "access_token", "token", "auth", "auth_token",
     "secret", "client_secret", "password", "pass", "pwd", "sig", "signature", "private_token",
     "x-amz-signature", "x-goog-signature", "code_verifier", "refresh_token", "id_token",
     "code")
)  # fmt: skip


def _query(text: str, m: re.Match[str]) -> Span | None:
    if m.group("n").lower() not in _QUERY_NAMES:
        return None
    start, end = m.span("v")
    value = text[start:end]
    if is_placeholder(value) or value.startswith("$") or not strong_enough(value, Family.TOKEN):
        return None
    return start, end


def _env_line(text: str, m: re.Match[str]) -> Span | None:
    """`NAME=value` / `NAME: value` on its own line with an upper-case secret NAME: the value
    is the rest of the line, whatever it holds (`.env`, YAML config maps, `printenv`)."""
    name = m.group("n")
    family = secret_name(name)
    if family is None and _ID_NAME.search(name):
        return None  # BUILD_SHA, IMAGE_DIGEST, REQUEST_ID: identifiers, not credentials
    if name.islower() and family is not None:
        return None  # `db_password=…` lower-case: the assignment rules judge it
    start, end = m.span("v")
    while end > start and text[end - 1] in " \t\r":
        end -= 1
    value = text[start:end]
    if len(value) > 1 and value[0] in "\"'" and value[-1] == value[0]:
        start, end, value = start + 1, end - 1, value[1:-1]
    if is_placeholder(value) or value.startswith(("$", "!", "&", "*", "|", ">")):
        return None
    if family is None:
        return (start, end) if _noise(value) else None  # mimi=gX69YO4CvBsV…: minted, any name
    if family is not Family.PASSWORD and not strong_enough(value, family):
        return None
    return (start, end) if end > start else None


_ID_NAME = re.compile(
    r"(?:^|_)(?:ID|IDS|SHA\d*|HASH|DIGEST|CHECKSUM|COMMIT|REV|REVISION|VERSION|TAG|REF|"
    r"BRANCH|IMAGE|BUILD|RUN|UUID|GUID|NONCE|SALT|IV|INTEGRITY|ETAG|FINGERPRINT|PATH|DIR|"
    r"FILE|URL|URI|HOST|NAME|REGION|ZONE|ARN|DSN|PUBLIC|PUBLISHABLE)(?:_|$)",
    re.I,
)


def _noise(value: str) -> bool:
    """A value no one writes: minted, with upper, lower and digits, not hex, not a UUID."""
    return (
        not is_public(value)
        and minted(value, min_len=20, allow_uuid=False)
        and any(c.isupper() for c in value)
        and any(c.islower() for c in value)
        and any(c.isdigit() for c in value)
        and re.fullmatch(r"[0-9a-fA-F\-]+", value) is None
    )


CONTEXT_RULES: tuple[Rule, ...] = (
    rule(
        "secret_assignment",
        r"(?:\n|^)[ \t]*(?:export[ \t]+)?(?P<n>[A-Z][A-Z0-9_]*_[A-Z0-9_]+|[A-Z]{4,}|[a-z][a-z0-9_]{1,40}(?==))[ \t]*[=:][ \t]*(?P<v>[^\s][^\r\n]*)",
        ["\n"],
        _env_line,
    ),
    rule("curl_password", r"curl\b", ["curl"], _curl_user, lower=True),
    rule("auth_header", _AUTHORIZATION.pattern, ["authorization"], _authorization, lower=True),
    rule(
        "api_key_header",
        r"-(?:h|-header)(?:[ \t]+|=)\\?[\"']?(?P<n>[a-z0-9_\-]{2,40})[ \t]*:[ \t]*" + _HEADER_VALUE.replace("A-Za-z", "a-z"),  # noqa: E501
        ["-h", "--header"],
        _header_flag,
        lower=True,
    ),
    rule("api_key_header", _X_HEADER, ["x-"], _x_header, lower=True),
    rule(
        "secret_assignment",
        r"name\\?[\"']?[ \t]*:[ \t]*\\?[\"']?(?P<n>[a-z_][a-z0-9_.\-]{1,80})\\?[\"']?[ \t]*"
        r"(?:,[ \t]*|\r?\n[ \t]*|\\n[ \t]*)\\?[\"']?value\\?[\"']?[ \t]*:[ \t]*" + _V,
        ["name"],
        _named_value,
        lower=True,
    ),
    rule(
        "secret_assignment",
        r"ENV[ \t]+(?P<n>[A-Za-z_][A-Za-z0-9_]{1,80})[ \t]+" + _V,
        ["ENV "],
        _named_value,
    ),
    rule(
        "url_query_secret",
        r"[?&](?P<n>[a-z_\-]{2,20})=(?P<v>[^&\s\"'#\\<>]{8,512})",
        ["?", "&"],
        _query,
        lower=True,
    ),
)  # fmt: skip
