"""A count and its noun in agreement: `1 chunk`, `2 chunks`, `0 hook entries`.

Every message that prints a count before a noun (CLI summaries, status lines, notes, errors)
words it here, so none says `1 sessions`.
"""

from __future__ import annotations


def counted(n: int, noun: str, nouns: str | None = None, *, grouped: bool = False) -> str:
    """`n` and the noun agreeing with it: `noun` when n is 1 (or -1), else `nouns`.

    n: the count (any int; 0 and negatives take the plural, except -1).
    noun: the singular, possibly a phrase whose last word is the noun (`"new chunk"`,
      `"session file"`).
    nouns: the plural when it is not `noun + "s"` (`"hook entries"`, `"were"`).
    grouped: write n with thousands separators (`12,345`), as the human rendering does.
    Returns e.g. `"1 new chunk"`, `"3 new chunks"`, `"12,345 chunks"`.
    """
    number = f"{n:,}" if grouped else str(n)
    return f"{number} {plural(n, noun, nouns)}"


def plural(n: int, word: str, words: str | None = None) -> str:
    """The form of `word` that agrees with the count n, without the count: `word` when n is 1
    (or -1), else `words` (default `word + "s"`). For a verb after a count (`has`/`have`,
    `waits`/`wait`) or a noun whose count is printed elsewhere."""
    if abs(n) == 1:
        return word
    return words if words is not None else word + "s"
