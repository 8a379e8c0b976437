"""The publish gate: whole blocks judged, split secrets caught, fail closed, no values leaked."""

from __future__ import annotations

import pytest
from secret_corpus import ALNUM, URLSAFE, Gen

from funes.chunks import split_text
from funes.errors import SecretScanFailed
from funes.redact import Finding, default_scanner
from funes.redact.gate import GateRow, gate, rewrite_block


def _github_token(seed: int) -> str:
    return "gh" + "p_" + Gen(seed).mixed(ALNUM, 36)


def _long_key(seed: int) -> str:
    """Longer than the chunk overlap (150), so a cut through it leaves no chunk holding it whole."""
    return "sk-" + "proj-" + Gen(seed).mixed(URLSAFE, 250)


def _rows(session: str, turn: str, block_idx: int, pieces: list[str]) -> list[GateRow]:
    return [
        GateRow(f"{turn}-{block_idx}-{i}", session, turn, block_idx, i, p)
        for i, p in enumerate(pieces)
    ]


def _block_with_secret_on_the_cut(secret: str) -> tuple[str, list[str]]:
    """A long block whose first split cuts through `secret` (no whitespace past the midpoint,
    so the 1,200-character window is cut hard, inside the secret)."""
    text = "word " * 100 + "y" * 480 + ";key=" + secret + ";" + "z" * 300 + " tail"
    pieces = split_text(text)
    assert len(pieces) >= 2
    assert all(secret not in p for p in pieces), "the fixture must split the secret"
    return text, pieces


def test_a_secret_split_across_two_chunks_holds_back_every_chunk_of_its_block() -> None:
    secret = _long_key(1)
    _, pieces = _block_with_secret_on_the_cut(secret)
    dirty = _rows("s1", "t1", 0, pieces)
    clean = _rows("s1", "t2", 0, ["just prose about the parser", "and more prose"])
    result = gate(dirty + clean, default_scanner())
    assert sorted(result.held_back_ids) == sorted(r.id for r in dirty)
    assert result.publishable_ids == [r.id for r in clean]
    assert result.blocks_held_back == 1 and result.blocks_scanned == 2


def test_the_gate_summary_counts_rules_and_never_carries_a_secret_value() -> None:
    secret = _github_token(2)
    result = gate(_rows("s", "t", 0, [f"token {secret}"]), default_scanner())
    assert result.findings_by_rule and all(
        isinstance(n, int) for n in result.findings_by_rule.values()
    )
    assert secret not in repr(result)


def test_clean_rows_are_all_publishable_in_input_order() -> None:
    rows = _rows("s", "t", 0, ["a"]) + _rows("s", "t", 1, ["b", "c"])
    result = gate(rows, default_scanner())
    assert result.publishable_ids == [r.id for r in rows] and not result.held_back_ids
    assert not result.nothing_to_publish


class RaisingScanner:
    version = 9

    def __init__(self, after: int) -> None:
        self.calls = 0
        self.after = after

    def scan(self, text: str) -> list[Finding]:
        self.calls += 1
        if self.calls > self.after:
            raise RuntimeError("engine crashed")
        return default_scanner().scan(text)


class BlindScanner:
    version = 9

    def scan(self, text: str) -> list[Finding]:
        return []


def test_a_scanner_that_crashes_mid_gate_makes_the_gate_fail_closed() -> None:
    rows = _rows("s", "t", 0, ["a"]) + _rows("s", "t", 1, ["b"])
    with pytest.raises(SecretScanFailed):
        gate(rows, RaisingScanner(after=2))


def test_a_scanner_that_cannot_start_makes_the_gate_fail_closed() -> None:
    with pytest.raises(SecretScanFailed):
        gate(_rows("s", "t", 0, ["a"]), RaisingScanner(after=0))


def test_a_scanner_that_finds_nothing_at_all_is_not_trusted() -> None:
    with pytest.raises(SecretScanFailed, match="missed a known test secret"):
        gate(_rows("s", "t", 0, ["a"]), BlindScanner())


def test_rewrite_block_redacts_both_halves_of_a_split_secret() -> None:
    secret = _long_key(3)
    _, pieces = _block_with_secret_on_the_cut(secret)
    out = rewrite_block(pieces, default_scanner())
    assert not out.drop and out.findings
    joined = "".join(out.texts)
    assert secret[:12] not in joined and secret[-12:] not in joined
    assert [p for p, changed in zip(pieces, out.changed, strict=True) if not changed] == [
        p for p, t in zip(pieces, out.texts, strict=True) if p == t
    ]


def test_rewrite_block_leaves_clean_blocks_untouched() -> None:
    pieces = ["plain text", "more plain text"]
    out = rewrite_block(pieces, default_scanner())
    assert out.texts == tuple(pieces) and not any(out.changed) and out.findings == 0


