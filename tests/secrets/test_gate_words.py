"""The publish gate's own shapes (funes.redact.residual, .residual_words): how secrets are
written when no vendor format announces them, and the look-alikes the gate must publish.

Values are generated per run (never a real credential); the look-alikes are shapes of code,
data and prose an agent's memory is full of."""

from __future__ import annotations

import hashlib

import pytest
from secret_corpus import ALNUM, Gen

from funes.redact import gate_scanner
from funes.redact.residual import scan_residual
from funes.redact.residual_words import pronounceable, wordy

LOWER = "abcdefghijklmnopqrstuvwxyz"
CONSONANTS = "bcdfghjklmnpqrstvwxz"
HEX = "0123456789abcdef"
SOUP = "abcdefghijklmnopqrstuvwxyz{}()[]$#>-_"


def _held(text: str, value: str) -> bool:
    """The gate finds something in `text`, and some finding covers part of `value`."""
    start = text.index(value)
    end = start + len(value)
    return any(f.start < end and f.end > start for f in gate_scanner().scan(text))


def _secrets() -> list[tuple[str, str, str]]:
    g = Gen(1717)
    pw = g.s(LOWER, 5) + "$;" + g.s(LOWER, 4) + "|&"
    hex32, hex64, hex34 = g.s(HEX, 32), g.s(HEX, 64), "11" + g.s(HEX, 32)
    soup = "{{" + g.s(SOUP, 28) + "}}"
    noise = g.s(CONSONANTS, 7)
    mixed = g.mixed(ALNUM, 72)
    short = g.s(LOWER, 5) + "0" + g.s(LOWER, 5) + "4" + g.s(LOWER, 2) + "1"
    return [
        ("camel name, JSON", f'{{\n  "acme.smtpPass": "{pw}"\n}}', pw),
        ("camel name with a tail", f'+  "mjApikeyPrivate": "{hex32}",', hex32),
        ("upper-case glued name", "export PGPASSWORD=sunflower\n", "sunflower"),
        ("a Go struct printed to a log", "config: &{Endpoint:https://api.test Token:qpls Timeout:30s}", "qpls"),
        ("a word in a tight pair", "config: &{Endpoint:https://api.test Token:invalid Timeout:30s}", "invalid"),
        ("symbol soup after =", f"protocol=https\nhost=github.com\npassword={soup}\n", soup),
        ("symbol soup in a subscript", f"some_dict['secret'] = {soup}", soup),
        ("Authorization with a scheme", f'curl -H "Authorization: Bearer {soup}" https://api.test', soup),
        ("a quoted value after a name", f"private_key '{soup}';", soup),
        ("unpronounceable word in prose", f"the postgres password is correct horse {noise} staple", noise),
        ("glued words quoted in prose", "The key you pasted (`opensesameforever`) returns 401", "opensesameforever"),
        ("a connection string", "Open(\"Server=db01;User ID=app_user; Password =billing_user;Initial Catalog=B;\")", "billing_user"),
        ("a literal in a kubectl flag", "kubectl create secret generic s --from-literal=db_password=billing_user -n prod", "billing_user"),
        ("set the <name> to <value>", f"Done. I've set the linode to {hex64} in the staging config.", hex64),
        ("use this <name>: <value>", f"use this assemblyai for the integration test: {hex32} — and tell me", hex32),
        ("an arrow after a credential word", "password for the vm -> invalid", "invalid"),
        ("hex of no digest length", f"{hex34}\n", hex34),
        ("a token after a 'name:' line", f'\t\tname: "valid pattern",\n\t\tinput: `mailgun \'{mixed}\'\n`,', mixed),
        ("a short value ending a line", f"ok I created a new one: {short}\nretry the sync", short),
    ]  # fmt: skip


@pytest.mark.parametrize("name,text,value", _secrets(), ids=[s[0] for s in _secrets()])
def test_the_gate_holds_back_secrets_written_without_a_format(
    name: str, text: str, value: str
) -> None:
    assert _held(text, value), name


