"""The push gate `funes.redact.gate.gate(rows, scanner)` as push uses it: whole blocks, fail closed."""

from __future__ import annotations

import secrets
import string
from dataclasses import dataclass

import pytest

from funes.chunks import split_text
from funes.errors import SecretScanFailed
from funes.redact import Finding, RuleScanner
from funes.redact.gate import gate


@dataclass(frozen=True)
class Row:
    id: str
    session_id: str
    turn_id: str
    block_idx: int
    split_idx: int
    text: str


def _rows(text: str, *, turn: str = "t1", block: int = 0) -> list[Row]:
    return [
        Row(f"{turn}-{block}-{i}", "s1", turn, block, i, piece)
        for i, piece in enumerate(split_text(text))
    ]


def _key() -> str:
    return "AKIA" + "".join(
        secrets.choice(string.ascii_uppercase + string.digits) for _ in range(16)
    )


def test_every_chunk_of_a_dirty_block_is_held_back_and_clean_blocks_pass() -> None:
    dirty = _rows(("filler words " * 120) + f" aws {_key()} " + ("more filler " * 120), block=0)
    clean = _rows("a clean block about the build", block=1)
    assert len(dirty) > 1
    result = gate([*reversed(dirty), *clean], RuleScanner())  # order does not matter
    assert sorted(result.held_back_ids) == sorted(r.id for r in dirty)
    assert result.publishable_ids == [r.id for r in clean]
    assert result.blocks_held_back == 1 and set(result.findings_by_rule) == {"aws_access_key_id"}


def test_a_secret_cut_by_a_chunk_boundary_is_seen_in_the_reassembled_block() -> None:
    body = "".join(secrets.choice(string.ascii_letters + string.digits) for _ in range(700))
    pem = "\n".join(body[i : i + 70] for i in range(0, 700, 70))
    kind = "OPENSSH " + "PRIVATE KEY"  # split so secret scanners of this repo stay quiet
    key = f"-----BEGIN {kind}-----\n{pem}\n-----END {kind}-----"  # minted per run, never stored
    rows = _rows(("word " * 180) + key + (" tail" * 100))
    assert len(rows) > 1
    result = gate(rows, RuleScanner())
    assert sorted(result.held_back_ids) == sorted(r.id for r in rows)
    assert set(result.findings_by_rule) == {"private_key"}


class _Broken:
    version = 1

    def scan(self, text: str) -> list[Finding]:
        raise ValueError(text)  # would echo the text if the gate reported the message


def test_a_scanner_exception_publishes_nothing_and_reports_only_its_type() -> None:
    rows = _rows("secret-looking text", block=0) + _rows("other", block=1)
    with pytest.raises(SecretScanFailed) as err:
        gate(rows, _Broken())
    assert "secret-looking" not in err.value.message
