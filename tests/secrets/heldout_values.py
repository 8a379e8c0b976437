"""The secret values of the held-out corpus (see heldout_corpus.py): where each comes from.

Nothing here is a real person's credential. Four sources, none of them the field corpus's
(field_corpus.py used the gitleaks rule tests and its own list of 85 vendor formats):

* `heldout_samples.json`: values other secret scanners publish as their own test data —
  TruffleHog's detector pattern tests, Nosey Parker's rule examples, detect-secrets' test data
  and keyword tests, ggshield's unit-test fixtures — each with the line it was published in
  (base64 in the file, so the repository holds no secret-shaped literal);
* tokens generated at run time, from a seeded RNG, to vendors' published formats
  (`FORMATS`: a different list from the field corpus's, with the variants real tokens show:
  an Azure secret starting with `-`, a `ghs_` token holding `_`, refresh and OAuth tokens,
  webhook URLs, connection strings, keys with no prefix at all);
* private keys minted at run time with `cryptography` (PKCS#1, SEC1, PKCS#8 plain and
  encrypted, OpenSSH, DSA, X25519, a PuTTY v3 file, a JWK, a GCP service-account JSON);
* passwords people choose: short, dictionary-like, with spaces, non-ASCII (Cyrillic, CJK,
  Arabic, accented Latin, emoji), quotes and shell metacharacters.

`values(seed) -> list[Value]`.
"""

from __future__ import annotations

import base64
import json
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from field_corpus import ALNUM, B64, DI, HEX, LO, UHEX, UP, URLSAFE, Gen, _p

HERE = Path(__file__).resolve().parent
B32 = UP + "234567"
LOWNUM = LO + DI


@dataclass(frozen=True, slots=True)
class Value:
    """One labelled secret and how a session would carry it.

    `family`: token (machine-minted, may or may not have a prefix), password (chosen by a
    person), key (a private key block), url (a whole connection string is the carrier).
    `self_identifying`: a scanner could recognise the value with nothing around it.
    `env`: the variable a config would hold it in; `auth`: how an HTTP client sends it
    (bearer | token | basic_user | header:<Name> | query:<key> | user | none).
    `line`: the line a scanner published it in (`{v}` marks the value), if any.
    """

    kind: str
    value: str
    source: str  # published | generated | keygen | password
    family: str
    env: str
    auth: str = "bearer"
    self_identifying: bool = True
    host: str = "api.service.test"
    line: str | None = None
    origin: str = ""


# -- published test data ------------------------------------------------------------------


@cache
def _published_raw() -> dict[str, list[dict[str, str]]]:
    data = json.loads((HERE / "heldout_samples.json").read_text(encoding="utf-8"))
    dec = lambda s: base64.b64decode(s).decode("utf-8")  # noqa: E731
    return {
        "tp": [
            {
                "source": e["source"],
                "kind": e["kind"],
                "value": dec(e["value"]),
                "line": dec(e["line"]),
            }
            for e in data["true_positives"]
        ],
        "fp": [{"source": e["source"], "text": dec(e["text"])} for e in data["false_positives"]],
    }


_PASSWORD_KINDS = ("password", "netrc_password", "url_password", "planetscale_password")
_UNMARKED_KINDS = (
    "generic_secret", "generic_api_key", "datadog_api_key", "datadog_app_key", "elevenlabs_key",
    "jenkins_token", "jenkins_crumb", "facebook_app_secret", "cloudflare_api_token",
    "azure_devops_pat", "github_token", "mailgun_key", "azure_storage_key", "azure_sas_key",
    "azure_appconfig_secret", "wireguard_private_key", "wireguard_preshared_key", "basic_auth",
    "django_secret", "aws_secret_access_key", "deepseek_key",
)  # fmt: skip


def _env_for(kind: str) -> str:
    return {
        "password": "DB_PASSWORD", "netrc_password": "NETRC_PASSWORD", "url_password": "DB_PASS",
        "planetscale_password": "PLANETSCALE_PASSWORD", "basic_auth": "BASIC_AUTH",
    }.get(kind, kind.upper().replace("-", "_") if kind.endswith(("key", "token", "secret"))
          else kind.upper() + "_TOKEN")  # fmt: skip


