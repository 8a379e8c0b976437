"""A count and its noun agree: `1 chunk`, never `1 chunks`."""

from __future__ import annotations

from funes.plurals import counted, plural


def test_one_takes_the_singular_and_every_other_count_the_plural() -> None:
    assert counted(1, "chunk") == "1 chunk"
    assert counted(0, "chunk") == "0 chunks"
    assert counted(2, "new chunk") == "2 new chunks"
    assert counted(-1, "chunk") == "-1 chunk"


def test_an_irregular_plural_is_named_once_at_the_call() -> None:
    assert counted(1, "hook entry", "hook entries") == "1 hook entry"
    assert counted(3, "hook entry", "hook entries") == "3 hook entries"


def test_the_human_rendering_groups_thousands() -> None:
    assert counted(12345, "chunk", grouped=True) == "12,345 chunks"
    assert counted(1, "chunk", grouped=True) == "1 chunk"


def test_a_verb_after_a_count_agrees_with_it_too() -> None:
    assert plural(1, "has", "have") == "has" and plural(2, "has", "have") == "have"
    assert plural(1, "waits", "wait") == "waits" and plural(0, "waits", "wait") == "wait"
