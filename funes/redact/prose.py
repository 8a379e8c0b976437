"""Secrets written in prose: what a person types into a prompt, or an agent says back.

A password has no format; in prose what gives it away is the sentence around it. Rules:

* `password_in_prose`: a password word (English and the common translations: Passwort,
  mot de passe, contraseña, senha, пароль, 密码, パスワード…) followed within a few words by a
  copula or separator (is, was, to, est, ist, es, è, `:`, `=`, `->`, `→`) and a value; or
  "with/using password X". A value counts when it is not a word of the sentence: it has a
  digit, a symbol, a non-ASCII letter or inner capitals, is quoted, or is a lower-case word
  that ends the clause (`the postgres password is blooberry`) and is not one of the words
  that describe a password (`is required`, `is wrong`, `is stored in vault`);
* `credential_pair`: a user and password written together (`log in as admin / X`,
  `creds are deploy:X`, `user admin password X`);
* `token_in_prose`: a credential word (token, secret, api key, key, credential, and their
  translations: clé, clave, Schlüssel, chiave, ключ, 密钥…) followed in the next 80
  characters by a minted-looking word, or by a quoted literal (`the key you pasted (`X`)`);
* `standalone_token`: a line that holds nothing but one minted token (a pasted key, the
  output of `gh auth token`), and a prose line that ends with one after `:` or a word such as
  "with" (`try again with X`). Hex-only strings and UUIDs are left alone here (a commit SHA,
  a request id); so are base64 lines inside a blob.

Every rule is anchored on a literal (funes.redact.rules) and rejects placeholders, variables,
addresses and words (`prose_value`).
"""

from __future__ import annotations

import re

from funes.redact.rules import Rule, Span, rule
from funes.redact.values import (
    is_code_reference,
    is_placeholder,
    is_public,
    looks_random,
    minted,
    word_like,
)

_TRAILING = ",;:)]}>\"'`"
_CLAUSE_END = re.compile(
    r"[ \t]*(?:$|[\r\n.,;:!?)\]—–]|[ \t](?:and|but|so|then|please|if|for|or)\b)"
)

# Words that follow "the password is …" without being the password.
_PROSE_STOP = frozenset(
    ("required", "optional", "incorrect", "wrong", "invalid", "correct", "expired", "stored",
     "missing", "empty", "set", "unset", "hidden", "encrypted", "hashed", "valid", "the", "not",
     "none", "null", "same", "different", "reset", "changed", "rotated", "saved", "there",
     "fine", "ok", "okay", "good", "bad", "weak", "strong", "long", "short", "new", "old",
     "known", "unknown", "visible", "shown", "cached", "lost", "forgotten", "blank", "safe",
     "unsafe", "secure", "insecure", "protected", "needed", "mandatory", "too", "also", "still",
     "being", "generated", "random", "below", "above", "here", "this", "that", "it", "is",
     "in", "at", "on", "for", "my", "your", "our", "their", "his", "her", "its", "a", "an",
     "and", "or", "but", "used", "accepted", "rejected", "sent", "provided", "given",
     "requested", "prompted", "asked", "enabled", "disabled", "configured", "printed",
     "logged", "masked", "redacted", "shared", "leaked", "exposed", "compromised", "updated",
     "right", "wrong", "case", "sensitive", "length", "field", "prompt", "manager", "policy",
     "falsch", "richtig", "leer", "gesetzt", "incorrecto", "vacío", "faux", "vide", "correcte",
     "incorrecte", "obligatoire", "erforderlich", "requerida", "obligatorio")
)  # fmt: skip
_ADDRESS = re.compile(r"[\w.+\-]+@[\w\-]+(?:\.[\w\-]+)+")
_ROUTE = re.compile(r"/?[\w\-]+(?:/[\w\-.#:]+)+/?")


