"""Calendar periods a query names explicitly (`on 16 June, 2023`, `in March 2025`, `2024-11-02`,
`in 2022`), as half-open UTC intervals.

Only unambiguous dates are read: ISO `YYYY-MM-DD`, day + month name + year in either order,
month name + year, and a bare four-digit year (1900–2099). A month or weekday without a year,
and relative phrases (`last week`), name no period. English month names and their three-letter
abbreviations (`Sept` too); matching ignores case. A longer form wins over the shorter forms
it contains (`16 June, 2023` is one day, not also June and 2023).
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

# English month names and abbreviations, as calendar.month_name / month_abbr give them in the
# C locale (spelled out: the calendar module costs a cold recall its import, and a locale's own
# names would make the same query parse differently on another machine)
_MONTH_NAMES = (
    "january", "february", "march", "april", "may", "june",
    "july", "august", "september", "october", "november", "december",
)  # fmt: skip
_MONTHS = {name: i for i, name in enumerate(_MONTH_NAMES, start=1)}
_MONTHS.update({name[:3]: i for i, name in enumerate(_MONTH_NAMES, start=1)})
_MONTHS["sept"] = 9
_MONTH = "|".join(sorted(_MONTHS, key=len, reverse=True))
_YEAR = r"((?:19|20)\d\d)"
_DAY = r"(\d{1,2})(?:st|nd|rd|th)?"
_FORMS = (
    ("iso", re.compile(r"\b((?:19|20)\d\d)-(\d\d)-(\d\d)\b")),
    ("dmy", re.compile(rf"\b{_DAY}\s+(?:of\s+)?({_MONTH})\.?,?\s+{_YEAR}\b", re.I)),
    ("mdy", re.compile(rf"\b({_MONTH})\.?\s+{_DAY},?\s+{_YEAR}\b", re.I)),
    ("my", re.compile(rf"\b({_MONTH})\.?,?\s+(?:of\s+)?{_YEAR}\b", re.I)),
    ("y", re.compile(rf"\b{_YEAR}\b")),
)


def _interval(kind: str, g: tuple[str, ...]) -> tuple[datetime, datetime]:
    if kind == "iso":
        start = datetime(int(g[0]), int(g[1]), int(g[2]), tzinfo=UTC)
        return start, start + timedelta(days=1)
    if kind == "dmy":
        start = datetime(int(g[2]), _MONTHS[g[1].lower()], int(g[0]), tzinfo=UTC)
        return start, start + timedelta(days=1)
    if kind == "mdy":
        start = datetime(int(g[2]), _MONTHS[g[0].lower()], int(g[1]), tzinfo=UTC)
        return start, start + timedelta(days=1)
    if kind == "my":
        year, month = int(g[1]), _MONTHS[g[0].lower()]
        end = datetime(year + month // 12, month % 12 + 1, 1, tzinfo=UTC)
        return datetime(year, month, 1, tzinfo=UTC), end
    year = int(g[0])
    return datetime(year, 1, 1, tzinfo=UTC), datetime(year + 1, 1, 1, tzinfo=UTC)


def query_periods(text: str) -> list[tuple[datetime, datetime]]:
    """The periods `text` names, as [start, end) UTC intervals, in the order found by form."""
    out: list[tuple[datetime, datetime]] = []
    taken: list[tuple[int, int]] = []
    for kind, pattern in _FORMS:
        for m in pattern.finditer(text):
            if any(a < m.end() and m.start() < b for a, b in taken):
                continue
            try:
                out.append(_interval(kind, m.groups()))
            except ValueError:  # 31 February, month 13
                continue
            taken.append((m.start(), m.end()))
    return out
