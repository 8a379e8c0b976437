"""A labelled corpus of secrets placed in realistic Claude Code sessions, and of non-secrets.

Nothing here is a real credential. The secret *values* come from three places:

* `published_samples.json`: values that secret scanners publish as their own test data (the
  gitleaks rule tests), with the scanner's own test line (base64 in the file, so the repo holds
  no secret-shaped literal);
* tokens generated at run time, from a seeded RNG, to vendors' published token formats
  (`VENDOR_FORMATS`: prefix, alphabet, lengths);
* private keys minted at run time with `cryptography` (RSA, EC, Ed25519 in PKCS#1, SEC1,
  PKCS#8 and OpenSSH encodings), and short / non-ASCII passwords.

Each value is *placed* in up to five contexts an agent transcript shows (`CONTEXTS`):

* `dotenv`: a `.env` printed by `cat` (tool_use + tool_result);
* `tool_output`: bare in a tool result (`gh auth token`, `vault print token`…), or, for a value
  with no self-identifying format, in the JSON/YAML output that names it;
* `prompt`: pasted by the user in prose ("the staging db password is …");
* `curl`: in a curl command (header of the vendor's scheme, `-u/--user` forms, continuation
  lines) as a Bash tool_use;
* `test_line`: a line of a project's test file shown by the Read tool (for published values:
  the scanner's own test line).

`placements(seed)` → list[Placement]; `non_secrets(seed)` → list[Candidate] (hashes, SHAs,
UUIDs, lockfile integrity lines, placeholders, scanners' published false positives) and
`realistic_code(limit)` → list[Candidate] (blocks of real Python stdlib source and data files).
`session_records(placement)` → the Claude Code JSONL records that carry one placement.
"""

from __future__ import annotations

import base64
import hashlib
import json
import random
import string
import sys
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path

HERE = Path(__file__).resolve().parent
UP, LO, DI = string.ascii_uppercase, string.ascii_lowercase, string.digits
ALNUM = UP + LO + DI
B64 = ALNUM + "+/"
URLSAFE = ALNUM + "-_"
HEX = "0123456789abcdef"
UHEX = "0123456789ABCDEF"
B32 = UP + "234567"
CONTEXTS = ("dotenv", "tool_output", "prompt", "curl", "test_line")


def _p(*parts: str) -> str:
    """Join prefix pieces (kept apart in the source so scanners don't see a token literal)."""
    return "".join(parts)


@dataclass(frozen=True, slots=True)
class Secret:
    """One labelled secret value and what a transcript would call it."""

    kind: str  # vendor/format name (e.g. "vault_token")
    value: str
    source: str  # "published" | "generated" | "keygen" | "password"
    env: str  # the variable a .env would hold it in
    auth: str = "bearer"  # how curl sends it: bearer|token|basic|raw|header:<Name>|user|query:<k>
    self_identifying: bool = True  # a format a scanner can recognise with no name around it
    test_line: str | None = None  # the scanner's own test line (published values)
    host: str = "api.example.test"


@dataclass(frozen=True, slots=True)
class Placement:
    """A secret in one context: the transcript blocks that carry it."""

    secret: Secret
    context: str
    blocks: tuple[tuple[str, object], ...]  # (role-kind, payload) see session_records


@dataclass(frozen=True, slots=True)
class Candidate:
    """A text with no secret in it; `group` says where it comes from."""

    group: str  # hashes|uuids|lockfiles|placeholders|published_fp|lookalikes|code|data
    name: str
    text: str


class Gen:
    """Seeded random strings over a format's alphabet, every class of the alphabet used."""

    def __init__(self, seed: int) -> None:
        self.r = random.Random(seed)

    def s(self, alphabet: str, n: int) -> str:
        classes = [
            c for c in (str.isdigit, str.isupper, str.islower) if any(c(ch) for ch in alphabet)
        ]
        while True:
            out = "".join(self.r.choice(alphabet) for _ in range(n))
            low = out.lower()
            if any(w in low for w in ("example", "xxxx", "test", "fake", "dummy", "here")):
                continue
            if n < 12 or all(any(c(ch) for ch in out) for c in classes):
                return out

    def b64json(self, obj: dict[str, object]) -> str:
        raw = json.dumps(obj, separators=(",", ":")).encode()
        return base64.urlsafe_b64encode(raw).decode().rstrip("=")


# -- vendors' published token formats (generated per run) ----------------------------------

