"""The publish gate's word shapes: a credential word and the value written after it.

Part of the gate's own detector set (funes.redact.residual runs these; nothing here is
imported from the index-time rules). A finding holds a chunk back, so the shapes are broad;
they see text already redacted at index time and never report a `[REDACTED:…]` marker.

* `keyword_values(view)`: a credential word (password, passwd, pwd, pass, secret, token, key,
  apikey, auth, credential(s), creds, and translations; in snake, kebab or camel names like
  `smtpPass`, `mjApikeyPrivate`) then
  - an assignment (`=`, `:`, `:=`, `=>`, `->`) and one value: a quoted literal, or a bare run
    up to the next space or quote; on the next line for a YAML/K8s `value:` pair;
  - or prose ("the db password is …"): the first value-shaped word of the same sentence. In
    prose the credential word is evidence only through what follows it: a quantity (`61ms`,
    `~9k`), an English word (`the token queue`), a name of words (`DuckDB`, `` `user_id` ``)
    is no value, whatever the sentence.
  A value is value-like when it is not a template, variable, path, URL without credentials,
  e-mail, number, version, colour or English word, and mixes character classes, or is letters
  no speller wrote (`typed_noise`: `qzvbxkt`), or was quoted. A run after an operator ends
  at a JSON-escaped line break, tab or quote (tool inputs are stored as JSON). Names qualified as
  non-secrets (`token_count`, `PASSWORD_MIN_LENGTH`, `key_id`, `--token-color`) are skipped.
* `connection_values(view)`: `Password=…;` / `Pwd=…;` pairs of a connection string.
* `handover_values(view)`: an opaque value handed over in prose without a credential word:
  "set the linode to <value>", "use this assemblyai …: <value>", "… vm -> <value>".

Pure; stdlib `re` only. Findings are (kind, start, end) over the input text.
"""

from __future__ import annotations

import math
import re

MARKER = re.compile(r"\[REDACTED:[a-z0-9_]+\]")
UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
PUBLIC = ("pk_live_", "pk_test_", "pub_", "pk.", "phc_", "sb_publishable_")
_IDENT_PART = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")


def entropy(value: str) -> float:
    """Shannon entropy of `value` in bits per character (0.0 for an empty string)."""
    counts: dict[str, int] = {}
    for ch in value:
        counts[ch] = counts.get(ch, 0) + 1
    n = len(value)
    return -sum(c / n * math.log2(c / n) for c in counts.values()) if n else 0.0


# Consonant pairs English spelling uses; random lowercase runs are full of the others (`vz`, `ql`).
_PAIRS = frozenset(
    re.findall(
        r"[a-z]{2}",
        "th ch sh ph wh ck ng nd nt st tr pr br cr dr gr fr pl bl cl fl gl sl sc sk sp sm sn sw "
        "tw rt rd rn rm rs rk rl rc rg rp rb rv rf lt ld lk lm lp ls lf lv lb mp mb nc nk ns nf "
        "nv nz ll ss tt ff pp rr mm nn cc dd gg bb zz ct pt ft wn wl ws wd wk gh ht ts ds ks ps "
        "bs gs ms xt xp xc dg rh",
    )
)


