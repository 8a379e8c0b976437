"""Codex CLI: `notify` and `[mcp_servers.funes]` in config.toml, Stop/SessionStart in hooks.json.

Two turn-completed signals, because each covers the other's gap:

* `notify` (config.toml) runs after every turn with no trust step, and gets the thread id as a
  JSON argument (no transcript path; the worker finds the rollout by thread id). Codex runs one
  notify program only: a user's own `notify` is never replaced (funes warns instead).
* `hooks.json` Stop gives the transcript path, but Codex skips hooks.json hooks until the user
  trusts them once in the TUI (`/hooks`). Our groups are appended after the user's, so the
  positional trust keys of the user's hooks never move.

config.toml is edited with tomlkit, which keeps comments and formatting byte-for-byte; its line
endings are kept too (installers.line_endings: `\r\n` stays `\r\n`). `add`
notes what it changed (installers.undo), so `remove` takes out exactly funes' lines, the blank
line before its table included, even after Codex wrote to the file (it records the trust of
funes' hooks there).
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import tomlkit
from tomlkit.exceptions import TOMLKitError

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
    is_ours,
    load_json_object,
    our_hook_commands,
    pruned,
    read_text,
    remove_if_created,
    restored_json,
    restored_text,
    stale_hook_warnings,
    upsert_hook_groups,
    write_if_changed,
)
from .line_endings import keep_line_endings
from .undo import drop_note, note_edit, raw_text, undone

AGENT = "codex"
HOOK_EVENTS = {"Stop": False, "SessionStart": True}  # event → sweep
NOTIFY_EVENT = "agent-turn-complete"
TIMEOUT_S = 10


def config_path(ctx: Context) -> Path:
    return ctx.agent_home / "config.toml"


def hooks_path(ctx: Context) -> Path:
    return ctx.agent_home / "hooks.json"


def _load_toml(path: Path) -> tomlkit.TOMLDocument:
    text = read_text(path)
    try:
        return tomlkit.parse(text or "")
    except TOMLKitError as exc:
        raise InstallError(
            f"{path} is not valid TOML ({exc}); funes will not rewrite it", hint=FIX_HINT
        ) from None


def desired_handlers(ctx: Context) -> dict[str, dict[str, Any]]:
    return {
        event: {
            "type": "command",
            "command": ctx.hook_command(AGENT, event, sweep=sweep),
            "timeout": TIMEOUT_S,
        }
        for event, sweep in HOOK_EVENTS.items()
    }


def _mcp_table(ctx: Context) -> Any:
    table = tomlkit.table()
    table["command"] = ctx.python
    table["args"] = ctx.mcp_args()
    if ctx.mcp_env():
        env = tomlkit.inline_table()
        env.update(ctx.mcp_env())
        table["env"] = env
    return table


def preflight(ctx: Context) -> None:
    """Raise InstallError when a file `install` edits is one funes will not rewrite (checked
    before `funes add` writes anything)."""
    data, _ = load_json_object(hooks_path(ctx))
    hooks_table(data, hooks_path(ctx))
    _load_toml(config_path(ctx))


def install(ctx: Context) -> Changes:
    changes = Changes()
    path = hooks_path(ctx)
    data, original = load_json_object(path)
    hooks = hooks_table(data, path)
    upsert_hook_groups(hooks, desired_handlers(ctx))
    hooks_changed = write_if_changed(path, dump_json(data, original), ctx, changes)

    cfg_path = config_path(ctx)
    doc = _load_toml(cfg_path)
    text_before = raw_text(cfg_path)
    notify = doc.get("notify")
    own_notify = notify is None or is_ours(list(notify) if isinstance(notify, list) else notify)
    if own_notify:
        argv = ctx.hook_argv(AGENT, NOTIFY_EVENT)
        if notify is None or list(notify) != argv:
            doc["notify"] = argv
    else:
        changes.warnings.append(
            f"{cfg_path} already runs another notify program ({_short(notify)}); Codex allows only one, so "
            "funes left it: per-turn indexing now depends on the hooks.json hooks being trusted (/hooks)"
        )
    servers = doc.get("mcp_servers")
    if servers is None:
        servers = tomlkit.table(is_super_table=True)
        doc["mcp_servers"] = servers
    current = servers.get(MCP_NAME)
    if current is not None and not is_our_mcp(
        current.unwrap() if hasattr(current, "unwrap") else current
    ):
        changes.warnings.append(
            f"{cfg_path} already has [mcp_servers.funes] that is not funes' own: left as is"
        )
    elif current is None or current.unwrap() != _mcp_table(ctx).unwrap():
        servers[MCP_NAME] = _mcp_table(ctx)
    text = keep_line_endings(text_before, tomlkit.dumps(doc))  # `doc` was read with `\r\n` as `\n`
    if text != text_before:
        note_edit(cfg_path, ctx.backups, _without_funes(cfg_path, text_before, ctx), text)
    write_if_changed(cfg_path, text, ctx, changes)

    if hooks_changed or not _trusted(doc, path):
        changes.warnings.append(
            "Codex skips hooks.json hooks until you trust them: start `codex`, open /hooks and trust "
            "funes' Stop and SessionStart hooks"
            + (" (notify keeps indexing every turn meanwhile)" if own_notify else "")
        )
    changes.warnings.extend(_feature_warnings(doc))
    return changes


def uninstall(ctx: Context) -> Changes:
    changes = Changes()
    path = hooks_path(ctx)
    data, original = load_json_object(path)
    hooks = data.get("hooks")
    if isinstance(hooks, dict) and original is not None:
        upsert_hook_groups(hooks, {})
        if not remove_if_created(path, ctx, changes, empty=data == {"hooks": {}}):
            write_if_changed(path, restored_json(path, data, original, ctx), ctx, changes)
    cfg_path = config_path(ctx)
    if cfg_path.exists():
        _load_toml(cfg_path)  # refuses a file that is not TOML
        current = raw_text(cfg_path)
        text = _without_funes(cfg_path, current, ctx)
        if not remove_if_created(cfg_path, ctx, changes, empty=not text.strip()):
            write_if_changed(cfg_path, text, ctx, changes)
        drop_note(cfg_path, ctx.backups)
    return changes


def _removed(text: str) -> str:
    """config.toml `text` without funes' notify and MCP server, as tomlkit removes them."""
    doc = tomlkit.parse(text)
    notify = doc.get("notify")
    if notify is not None and is_ours(list(notify) if isinstance(notify, list) else notify):
        del doc["notify"]
    servers = doc.get("mcp_servers")
    if servers is not None and MCP_NAME in servers and is_our_mcp(servers[MCP_NAME].unwrap()):
        del servers[MCP_NAME]
        if not servers:
            del doc["mcp_servers"]
    out = tomlkit.dumps(doc)
    if "mcp_servers" not in doc and out.endswith("\n\n"):
        out = out.rstrip("\n") + "\n"  # the blank line tomlkit put before the table it added
    return out