Fmt = Callable[[Gen], str]
# (kind, env var, generator, curl auth style, host, self-identifying)
VENDOR_FORMATS: list[tuple[str, str, Fmt, str, str, bool]] = [
    ("aws_access_key_id", "AWS_ACCESS_KEY_ID", lambda g: _p("AK", "IA") + g.s(B32, 16), "raw", "sts.amazonaws.com", True),  # noqa: E501
    ("aws_secret_access_key", "AWS_SECRET_ACCESS_KEY", lambda g: g.s(B64, 40), "raw", "sts.amazonaws.com", False),  # noqa: E501
    ("github_classic_pat", "GITHUB_TOKEN", lambda g: _p("gh", "p_") + g.s(ALNUM, 36), "token", "api.github.com", True),  # noqa: E501
    ("github_oauth", "GH_TOKEN", lambda g: _p("gh", "o_") + g.s(ALNUM, 36), "bearer", "api.github.com", True),  # noqa: E501
    ("github_app_installation", "GITHUB_APP_TOKEN", lambda g: _p("gh", "s_") + g.s(ALNUM + "_", 36), "bearer", "api.github.com", True),  # noqa: E501
    ("github_fine_grained", "GITHUB_PAT", lambda g: _p("github", "_pat_") + g.s(ALNUM, 22) + "_" + g.s(ALNUM, 59), "bearer", "api.github.com", True),  # noqa: E501
    ("gitlab_pat", "GITLAB_TOKEN", lambda g: _p("gl", "pat-") + g.s(URLSAFE, 20), "header:PRIVATE-TOKEN", "gitlab.com", True),  # noqa: E501
    ("gitlab_pat_routable", "CI_JOB_TOKEN_PAT", lambda g: _p("gl", "pat-") + g.s(URLSAFE, 27) + ".01." + g.s(LO + DI, 9), "header:PRIVATE-TOKEN", "gitlab.com", True),  # noqa: E501
    ("gitlab_runner", "RUNNER_TOKEN", lambda g: _p("gl", "rt-") + g.s(URLSAFE, 20), "header:PRIVATE-TOKEN", "gitlab.com", True),  # noqa: E501
    ("anthropic", "ANTHROPIC_API_KEY", lambda g: _p("sk-", "ant-", "api03-") + g.s(URLSAFE, 93) + "AA", "header:x-api-key", "api.anthropic.com", True),  # noqa: E501
    ("anthropic_admin", "ANTHROPIC_ADMIN_KEY", lambda g: _p("sk-", "ant-", "admin01-") + g.s(URLSAFE, 93) + "AA", "header:x-api-key", "api.anthropic.com", True),  # noqa: E501
    ("openai_project", "OPENAI_API_KEY", lambda g: _p("sk-", "proj-") + g.s(URLSAFE, 156), "bearer", "api.openai.com", True),  # noqa: E501
    ("openai_legacy", "OPENAI_KEY", lambda g: "sk-" + g.s(ALNUM, 20) + _p("T3Blb", "kFJ") + g.s(ALNUM, 20), "bearer", "api.openai.com", True),  # noqa: E501
    ("huggingface", "HF_TOKEN", lambda g: _p("h", "f_") + g.s(UP + LO, 34), "bearer", "huggingface.co", True),  # noqa: E501
    ("slack_bot", "SLACK_BOT_TOKEN", lambda g: _p("xo", "xb-") + g.s(DI, 12) + "-" + g.s(DI, 13) + "-" + g.s(ALNUM, 24), "bearer", "slack.com", True),  # noqa: E501
    ("slack_app", "SLACK_APP_TOKEN", lambda g: _p("xa", "pp-1-") + "A" + g.s(UP + DI, 10) + "-" + g.s(DI, 13) + "-" + g.s(HEX, 64), "bearer", "slack.com", True),  # noqa: E501
    ("slack_config_refresh", "SLACK_REFRESH_TOKEN", lambda g: _p("xo", "xe-1-") + g.s(ALNUM, 146), "bearer", "slack.com", True),  # noqa: E501
    ("stripe_secret", "STRIPE_SECRET_KEY", lambda g: _p("sk", "_live_") + g.s(ALNUM, 99), "basic_user", "api.stripe.com", True),  # noqa: E501
    ("stripe_restricted_prod", "STRIPE_RESTRICTED_KEY", lambda g: _p("rk", "_prod_") + g.s(ALNUM, 99), "bearer", "api.stripe.com", True),  # noqa: E501
    ("stripe_webhook", "STRIPE_WEBHOOK_SECRET", lambda g: _p("wh", "sec_") + g.s(ALNUM, 32), "raw", "api.stripe.com", True),  # noqa: E501
    ("google_api_key", "GOOGLE_API_KEY", lambda g: _p("AI", "za") + g.s(URLSAFE, 35), "query:key", "maps.googleapis.com", True),  # noqa: E501
    ("google_oauth_secret", "GOOGLE_CLIENT_SECRET", lambda g: _p("GOC", "SPX-") + g.s(URLSAFE, 28), "raw", "oauth2.googleapis.com", True),  # noqa: E501
    ("azure_ad_client_secret", "AZURE_CLIENT_SECRET", lambda g: g.s(ALNUM, 3) + g.s(DI, 1) + "Q~" + g.s(ALNUM + "_~.-", 34), "raw", "login.microsoftonline.com", True),  # noqa: E501
    ("azure_storage_key", "AZURE_STORAGE_KEY", lambda g: g.s(B64, 86) + "==", "raw", "acct.blob.core.windows.net", False),  # noqa: E501
    ("onepassword_service_token", "OP_SERVICE_ACCOUNT_TOKEN", lambda g: _p("op", "s_") + g.b64json({"signInAddress": "my.1password.com", "userAuth": {"method": "SRPg-4096", "alg": "PBES2g-HS256", "iterations": 650000, "salt": g.s(URLSAFE, 22)}, "email": g.s(LO + DI, 13) + "@1passwordserviceaccounts.com", "srpX": g.s(HEX, 64), "muk": {"alg": "A256GCM", "k": g.s(URLSAFE, 43)}, "secretKey": "A3-" + g.s(UP + DI, 6), "deviceUuid": g.s(LO + DI, 26)}), "bearer", "events.1password.com", True),  # noqa: E501
    ("onepassword_secret_key", "OP_SECRET_KEY", lambda g: "A3-" + g.s(UP + DI, 6) + "-" + g.s(UP + DI, 6) + "-" + g.s(UP + DI, 5) + "-" + g.s(UP + DI, 5) + "-" + g.s(UP + DI, 5) + "-" + g.s(UP + DI, 5), "raw", "my.1password.com", True),  # noqa: E501
    ("sentry_org_token", "SENTRY_AUTH_TOKEN", lambda g: _p("sntr", "ys_") + g.b64json({"iat": 1700000000 + g.r.randint(0, 9**6), "url": "https://sentry.io", "region_url": "https://us.sentry.io", "org": "acme"}) + "_" + g.s(URLSAFE, 43), "bearer", "sentry.io", True),  # noqa: E501
    ("sentry_user_token", "SENTRY_TOKEN", lambda g: _p("sntr", "yu_") + g.s(HEX, 64), "bearer", "sentry.io", True),  # noqa: E501
    ("notion", "NOTION_TOKEN", lambda g: _p("nt", "n_") + g.s(DI, 11) + g.s(ALNUM, 35), "bearer", "api.notion.com", True),  # noqa: E501
    ("sourcegraph", "SRC_ACCESS_TOKEN", lambda g: _p("sg", "p_") + g.s(HEX, 16) + "_" + g.s(HEX, 40), "token", "sourcegraph.com", True),  # noqa: E501
    ("vault_token", "VAULT_TOKEN", lambda g: _p("hv", "s.") + g.s(URLSAFE, 94), "header:X-Vault-Token", "vault.internal", True),  # noqa: E501
    ("vault_batch", "VAULT_BATCH_TOKEN", lambda g: _p("hv", "b.") + g.s(URLSAFE, 138), "header:X-Vault-Token", "vault.internal", True),  # noqa: E501
    ("grafana_cloud", "GRAFANA_CLOUD_TOKEN", lambda g: _p("gl", "c_") + g.b64json({"o": str(g.r.randint(10**5, 10**6)), "n": "stack-" + g.s(DI, 6) + "-hm-read", "k": g.s(ALNUM, 24), "m": {"r": "prod-us-east-0"}}), "bearer", "grafana.net", True),  # noqa: E501
    ("grafana_service_account", "GRAFANA_TOKEN", lambda g: _p("gl", "sa_") + g.s(ALNUM, 32) + "_" + g.s(HEX, 8), "bearer", "grafana.internal", True),  # noqa: E501
    ("fly", "FLY_API_TOKEN", lambda g: _p("fo", "1_") + g.s(URLSAFE, 43), "bearer", "api.fly.io", True),  # noqa: E501
    ("heroku", "HEROKU_API_KEY", lambda g: _p("HR", "KU-") + "AA" + g.s(URLSAFE, 58), "bearer", "api.heroku.com", True),  # noqa: E501
    ("tailscale", "TS_AUTHKEY", lambda g: _p("tsk", "ey-auth-") + g.s(ALNUM, 12) + "CNTRL-" + g.s(ALNUM, 33), "basic_user", "api.tailscale.com", True),  # noqa: E501
    ("terraform_cloud", "TFE_TOKEN", lambda g: g.s(ALNUM, 14) + _p(".atl", "asv1.") + g.s(ALNUM + "-_", 67), "bearer", "app.terraform.io", True),  # noqa: E501
    ("discord_bot", "DISCORD_BOT_TOKEN", lambda g: g.r.choice("MN") + g.s(URLSAFE, 25) + "." + g.s(URLSAFE, 6) + "." + g.s(URLSAFE, 38), "raw_bot", "discord.com", True),  # noqa: E501
    ("telegram_bot", "TELEGRAM_BOT_TOKEN", lambda g: g.s(DI, 10) + ":AA" + g.s(URLSAFE, 33), "path", "api.telegram.org", True),  # noqa: E501
    ("npm", "NPM_TOKEN", lambda g: _p("np", "m_") + g.s(ALNUM, 36), "bearer", "registry.npmjs.org", True),  # noqa: E501
    ("pypi", "PYPI_TOKEN", lambda g: _p("py", "pi-AgEIcHlwaS5vcmc") + g.s(URLSAFE, 150), "basic_user", "upload.pypi.org", True),  # noqa: E501
    ("sendgrid", "SENDGRID_API_KEY", lambda g: "SG." + g.s(URLSAFE, 22) + "." + g.s(URLSAFE, 43), "bearer", "api.sendgrid.com", True),  # noqa: E501
    ("mailgun", "MAILGUN_API_KEY", lambda g: "key-" + g.s(HEX, 32), "basic_user", "api.mailgun.net", True),  # noqa: E501
    ("mailchimp", "MAILCHIMP_API_KEY", lambda g: g.s(HEX, 32) + "-us" + str(g.r.randint(1, 21)), "basic_user", "us6.api.mailchimp.com", True),  # noqa: E501
    ("twilio_api_key", "TWILIO_API_SECRET", lambda g: "SK" + g.s(HEX, 32), "basic_user", "api.twilio.com", True),  # noqa: E501
    ("twilio_auth_token", "TWILIO_AUTH_TOKEN", lambda g: g.s(HEX, 32), "basic_user", "api.twilio.com", False),  # noqa: E501
    ("digitalocean", "DIGITALOCEAN_TOKEN", lambda g: _p("do", "p_v1_") + g.s(HEX, 64), "bearer", "api.digitalocean.com", True),  # noqa: E501
    ("doppler", "DOPPLER_TOKEN", lambda g: _p("dp", ".pt.") + g.s(ALNUM, 43), "bearer", "api.doppler.com", True),  # noqa: E501
    ("linear", "LINEAR_API_KEY", lambda g: _p("lin", "_api_") + g.s(ALNUM, 40), "raw", "api.linear.app", True),  # noqa: E501
    ("postman", "POSTMAN_API_KEY", lambda g: _p("PM", "AK-") + g.s(HEX, 24) + "-" + g.s(HEX, 34), "header:X-Api-Key", "api.getpostman.com", True),  # noqa: E501
    ("pulumi", "PULUMI_ACCESS_TOKEN", lambda g: _p("pu", "l-") + g.s(HEX, 40), "token", "api.pulumi.com", True),  # noqa: E501
    ("shopify", "SHOPIFY_ACCESS_TOKEN", lambda g: _p("sh", "pat_") + g.s(HEX, 32), "header:X-Shopify-Access-Token", "acme.myshopify.com", True),  # noqa: E501
    ("databricks", "DATABRICKS_TOKEN", lambda g: _p("da", "pi") + g.s(HEX, 32), "bearer", "acme.cloud.databricks.com", True),  # noqa: E501
    ("atlassian", "JIRA_API_TOKEN", lambda g: _p("ATA", "TT3xFfGF0") + g.s(URLSAFE, 170) + "=" + g.s(UHEX, 8), "basic_user", "acme.atlassian.net", True),  # noqa: E501
    ("replicate", "REPLICATE_API_TOKEN", lambda g: _p("r", "8_") + g.s(ALNUM, 37), "bearer", "api.replicate.com", True),  # noqa: E501
    ("groq", "GROQ_API_KEY", lambda g: _p("gs", "k_") + g.s(ALNUM, 52), "bearer", "api.groq.com", True),  # noqa: E501
    ("xai", "XAI_API_KEY", lambda g: _p("xa", "i-") + g.s(ALNUM, 80), "bearer", "api.x.ai", True),  # noqa: E501
    ("perplexity", "PPLX_API_KEY", lambda g: _p("pp", "lx-") + g.s(ALNUM, 48), "bearer", "api.perplexity.ai", True),  # noqa: E501
    ("supabase", "SUPABASE_ACCESS_TOKEN", lambda g: _p("sb", "p_") + g.s(HEX, 40), "bearer", "api.supabase.com", True),  # noqa: E501
    ("planetscale", "PLANETSCALE_SERVICE_TOKEN", lambda g: _p("psc", "ale_tkn_") + g.s(URLSAFE, 43), "raw", "api.planetscale.com", True),  # noqa: E501
    ("docker_hub", "DOCKERHUB_TOKEN", lambda g: _p("dc", "kr_pat_") + g.s(URLSAFE, 27), "basic_user", "hub.docker.com", True),  # noqa: E501
    ("figma", "FIGMA_TOKEN", lambda g: _p("fi", "gd_") + g.s(URLSAFE, 40), "header:X-Figma-Token", "api.figma.com", True),  # noqa: E501
    ("age", "SOPS_AGE_KEY", lambda g: _p("AGE-SECRET", "-KEY-1") + g.s(UP + "023456789", 58), "raw", "", True),  # noqa: E501
    ("mapbox", "MAPBOX_SECRET_TOKEN", lambda g: _p("sk", ".eyJ") + g.s(URLSAFE, 60) + "." + g.s(URLSAFE, 22), "query:access_token", "api.mapbox.com", True),  # noqa: E501
    ("new_relic", "NEW_RELIC_API_KEY", lambda g: _p("NR", "AK-") + g.s(UP + DI, 27), "header:Api-Key", "api.newrelic.com", True),  # noqa: E501
    ("dynatrace", "DT_API_TOKEN", lambda g: _p("dt0", "c01.") + g.s(UP + DI, 24) + "." + g.s(UP + DI, 64), "api_token", "acme.live.dynatrace.com", True),  # noqa: E501
    ("prefect", "PREFECT_API_KEY", lambda g: _p("pn", "u_") + g.s(ALNUM, 36), "bearer", "api.prefect.cloud", True),  # noqa: E501
    ("rubygems", "GEM_HOST_API_KEY", lambda g: _p("ruby", "gems_") + g.s(HEX, 48), "raw", "rubygems.org", True),  # noqa: E501
    ("brevo", "BREVO_API_KEY", lambda g: _p("xke", "ysib-") + g.s(HEX, 64) + "-" + g.s(ALNUM, 16), "header:api-key", "api.brevo.com", True),  # noqa: E501
    ("contentful", "CONTENTFUL_MANAGEMENT_TOKEN", lambda g: _p("CFP", "AT-") + g.s(URLSAFE, 43), "bearer", "api.contentful.com", True),  # noqa: E501
    ("bitbucket_app_password", "BITBUCKET_APP_PASSWORD", lambda g: _p("AT", "BB") + g.s(ALNUM, 32), "basic_user", "api.bitbucket.org", True),  # noqa: E501
    ("adafruit", "ADAFRUIT_IO_KEY", lambda g: _p("ai", "o_") + g.s(ALNUM, 28), "header:X-AIO-Key", "io.adafruit.com", True),  # noqa: E501
    ("square", "SQUARE_ACCESS_TOKEN", lambda g: _p("EA", "AA") + g.s(URLSAFE, 60), "bearer", "connect.squareup.com", True),  # noqa: E501
    ("alibaba", "ALIBABA_CLOUD_ACCESS_KEY_ID", lambda g: _p("LT", "AI") + g.s(ALNUM, 20), "raw", "ecs.aliyuncs.com", True),  # noqa: E501
    ("circleci", "CIRCLE_TOKEN", lambda g: _p("CCI", "PAT_") + g.s(ALNUM, 22) + "_" + g.s(HEX, 40), "header:Circle-Token", "circleci.com", True),  # noqa: E501
    ("cloudflare_api_token", "CLOUDFLARE_API_TOKEN", lambda g: g.s(URLSAFE, 40), "bearer", "api.cloudflare.com", False),  # noqa: E501
    ("datadog_api_key", "DD_API_KEY", lambda g: g.s(HEX, 32), "header:DD-API-KEY", "api.datadoghq.com", False),  # noqa: E501
    ("openweather", "OPENWEATHER_API_KEY", lambda g: g.s(HEX, 32), "query:appid", "api.openweathermap.org", False),  # noqa: E501
    ("okta", "OKTA_API_TOKEN", lambda g: "00" + g.s(URLSAFE, 40), "ssws", "acme.okta.com", False),  # noqa: E501
    ("jwt_hs256", "SESSION_JWT", lambda g: g.b64json({"alg": "HS256", "typ": "JWT"}) + "." + g.b64json({"sub": g.s(DI, 8), "iat": 1700000000}) + "." + g.s(URLSAFE, 43), "bearer", "api.internal", True),  # noqa: E501
    ("django_secret", "DJANGO_SECRET_KEY", lambda g: g.s(LO + DI + "!@#%^&*(-_=+)", 50), "raw", "", False),  # noqa: E501
    ("generic_hex_secret", "WEBHOOK_SIGNING_SECRET", lambda g: g.s(HEX, 64), "header:X-Webhook-Secret", "hooks.internal", False),  # noqa: E501
]  # fmt: skip