def published() -> list[Value]:
    out = []
    for e in _published_raw()["tp"]:
        kind, value = e["kind"], e["value"]
        family = "password" if kind in _PASSWORD_KINDS else "token"
        self_id = kind not in _PASSWORD_KINDS and kind not in _UNMARKED_KINDS
        auth = "user" if family == "password" else "bearer"
        out.append(
            Value(
                kind,
                value,
                "published",
                family,
                _env_for(kind),
                auth,
                self_id,
                line=e["line"],
                origin=e["source"],
            )  # fmt: skip
        )
    return out


def published_false_positives() -> list[tuple[str, str]]:
    """(source, text) of the scanners' own published negative examples that hold no secret."""
    return [(e["source"], e["text"]) for e in _published_raw()["fp"]]


# -- vendors' published formats (generated) -----------------------------------------------

Fmt = Callable[[Gen], str]


def _uuid(g: Gen) -> str:
    return str(uuid.UUID(int=g.r.getrandbits(128), version=4))


def _b64(g: Gen, n_bytes: int) -> str:
    return base64.b64encode(g.r.randbytes(n_bytes)).decode()


def _docker_auth(g: Gen) -> str:
    user = g.s(LO, 7)
    return base64.b64encode(f"{user}:{g.s(ALNUM, 14)}".encode()).decode()


