"""One test per rule family and per context rule of the index-time scanner (funes' rules
alone, and with Kingfisher), and the look-alikes each must leave alone.

Values are minted per run from a seeded generator; prefixes are split in the source so this
file holds no secret-shaped literal.
"""

from __future__ import annotations

import json

import pytest
from field_corpus import ALNUM, B32, HEX, LO, UP, URLSAFE, Gen, _p

from funes.redact import RuleScanner, VendorScanner, default_scanner, redact
from funes.redact.vendor import rule_count

g = Gen(101)
D = "0123456789"


def _tool(command: str) -> str:
    return json.dumps({"command": command}, separators=(",", ":"))


# (name, text, value that must not survive) -------------------------------------------------
_pw = g.s(ALNUM + "!#%", 11)
_tok = g.s(ALNUM, 40)
PREFIXES = [
    ("vault service token", _p("hv", "s.") + g.s(URLSAFE, 94)),
    ("vault legacy token", "s." + g.s(ALNUM, 24)),
    ("1password service account", _p("op", "s_eyJ") + g.s(URLSAFE, 300)),
    ("1password secret key", "A3-" + "-".join(g.s(UP + D, n) for n in (6, 6, 5, 5, 5, 5))),
    ("sentry org token", _p("sntr", "ys_eyJ") + g.s(URLSAFE, 120)),
    ("notion token", _p("nt", "n_") + g.s(D, 11) + g.s(ALNUM, 35)),
    ("sourcegraph token", _p("sg", "p_") + g.s(HEX, 16) + "_" + g.s(HEX, 40)),
    ("grafana cloud token", _p("gl", "c_eyJ") + g.s(URLSAFE, 80)),
    ("fly token", _p("fo", "1_") + g.s(URLSAFE, 43)),
    ("heroku key", _p("HR", "KU-AA") + g.s(URLSAFE, 58)),
    ("tailscale key", _p("tsk", "ey-auth-") + g.s(ALNUM, 12) + "-" + g.s(ALNUM, 30)),
    ("terraform token", g.s(ALNUM, 14) + _p(".atl", "asv1.") + g.s(ALNUM, 67)),
    ("azure ad client secret", g.s(ALNUM, 3) + "8Q~" + g.s(ALNUM + "_~.-", 34)),
    ("stripe restricted prod key", _p("rk", "_prod_") + g.s(ALNUM, 99)),
    ("github app token with underscores", _p("gh", "s_") + g.s(ALNUM, 10) + "_" + g.s(ALNUM, 25)),
    ("gitlab routable token", _p("gl", "pat-") + g.s(URLSAFE, 27) + ".01." + g.s(LO + D, 9)),
    ("mailgun key", "key-" + g.s(HEX, 32)),
    ("new relic key", _p("NR", "AK-") + g.s(UP + D, 27)),
    ("docker hub token", _p("dc", "kr_pat_") + g.s(URLSAFE, 27)),
    ("age secret key", _p("AGE-SECRET", "-KEY-1") + g.s(UP + "023456789", 58)),
    ("alibaba key id", _p("LT", "AI") + g.s(ALNUM, 20)),
    ("telegram bot token in a url", g.s(D, 10) + ":AA" + g.s(URLSAFE, 33)),
]


@pytest.mark.parametrize(("name", "value"), PREFIXES, ids=[n for n, _ in PREFIXES])
def test_vendor_prefix_rules_catch_the_bare_token(name: str, value: str) -> None:
    for text in (f"{value}\n", f"output: {value} (copied)", f"https://api.test/bot{value}/getMe"):
        if name.startswith("telegram") != text.startswith("https"):
            continue
        out, _ = redact(text, RuleScanner())
        assert value not in out, (name, out)


CONTEXT = [
    (
        "curl -u on a continuation line",
        f"curl -s -X POST https://ci.test/job \\\n  -u deploy:{_pw}",
        _pw,
    ),
    (
        "curl -u in a json-escaped tool call",
        _tool(f"curl -s \\\n  -u svc:{_pw} \\\n  https://a.test"),
        _pw,
    ),
    ("curl -u with an empty user", f'curl -u ":{_pw}" https://a.test', _pw),
    ("curl --user quoted", f"curl --user 'ops:{_pw}' https://a.test", _pw),
    ("curl --user= form", f"curl --user=ops:{_pw} https://a.test", _pw),
    ("curl -u token as user", f"curl -u {_tok}: https://api.test", _tok),
    ("curl mixed quoting", f"curl --user kevin:'{_pw}' -X PATCH https://a.test", _pw),
    ("authorization without a scheme", f"curl -H 'Authorization: {_tok}' https://a.test", _tok),
    (
        "authorization with an unusual scheme",
        f'curl -H "Authorization: SSWS {_tok}" https://a.test',
        _tok,
    ),
    ("apikey header", f'curl -H "apikey: {_tok}" https://a.test', _tok),
    ("x-something-apikey header", f'curl -H "X-Octopus-ApiKey: {_tok}" https://a.test', _tok),
    ("dotted value in .env", f"VAULT_TOKEN={_p('hv', 's.')}{g.s(URLSAFE, 40)}\n", None),
    (
        "dotted bot token in .env",
        "BOT_TOKEN=" + g.s(ALNUM, 24) + "." + g.s(ALNUM, 6) + "." + g.s(ALNUM, 38),
        None,
    ),
    (
        "upper-case .env line with symbols",
        f"PORT=3000\nDJANGO_SECRET_KEY={g.s(LO + D + '^#@)(=', 50)}\n",
        None,
    ),
    ("dockerfile env", f"FROM python:3.12\nENV API_TOKEN {_tok}\n", _tok),
    ("kubernetes name/value pair", f"env:\n  - name: DB_PASSWORD\n    value: {_pw}\n", _pw),
    ("ecs name/value json", json.dumps({"name": "STRIPE_KEY_SECRET", "value": _tok}), _tok),
    ("json key with spaces", json.dumps({"api key": _tok}), _tok),
    ("credential-like names", f"GITHUB_PAT={_tok}\nTS_AUTHKEY={_tok[::-1]}\n", _tok),
    ("credentials key", json.dumps({"credentials": _tok}), _tok),
    ("query parameter key", f"GET https://api.test/weather?q=paris&appid={g.s(HEX, 32)}", None),
    ("password in prose", f"the staging db password is {_pw}, can you check the migrations?", _pw),
    ("password after a colon in prose", f"pw for the test box: {_pw}", _pw),
    ("non-ascii password in prose", "log in with password Grüße" + g.s(D, 4) + "ß and retry", None),
    ("token in prose", f"The datadog api key is {g.s(HEX, 32)}. Put it in CI.", None),
    ("password in a go test line", f'\tpassword := "{_pw}"', _pw),
]


