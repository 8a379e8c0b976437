"""funes' own secret rules: anchored regular expressions behind literal prefilters.

Every pattern *starts with* one of its rule's literal `anchors`: the scanner finds each anchor
with `str.find` (C speed) and tries the pattern only there (`pattern.match` at the anchor, or
up to `lookback` characters before it), so a block costs a few substring searches plus one
anchored match per anchor occurrence, never a regex pass over the whole text. Word boundaries
are checked in Python on the few matches. `lower` rules run over the ASCII-lower-cased text (same length,
same offsets) so they need no `(?i)`. A rule's `extract` turns a match into the exact span of
the secret *value* (the key, the scheme, `Bearer` stay readable) or None when the match is a
placeholder, a code reference or too weak to be a secret.

What is covered (kind names are what `[REDACTED:<kind>]` shows): private_key (PEM, also
JSON-escaped, PuTTY), aws_access_key_id, aws_secret_access_key, github_token, gitlab_token,
anthropic_key, openai_key, huggingface_token, slack_token, slack_webhook, stripe_key,
google_api_key, google_oauth, jwt, npm_token, pypi_token, sendgrid_key, digitalocean_token,
url_password, auth_header, api_key_header, cli_secret, curl_password, secret_assignment.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from funes.redact.values import (
    Family,
    has_random_part,
    is_code_reference,
    is_placeholder,
    looks_random,
    secret_name,
    strong_enough,
    word_like,
)

Span = tuple[int, int]
Extract = Callable[[str, "re.Match[str]"], "Span | None"]

_TOKEN_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
_NAME_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-")
_ASCII_LOWER = {c: c + 32 for c in range(ord("A"), ord("Z") + 1)}


@dataclass(frozen=True, slots=True)
class Rule:
    """One detector: `kind` is what the redaction marker shows."""

    kind: str
    pattern: re.Pattern[str]
    anchors: tuple[str, ...]
    extract: Extract
    lower: bool = False  # pattern and anchors apply to the ASCII-lower-cased text
    lookback: int = 0  # the match may start up to this many characters before the anchor


# A line-number gutter as agents' file viewers print it: Claude Code's Read tool (`%6d→`),
# `cat -n` / `nl` (`%6d<TAB>`). It hides a line's start from rules anchored there.
_GUTTER = re.compile(r"^[ \t]*[0-9]{1,7}(?:\u2192|\t)", re.M)


def without_gutters(text: str) -> str:
    """`text` with every line-number gutter blanked to spaces (same length, offsets valid), so
    `    12→DB_PASSWORD=…` reads as an indented `DB_PASSWORD=…` line."""
    if "\u2192" not in text and "\t" not in text:
        return text
    return _GUTTER.sub(lambda m: " " * len(m.group(0)), text)


def ascii_lower(text: str) -> str:
    """`text` with A–Z lower-cased and nothing else changed (offsets stay valid)."""
    low = text.lower()
    return low if len(low) == len(text) else text.translate(_ASCII_LOWER)


# -- extractors -------------------------------------------------------------------------------


def _bounded(text: str, start: int, end: int) -> bool:
    """The token is not glued to other token characters on either side."""
    return (start == 0 or text[start - 1] not in _TOKEN_CHARS) and (
        end == len(text) or text[end] not in _TOKEN_CHARS
    )


def token(
    min_random: int = 0,
    *,
    group: str | int = 0,
    forbid: tuple[str, ...] = (),
    group_bounds: bool = False,
) -> Extract:
    """A self-identifying token (`ghp_…`, `AKIA…`): bounded (the whole match, or with
    `group_bounds` the group: a token found mid-URL), not a placeholder, random enough."""

    def extract(text: str, m: re.Match[str]) -> Span | None:
        start, end = m.span(group)
        if not _bounded(text, *((start, end) if group_bounds else m.span())):
            return None
        value = text[start:end]
        if any(f in value for f in forbid) or is_placeholder(value):
            return None
        if min_random and not looks_random(value, min_len=min_random):
            return None
        return start, end

    return extract


def value_group(group: str = "v", *, family: Family = Family.TOKEN) -> Extract:
    """The named group is the value; drop placeholders and values too weak for `family`."""

    def extract(text: str, m: re.Match[str]) -> Span | None:
        start, end = m.span(group)
        value = text[start:end]
        if end <= start or is_placeholder(value) or not strong_enough(value, family):
            return None
        return start, end

    return extract


def _pem_body(text: str, m: re.Match[str]) -> Span | None:
    start, end = m.span("v")
    body = text[start:end]
    if is_placeholder(body.replace("\\n", "").strip()):
        return None
    stripped = re.sub(r"\\[nrt]|\s", "", body)
    if sum(c.isalnum() for c in stripped) < 16:
        return None
    return start, end


def _quoted(m: re.Match[str]) -> str | None:
    for g in ("ve", "vd", "vs"):
        if g in m.re.groupindex and m.group(g) is not None:
            return g
    return None


def _value_span(m: re.Match[str]) -> tuple[str, bool]:
    """(group holding the value, whether it was quoted)."""
    g = _quoted(m)
    return (g, True) if g is not None else ("vb", False)


def _line_context(text: str, i: int) -> str:
    """What precedes a name starting at `i`: line | shell | query | arg | word."""
    j = i
    while j > 0 and text[j - 1] in " \t":
        j -= 1
    if j == 0 or text[j - 1] in "\r\n":
        return "line"
    if j >= 2 and text[j - 2] == "\\" and text[j - 1] in "nrt":
        return "line"  # JSON-escaped newline: "cat .env" output inside a tool_use
    c = text[j - 1]
    if c in "+-" and (j == 1 or text[j - 2] in "\r\n"):
        return "line"  # a diff line: `+API_KEY=…`, `-  token: …`
    if c in "?&" and j == i:
        return "query"
    if c in "(,[{":
        return "arg"
    if c in ";|&\"'`" or text[max(0, j - 5) : j].lower() == "$env:":
        return "shell"
    if c == ":" and text[max(0, j - 5) : j].lower() == "$env:":
        return "shell"
    word_start = j
    while (
        word_start > 0 and not text[word_start - 1].isspace() and text[word_start - 1] not in "\"'"
    ):
        word_start -= 1
    word = text[word_start:j]
    if word in ("export", "set", "setx", "env", "local", "readonly", "declare", "-x", "typeset",
                "ENV", "ARG"):  # fmt: skip
        return "line" if _line_context(text, word_start) in ("line", "shell") else "word"
    return "word"


def _ends_line(text: str, end: int) -> bool:
    rest = text[end : end + 2]
    return not rest or rest[0] in "\r\n#" or rest in ("\\n", "\\r") or rest[0] == '"'


_VARIABLE_PARTS = ("pass", "pwd", "pw", "secret", "token", "key", "cred", "auth", "env", "var",
                   "conf", "setting", "param", "arg", "input", "value", "val", "str", "data",
                   "user", "self", "this", "none", "null", "true", "false", "default")  # fmt: skip
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_\-]*")
_UI_WORDS = frozenset(("enter", "your", "the", "please", "password", "confirm", "new", "current",
                       "old", "type", "here", "invalid", "required", "a", "an", "of", "is"))  # fmt: skip


def _literal_identifier(text: str, value: str, start: int, end: int) -> bool:
    """A bare word assigned to a password name is the password itself (`password = open_sesame`
    in a config file, `password=qpls` in a connection string) unless it reads as a variable:
    it names a credential or config (`db_pass`, `settings`) or the block uses it elsewhere."""
    if not _IDENTIFIER.fullmatch(value) or len(value) < 4:
        return False
    low = value.lower()
    if any(p in low for p in _VARIABLE_PARTS):
        return False
    pattern = re.compile(r"(?<![A-Za-z0-9_])" + re.escape(value) + r"(?![A-Za-z0-9_])")
    return not any(m.start() != start for m in pattern.finditer(text))


def _spaced_password(value: str) -> bool:
    """A quoted passphrase with spaces (`'open sesame'`), not a UI string (`"Enter password"`)."""
    words = value.split()
    return (
        2 <= len(words) <= 4
        and value == value.lower()
        and not any(w.strip(".:?!…") in _UI_WORDS for w in words)
        and not value.rstrip().endswith((":", "?", "…", "..."))
    )


def _assignment(text: str, m: re.Match[str]) -> Span | None:
    """`NAME=value`, `name: value`, `"name": "value"` with a secret-bearing NAME."""
    i = m.start()
    while i > 0 and text[i - 1] in _NAME_CHARS:
        i -= 1
    quoted_name = m.group("kq") is not None
    if quoted_name:
        j = i
        while j > 0 and (text[j - 1] in _NAME_CHARS or text[j - 1] == " "):
            j -= 1  # a JSON key with spaces: "api key", "Client Secret"
        if j < i and j > 0 and text[j - 1] in "\"'" and text[j] != " ":
            i = j
        if i == 0 or text[i - 1] not in "\"'":
            return None
        name_start = i - 1 if i < 2 or text[i - 2] != "\\" else i - 2
    else:
        name_start = i
    name = text[i : m.end("tail")]
    family = secret_name(name)
    if family is None:
        return None
    group, quoted = _value_span(m)
    start, end = m.span(group)
    value = text[start:end]
    if end <= start or is_placeholder(value):
        return None
    if end < len(text) and text[end] in "<{$":
        return None  # `hvs.<token>`, `sk-${KEY}`: a template, not a value
    if family is Family.KEY and not strong_enough(value, family):
        return None  # MAILGUN_KEY=… counts only with a minted-looking value
    op = m.group("op")
    colon = ":" in op and "=" not in op
    tight = op == "="
    ctx = "quoted" if quoted_name else _line_context(text, name_start)
    upper = name.upper() == name and any(c.isalpha() for c in name)
    if op.strip() == "to":  # prose: "set AWS_SECRET_ACCESS_KEY to …"
        if not upper or quoted_name or "_" not in name:
            return None
        return (start, end) if strong_enough(value, family) and word_like(value) < 0.55 else None
    if quoted:
        if value[0] in ",+" or (value[0] == "." and not value[1:2].isalnum()):
            return None  # `password: "…",next:` or `'…'.$p[`: between two literals, not one
        if (
            any(c.isspace() for c in value)
            and not (upper and ctx in ("line", "shell"))
            and not (family is Family.PASSWORD and _spaced_password(value))
        ):
            return None
        if (
            op in (":=", "=>")
            and family is not Family.PASSWORD
            and not looks_random(value, min_len=12)
        ):
            return None
        return (start, end) if strong_enough(value, family) else None
    if value[0] in ".,+":
        return None  # `'…' . $x`, `", " + y`: concatenation, not a value
    call_like = any(c in value for c in "([{") or (
        "." in value and is_code_reference(value) and not has_random_part(value)
    )
    if call_like:
        return None
    if colon:
        if ctx not in ("line", "quoted") or not _ends_line(text, end):
            return None
        return (start, end) if strong_enough(value, family) else None
    if tight:
        if ctx == "arg" and is_code_reference(value) and not has_random_part(value):
            return None
        if (
            ctx == "word"
            and not upper
            and is_code_reference(value)
            and not any(c.isdigit() for c in value)
            and not (family is Family.PASSWORD and _literal_identifier(text, value, start, end))
        ):
            return None
        if ctx in ("line", "shell", "query", "word", "arg"):
            return (start, end) if (upper or ctx != "arg" or strong_enough(value, family)) else None
        return None
    if "=" in op and ctx in ("line", "shell"):
        if is_code_reference(value) and not has_random_part(value):
            has_digit = any(c.isdigit() for c in value)
            has_alpha = any(c.isalpha() for c in value)
            literal = family is Family.PASSWORD and _literal_identifier(text, value, start, end)
            if not (has_digit and has_alpha) and not literal:
                return None
        return (start, end) if strong_enough(value, family) else None
    return None


def _flag_value(text: str, m: re.Match[str]) -> Span | None:
    start_char = m.start()
    if start_char > 0 and (text[start_char - 1].isalnum() or text[start_char - 1] in "-_"):
        return None
    group, _ = _value_span(m)
    start, end = m.span(group)
    value = text[start:end]
    if end <= start or is_placeholder(value):
        return None
    if value.startswith(("/", "~/", "./", "../")) and "file" not in value:
        return None  # --private-key ~/.ssh/id_ed25519: a path, not the key
    return start, end


# -- the rule table ---------------------------------------------------------------------------

_V_QUOTED = (
    r"""\\"(?P<ve>(?:[^"\\\r\n]|\\\\\\\\)*)\\"|"(?P<vd>(?:[^"\\\r\n]|\\.)*)"|'(?P<vs>[^'\r\n]*)'"""
)
_V_BARE = r"""(?P<vb>`?(?:[^\s"'`\\,;)\]}<>&|]|\\\\\\\\)+)"""
_VALUE = rf"(?:{_V_QUOTED}|{_V_BARE})"


