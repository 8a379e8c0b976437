"""The publish gate's own heuristics: minted-looking values that no format or name announces.

Written apart from the index-time rules (funes.redact.rules, .prefixes, .context) and run only
by the gate, where a finding holds a chunk back instead of rewriting it, so they can afford to
be broader. Three shapes:

* a dotted three-part bot token (`<24-26>.<6>.<27-38>`, Discord) anywhere;
* a value standing alone after a colon at the end of a prompt or output line
  (`…new one: Xk4…`), unless the words before name a hash, id or version;
* a long token (24+ characters) mixing upper, lower and digits with two or more digit runs,
  that is not a UUID, hash, base64 blob or path.

Pure; stdlib `re` only. Each finding is (kind, start, end) over the input text.
"""

from __future__ import annotations

import re

_BOT = re.compile(
    r"(?<![A-Za-z0-9_\-])[A-Za-z0-9_\-]{24,26}\.[A-Za-z0-9_\-]{6}\.[A-Za-z0-9_\-]{27,38}(?![A-Za-z0-9_\-])"
)
_LINE_VALUE = re.compile(
    r"(?P<pre>[^\n]{0,60}?)(?:\bis|:)[ \t]+(?P<v>[^\s\"'`]{10,200})[ \t]*(?:\r?\n|\\n|$)"
)  # noqa: E501
_LONG = re.compile(r"(?<![A-Za-z0-9+/_\-])[A-Za-z0-9+/_\-]{24,120}(?![A-Za-z0-9+/_\-])")
_HASHY = re.compile(
    r"sha\d*|md5|hash|checksum|digest|commit|integrity|etag|uuid|\bid\b|_id|version|rev|"
    r"trace|span|request|session|build|run|nonce|etag|fingerprint|ref|tag|branch|path|file|url|"
    r"image|model|name|title|date|time|error|warning|note|info|debug|description",
    re.I,
)
_CODE = re.compile(r"[A-Za-z_][\w.]*(?:\(.*)?")
_BLOB_LINE = re.compile(r"[A-Za-z0-9+/=]{60,}")
_PUBLIC = ("pk_live_", "pk_test_", "pub_", "pk.")  # publishable keys: meant to be public
_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")


def _minted(value: str) -> bool:
    """Letters and digits mixed the way generators mix them, not the way words or ids do."""
    if len(value) < 10 or _UUID.fullmatch(value) or value.startswith(("/", "http", "$", "~")):
        return False
    letters = sum(c.isalpha() for c in value)
    digits = sum(c.isdigit() for c in value)
    if letters < 3 or (digits == 0 and not re.search(r"[A-Z]{2,}.*[a-z].*[A-Z]{2,}", value[1:])):
        return False
    if value.replace(".", "").isdigit() or re.fullmatch(r"v?\d+(\.\d+)+[\w.\-]*", value):
        return False
    if _CODE.fullmatch(value) and len(re.findall(r"[0-9]+", value)) < 2:
        return False  # codecs.utf_16_be_decode, bytes.fromhex(m.group(1)
    return len(set(value)) >= min(8, len(value) // 2)


def scan_residual(text: str) -> list[tuple[str, int, int]]:
    """(kind, start, end) of every residual-looking secret in `text`."""
    out: list[tuple[str, int, int]] = []
    for m in _BOT.finditer(text):
        if sum(c.isdigit() for c in m.group(0)) >= 3:
            out.append(("bot_token", *m.span()))
    for m in _LINE_VALUE.finditer(text):
        value = m.group("v").rstrip(".,;)")
        if _HASHY.search(m.group("pre")[-40:]) or not _minted(value):
            continue
        out.append(("line_value", m.start("v"), m.start("v") + len(value)))
    for m in _LONG.finditer(text):
        value = m.group(0)
        if len(re.findall(r"[0-9]+", value)) < 2 or "/" in value or value.startswith(_PUBLIC):
            continue
        if not (any(c.isupper() for c in value) and any(c.islower() for c in value)):
            continue
        before = text[max(0, m.start() - 30) : m.start()]
        if _HASHY.search(before) or text[m.end() : m.end() + 1] == "=" or "h1:" in before:
            continue  # a hash, or base64 data with its padding
        line_start = text.rfind("\n", 0, m.start()) + 1
        line_end = text.find("\n", m.end())
        line = text[line_start : line_end if line_end >= 0 else len(text)].strip()
        if _BLOB_LINE.fullmatch(line) or re.search(r"(ssh-[a-z0-9]+|ecdsa-[\w-]+) +$", before):
            continue  # a PEM/base64 body line, an SSH public key
        out.append(("minted_token", *m.span()))
    return out