_PASSWORD_ALPHABET = ALNUM + "!#%&*+-.?@^_~"


def _passwords(g: Gen) -> list[Secret]:
    """Short, ordinary and non-ASCII passwords (people choose these: no format to recognise)."""
    vals = [
        g.s(ALNUM, 6),
        g.s(ALNUM, 7),
        g.s(LO + DI, 8),
        g.s(_PASSWORD_ALPHABET, 9),
        g.s(_PASSWORD_ALPHABET, 12),
        g.s(_PASSWORD_ALPHABET, 16),
        "Sommer" + g.s(DI, 4) + "!",
        "пароль" + g.s(DI, 3) + "ё",
        "Grüße" + g.s(DI, 4) + "ß",
        "contraseña" + g.s(DI, 2),
        "密码" + g.s(DI, 4) + "安全",
        "şifre" + g.s(DI, 3) + "Ğ",
        "κωδικός" + g.s(DI, 3),
        g.s(LO, 5) + "-" + g.s(LO, 6) + "-" + g.s(LO, 4),
    ]
    envs = ["DB_PASSWORD", "POSTGRES_PASSWORD", "MYSQL_ROOT_PASSWORD", "REDIS_PASSWORD",
            "ADMIN_PASSWORD", "SMTP_PASSWORD", "RABBITMQ_DEFAULT_PASS", "LDAP_BIND_PW",
            "KEYSTORE_PASS", "PGPASSWORD"]  # fmt: skip
    return [
        Secret("password", v, "password", envs[i % len(envs)], "user", False, host="db.internal")
        for i, v in enumerate(vals)
    ]