# (kind, env, generator, auth, host, self_identifying)
FORMATS: list[tuple[str, str, Fmt, str, str, bool]] = [
    # source control, CI, registries
    ("github_refresh", "GH_REFRESH_TOKEN", lambda g: _p("gh", "r_") + g.s(ALNUM, 76), "bearer", "github.com", True),  # noqa: E501
    ("github_user_to_server", "GITHUB_USER_TOKEN", lambda g: _p("gh", "u_") + g.s(ALNUM, 36), "token", "api.github.com", True),  # noqa: E501
    ("github_app_installation_underscore", "GITHUB_INSTALLATION_TOKEN", lambda g: _p("gh", "s_") + g.s(ALNUM, 14) + "_" + g.s(ALNUM, 21), "token", "api.github.com", True),  # noqa: E501
    ("gitlab_deploy", "GITLAB_DEPLOY_TOKEN", lambda g: _p("gl", "dt-") + g.s(URLSAFE, 20), "header:PRIVATE-TOKEN", "gitlab.example.org", True),  # noqa: E501
    ("gitlab_trigger", "CI_TRIGGER_TOKEN", lambda g: _p("gl", "ptt-") + g.s(HEX, 40), "none", "gitlab.com", True),  # noqa: E501
    ("gitlab_runner_registration", "RUNNER_REGISTRATION_TOKEN", lambda g: _p("GR13", "48941") + g.s(URLSAFE, 20), "none", "gitlab.com", True),  # noqa: E501
    ("gitlab_ci_build", "CI_JOB_TOKEN", lambda g: _p("gl", "cbt-") + g.s(HEX, 2) + "_" + g.s(URLSAFE, 20), "header:JOB-TOKEN", "gitlab.com", True),  # noqa: E501
    ("bitbucket_access_token", "BITBUCKET_TOKEN", lambda g: _p("AT", "CTT3xFfGN0") + g.s(URLSAFE, 180) + "=" + g.s(UHEX, 8), "bearer", "api.bitbucket.org", True),  # noqa: E501
    ("buildkite", "BUILDKITE_API_TOKEN", lambda g: _p("bk", "ua_") + g.s(HEX, 40), "bearer", "api.buildkite.com", True),  # noqa: E501
    ("sonarqube", "SONAR_TOKEN", lambda g: _p("sq", "u_") + g.s(HEX, 40), "basic_user", "sonarcloud.io", True),  # noqa: E501
    ("nuget", "NUGET_API_KEY", lambda g: _p("oy", "2") + g.s(LOWNUM, 43), "header:X-NuGet-ApiKey", "www.nuget.org", True),  # noqa: E501
    ("cratesio", "CARGO_REGISTRY_TOKEN", lambda g: _p("ci", "o") + g.s(ALNUM, 32), "raw", "crates.io", True),  # noqa: E501
    ("npm_legacy_uuid", "NPM_AUTH_TOKEN", _uuid, "bearer", "registry.npmjs.org", False),
    ("jfrog_reference", "JFROG_ACCESS_TOKEN", lambda g: _p("cmVmdGtu", "OjAxOj") + g.s(ALNUM, 54), "bearer", "acme.jfrog.io", True),  # noqa: E501
    ("docker_config_auth", "DOCKER_AUTH", _docker_auth, "none", "ghcr.io", False),
    ("terraform_cloud_team", "TF_TOKEN_app_terraform_io", lambda g: g.s(ALNUM, 14) + _p(".at", "lasv1.") + g.s(ALNUM + "-_", 67), "bearer", "app.terraform.io", True),  # noqa: E501
    # clouds
    ("aws_session_token", "AWS_SESSION_TOKEN", lambda g: _p("IQoJb3JpZ2luX2Vj", "EJr") + g.s(B64, 300) + "=", "none", "sts.amazonaws.com", True),  # noqa: E501
    ("aws_secret_bare", "AWS_SECRET_ACCESS_KEY", lambda g: g.s(B64, 40), "none", "s3.amazonaws.com", False),  # noqa: E501
    ("gcp_hmac_access", "GCS_HMAC_ACCESS_ID", lambda g: _p("GOO", "G1E") + g.s(UP + DI, 56), "none", "storage.googleapis.com", True),  # noqa: E501
    ("google_oauth_refresh", "GOOGLE_REFRESH_TOKEN", lambda g: _p("1/", "/0") + g.s(URLSAFE, 100), "none", "oauth2.googleapis.com", True),  # noqa: E501
    ("google_oauth_access", "GOOGLE_ACCESS_TOKEN", lambda g: _p("ya", "29.") + g.s(URLSAFE, 160), "bearer", "www.googleapis.com", True),  # noqa: E501
    ("firebase_fcm_server", "FCM_SERVER_KEY", lambda g: _p("AAA", "A") + g.s(URLSAFE, 7) + _p(":AP", "A91b") + g.s(URLSAFE, 134), "header:Authorization: key=", "fcm.googleapis.com", True),  # noqa: E501
    ("azure_client_secret_dash", "AZURE_CLIENT_SECRET", lambda g: g.r.choice("-~._") + g.s(ALNUM, 2) + g.s(DI, 1) + "Q~" + g.s(ALNUM + "_~.-", 34), "none", "login.microsoftonline.com", True),  # noqa: E501
    ("azure_sas_signature", "AZURE_STORAGE_SAS_TOKEN", lambda g: "sv=2022-11-02&ss=bfqt&srt=sco&sp=rwdlacupiytfx&se=2026-12-31T00:00:00Z&st=2025-01-01T00:00:00Z&spr=https&sig=" + _b64(g, 32).replace("+", "%2B").replace("/", "%2F").replace("=", "%3D"), "none", "acct.blob.core.windows.net", True),  # noqa: E501
    ("azure_cosmos_key", "COSMOS_KEY", lambda g: _b64(g, 64), "none", "acct.documents.azure.com", False),  # noqa: E501
    ("azure_openai_key", "AZURE_OPENAI_API_KEY", lambda g: g.s(HEX, 32), "header:api-key", "acme.openai.azure.com", False),  # noqa: E501
    ("azure_function_key", "FUNCTION_KEY", lambda g: g.s(URLSAFE, 54) + "==", "query:code", "acme-fn.azurewebsites.net", False),  # noqa: E501
    ("digitalocean_oauth", "DO_OAUTH_TOKEN", lambda g: _p("do", "o_v1_") + g.s(HEX, 64), "bearer", "api.digitalocean.com", True),  # noqa: E501
    ("linode", "LINODE_TOKEN", lambda g: g.s(HEX, 64), "bearer", "api.linode.com", False),
    ("hetzner", "HCLOUD_TOKEN", lambda g: g.s(ALNUM, 64), "bearer", "api.hetzner.cloud", False),
    ("scaleway_secret", "SCW_SECRET_KEY", _uuid, "header:X-Auth-Token", "api.scaleway.com", False),
    ("tencent_secret_id", "TENCENTCLOUD_SECRET_ID", lambda g: _p("AK", "ID") + g.s(ALNUM, 32), "none", "cvm.tencentcloudapi.com", True),  # noqa: E501
    ("ibm_cloud_api_key", "IBMCLOUD_API_KEY", lambda g: g.s(URLSAFE, 44), "none", "iam.cloud.ibm.com", False),  # noqa: E501
    ("cloudflare_global_key", "CLOUDFLARE_API_KEY", lambda g: g.s(HEX, 37), "header:X-Auth-Key", "api.cloudflare.com", False),  # noqa: E501
    ("fastly", "FASTLY_API_TOKEN", lambda g: g.s(URLSAFE, 32), "header:Fastly-Key", "api.fastly.com", False),  # noqa: E501
    ("netlify", "NETLIFY_AUTH_TOKEN", lambda g: _p("nf", "p_") + g.s(ALNUM, 40), "bearer", "api.netlify.com", True),  # noqa: E501
    ("vercel", "VERCEL_TOKEN", lambda g: g.s(ALNUM, 24), "bearer", "api.vercel.com", False),
    ("render", "RENDER_API_KEY", lambda g: _p("rn", "d_") + g.s(ALNUM, 32), "bearer", "api.render.com", True),  # noqa: E501
    ("neon", "NEON_API_KEY", lambda g: _p("na", "pi_") + g.s(LOWNUM, 64), "bearer", "console.neon.tech", True),  # noqa: E501
    ("railway", "RAILWAY_TOKEN", _uuid, "bearer", "backboard.railway.app", False),
    # AI providers
    ("anthropic_oauth", "CLAUDE_CODE_OAUTH_TOKEN", lambda g: _p("sk-", "ant-", "oat01-") + g.s(URLSAFE, 93) + "AA", "bearer", "api.anthropic.com", True),  # noqa: E501
    ("openai_admin", "OPENAI_ADMIN_KEY", lambda g: _p("sk-", "admin-") + g.s(URLSAFE, 58) + _p("T3Blb", "kFJ") + g.s(URLSAFE, 58), "bearer", "api.openai.com", True),  # noqa: E501
    ("huggingface_org", "HF_ORG_TOKEN", lambda g: _p("api", "_org_") + g.s(UP + LO, 34), "bearer", "huggingface.co", True),  # noqa: E501
    ("cohere", "COHERE_API_KEY", lambda g: g.s(ALNUM, 40), "bearer", "api.cohere.com", False),
    ("mistral", "MISTRAL_API_KEY", lambda g: g.s(ALNUM, 32), "bearer", "api.mistral.ai", False),
    ("together", "TOGETHER_API_KEY", lambda g: g.s(HEX, 64), "bearer", "api.together.xyz", False),
    ("fireworks", "FIREWORKS_API_KEY", lambda g: _p("fw", "_") + g.s(ALNUM, 24), "bearer", "api.fireworks.ai", True),  # noqa: E501
    ("pinecone", "PINECONE_API_KEY", lambda g: _p("pc", "sk_") + g.s(ALNUM, 5) + "_" + g.s(ALNUM, 64), "header:Api-Key", "api.pinecone.io", True),  # noqa: E501
    ("wandb", "WANDB_API_KEY", lambda g: g.s(HEX, 40), "basic_user", "api.wandb.ai", False),
    ("voyage", "VOYAGE_API_KEY", lambda g: _p("pa", "-") + g.s(URLSAFE, 43), "bearer", "api.voyageai.com", True),  # noqa: E501
    ("jina", "JINA_API_KEY", lambda g: _p("ji", "na_") + g.s(ALNUM, 60), "bearer", "api.jina.ai", True),  # noqa: E501
    ("tavily", "TAVILY_API_KEY", lambda g: _p("tv", "ly-") + g.s(ALNUM, 32), "bearer", "api.tavily.com", True),  # noqa: E501
    ("firecrawl", "FIRECRAWL_API_KEY", lambda g: _p("fc", "-") + g.s(HEX, 32), "bearer", "api.firecrawl.dev", True),  # noqa: E501
    ("langfuse_secret", "LANGFUSE_SECRET_KEY", lambda g: _p("sk", "-lf-") + _uuid(g), "basic_user", "cloud.langfuse.com", True),  # noqa: E501
    ("elevenlabs_new", "ELEVENLABS_API_KEY", lambda g: _p("s", "k_") + g.s(HEX, 48), "header:xi-api-key", "api.elevenlabs.io", True),  # noqa: E501
    ("assemblyai", "ASSEMBLYAI_API_KEY", lambda g: g.s(HEX, 32), "header:authorization", "api.assemblyai.com", False),  # noqa: E501
    ("deepgram", "DEEPGRAM_API_KEY", lambda g: g.s(HEX, 40), "token", "api.deepgram.com", False),  # noqa: E501
    # SaaS, payments, comms
    ("slack_user", "SLACK_USER_TOKEN", lambda g: _p("xo", "xp-") + g.s(DI, 13) + "-" + g.s(DI, 13) + "-" + g.s(DI, 13) + "-" + g.s(HEX, 32), "bearer", "slack.com", True),  # noqa: E501
    ("slack_webhook_url", "SLACK_WEBHOOK_URL", lambda g: "https://hooks.slack.com/services/T" + g.s(UP + DI, 8) + "/B" + g.s(UP + DI, 10) + "/" + g.s(ALNUM, 24), "none", "hooks.slack.com", True),  # noqa: E501
    ("discord_webhook_url", "DISCORD_WEBHOOK", lambda g: "https://discord.com/api/webhooks/" + g.s(DI, 19) + "/" + g.s(URLSAFE, 68), "none", "discord.com", True),  # noqa: E501
    ("teams_webhook_url", "TEAMS_WEBHOOK_URL", lambda g: "https://acme.webhook.office.com/webhookb2/" + _uuid(g) + "@" + _uuid(g) + "/IncomingWebhook/" + g.s(HEX, 32) + "/" + _uuid(g), "none", "acme.webhook.office.com", True),  # noqa: E501
    ("stripe_test_secret", "STRIPE_API_KEY", lambda g: _p("sk", "_test_") + "51" + g.s(ALNUM, 97), "basic_user", "api.stripe.com", True),  # noqa: E501
    ("stripe_restricted_live", "STRIPE_RK", lambda g: _p("rk", "_live_") + "51" + g.s(ALNUM, 97), "bearer", "api.stripe.com", True),  # noqa: E501
    ("paystack", "PAYSTACK_SECRET_KEY", lambda g: _p("sk", "_live_") + g.s(HEX, 40), "bearer", "api.paystack.co", True),  # noqa: E501
    ("razorpay", "RAZORPAY_KEY_SECRET", lambda g: g.s(ALNUM, 24), "basic_user", "api.razorpay.com", False),  # noqa: E501
    ("flutterwave", "FLW_SECRET_KEY", lambda g: _p("FLWSE", "CK-") + g.s(HEX, 32) + "-X", "bearer", "api.flutterwave.com", True),  # noqa: E501
    ("braintree", "BRAINTREE_ACCESS_TOKEN", lambda g: _p("access_token", "$production$") + g.s(LOWNUM, 16) + "$" + g.s(HEX, 32), "bearer", "api.braintreegateway.com", True),  # noqa: E501
    ("plaid_access", "PLAID_ACCESS_TOKEN", lambda g: _p("access-", "production-") + _uuid(g), "none", "production.plaid.com", True),  # noqa: E501
    ("shopify_shared_secret", "SHOPIFY_API_SECRET", lambda g: _p("sh", "pss_") + g.s(HEX, 32), "none", "acme.myshopify.com", True),  # noqa: E501
    ("square_oauth_secret", "SQUARE_APPLICATION_SECRET", lambda g: _p("sq", "0csp-") + g.s(URLSAFE, 43), "none", "connect.squareup.com", True),  # noqa: E501
    ("resend", "RESEND_API_KEY", lambda g: _p("r", "e_") + g.s(ALNUM, 8) + "_" + g.s(ALNUM, 24), "bearer", "api.resend.com", True),  # noqa: E501
    ("postmark", "POSTMARK_SERVER_TOKEN", _uuid, "header:X-Postmark-Server-Token", "api.postmarkapp.com", False),  # noqa: E501
    ("twilio_auth", "TWILIO_AUTH_TOKEN", lambda g: g.s(HEX, 32), "user", "api.twilio.com", False),
    ("mailjet_secret", "MJ_APIKEY_PRIVATE", lambda g: g.s(HEX, 32), "user", "api.mailjet.com", False),  # noqa: E501
    ("hubspot_pat", "HUBSPOT_ACCESS_TOKEN", lambda g: _p("pat-", "na1-") + _uuid(g), "bearer", "api.hubapi.com", True),  # noqa: E501
    ("asana_pat", "ASANA_PAT", lambda g: "2/" + g.s(DI, 16) + "/" + g.s(DI, 16) + ":" + g.s(HEX, 32), "bearer", "app.asana.com", True),  # noqa: E501
    ("clickup", "CLICKUP_API_TOKEN", lambda g: _p("p", "k_") + g.s(DI, 8) + "_" + g.s(UP + DI, 32), "header:Authorization", "api.clickup.com", True),  # noqa: E501
    ("trello_token", "TRELLO_TOKEN", lambda g: _p("ATT", "A") + g.s(HEX, 64) + g.s(UHEX, 8), "query:token", "api.trello.com", True),  # noqa: E501
    ("zendesk", "ZENDESK_API_TOKEN", lambda g: g.s(ALNUM, 40), "basic_user", "acme.zendesk.com", False),  # noqa: E501
    ("intercom", "INTERCOM_ACCESS_TOKEN", lambda g: _p("dG9rOj", "") + g.s(B64, 54) + "=", "bearer", "api.intercom.io", True),  # noqa: E501
    ("algolia_admin", "ALGOLIA_ADMIN_KEY", lambda g: g.s(HEX, 32), "header:X-Algolia-API-Key", "acme-dsn.algolia.net", False),  # noqa: E501
    ("honeycomb", "HONEYCOMB_API_KEY", lambda g: _p("hca", "ik_") + "01" + g.s(LOWNUM, 56), "header:X-Honeycomb-Team", "api.honeycomb.io", True),  # noqa: E501
    ("pagerduty", "PAGERDUTY_TOKEN", lambda g: "u+" + g.s(URLSAFE, 18), "token", "api.pagerduty.com", False),  # noqa: E501
    ("launchdarkly", "LD_SDK_KEY", lambda g: _p("sd", "k-") + _uuid(g), "header:Authorization", "app.launchdarkly.com", True),  # noqa: E501
    ("snyk", "SNYK_TOKEN", _uuid, "token", "api.snyk.io", False),
    ("okta_ssws", "OKTA_API_TOKEN", lambda g: "00" + g.s(URLSAFE, 40), "ssws", "acme.okta.com", False),
    ("auth0_client_secret", "AUTH0_CLIENT_SECRET", lambda g: g.s(URLSAFE, 64), "none", "acme.us.auth0.com", False),  # noqa: E501
    ("clerk", "CLERK_SECRET_KEY", lambda g: _p("sk", "_live_") + g.s(ALNUM, 40), "bearer", "api.clerk.com", True),  # noqa: E501
    ("supabase_service_role", "SUPABASE_SERVICE_ROLE_KEY", lambda g: g.b64json({"alg": "HS256", "typ": "JWT"}) + "." + g.b64json({"iss": "supabase", "ref": g.s(LO, 20), "role": "service_role", "iat": 1700000000, "exp": 2015576000}) + "." + g.s(URLSAFE, 43), "bearer", "acme.supabase.co", True),  # noqa: E501
    ("ngrok", "NGROK_AUTHTOKEN", lambda g: "2" + g.s(ALNUM, 26) + "_" + g.s(ALNUM, 21), "none", "ngrok.com", False),  # noqa: E501
    ("tailscale_api", "TS_API_KEY", lambda g: _p("tsk", "ey-api-") + g.s(ALNUM, 11) + "CNTRL-" + g.s(ALNUM, 32), "bearer", "api.tailscale.com", True),  # noqa: E501
    ("doppler_service", "DOPPLER_SERVICE_TOKEN", lambda g: _p("dp", ".st.") + "prd." + g.s(ALNUM, 43), "bearer", "api.doppler.com", True),  # noqa: E501
    ("vault_legacy", "VAULT_TOKEN", lambda g: "s." + g.s(ALNUM, 24), "header:X-Vault-Token", "vault.internal", True),  # noqa: E501
    ("infisical", "INFISICAL_TOKEN", lambda g: "st." + _uuid(g) + "." + g.s(HEX, 32) + "." + g.s(HEX, 32), "bearer", "app.infisical.com", True),  # noqa: E501
    ("k8s_bootstrap", "KUBEADM_TOKEN", lambda g: g.s(LOWNUM, 6) + "." + g.s(LOWNUM, 16), "none", "k8s.internal", True),  # noqa: E501
    ("mapbox_secret", "MAPBOX_ACCESS_TOKEN", lambda g: _p("sk", ".eyJ") + g.b64json({"u": g.s(LO, 8), "a": g.s(LOWNUM, 25)})[3:] + "." + g.s(URLSAFE, 22), "query:access_token", "api.mapbox.com", True),  # noqa: E501
    ("jwt_rs256", "ID_TOKEN", lambda g: g.b64json({"alg": "RS256", "kid": g.s(HEX, 16), "typ": "JWT"}) + "." + g.b64json({"sub": _uuid(g), "email": g.s(LO, 6) + "@acme.dev", "exp": 1900000000}) + "." + g.s(URLSAFE, 342), "bearer", "api.internal", True),  # noqa: E501
    ("flask_secret", "FLASK_SECRET_KEY", lambda g: g.s(HEX, 48), "none", "", False),
    ("rails_master_key", "RAILS_MASTER_KEY", lambda g: g.s(HEX, 32), "none", "", False),
    ("laravel_app_key", "APP_KEY", lambda g: "base64:" + _b64(g, 32), "none", "", True),
    ("nextauth_secret", "NEXTAUTH_SECRET", lambda g: _b64(g, 32), "none", "", False),
    ("encryption_key_hex", "ENCRYPTION_KEY", lambda g: g.s(HEX, 64), "none", "", False),
    ("webhook_secret_generic", "GITHUB_WEBHOOK_SECRET", lambda g: g.s(ALNUM, 20), "none", "", False),  # noqa: E501
]  # fmt: skip