class LiteralScanner:
    """The default scanner plus one literal (to see what only the reassembled block shows)."""

    version = 9

    def __init__(self, literal: str) -> None:
        self.literal = literal

    def scan(self, text: str) -> list[Finding]:
        found = default_scanner().scan(text)
        i = text.find(self.literal)
        if i >= 0:
            found.append(Finding("literal", i, i + len(self.literal)))
        return sorted(found, key=lambda f: f.start)


def test_a_secret_visible_only_in_the_reassembled_block_is_still_caught() -> None:
    pieces = ["x" * 10 + "SECRETTO", "ETTOKEN and more"]  # overlap "ETTO": neither piece holds it
    scanner = LiteralScanner("SECRETTOKEN")
    assert not any(scanner.scan(p) for p in pieces)
    result = gate(_rows("s", "t", 0, pieces), scanner)
    assert len(result.held_back_ids) == 2
    out = rewrite_block(pieces, scanner)
    assert not out.drop and all(out.changed)
    assert out.texts == ("x" * 10 + "[REDACTED:literal]", "[REDACTED:literal] and more")


# -- two independent detector sets -----------------------------------------------------------


def _engine_types(scanner: object) -> set[type]:
    engines = getattr(scanner, "engines", None)
    return {type(e) for e in engines} if engines is not None else {type(scanner)}


def test_the_gate_set_shares_no_engine_with_the_index_time_set() -> None:
    from funes.redact import gate_scanner

    gate_types, store_types = _engine_types(gate_scanner()), _engine_types(default_scanner())
    assert gate_types and store_types and not (gate_types & store_types)


def _short_password_row(version: int) -> list[GateRow]:
    # A dictionary word said to be a password in prose: the index-time prose rules redact it;
    # the gate's word shapes leave English words in prose alone, so only a rescan sees it.
    return [GateRow("c1", "s", "t", 0, 0, "PORT=3000\nthe wifi password is bluebird\n", version)]


def test_a_block_stored_under_older_rules_is_rescanned_with_the_current_ones() -> None:
    from funes.redact import RULES_VERSION, gate_scanner

    old = _short_password_row(RULES_VERSION - 1)
    assert not gate(old, gate_scanner()).held_back_ids, "fixture: the gate set alone misses it"
    result = gate(old, gate_scanner(), rescan=default_scanner())
    assert result.held_back_ids == ["c1"] and result.blocks_rescanned == 1


def test_only_blocks_today_s_rules_redact_are_redactable_the_gate_s_own_findings_are_not() -> None:
    """What `funes scrub` fixes: a block whose secret today's index-time rules redact (here
    one stored under older rules). A secret only the gate's own set finds stays held back
    after a scrub, so no one may be told that scrub publishes it."""
    from funes.redact import RULES_VERSION, gate_scanner

    older = _short_password_row(RULES_VERSION - 1)
    prose = "The key you pasted (`opensesameforever`) returns 401"  # the gate's own set only
    assert not default_scanner().scan(prose), "fixture: index-time rules let it through"
    rows = [*older, GateRow("c2", "s", "t2", 0, 0, prose, RULES_VERSION - 1)]
    result = gate(rows, gate_scanner(), rescan=default_scanner())
    assert result.held_back_ids == ["c1", "c2"] and result.redactable_ids == ["c1"]


def test_a_block_stored_under_current_rules_is_not_rescanned() -> None:
    from funes.redact import RULES_VERSION, gate_scanner

    result = gate(_short_password_row(RULES_VERSION), gate_scanner(), rescan=default_scanner())
    assert result.blocks_rescanned == 0 and result.publishable_ids == ["c1"]


def test_a_rescan_set_that_crashes_or_is_blind_makes_the_gate_fail_closed() -> None:
    from funes.redact import gate_scanner

    rows = _short_password_row(0)
    with pytest.raises(SecretScanFailed):
        gate(rows, gate_scanner(), rescan=RaisingScanner(after=0))
    with pytest.raises(SecretScanFailed, match="missed a known test secret"):
        gate(rows, gate_scanner(), rescan=BlindScanner())
    with pytest.raises(SecretScanFailed):
        gate(rows, BlindScanner(), rescan=default_scanner())


def test_the_gate_set_holds_back_minted_values_the_index_time_set_let_through() -> None:
    from funes.redact import gate_scanner

    g = Gen(12)
    bot = g.mixed(ALNUM, 24) + "." + g.mixed(ALNUM, 6) + "." + g.mixed(ALNUM, 38)
    pasted = "ok I created a new one: " + g.mixed(ALNUM + "+/", 40) + "\nretry the sync"
    for text in (bot + "\n", pasted):
        assert gate(_rows("s", "t", 0, [text]), gate_scanner()).held_back_ids, text
