"""Secrets in the structures credentials are stored in, whatever their name's position.

* `netrc_password`: `.netrc` / `_netrc` stanzas (`machine H login U password P`, one line or
  several), which have no `=` or `:` for an assignment rule to see;
* `secret_assignment` (XML): attribute pairs that name a secret (`<add key="SmtpPassword"
  value="…"/>`, `<param name="apiKey" value="…"/>`) and elements named after one
  (`<password>…</password>`, `<secret>…</secret>`, Maven/Jenkins/.NET configs);
* `secret_assignment` (calls): a call whose first argument is a quoted secret-bearing name and
  whose second is a quoted literal — PHP `define('DB_PASSWORD', '…')`, `os.environ.setdefault(
  "API_KEY", "…")`, `props.put("db.password", "…")`, `config.set('token', '…')`;
* `credential_pair` (constructors): credential objects built from literals — .NET
  `NetworkCredential("user", "…")`, `DirectoryEntry(path, "user", "…")`, Java
  `PasswordAuthentication("user", "…".toCharArray())`, `UsernamePasswordCredentials(…)`,
  Python `HTTPBasicAuth("user", "…")`: the last string literal is the password;
* `private_key` (JWK): the private members of a JSON Web Key (`d`, `p`, `q`, `dp`, `dq`,
  `qi`; `k` of a symmetric key), recognised by a `"kty"` member in the same object.

Each rule is anchored on a literal (funes.redact.rules) and rejects placeholders.
"""

from __future__ import annotations

import re

from funes.redact.rules import Rule, Span, rule
from funes.redact.values import Family, is_placeholder, secret_name, strong_enough

# -- .netrc --------------------------------------------------------------------------------------

_NETRC = (
    r"(?:machine[ \t]+[^\s]+|default)(?:\s+(?:login|account)[ \t]+[^\s]+)*"
    r"\s+password[ \t]+(?P<v>[^\s]+)"
)


def _netrc(text: str, m: re.Match[str]) -> Span | None:
    start, end = m.span("v")
    value = text[start:end]
    if is_placeholder(value) or value.startswith(("$", "%")):
        return None
    return start, end


# -- XML -----------------------------------------------------------------------------------------

_XML_ATTRS = (
    r"(?:key|name)[ \t]*=[ \t]*\"(?P<n>[^\"\n]{1,80})\"[ \t]+"
    r"value[ \t]*=[ \t]*\"(?P<v>[^\"\n]{1,512})\""
)
_XML_ELEMENT = r"<(?P<n>[A-Za-z][\w.\-]{0,60})>(?P<v>[^<>\n]{3,512})</(?P=n)>"


def _xml(text: str, m: re.Match[str]) -> Span | None:
    family = secret_name(m.group("n"))
    if family is None:
        return None
    start, end = m.span("v")
    value = text[start:end].strip()
    start = text.index(value, start) if value else start
    end = start + len(value)
    if not value or is_placeholder(value) or not strong_enough(value, family):
        return None
    if value.startswith(("{", "${", "#{")):
        return None  # Jenkins/Maven `{AQAAABAA…}` encrypted or `${env.X}` reference
    return start, end


# -- calls ---------------------------------------------------------------------------------------

_QUOTED_LITERAL = r"(?P<q2>[\"'])(?P<v>(?:(?!(?P=q2))[^\n\\]|\\.){1,512})(?P=q2)"
_CALL_PAIR = (
    r"\([ \t]*(?P<q1>[\"'])(?P<n>[A-Za-z_][\w.\-]{1,80})(?P=q1)[ \t]*,[ \t]*" + _QUOTED_LITERAL
)


def _call_pair(text: str, m: re.Match[str]) -> Span | None:
    family = secret_name(m.group("n"))
    if family is None:
        return None
    start, end = m.span("v")
    value = text[start:end]
    if is_placeholder(value) or not strong_enough(value, family):
        return None
    return start, end


_CONSTRUCTOR = (
    r"(?:Credentials?|Authentication|Auth|DirectoryEntry|LoginInfo)[ \t]*"
    r"\((?P<args>[^()]{0,400})\)"
)
_STRING = re.compile(r"[\"'](?P<s>(?:[^\"'\\\n]|\\.){1,256})[\"']")


def _constructor(text: str, m: re.Match[str]) -> Span | None:
    strings = list(_STRING.finditer(text, m.start("args"), m.end("args")))
    if len(strings) < 2:
        return None  # one literal is a user, a path or a name, not a pair
    last = strings[-1]
    start, end = last.span("s")
    value = text[start:end]
    if is_placeholder(value) or not strong_enough(value, Family.PASSWORD) or len(value) < 3:
        return None
    return start, end


# -- JSON Web Keys -------------------------------------------------------------------------------

_JWK_MEMBER = r"\"(?:d|p|q|dp|dq|qi|k)\"[ \t]*:[ \t]*\"(?P<v>[A-Za-z0-9_\-]{16,})\""


def _jwk(text: str, m: re.Match[str]) -> Span | None:
    open_ = text.rfind("{", 0, m.start())
    close = text.find("}", m.end())
    obj = text[open_ + 1 : close if close >= 0 else len(text)]
    if open_ < 0 or '"kty"' not in obj:
        return None
    return m.span("v")


STRUCTURED_RULES: tuple[Rule, ...] = (
    rule("netrc_password", _NETRC, ["machine", "default"], _netrc),
    rule("secret_assignment", _XML_ATTRS, ["key", "name"], _xml, lower=False),
    rule("secret_assignment", _XML_ELEMENT, ["<"], _xml),
    rule("secret_assignment", _CALL_PAIR, ['("', "('", '( "', "( '"], _call_pair),
    rule(
        "credential_pair",
        _CONSTRUCTOR,
        ["Credential", "Auth", "DirectoryEntry", "LoginInfo"],
        _constructor,
    ),  # fmt: skip
    rule("private_key", _JWK_MEMBER, ['"d"', '"p"', '"q"', '"dp"', '"dq"', '"qi"', '"k"'], _jwk),
)
