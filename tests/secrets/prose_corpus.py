"""Technical prose that uses credential words in their ordinary senses, and holds no secret.

The publish gate looks for a credential word (token, key, secret, password, pass, auth,
credential, …) followed by a value. Engineers write those words all day without a value
after them: a lexer's token, a primary key, a compiler pass, the password reset flow. This
corpus is generated from a small grammar over generic vocabulary (no sentence is written
for a particular rule), so every credential word is followed, somewhere, by a noun, a verb,
an adjective, an adverb, a preposition, a quantity with its unit, a capitalised word, a
hyphenated word and an identifier in backticks.

* `prose_chunks(n=2000, seed=3) -> list[str]`: `n` paragraphs of 1–4 sentences each, the
  way an assistant's text block reads; deterministic for a seed.
* `CREDENTIAL_WORDS`: the words placed, as they are written in prose.

Nothing here is, or looks like, a credential: a value of the gate's shapes never appears.
"""

from __future__ import annotations

import random

CREDENTIAL_WORDS = (
    "token", "tokens", "key", "keys", "secret", "secrets", "password", "passwords", "pass",
    "passes", "auth", "credential", "credentials", "creds", "passphrase", "passcode",
    "API key", "api key", "authorization", "Token", "Key", "Password", "Auth",
)  # fmt: skip

NOUNS = (
    "queue", "buffer", "parser", "lexer", "compiler", "scheduler", "worker", "request", "cache",
    "table", "column", "index", "schema", "migration", "bucket", "stream", "iterator", "window",
    "reader", "writer", "handler", "router", "service", "module", "package", "function",
    "method", "struct", "field", "record", "entry", "event", "message", "payload", "header",
    "session", "cookie", "client", "server", "socket", "thread", "process", "signal", "timer",
    "counter", "limit", "budget", "quota", "rate", "latency", "throughput",
    "weeks", "strength", "strengths", "rhythm", "sketch", "script", "length",
    "width", "depth", "graph", "glyph", "syntax", "rule", "grammar", "sequence", "boundary",
    "prefix", "suffix", "pattern", "layer", "middleware", "flow", "screen", "form", "page",
    "dialog", "button", "field", "policy", "rotation", "store", "vault", "manager", "helper",
    "file", "folder", "path", "docs", "guide", "README", "changelog", "test", "suite", "fixture",
    "mock", "stub", "lock", "mutex", "channel", "pipe", "hook", "plugin", "extension",
    "lookup", "mapping", "dictionary", "hash", "ring", "shard", "partition", "replica",
    "cluster", "node", "pod", "container", "image", "volume", "mount", "network", "route",
    "prompt", "context", "embedding", "vocabulary", "tokenizer", "model", "checkpoint",
    "batch", "epoch", "gradient", "loss", "metric", "sample", "split", "stretch", "crunch",
    "throttle", "backoff", "retry", "timeout", "deadline", "budgeting", "strategy", "rewrite",
)  # fmt: skip
VERBS_S = (
    "expires", "drains", "splits", "feeds", "holds", "matches", "carries", "reaches", "stays",
    "changes", "moves", "breaks", "fails", "works", "returns", "survives", "rotates", "leaks",
    "expects", "covers", "gets", "needs", "keeps", "lives", "ends", "starts", "counts",
    "wraps", "points", "maps", "sorts", "flushes", "blocks", "wakes", "spins", "grows",
    "shrinks", "lands", "ships", "builds", "strips", "skips", "trims", "scans", "parses",
)  # fmt: skip
VERBS = (
    "check", "drain", "split", "feed", "hold", "match", "carry", "reach", "change", "move",
    "validate", "rotate", "refresh", "store", "hash", "encode", "decode", "strip", "trim",
    "sort", "merge", "flush", "read", "write", "fetch", "parse", "render", "cache", "retry",
    "log", "count", "skip", "wrap", "map", "filter", "group", "pin", "scope", "mask",
)  # fmt: skip
PAST = (
    "expired", "changed", "moved", "stored", "hashed", "checked", "rotated", "dropped",
    "issued", "parsed", "cached", "logged", "rejected", "accepted", "reused", "revoked",
    "refreshed", "truncated", "split", "merged", "skipped", "described", "documented",
)  # fmt: skip
ADJECTIVES = (
    "stale", "fresh", "new", "old", "long", "short", "empty", "full", "shared", "global",
    "local", "primary", "foreign", "composite", "unique", "nullable", "lazy", "eager", "safe",
    "unsafe", "strict", "loose", "slow", "fast", "first", "second", "final", "extra", "broken",
    "missing", "wrong", "right", "valid", "invalid", "cheap", "costly", "tiny", "huge",
    "rough", "smooth", "tight", "crisp", "strong", "weak", "dry", "wet", "quick", "thorough",
)  # fmt: skip
ADVERBS = (
    "quickly", "twice", "once", "again", "later", "early", "now", "here", "there", "anyway",
    "silently", "eventually", "immediately", "already", "still", "too", "instead", "first",
)  # fmt: skip
PREPOSITIONS = (
    "in", "on", "at", "by", "for", "from", "with", "without", "into", "onto", "over", "under",
    "through", "across", "after", "before", "between", "per", "via", "against", "around",
)  # fmt: skip
DETERMINERS = ("the", "a", "each", "every", "this", "that", "our", "one", "no", "any")
NAMES = (
    "Rust", "Python", "Postgres", "Redis", "Kafka", "Django", "React", "Linux", "GitHub",
    "Fastify", "Airflow", "DuckDB", "Celery", "Docker", "Kubernetes", "Monday", "Sunday",
    "January", "Chicago", "Berlin", "Alice", "Bob", "Maria", "Chen", "Okafor", "Nguyen",
)  # fmt: skip
UNITS = ("ms", "s", "m", "h", "d", "k", "K", "M", "x", "%", "KB", "MB", "GB", "px", "rem", "us")
SUBJECTS = ("we", "I", "you", "the team", "the test", "the code", "this change", "the caller")