def rule(
    kind: str,
    pattern: str,
    anchors: Sequence[str],
    extract: Extract,
    *,
    lower: bool = False,
    lookback: int = 0,
) -> Rule:
    return Rule(kind, re.compile(pattern, re.S), tuple(anchors), extract, lower, lookback)


_FLAG_NAMES = (
    "password", "passwd", "pass", "passin", "passout", "passphrase", "token", "api-key", "api_key",
    "apikey", "auth-token", "access-token", "secret-key", "client-secret", "secret-access-key",
    "storepass", "keypass", "srcstorepass", "deststorepass", "bearer-token", "private-token",
    "github-token", "hf-token", "npm-token", "db-password",
)  # fmt: skip


BASE_RULES: tuple[Rule, ...] = (
    rule(
        "private_key",
        r"-----BEGIN [A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----(?P<v>.*?)(?=-----END [A-Z0-9 ]{0,40}PRIVATE KEY|\Z)",
        ["-----BEGIN "],
        _pem_body,
    ),
    rule(
        "private_key",
        r"Private-Lines: *\d+(?:\r?\n|\\r?\\n)(?P<v>(?:[A-Za-z0-9+/=]+(?:\r?\n|\\r?\\n)?)+)",
        ["Private-Lines"],
        _pem_body,
    ),
    rule(
        "aws_access_key_id",
        r"A(?:KIA|SIA|BIA|CCA|3T[A-Z0-9])[A-Z0-9]{16}",
        ["AKIA", "ASIA", "ABIA", "ACCA", "A3T"],
        token(forbid=("EXAMPLE",)),
    ),  # fmt: skip
    rule(
        "aws_secret_access_key",
        r"secret_?-?access_?-?key\\?[\"']?[ \t]*[:=][ \t]*\\?[\"']?(?P<v>[a-z0-9/+]{40})(?![a-z0-9/+=])",
        ["secret_access_key", "secretaccesskey", "secret-access-key"],
        value_group(),
        lower=True,
    ),
    rule("github_token", r"gh[pousr]_[A-Za-z0-9_]{36,251}", ["gh"], token(30)),
    rule("github_token", r"github_pat_[A-Za-z0-9_]{40,255}", ["github_pat_"], token(30)),
    rule(
        "gitlab_token",
        r"gl(?:pat|dt|ft|soat|rt|cbt|imt|ptt|agent|oas)-[A-Za-z0-9_\-]{20,}(?:\.[0-9a-z]{2}\.[0-9a-z]{7,9})?",
        ["gl"],
        token(20),
    ),
    rule("anthropic_key", r"sk-ant-[A-Za-z0-9_\-]{32,}", ["sk-ant-"], token(32)),
    rule(
        "openai_key",
        r"sk-(?!ant-)(?:proj-|svcacct-|admin-|None-)?[A-Za-z0-9_\-]{32,}",
        ["sk-"],
        token(32),
    ),
    rule("huggingface_token", r"hf_[A-Za-z0-9]{30,40}", ["hf_"], token(30)),
    rule(
        "slack_token",
        r"xox[abposre]-[0-9]+-[A-Za-z0-9\-]{8,}|xapp-[0-9]-[A-Za-z0-9\-]{20,}",
        ["xox", "xapp-"],
        token(),
    ),
    rule(
        "slack_webhook",
        r"hooks\.slack\.com(?:\\?/)(?:services|workflows|triggers)(?:\\?/)(?P<v>(?:[A-Za-z0-9_+\-]|\\?/){20,})",
        ["hooks.slack.com"],
        value_group(),
    ),
    rule(
        "stripe_key",
        r"(?:sk|rk)_(?:live|test|prod)_[A-Za-z0-9]{20,}|whsec_[A-Za-z0-9]{32,}",
        ["k_live_", "k_test_", "k_prod_", "whsec_"],
        token(20),
        lookback=1,
    ),
    rule("google_api_key", r"AIza[0-9A-Za-z_\-]{35}", ["AIza"], token()),
    rule(
        "google_oauth",
        r"GOCSPX-[A-Za-z0-9_\-]{28}|ya29\.[0-9A-Za-z_\-]{30,}|1//0[0-9A-Za-z_\-]{40,}",
        ["GOCSPX-", "ya29.", "1//0"],
        token(20),
    ),
    rule("jwt", r"eyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]*", ["eyJ"], token()),
    rule("npm_token", r"npm_[A-Za-z0-9]{36}", ["npm_"], token(30)),
    rule("pypi_token", r"pypi-AgE[A-Za-z0-9_\-]{50,}", ["pypi-AgE"], token()),
    rule("sendgrid_key", r"SG\.[A-Za-z0-9_\-]{16,32}\.[A-Za-z0-9_\-]{20,64}", ["SG."], token(20)),
    rule("digitalocean_token", r"do[por]_v1_[a-f0-9]{64}", ["_v1_"], token(), lookback=3),
    rule(
        "url_password",
        r":(?:\\?/){2}(?P<user>[^\s:/@'\"\\]{0,128}):(?P<v>[^\s/'\"\\]{1,256})@(?=[A-Za-z0-9\[])",
        ["://", ":\\/\\/"],
        value_group(family=Family.PASSWORD),
    ),
    rule(
        "auth_header",
        r"authorization\\?[\"']?[ \t]*[:=][ \t]*\\?[\"']?[ \t]*(?:basic|bearer|token|apikey|api-key|sso-key)[ \t]+(?P<v>[a-z0-9._~+/=\-:]{8,})",
        ["authorization"],
        value_group(),
        lower=True,
    ),
    rule(
        "api_key_header",
        r"(?:x-api-key|x-auth-token|x-access-token|private-token|x-goog-api-key|x-api-token)\\?[\"']?[ \t]*:[ \t]*\\?[\"']?(?P<v>[^\s\"'\\,;]{8,})",
        ["x-", "private-token"],
        value_group(),
        lower=True,
    ),
    rule(
        "cli_secret",
        r"-{1,2}(?:"
        + "|".join(sorted(_FLAG_NAMES, key=len, reverse=True))
        + r")(?:=|[ \t]+)"
        + _VALUE,
        ["--", "-pass", "-storepass", "-keypass", "-srcstorepass", "-deststorepass"],
        _flag_value,
        lower=True,
        lookback=1,
    ),
    rule(
        "cli_secret",
        r"(?:mysql|mysqldump|mysqladmin|mariadb)\b[^\n|;&]{0,200}?[ \t]-p(?P<vb>[^\s'\"\\]+)",
        ["mysql", "mariadb"],
        _flag_value,
        lower=True,
    ),
    rule("cli_secret", r"sshpass[ \t]+-p[ \t]*" + _VALUE, ["sshpass"], _flag_value, lower=True),
    rule(
        "curl_password",
        r"curl\b[^\n|;&]{0,400}?[ \t](?:-u|--user)[ \t=]*\\?[\"']?[^\s:'\"\\]+:(?P<v>[^\s'\"\\]+)",
        ["curl"],
        value_group(family=Family.PASSWORD),
        lower=True,
    ),
    rule(
        "secret_assignment",
        r"(?P<kw>password|passwd|passphrase|passcode|pass|pwd|pw|secret|token|key|auth|pat|"
        r"credentials|credential|creds)(?P<tail>(?:[_.\-]?(?:private|prod|production|dev|staging|"
        r"test|live|sandbox|new|old|current|base|raw|value|b64|base64|hex|encoded|v[0-9]|[0-9]))*)"
        r"(?P<kq>\\?[\"'])?(?P<op>[ \t]*(?::=|=>|=|:)[ \t]*|[ \t]+to[ \t]+)(?![=>])" + _VALUE,
        ["pass", "pw", "secret", "token", "key", "auth", "pat", "cred"],
        _assignment,
        lower=True,
    ),
)