def pronounceable(part: str, longest: int = 20) -> bool:
    """A 3–`longest`-letter run with vowels in the share words have (y counts as a vowel)
    and few consonant pairs English spelling does not use (one per four letters)."""
    low = part.lower()
    vowels = sum(c in "aeiouy" for c in low)
    if not (3 <= len(low) <= longest and 0.2 <= vowels / len(low) <= 0.7):
        return False
    return _odd_pairs(low) <= max(1, len(low) // 4)


def _odd_pairs(low: str) -> int:
    """Adjacent consonants in `low` (lower case) that English spelling does not pair."""
    return sum(
        1
        for a, b in zip(low, low[1:], strict=False)
        if a not in "aeiouy" and b not in "aeiouy" and a + b not in _PAIRS
    )


def typed_noise(part: str) -> bool:
    """A run of 5+ letters no speller wrote: no vowel at all (y counts as one), or more
    consonant pairs English spelling does not use than one per four letters. Unlike
    `pronounceable`, the share of vowels is not asked: `queue`, `strengths`, `rhythm` and
    `scratch` are words (≈0.4% of the words of the dev set and LoCoMo count as noise, code
    names like `jsonl`; 78% of random 7-letter runs do)."""
    low = part.lower()
    if len(low) < 5 or not low.isalpha():
        return False
    return not any(c in "aeiouy" for c in low) or _odd_pairs(low) > max(1, len(low) // 4)


def wordy(value: str, longest: int = 20) -> float:
    """Share of letters in pronounceable segments (identifiers ~1, random noise ~0.3)."""
    parts = [p for p in _IDENT_PART.findall(value) if p.isalpha()]
    total = sum(len(p) for p in parts)
    good = sum(len(p) for p in parts if pronounceable(p, longest))
    return good / total if total else 0.0


_TEMPLATE = re.compile(
    r"\$\{?\{?[ \t]*[\w.\-]+(?:[ \t]*[|:][^}]*)?[ \t]*\}?\}?|\{\{?[ \t]*[\w.\-| ()'\"]+\}\}?|"
    r"%\(?\w+\)?s?|%\w+%|<[^<>]+>|&lt;.*&gt;|\$\(.*\)|\[REDACTED:[a-z0-9_]+\]|\[[A-Z_]+\]"
)


def placeholder(value: str, words: frozenset[str] | None = None) -> bool:
    """A value that stands for a secret: a template, variable, filler or a sample word
    (`words`: the words that are never values; default `WORDS`)."""
    v = value.strip().strip("\"'`")
    if len(v) < 3 or MARKER.search(v) or _TEMPLATE.fullmatch(v):
        return True
    low = v.lower()
    if (
        low in (WORDS if words is None else words)
        or re.fullmatch(r"[x*#.\-_•0]+|\.\.\.|…", low)
        or len(set(low)) <= 2
    ):
        return True
    if (
        len(low) >= 6 and (low in "01234567890123456789012345678901" or low in _ALPHABET)
    ) or re.search(r"<[A-Za-z_ ]", v):
        return True  # 1234567890123456, <your key>, hvs.<token>
    if any(p in low for p in ("example", "placeholder", "xxxx", "your_", "your-", "yourpass",
                              "changeme", "change_me", "redacted", "dummy", "...")):  # fmt: skip
        return True
    if re.fullmatch(r"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*", v) and ("_" in v or len(v) <= 12):
        return True  # an environment variable's name
    return low.startswith(("process.env", "os.environ", "os.getenv", "env.", "secrets.",
                           "settings.", "config.", "self.", "this.", "vault:", "arn:"))  # fmt: skip


_ALPHABET = "abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyz"
# English words a credential word is followed by in prose and code (never values).
WORDS = frozenset(
    ("none", "null", "nil", "true", "false", "undefined", "empty", "required", "optional",
     "string", "str", "bytes", "int", "bool", "secret", "password", "token", "key", "value",
     "default", "is", "was", "are", "the", "a", "an", "to", "for", "of", "in", "on", "and", "or",
     "not", "be", "with", "from", "this", "that", "it", "its", "your", "my", "our", "their",
     "new", "old", "set", "unset", "get", "use", "used", "using", "reset", "change", "changed",
     "rotate", "rotated", "expired", "invalid", "valid", "wrong", "incorrect", "correct",
     "missing", "stored", "hidden", "hashed", "encrypted", "here", "there", "below", "above",
     "field", "type", "length", "manager", "policy", "prompt", "input", "file", "env", "name",
     "auth", "login", "user", "username", "email", "account", "admin", "root", "test", "dummy",
     "example", "sample", "placeholder", "changeme", "xxx", "tbd", "todo", "n/a", "same",
     "different", "also", "still", "now", "then", "please", "should", "must", "can", "will",
     "if", "when", "which", "where", "how", "what", "why", "but", "so", "as", "at", "by",
     "into", "via", "per", "id", "ids", "hash", "bearer", "basic", "header", "headers",
     "authorization", "endpoint", "url", "uri", "path", "scope", "scopes", "expiry", "ttl",
     "refresh", "access", "api", "client", "service", "public", "private", "format", "count",
     "limit", "size", "prefix", "version", "needed", "provided", "given", "ok", "okay",
     "fine", "yes", "no", "self", "cls", "args", "kwargs", "params", "options", "opts",
     "config", "settings", "data", "result", "response", "request", "payload", "body", "text",
     "message", "error", "err", "exception", "number", "object", "list", "array", "dict",
     "map", "any", "unknown", "void", "char", "buffer", "function", "fn", "func", "lambda",
     "return", "const", "let", "var", "def", "new", "await", "async")
)  # fmt: skip

# -- keyword + value ---------------------------------------------------------------------------

_KEYWORD = re.compile(
    r"(?:(?<![A-Za-z0-9])|(?<=[a-z])(?=[A-Z])|(?<=[A-Z])(?=PASSWORD|PASSWD|SECRET|TOKEN|APIKEY))"
    r"(?i:pass(?:word|wd|phrase|code)?|pwd|secret|tokens?|api[_\- ]?keys?|keys?|auth|"
    r"authorization|credentials?|creds|passwort|kennwort|mot de passe|contraseña|clave|senha|"
    r"пароль|密码|パスワード|clé|schlüssel|jeton)(?![a-z0-9])"
)
# Words that are never a value in a tight `name=value` / `Name:value` pair of code or data.
CODE_WORDS = frozenset(
    ("none", "null", "nil", "true", "false", "undefined", "empty", "required", "optional",
     "string", "str", "bytes", "int", "bool", "self", "value", "default", "secret", "password",
     "passwd", "token", "key", "auth", "env", "basic", "bearer", "digest", "oauth", "oauth2",
     "jwt", "apikey", "api_key", "hidden", "masked", "redacted", "yes", "no", "on", "off")
)  # fmt: skip
_TAIL = re.compile(r"[A-Za-z0-9_\-]*")
# Qualifiers that make a credential name a non-secret setting (letter-bounded: `_count`).
_QUALIFIER = re.compile(
    r"(?<![a-z])(?:ids?|type|name|hash|digest|fingerprint|length|len|count|size|format|path|"
    r"file|url|uri|header|prefix|expir\w*|ttl|min|max|color|colour|field|policy|label|env|"
    r"var|input|manager|reset|store|storage|provider|source|endpoint|timeout|ref|usage|limit|"
    r"rotation|version|schema|algorithm|alg|kind|mode|index|position|radius|width|border|"
    r"page|next|cursor|continuation|sync|pad|bos|eos|unk|sep|mask|cls|csrf|xsrf|error|"
    r"exception|event|map|list|set|fn|func|callback|handler|class|struct|enum|hex|bytes)"
    r"(?![a-z])",
    re.I,
)
_ASSIGN = re.compile(r"[\"'`\]]{0,2}(?P<sp>[ \t]*)(?::=|=>|->|=|:(?!:))(?P<sp2>[ \t]*)")
_SCHEME = re.compile(
    r"[\"']?(?:bearer|basic|token|digest|apikey|api-key|sso-key|[a-z][\w\-]{1,20})[ \t]+", re.I
)
_QUOTED = re.compile(r"\"([^\"\n]{1,200})\"|'([^'\n]{1,200})'|`([^`\n]{1,200})`|“([^”\n]{1,200})”")
_WORD = re.compile(r"[`\"'“‘(]?([^\s`\"'“”‘’,;(){}\[\]<>|\\]+)[`\"'”’)]?")
# Where the sentence after a credential word ends, or turns out to be code (`=`, `{`, `f(x`).
_SENTENCE_END = re.compile(r"[.!?](?:\s|$)|\n|(?<!\\)\\[nrt]|—| - | \+ |[={};\[]|\((?![`\"'])")
_COLOUR = re.compile(r"#[0-9a-fA-F]{3,8}")
# A run of non-blanks up to a JSON escape of a line break, tab or quote (`\n`, `\"`): a tool
# input is stored as JSON, where that escape ends the line or the string the value is in.
_RUN = re.compile(r"(?:[^\s\\]|\\\\|\\(?![nrt\"]))+")
# Interpolation in a quoted string (`${token}`, `{{ key }}`, `#{secret}`): its value comes
# from elsewhere at run time.
_INTERPOLATION = re.compile(r"[$#]\{[ \t]*[A-Za-z_][^{}]*\}|\{\{[ \t]*[A-Za-z_.][^{}]*\}\}")
# A count with its unit, an approximation, a range or a ratio (`61ms`, `~9k`, `1.5GB`, `3/4`,
# `10MB/s`): what a sentence puts after "token" or "key" when it measures, never a value.
_QUANTITY = re.compile(r"[~≈<>±+\-]?\d+(?:[.,:/x×\-]\d+)*(?:[A-Za-zµ]{1,3}|%)?(?:/[A-Za-z]{1,3})?")


def value_like(value: str, *, quoted: bool) -> bool:
    """Could `value`, written after a credential word, be the secret itself?"""
    if placeholder(value) or value.lower().rstrip(".:") in WORDS or value.startswith(PUBLIC):
        return False
    if quoted and _INTERPOLATION.search(value):
        rest = _INTERPOLATION.sub(" ", value).split()
        if all(re.fullmatch(r"[A-Za-z]+:?", w) and not typed_noise(w) for w in rest):
            return False  # `Bearer ${token}`: built at run time from a value kept elsewhere
    if "://" in value and "@" not in value:
        return False  # a URL without credentials
    if value.startswith(("/", "./", "~/", "../", "http", "-")) or value.endswith(":"):
        return False
    if value.endswith("=") and not re.fullmatch(r"[A-Za-z0-9+/_\-]{12,}={1,2}", value):
        return False  # `token=`: a name without its value; base64 keeps its padding
    if re.fullmatch(r"[\w.+\-]+@[\w\-]+(?:\.[\w\-]+)+", value) or _COLOUR.fullmatch(value):
        return False  # an e-mail address, a colour
    if re.fullmatch(
        r"[A-Za-z_]\w*(?:(?:\.|::|->)[A-Za-z_]\w*|\[[^\]]*\])+(?:\(.*)?|\w+\(.*", value
    ):
        return False  # self.token, fs.readFileSync, Foo::bar, config['password'], a call
    if re.fullmatch(r"[A-Za-z0-9]+(?:_[A-Za-z0-9]+)+", value) and wordy(value) >= 0.8:
        return False  # start_line, 3way_comparison: an identifier made of words
    name = re.fullmatch(r"[A-Za-z_][\w\-]*", value) and _KEYWORD.search(value)
    if name and (not any(c.isdigit() for c in value) or wordy(value) >= 0.6):
        return False  # api_key, SRP_user_pwd, DstKey: a name, not a value
    if re.match(r"(?i)(?:sha\d*|md5|blake\d*)[-:]|\w+=|[A-Za-z_]\w*\[", value):
        return False  # pin-sha256, error=1, Tuple[str
    if re.fullmatch(r"[\w.]+(?:[*+/%][\w.]+)+", value) or re.search(r"\{[\w.]*:[^{}]*\}", value):
        return False  # 1*tchar, a + b: an expression; "={:02X}": a format string
    if re.fullmatch(r"[#+]?\d{1,9}|v?\d+(?:\.\d+)+\w*|[+\-]+", value):
        return False  # a count, a port, an issue, a version, a diffstat
    if re.fullmatch(r"[\w\-]+(?:/[\w.\-]+)+", value) and wordy(value) >= 0.6:
        return False  # a relative path or an object key
    has_digit = any(c.isdigit() for c in value)
    symbol = any(not c.isalnum() and c not in "-_." for c in value)
    non_ascii = any(ord(c) > 127 and c.isalpha() for c in value)
    mixed = any(c.isupper() for c in value[1:]) and any(c.islower() for c in value)
    if quoted:
        return wordy(value, longest=14) < 0.9 or has_digit or symbol or len(value) <= 12
    if value[0] in "*(:&!?":
        return False  # **kwargs, *ptr, (k), :/tmp, &ref, !flag: code
    if not (has_digit or symbol or mixed or non_ascii):
        return value.isalpha() and (typed_noise(value) or len(value) > 14)
    if len({c for c in value if not c.isalnum() and c not in "-_."}) >= 3:
        return True  # {{h}o)p${e]…}}: a symbol soup is no word and no template
    if non_ascii and not (has_digit or symbol):
        return False  # a word of another language
    return wordy(value) < 0.8 or has_digit


def _case_of_a_name(word: str) -> bool:
    return all(
        p.islower() or p.isupper() or (p[0].isupper() and p[1:].islower())
        for p in re.split(r"[_\- ]+", word)
        if p
    )


def keyword_values(view: str) -> list[tuple[str, int, int]]:
    out: list[tuple[str, int, int]] = []
    markers = [x.span() for x in MARKER.finditer(view)]
    for m in _KEYWORD.finditer(view):
        word = m.group(0)
        if not _case_of_a_name(word) or any(a <= m.start() < b for a, b in markers):
            continue  # `keY2z…` inside a blob, `[REDACTED:github_token]`
        if word.isupper() and len(word) > 1 and view[m.end() : m.end() + 1].isupper():
            continue  # TOKENIZER
        tail = _TAIL.match(view, m.end())
        assert tail is not None
        head = re.search(r"[A-Za-z0-9_\-]*$", view[max(0, m.start() - 30) : m.start()])
        name = (head.group(0) if head else "") + word + tail.group(0)
        name_start = m.start() - (len(head.group(0)) if head else 0)
        if view[max(0, name_start - 1) : name_start] in ("{", "$", "%"):
            continue  # ${POSTGRES_PASSWORD}, $API_KEY, %TOKEN%: a variable, its value elsewhere
        if _QUALIFIER.search(re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name)) or "--" in tail.group(0):
            continue  # token_count, PASSWORD_MIN_LENGTH, nextPageToken, PRIVATE KEY-----
        after = tail.end()
        if view[after : after + 1] in ("(", "."):
            continue  # password_hash(…), token.split(…): code on the name
        op = _ASSIGN.match(view, after)
        if op is not None and op.group(0).strip():
            at = op.end()
            if word.lower() == "authorization" and (s := _SCHEME.match(view, at)):
                at = s.end()
            tight = not op.group("sp") and not op.group("sp2")
            found = _assigned(view, at, tight=tight, word=word)
            if found is not None:
                out.append(("keyword_value", *found))
            continue
        if word.lower() == "authorization":
            continue
        named = name != word  # private_key '…' (a name), not the key "view" (a word)
        q = _QUOTED.match(view, after + 1) if named and view[after : after + 1] == " " else None
        if q is not None:
            g = next(i for i in (1, 2, 3, 4) if q.group(i) is not None)
            if value_like(q.group(g).strip(), quoted=True):
                out.append(("keyword_value", *q.span(g)))  # private_key '…';
                continue
        found = _in_prose(view, after)
        if found is not None:
            out.append(("keyword_value", *found))
    return out


def _assigned(view: str, at: int, *, tight: bool, word: str) -> tuple[int, int] | None:
    """The value right after an assignment operator, or the K8s `value:` on the next line.
    `tight`: no space around the operator (`DB_PASSWORD=x`, `Token:x`): data, not prose, so
    any bare word that is not a code word, and not a variable used elsewhere in the text."""
    if view.startswith(("\n", "\r\n"), at) or at >= len(view):
        nxt = re.compile(r"\r?\n[ \t]*\"?value\"?[ \t]*:[ \t]*[\"']?([^\s\"'\n]+)").match(view, at)
        if nxt is not None and value_like(nxt.group(1), quoted=True):
            return nxt.span(1)
        return None
    q = _QUOTED.match(view, at)
    if q is not None:
        g = next(i for i in (1, 2, 3, 4) if q.group(i) is not None)
        value = q.group(g).strip()
        ok = value and value_like(value, quoted=True) and not _QUALIFIER.fullmatch(value)
        return q.span(g) if ok else None
    raw_m = _RUN.match(view, at)
    if raw_m is None:
        return None
    raw = _balanced(raw_m.group(0).rstrip("\\\"'`,;."))
    first = _balanced(re.match(r"[^\s\"'`,;&]*", raw).group(0).rstrip("\\."))  # type: ignore[union-attr]
    rest = raw[len(first) :]
    value = first if re.fullmatch(r"(?:[;&,][\w.\-]+=\S*)*[;&,]?", rest) else raw
    if not value or MARKER.search(value):
        return None
    if value == first and placeholder(first, CODE_WORDS if tight else None):
        return None
    follows = view[raw_m.start() + len(value) : raw_m.start() + len(value) + 1]
    generic = word.lower() in ("key", "keys", "auth")  # HandlePowerKey=reboot, sortKey=name
    if (
        tight
        and not generic
        and follows not in (",", ")")
        and value.isidentifier()
        and len(value) >= 3
    ):
        pattern = rf"(?<![\w$]){re.escape(value)}(?!\w)"
        if value.lower() in CODE_WORDS or len(re.findall(pattern, view)) > 1:
            return None  # password=None, password=password (a variable passed on)
        return raw_m.start(), raw_m.start() + len(value)
    if not value_like(value, quoted=False):
        return None
    return raw_m.start(), raw_m.start() + len(value)


def _balanced(value: str) -> str:
    """`value` without closing brackets it never opened (`x)` in `f(password=x)`)."""
    while value and value[-1] in ")]}":
        opener = "([{"[")]}".index(value[-1])]
        if value.count(value[-1]) <= value.count(opener):
            break
        value = value[:-1]
    return value


def _in_prose(view: str, after: int) -> tuple[int, int] | None:
    """The first value-like word of the sentence after a credential word (≤ 60 characters)."""
    if view[after : after + 1] not in (" ", "\t"):
        return None  # user:password@host, key, end = …: glued to what follows, not prose
    line_end = view.find("\n", after)
    line_end = len(view) if line_end < 0 else line_end
    stop = _SENTENCE_END.search(view, after, min(line_end, after + 60))
    end = stop.start() if stop else min(line_end, after + 60)
    gap_start = after
    for w in _WORD.finditer(view, after, end):
        value = w.group(1).rstrip(".,:;!?")
        if (
            MARKER.search(view, w.start(), w.end() + 12)
            or "[REDACTED" in view[gap_start : w.start()]
        ):
            return None  # the value was redacted at index time
        if _QUALIFIER.search(view[gap_start : w.start()]):
            return None  # "the token type is …", "key id: …"
        quoted = w.group(0)[:1] in "`\"'“‘" and w.group(0)[-1:] in "`\"'”’"
        if quoted and value.isalpha() and value.islower() and pronounceable(value, 12):
            continue  # the key "view": a word named in prose
        if quoted and _name_of_words(value):
            continue  # the key `user_id`, the token `parserGlyph`: a name named in prose
        if not quoted and not _sentence_value(value):
            continue  # the token queue, a token 61ms, the key DuckDB: words and measures
        if value and value_like(value, quoted=quoted):
            return w.start(1), w.start(1) + len(value)
    return None


def _sentence_value(word: str) -> bool:
    """Whether a bare word of a sentence is shaped like a value, as far as prose goes: not
    a quantity (`61ms`, `~9k`, `1.5GB`) and not a name made of words and acronyms
    (`DuckDB`, `GitHub`, `getElementById`); `value_like` then judges what is left."""
    if _QUANTITY.fullmatch(word):
        return False
    if word.isalpha() and any(c.isupper() for c in word[1:]):
        return not all(_spelled(p) for p in _IDENT_PART.findall(word))
    return True


def _spelled(part: str) -> bool:
    """A piece of a name a speller wrote: an acronym (`DB`, up to five capitals), a letter,
    or a run with a vowel and few consonant pairs English does not use."""
    if len(part) <= 1 or part.isupper() and len(part) <= 5:
        return True
    low = part.lower()
    return any(c in "aeiouy" for c in low) and _odd_pairs(low) <= max(1, len(low) // 4)


def _name_of_words(value: str) -> bool:
    """An identifier made of two or more words (`user_id`, `parserGlyph`, `cache-key`):
    letters only, no piece of them typed noise, at most one piece under three letters."""
    if not re.fullmatch(r"[A-Za-z]+(?:[_.\-]?[A-Za-z]+)*", value):
        return False
    parts = [p for chunk in re.split(r"[_.\-]+", value) for p in _IDENT_PART.findall(chunk)]
    if len(parts) < 2 or any(typed_noise(p) for p in parts):
        return False
    return sum(len(p) < 3 for p in parts) <= 1


# -- connection strings and hand-overs ---------------------------------------------------------

_CONN = re.compile(
    r"(?i)(?<=;)[ \t]*(?:password|pwd)[ \t]*=[ \t]*([^;\"'\s&]{3,128})(?=;|[\"'\s]|$)|"
    r"(?<![\w.])(?:password|pwd)[ \t]*=[ \t]*([^;\"'\s&(),]{3,128});"
)
_HANDOVER = re.compile(
    r"(?i)\b(?:set|changed?|updated?|rotated?|put)[ \t]+(?:the|my|our|your)[ \t]+"
    r"(?P<name>[\w\-. ]{2,30}?)[ \t]+to[ \t]+[`\"']?(?P<v>[^\s`\"']{16,200})|"
    r"\b(?:use|try|here(?:'s| is))[ \t]+(?:this|these|the|my)[ \t]+(?P<name2>[\w\-. ]{2,40}?)"
    r"[^\n:]{0,40}:[ \t]+[`\"']?(?P<v2>[^\s`\"']{16,200})|"
    r"(?P<name3>[A-Za-z][\w\- ]{1,40})[ \t]+(?:->|=>|→)[ \t]+(?P<v3>\S{3,128})[ \t]*$"
)
_NOT_SECRET_NAME = re.compile(
    r"(?i)sha|md5|hash|checksum|digest|commit|revision|\brev\b|version|tag|branch|image|"
    r"uuid|guid|\bids?\b|request|trace|session|build|run|order|file|path|url|model|name|date"
)


def opaque(value: str) -> bool:
    """A run no one would type as a word: 16+ characters mixing letters with digits/symbols."""
    v = value.rstrip(".,;)")
    has_alpha = any(c.isalpha() for c in v)
    has_other = any(not c.isalpha() for c in v)
    return len(v) >= 16 and has_alpha and has_other and wordy(v) < 0.6 and entropy(v) >= 3.0


def connection_values(view: str) -> list[tuple[str, int, int]]:
    out: list[tuple[str, int, int]] = []
    for m in _CONN.finditer(view):
        g = 1 if m.group(1) is not None else 2
        if not placeholder(m.group(g)) and not MARKER.search(m.group(g)):
            out.append(("connection_password", *m.span(g)))
    return out


def handover_values(view: str) -> list[tuple[str, int, int]]:
    out: list[tuple[str, int, int]] = []
    for m in _HANDOVER.finditer(view):
        if m.group("v3") is not None:
            name, value, span = m.group("name3"), m.group("v3"), m.span("v3")
            v = value.rstrip(".")
            if not _KEYWORD.search(name) or MARKER.search(v) or _TEMPLATE.fullmatch(v):
                continue  # "password for the vm -> X": only after a credential word
            if _KEYWORD.fullmatch(v) or v.startswith(("/", "http", "&", "(")):
                continue
        else:
            g = "v" if m.group("v") is not None else "v2"
            name, value, span = m.group("name") or m.group("name2"), m.group(g), m.span(g)
            if not opaque(value) or MARKER.search(value):
                continue
        if _NOT_SECRET_NAME.search(name):
            continue
        out.append(("handover_value", span[0], span[0] + len(value.rstrip(".,;)"))))
    return out
