"""AGENTS.md documents every command and flag of the CLI, with the defaults the code uses."""

from __future__ import annotations

import re
from pathlib import Path

import click
import pytest

from funes.cli import cli
from funes.settings import RECALL

AGENTS_MD = (Path(__file__).resolve().parents[2] / "AGENTS.md").read_text()
INTERNAL = {"spool drain"}  # hidden: started by hooks, not by people


def _commands(group: click.Group, prefix: str = "") -> list[tuple[str, click.Command]]:
    out = []
    ctx = click.Context(group)
    names = group.list_commands(ctx)  # the lazy top-level group loads each command on request
    assert names, f"no commands under {group.name}"
    for name in sorted(names):
        command = group.get_command(ctx, name)
        assert command is not None, name
        full = f"{prefix}{name}"
        if command.hidden or full in INTERNAL:
            continue
        out.append((full, command))
        if isinstance(command, click.Group):
            out.extend(_commands(command, prefix=f"{full} "))
    return out


@pytest.mark.parametrize(
    ("name", "command"), _commands(cli), ids=lambda v: v if isinstance(v, str) else ""
)
def test_every_command_and_flag_is_documented(name: str, command: click.Command) -> None:
    assert f"funes {name}" in AGENTS_MD, f"`funes {name}` is missing from AGENTS.md"
    for param in command.params:
        if not isinstance(param, click.Option) or param.hidden:
            continue
        flags = [f for f in param.opts + param.secondary_opts if f.startswith("--")]
        if flags and not any(f in AGENTS_MD for f in flags):
            pytest.fail(f"`funes {name}` flag {flags[0]} is missing from AGENTS.md")


def test_recall_defaults_in_the_docs_match_the_settings() -> None:
    table = dict(re.findall(r"^\| `(-k|--[a-z-]+)` \| ([^|]+?) \|", AGENTS_MD, re.M))
    assert table["-k"] == str(RECALL.k)
    assert table["--candidates"] == str(RECALL.candidates)
    assert table["--half-life"] == f"{RECALL.half_life_days:g}"
    assert table["--neighbors"] == str(RECALL.neighbors)