@pytest.mark.parametrize(("name", "text", "value"), CONTEXT, ids=[c[0] for c in CONTEXT])
def test_context_rules_redact_the_value(name: str, text: str, value: str | None) -> None:
    out, findings = redact(text, RuleScanner())
    assert findings, name
    if value is not None:
        assert value not in out, (name, out)
    else:  # the value is whatever follows the name or the credential word
        assert "[REDACTED:" in out, (name, out)


LEFT_ALONE = [
    ("curl with variables", 'curl -sL --user "$GITHUB_USERNAME:$GITHUB_PASSWORD" "$URL"'),
    ("curl placeholder password", "curl -u <user:password> https://test.com/endpoint"),
    ("curl filler", 'curl --user "xxx:yyy"'),
    ("curl test:test", "curl -i -u 'test:test'"),
    ("authorization variable", 'curl -H "Authorization: Bearer $API_KEY" https://a.test'),
    ("authorization placeholder", 'curl -H "Authorization: Token **********" https://a.test'),
    ("vault template", "VAULT_TOKEN=hvs.<token>"),
    ("dotted code reference", "api_key = settings.OPENAI_API_KEY\ntoken = self.client.token"),
    (
        "identifier with a digit",
        "client_vpn_endpoint_id = aws_ec2_client_vpn_endpoint.client-vpn-endpoint.id",
    ),
    (
        "password in prose without a value",
        "The password is stored in the vault and rotated weekly.",
    ),
    ("password type hint", "def login(user: str, password: Optional[str] = None) -> None:"),
    ("url with placeholder password", "DATABASE_URL=postgres://user:password@localhost:5432/app"),
    (
        "cache key in prose",
        "the cache key is 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
    ),
    (
        "kubernetes secretKeyRef",
        "- name: API_TOKEN\n  valueFrom:\n    secretKeyRef:\n      key: token",
    ),
    ("upper-case prose", "THE AWS ACCESS KEY ROTATION POLICY REQUIRES EVERY KEY TO BE REPLACED"),
    ("filler digits", "api_key = 1111111111111111"),
    ("s. in prose", "s.AcceptanceTimeoutSeconds and s.makeKubeConfigController = args"),
    (
        "a word and a number some words after 'token'",  # the scale test's chunks (CI, 46917d1)
        "snapshot connection kiln token cobalt batch parser marker7919",
    ),
    ("token counts in prose", "the token budget is 128000 and the prompt used tokens42 so far"),
]


@pytest.mark.parametrize(("name", "text"), LEFT_ALONE, ids=[n for n, _ in LEFT_ALONE])
def test_look_alikes_are_left_alone(name: str, text: str) -> None:
    assert default_scanner().scan(text) == [], name


def test_the_vendor_catalogue_loads_hundreds_of_rules_and_gives_exact_spans() -> None:
    assert rule_count() >= 400
    value = _p("gh", "p_") + g.s(ALNUM, 36)
    text = f"héllo wörld — token {value} done"  # non-ASCII before it: bytes ≠ characters
    spans = [(f.start, f.end) for f in VendorScanner().scan(text)]
    assert (text.index(value), text.index(value) + len(value)) in spans


def test_the_vendor_catalogue_keeps_pem_headers_readable() -> None:
    body = "\n".join(g.s(ALNUM + "+/", 64) for _ in range(6))
    label = "RSA " + "PRIVATE" + " KEY"
    pem = f"-----BEGIN {label}-----\n{body}\n-----END {label}-----"
    out, _ = redact(pem, VendorScanner())
    assert out.startswith(f"-----BEGIN {label}-----") and body.split("\n")[2] not in out


def test_aws_key_ids_still_caught_by_funes_rules() -> None:
    key = _p("AK", "IA") + g.s(B32, 16)
    assert key not in redact(f"aws_access_key_id = {key}", RuleScanner())[0]
