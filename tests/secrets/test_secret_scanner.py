"""The scanner on the fake-secret corpus and the look-alikes: nothing survives, nothing else flagged."""

from __future__ import annotations

import json

import pytest
from secret_bench import false_positive_count, missed_secret_count
from secret_corpus import Gen, lookalike_cases, secret_cases

from funes.redact import (
    MARKER_PREFIX,
    DetectSecretsScanner,
    RuleScanner,
    UnionScanner,
    default_scanner,
    redact,
)

SECRETS = secret_cases()
LOOKALIKES = lookalike_cases()


def test_the_corpus_has_at_least_forty_secret_shapes_and_forty_lookalikes() -> None:
    assert len(SECRETS) >= 40
    assert len(LOOKALIKES) >= 40
    assert len({c.name for c in SECRETS}) == len(SECRETS)


@pytest.mark.parametrize("case", SECRETS, ids=[c.name for c in SECRETS])
def test_every_secret_shape_is_redacted_by_the_default_scanner(case) -> None:
    out, findings = redact(case.text, default_scanner())
    assert findings
    for value in case.values:
        assert value not in out
    assert MARKER_PREFIX in out


@pytest.mark.parametrize("case", SECRETS, ids=[c.name for c in SECRETS])
def test_funes_rules_alone_catch_every_secret_shape(case) -> None:
    out, _ = redact(case.text, RuleScanner())
    assert not [v for v in case.values if v in out]


@pytest.mark.parametrize(("name", "text"), LOOKALIKES, ids=[n for n, _ in LOOKALIKES])
def test_lookalikes_are_not_flagged_by_any_engine(name: str, text: str) -> None:
    for scanner in (RuleScanner(), DetectSecretsScanner(), UnionScanner()):
        assert scanner.scan(text) == [], (name, type(scanner).__name__)


def test_bench_measurements_report_zero_false_positives_and_zero_misses() -> None:
    assert false_positive_count() == 0
    assert missed_secret_count() == 0


def test_redaction_replaces_the_value_and_keeps_the_key_readable() -> None:
    g = Gen(1)
    pw = g.mixed("abcdefghjkmnpqrstuvwxyzABCDEFGH0123456789", 9)
    out, _ = redact(f"DB_HOST=db\nDB_PASSWORD={pw}\n", default_scanner())
    assert out == "DB_HOST=db\nDB_PASSWORD=[REDACTED:secret_assignment]\n"
    url, _ = redact(f"redis://:{pw}@cache:6379/0", default_scanner())
    assert url == "redis://:[REDACTED:url_password]@cache:6379/0"


def test_redacted_text_is_stable_under_a_second_redaction() -> None:
    scanner = default_scanner()
    for case in SECRETS:
        once, _ = redact(case.text, scanner)
        assert scanner.scan(once) == [], case.name


def test_a_pem_key_in_json_escaped_form_loses_its_whole_body() -> None:
    g = Gen(2)
    body = "\n".join(g.b64(48) for _ in range(6))
    dash = "-" * 5
    label = "RSA " + "PRIVATE" + " KEY"
    pem = f"{dash}BEGIN {label}{dash}\n{body}\n{dash}END {label}{dash}\n"
    compact = json.dumps({"content": pem, "file_path": "/tmp/id_rsa"}, separators=(",", ":"))
    out, _ = redact(compact, default_scanner())
    assert f"BEGIN {label}" in out and f"END {label}" in out
    for line in body.split("\n"):
        assert line not in out
    assert json.loads(out)["file_path"] == "/tmp/id_rsa"  # still valid JSON around the marker


def test_a_truncated_private_key_is_redacted_to_the_end_of_the_text() -> None:
    g = Gen(3)
    dash = "-" * 5
    label = "OPENSSH " + "PRIVATE" + " KEY"
    text = f"{dash}BEGIN {label}{dash}\n{g.b64(48)}\n{g.b64(48)}\n[output truncated]"
    out, _ = redact(text, default_scanner())
    assert "[REDACTED:private_key]" in out
    assert text.split("\n")[1] not in out


def test_throughput_measurement_returns_a_positive_rate() -> None:
    from secret_bench import redaction_throughput_mb_s

    assert redaction_throughput_mb_s(200_000) > 0.1


def test_markers_are_never_re_flagged_or_nested() -> None:
    scanner = default_scanner()
    for case in SECRETS:
        out, _ = redact(case.text, scanner)
        assert "[REDACTED:[REDACTED" not in out, case.name
        assert "[REDACTED:unverifiable]" not in out, case.name