def _lookalikes() -> list[tuple[str, str]]:
    digest = hashlib.sha256(b"funes").hexdigest()
    md5 = hashlib.md5(b"funes").hexdigest()  # noqa: S324 - a look-alike, not security
    return [
        ("a count named after tokens", '{"uuid": "5e1c", "token_count": 422}, {"uuid": "7a2f"}'),
        ("a setting about passwords", "PASSWORD_MIN_LENGTH=12\nTOKEN_EXPIRY_MINUTES=15\n"),
        ("a page token", '{"items": [], "nextPageToken": "CAoQAA"}'),
        ("tokenizer specials", '{"eos_token": "</s>", "pad_token": "[PAD]"}'),
        ("a KeyError naming a key", "    return cfg[key]\nKeyError: 'api_key'"),
        ("a password read at run time", "token = get_token()\npassword = getpass.getpass()\n"),
        ("a variable passed on", "client = Client(host=host, password=password, port=5432)"),
        ("a subscript", "self.password = config['password']\n"),
        ("a CSS variable", ":root { --background: #0b0c0d; --token-color: #123456; }"),
        ("a systemd key", "#HandlePowerKey=poweroff\n#HandleRebootKey=reboot\n"),
        ("an identifier after 'key:'", "  # overload key: 3way_comparison\n"),
        ("a macro of names", "SKM_DEFINE_STACK_OF_INTERNAL(SRP_user_pwd, SRP_user_pwd, SRP_user_pwd)"),
        ("C declarations", "void f(ResourceKey DstKey, ResourceKey SrcKey);\nsk_SRP_gN_cache_sort(x);"),
        ("include paths", '#include "llvm/ADT/StringRef.h"\n#include "llvm/XRay/XRayRecord.h"'),
        ("a long camel identifier", "MaterializationResponsibility &MR, ossl_DER_w_algorithmIdentifier_ED448"),
        ("prose about rotating", "the old token leaked, so rotate your password and update the config."),
        ("a digest named as such", f"sha256: {digest}\n"),
        ("a bare md5 with no credential word", f"{md5}  backup.tar.gz\n"),
        ("a commit subject", "    Rotate the API key handling (#1200)\n src/auth/keys.py | 14 +++++++-------"),
        ("a redacted value and what follows", '{"command":"curl -H \'Bearer [REDACTED:openai_key]\'","description":"Run it"}'),
        ("templates in a URL", "DATABASE_URL=postgres://${POSTGRES_USER}:${POSTGRES_PASSWORD}@db:5432/${POSTGRES_DB}"),
        ("an elided key", "OPENAI_API_KEY=sk-...  # paste your key here"),
        ("a method call returning a list", "      algorithms: [this.pickIntegrityAlgorithm()]\n"),
        ("a docker volume flag", 'docker run -it --rm -v "$PWD":/tmp -w /tmp node:latest npm test'),
        ("a Java doc", " * 7748 such as the XDH {@code KeyAgreement} algorithm."),
        ("a host triple", 'define PLATFORM "platform: darwin64-x86_64-cc"\n'),
        ("an e-mail in package.json", '"email": "8790386+someone@users.noreply.github.com"\n'),
        ("a sample value in a template", "API_KEY=<your key>\nVAULT_TOKEN=hvs.<token>\n"),
        ("a user:password URL sample", "DATABASE_URL=postgres://user:password@localhost:5432/app"),
        ("a filler run", "api_key = 1234567890123456\n"),
        ("code after a name in a tuple", "        key, end = scanstring(s, end, strict)\n"),
        ("a grammar rule", "# token          = 1*tchar\n"),
        ("a set literal", "    for key in {'__name__', '__doc__'}:\n"),
        ("a type alias", "Key = Tuple[str, int]\n"),
        ("an expression on bytes", "        password = password + b'\\x00' * 4\n"),
        ("a word named in prose", 'the command is stored with the key "view" in the table'),
        ("a format string", '            self[key] = "={:02X}".format(c)\n'),
    ]  # fmt: skip


@pytest.mark.parametrize("name,text", _lookalikes(), ids=[x[0] for x in _lookalikes()])
def test_the_gate_publishes_look_alikes(name: str, text: str) -> None:
    assert scan_residual(text) == [], name


def test_pronounceable_tells_words_from_typed_noise() -> None:
    for word in ("update", "algorithm", "password", "instructions", "materialization"):
        assert pronounceable(word), word
    g = Gen(5)
    for _ in range(20):
        assert not pronounceable(g.s(CONSONANTS, 7))
    assert wordy("start_line") == 1.0 and wordy(g.mixed(ALNUM, 24)) < 0.7