# Characters by how often a block of agent text contains them, most often first (measured on
# the dev set); a character not listed is rarer than all of these. Only speed depends on it.
_COMMON_CHARS = " eastinodlrc.pmuhgyf:wvb/k-,_102()\"xqST{}=4E'\nI53PAUCO;j>RDF"

_AnchorGroup = tuple[str, tuple[tuple[str, tuple[int, ...]], ...]]


def _rarity(c: str) -> int:
    """Higher for a character fewer blocks contain."""
    i = _COMMON_CHARS.find(c)
    return len(_COMMON_CHARS) if i < 0 else i


def _rarity_key(anchor: str) -> str:
    """The character of `anchor` least likely to occur in a block (a block that lacks it
    cannot hold the anchor either); "" for the empty anchor, which every block holds."""
    return max(anchor, key=_rarity, default="")


class _AnchorIndex:
    """One rule set grouped by anchor, built once per rule set, for each haystack (`text`, and
    `lower` for its ASCII-lower-cased copy):

    - `*_groups`: (key character, ((anchor, indices of the rules listing it), ...)), each
      distinct anchor once, grouped under its `_rarity_key`;
    - `*_line_rules`: indices of the rules anchored on "\n" (line rules, which also try 0)."""

    __slots__ = ("rules", "text_groups", "lower_groups", "text_line_rules", "lower_line_rules")

    def __init__(self, rules: tuple[Rule, ...]) -> None:
        by_anchor: dict[tuple[bool, str], list[int]] = {}
        for index, rule in enumerate(rules):
            for anchor in dict.fromkeys(rule.anchors):
                by_anchor.setdefault((rule.lower, anchor), []).append(index)
        groups: dict[tuple[bool, str], list[tuple[str, tuple[int, ...]]]] = {}
        for (lower, anchor), ids in by_anchor.items():
            if anchor != "\n":
                groups.setdefault((lower, _rarity_key(anchor)), []).append((anchor, tuple(ids)))
        self.rules = rules
        self.text_groups = tuple((k, tuple(g)) for (lo, k), g in groups.items() if not lo)
        self.lower_groups = tuple((k, tuple(g)) for (lo, k), g in groups.items() if lo)
        self.text_line_rules = tuple(by_anchor.get((False, "\n"), ()))
        self.lower_line_rules = tuple(by_anchor.get((True, "\n"), ()))


