"""`scan_rules` finds exactly what the straightforward scan finds: every rule, one after the
other, tried at the sorted positions of each of its anchors (the reference below, the engine
as it was before anchors were shared across rules). Same (kind, start, end) list, same order,
on the secrets corpora, the repository's fixtures and generated texts built from the anchors.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from functools import cache
from pathlib import Path

import field_corpus
import heldout_corpus
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from prose_corpus import prose_chunks
from secret_corpus import lookalike_cases, secret_cases, transcript_blocks

from funes.redact.catalog import RULES
from funes.redact.rules import BASE_RULES, Rule, ascii_lower, scan_rules, without_gutters

HERE = Path(__file__).resolve().parent
_ANCHORS = sorted({a for rule in RULES for a in rule.anchors})
FIXTURES = HERE.parent.parent / "fixtures"


def _reference_positions(hay: str, anchors: Sequence[str]) -> list[int]:
    found: set[int] = set()
    for anchor in anchors:
        if anchor == "\n":
            found.add(0)
        i = hay.find(anchor)
        while i >= 0:
            found.add(i)
            i = hay.find(anchor, i + 1)
    return sorted(found)


def reference_scan(text: str, rules: Sequence[Rule]) -> list[tuple[str, int, int]]:
    """The scan rule by rule: what `scan_rules` must return."""
    text = without_gutters(text)
    out: list[tuple[str, int, int]] = []
    low = ascii_lower(text)
    for rule in rules:
        hay = low if rule.lower else text
        done = -1
        for pos in _reference_positions(hay, rule.anchors):
            if pos < done:
                continue
            for start in range(max(pos - rule.lookback, 0), pos + 1):
                m = rule.pattern.match(hay, start)
                if m is None:
                    continue
                span = rule.extract(text, m)
                if span is not None and span[1] > span[0]:
                    out.append((rule.kind, span[0], span[1]))
                    done = m.end()
                break
    return out


def _strings(obj: object) -> Iterator[str]:
    if isinstance(obj, str):
        yield obj
    elif isinstance(obj, dict):
        for v in obj.values():
            yield from _strings(v)
    elif isinstance(obj, list):
        for v in obj:
            yield from _strings(v)


def _fixture_texts() -> Iterator[str]:
    """Every fixture file whole, and every string inside its JSON lines."""
    for path in sorted(FIXTURES.rglob("*")):
        if not path.is_file() or path.suffix == ".parquet":
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        yield text
        for line in text.splitlines():
            try:
                yield from _strings(json.loads(line))
            except ValueError:
                continue


def _anchor_texts() -> Iterator[str]:
    """Each anchor glued to itself and to a value: overlapping occurrences (`---`), a match
    that starts before the anchor, two rules on one spot."""
    value = "Zq81xkPw2mQ7vR4tY9uB3nC6dF0gH5jK8lM1oP"
    for anchor in _ANCHORS:
        heads = (anchor[:1] + anchor, anchor + anchor[1:], anchor + anchor[-1:], anchor * 2)
        for head in heads:
            for tail in (value, "=" + value, ": " + value, ' "' + value + '"', "\n" + value):
                yield head + tail
                yield '{"kty":"oct",' + head + ":" + tail + '"}'
                yield "x " + head.upper() + tail + "\n  3\u2192" + anchor + tail


@cache
def corpus() -> tuple[str, ...]:
    texts: list[str] = ["", "\n", "x", "\n\n", *_anchor_texts()]
    texts += [c.text for c in secret_cases()]
    texts += [text for _, text in lookalike_cases()]
    texts += prose_chunks(600)
    texts += transcript_blocks(400_000)
    texts += [t for p in field_corpus.placements() for t in field_corpus.block_texts(p)]
    texts += [c.text for c in field_corpus.non_secrets()]
    texts += [t for p in heldout_corpus.placements() for t in heldout_corpus.block_texts(p)]
    for name in ("heldout_samples.json", "published_samples.json"):
        texts += _strings(json.loads((HERE / name).read_text(encoding="utf-8")))
    texts += _fixture_texts()
    return tuple(texts)


def test_the_corpus_is_large_and_the_rules_find_secrets_in_it() -> None:
    texts = corpus()
    assert len(texts) > 3000
    assert sum(bool(scan_rules(t, RULES)) for t in texts) > 500


@pytest.mark.parametrize("rules", [RULES, BASE_RULES], ids=["catalog", "base"])
def test_scan_rules_matches_the_rule_by_rule_scan_on_the_corpora(rules: tuple[Rule, ...]) -> None:
    for text in corpus():
        assert scan_rules(text, rules) == reference_scan(text, rules), text[:300]


def test_a_rule_list_and_a_rule_subset_scan_like_the_reference() -> None:
    """A list (not cached, may change) and a reordered subset: rule order is output order."""
    subset = list(reversed(RULES[::3]))
    for text in corpus()[::7]:
        assert scan_rules(text, subset) == reference_scan(text, subset)
        subset.append(RULES[1])  # a list changed between calls is indexed afresh
        assert scan_rules(text, subset) == reference_scan(text, subset)
        subset.pop()


_PIECES = st.one_of(
    st.sampled_from(_ANCHORS),
    st.sampled_from(_ANCHORS).map(str.upper),
    st.sampled_from(_ANCHORS).map(str.title),
    st.sampled_from(_ANCHORS).map(lambda a: a[:1] + a),
    st.sampled_from(("=", ": ", '"', "'", " ", "\n", "\\n", "  12\u2192", "7\t", "/", "@", "-")),
    st.text(
        alphabet=st.sampled_from(
            "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-+/=.:"
        ),
        min_size=1,
        max_size=70,
    ),
    st.text(max_size=5),
)


@settings(max_examples=400, deadline=None)
@given(st.lists(_PIECES, max_size=25).map("".join))
def test_scan_rules_matches_the_rule_by_rule_scan_on_anchor_built_texts(text: str) -> None:
    assert scan_rules(text, RULES) == reference_scan(text, RULES)
