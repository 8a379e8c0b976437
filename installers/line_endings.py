"""Give an edited config back the line endings of the file it came from.

Parsers and serialisers that read a file with `\r\n` turned into `\n` (universal newlines) write
`\n` everywhere, and tomlkit writes the lines it adds with `\n` whatever the file around them
uses. `keep_line_endings` puts each line's ending back.
"""

from __future__ import annotations

from difflib import SequenceMatcher


def keep_line_endings(original: str, text: str) -> str:
    """`text`, an edit of `original` with `\n` line endings, with `original`'s line endings:
    a line still in it as it was keeps its own (`\r\n` or `\n`); a line the edit added or
    changed gets the ending of `original`'s first line (`\n` when it has none).

    `original` is the file's text as read with its endings kept (`newline=""`). Line content
    is compared without endings, so `text` may also be an edit of `original` itself.
    """
    if "\r\n" not in original:
        return text
    old_crlf = [line.endswith("\r") for line in original.split("\n")][:-1]  # per ended line
    new = [line.removesuffix("\r") for line in text.split("\n")]
    if all(old_crlf):  # every line of it, kept or not, ends in `\r\n`: no need to match them
        return "\r\n".join(new)
    return _line_by_line(original, old_crlf, new)


def _line_by_line(original: str, old_crlf: list[bool], new: list[str]) -> str:
    """`keep_line_endings` for an `original` of mixed endings: the lines of `new` matched to
    `original`'s (difflib, quadratic in the lines at worst: a config of tens of thousands of
    repeated lines takes seconds, hence the shortcut for a file of one ending)."""
    old = [line.removesuffix("\r") for line in original.split("\n")]
    default = "\r\n" if old_crlf[0] else "\n"
    matched: dict[int, int] = {}
    for a, b, size in SequenceMatcher(None, old, new, autojunk=False).get_matching_blocks():
        matched.update((b + k, a + k) for k in range(size))
    out: list[str] = []
    for i, line in enumerate(new[:-1]):  # every line but the last ends in a newline
        j = matched.get(i)
        crlf = old_crlf[j] if j is not None and j < len(old_crlf) else default == "\r\n"
        out.append(line + ("\r\n" if crlf else "\n"))
    out.append(new[-1])
    return "".join(out)