def generated(g: Gen, per_format: int = 2) -> list[Value]:
    out = []
    for kind, env, fmt, auth, host, self_id in FORMATS:
        for _ in range(per_format):
            out.append(Value(kind, fmt(g), "generated", "token", env, auth, self_id, host,
                             origin="vendor format"))  # fmt: skip
    return out


# -- passwords people choose ----------------------------------------------------------------

_PW_ENVS = ("POSTGRES_PASSWORD", "MYSQL_PASSWORD", "REDIS_PASSWORD", "ADMIN_PASS", "SMTP_PASS",
            "RABBITMQ_PASSWORD", "MONGO_INITDB_ROOT_PASSWORD", "KEYCLOAK_ADMIN_PASSWORD",
            "ELASTIC_PASSWORD", "GRAFANA_ADMIN_PASSWORD", "LDAP_PASSWORD", "VNC_PASSWORD")  # fmt: skip


def passwords(g: Gen) -> list[Value]:
    """People's passwords: nothing about them says 'secret' but the word in front."""
    vals = [
        g.s(LO, 5) + g.s(DI, 2),  # short word+digits
        g.s(LO, 4),  # four lower letters
        "Tr0ub4dor&" + g.s(DI, 1),
        g.s(LO, 6) + g.s(UP, 1) + "!",
        g.s(DI, 6),  # a PIN-like number
        g.s(ALNUM, 10),
        g.s(ALNUM + "!@#$%^&*", 14),
        "correct horse " + g.s(LO, 7) + " staple",  # with spaces
        "Passwort" + g.s(DI, 3) + "ä",
        "Contraseña-" + g.s(DI, 3),
        "мойпароль" + g.s(DI, 2),
        "秘密のパス" + g.s(DI, 3),
        "كلمةالسر" + g.s(DI, 2),
        "Zażółć" + g.s(DI, 2) + "!",
        "🔑hunter" + g.s(DI, 2),
        "p@ss'w\"rd" + g.s(DI, 2),  # quotes inside
        "$ecret;" + g.s(LO, 4) + "|&",  # shell metacharacters
        g.s(LO, 3) + "-" + g.s(LO, 3),  # tiny with a dash
        "Winter" + str(g.r.randint(2019, 2026)) + "!",
        g.s(LO, 8),  # one lower-case word-like run
    ]
    return [
        Value(
            "password",
            v,
            "password",
            "password",
            _PW_ENVS[i % len(_PW_ENVS)],
            "user",
            False,
            host="db.internal",
            origin="chosen",
        )  # fmt: skip
        for i, v in enumerate(vals)
    ]


