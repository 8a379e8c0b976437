"""The publish gate's own heuristics: what a secret looks like when no format announces it.

Written apart from the index-time rules (funes.redact.rules, .values, .context, .prose,
.structured, .commands: nothing is imported from them) and run only by the gate, where a
finding holds a chunk back instead of rewriting it, so they are broader. They see text the
index-time set has already redacted; `[REDACTED:…]` markers are never findings.

* `keyword_value`, `connection_password`, `handover_value`: a credential word and the value
  written after it, in assignments, data, connection strings and prose
  (funes.redact.residual_words);
* `cli_password`: a short password flag of a database or login tool (`-p…`, `-a`, `-P`, `-w`,
  `-U user%…`), a value piped into `--password-stdin`, a `--body` of `secret set`;
* `bot_token`: a dotted three-part bot token (`<24-26>.<6>.<27-38>`, Discord) anywhere;
* `line_value`: a value of 8+ characters standing alone after a colon or "is"/"with" at the
  end of a line, mixed the way generators mix (see `minted_token`), unless the words before
  name a hash, id or version;
* `minted_token`: a 20+ character run mixing letters and digits the way generators do
  (upper+lower+digits, one case with digits in 32+, hex of 32+ near a credential word, or hex
  of a length no digest has, like a 34-character Jenkins token), that is not a UUID, hash,
  base64 blob or data: URI, path, identifier made of words (split on `/._-`, no piece of it
  random), or a known public id shape (Stripe object ids, IPFS CIDs, bcrypt salts).

Line-number gutters (`    12→`, `    12<TAB>`) are read as indentation. Pure; stdlib `re`
only. Each finding is (kind, start, end) over the input text.
"""

from __future__ import annotations

import re

from funes.redact.residual_words import (
    MARKER,
    PUBLIC,
    UUID,
    connection_values,
    entropy,
    handover_values,
    keyword_values,
    placeholder,
    wordy,
)

# -- shared shapes -----------------------------------------------------------------------------

_GUTTER = re.compile(r"^[ \t]*\d{1,7}(?:\u2192|\t)", re.M)
_HEX = re.compile(r"[0-9a-fA-F]+")
_HASHY = re.compile(
    r"sha\d*|md5|hash|checksum|digest|commit|integrity|etag|uuid|guid|\bid\b|_id\b|ids\b|"
    r"version|\brev\b|revision|trace|span|request|session|build|\brun\b|nonce|fingerprint|"
    r"\bref\b|\btag\b|branch|\bpath\b|\bfile\b|\burl\b|image|model|\bname\b|title|date|time|"
    r"error|warning|note|info|debug|description|\bjob\b|order|cid|object|hostid|h1|blake|"
    r"salt|\biv\b|seed|cursor|page|offset|signature_id|key_id|keyid|kid",
    re.I,
)
_ID_PREFIX = re.compile(
    r"(?:cus|pm|in|pi|ch|evt|req|acct|price|prod|sub|txn|po|tr|src|card|ba|seti|si|ii|il|cs|"
    r"prv|pl|py|ipi|invrs|file|link|cbtxn|dp|du|ic|inrb|re|pyr|trr|ich|ord|sku|plan|coupon|"
    r"promo|tax|txr|whm|we|ephkey|es|est|fr|ir|ppage|prc|sqr|tml|tmr)_[A-Za-z0-9]{14,30}"
)
_CID = re.compile(r"Qm[1-9A-HJ-NP-Za-km-z]{44}|bafy[a-z2-7]{50,}")
_BCRYPT = re.compile(r"\$2[abxy]?\$\d\d\$")
_DIGEST_LENGTHS = (32, 40, 56, 64, 96, 128)  # md5, sha1, sha224, sha256, sha384, sha512


def _view(text: str) -> str:
    """`text` with line-number gutters blanked (same length)."""
    if "\u2192" in text or "\t" in text:
        text = _GUTTER.sub(lambda m: " " * len(m.group(0)), text)
    return text


# -- command lines -----------------------------------------------------------------------------

