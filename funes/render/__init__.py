"""How results look: `agent` (stable, parsed by agents) and `human` (rich, free to change).

    agent.py        the agent format of AGENTS.md (golden-tested)
    json_format.py  the versioned JSON documents of `--json` (AGENTS.md)
    human.py        rich renderings for a terminal (imported only when one is wanted)

The modules are the public names: `from funes.render import agent`. Importing this package
imports neither (rich stays off the paths that print the agent format).
"""

__all__ = ["agent", "human", "json_format"]