# -- private keys minted now ----------------------------------------------------------------


def _putty(g: Gen) -> str:
    pub = _b64(g, 51)
    priv = _b64(g, 48)
    return (
        "PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\nComment: eddsa-key-20260301\n"
        f"Public-Lines: 2\n{pub[:64]}\n{pub[64:]}\nPrivate-Lines: 1\n{priv}\n"
        f"Private-MAC: {g.s(HEX, 64)}"
    )


def private_keys(g: Gen) -> list[Value]:
    from cryptography.hazmat.primitives import serialization as ser
    from cryptography.hazmat.primitives.asymmetric import dsa, ec, ed25519, rsa, x25519

    pem, none = ser.Encoding.PEM, ser.NoEncryption()
    rsa_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    ec384 = ec.generate_private_key(ec.SECP384R1())
    ed = ed25519.Ed25519PrivateKey.generate()
    keys: list[tuple[str, str]] = [
        ("rsa_pkcs1", rsa_key.private_bytes(pem, ser.PrivateFormat.TraditionalOpenSSL, none).decode()),
        ("rsa_pkcs8_encrypted", rsa_key.private_bytes(pem, ser.PrivateFormat.PKCS8, ser.BestAvailableEncryption(b"pw-" + g.s(ALNUM, 8).encode())).decode()),
        ("ec_p384_sec1", ec384.private_bytes(pem, ser.PrivateFormat.TraditionalOpenSSL, none).decode()),
        ("ec_p384_pkcs8", ec384.private_bytes(pem, ser.PrivateFormat.PKCS8, none).decode()),
        ("ed25519_openssh", ed.private_bytes(pem, ser.PrivateFormat.OpenSSH, none).decode()),
        ("ed25519_pkcs8", ed.private_bytes(pem, ser.PrivateFormat.PKCS8, none).decode()),
        ("dsa_pkcs8", dsa.generate_private_key(key_size=2048).private_bytes(pem, ser.PrivateFormat.PKCS8, none).decode()),
        ("x25519_pkcs8", x25519.X25519PrivateKey.generate().private_bytes(pem, ser.PrivateFormat.PKCS8, none).decode()),
        ("putty_v3", _putty(g)),
    ]  # fmt: skip
    out = [
        Value(
            f"private_key_{name}",
            text.strip(),
            "keygen",
            "key",
            "PRIVATE_KEY",
            "none",
            True,
            origin="cryptography",
        )  # fmt: skip
        for name, text in keys
    ]
    # a GCP service-account file and a private JWK: the key travels inside JSON
    sa_pem = rsa_key.private_bytes(pem, ser.PrivateFormat.PKCS8, none).decode()
    service_account = json.dumps(
        {
            "type": "service_account", "project_id": "acme-prod-" + g.s(DI, 4),
            "private_key_id": g.s(HEX, 40), "private_key": sa_pem,
            "client_email": "deployer@acme-prod.iam.gserviceaccount.com",
            "client_id": g.s(DI, 21), "token_uri": "https://oauth2.googleapis.com/token",
        },
        indent=2,
    )  # fmt: skip
    out.append(Value("gcp_service_account", service_account, "keygen", "key",
                     "GOOGLE_APPLICATION_CREDENTIALS_JSON", "none", True, origin="cryptography"))  # fmt: skip
    d = base64.urlsafe_b64encode(g.r.randbytes(32)).decode().rstrip("=")
    x = base64.urlsafe_b64encode(g.r.randbytes(32)).decode().rstrip("=")
    y = base64.urlsafe_b64encode(g.r.randbytes(32)).decode().rstrip("=")
    jwk = json.dumps({"kty": "EC", "crv": "P-256", "x": x, "y": y, "d": d, "kid": "sig-1"})
    out.append(Value("jwk_private", jwk, "keygen", "key", "JWT_SIGNING_JWK", "none", True,
                     origin="generated"))  # fmt: skip
    return out


def secret_part(v: Value) -> list[str]:
    """The strings of `v` that must never survive: the value, or for a key block every body
    line longer than 16 characters; for JSON-wrapped keys the private material inside."""
    if v.kind == "gcp_service_account":
        body = json.loads(v.value)["private_key"]
        return [ln for ln in body.split("\n") if len(ln) > 16 and not ln.startswith("-----")]
    if v.kind == "jwk_private":
        return [json.loads(v.value)["d"]]
    if "\n" in v.value:
        lines = [ln for ln in v.value.split("\n") if len(ln) > 16 and not ln.startswith("-----")]
        if v.kind.endswith("putty_v3"):
            start = v.value.split("\n").index("Private-Lines: 1") + 1
            lines = [v.value.split("\n")[start]]
        return lines
    return [v.value]


def values(seed: int = 41) -> list[Value]:
    """Every labelled value of the held-out corpus."""
    g = Gen(seed)
    return published() + generated(g) + passwords(g) + private_keys(g)