_CLI = re.compile(
    r"(?:(?<=\s)-p|(?<=\s)--pass(?:word)?[= ]|(?<=\s)-(?:a|P|w|k)[ \t]+|"
    r"(?<=\s)--body[ \t]+|(?<=\s)-U[ \t]+[^\s%]+%|/user:[^\s]+[ \t]+)"
    r"(?:'([^'\n]+)'|\"([^\"\n]+)\"|([^\s'\";|&]+))"
)
_STDIN = re.compile(
    r"(?:echo|printf)[ \t]+(?:-n[ \t]+)?(?:'([^'\n]+)'|\"([^\"\n]+)\"|([^\s|]+))[ \t]*\|[^\n]*--password-stdin"
)
_CLI_TOOLS = re.compile(
    r"\b(?:mysql\w*|mariadb|redis-cli|sqlcmd|ldap\w+|psexec|sshpass|smbclient|docker|podman|"
    r"helm|htpasswd|net use|gh|glab|keytool|openssl|zip|7z|unzip|pg_\w+|psql|mongo\w*)\b"
)


def _cli(view: str) -> list[tuple[str, int, int]]:
    out: list[tuple[str, int, int]] = []
    for m in _STDIN.finditer(view):
        g = next(i for i in (1, 2, 3) if m.group(i) is not None)
        if not placeholder(m.group(g)):
            out.append(("cli_password", *m.span(g)))
    if not _CLI_TOOLS.search(view):
        return out
    for m in _CLI.finditer(view):
        g = next(i for i in (1, 2, 3) if m.group(i) is not None)
        value = m.group(g)
        line_start = view.rfind("\n", 0, m.start()) + 1
        if not _CLI_TOOLS.search(view, line_start, m.start()):
            continue
        if placeholder(value) or value.startswith(("-", "/")) or re.fullmatch(r"\d{1,5}", value):
            continue  # -p 5432 (a port), -p -1
        out.append(("cli_password", *m.span(g)))
    return out


# -- minted shapes -----------------------------------------------------------------------------

_BOT = re.compile(
    r"(?<![A-Za-z0-9_\-])[A-Za-z0-9_\-]{24,26}\.[A-Za-z0-9_\-]{6}\.[A-Za-z0-9_\-]{27,38}(?![A-Za-z0-9_\-])"
)
_LINE_VALUE = re.compile(
    r"(?P<pre>[^\n]{0,60}?)(?:\bis|\bwith|:)[ \t]+[`\"']?(?P<v>[^\s\"'`]{8,200})[`\"']?[ \t]*(?:\r?\n|\\n|$)"
)
_LONG = re.compile(r"(?<![A-Za-z0-9+/_\-.])[A-Za-z0-9+/_\-.~]{20,400}(?![A-Za-z0-9+/_\-])")
_BLOB_LINE = re.compile(r"[A-Za-z0-9+/=]{60,}")


def _random_segment(seg: str) -> bool:
    """A piece between separators that a generator wrote: upper, lower and digits mixed in
    8+ characters, one case with digits in 16+, or 20+ of anything not made of words."""
    upper = any(c.isupper() for c in seg)
    lower = any(c.islower() for c in seg)
    digit = any(c.isdigit() for c in seg)
    if len(seg) >= 8 and upper and lower and (digit or len(seg) >= 12) and wordy(seg) < 0.7:
        return True
    return (
        len(seg) >= 16
        and digit
        and (upper or lower)
        and wordy(seg) < 0.6
        or (len(seg) >= 20 and wordy(seg) < 0.5)
    )