def prose_value(value: str, *, password: bool, quoted: bool = False, final: bool = False) -> bool:
    """`value` (a word of prose) is written as a secret, not as a word or code.

    Passwords: a digit, non-ASCII letter, symbol or inner capital; any quoted literal; a
    lower-case word only when it ends the clause (`final`) and is not in the stop list.
    Tokens: minted-looking (looks_random over 10+ characters with a digit or symbol)."""
    if is_placeholder(value) or value.startswith(("$", "/", "~", "http")) or len(value) < 3:
        return False
    if is_public(value):
        return False
    low = value.lower()
    if low in _PROSE_STOP or "://" in value or ".." in value or _ADDRESS.fullmatch(value):
        return False
    if any(c in value for c in "<>\\"):
        return False
    if password:
        if len(value) < 4 and not quoted:
            return False
        if quoted:
            if value[0] in ",+.;" or value.endswith(":"):
                return False  # `"Password:",next` — between two literals, or a label
            if " " in value and any(c in value for c in "(){}[];+"):
                return False  # code: "a" + b, f("x")
            if _ROUTE.fullmatch(value):
                return False  # cms/sites/passwords#update: a route or path
            return not (is_code_reference(value) and ("." in value or "(" in value))
        if any(c in value for c in "()[]{}") or (
            ("." in value or "::" in value) and is_code_reference(value)
        ):
            return False  # config['pw'], var.db_password
        if value[0] in ".,+":
            return False
        if any(c.isdigit() for c in value) or any(ord(c) > 127 and c.isalpha() for c in value):
            return True
        if any(not c.isalnum() and c not in "-._" for c in value):
            return True
        if value.count("-") >= 2:
            return True  # correct-horse-battery
        if "_" in value:
            return final  # open_sesame ends the clause; user_password in a sentence is a name
        if any(c.isupper() for c in value[1:]) and any(c.islower() for c in value):
            return True
        return final and value.isalpha() and len(value) >= 4
    if any(c in value for c in "([{") and is_code_reference(value):
        return False
    if not looks_random(value, min_len=10) or word_like(value) >= 0.55:
        return False  # JSON.stringify, fs.readFileSync, 3way_comparison: made of words
    if any(c.isdigit() for c in value) or any(not c.isalnum() for c in value):
        return True
    return len(re.findall(r"[A-Z]{2,}", value[1:])) >= 2 and len(value) >= 16


def _in_marker(text: str, i: int) -> bool:
    """`i` falls inside one of our own `[REDACTED:<kind>]` markers (`cli_secret`, `…_token`)."""
    opening = text.rfind("[REDACTED:", max(0, i - 40), i)
    return opening >= 0 and "]" not in text[opening:i]


_NOT_SECRET_BEFORE = ("cache ", "sort ", "primary ", "foreign ", "partition ", "public ", "ssh ")
_NOT_SECRET_BETWEEN = re.compile(
    r"\b(?:fingerprint|id|ids|hash|digest|sha\d*|md5|name|type|length|size|format|path|file|"
    r"prefix|header|field|column|version|count|expir\w*|ttl|scope|scopes|url|endpoint)\b"
)


def _not_a_secret_key(text: str, word_start: int, value_start: int) -> bool:
    """`cache key`, `public key`, `the key fingerprint is …`, `token type: bearer`."""
    before = text[max(0, word_start - 12) : word_start].lower()
    if any(w in before for w in _NOT_SECRET_BEFORE):
        return True
    return _NOT_SECRET_BETWEEN.search(text.lower(), word_start, value_start) is not None


# -- passwords ---------------------------------------------------------------------------------

_PASSWORD_WORDS = (
    "password", "passwort", "kennwort", "passwd", "passphrase", "passcode", "pwd", "pw",
    "mot de passe", "contraseña", "contrasena", "senha", "parola d'ordine", "wachtwoord",
    "lösenord", "hasło", "heslo", "пароль", "Пароль", "密码", "密碼", "パスワード", "비밀번호",
    "şifre", "salasana", "jelszó", "κωδικός", "كلمة السر", "كلمة المرور",
)  # fmt: skip
_PW = "(?:" + "|".join(re.escape(w) for w in sorted(_PASSWORD_WORDS, key=len, reverse=True)) + ")"
_COPULA = (
    r"(?:[ \t]+(?:is|was|to|now|be|becomes|reads|est|ist|es|era|è|é|är|er|jest|je|é)"
    r"(?:[ \t]+(?:now|still|set[ \t]+to|jetzt|maintenant|ahora|agora))?[ \t]+"
    r"|[ \t]*(?::|->|→|=>|-{2,}>?)[ \t]*)"
)
_VALUE = r"(?:(?P<q>[\"'`“‘])(?P<vq>[^\n\"'`”’]{1,128})[\"'`”’]|(?P<v>[^\s\"'`]{1,128}))"
_PROSE_PASSWORD = _PW + r"(?![a-z_\-@/=])[^\n.?!@/=\[\](){}<>;|]{0,40}?" + _COPULA + _VALUE
_WITH_PASSWORD = r"(?:with|using|use|the)[ \t]+(?:the[ \t]+)?" + _PW + r"[ \t]+" + _VALUE