def _private_keys() -> list[Secret]:
    """Freshly minted private keys in the encodings tools print (never stored anywhere)."""
    from cryptography.hazmat.primitives import serialization as ser
    from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa

    rsa_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    ec_key = ec.generate_private_key(ec.SECP256R1())
    ed_key = ed25519.Ed25519PrivateKey.generate()
    pem, none = ser.Encoding.PEM, ser.NoEncryption()
    keys = [
        ("rsa_pkcs1", rsa_key.private_bytes(pem, ser.PrivateFormat.TraditionalOpenSSL, none)),
        ("rsa_pkcs8", rsa_key.private_bytes(pem, ser.PrivateFormat.PKCS8, none)),
        ("ec_sec1", ec_key.private_bytes(pem, ser.PrivateFormat.TraditionalOpenSSL, none)),
        ("ec_pkcs8", ec_key.private_bytes(pem, ser.PrivateFormat.PKCS8, none)),
        ("ed25519_openssh", ed_key.private_bytes(pem, ser.PrivateFormat.OpenSSH, none)),
        ("rsa_openssh", rsa_key.private_bytes(pem, ser.PrivateFormat.OpenSSH, none)),
    ]
    return [
        Secret(f"private_key_{name}", raw.decode().strip(), "keygen", "PRIVATE_KEY", "raw")
        for name, raw in keys
    ]


