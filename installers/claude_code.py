"""Claude Code: hooks merged into `<claude home>/settings.json`, MCP server in `.claude.json`.

Why a settings.json merge and not a plugin: a plugin needs the `claude` CLI on PATH (its
`plugin marketplace add` / `install` took minutes in our captured runs), Claude copies plugins
into a cache so every funes upgrade needs an uninstall + install, and plugin-declared timeouts do
not raise the SessionEnd budget. The merge is instant, needs no CLI, and our handlers are found
again by the marker in their command, so the user's own hooks are never touched.

Hooks (shell form, run by `sh -c`): Stop (a turn completed), SubagentStop (a subagent's file),
SessionEnd (covers a turn ended by Ctrl-C, where Stop does not fire) and SessionStart with
`--sweep` (catch-up after a crash or a killed session). MCP: `mcpServers.funes` in
`~/.claude.json` (`<CLAUDE_CONFIG_DIR>/.claude.json` when the config dir is moved).
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from ._common import (
    FIX_HINT,
    MCP_NAME,
    Changes,
    Check,
    Context,
    InstallError,
    dump_json,
    has_our_hook,
    hooks_table,
    is_our_mcp,
    load_json_object,
    our_hook_commands,
    remove_if_created,
    stale_hook_warnings,
    upsert_hook_groups,
    write_if_changed,
)
from .undo import drop_note, json_without_funes, note_edit, raw_text

AGENT = "claude_code"
EVENTS = {
    "Stop": False,
    "SubagentStop": False,
    "SessionEnd": False,
    "SessionStart": True,
}  # event → sweep
TIMEOUT_S = 10
DEFAULT_RETENTION_DAYS = 30
MANAGED_SETTINGS = (
    Path("/etc/claude-code/managed-settings.json"),
    Path("/Library/Application Support/ClaudeCode/managed-settings.json"),
)


def settings_path(ctx: Context) -> Path:
    return ctx.agent_home / "settings.json"


def claude_json_path(ctx: Context) -> Path:
    default_home = ctx.user_home / ".claude"
    if ctx.agent_home.resolve() == default_home.resolve():
        return ctx.user_home / ".claude.json"
    return ctx.agent_home / ".claude.json"


def desired_handlers(ctx: Context) -> dict[str, dict[str, Any]]:
    return {
        event: {
            "type": "command",
            "command": ctx.hook_command(AGENT, event, sweep=sweep),
            "timeout": TIMEOUT_S,
        }
        for event, sweep in EVENTS.items()
    }


def desired_mcp(ctx: Context) -> dict[str, Any]:
    return {"type": "stdio", "command": ctx.python, "args": ctx.mcp_args(), "env": ctx.mcp_env()}


def preflight(ctx: Context) -> None:
    """Raise InstallError when a file `install` edits is one funes will not rewrite (checked
    before `funes add` writes anything)."""
    settings, _ = load_json_object(settings_path(ctx))
    hooks_table(settings, settings_path(ctx))
    load_json_object(claude_json_path(ctx))


def install(ctx: Context) -> Changes:
    changes = Changes()
    path = settings_path(ctx)
    settings, original = load_json_object(path)
    before = _without_funes(path, ctx, _settings_without_funes(settings))
    hooks = hooks_table(settings, path)
    upsert_hook_groups(hooks, desired_handlers(ctx))
    _write_noted(path, dump_json(settings, original), before, ctx, changes)
    _register_mcp(ctx, changes)
    changes.warnings.extend(check(ctx).warnings)
    changes.notes.append(
        "Claude Code reads hooks at start: sessions already open keep running without them"
    )
    return changes


def _register_mcp(ctx: Context, changes: Changes) -> None:
    path = claude_json_path(ctx)
    data, original = load_json_object(path)
    before = _without_funes(path, ctx, _claude_json_without_funes(data))
    servers = data.setdefault("mcpServers", {})
    if not isinstance(servers, dict):
        raise InstallError(
            f'{path}: "mcpServers" is not an object; funes will not rewrite it', hint=FIX_HINT
        )
    current = servers.get(MCP_NAME)
    if current is not None and not is_our_mcp(current):
        changes.warnings.append(
            f'{path} already has an MCP server named "funes" that is not funes\' own: left as is'
        )
        return
    servers[MCP_NAME] = desired_mcp(ctx)
    _write_noted(path, dump_json(data, original), before, ctx, changes)


def _write_noted(path: Path, text: str, before: str, ctx: Context, changes: Changes) -> None:
    """Write `text` to the JSON config at `path`, noting the edit from `before` (the file
    without funes' entries) so `remove` can take out exactly funes' lines."""
    if text != raw_text(path):
        note_edit(path, ctx.backups, before, text)
    write_if_changed(path, text, ctx, changes)


def _without_funes(path: Path, ctx: Context, removed: dict[str, Any]) -> str:
    """The JSON config at `path` as the user had it without funes (`removed`: its document
    with funes' entries taken out)."""
    return json_without_funes(path, ctx.backups, raw_text(path), removed)


def _settings_without_funes(settings: dict[str, Any]) -> dict[str, Any]:
    """settings.json's document without funes' hook handlers (and the events and `hooks`
    object that held nothing else)."""
    out = copy.deepcopy(settings)
    hooks = out.get("hooks")
    if isinstance(hooks, dict):
        upsert_hook_groups(hooks, {})
        if not hooks:
            del out["hooks"]
    return out


def _claude_json_without_funes(data: dict[str, Any]) -> dict[str, Any]:
    """.claude.json's document without funes' MCP server (and an `mcpServers` left empty)."""
    out = copy.deepcopy(data)
    servers = out.get("mcpServers")
    if isinstance(servers, dict) and is_our_mcp(servers.get(MCP_NAME)):
        del servers[MCP_NAME]
        if not servers:
            del out["mcpServers"]
    return out


def uninstall(ctx: Context) -> Changes:
    changes = Changes()
    path = settings_path(ctx)
    settings, original = load_json_object(path)
    if isinstance(settings.get("hooks"), dict) and original is not None:
        settings = _settings_without_funes(settings)
        if not remove_if_created(path, ctx, changes, empty=not settings):
            write_if_changed(path, _without_funes(path, ctx, settings), ctx, changes)
        drop_note(path, ctx.backups)
    mcp_path = claude_json_path(ctx)
    data, original = load_json_object(mcp_path)
    servers = data.get("mcpServers")
    if isinstance(servers, dict) and is_our_mcp(servers.get(MCP_NAME)):
        data = _claude_json_without_funes(data)
        if not remove_if_created(mcp_path, ctx, changes, empty=not data):
            write_if_changed(mcp_path, _without_funes(mcp_path, ctx, data), ctx, changes)
        drop_note(mcp_path, ctx.backups)
    return changes


def check(ctx: Context) -> Check:
    result = Check()
    # each file on its own: a broken ~/.claude.json must not hide the hooks of settings.json
    try:
        data, _ = load_json_object(claude_json_path(ctx))
    except InstallError as exc:
        result.warnings.append(exc.message)
        result.unreadable = True
    else:
        servers = data.get("mcpServers")
        result.mcp = isinstance(servers, dict) and is_our_mcp(servers.get(MCP_NAME))
    try:
        settings, _ = load_json_object(settings_path(ctx))
    except InstallError as exc:
        result.warnings.append(exc.message)
        result.unreadable = True
        return result
    hooks = settings.get("hooks")
    result.hooks = all(has_our_hook(hooks, event) for event in EVENTS)
    result.warnings.extend(_blockers(settings, ctx))
    result.stale = stale_hook_warnings(our_hook_commands(hooks), ctx, "claude")
    result.warnings.extend(result.stale)
    return result


def _blockers(settings: dict[str, Any], ctx: Context) -> list[str]:
    """Settings that would stop the hooks, or delete transcripts before they are indexed."""
    out: list[str] = []
    layers: list[tuple[str, dict[str, Any]]] = [("settings.json", settings)]
    for path in (ctx.agent_home / "settings.local.json", *MANAGED_SETTINGS):
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(data, dict):
            layers.append((str(path), data))
    for where, data in layers:
        if data.get("disableAllHooks") is True:
            out.append(
                f"disableAllHooks is true in {where}: Claude Code runs no hooks, so turns are only "
                "indexed by `funes index` or `funes watch`"
            )
        if data.get("allowManagedHooksOnly") is True:
            out.append(
                f"allowManagedHooksOnly is true in {where}: Claude Code ignores funes' user hooks; "
                "use `funes watch` or ask your administrator to add them"
            )
    days = settings.get("cleanupPeriodDays")
    if (
        isinstance(days, (int, float))
        and not isinstance(days, bool)
        and days < DEFAULT_RETENTION_DAYS
    ):
        what = "keeps no transcripts" if days <= 0 else f"deletes transcripts after {days:g} days"
        out.append(
            f"cleanupPeriodDays={days:g}: Claude Code {what}; a turn whose hook did not fire is lost "
            "unless `funes index` runs before then (raise cleanupPeriodDays in settings.json)"
        )
    return out
