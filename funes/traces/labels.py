"""Session labels: the short name a recall header shows so that sessions can be told apart.

The `→ get` line always carries the full session id; the label is for reading. It never holds
whitespace (the header's fields are space-separated) and stays within `MAX_LABEL` characters.

`short_id(session_id)`, the label of a session no parser named:

* a UUID: its first 8 hex digits, except a version-7 UUID (Codex threads, pi sessions): its
  last 8, because its first 8 encode the start time to about a minute and sessions started
  together would share them;
* `<anything>_<uuid>` (pi file stems `<timestamp>_<uuid>`): the UUID's label;
* `agent-<id>` (Claude Code subagent files): `agent-` + the id's first 8 characters, or
  `<kind>-<first 8>` for a prefixed id (`agent-aside_question-ac9e…` → `aside_question-ac9ee480`);
* `YYYYMMDD_HHMMSS_<suffix>` (Hermes): the suffix; `cron_<job>_YYYYMMDD_HHMMSS` (Hermes cron
  runs): `cron_<job, 6 chars>_<MMDD_HHMMSS>`;
* `<profile>:<id>` (a Hermes profile's session): `<profile>:` + the label of `<id>`;
* anything else: the whole id when it has at most 16 characters, else its first 8.

Parsers that know more name the session themselves (`Turn.session_label`): a Claude Code
subagent is `<parent label>/<agent type>-<id, 8 chars>` (the type from its `.meta.json`, the
Task call's `subagent_type`, or the id's prefix).
"""

from __future__ import annotations

import re

MAX_LABEL = 48
_UUID = re.compile(
    r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-([0-9a-fA-F])[0-9a-fA-F]{3}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
)
_HERMES = re.compile(r"\d{8}_\d{6}_([0-9A-Za-z]+)")
_CRON = re.compile(r"cron_([0-9A-Za-z]+)_\d{4}(\d{4})_(\d{6})")
_AGENT = re.compile(r"agent-(?:([A-Za-z][A-Za-z0-9_]*?)-)?([0-9A-Za-z]+)")
_SLUG = re.compile(r"[^A-Za-z0-9_.-]+")


def slug(text: str, limit: int = 24) -> str:
    """`text` as a label part: runs of other characters become `-`, cut to `limit`."""
    return _SLUG.sub("-", text.strip()).strip("-")[:limit].strip("-")


def short_id(session_id: str) -> str:
    """The label of a session named only by its id (see the module docstring)."""
    sid = session_id.strip()
    if ":" in sid:
        profile, _, rest = sid.partition(":")
        if profile and rest:
            return _cap(f"{slug(profile, 16)}:{short_id(rest)}")
    m = _UUID.fullmatch(sid)
    if m:
        hexes = sid.replace("-", "")
        return hexes[-8:].lower() if m.group(1) == "7" else sid[:8]
    tail = _UUID.search(sid)
    if tail is not None and tail.end() == len(sid) and sid[: tail.start()].endswith("_"):
        return short_id(tail.group(0))
    m = _CRON.fullmatch(sid)
    if m:
        return f"cron_{m.group(1)[:6]}_{m.group(2)}_{m.group(3)}"
    m = _HERMES.fullmatch(sid)
    if m:
        return m.group(1)
    m = _AGENT.fullmatch(sid)
    if m:
        return f"{m.group(1) or 'agent'}-{m.group(2)[:8]}"
    if len(sid) <= 16:
        return _cap(slug(sid, 16) or sid[:16])
    return _cap(slug(sid[:8], 8) or sid[:8])


def child_label(parent_session_id: str, kind: str, child_id: str) -> str:
    """`<parent label>/<kind>-<child id, 8 chars>` for a subagent session."""
    parent = short_id(parent_session_id)
    return _cap(f"{parent}/{slug(kind) or 'agent'}-{slug(child_id, 8)}")


def _cap(label: str) -> str:
    label = "".join(label.split())
    return label[:MAX_LABEL]
