"""How results look: `agent` (stable, parsed by agents) and `human` (rich, free to change)."""