def _without_funes(cfg_path: Path, text: str, ctx: Context) -> str:
    """config.toml `text` as the user had it without funes: `add`'s noted edit undone line for
    line when that means the same as `_removed` (whatever Codex or the user changed since is
    kept), else the bytes from before funes' first edit when they mean the same, else
    `_removed`'s text. An empty table the user had (`[mcp_servers]`) counts as kept."""
    removed = _removed(text)
    if tomllib.loads(removed) == tomllib.loads(text):
        return text  # nothing of funes' in it

    def parse(toml: str) -> Any:
        return pruned(tomllib.loads(toml))

    undone_text = undone(cfg_path, ctx.backups, text, removed, parse)
    return undone_text if undone_text is not None else restored_text(cfg_path, removed, ctx, parse)


def check(ctx: Context) -> Check:
    result = Check()
    try:
        data, _ = load_json_object(hooks_path(ctx))
        doc = _load_toml(config_path(ctx))
    except InstallError as exc:
        result.warnings.append(exc.message)
        result.unreadable = True
        return result
    notify = doc.get("notify")
    notify_ours = notify is not None and is_ours(
        list(notify) if isinstance(notify, list) else notify
    )
    stop_hook = has_our_hook(data.get("hooks"), "Stop")
    result.hooks = notify_ours or stop_hook
    servers = doc.get("mcp_servers")
    result.mcp = (
        servers is not None and MCP_NAME in servers and is_our_mcp(servers[MCP_NAME].unwrap())
    )
    if stop_hook and not _trusted(doc, hooks_path(ctx)):
        result.warnings.append(
            "funes' hooks.json hooks are not trusted yet: Codex skips them until you trust "
            "them in /hooks" + (" (notify still indexes every turn)" if notify_ours else "")
        )
    result.warnings.extend(_feature_warnings(doc))
    commands = our_hook_commands(data.get("hooks"))
    if notify_ours:
        commands.insert(0, list(notify) if isinstance(notify, list) else notify)
    result.stale = stale_hook_warnings(commands, ctx, "codex")
    result.warnings.extend(result.stale)
    return result


def _trusted(doc: tomlkit.TOMLDocument, hooks_file: Path) -> bool:
    """Whether Codex recorded a trust hash for a Stop hook of `hooks_file` (it cannot be verified here)."""
    hooks = doc.get("hooks")
    state = hooks.get("state") if isinstance(hooks, dict) else None
    if not isinstance(state, dict):
        return False
    prefix = f"{hooks_file}:"
    return any(
        str(key).startswith(prefix)
        and "stop" in str(key).lower()
        and isinstance(value, dict)
        and value.get("trusted_hash")
        and value.get("enabled", True) is not False
        for key, value in state.items()
    )


def _feature_warnings(doc: tomlkit.TOMLDocument) -> list[str]:
    features = doc.get("features")
    if isinstance(features, dict) and (
        features.get("hooks") is False or features.get("codex_hooks") is False
    ):
        return ["[features] turns Codex hooks off: only notify will index turns"]
    return []


def _short(value: object) -> str:
    text = str(list(value) if isinstance(value, list) else value)
    return text if len(text) <= 80 else text[:77] + "..."