def _value_span(text: str, m: re.Match[str]) -> tuple[int, int, bool]:
    if m.group("vq") is not None:
        return (*m.span("vq"), True)
    start, end = m.span("v")
    while end > start and text[end - 1] in _TRAILING:
        end -= 1
    if end > start and text[end - 1] == "." and (end == len(text) or text[end] in " \n"):
        end -= 1  # a full stop after the value, not in it
    return start, end, False


def _password(text: str, m: re.Match[str]) -> Span | None:
    if _in_marker(text, m.start()):
        return None
    start, end, quoted = _value_span(text, m)
    value = text[start:end]
    final = _CLAUSE_END.match(text, end + (1 if quoted else 0)) is not None
    if end <= start or not prose_value(value, password=True, quoted=quoted, final=final):
        return None
    return start, end


# -- credential pairs --------------------------------------------------------------------------

_USER = r"(?P<u>[^\s/:,\"'`\[\]{}()]{2,64})"
_PAIR = (
    r"(?:(?:log|sign)[ \t]?in|login)[ \t]+(?:as|with)[ \t]+" + _USER + r"[ \t]*"
    r"(?:/|:|,|with[ \t]+password|and[ \t]+password|password|pw)[ \t]*" + _VALUE
)
_CREDS = (
    r"(?:creds|credentials|login)\b[^\n:\"'`\[\]{}()=]{0,40}?(?:[ \t](?:are|is)[ \t]+|:[ \t]*)"
    + _USER
    + r"(?:[ \t]*/[ \t]*|:)"
    + _VALUE
)


def _pair(text: str, m: re.Match[str]) -> Span | None:
    if _in_marker(text, m.start()):
        return None
    start, end, quoted = _value_span(text, m)
    value = text[start:end]
    if end <= start or is_placeholder(value) or is_placeholder(m.group("u")):
        return None
    if value.lower() in _PROSE_STOP or _ADDRESS.fullmatch(value) or "://" in value:
        return None
    return start, end


# -- tokens ------------------------------------------------------------------------------------

_TOKEN_WORDS = (
    "token", "secret", "credential", "credentials", "api key", "api-key", "api_key", "apikey", "access key",
    "access-key", "auth key", "auth-key", "this key", "the key", "my key", "our key", "new key",
    "your key", "key", "clé", "clef", "clave", "chiave", "schlüssel",
    "sleutel", "nyckel", "klucz", "ключ", "токен", "jeton", "令牌", "密钥", "キー", "トークン",
)  # fmt: skip
_TW = "(?:" + "|".join(re.escape(w) for w in sorted(_TOKEN_WORDS, key=len, reverse=True)) + ")"
_PROSE_TOKEN = _TW + r"(?![a-z_\-])(?P<w>[^\n?!]{1,80})"
_WORD = re.compile(r"[^\s\"'`(\[{]{10,512}")
_QUOTED = re.compile(r"[`\"'“‘](?P<v>[^\s`\"'”’]{4,256})[`\"'”’]")


def _token_in_prose(text: str, m: re.Match[str]) -> Span | None:
    """The first word after a credential word (within 80 characters) that reads as minted, or
    a quoted literal close to it; `key` alone needs the minted word."""
    if _in_marker(text, m.start()):
        return None
    bare_key = text[m.start() : m.end("w") - len(m.group("w"))].lower() == "key"
    if m.start() > 0 and (text[m.start() - 1].isalnum() or text[m.start() - 1] in "_-"):
        return None  # monkey, hotkey, api_key (handled by assignment rules)
    for w in _WORD.finditer(text, m.start("w"), m.end("w")):
        start = w.start()
        end = _WORD.match(text, start).end()  # type: ignore[union-attr]  # the whole word
        while end > start and text[end - 1] in _TRAILING + ".":
            end -= 1
        value = text[start:end]
        if _not_a_secret_key(text, m.start(), start):
            return None
        if prose_value(value, password=False) and (not bare_key or minted(value)):
            return start, end
    if bare_key:
        return None
    q = _QUOTED.search(text, m.start("w"), min(len(text), m.start("w") + 48))
    if q is not None and not _not_a_secret_key(text, m.start(), q.start()):
        value = q.group("v")
        if prose_value(value, password=True) and word_like(value) < 0.55:
            return q.span("v")
    return None


