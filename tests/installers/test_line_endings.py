"""keep_line_endings: an edited config gets back the line endings of the file it came from."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from installers import line_endings
from installers.line_endings import _line_by_line, keep_line_endings

_LINES = st.lists(
    st.sampled_from(["{", "}", '  "a": 1,', '  "b": [', "    2", "  ]", ""]), min_size=1
)


@given(_LINES, _LINES, st.booleans())
def test_a_file_of_crlf_lines_comes_back_as_matching_its_lines_would_give(
    before: list[str], after: list[str], final_newline: bool
) -> None:
    original = "\r\n".join(before) + ("\r\n" if final_newline else "")
    if "\r\n" not in original:
        return
    text = "\n".join(after) + "\n"
    old_crlf = [line.endswith("\r") for line in original.split("\n")][:-1]
    new = [line.removesuffix("\r") for line in text.split("\n")]
    assert keep_line_endings(original, text) == _line_by_line(original, old_crlf, new)


def test_a_large_crlf_config_is_not_matched_line_by_line(monkeypatch: pytest.MonkeyPatch) -> None:
    """Matching the lines (difflib) is quadratic at worst: a 22k-line CRLF .claude.json took
    ~6 s in `funes add` and `funes remove`. A file whose every line ends in `\\r\\n` needs no
    matching: every line of the edit gets `\\r\\n`."""
    doc = {"projects": {f"/p{i}": {"history": [{"n": j} for j in range(5)]} for i in range(1600)}}
    original = json.dumps(doc, indent=2).replace("\n", "\r\n") + "\r\n"
    doc["hooks"] = {"Stop": []}
    edit = json.dumps(doc, indent=2) + "\n"

    def refuse(*_: object, **__: object) -> None:
        raise AssertionError("lines matched one by one")

    monkeypatch.setattr(line_endings, "SequenceMatcher", refuse)
    out = keep_line_endings(original, edit)
    assert out == edit.replace("\n", "\r\n") and len(original.split("\n")) > 20_000


def test_mixed_endings_are_kept_line_by_line() -> None:
    original = '{\r\n  "a": 1,\n  "b": 2\r\n}\n'
    edit = '{\n  "a": 1,\n  "b": 2,\n  "c": 3\n}\n'
    assert keep_line_endings(original, edit) == '{\r\n  "a": 1,\n  "b": 2,\r\n  "c": 3\r\n}\n'
