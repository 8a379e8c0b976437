"""funes: durable, local-first memory for AI coding agents.

This module holds the version only. Nothing heavy is imported here, so the hooks,
`funes --help` and `funes status` stay fast.
"""

__version__ = "0.1.0"
