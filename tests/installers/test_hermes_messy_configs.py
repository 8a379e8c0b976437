"""`funes add hermes` / `funes remove hermes` against the config.yaml of a user who wrote it by
hand: comments anywhere, flow style, document markers, a byte-order mark, blank lines first.
After `add` the file is YAML Hermes reads with funes' entries in it and the user's as they were;
after `remove` the user's text is back (byte for byte when they did not edit in between); a file
funes cannot edit without losing something of the user's is refused, untouched."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest
from ruamel.yaml import YAML
from support.cli import Ran

from funes.commands import run_add, run_remove
from funes.errors import AgentError
from funes.memory import Runtime
from funes.wiring import agent_harness

HERMES = agent_harness("hermes")
EVENTS = ("post_llm_call", "on_session_finalize", "on_session_start")


@pytest.fixture
def rt() -> Runtime:
    return Runtime.resolve()


@pytest.fixture
def config(isolated_env: Path) -> Path:
    return isolated_env / ".hermes" / "config.yaml"


def wired(text: str) -> dict[str, object]:
    """The config as Hermes reads it (PyYAML-compatible safe load), checked to hold funes'
    three hooks and its MCP server."""
    data = YAML(typ="safe").load(text)
    for event in EVENTS:
        assert any("funes-enqueue.py" in entry["command"] for entry in data["hooks"][event])
    assert data["mcp_servers"]["funes"]["args"][:3] == ["-m", "funes", "mcp"]
    return data


def add_edit_remove(rt: Runtime, config: Path, text: str, old: str, new: str) -> str:
    """Write `text`, add, replace `old` with `new` in what add wrote (the user's edit), remove;
    what is left, with `\r\n` as it is."""
    config.write_bytes(text.encode())
    run_add(rt, HERMES)
    added = config.read_bytes().decode()
    assert old in added
    config.write_bytes(added.replace(old, new, 1).encode())
    run_remove(rt, HERMES)
    return config.read_bytes().decode()


def test_a_comment_the_user_puts_at_the_end_after_add_survives_remove(
    rt: Runtime, config: Path
) -> None:
    text = "# mine\nmodel: x\n"
    config.write_text(text)
    run_add(rt, HERMES)
    config.write_text(config.read_text() + "# the end\n")
    run_remove(rt, HERMES)
    assert config.read_text() == text + "# the end\n"


def test_remove_keeps_a_comment_the_user_wrote_in_funes_entry_before_a_closing_comment(
    rt: Runtime, config: Path
) -> None:
    # ruamel's dump appends a collection's end comments to its `ca.comment` list (the dump
    # that picks the indentation left that slot in place): the comment remove moved to the
    # end of the document went after it, where ruamel never prints
    config.write_text(
        "model: x\nmcp_servers:\n  funes:\n    command: /usr/bin/python3  # mine\n"
        "    args: [-m, funes, mcp]\n# the end\n"
    )
    run_remove(rt, HERMES)
    text = config.read_text()
    assert "# mine" in text and "# the end" in text
    assert YAML(typ="safe").load(text) == {"model": "x"}


AROUND_THE_DOCUMENT = {  # what comes before the user's first key and after the document
    "blank lines first": ("\n\n", "model: x\n", ""),
    "comments before ---": ("# Hermes, mine\n---\n", "model: x\n", ""),
    "--- with a comment": ("--- # settings\n", "model: x\n", ""),
    "comments after ...": ("", "model: x\n", "...\n# model: y  (to try)\n"),
    "a byte-order mark": ("\ufeff# mine\n", "model: x\n", ""),
    "crlf": ("# mine\r\n---\r\n", "model: x\r\n", "...\r\n# end\r\n"),
}


@pytest.mark.parametrize("case", sorted(AROUND_THE_DOCUMENT))
def test_add_keeps_what_comes_before_and_after_the_document_and_remove_gives_it_back(
    rt: Runtime, config: Path, case: str
) -> None:
    # ruamel drops a first blank line (so each add dropped one more), the comments before
    # `---`, the `---` itself, everything from `...` on and a byte-order mark: they were lost
    # once the user edited the file after add
    head, body, tail = AROUND_THE_DOCUMENT[case]
    text = head + body + tail
    config.write_bytes(text.encode())
    run_add(rt, HERMES)
    added = config.read_bytes().decode()
    assert added.startswith(head + body) and added.endswith(tail)
    wired(added)
    run_add(rt, HERMES)
    assert config.read_bytes().decode() == added  # twice changes nothing
    run_remove(rt, HERMES)
    assert config.read_bytes().decode() == text
    edited = text.replace("model: x", "model: y")
    assert add_edit_remove(rt, config, text, "model: x", "model: y") == edited


@pytest.mark.parametrize("text", ["---\n", "---\n# nothing yet\n", "# nothing yet\n---\n...\n"])
def test_a_document_marker_with_no_document_is_an_empty_config(
    rt: Runtime, config: Path, text: str
) -> None:
    # refused ("does not hold a mapping"), where a file of comments only was taken
    config.write_text(text)
    run_add(rt, HERMES)
    wired(config.read_text())
    run_remove(rt, HERMES)
    assert config.read_text() == text


@pytest.mark.parametrize(
    ("text", "edited"),
    [
        # ruamel writes the `...` after such a document itself, once the user's edit means
        # the bytes add found cannot be written back
        ("m: 1\np: |+\n  kept\n\n", "m: 2\np: |+\n  kept\n\n...\n"),
        ("m: 1\np: |+\n  kept\n\n...\n# the end\n", "m: 2\np: |+\n  kept\n\n...\n# the end\n"),
    ],
)
def test_a_block_scalar_keeping_its_final_newlines_last_comes_back_without_a_second_end(
    rt: Runtime, config: Path, text: str, edited: str
) -> None:
    # ruamel ends such a document with `...` itself: with the `...` kept after the document
    # that made two, and remove did not give back the bytes add found
    config.write_text(text)
    run_add(rt, HERMES)
    run_remove(rt, HERMES)
    assert config.read_text() == text
    assert add_edit_remove(rt, config, text, "m: 1", "m: 2") == edited


REFUSED = {  # a config funes cannot put its entries in: the value of a key they go under
    "hooks: [a]\n": "`hooks` is not a mapping",
    "mcp_servers: [a]\n": "`mcp_servers` is not a mapping",
    "hooks:\n  post_llm_call: ~/bin/log-turn.sh\n": "`hooks.post_llm_call` is not a list",
    "hooks:\n  on_session_start: {command: x}\n": "`hooks.on_session_start` is not a list",
}


@pytest.mark.parametrize("text", sorted(REFUSED))
def test_add_refuses_a_key_funes_cannot_put_its_entries_under_before_writing_anything(
    config: Path, run: Callable[..., Ran], text: str
) -> None:
    # an event holding a command string got no funes hook, and add said it was done (Hermes
    # never ran funes after a turn); `hooks` or `mcp_servers` not a mapping was refused only
    # once the hook script, the launcher and the first index were in place
    config.write_text(text)
    refused = run("add", "hermes", "--yes")
    assert refused.returncode == 1 and REFUSED[text] in refused.stderr, refused.stderr
    assert "Traceback" not in refused.stderr
    assert config.read_text() == text
    assert not Path(os.environ["FUNES_HOME"]).exists()


@pytest.mark.parametrize(
    "text",
    [
        "hooks:  # none yet\nmodel: x\n",
        "hooks:\n  post_llm_call:  # later\n  pre_tool_call: []\n",
        "model: x\nmcp_servers:   # none yet\n# the end\n",
    ],
)
def test_remove_gives_back_a_key_with_no_value_with_the_comment_on_its_line(
    rt: Runtime, config: Path, text: str
) -> None:
    # the comment went to a line of its own, at its old column: not the bytes add found
    config.write_text(text)
    run_add(rt, HERMES)
    wired(config.read_text())
    run_remove(rt, HERMES)
    assert config.read_text() == text
    assert add_edit_remove(rt, config, "editor: vi\n" + text, "vi", "emacs") == (
        "editor: emacs\n" + text
    )


def test_readding_keeps_the_comment_on_the_line_of_funes_mcp_entry(
    rt: Runtime, config: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # re-added with other settings, funes' entry is replaced: the comment the user put at the
    # end of its line went to a line of its own, at its old column
    config.write_text("model: x\n")
    run_add(rt, HERMES)
    text = config.read_text().replace("  funes:\n", "  funes:  # memory\n")
    config.write_text(text)
    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:9")  # written into funes' MCP entry
    run_add(Runtime.resolve(), HERMES)
    added = config.read_text()
    assert "  funes:  # memory\n" in added and "HF_ENDPOINT" in added
    wired(added)


FLOW_OVER_LINES = {  # a comment inside `[...]` or `{...}` written over several lines
    "the user's own list": ("model: [\n  a,  # the old one\n  b\n]\n", "# the old one"),
    "an event's list": (
        "hooks:\n  post_llm_call: [\n    {command: a},  # mine\n    {command: b}\n  ]\n",
        "# mine",
    ),
    "mcp_servers": ("mcp_servers: {\n  a: {command: x},  # mine\n  b: {command: y}\n}\n", "# mine"),
}


@pytest.mark.parametrize("case", sorted(FLOW_OVER_LINES))
def test_a_config_whose_comment_funes_cannot_keep_is_refused_untouched(
    rt: Runtime, config: Path, case: str
) -> None:
    # ruamel reads a comment inside a flow collection over several lines and never writes it
    # back: add wrote the file without it
    text, comment = FLOW_OVER_LINES[case]
    config.write_text(text)
    with pytest.raises(AgentError, match=f"cannot keep the comment `{comment}`"):
        run_add(rt, HERMES)
    assert config.read_text() == text


def test_remove_refuses_a_config_whose_comment_it_cannot_keep_leaving_it_untouched(
    rt: Runtime, config: Path
) -> None:
    config.write_text("model: x\n")
    run_add(rt, HERMES)
    text = config.read_text() + "tools: [\n  a,  # mine\n  b\n]\n"  # written after add
    config.write_text(text)
    assert run_add(rt, HERMES).changed == []  # nothing to write: no reason to refuse
    with pytest.raises(AgentError, match="cannot keep the comment `# mine`"):
        run_remove(rt, HERMES)
    assert config.read_text() == text


@pytest.mark.parametrize("where", ["first", "last"])
def test_remove_keeps_a_config_funes_created_once_the_user_wrote_a_comment_in_it(
    rt: Runtime, config: Path, where: str
) -> None:
    # the file funes created held no key of the user's once funes' were out: it was deleted,
    # and the user's comment with it
    run_add(rt, HERMES)
    note = "# notes: try the search server\n"
    added = config.read_text()
    config.write_text(note + added if where == "first" else added + note)
    run_remove(rt, HERMES)
    assert config.read_text() == note
    run_add(rt, HERMES)  # funes' entries go in after the note, and out again
    run_remove(rt, HERMES)
    assert config.read_text() == note


def test_remove_takes_funes_mcp_server_out_of_a_config_whose_hooks_is_no_mapping(
    rt: Runtime, config: Path, run: Callable[..., Ran]
) -> None:
    # remove refused the file ("`hooks` is not a mapping"), though nothing of funes' can be in
    # such a `hooks`, and left funes' MCP server registered
    untouched = "hooks: [~/bin/log-turn.sh]\n"
    config.write_text(untouched)
    assert run("remove", "hermes").returncode == 0
    assert config.read_text() == untouched
    config.write_text("model: x\n")
    run_add(rt, HERMES)
    added = config.read_text()
    servers = added[added.index("mcp_servers:") :]
    config.write_text("model: x\nhooks: [~/bin/log-turn.sh]\n" + servers)
    run_remove(rt, HERMES)
    assert config.read_text() == "model: x\nhooks: [~/bin/log-turn.sh]\n"


ANCHORED = {  # a collection funes would put its entry in, used elsewhere through an alias
    "an event's list, shared with another event": (
        "hooks:\n  post_llm_call: &turn\n    - command: ~/bin/log.sh\n"
        "  on_session_finalize: *turn\n",
        "hooks.post_llm_call",
    ),
    "an event's list, anchored elsewhere": (
        "none: &none []\nhooks:\n  post_llm_call: *none\n",
        "hooks.post_llm_call",
    ),
    "hooks": ("hooks: &h {}\nprofile_hooks: *h\n", "hooks"),
    "mcp_servers": ("mcp_servers: &s\n  ping: {command: p}\nother_servers: *s\n", "mcp_servers"),
}


@pytest.mark.parametrize("case", sorted(ANCHORED))
def test_add_refuses_to_put_its_entry_in_an_anchored_collection(
    rt: Runtime, config: Path, case: str
) -> None:
    # the entry showed wherever the anchor was used: with post_llm_call's list shared with
    # on_session_finalize, each event's pass took the other's funes hook out, and post_llm_call
    # was left running funes' on_session_finalize command
    text, name = ANCHORED[case]
    config.write_text(text)
    with pytest.raises(AgentError, match=f"`{name}` is anchored"):
        run_add(rt, HERMES)
    assert config.read_text() == text


MERGED = {  # a collection funes would put its entry in, reached through a merge key (`<<`):
    # it belongs to the merged mapping, which every mapping merging it shares
    "an event's list, merged into hooks": (
        "base: &base\n  post_llm_call:\n    - command: ~/bin/log.sh\n"
        "hooks:\n  <<: *base\nprofile:\n  <<: *base\n",
        "hooks.post_llm_call",
    ),
    "an event's list, merged from a list of mappings": (
        "a: &a\n  on_session_start: []\nb: &b\n  other: []\nhooks:\n  <<: [*b, *a]\n",
        "hooks.on_session_start",
    ),
    "an event's key without a value, merged into hooks": (
        "base: &base\n  post_llm_call:\nhooks:\n  <<: *base\n",
        "hooks.post_llm_call",
    ),
    "hooks, merged into the document": (
        "defaults: &d\n  hooks:\n    pre_tool_call: []\n<<: *d\nmodel: x\n",
        "hooks",
    ),
    "mcp_servers, merged into the document": (
        "defaults: &d\n  mcp_servers:\n    ping: {command: p}\n<<: *d\n",
        "mcp_servers",
    ),
}


@pytest.mark.parametrize("case", sorted(MERGED))
def test_add_refuses_to_put_its_entry_in_a_collection_reached_through_a_merge_key(
    rt: Runtime, config: Path, case: str
) -> None:
    # the merged list is the base's own: funes' hook went into the base, so every mapping
    # merging it (`profile:` above) ran funes' hook too
    text, name = MERGED[case]
    config.write_text(text)
    with pytest.raises(AgentError, match=f"`{name}` comes from a merge key") as refused:
        run_add(rt, HERMES)
    assert refused.value.hint and "`<<`" in refused.value.hint
    assert config.read_text() == text


def test_a_merge_key_funes_adds_nothing_to_is_left_as_it_is(rt: Runtime, config: Path) -> None:
    """A merged base holding none of funes' events: funes' events go in the merging mapping
    as its own keys; the base and every other mapping merging it stay as they were."""
    text = (
        "base: &base\n  pre_tool_call:\n    - command: ~/bin/log.sh\n"
        "hooks:\n  <<: *base\nprofile:\n  <<: *base\n"
    )
    config.write_text(text)
    run_add(rt, HERMES)
    data = wired(config.read_text())
    assert data["base"] == data["profile"] == {"pre_tool_call": [{"command": "~/bin/log.sh"}]}
    assert data["hooks"]["pre_tool_call"] == [{"command": "~/bin/log.sh"}]
    run_remove(rt, HERMES)
    assert config.read_text() == text


def test_a_yaml_1_1_config_keeps_its_directive_and_its_octal_numbers(
    rt: Runtime, config: Path
) -> None:
    # written by a YAML that had not read the file: no `%YAML 1.1`, and `0755` as `0o755`,
    # which Hermes' YAML 1.1 reader takes for a string
    text = "%YAML 1.1\n---\nmode: 0755\nmodel: x\n"
    config.write_text(text)
    run_add(rt, HERMES)
    added = config.read_text()
    assert added.startswith("%YAML 1.1\n---\nmode: 0755\n")
    wired(added)
    run_remove(rt, HERMES)
    assert config.read_text() == text
    edited = text.replace("model: x", "model: z")
    assert add_edit_remove(rt, config, text, "model: x", "model: z") == edited


AFTER_ADD = {  # (what the user changes in the file add wrote (None: its end), to what, what
    # remove leaves)
    "a comment after funes' hook": (
        "      timeout: 30\n  on_session_finalize:",
        "      timeout: 30\n    # note\n  on_session_finalize:",
        "model: x\n    # note\n",
    ),
    "a hook of the user's after funes'": (
        "      timeout: 30\n  on_session_finalize:",
        "      timeout: 30\n    - command: mine  # m\n  on_session_finalize:",
        "model: x\nhooks:\n  post_llm_call:\n    - command: mine  # m\n",
    ),
    "an event of the user's": (
        "mcp_servers:",
        "  pre_tool_call:  # mine\n    - command: t\nmcp_servers:",
        "model: x\nhooks:\n  pre_tool_call:  # mine\n    - command: t\n",
    ),
    "a server of the user's after funes'": (
        None,
        "  # other server\n  other:\n    command: o\n# end\n",
        "model: x\nmcp_servers:\n  # other server\n  other:\n    command: o\n# end\n",
    ),
    "a comment before funes' keys": (
        "hooks:",
        "# funes below\nhooks:",
        "model: x\n# funes below\n",
    ),
}


@pytest.mark.parametrize("case", sorted(AFTER_ADD))
def test_remove_keeps_what_the_user_wrote_among_funes_entries(
    rt: Runtime, config: Path, case: str
) -> None:
    old, new, left = AFTER_ADD[case]
    config.write_text("model: x\n")
    run_add(rt, HERMES)
    added = config.read_text()
    config.write_text(added + new if old is None else added.replace(old, new, 1))
    run_remove(rt, HERMES)
    assert config.read_text() == left


def test_adding_again_leaves_the_users_layout_alone_when_funes_entries_are_in_place(
    rt: Runtime, config: Path
) -> None:
    # the second add wrote the whole file back as ruamel lays it out (`[a, b]`), though
    # nothing of funes' changed
    config.write_text("model: x\n")
    run_add(rt, HERMES)
    text = config.read_text() + "tools: [a,b]\n"
    config.write_text(text)
    assert run_add(rt, HERMES).changed == []
    assert config.read_text() == text


def test_remove_takes_out_funes_entry_holding_a_tagged_value_the_user_put_in(
    rt: Runtime, config: Path
) -> None:
    # a `!env` value in funes' MCP entry (a TaggedScalar, a node without entries) ended
    # `remove` in "TypeError: object of type 'TaggedScalar' has no len()"
    text = "model:\n  api_key: !env OPENAI_KEY  # from the environment\n"
    out = add_edit_remove(
        rt, config, text, "    env:\n", "    env:\n      HF_TOKEN: !env HF_TOKEN\n"
    )
    assert out == text
