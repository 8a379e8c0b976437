"""The normalized conversation model every source emits: Turn → Block.

Knows nothing of chunks, storage or models. Values are cleaned once, here, so that
every later stage can trust them: lone surrogates and NUL bytes are replaced, inline
base64 `data:` payloads are elided, and oversized texts are cut with a marker.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime
from enum import StrEnum


class Harness(StrEnum):
    """The agent program that wrote a session. Values are the stored facet."""

    CLAUDE_CODE = "claude_code"
    CODEX = "codex"
    PI = "pi"
    HERMES = "hermes"
    PARQUET = "parquet"  # an imported agent-traces parquet row without a known harness

    @classmethod
    def parse(cls, value: str | None) -> Harness | None:
        """Accept the facet value or the short agent name (`claude` → claude_code).

        Raises ValueError for an unknown name; None passes through.
        """
        if value is None:
            return None
        v = value.strip().lower().replace("-", "_")
        aliases = {
            "claude": "claude_code",
            "claudecode": "claude_code",
            "claude_code": "claude_code",
        }
        v = aliases.get(v, v)
        try:
            return cls(v)
        except ValueError:
            names = ", ".join(h.agent_name for h in cls if h is not cls.PARQUET)
            raise ValueError(f"unknown harness {value!r} (expected one of: {names})") from None

    @property
    def agent_name(self) -> str:
        """The short name used on the command line (`claude`, `codex`, `pi`, `hermes`)."""
        return "claude" if self is Harness.CLAUDE_CODE else self.value


class Role(StrEnum):
    USER = "user"
    ASSISTANT = "assistant"
    TOOL = "tool"
    SYSTEM = "system"


class BlockType(StrEnum):
    TEXT = "text"
    THINKING = "thinking"
    TOOL_USE = "tool_use"
    TOOL_RESULT = "tool_result"

    @property
    def tier(self) -> int:
        """Index order of a budgeted sweep: prose first, then tool calls, then tool output."""
        return {"text": 0, "thinking": 0, "tool_use": 1, "tool_result": 2}[self.value]


MAX_BLOCK_CHARS = 200_000  # a block longer than this is cut at parse time (tail dropped, marked)
_CUT_MARK = "\n[… cut by funes: {n} more characters]"

# `data:<media-type>;base64,<payload>` where `data:` starts a token and the media type has no
# whitespace, comma or quote. The payload is replaced; the media type is kept for context.
_DATA_URI = re.compile(
    r"(?<![A-Za-z0-9_\-.])(data:[^\s,\"';]*(?:;[^\s,\"';]+)*;base64,)[A-Za-z0-9+/_\-]+=*"
)
_SURROGATE = re.compile(r"[\ud800-\udfff]")
_EPOCH = re.compile(r"[0-9]+(?:\.[0-9]*)?|\.[0-9]+")  # ASCII digits only: str.isdigit() accepts "²"


def elide_data_uris(text: str) -> str:
    """Replace the payload of every inline base64 data URI by `[elided]`."""
    if ";base64," not in text:
        return text
    return _DATA_URI.sub(r"\1[elided]", text)


# Terminal control: ANSI/VT escape sequences (CSI `ESC [ … final`, OSC `ESC ] … BEL|ESC \\`,
# two-byte `ESC x`) and C0/C1 control characters other than tab and newline. Tool output is
# full of them (colours, progress bars, window titles); shown raw they would drive the
# reader's terminal, and they only add noise to search.
_ESCAPE_SEQ = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)?|[@-Z\\-_])")
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1a\x1c-\x1f\x7f-\x9f]")
# Bidirectional embeddings, overrides and isolates (U+202A–U+202E, U+2066–U+2069): shown as is
# they reorder what a reader sees ("Trojan Source": text that displays other than it reads).
# They are written out as `\u202e` escapes, visible; the implicit marks (U+200E, U+200F) that
# right-to-left text uses stay.
_BIDI = re.compile("[\u202a-\u202e\u2066-\u2069]")


def strip_terminal_controls(text: str) -> str:
    """Remove terminal escape sequences and control characters (tab and newline stay; a carriage
    return becomes a newline), and write bidirectional overrides out as `\\u202e` escapes."""
    if "\x1b" in text:
        text = _ESCAPE_SEQ.sub("", text).replace("\x1b", "")
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    text = _CONTROL.sub("", text)
    if text.isascii():
        return text
    return _BIDI.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def clean_text(text: str, *, max_chars: int = MAX_BLOCK_CHARS) -> str:
    """Make transcript text safe to store, embed and print.

    Lone UTF-16 surrogates (from `\\ud800`-style JSON escapes) become U+FFFD, NUL bytes and
    terminal control sequences are dropped (`strip_terminal_controls`), base64 data URIs are
    elided, and text longer than `max_chars` code points is cut with a visible marker.
    """
    return _cleaned(text, max_chars)[0]


def _cleaned(text: str, max_chars: int = MAX_BLOCK_CHARS) -> tuple[str, int]:
    """(`clean_text` of `text`, how many characters its cut dropped: 0 when none)."""
    text = strip_terminal_controls(text)
    if _SURROGATE.search(text):
        text = _SURROGATE.sub("\ufffd", text)
    text = elide_data_uris(text)
    dropped = max(0, len(text) - max_chars)
    if dropped:
        text = text[:max_chars] + _CUT_MARK.format(n=dropped)
    return text, dropped


# Everything a reader may take for a line break: Python's str.splitlines() and Unicode
# terminals also break at U+2028/U+2029 (and at the C1 NEL, which strip_terminal_controls drops).
_LINE_BREAK = re.compile("\n|\u2028|\u2029")
QUOTE = "> "  # the prefix of every line of stored text in funes' line-oriented outputs


def quote_passage(text: str) -> str:
    """Stored text as quoted data: every line prefixed `> ` (an empty line becomes `>`).

    Terminal controls are stripped first (a carriage return becomes a line break). The result
    never contains a line that does not start with `>`, so in an output whose structure lines
    (headers, `→ get` lines, separators, prompt boundaries) never start with `>`, a passage
    cannot pose as structure, whatever it holds. U+2028 and U+2029 count as line breaks.
    """
    lines = _LINE_BREAK.split(strip_terminal_controls(text))
    return "\n".join(QUOTE + line if line else QUOTE.rstrip() for line in lines)


_UNPRINTABLE = re.compile(r"[\x00-\x1f\x7f\ud800-\udfff]")


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    if 0xDC80 <= code <= 0xDCFF:  # a byte that was not UTF-8 (a file name, argv): show the byte
        return f"\\x{code - 0xDC00:02x}"
    return f"\\x{code:02x}" if code < 0x80 else f"\\u{code:04x}"


def printable(value: str) -> str:
    """An identifier (session or turn id, path, tool name) made safe to store and print.

    Control characters and lone surrogates (from file names or argv bytes that are not UTF-8,
    or `\\ud800` JSON escapes) are written as `\\xNN` / `\\uNNNN` escapes, so the id stays on
    one line of the agent format, binds in SQLite, and distinct ids stay distinct. Ids made
    of printable text (every id real agents write) are returned unchanged.
    """
    if value.isascii() and value.isprintable():
        return value
    return _UNPRINTABLE.sub(_escape, value)


# what breaks a line or drives a terminal: C0 and C1 controls, DEL, U+2028/U+2029, and the
# lone surrogates `printable` escapes
_BREAKS_A_LINE = re.compile(
    r"[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]"  # bidi too
)


def one_line(value: str) -> str:
    """A stored field (path, id, facet, label) as it may appear inside one line of output:
    `printable`'s escapes, and C1 controls (`\\x9b` opens a terminal sequence) and Unicode
    line and paragraph separators escaped as well. A field a memory read from elsewhere
    holds may be anything; a field this funes stored has passed `printable`, so for the
    text real agents write this returns it unchanged. Display only: never stored."""
    if value.isascii() and value.isprintable():
        return value
    return _BREAKS_A_LINE.sub(_escape, value)


class ToolStatus(StrEnum):
    """What became of a tool call or its result, when the agent recorded it.

    `error`: the result is an error the tool reported (Claude `is_error`, pi `isError`);
    `not run`: the call was written but never executed (a pi assistant message that ended in
    `stopReason` `error`/`aborted`). Shown in the rendered chunk text (`funes.chunks`).
    """

    ERROR = "error"
    NOT_RUN = "not run"


@dataclass(frozen=True, slots=True)
class Block:
    """One piece of a turn. `text` is already cleaned (see `clean_text`)."""

    type: BlockType
    text: str
    tool_name: str | None = None
    tool_use_id: str | None = None
    status: ToolStatus | None = None  # tool blocks only: an error result, a call never run
    # characters the parse-time cut dropped from the text (over MAX_BLOCK_CHARS); 0: none
    cut_chars: int = 0

    @classmethod
    def make(
        cls,
        type: BlockType,
        text: str,
        *,
        tool_name: str | None = None,
        tool_use_id: str | None = None,
        status: ToolStatus | None = None,
    ) -> Block:
        text, dropped = _cleaned(text)
        return cls(
            type,
            text,
            tool_name=tool_name,
            tool_use_id=tool_use_id,
            status=status,
            cut_chars=dropped,
        )


@dataclass(frozen=True, slots=True)
class Turn:
    """One message of a session, with its provenance.

    `turn_id` is stable across re-reads of the same (growing) unit: chunk ids derive from it.
    `seq` is the 0-based position among retained turns of the unit, in file order.
    `ts` is ISO-8601 UTC (`2025-01-13T10:11:12.345Z`), or "" when the source recorded none.
    `cwd` is where the agent was at this turn; `project` the directory the session's workdir
    facet comes from (its first recorded cwd: a session that `cd`s elsewhere keeps one
    facet); None → `cwd`. `model` is the model that wrote an assistant turn, when recorded.
    `session_label` is a short, human-readable name that tells this session apart from its
    neighbours in recall headers (see `funes.traces.labels`); None → derived from the id.
    """

    harness: Harness
    session_id: str
    turn_id: str
    seq: int
    ts: str
    role: Role
    blocks: tuple[Block, ...]
    source_path: str
    cwd: str | None = None
    parent_id: str | None = None
    git_branch: str | None = None
    host: str | None = None  # set by sources that record it (parquet); else the indexing host
    parent_session_id: str | None = None  # subagent / continuation link
    scaffold: bool = False  # harness-injected text (env context, compaction summaries, caveats)
    model: str | None = None
    project: str | None = None
    session_label: str | None = None

    @property
    def workdir(self) -> str:
        return workdir_facet(self.project or self.cwd, self.source_path)


_NON_ALNUM = re.compile(r"[^A-Za-z0-9]")


def workdir_facet(cwd: str | None, source_path: str = "") -> str:
    """cwd with every non-ASCII-alphanumeric character replaced by `-` (the Rust reference's facet).

    `/home/u/llama.cpp` → `-home-u-llama-cpp`. With no usable cwd: the directory name after a
    `projects` segment of the source path, else the source's parent directory name, each
    with its whitespace and unprintable characters (controls, line separators, lone
    surrogates) made `-`. Always one printable token without whitespace: take `cwd` and
    `source_path` as recorded (not `printable`'s escapes, which would show up as `x0a`).
    """
    if cwd:
        munged = _NON_ALNUM.sub("-", cwd)
        if munged.strip("-"):
            return munged
    if source_path:
        parts = source_path.replace("\\", "/").split("/")
        if "projects" in parts:
            i = parts.index("projects")
            if i + 1 < len(parts) - 1 and parts[i + 1]:
                return _token(parts[i + 1])
        if len(parts) >= 2 and parts[-2]:
            return _token(parts[-2])
    return "-"


def _token(name: str) -> str:
    """A folder name as one printable token: whitespace and unprintable characters → `-`."""
    if name.isascii() and name.isprintable() and " " not in name:
        return name
    return "".join(ch if ch.isprintable() and not ch.isspace() else "-" for ch in name)


def iso_utc(value: datetime) -> str:
    """Format an aware datetime as ISO-8601 UTC with milliseconds and a `Z`."""
    value = value.astimezone(UTC)
    return value.strftime("%Y-%m-%dT%H:%M:%S.") + f"{value.microsecond // 1000:03d}Z"


def normalize_ts(value: object) -> str:
    """Best-effort normalization of a recorded timestamp to ISO-8601 UTC (see `iso_utc`).

    Accepts ISO strings (with `Z` or an offset; naive ones are taken as UTC), epoch seconds
    (int/float, or an ASCII-digit string) and epoch milliseconds (values above 1e11).
    Returns "" for anything else, including values out of datetime's range; never raises.
    """
    if value is None or isinstance(value, bool):
        return ""
    if isinstance(value, int | float):
        try:
            seconds = float(value)  # OverflowError for ints beyond a double
            if abs(seconds) > 1e11:
                seconds /= 1000.0
            return iso_utc(datetime.fromtimestamp(seconds, tz=UTC))
        except (OverflowError, OSError, ValueError):
            return ""
    if isinstance(value, str):
        s = value.strip()
        if not s:
            return ""
        if _EPOCH.fullmatch(s):
            return normalize_ts(float(s))
        try:
            parsed = datetime.fromisoformat(s.replace("Z", "+00:00"))
            if parsed.tzinfo is None:
                parsed = parsed.replace(tzinfo=UTC)
            return iso_utc(parsed)  # OverflowError: e.g. year 1 with a positive offset
        except (ValueError, OverflowError):
            return ""
    return ""


def parse_ts(ts: str) -> datetime | None:
    """Parse a normalized `ts` back to an aware datetime (None when empty or invalid)."""
    if not ts:
        return None
    try:
        parsed = datetime.fromisoformat(ts.replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)