_INDEXES: dict[int, _AnchorIndex] = {}


def _anchor_index(rules: Sequence[Rule]) -> _AnchorIndex:
    """The index of `rules`, cached per rule tuple (the cache holds the tuple, so its id stays
    its own); any other sequence is indexed afresh each call since it may change."""
    if not isinstance(rules, tuple):
        return _AnchorIndex(tuple(rules))
    index = _INDEXES.get(id(rules))
    if index is None or index.rules is not rules:
        if len(_INDEXES) >= 16:
            _INDEXES.clear()
        index = _INDEXES[id(rules)] = _AnchorIndex(rules)
    return index


def _occurrences(hay: str, anchor: str, i: int) -> list[int]:
    """Every position of `anchor` in `hay` from `i` (a position of it, or -1) on, overlapping
    occurrences included, ascending."""
    positions = []
    while i >= 0:
        positions.append(i)
        i = hay.find(anchor, i + 1)
    return positions


def _anchor_hits(
    hay: str,
    groups: tuple[_AnchorGroup, ...],
    line_rules: tuple[int, ...],
    hits: dict[int, list[list[int]]],
) -> None:
    """Add to `hits` (rule index -> one ascending position list per anchor of that rule found
    in `hay`) the positions of the anchors of `groups` and `line_rules` in `hay`."""
    if line_rules:
        # a line rule also tries the first line (its pattern allows `^`)
        lines = [0, *_occurrences(hay, "\n", hay.find("\n", 1))]
        for rule_id in line_rules:
            hits.setdefault(rule_id, []).append(lines)
    for key, anchors in groups:
        if key not in hay:
            continue
        for anchor, rule_ids in anchors:
            i = hay.find(anchor)
            if i < 0:
                continue
            positions = _occurrences(hay, anchor, i)
            for rule_id in rule_ids:
                hits.setdefault(rule_id, []).append(positions)


