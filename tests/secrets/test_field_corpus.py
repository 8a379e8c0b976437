"""Issue-17 targets on the labelled field corpus, at scanner level (the bench runs the same
corpus through the real index and a real push: bench/secrets.py `field_quality`)."""

from __future__ import annotations

from functools import cache

from field_corpus import CONTEXTS, block_texts, non_secrets, placements, realistic_code

from funes.redact import default_scanner, gate_scanner, redact


@cache
def _outcome() -> tuple[int, list[str], int]:
    """(placements, texts that still hold their value after index-time redaction, their
    count of distinct placements)."""
    scanner = default_scanner()
    ps = placements()
    leaked_texts: list[str] = []
    reached = 0
    for p in ps:
        value = p.secret.value
        pieces = [value] if "\n" not in value else [x for x in value.split("\n")[1:-1] if x]
        outs = [redact(t, scanner)[0] for t in block_texts(p)]
        hit = [o for o in outs if any(x in o for x in pieces)]
        reached += bool(hit)
        leaked_texts.extend(hit)
    return len(ps), leaked_texts, reached


def test_the_corpus_covers_every_context_and_many_kinds() -> None:
    ps = placements()
    assert {p.context for p in ps} == set(CONTEXTS)
    assert len({p.secret.kind for p in ps}) >= 78
    assert len({p.secret.value for p in ps}) >= 250
    assert {p.secret.source for p in ps} == {"published", "generated", "keygen", "password"}


def test_at_most_two_percent_of_placements_reach_the_store() -> None:
    n, _, reached = _outcome()
    assert reached / n <= 0.02, f"{reached} of {n} placements keep their value"


def test_the_publish_gate_holds_back_every_placement_that_reached_the_store() -> None:
    _, leaked, reached = _outcome()
    assert reached > 0, "fixture: the gate must be exercised on real residuals"
    gate = gate_scanner()
    assert [t for t in leaked if not gate.scan(t)] == []


def test_non_secret_candidates_are_left_alone() -> None:
    scanner = default_scanner()
    candidates = non_secrets()
    flagged = [c.name for c in candidates if scanner.scan(c.text)]
    assert len(flagged) / len(candidates) <= 0.05, flagged
    assert len(candidates) >= 250


def test_realistic_code_and_data_are_left_alone() -> None:
    scanner = default_scanner()
    blocks = realistic_code(200)
    flagged = [c.name for c in blocks if scanner.scan(c.text)]
    assert len(flagged) <= 2, flagged  # ≤ 1%
    assert len(blocks) == 200


def test_the_gate_holds_back_few_non_secrets() -> None:
    scanner, gate = default_scanner(), gate_scanner()
    candidates = non_secrets()
    held = [c.name for c in candidates if gate.scan(redact(c.text, scanner)[0])]
    assert len(held) / len(candidates) <= 0.05, held
