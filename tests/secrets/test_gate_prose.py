"""The publish gate reads a credential word as evidence only when a value follows it.

Prose that uses token, key, secret, password, pass, auth or credential in their ordinary
senses (tests/secrets/prose_corpus.py, generated) is published; a value written after such a
word in assignment, colon or quote syntax, or a value-shaped run in a sentence, is still held
back. Values are generated per run, never real credentials."""

from __future__ import annotations

import json
import random

import pytest
from prose_corpus import prose_chunks
from secret_corpus import ALNUM, Gen

from funes.redact import default_scanner, gate_scanner, redact

SYMBOLS = "!#%&*+-=?@^_~"
GATE, INDEX = gate_scanner(), default_scanner()


def _held(text: str) -> bool:
    """The gate holds `text` back, as a push sees it (after index-time redaction)."""
    return bool(GATE.scan(redact(text, INDEX)[0]))


def _covered(text: str, value: str) -> bool:
    start = text.index(value)
    end = start + len(value)
    return any(f.start < end and f.end > start for f in GATE.scan(text))


def test_the_gate_publishes_technical_prose_about_credentials() -> None:
    chunks = prose_chunks(400, seed=29)
    held = [c for c in chunks if _held(c)]
    assert held == [], f"{len(held)} of {len(chunks)} held back, e.g. {held[:3]}"


@pytest.mark.parametrize(
    "code",
    [
        "pub struct Pair {\n    pub key: String,\n    pub value: String,\n}\n",
        "let (k, v) = s.split_once('=').context(\"--field expects KEY=VALUE\")?;\n",
        "create table jobs (\n  dedupe_key   text not null unique,\n  payload jsonb\n);\n",
        "await sql`delete from device_tokens where token = ${token}`;\nreturn { ok: true };\n",
        "headers: { authorization: `Bearer ${await getAccessToken()}` },\n",
    ],
)
def test_the_gate_publishes_code_carried_in_a_json_tool_input(code: str) -> None:
    """Tool inputs are stored as compact JSON: line breaks and quotes arrive escaped."""
    text = json.dumps({"file_path": "/src/app/mod.rs", "content": code}, separators=(",", ":"))
    assert not _held(text), text


def _values(seed: int) -> list[str]:
    g = Gen(seed)
    r = random.Random(seed)
    out = []
    for _ in range(12):
        out.append(g.mixed(ALNUM, r.randint(10, 40)))  # generated token
        out.append(g.s("abcdefghijklmnopqrstuvwxyz", r.randint(4, 7)) + str(r.randint(10, 9999)))
        out.append(g.s(ALNUM, 6) + r.choice(SYMBOLS) + g.s(ALNUM, 5) + r.choice(SYMBOLS))
        out.append(g.s("0123456789abcdef", 32))
    return out


_FORMS = (
    "{name}={v}\n",
    "export {NAME}={v}\n",
    "{name}: {v}\n",
    '{{"{name}": "{v}"}}',
    "{name} = '{v}'\n",
    '  {name}: "{v}"\n',
    "the {word} is {v} for now",
    "here is the {word}: {v}",
    'the {word} is "{v}"',
    "use the {word} `{v}` for staging",
)
_NAMES = (
    ("password", "db_password"),
    ("token", "api_token"),
    ("secret", "client_secret"),
    ("API key", "api_key"),
    ("passphrase", "key_passphrase"),
    ("credential", "smtp_credential"),
)


def test_values_after_credential_words_are_still_held_back() -> None:
    missed = []
    r = random.Random(31)
    for i, v in enumerate(_values(31)):
        word, name = _NAMES[i % len(_NAMES)]
        form = _FORMS[r.randrange(len(_FORMS))]
        text = form.format(name=name, NAME=name.upper(), word=word, v=v)
        if not _covered(text, v):
            missed.append(text)
    assert missed == []


@pytest.mark.parametrize(
    "text,value",
    [
        ("the staging token is Xq7rT2mZ9pL4 until Friday", "Xq7rT2mZ9pL4"),
        ("my password is hunter2024 so log in with that", "hunter2024"),
        ("Token Kp9$wz!Lm2 works on the box", "Kp9$wz!Lm2"),
        ("the db password is correct horse qzvbxkt staple", "qzvbxkt"),
    ],
)
def test_a_value_shaped_word_in_a_sentence_is_held_back(text: str, value: str) -> None:
    assert _covered(text, value)