def scan_rules(text: str, rules: Sequence[Rule]) -> list[tuple[str, int, int]]:
    """(kind, start, end) of every value the rules find in `text` (unsorted, may overlap), in
    rule order, each rule's in text order. Rules read `text` with line-number gutters blanked
    (`without_gutters`).

    Each distinct anchor is searched once per haystack (none of a group whose rarest character
    is absent), and only the rules whose anchors occur are tried, at the ascending union of
    their anchors' positions."""
    text = without_gutters(text)
    index = _anchor_index(rules)
    hits: dict[int, list[list[int]]] = {}
    _anchor_hits(text, index.text_groups, index.text_line_rules, hits)
    low = ""
    if index.lower_groups or index.lower_line_rules:
        low = ascii_lower(text)
        _anchor_hits(low, index.lower_groups, index.lower_line_rules, hits)
    out: list[tuple[str, int, int]] = []
    for rule_id in sorted(hits):
        rule = index.rules[rule_id]
        found = hits[rule_id]
        positions = found[0] if len(found) == 1 else sorted(set().union(*found))
        hay = low if rule.lower else text
        done = -1  # end of the last accepted match: matches of one rule do not overlap
        for pos in positions:
            if pos < done:
                continue
            for start in range(max(pos - rule.lookback, 0), pos + 1):
                m = rule.pattern.match(hay, start)
                if m is None:
                    continue
                span = rule.extract(text, m)
                if span is not None and span[1] > span[0]:
                    out.append((rule.kind, span[0], span[1]))
                    done = m.end()
                break
    return out
