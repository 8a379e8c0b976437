"""Self-identifying vendor tokens: a literal prefix and the vendor's published body format.

funes' own list, independent of the Kingfisher catalogue (funes.redact.vendor): the formats
agent transcripts show most (cloud, CI, secret managers, model APIs), so that the index-time
scanner still catches them should a catalogue update drop or narrow a rule. Each rule is
anchored on its prefix (see funes.redact.rules for the engine) and its value must be bounded
(not glued to other token characters), not a placeholder, and random enough (`token(n)`:
`looks_random` over at least n characters) or carry enough digit runs (`_digits`).
"""

from __future__ import annotations

import re

from funes.redact.rules import Extract, Rule, Span, rule, token


def _digits(runs: int, *, group: str | int = 0) -> Extract:
    """A bounded token with at least `runs` separate runs of digits (mixed-case words have none)."""
    base = token(group=group)

    def extract(text: str, m: re.Match[str]) -> Span | None:
        span = base(text, m)
        if span is None:
            return None
        if len(re.findall(r"[0-9]+", text[span[0] : span[1]])) < runs:
            return None
        return span

    return extract


PREFIX_RULES: tuple[Rule, ...] = (
    rule("vault_token", r"hv[sbr]\.[A-Za-z0-9_\-]{24,}", ["hvs.", "hvb.", "hvr."], token(20)),
    rule("vault_token", r"s\.[A-Za-z0-9]{24}", ["s."], _digits(2)),
    rule("onepassword_token", r"ops_eyJ[A-Za-z0-9+/_\-]{100,}={0,3}", ["ops_eyJ"], token()),
    rule(
        "onepassword_secret_key",
        r"A3-[A-Z0-9]{6}-(?:[A-Z0-9]{11}|[A-Z0-9]{6}-[A-Z0-9]{5})-[A-Z0-9]{5}-[A-Z0-9]{5}-[A-Z0-9]{5}",
        ["A3-"],
        _digits(4),
    ),
    rule("sentry_token", r"sntry[su]_[A-Za-z0-9+/=_\-]{40,}", ["sntrys_", "sntryu_"], token(30)),
    rule("notion_token", r"ntn_[0-9]{11}[A-Za-z0-9]{32,}", ["ntn_"], token(30)),
    rule("notion_token", r"secret_[A-Za-z0-9]{43}", ["secret_"], token(40)),
    rule("sourcegraph_token", r"sgp_(?:[a-f0-9]{16}_|local_)?[a-f0-9]{40}", ["sgp_"], token()),
    rule("grafana_token", r"glc_[A-Za-z0-9+/=_\-]{32,}", ["glc_"], token(30)),
    rule("grafana_token", r"glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}", ["glsa_"], token(30)),
    rule("fly_token", r"fo1_[A-Za-z0-9_\-]{43}", ["fo1_"], token(30)),
    rule("fly_token", r"fm[12][ar]?_[A-Za-z0-9+/=_\-]{100,}", ["fm1", "fm2"], token(30)),
    rule("heroku_key", r"HRKU-[A-Za-z0-9_\-]{30,}", ["HRKU-"], token(20)),
    rule("tailscale_key", r"tskey-[a-z]+-[A-Za-z0-9]{6,}-[A-Za-z0-9]{16,}", ["tskey-"], token()),
    rule(
        "terraform_token",
        r"[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_\-=]{60,}",
        [".atlasv1."],
        token(),
        lookback=14,
    ),
    rule(
        "azure_client_secret",
        r"[A-Za-z0-9_~.\-]{3}[0-9]Q~[A-Za-z0-9_~.\-]{31,34}",
        ["Q~"],
        token(),
        lookback=4,
    ),
    rule(
        "azure_storage_key",
        r"AccountKey=(?P<v>[A-Za-z0-9+/]{80,}={0,2})",
        ["AccountKey="],
        token(group="v"),
    ),
    rule("mailgun_key", r"key-[a-z0-9]{32}", ["key-"], _digits(3)),
    rule("mailchimp_key", r"[a-f0-9]{32}-us[0-9]{1,2}", ["-us"], _digits(3), lookback=32),
    rule("new_relic_key", r"NR(?:AK|AA|II|JS)-[A-Z0-9]{27}", ["NRAK-", "NRAA-", "NRII-", "NRJS-"], token()),
    rule("bitbucket_token", r"ATBB[A-Za-z0-9_=.\-]{32}", ["ATBB"], token(24)),
    rule("atlassian_token", r"AT[A-Z]TT3[A-Za-z0-9_\-=]{100,}", ["TT3"], token(30), lookback=3),
    rule("planetscale_token", r"pscale_(?:tkn|pw|oauth)_[A-Za-z0-9_\-.=]{32,64}", ["pscale_"], token(20)),
    rule("mapbox_token", r"[sr]k\.eyJ[A-Za-z0-9_\-]{40,}\.[A-Za-z0-9_\-]{20,}", ["k.eyJ"], token(), lookback=1),
    rule("adafruit_key", r"aio_[A-Za-z0-9]{28}", ["aio_"], token(20)),
    rule("contentful_token", r"CFPAT-[A-Za-z0-9_\-]{43}", ["CFPAT-"], token(30)),
    rule("docker_token", r"dckr_(?:pat|oat)_[A-Za-z0-9_\-]{27,}", ["dckr_"], token(20)),
    rule("doppler_token", r"dp\.(?:pt|st|sa|ct|scim|audit)\.[A-Za-z0-9]{40,}", ["dp."], token(30)),
    rule("linear_key", r"lin_(?:api|oauth)_[A-Za-z0-9]{40}", ["lin_"], token(30)),
    rule("postman_key", r"PMAK-[a-f0-9]{24}-[a-f0-9]{34}", ["PMAK-"], token()),
    rule("pulumi_token", r"pul-[a-f0-9]{40}", ["pul-"], _digits(3)),
    rule("shopify_token", r"shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}", ["shp"], _digits(3)),
    rule("databricks_token", r"dapi[a-f0-9]{32}(?:-[0-9])?", ["dapi"], _digits(3)),
    rule("replicate_token", r"r8_[A-Za-z0-9]{37}", ["r8_"], token(30)),
    rule("groq_key", r"gsk_[A-Za-z0-9]{52}", ["gsk_"], token(40)),
    rule("xai_key", r"xai-[A-Za-z0-9]{70,}", ["xai-"], token(40)),
    rule("perplexity_key", r"pplx-[A-Za-z0-9]{48}", ["pplx-"], token(40)),
    rule("supabase_token", r"sbp_[a-f0-9]{40}|sb_secret_[A-Za-z0-9_\-]{30,}", ["sbp_", "sb_secret_"], token()),
    rule("figma_token", r"figd_[A-Za-z0-9_\-]{40}", ["figd_"], token(30)),
    rule("age_key", r"AGE-SECRET-KEY-1[0-9A-Z]{58}", ["AGE-SECRET-KEY-1"], token()),
    rule("dynatrace_token", r"dt0[a-z][0-9]{2}\.[A-Z0-9]{24}\.[A-Z0-9]{64}", ["dt0"], token()),
    rule("prefect_key", r"pnu_[A-Za-z0-9]{36}", ["pnu_"], token(30)),
    rule("rubygems_key", r"rubygems_[a-f0-9]{48}", ["rubygems_"], _digits(3)),
    rule("brevo_key", r"xkeysib-[a-f0-9]{64}-[A-Za-z0-9]{16}", ["xkeysib-"], token()),
    rule("circleci_token", r"CCIPAT_[A-Za-z0-9]{22}_[a-f0-9]{40}", ["CCIPAT_"], token()),
    rule("square_token", r"EAAA[A-Za-z0-9_\-]{60}|sq0(?:atp|csp)-[A-Za-z0-9_\-]{22,43}", ["EAAA", "sq0"], token(20)),
    rule("alibaba_key_id", r"LTAI[A-Za-z0-9]{12,20}", ["LTAI"], token(12)),
    rule("telegram_bot_token", r"(?:bot)?(?P<v>[0-9]{8,10}:AA[A-Za-z0-9_\-]{33})", [":AA"], token(group="v"), lookback=13),
    rule("twilio_key", r"SK[a-f0-9]{32}", ["SK"], _digits(3)),
    # clouds, CI, registries
    rule("gcp_hmac_access_id", r"GOOG1[A-Z0-9]{56,60}", ["GOOG1"], token(30)),
    rule("firebase_server_key", r"AAAA[A-Za-z0-9_\-]{7}:APA91b[A-Za-z0-9_\-]{100,200}", [":APA91b"], token(), lookback=11),
    rule("aws_session_token", r"(?:IQoJb3JpZ2lu|FwoGZXIvYXdz)[A-Za-z0-9+/=]{100,}", ["IQoJb3JpZ2lu", "FwoGZXIvYXdz"], token()),
    rule("tencent_secret_id", r"AKID[A-Za-z0-9]{32}", ["AKID"], token(20)),
    rule("appsync_key", r"da2-[a-z0-9]{26}", ["da2-"], token(20)),
    rule("netlify_token", r"nfp_[A-Za-z0-9]{36,40}", ["nfp_"], token(30)),
    rule("render_key", r"rnd_[A-Za-z0-9]{32}", ["rnd_"], token(20)),
    rule("neon_key", r"napi_[a-z0-9]{64}", ["napi_"], token(30)),
    rule("artifactory_key", r"AKCp[A-Za-z0-9]{60,80}|cmVmdGtuOjAxOj[A-Za-z0-9]{30,}", ["AKCp", "cmVmdGtuOjAxOj"], token(30)),
    rule("cratesio_token", r"cio[A-Za-z0-9]{32}", ["cio"], token(30)),
    rule("nuget_key", r"oy2[a-z0-9]{43}", ["oy2"], token(30)),
    rule("sonarqube_token", r"sq[uap]_[0-9a-f]{40}", ["squ_", "sqp_", "sqa_"], _digits(3)),
    rule("buildkite_token", r"bkua_[0-9a-f]{40}", ["bkua_"], _digits(3)),
    rule("gitlab_token", r"GR1348941[A-Za-z0-9_\-]{20}", ["GR1348941"], token(15)),
    # model APIs and developer services
    rule("fireworks_key", r"fw_[A-Za-z0-9]{24}", ["fw_"], token(20)),
    rule("pinecone_key", r"pcsk_[A-Za-z0-9]{5}_[A-Za-z0-9]{50,80}", ["pcsk_"], token(30)),
    rule("jina_key", r"jina_[A-Za-z0-9_\-]{60}", ["jina_"], token(30)),
    rule("tavily_key", r"tvly-(?:dev-|prod-)?[A-Za-z0-9]{32}", ["tvly-"], token(20)),
    rule("firecrawl_key", r"fc-[a-f0-9]{32}", ["fc-"], _digits(3)),
    rule("elevenlabs_key", r"sk_[a-f0-9]{48}", ["sk_"], _digits(3)),
    rule("langsmith_key", r"lsv2_(?:pt|sk)_[0-9a-f]{32}_[0-9a-f]{10}", ["lsv2_"], _digits(3)),
    rule("posthog_personal_key", r"phx_[A-Za-z0-9_]{40,}", ["phx_"], token(30)),
    rule("resend_key", r"re_[A-Za-z0-9]{8}_[A-Za-z0-9]{24}", ["re_"], token(20)),
    rule("infisical_token", r"st\.[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\.[0-9a-f]{32}\.[0-9a-f]{32}", ["st."], token()),
    rule("launchdarkly_key", r"(?:sdk|api|mob)-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", ["sdk-", "api-", "mob-"], token()),
    # SaaS, payments, messaging
    rule("hubspot_token", r"pat-(?:na|eu|ap)[0-9]-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", ["pat-"], token()),
    rule("asana_token", r"[0-9]/[0-9]{10,20}(?:/[0-9]{10,20})?:[0-9a-f]{32}", ["1/", "2/"], _digits(2)),
    rule("clickup_token", r"pk_[0-9]{6,10}_[A-Z0-9]{32}", ["pk_"], token()),
    rule("trello_token", r"ATTA[a-f0-9]{64}[A-Fa-f0-9]{8}", ["ATTA"], _digits(3)),
    rule("intercom_token", r"dG9rOj[A-Za-z0-9+/]{40,}={0,2}", ["dG9rOj"], token()),
    rule("honeycomb_key", r"hc[ax][im]k_[0-9a-z]{58}", ["hcaik_", "hcxik_", "hcamk_", "hcxmk_"], token()),
    rule("plaid_token", r"access-(?:sandbox|development|production)-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", ["access-"], token()),
    rule("braintree_token", r"access_token\$(?:production|sandbox)\$[0-9a-z]{16}\$[0-9a-f]{32}", ["access_token$"], token()),
    rule("flutterwave_key", r"FLWSECK(?:_TEST)?-[0-9a-f]{32}-X", ["FLWSECK"], _digits(3)),
    rule("discord_webhook", r"discord(?:app)?\.com/api/webhooks/(?P<v>[0-9]{17,20}/[A-Za-z0-9_\-]{60,})", ["discord"], token(group="v")),
    rule("teams_webhook", r"\.webhook\.office\.com/webhookb2/(?P<v>[0-9a-f\-]{36}@[0-9a-f\-]{36}/IncomingWebhook/[0-9a-f]{32}/[0-9a-f\-]{36})", [".webhook.office.com/"], token(group="v", group_bounds=True)),
)  # fmt: skip
