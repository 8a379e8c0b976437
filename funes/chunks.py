"""Turn → Chunk: render each block, split it near 1,200 characters, give each piece a stable id.

Pure: no I/O. The split rule and the id scheme match the Rust reference (huggingface/funes,
`src/chunk.rs`), so memories built by either produce the same chunk ids:

* render: `tool_use` → `[tool_use <name>] <text>`; `tool_result` → `[tool_result <name>] <text>`
  (`[tool_result] <text>` when the name is unknown); other blocks unchanged. A tool block
  with a status carries it after the name: `[tool_result Bash (error)] …`,
  `[tool_use bash (not run)] …` (funes' addition: the reference has no status);
* split (lengths in code points): ≤ size → one piece; else windows of `size`; cut at the last
  newline past the window's midpoint, else the last space past it, else hard; the next window
  starts `overlap` characters before the cut (always advancing); pieces are stripped;
* id = first 16 hex of sha1("{session_id}:{turn_id}:{block_idx}:{split_idx}"), where
  `block_idx` counts every block of the turn, filtered or not.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, replace

from funes.settings import CHUNK
from funes.traces import Block, BlockType, Harness, Role, Turn, printable, workdir_facet


@dataclass(frozen=True, slots=True)
class Chunk:
    """One indexed piece of a block, with the provenance of its turn."""

    id: str
    text: str
    session_id: str
    turn_id: str
    seq: int
    ts: str
    role: Role
    block_type: BlockType
    block_idx: int
    split_idx: int
    harness: Harness
    workdir: str
    source_path: str
    tool_name: str | None = None
    parent_id: str | None = None
    cwd: str | None = None
    git_branch: str | None = None
    host: str | None = None
    parent_session_id: str | None = None
    scaffold: bool = False
    model: str | None = None  # the model that wrote the turn (assistant turns)
    session_label: str | None = None  # the session's short name (funes.traces.labels)


def chunk_id(session_id: str, turn_id: str, block_idx: int, split_idx: int) -> str:
    """First 16 hex characters of sha1 over `session:turn:block_idx:split_idx`."""
    import hashlib  # here: a recall, which imports this module's types, hashes nothing

    key = f"{session_id}:{turn_id}:{block_idx}:{split_idx}"
    return hashlib.sha1(key.encode("utf-8")).hexdigest()[:16]


def render_block(block: Block) -> str:
    """The indexed text of a block (tool blocks carry their tool name and status in front)."""
    status = f" ({block.status.value})" if block.status is not None else ""
    if block.type is BlockType.TOOL_USE:
        return f"[tool_use {block.tool_name or 'None'}{status}] {block.text}".strip()
    if block.type is BlockType.TOOL_RESULT:
        name = f" {block.tool_name}" if block.tool_name else ""
        return f"[tool_result{name}{status}] {block.text}".strip()
    return block.text


def split_text(text: str, *, size: int = CHUNK.size, overlap: int = CHUNK.overlap) -> list[str]:
    """Split `text` into pieces of at most `size` code points (see module docstring)."""
    text = text.strip()
    if not text:
        return []
    if len(text) <= size:
        return [text]
    pieces: list[str] = []
    start, n = 0, len(text)
    while start < n:
        end = min(start + size, n)
        if end < n:
            mid = start + size // 2
            cut = text.rfind("\n", start, end)
            if cut <= mid:
                cut = text.rfind(" ", start, end)
            if cut > mid:
                end = cut
        piece = text[start:end].strip()
        if piece:
            pieces.append(piece)
        if end >= n:
            break
        start = max(end - overlap, start + 1)
    return pieces


def chunk_turn(
    turn: Turn,
    *,
    types: Iterable[BlockType] | None = None,
    host: str | None = None,
) -> Iterator[Chunk]:
    """The chunks of one turn, in block then split order.

    Identifiers (session and turn ids, paths, tool names, branch, host) pass through
    `printable`: control characters and lone surrogates become escapes, so every chunk binds
    in SQLite and prints on one line; the chunk id hashes the printable ids.

    Args:
        turn: the turn (its block texts are indexed as they are: redact before calling).
        types: only blocks of these types (None = all); block_idx still counts every block.
        host: the indexing host, used when the turn does not record one.
    """
    wanted = set(types) if types is not None else None
    session_id, turn_id = printable(turn.session_id), printable(turn.turn_id)
    source_path, cwd = printable(turn.source_path), _opt(turn.cwd)
    # from the recorded cwd and path: their escapes (`\x0a`) would leak into the facet
    workdir = workdir_facet(turn.project or turn.cwd, turn.source_path)
    model, label = _opt(turn.model), _opt(turn.session_label)
    for block_idx, block in enumerate(turn.blocks):
        if wanted is not None and block.type not in wanted:
            continue
        tool_name = _opt(block.tool_name)
        if tool_name != block.tool_name:
            block = replace(block, tool_name=tool_name)
        for split_idx, piece in enumerate(split_text(render_block(block))):
            yield Chunk(
                id=chunk_id(session_id, turn_id, block_idx, split_idx),
                text=piece,
                session_id=session_id,
                turn_id=turn_id,
                seq=turn.seq,
                ts=turn.ts,
                role=turn.role,
                block_type=block.type,
                block_idx=block_idx,
                split_idx=split_idx,
                harness=turn.harness,
                workdir=workdir,
                source_path=source_path,
                tool_name=tool_name,
                parent_id=_opt(turn.parent_id),
                cwd=cwd,
                git_branch=_opt(turn.git_branch),
                host=_opt(turn.host or host),
                parent_session_id=_opt(turn.parent_session_id),
                scaffold=turn.scaffold,
                model=model,
                session_label=label,
            )


def _opt(value: str | None) -> str | None:
    return None if value is None else printable(value)


def reassemble(pieces: list[str], *, overlap: int = CHUNK.overlap) -> str:
    """Rebuild a block from its split pieces (in split order), removing the overlaps.

    Each piece after the first starts up to `overlap` characters (plus stripped whitespace)
    before the previous one ended; the longest suffix of the text so far that is a prefix of
    the next piece is dropped from it.
    """
    return reassemble_spans(pieces, overlap=overlap)[0]


def reassemble_spans(pieces: list[str], *, overlap: int = CHUNK.overlap) -> tuple[str, list[int]]:
    """`reassemble`, plus where each piece lies in the result: `text[o_i : o_i + len(piece_i)]`
    equals `pieces[i]` for every offset `o_i` returned (one per piece, in order)."""
    if not pieces:
        return "", []
    out = pieces[0]
    offsets = [0]
    for piece in pieces[1:]:
        best = 0
        limit = min(len(out), len(piece), overlap + 1)
        for k in range(limit, 0, -1):
            if out.endswith(piece[:k]):
                best = k
                break
        rest = piece[best:]
        sep = "" if best else ("\n" if not out.endswith((" ", "\n")) else "")
        offsets.append(len(out) - best + len(sep))
        out = out + sep + rest
    return out, offsets


# -- what the embedder reads, and how it runs -----------------------------------------------------
# A memory records the recipe its vectors were made with (store meta `embedding_input`) and
# keeps using it, so one memory never mixes vectors of two recipes. Memories stamped before
# recipes were recorded embedded the chunk text alone: LEGACY_EMBED_INPUT. Both older recipes
# ran the model's float32 graph on batches, cut at the model's own token limit.
LEGACY_EMBED_INPUT = "text"
PROMPT_CONTEXT = "prompt-context/1"
# The current one: the `prompt-context/1` input, run on the model's dynamic-int8 graph one
# text at a time, cut at 104 tokens (funes.inference.tokens), the graph's attention (without a
# key padding mask) and GELU fused (funes.inference.quantize). Measured on the dev set and
# LoCoMo (bench/README.md). Earlier: `prompt-context/1+int8-128` (cut at 128, unfused), then
# `prompt-context/1+int8-128/fused` (masked attention); a memory of either is re-embedded.
EMBED_INPUT = "prompt-context/1+int8-104/unmasked"
FLOAT32_RECIPES = frozenset({LEGACY_EMBED_INPUT, PROMPT_CONTEXT})
PROMPT_CONTEXT_CHARS = 200  # of the user prompt put in front of an assistant/tool chunk


def turn_prompt(turn: Turn) -> str | None:
    """The prompt a user turn opens: the first piece of its first text block, whitespace folded,
    at most PROMPT_CONTEXT_CHARS. None for other turns (assistant, tool, scaffold)."""
    if turn.role is not Role.USER or turn.scaffold:
        return None
    for block in turn.blocks:
        if block.type is BlockType.TEXT:
            pieces = split_text(render_block(block))
            return prompt_context(pieces[0]) if pieces else None
    return None


def prompt_context(first_piece: str) -> str:
    """A user prompt's first chunk text as embedding context (folded, cut)."""
    return " ".join(first_piece.split())[:PROMPT_CONTEXT_CHARS]


def embedding_input(text: str, role: str, prompt: str | None, recipe: str) -> str:
    """What the embedder reads for a chunk; the stored and shown text stays `text`.

    `prompt-context/1`: an assistant or tool chunk is prefixed by the user prompt that started
    its exchange (`prompt` from `turn_prompt`/`prompt_context`) and a newline, so a tool output
    or a terse reply is embedded with what it answers. On the dev set (bench/README.md) this
    raised vector-only turn hit@5 from 67.9 to 74.3 (tool-result-only questions 33 → 72) and
    the default pipeline's from 76.1 to 81.7. `text` (legacy): the chunk text alone.
    """
    if recipe == LEGACY_EMBED_INPUT or role == Role.USER or not prompt:
        return text
    return f"{prompt}\n{text}"