@cache
def _published() -> dict[str, list[dict[str, str]]]:
    data = json.loads((HERE / "published_samples.json").read_text(encoding="utf-8"))
    dec = lambda s: base64.b64decode(s).decode("utf-8")  # noqa: E731
    return {
        "tp": [
            {"kind": e["kind"], "line": dec(e["line"]), "value": dec(e["value"])}
            for e in data["true_positives"]
        ],
        "fp": [{"line": dec(e["line"]), "source": e["source"]} for e in data["false_positives"]],
    }


_PUBLISHED_ENV = {
    "curl_password": ("API_PASSWORD", "user", False),
    "auth_header": ("API_TOKEN", "raw", False),
    "api_key_header": ("API_KEY", "header:X-Api-Key", False),
    "jwt": ("ID_TOKEN", "bearer", True),
    "vault_token": ("VAULT_TOKEN", "header:X-Vault-Token", True),
    "onepassword_secret_key": ("OP_SECRET_KEY", "raw", True),
    "onepassword_service_token": ("OP_SERVICE_ACCOUNT_TOKEN", "bearer", True),
    "generic_secret": ("CLIENT_SECRET", "raw", False),
}


def secrets(seed: int = 17, per_format: int = 3) -> list[Secret]:
    """Every labelled value: published samples, generated vendor tokens, keys, passwords."""
    g = Gen(seed)
    out: list[Secret] = []
    for e in _published()["tp"]:
        env, auth, self_id = _PUBLISHED_ENV[e["kind"]]
        auth = "user" if e["kind"] == "curl_password" else auth
        out.append(Secret(e["kind"], e["value"], "published", env, auth, self_id, e["line"]))
    for kind, env, fmt, auth, host, self_id in VENDOR_FORMATS:
        for _ in range(per_format):
            out.append(Secret(kind, fmt(g), "generated", env, auth, self_id, host=host))
    out.extend(_passwords(g))
    out.extend(_private_keys())
    return out


# -- placements -----------------------------------------------------------------------------


def _bash(command: str) -> tuple[str, object]:
    return ("tool_use", {"name": "Bash", "input": {"command": command, "description": "Run"}})


def _result(text: str) -> tuple[str, object]:
    return ("tool_result", text)


def _read(path: str, lines: list[str], start: int = 1) -> list[tuple[str, object]]:
    numbered = "\n".join(f"{start + i:>6}\u2192{line}" for i, line in enumerate(lines))
    return [("tool_use", {"name": "Read", "input": {"file_path": path}}), _result(numbered)]


def _dotenv(s: Secret, g: Gen) -> list[tuple[str, object]]:
    value = s.value
    if "\n" in value:
        value = '"' + value + '"'
    elif s.source == "password" and g.r.random() < 0.3:
        value = f"'{value}'"
    lines = ["NODE_ENV=production", "PORT=3000", f"{s.env}={value}", "LOG_LEVEL=info"]
    if g.r.random() < 0.5:
        lines.insert(0, "# generated by ops, do not commit")
    return [
        _bash(g.r.choice(["cat .env", "cat .env.local", "cat apps/api/.env"])),
        _result("\n".join(lines) + "\n"),
    ]  # noqa: E501


_BARE_COMMANDS = {
    "vault_token": "vault print token", "vault_batch": "vault print token",
    "github_classic_pat": "gh auth token", "github_oauth": "gh auth token",
    "github_fine_grained": "gh auth token", "github_app_installation": "gh auth token",
    "onepassword_service_token": "op read op://ci/sa/credential", "fly": "fly auth token",
    "heroku": "heroku auth:token", "huggingface": "cat ~/.cache/huggingface/token",
    "npm": "npm token create --read-only | tail -1", "age": "cat ~/.config/sops/age/keys.txt",
}  # fmt: skip


def _tool_output(s: Secret, g: Gen) -> list[tuple[str, object]]:
    if s.kind.startswith("private_key"):
        return [_bash("cat ~/.ssh/deploy_key"), _result(s.value + "\n")]
    if s.self_identifying:
        cmd = _BARE_COMMANDS.get(s.kind, f"cat ~/.config/{s.kind.split('_')[0]}/credentials")
        return [_bash(cmd), _result(s.value + "\n")]
    key = s.env.lower()
    if g.r.random() < 0.5:
        body = json.dumps(
            {"name": "ci", key: s.value, "created_at": "2026-03-01T10:00:00Z"}, indent=2
        )  # noqa: E501
        return [_bash(f"cat config/{s.kind}.json"), _result(body)]
    return [
        _bash("kubectl get configmap app -o yaml"),
        _result(f"data:\n  {s.env}: {s.value}\n  REGION: eu-west-1\n"),
    ]  # noqa: E501


_PROMPTS_TOKEN = (
    "here's the {name} token: {v} — wire it into the deploy script please",
    "use this key for the integration test {v} and tell me if the call works",
    "ok I created a new one: {v}\nretry the sync with it",
    "The {name} credential is {v}. Put it in the CI secrets, not in the repo.",
)
_PROMPTS_PASSWORD = (
    "the staging db password is {v}, can you check why the migrations fail?",
    "log in as admin with password {v} and look at the settings page",
    "pw for the test box: {v}",
    "I changed the redis password to {v}; update the compose file accordingly",
    "try connecting again, the password is now {v} (I rotated it this morning)",
)


