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
        r"[A-Za-z0-9_~.]{3}[0-9]Q~[A-Za-z0-9_~.\-]{31,34}",
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
    rule("mailgun_key", r"key-[a-f0-9]{32}", ["key-"], _digits(3)),
    rule("mailchimp_key", r"[a-f0-9]{32}-us[0-9]{1,2}", ["-us"], _digits(3), lookback=32),
    rule("new_relic_key", r"NR(?:AK|AA|II|JS)-[A-Z0-9]{27}", ["NRAK-", "NRAA-", "NRII-", "NRJS-"], token()),
    rule("bitbucket_token", r"ATBB[A-Za-z0-9_=.\-]{32}", ["ATBB"], token(24)),
    rule("atlassian_token", r"ATATT3[A-Za-z0-9_\-=]{100,}", ["ATATT3"], token(30)),
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
)  # fmt: skip