# -- standalone tokens -------------------------------------------------------------------------

_TOKEN_RUN = r"(?P<v>[A-Za-z0-9+/_\-.~][A-Za-z0-9+/_\-.~:$!@%^&*]{19,400}={0,2})"
_LINE_TOKEN = re.compile(r"(?:\n|^)[ \t]*[`\"']?" + _TOKEN_RUN + r"[`\"']?[ \t]*(?=\r?\n|$)")
_LINE_TAIL = re.compile(
    r"(?:\n|^)(?P<pre>[^\n]{6,300}?)(?:[ \t]*:[ \t]*|[ \t]+(?:with|using|use|is|to|as)[ \t]+)"
    r"[`\"']?" + _TOKEN_RUN + r"[`\"']?[.,;)]?[ \t]*(?=\r?\n|$)"
)
_HEX = re.compile(r"[0-9a-fA-F\-]+")
_B64_LINE = re.compile(r"[A-Za-z0-9+/=]{40,}")
_ID_WORDS = re.compile(
    r"\b(?:id|ids|sha\d*|md5|hash|checksum|digest|commit|rev|revision|integrity|etag|uuid|"
    r"trace|span|request|session|build|run|nonce|fingerprint|ref|tag|branch|version|image|"
    r"cid|object|order|job|file|path|url|h1|blake\w*|xxh\w*|crc\d*)\b",
    re.I,
)


def _standalone_value(value: str) -> bool:
    return (
        not is_placeholder(value)
        and not is_public(value)
        and minted(value, min_len=20, allow_uuid=False)
        and not _HEX.fullmatch(value)
        and any(c.isupper() for c in value)
        and any(c.islower() for c in value)
        and any(c.isdigit() for c in value)
    )


def _in_blob(text: str, start: int, end: int) -> bool:
    """The line is one of several base64 lines (a PEM body, a certificate, wrapped data)."""
    prev_end = text.rfind("\n", 0, max(start - 1, 0))
    prev = text[prev_end + 1 : max(start - 1, 0)].strip()
    nxt_end = text.find("\n", end + 1)
    nxt = text[end + 1 : nxt_end if nxt_end >= 0 else len(text)].strip()
    return bool(_B64_LINE.fullmatch(prev) or _B64_LINE.fullmatch(nxt)) or "-----" in prev


_NAMED_AFTER = re.compile(
    r"\b(?:api[ _-]?key|token|secret|password|passwd|credential|key)s?\b", re.I
)


def _standalone(text: str, m: re.Match[str]) -> Span | None:
    start, end = m.span("v")
    value = text[start:end]
    if _in_blob(text, start, end):
        return None
    if _standalone_value(value):
        return start, end
    # hex or a UUID alone on its line is a digest or an id, unless the next words name it
    # a credential: "826e7066-…\nthat's the new api key"
    after = text[end : end + 100]
    if (
        _HEX.fullmatch(value)
        and minted(value, min_len=20)
        and _NAMED_AFTER.search(after)
        and not _ID_WORDS.search(after[:60])
    ):
        return start, end
    return None


def _line_tail(text: str, m: re.Match[str]) -> Span | None:
    pre = m.group("pre")
    words = re.findall(r"[^\W\d_]{2,}", pre)
    if len(words) < 2 or _ID_WORDS.search(pre) or any(c in pre for c in "={};"):
        return None  # not a sentence, or it names an id / hash
    return _standalone(text, m)


PROSE_RULES: tuple[Rule, ...] = (
    rule("password_in_prose", _PROSE_PASSWORD, [w.lower() if w.isascii() else w for w in _PASSWORD_WORDS], _password, lower=True),
    rule("password_in_prose", _WITH_PASSWORD, ["with ", "using ", "use ", "the "], _password, lower=True),
    rule("credential_pair", _PAIR, ["log in", "login", "sign in", "signin", "logi"], _pair, lower=True),
    rule("credential_pair", _CREDS, ["creds", "credentials", "login"], _pair, lower=True),
    rule("token_in_prose", _PROSE_TOKEN, [w.lower() if w.isascii() else w for w in _TOKEN_WORDS], _token_in_prose, lower=True),
    rule("standalone_token", _LINE_TOKEN.pattern, ["\n"], _standalone),
    rule("standalone_token", _LINE_TAIL.pattern, ["\n"], _line_tail),
)  # fmt: skip
