"""`funes add hermes` / `funes remove hermes` against the config.yaml of a user who wrote it by
hand: comments anywhere, flow style, document markers, a byte-order mark, blank lines first.
After `add` the file is YAML Hermes reads with funes' entries in it and the user's as they were;
after `remove` the user's text is back (byte for byte when they did not edit in between); a file
funes cannot edit without losing something of the user's is refused, untouched."""

from __future__ import annotations

from pathlib import Path

import pytest
from ruamel.yaml import YAML

from funes.commands import run_add, run_remove
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
