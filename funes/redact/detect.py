"""detect-secrets as a second, independent engine: its regex plugins plus a few of our own.

Only regular-expression plugins take part (`RegexBasedDetector` subclasses): the entropy and
keyword plugins flag 20–96 % of clean transcript lines (see shared/design/secrets.md) and
would hold back most of a memory. The plugins' compiled `denylist` patterns are run with
`finditer` directly (not `scan_line`, whose per-call settings and filter machinery costs ~9 ms
a line), so every finding has an exact span: the last capture group of 8+ characters when the
pattern has one (the value after a keyword), else the whole match. Each pattern runs only when
one of its literal anchors occurs in the text. detect-secrets' heuristic filters are not used
(they drop `OpenAI(api_key="sk-…")` as an "indirect reference"); our placeholder test is.  # pragma: allowlist secret

Errors are not caught here: a scanner that cannot run must make the caller fail closed.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from funes.redact.values import is_placeholder

# Plugins whose findings we do not use: heuristics (entropy, keywords), not secrets (IPs),
# or replaced by a custom plugin that gives the whole value (PrivateKeyDetector matches
# only the header words of a PEM block).
EXCLUDED = frozenset(
    {
        "Base64HighEntropyString",
        "HexHighEntropyString",
        "KeywordDetector",
        "IPPublicDetector",
        "PrivateKeyDetector",
    }
)

# Literal anchors per plugin class: a pattern runs only when one occurs (case-sensitive
# anchors, lower-case anchors tested on the lower-cased text). A plugin missing here runs on
# every text.
ANCHORS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "AWSKeyDetector": (("AKIA", "ASIA", "ABIA", "ACCA", "A3T"), ("aws",)),
    "ArtifactoryDetector": (("AKC", "AP"), ()),
    "AzureStorageKeyDetector": (("AccountKey=",), ()),
    "BasicAuthDetector": (("://",), ()),
    "CloudantDetector": (
        (),
        ("cloudant", "cl_", "cl-", "clkey", "clpass", "clpw", "cltoken", "clapi", "clou"),
    ),
    "DiscordBotTokenDetector": ((".",), ()),
    "GitHubTokenDetector": (("ghp_", "gho_", "ghu_", "ghs_", "ghr_"), ()),
    "GitLabTokenDetector": (
        (
            "glpat-",
            "gldt-",
            "glft-",
            "glsoat-",
            "glrt-",
            "GR1348941",
            "glcbt-",
            "glimt-",
            "glptt-",
            "glagent-",
            "gloas-",
        ),
        (),
    ),
    # Its prefix is optional (any `key = "<44 chars>"` matches): run it where IBM is named.
    "IbmCloudIamDetector": ((), ("ibm", "iam")),
    "IbmCosHmacDetector": ((), ("secret",)),
    "JwtTokenDetector": (("eyJ",), ()),
    "MailchimpDetector": (("-us",), ()),
    "NpmDetector": ((":_authToken",), ()),
    "OpenAIDetector": (("T3BlbkFJ",), ()),
    "PypiTokenDetector": (("pypi-",), ()),
    "SendGridDetector": (("SG.",), ()),
    "SlackDetector": ((), ("xox", "hooks.slack.com")),
    "SoftlayerDetector": (
        (),
        ("softlayer", "sl_", "sl-", "slkey", "slpass", "slpw", "sltoken", "slapi"),
    ),
    "SquareOAuthDetector": (("sq0csp-",), ()),
    "StripeDetector": (("k_live_",), ()),
    "TelegramBotTokenDetector": ((":",), ()),
    "TwilioKeyDetector": (("AC", "SK"), ()),
    # ours (see _custom_plugins)
    "FunesAnthropicDetector": (("sk-ant-",), ()),
    "FunesOpenAIProjectDetector": (("sk-",), ()),
    "FunesHuggingFaceDetector": (("hf_",), ()),
    "FunesGitHubFineGrainedDetector": (("github_pat_",), ()),
    "FunesGoogleApiKeyDetector": (("AIza",), ()),
    "FunesStripeTestDetector": (("k_test_",), ()),
    "FunesUrlPasswordDetector": (("://",), ()),
    "FunesAwsSecretDetector": ((), ("secret",)),
    "FunesPrivateKeyBlockDetector": (("PRIVATE KEY",), ()),
}


@dataclass(frozen=True, slots=True)
class Probe:
    """The compiled patterns of one plugin, with the anchors that gate them all."""

    kind: str
    patterns: tuple[re.Pattern[str], ...]
    anchors: tuple[str, ...]
    lower_anchors: tuple[str, ...]
    extra_check: Any = None  # the plugin's own validity test for a value (JWT), or None


def _slug(secret_type: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", secret_type.lower()).strip("_")


def _custom_plugins() -> list[type[Any]]:
    """Our detect-secrets plugins for what its built-ins miss (written independently of rules.py)."""
    from detect_secrets.plugins.base import RegexBasedDetector

    def plugin(name: str, secret_type: str, *patterns: str, flags: int = 0) -> type[Any]:
        return type(
            name,
            (RegexBasedDetector,),
            {"secret_type": secret_type, "denylist": [re.compile(p, flags) for p in patterns]},
        )

    return [
        plugin(
            "FunesAnthropicDetector",
            "Anthropic API Key",
            r"sk-ant-(?:api|admin|oat|sid)\d\d-[\w\-]{40,}",
        ),
        plugin(
            "FunesOpenAIProjectDetector",
            "OpenAI Project Key",
            r"sk-(?:proj|svcacct|admin)-[\w\-]{40,}",
        ),
        plugin(
            "FunesHuggingFaceDetector", "Hugging Face Token", r"(?<![\w])hf_[A-Za-z0-9]{34}(?![\w])"
        ),
        plugin(
            "FunesGitHubFineGrainedDetector",
            "GitHub Fine-grained Token",
            r"github_pat_[A-Za-z0-9]{22}_[A-Za-z0-9]{59}",
        ),
        plugin("FunesGoogleApiKeyDetector", "Google API Key", r"AIza[\w\-]{35}(?![\w\-])"),
        plugin("FunesStripeTestDetector", "Stripe Test Key", r"(?:r|s)k_test_[0-9a-zA-Z]{24,}"),
        plugin(
            "FunesUrlPasswordDetector",
            "URL Password",
            r"(?<=[a-zA-Z0-9+.\-])://[^\s:@/'\"]*:([^\s@/'\"]+)@[\w\[]",
        ),
        plugin(
            "FunesAwsSecretDetector",
            "AWS Secret Access Key",
            r"secret_?access_?key[\"']?\s*[=:]\s*[\"']?([A-Za-z0-9/+]{40})(?![A-Za-z0-9/+])",
            flags=re.IGNORECASE,
        ),
        plugin(
            "FunesPrivateKeyBlockDetector",
            "Private Key Block",
            r"-----BEGIN[A-Z ]*PRIVATE KEY[A-Z ]*-----((?:(?!-----END).){16,}?)-----END",
            flags=re.DOTALL,
        ),
    ]


def _builtin_plugins() -> list[type[Any]]:
    import importlib
    import pkgutil

    import detect_secrets.plugins as pkg
    from detect_secrets.plugins.base import RegexBasedDetector

    found: dict[str, type[Any]] = {}
    for info in pkgutil.iter_modules(pkg.__path__):
        if info.name == "base":
            continue
        module = importlib.import_module(f"{pkg.__name__}.{info.name}")
        for value in vars(module).values():
            if (
                isinstance(value, type)
                and issubclass(value, RegexBasedDetector)
                and value is not RegexBasedDetector
                and value.__module__ == module.__name__
                and value.__name__ not in EXCLUDED
            ):
                found[value.__name__] = value
    return [found[k] for k in sorted(found)]


@lru_cache(maxsize=1)
def probes() -> tuple[Probe, ...]:
    """One probe per plugin in use (built once per process; raises if detect-secrets is absent)."""
    out: list[Probe] = []
    for cls in _builtin_plugins() + _custom_plugins():
        plugin = cls()
        anchors, lower = ANCHORS.get(cls.__name__, ((), ()))
        check = getattr(plugin, "is_formally_valid", None)
        out.append(Probe(_slug(cls.secret_type), tuple(plugin.denylist), anchors, lower, check))
    return tuple(out)


def plugin_names() -> list[str]:
    """Names of the detect-secrets plugins in use (for reports)."""
    return [c.__name__ for c in _builtin_plugins() + _custom_plugins()]


def _span(m: re.Match[str]) -> tuple[int, int]:
    for g in range(m.re.groups, 0, -1):
        start, end = m.span(g)
        if start >= 0 and end - start >= 8:
            return start, end
    return m.span()


def scan_detect_secrets(
    text: str, selected: Iterable[Probe] | None = None
) -> list[tuple[str, int, int]]:
    """(kind, start, end) of every detect-secrets finding in `text` (unsorted)."""
    out: list[tuple[str, int, int]] = []
    low: str | None = None
    for probe in probes() if selected is None else selected:
        if probe.anchors or probe.lower_anchors:
            hit = any(a in text for a in probe.anchors)
            if not hit and probe.lower_anchors:
                if low is None:
                    low = text.lower()
                hit = any(a in low for a in probe.lower_anchors)
            if not hit:
                continue
        for pattern in probe.patterns:
            for m in pattern.finditer(text):
                start, end = _span(m)
                value = text[start:end]
                if is_placeholder(value):
                    continue
                if probe.extra_check is not None and not probe.extra_check(m.group(0)):
                    continue
                out.append((probe.kind, start, end))
    return out