def _ident(r: random.Random) -> str:
    """A name a programmer would write: snake, camel, kebab or dotted, made of nouns."""
    a, b = r.choice(NOUNS).lower(), r.choice(NOUNS).lower()
    style = r.randrange(4)
    if style == 0:
        return f"{a}_{b}"
    if style == 1:
        return a + b[:1].upper() + b[1:]
    if style == 2:
        return f"{a}-{b}"
    return f"{a}.{b}"


def _quantity(r: random.Random) -> str:
    n = r.choice((r.randint(1, 9), r.randint(10, 999), round(r.uniform(0.1, 99.9), 1)))
    return r.choice(("", "~", "≈", "<", ">")) + f"{n}{r.choice(UNITS)}"


def _follower(r: random.Random) -> str:
    """What comes right after a credential word, one of the word classes prose puts there."""
    kind = r.randrange(10)
    if kind == 0:
        return r.choice(NOUNS)
    if kind == 1:
        return r.choice(VERBS_S)
    if kind == 2:
        return r.choice(PAST)
    if kind == 3:
        return r.choice(PREPOSITIONS) + " " + r.choice(DETERMINERS) + " " + r.choice(NOUNS)
    if kind == 4:
        return r.choice(ADVERBS)
    if kind == 5:
        return _quantity(r)
    if kind == 6:
        return r.choice(NAMES)
    if kind == 7:
        return r.choice(ADJECTIVES) + "-" + r.choice(("level", "based", "aware", "wide", "only"))
    if kind == 8:
        return f"`{_ident(r)}`"
    return r.choice(("is", "was", "stays", "becomes")) + " " + r.choice(ADJECTIVES + PAST)


def _tail(r: random.Random) -> str:
    parts = [
        lambda: f"{r.choice(PREPOSITIONS)} {r.choice(DETERMINERS)} {r.choice(NOUNS)}",
        lambda: f"and {r.choice(VERBS_S)} {r.choice(ADVERBS)}",
        lambda: f"so {r.choice(SUBJECTS)} {r.choice(VERBS)} the {r.choice(NOUNS)}",
        lambda: f"when the {r.choice(NOUNS)} {r.choice(VERBS_S)}",
        lambda: f"after {_quantity(r)}",
        lambda: f"in `{_ident(r)}`",
        lambda: "",
    ]
    return r.choice(parts)()


def _sentence(r: random.Random) -> str:
    cred = r.choice(CREDENTIAL_WORDS)
    det = r.choice(DETERMINERS)
    frames = [
        lambda: f"{det} {cred} {_follower(r)} {_tail(r)}",
        lambda: f"{r.choice(SUBJECTS)} {r.choice(VERBS)} {det} {cred} {_follower(r)} {_tail(r)}",
        lambda: f"{det} {r.choice(ADJECTIVES)} {cred} {_follower(r)} {_tail(r)}",
        lambda: f"{r.choice(SUBJECTS)} pass {det} {r.choice(NOUNS)} to {det} {r.choice(NOUNS)}",
        lambda: f"the {cred} {r.choice(NOUNS)} is {r.choice(PAST)} in {r.choice(NOUNS)}",
        lambda: (
            f"✓ {r.choice(NOUNS)} > {r.choice(VERBS_S)} a {r.choice(ADJECTIVES)} {cred} "
            f"{_quantity(r)}"
        ),
        lambda: (
            f"{r.choice(NOUNS)} {cred} {_follower(r)}, {r.choice(NOUNS)} "
            f"{r.choice(VERBS_S)} {_tail(r)}"
        ),
        lambda: f"{cred} {r.choice(PREPOSITIONS)} {det} {r.choice(NOUNS)} {_follower(r)}",
    ]
    text = " ".join(r.choice(frames)().split())
    text = text[:1].upper() + text[1:]
    return text + r.choice((".", ".", ".", "!", "?", ":", ""))


def prose_chunks(n: int = 2000, seed: int = 3) -> list[str]:
    """`n` paragraphs of 1–4 generated sentences (see module docstring)."""
    r = random.Random(seed)
    out = []
    for _ in range(n):
        sentences = [_sentence(r) for _ in range(r.randint(1, 4))]
        out.append(r.choice((" ", " ", "\n")).join(sentences))
    return out
