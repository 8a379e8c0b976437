"""funes wired into each agent: its installer loaded and run, the hook script copied, checks.

    installers.py  load the bundled `installers/<agent>.py`, build its Context, call
                   preflight/install/uninstall/check, copy the hook (hooks/) into the data dir
    launcher.py    the launcher hooks and MCP registrations run (survives an install moving)

The verbs `funes add` / `funes remove` (funes.commands) and `funes status` use it. It sits
between the commands and funes.memory (it parses the memory an install binds).
"""

from __future__ import annotations

from funes.wiring import launcher
from funes.wiring.installers import (
    AgentChanges,
    AgentCheck,
    agent_harness,
    call,
    context,
    install_hook_script,
    installer,
    remove_hook_script,
    run_checks,
    settings_env,
)

__all__ = [
    "AgentChanges",
    "AgentCheck",
    "agent_harness",
    "call",
    "context",
    "install_hook_script",
    "installer",
    "launcher",
    "remove_hook_script",
    "run_checks",
    "settings_env",
]