def _prompt(s: Secret, g: Gen) -> list[tuple[str, object]]:
    templates = _PROMPTS_PASSWORD if s.source == "password" else _PROMPTS_TOKEN
    name = s.kind.replace("_", " ")
    return [("user", g.r.choice(templates).format(name=name, v=s.value))]


def _curl(s: Secret, g: Gen) -> list[tuple[str, object]]:
    v, host = s.value, s.host or "api.internal"
    url = f"https://{host}/v1/items"
    cont = g.r.random() < 0.4  # a `\` continuation layout
    sep = " \\\n  " if cont else " "
    auth = s.auth
    if auth == "user":
        user = g.r.choice(["admin", "deploy", "svc-ci", ""])
        form = g.r.choice(["-u {u}:{v}", "--user '{u}:{v}'", '-u "{u}:{v}"', "--user={u}:{v}"])
        if user == "":
            form = g.r.choice(['-u ":{v}"', "-u :{v}"])
        flag = form.format(u=user, v=v)
        cmd = f"curl -s -X GET{sep}{flag}{sep}{url}"
    elif auth == "basic_user":
        cmd = f"curl -s{sep}-u {v}:{sep}{url}"
    elif auth.startswith("header:"):
        cmd = f'curl -s{sep}-H "{auth[7:]}: {v}"{sep}-H "Accept: application/json"{sep}{url}'
    elif auth.startswith("query:"):
        cmd = f'curl -s "{url}?q=paris&{auth[6:]}={v}"'
    elif auth == "path":
        cmd = f"curl -s https://{host}/bot{v}/getMe"
    else:
        scheme = {"bearer": "Bearer ", "token": "token ", "ssws": "SSWS ", "api_token": "Api-Token ",
                  "raw_bot": "Bot ", "raw": ""}[auth]  # fmt: skip
        q = g.r.choice(["'", '"'])
        cmd = f"curl -s{sep}-H {q}Authorization: {scheme}{v}{q}{sep}{url}"
    if "\n" in v:  # a PEM key is sent as a file, not a header
        cmd = f"ssh-add - <<'EOF'\n{v}\nEOF"
    return [_bash(cmd), _result('{"ok": true}')]


def _test_line(s: Secret, g: Gen) -> list[tuple[str, object]]:
    if s.test_line is not None:
        body = ["package rules", "", "func TestRule(t *testing.T) {", "\ttps := []string{"]
        body += ["\t\t`" + line + "`," for line in s.test_line.split("\n")]
        body += ["\t}", "}"]
        return _read("/work/scanner/cmd/generate/config/rules/rule_test.go", body, 40)
    if "\n" in s.value:
        lines = ['TEST_KEY = """'] + s.value.split("\n") + ['"""']
        return _read("/work/app/tests/conftest.py", lines, 12)
    style = g.r.randrange(4)
    var = s.env.lower()
    if style == 0:
        lines = [
            "def test_client_auth():",
            f'    client = Client({var}="{s.value}")',
            "    assert client.ping()",
        ]  # noqa: E501
        return _read("/work/app/tests/test_client.py", lines, 30)
    if style == 1:
        lines = [f"const {s.env} = '{s.value}';", "describe('api', () => {"]
        return _read("/work/app/test/api.test.ts", lines, 3)
    if style == 2:
        lines = [
            "func TestAuth(t *testing.T) {",
            f'\ttoken := "{s.value}"',
            "\tassert.NotEmpty(t, token)",
        ]  # noqa: E501
        return _read("/work/app/auth_test.go", lines, 10)
    lines = ["    @Test", "    void connects() {", f'        var password = "{s.value}";']
    return _read("/work/app/src/test/java/DbTest.java", lines, 20)


_MAKERS = {"dotenv": _dotenv, "tool_output": _tool_output, "prompt": _prompt, "curl": _curl,
           "test_line": _test_line}  # fmt: skip


def placements(seed: int = 23, secrets_seed: int = 17) -> list[Placement]:
    """Every secret in every context. A value with no self-identifying format (a password, an
    AWS secret key, a hex API key) is never placed bare: in `tool_output` it appears in the
    JSON or YAML that names it, since nothing could tell it from a hash or a word otherwise."""
    g = Gen(seed)
    out: list[Placement] = []
    for s in secrets(secrets_seed):
        for ctx in CONTEXTS:
            out.append(Placement(s, ctx, tuple(_MAKERS[ctx](s, g))))
    return out


def block_texts(p: Placement) -> list[str]:
    """The texts funes indexes for a placement's blocks (tool inputs as compact JSON, as the
    Claude Code parser stores them)."""
    out = []
    for _, payload in p.blocks:
        if isinstance(payload, str):
            out.append(payload)
        else:
            out.append(json.dumps(payload["input"], ensure_ascii=False, separators=(",", ":")))  # type: ignore[index]
    return out


def session_records(
    blocks: list[tuple[str, object]], *, session_id: str, seed: int = 5, cwd: str = "/work/app"
) -> list[dict[str, object]]:
    """Claude Code records (native JSONL shapes) for `blocks`: user prompts, assistant text,
    tool_use inputs, tool_result outputs; a short assistant reply opens and closes each
    exchange."""
    r = random.Random(seed)
    records: list[dict[str, object]] = []
    parent: str | None = None
    clock = 1_700_000_000
    last_tool: str | None = None

    def emit(kind: str, content: object) -> None:
        nonlocal parent, clock
        clock += r.randint(1, 40)
        uid = str(uuid.UUID(int=r.getrandbits(128), version=4))
        message: dict[str, object] = {"role": kind, "content": content}
        if kind == "assistant":
            message.update(
                {
                    "id": f"msg_{r.getrandbits(64):016x}",
                    "type": "message",
                    "model": "claude-sonnet-4-6",
                }  # noqa: E501
            )
        records.append(
            {
                "parentUuid": parent, "isSidechain": False, "userType": "external", "cwd": cwd,
                "sessionId": session_id, "version": "2.1.97", "gitBranch": "main", "type": kind,
                "message": message, "uuid": uid,
                "timestamp": f"2026-04-02T10:{(clock // 60) % 60:02d}:{clock % 60:02d}.000Z",
            }
        )  # fmt: skip
        parent = uid

    for role, payload in blocks:
        if role == "user":
            emit("user", payload)
            emit("assistant", [{"type": "text", "text": "On it."}])
        elif role == "assistant":
            emit("assistant", [{"type": "text", "text": payload}])
        elif role == "tool_use":
            last_tool = f"toolu_{r.getrandbits(64):016x}"
            assert isinstance(payload, dict)
            emit("assistant", [{"type": "tool_use", "id": last_tool, **payload}])
        else:
            emit("user", [{"type": "tool_result", "tool_use_id": last_tool, "content": payload}])
    emit("assistant", [{"type": "text", "text": "Done."}])
    return records