def _minted(value: str, *, short: int = 16) -> bool:
    """Letters and digits mixed the way generators mix them, not the way words or ids do."""
    v = value.rstrip(".")
    if (
        len(v) < short
        or UUID.fullmatch(v)
        or "://" in v
        or re.search(r"@[\w\-]+\.|[A-Za-z_]\w*\(", v)
    ):
        return False
    if v.startswith(("/", "./", "../", "http", "$", "~")) or v.startswith(PUBLIC):
        return False
    if _ID_PREFIX.fullmatch(v) or _CID.fullmatch(v):
        return False
    letters = sum(c.isalpha() for c in v)
    digits = sum(c.isdigit() for c in v)
    if letters < 3 or digits == 0 and not re.search(r"[A-Z].*[a-z].*[A-Z]", v):
        return False
    if re.fullmatch(r"v?\d+(\.\d+)+[\w.\-]*", v) or re.fullmatch(
        r"[\w\-]+(?:\.[a-z]{2,6})+(?:/\S*)?", v
    ):
        return False  # a version, a host name
    interleaved = len(re.findall(r"(?<=[A-Za-z])\d+(?=[A-Za-z])", v)) >= 2 and "_" not in v
    if wordy(v) >= 0.7 and not interleaved:
        return False  # codecs.utf_16_be_decode, MaterializationResponsibility
    segments = re.split(r"[/._\-]+", v)
    if len(segments) > 1 and not any(_random_segment(x) for x in segments):
        return False  # sk_SRP_gN_cache_sort, llvm/ADT/StringRef.h, DER_OID_V_c2pnb163v1
    return len(set(v)) >= min(10, len(v) // 2) and entropy(v) >= (3.2 if len(v) >= 16 else 2.8)


def _odd_hex(value: str) -> bool:
    """Hex of a length no digest has (a Jenkins token is 34): minted, not hashed."""
    return len(value) >= 24 and len(value) not in _DIGEST_LENGTHS and len(value) != 24


def _minted_tokens(view: str) -> list[tuple[str, int, int]]:
    out: list[tuple[str, int, int]] = []
    for m in _LONG.finditer(view):
        value = m.group(0).rstrip(".")
        hex_only = _HEX.fullmatch(value) is not None
        if hex_only:
            if len(value) < 32 and not _odd_hex(value):
                continue
        elif not (any(c.isupper() for c in value) and any(c.islower() for c in value)) and not (
            any(c.isdigit() for c in value) and len(value) >= 32 and wordy(value) < 0.4
        ):
            continue  # one case only: words, upper-case ids
        odd_hex = hex_only and _odd_hex(value) and entropy(value) >= 3.0
        bcrypt = _BCRYPT.search(view, max(0, m.start() - 8), m.start() + 1)
        if not (odd_hex or _minted(value)) or bcrypt:
            continue
        line_start = view.rfind("\n", 0, m.start()) + 1
        before = view[max(line_start, m.start() - 40) : m.start()]
        if _HASHY.search(before) or view[m.end() : m.end() + 1] == "=":
            continue  # a hash or digest named as such, base64 data with its padding
        line_end = view.find("\n", m.end())
        line = view[line_start : line_end if line_end >= 0 else len(view)].strip()
        if _BLOB_LINE.fullmatch(line) or re.search(r"(ssh-[a-z0-9]+|ecdsa-[\w-]+) +$", before):
            continue  # a PEM/base64 body line, an SSH public key
        if "base64," in view[line_start : m.start()] or ("+" in value and len(value) >= 100):
            continue  # a data: URI, a base64 blob wrapped into prose
        near = view[max(0, m.start() - 80) : m.end() + 80]
        if (
            hex_only
            and not _odd_hex(value)
            and not re.search(r"(?i)key|token|secret|pass|auth|cred|api", near)
        ):
            continue  # hex with no credential word near it: a digest
        out.append(("minted_token", m.start(), m.start() + len(value)))
    return out


def scan_residual(text: str) -> list[tuple[str, int, int]]:
    """(kind, start, end) of every residual-looking secret in `text`."""
    view = _view(text)
    out: list[tuple[str, int, int]] = []
    for m in _BOT.finditer(view):
        if sum(c.isdigit() for c in m.group(0)) >= 3:
            out.append(("bot_token", *m.span()))
    for m in _LINE_VALUE.finditer(view):
        value = m.group("v").rstrip(".,;)")
        if _HASHY.search(m.group("pre")[-40:]) or MARKER.search(value):
            continue
        if not _minted(value, short=8):
            continue
        out.append(("line_value", m.start("v"), m.start("v") + len(value)))
    out.extend(_minted_tokens(view))
    out.extend(keyword_values(view))
    out.extend(connection_values(view))
    out.extend(handover_values(view))
    out.extend(_cli(view))
    return out