def write_sessions(home: Path, groups: list[list[tuple[str, object]]]) -> list[Path]:
    """One Claude Code session file per group of blocks, under `<home>/.claude/projects/`."""
    project = home / ".claude" / "projects" / "-work-app"
    project.mkdir(parents=True, exist_ok=True)
    paths = []
    for i, blocks in enumerate(groups):
        sid = str(uuid.UUID(int=(0x5E55 << 112) + i, version=4))
        path = project / f"{sid}.jsonl"
        with path.open("w", encoding="utf-8") as f:
            for rec in session_records(blocks, session_id=sid, seed=i):
                f.write(json.dumps(rec, ensure_ascii=False, separators=(",", ":")) + "\n")
        paths.append(path)
    return paths


# -- non-secret candidates ------------------------------------------------------------------


def non_secrets(seed: int = 29) -> list[Candidate]:
    """Texts with nothing secret that a scanner may mistake for one (each must stay intact)."""
    g = Gen(seed)
    out: list[Candidate] = []

    def add(group: str, name: str, text: str) -> None:
        out.append(Candidate(group, name, text))

    for i in range(12):
        sha = hashlib.sha1(g.r.randbytes(16)).hexdigest()
        add(
            "hashes",
            f"git log {i}",
            f"commit {sha}\nAuthor: Dev <dev@acme.test>\nDate:   Tue Mar 3 10:00:00 2026 +0100\n\n    fix: refresh token expiry\n",
        )  # noqa: E501
        sha256 = hashlib.sha256(g.r.randbytes(16)).hexdigest()
        add("hashes", f"sha256sum {i}", f"{sha256}  dist/app-{i}.tar.gz")
        md5 = hashlib.md5(g.r.randbytes(16)).hexdigest()  # noqa: S324
        add(
            "hashes", f"etag {i}", f'HTTP/1.1 200 OK\nETag: "{md5}"\nContent-Type: application/json'
        )  # noqa: E501
        add(
            "hashes",
            f"checksum json {i}",
            json.dumps({"file": f"model-{i}.onnx", "sha256": sha256, "size": 90_000_000 + i}),
        )  # noqa: E501
        add("hashes", f"docker digest {i}", f"image: ghcr.io/acme/api@sha256:{sha256}")
        add(
            "hashes",
            f"short sha {i}",
            f"[main {sha[:7]}] rotate the key handling\n 2 files changed, 10 insertions(+)",
        )  # noqa: E501
        u = str(uuid.UUID(int=g.r.getrandbits(128), version=4))
        add(
            "uuids",
            f"uuid json {i}",
            json.dumps(
                {"session_id": u, "request_id": str(uuid.UUID(int=g.r.getrandbits(128), version=4))}
            ),
        )  # noqa: E501
        add("uuids", f"uuid log {i}", f"2026-03-03T10:00:0{i % 10}Z INFO job {u} finished in 1.2s")
        add(
            "uuids",
            f"k8s uid {i}",
            f'metadata:\n  name: api-7d9f\n  uid: {u}\n  resourceVersion: "{g.r.randint(10**5, 10**7)}"',
        )  # noqa: E501
        integrity = base64.b64encode(hashlib.sha512(g.r.randbytes(8)).digest()).decode()
        add(
            "lockfiles",
            f"npm lock {i}",
            json.dumps(
                {
                    f"node_modules/pkg{i}": {
                        "version": "1.2.3",
                        "resolved": f"https://registry.npmjs.org/pkg{i}/-/pkg{i}-1.2.3.tgz",
                        "integrity": f"sha512-{integrity}",
                    }
                },
                indent=2,
            ),
        )  # noqa: E501
        add(
            "lockfiles",
            f"yarn lock {i}",
            f'pkg{i}@^1.0.0:\n  version "1.0.4"\n  resolved "https://registry.yarnpkg.com/pkg{i}/-/pkg{i}-1.0.4.tgz#{sha}"\n  integrity sha512-{integrity}\n',
        )  # noqa: E501
        h1 = base64.b64encode(hashlib.sha256(g.r.randbytes(8)).digest()).decode()
        add(
            "lockfiles",
            f"go sum {i}",
            f"golang.org/x/crypto v0.{i}.0 h1:{h1}\ngolang.org/x/crypto v0.{i}.0/go.mod h1:{h1[::-1]}",
        )  # noqa: E501
        add("lockfiles", f"pip hash {i}", f"requests==2.32.{i} \\\n    --hash=sha256:{sha256}")
        add(
            "lockfiles",
            f"poetry lock {i}",
            f'[[package]]\nname = "pkg{i}"\nversion = "1.0.{i}"\nfiles = [\n    {{file = "pkg{i}-1.0.{i}.tar.gz", hash = "sha256:{sha256}"}},\n]',
        )  # noqa: E501
        add(
            "lockfiles",
            f"cargo lock {i}",
            f'[[package]]\nname = "serde"\nversion = "1.0.{i}"\nchecksum = "{sha256}"',
        )  # noqa: E501
    placeholders = [
        "OPENAI_API_KEY=your-api-key-here", "API_KEY=<your api key>", "DB_PASSWORD=${DB_PASSWORD}",
        "GITHUB_TOKEN: ${{ secrets.GITHUB_TOKEN }}", "password: changeme", "SECRET_KEY=xxxxxxxxxxxxxxxx",
        'curl -H "Authorization: Bearer $TOKEN" https://api.github.com/user',
        "export ANTHROPIC_API_KEY=sk-ant-...", "token = os.environ['GH_TOKEN']",
        "STRIPE_SECRET_KEY=sk_test_xxxxxxxxxxxxxxxxxxxxxxxx", "AWS_SECRET_ACCESS_KEY=<secret>",
        "password = getpass.getpass('Password: ')", "api_key = settings.OPENAI_API_KEY",
        "Authorization: Bearer <token>", "HF_TOKEN=hf_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
        "DATABASE_URL=postgres://user:password@localhost:5432/app", "VAULT_TOKEN=hvs.<token>",
        "db_password: '{{ vault_db_password }}'", "- name: API_TOKEN\n  valueFrom:\n    secretKeyRef:\n      name: api\n      key: token",  # noqa: E501
        "password=********", "MYSQL_PASSWORD=", "export NPM_TOKEN=$(cat ~/.npm-token)",
        "client_secret: REPLACE_ME", "Set `SENTRY_AUTH_TOKEN` to the token from Settings > Auth Tokens.",  # noqa: E501
        "curl -u $USER:$PASS https://ci.internal", "api_key: !vault |\n  $ANSIBLE_VAULT;1.1;AES256",
    ]  # fmt: skip
    for i, text in enumerate(placeholders):
        add("placeholders", f"placeholder {i}", text)
    for i, fp in enumerate(_published()["fp"]):
        add("published_fp", f"{fp['source'].split('/')[-1]} fp {i}", fp["line"])
    lookalikes = [
        ("upper-case prose", "WARNING: THE AWS ACCESS KEY ROTATION POLICY REQUIRES THAT EVERY KEY IS REPLACED WITHIN NINETY DAYS AND AUDITED"),  # noqa: E501
        ("dna", "ACGTTGCAAGCTTAGCCTAGGCTTACGATCGATCGGATCCATGCAAGTCGAACGGTAACAGGAAGAAGCTTGCTTCTTTGCTGACGAGTGGCGGACGGGTGAGTAATG"),  # noqa: E501
        ("filler a", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"),
        ("filler digits", "api_key = 1234567890123456"),
        ("filler xxx:yyy", "curl --user xxx:yyy https://a.test"),
        ("key prefix inside base64", '{"data": "' + base64.b64encode(b"\x00" * 9 + b"xoxb-ghp_AKIA" + g.r.randbytes(300)).decode() + '"}'),  # noqa: E501
        ("base64 png", '{"type":"image","source":{"type":"base64","media_type":"image/png","data":"' + base64.b64encode(b"\x89PNG\r\n\x1a\n" + g.r.randbytes(900)).decode() + '"}}'),  # noqa: E501
        ("max tokens", json.dumps({"model": "claude-sonnet-4-6", "max_tokens": 4096, "temperature": 0.2})),  # noqa: E501
        ("tokenizer", json.dumps({"eos_token": "</s>", "pad_token": "[PAD]", "unk_token": "<unk>"})),  # noqa: E501
        ("pagination", json.dumps({"items": [], "nextPageToken": "CAoQAA", "cursor": "eyJwYWdlIjoyfQ"})),  # noqa: E501
        ("css", "color: #ff00aa; --token-color: #123456; background: #0b0c0d;"),
        ("pytest pass", "PASSED tests/test_auth.py::test_token_refresh\n===== 12 passed in 0.52s =====\nPass: 12"),  # noqa: E501
        ("ssh public key", "ssh-ed25519 " + base64.b64encode(g.r.randbytes(51)).decode() + " dev@laptop"),  # noqa: E501
        ("certificate", "-----BEGIN CERTIFICATE-----\n" + "\n".join(base64.b64encode(g.r.randbytes(48)).decode() for _ in range(6)) + "\n-----END CERTIFICATE-----"),  # noqa: E501
        ("ulid", "request_id=01ARZ3NDEKTSV4RRFFQ69G5FAV trace=4bf92f3577b34da6a3ce929d0e0e4736"),
        ("password policy", "PASSWORD_MIN_LENGTH=12\nPASSWORD_RESET_TIMEOUT=3600\nTOKEN_TTL_SECONDS=900"),  # noqa: E501
        ("stripe publishable", "STRIPE_PUBLISHABLE_KEY=pk_live_" + g.s(ALNUM, 24)),
        ("public key id", "public_key_id = 'kid-2026-03'\nkey_id: 7f3a"),
        ("prose about tokens", "The token expired, so I rotated the password and updated the API key in the vault; nothing else changed."),  # noqa: E501
        ("git remote", "origin\tgit@github.com:acme/api.git (fetch)\norigin\thttps://github.com/acme/api.git (push)"),  # noqa: E501
    ]  # fmt: skip
    for name, text in lookalikes:
        add("lookalikes", name, text)
    return out


_STDLIB_SKIP = ("test", "tests", "idlelib", "lib2to3", "site-packages", "dist-packages", "ensurepip",
                "pydoc_data", "turtledemo", "__pycache__", "config-3")  # fmt: skip


def _stdlib_files() -> Iterator[Path]:
    import sysconfig

    root = Path(sysconfig.get_paths()["stdlib"])
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).parts
        if any(part in _STDLIB_SKIP or part.startswith("test") for part in rel):
            continue
        if (
            path.suffix
            in (".py", ".json", ".txt", ".cfg", ".toml", ".csv", ".xml", ".html", ".ini")
            and path.is_file()
        ):  # noqa: E501
            yield path


def realistic_code(limit: int = 400, seed: int = 31, block_chars: int = 1500) -> list[Candidate]:
    """Blocks of real code and data: slices of this Python's standard library (no test suites),
    as an agent's Read tool would show them. Deterministic for one Python build."""
    r = random.Random(seed)
    files = list(_stdlib_files())
    r.shuffle(files)
    out: list[Candidate] = []
    for path in files:
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        if len(text) < 200:
            continue
        start = r.randrange(0, max(1, len(text) - block_chars))
        start = text.rfind("\n", 0, start) + 1
        block = text[start : start + block_chars]
        group = "code" if path.suffix == ".py" else "data"
        out.append(Candidate(group, f"{path.parent.name}/{path.name}", block))
        if len(out) >= limit:
            break
    return out


if __name__ == "__main__":  # a quick census
    ps = placements()
    print(
        len({p.secret.value for p in ps}),
        "values of",
        len({p.secret.kind for p in ps}),
        "kinds;",
        len(ps),
        "placements",
    )  # noqa: E501
    ns = non_secrets()
    print(
        len(ns),
        "non-secret candidates;",
        len(realistic_code()),
        "code/data blocks",
        file=sys.stdout,
    )  # noqa: E501
