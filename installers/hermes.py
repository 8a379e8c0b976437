"""Hermes: shell hooks and `mcp_servers.funes` in config.yaml, plus the consent allowlist.

Hooks: `post_llm_call` (a turn completed), `on_session_finalize` (the session ended) and
`on_session_start` with `--sweep` (catch-up). Hermes splits a hook command into argv (no shell)
and runs it only once the exact `(event, command)` pair is approved in
`$HERMES_HOME/shell-hooks-allowlist.json`; non-interactive runs silently skip unapproved hooks,
so funes writes the approvals itself (the same entry shape Hermes writes).

config.yaml is edited with ruamel.yaml in round-trip mode, keeping the user's comments, quoting
and key order; the indentation is the one that reproduces the file as it was. A comment ruamel
hangs on a node funes deletes or replaces (the line after a user's value, once funes' entries
went in after it) is moved to where it printed (hermes_yaml's `drop`, `replace`). `add` notes how
`hooks`, the events it hooks and `mcp_servers` looked before its entries went in (a key there
with an empty list or mapping, or with no value: `note_keys_before`), and `remove` gives a key
it empties back as it was, deleting only the keys `add` created; when the result is the
document from before `add`'s first edit, `remove` writes that file's bytes back, and a file
with nothing of funes' in it is left as it is. What ruamel drops around the document (blank
lines first, comments before `---` and the `---`, all from `...` on, a byte-order mark) is kept
as text (hermes_yaml's `_split`): a file of nothing else (empty, comments only) is an empty mapping. The
file's line endings (`\r\n`) are kept.
"""

from __future__ import annotations

import datetime as dt
import functools
import json
import os
from pathlib import Path
from typing import Any

from ruamel.yaml.comments import CommentedBase, CommentedMap, CommentedSeq

from ._common import (
    FIX_HINT,
    MCP_NAME,
    Changes,
    Check,
    Context,
    InstallError,
    is_our_mcp,
    is_ours,
    keys_before,
    load_json_object,
    note_keys_before,
    remove_if_created,
    restored_text,
    stale_hook_warnings,
    write_if_changed,
)
from .hermes_yaml import (
    KEPT,
    NULL,
    Where,
    drop,
    dump,
    give_back,
    keeps_comments,
    load,
    normal,
    replace,
)

AGENT = "hermes"
EVENTS = {
    "post_llm_call": False,
    "on_session_finalize": False,
    "on_session_start": True,
}  # event → sweep
TIMEOUT_S = 30
ALLOWLIST = "shell-hooks-allowlist.json"


def config_path(ctx: Context) -> Path:
    return ctx.agent_home / "config.yaml"


def allowlist_path(ctx: Context) -> Path:
    return ctx.agent_home / ALLOWLIST


def desired_commands(ctx: Context) -> dict[str, str]:
    return {event: ctx.hook_command(AGENT, event, sweep=sweep) for event, sweep in EVENTS.items()}


def _holds_ours(entries: Any) -> bool:
    return isinstance(entries, list) and any(
        isinstance(e, dict) and is_ours(e.get("command")) for e in entries
    )


def _was(value: Any) -> str:
    return NULL if value is None else KEPT


def _before(data: CommentedMap, noted: dict[str, Any]) -> dict[str, Any]:
    """How `hooks`, the events funes hooks and `mcp_servers` looked before funes' entries went
    in: a key holding funes' entry already keeps what was `noted` when they did; any other
    key is noted as it is now (a key funes will create is not noted)."""
    out: dict[str, Any] = {}
    old_events = _events(noted)
    hooks = data.get("hooks")
    ours_in_hooks = False
    if isinstance(hooks, dict):
        events = {}
        for event in EVENTS:
            if event in hooks and not _holds_ours(hooks[event]):
                events[event] = _was(hooks[event])
            elif event in hooks and event in old_events:
                events[event] = old_events[event]
        if events:
            out["events"] = events
        ours_in_hooks = any(_holds_ours(v) for k, v in hooks.items() if k != "outbound")
    if "hooks" in data:
        was = noted.get("hooks") if ours_in_hooks else _was(hooks)
        if was is not None:
            out["hooks"] = was
    if "mcp_servers" in data:
        servers = data["mcp_servers"]
        ours = isinstance(servers, dict) and is_our_mcp(_plain(servers.get(MCP_NAME)))
        was = noted.get("mcp_servers") if ours else _was(servers)
        if was is not None:
            out["mcp_servers"] = was
    return out


def _events(note: dict[str, Any]) -> dict[str, Any]:
    events = note.get("events")
    return events if isinstance(events, dict) else {}


def _set_hooks(
    data: CommentedMap, wanted: dict[str, str], path: Path, before: dict[str, Any]
) -> None:
    """Make `data["hooks"]` hold exactly our `wanted` entries, in place, leaving the user's alone
    (a key funes empties goes back to what `before` says it was). Raises InstallError when
    `wanted` has to go in a `hooks` that is not a mapping (with nothing wanted, there is nothing
    of funes' in it)."""
    hooks = data.get("hooks")
    if not wanted and not isinstance(hooks, dict):
        return
    if hooks is None:
        hooks = data["hooks"] = CommentedMap()
    if not isinstance(hooks, dict):
        raise InstallError(
            f"{path}: `hooks` is not a mapping; funes will not rewrite it", hint=FIX_HINT
        )
    events_before = _events(before)
    emptied = False
    for event in list(hooks):
        entries = hooks[event]
        if entries is None and event in wanted:  # the event's key with no value: ours goes in
            # merged (the base's key with no value): remove could not give back the absent key
            _unshared(hooks, f"hooks.{event}", path, (data, "hooks"), (hooks, event))
            entries = hooks[event] = CommentedSeq()
        if event in wanted and not isinstance(entries, list):
            raise InstallError(
                f"{path}: `hooks.{event}` is not a list; funes will not rewrite it", hint=FIX_HINT
            )
        if event == "outbound" or not isinstance(entries, list):
            continue
        where: Where = [(data, "hooks"), (hooks, event)]
        placed = removed = False
        for i in reversed(range(len(entries))):
            entry = entries[i]
            if isinstance(entry, dict) and is_ours(entry.get("command")):
                if event in wanted and not placed and entry.get("command") == wanted[event]:
                    placed = True
                    continue
                drop([*where, (entries, i)])
                removed = True
        if event in wanted and not placed:
            _unshared(entries, f"hooks.{event}", path, (data, "hooks"), (hooks, event))
            entries.append(CommentedMap([("command", wanted[event]), ("timeout", TIMEOUT_S)]))
        if removed and not entries:
            give_back(where, events_before.get(event))
            emptied = True
    for event, command in wanted.items():
        if event not in hooks:
            _unshared(hooks, "hooks", path, (data, "hooks"))
            hooks[event] = [CommentedMap([("command", command), ("timeout", TIMEOUT_S)])]
    if emptied and not hooks:
        give_back([(data, "hooks")], before.get("hooks"))


def _unshared(node: Any, name: str, path: Path, *via: tuple[Any, Any]) -> None:
    """Raise InstallError when `node`, which funes is about to put an entry in, is shared: it
    is anchored, or one of the (mapping, key) steps `via` that lead to it from the document
    goes through a merge key (`<<: *base`), so the value is the merged mapping's own. Either
    way the entry would show wherever the anchor is used or the base merged (another event's
    hooks, another profile's, say)."""
    for mapping, key in via:
        if isinstance(mapping, CommentedMap) and key in mapping and key not in mapping._ok:
            leaf = f"`{name}`" if name.endswith(str(key)) else f"`{name}` (through `{key}`)"
            raise InstallError(
                f"{path}: {leaf} comes from a merge key (`<<`): it belongs to the mapping "
                "merged there, and funes' entry in it would show in every mapping that merges "
                "it; funes will not rewrite it",
                hint=f"write `{key}:` out as a key of its own beside the `<<` (its value "
                "copied, not merged), then run the command again",
            )
    anchor = node.anchor.value if isinstance(node, CommentedBase) else None
    if anchor is not None:
        raise InstallError(
            f"{path}: `{name}` is anchored (`&{anchor}`), and funes' entry in it would show "
            "wherever that anchor is used; funes will not rewrite it",
            hint=f"write its value out where `*{anchor}` stands (or drop the `&{anchor}`), then "
            "run the command again",
        )


def _mcp_entry(ctx: Context) -> CommentedMap:
    entry = CommentedMap([("command", ctx.python), ("args", ctx.mcp_args())])
    if ctx.mcp_env():
        entry["env"] = ctx.mcp_env()
    return entry


def preflight(ctx: Context) -> None:
    """Raise InstallError when a file `install` edits is one funes will not rewrite (checked
    before `funes add` writes anything)."""
    _with_entries(ctx, Changes())
    load_json_object(allowlist_path(ctx))


def install(ctx: Context) -> Changes:
    changes = Changes()
    path = config_path(ctx)
    text, before = _with_entries(ctx, changes)
    note_keys_before(path, ctx.backups, before)
    if text is not None:
        write_if_changed(path, text, ctx, changes)
    _set_approvals(ctx, desired_commands(ctx), changes)
    changes.notes.append("Hermes reads hooks when a session starts (restart a running gateway)")
    return changes


def _with_entries(ctx: Context, changes: Changes) -> tuple[str | None, dict[str, Any]]:
    """config.yaml's text with funes' hooks and MCP server in (None when they are in as they
    should be: the file stays as the user laid it out), and how the keys they go under looked
    before (`_before`); nothing is written. Warns in `changes` of an MCP server named funes that
    is not funes'. Raises InstallError for a file funes will not rewrite."""
    path = config_path(ctx)
    data, yaml, layout = load(path)
    untouched = dump(yaml, data, layout)
    wanted = desired_commands(ctx)
    before = _before(data, keys_before(path, ctx.backups))
    _set_hooks(data, wanted, path, before)
    servers = data.get("mcp_servers")
    if servers is None:
        servers = data["mcp_servers"] = CommentedMap()
    if not isinstance(servers, dict):
        raise InstallError(
            f"{path}: `mcp_servers` is not a mapping; funes will not rewrite it", hint=FIX_HINT
        )
    current = servers.get(MCP_NAME)
    if current is not None and not is_our_mcp(_plain(current)):
        changes.warnings.append(
            f"{path} already has an MCP server named funes that is not funes' own: left as is"
        )
    elif current is None:
        _unshared(servers, "mcp_servers", path, (data, "mcp_servers"))
        servers[MCP_NAME] = _mcp_entry(ctx)
    elif _plain(current) != _plain(_mcp_entry(ctx)):
        replace([(data, "mcp_servers"), (servers, MCP_NAME)], _mcp_entry(ctx))
    text = dump(yaml, data, layout)
    if text == untouched:
        return None, before
    keeps_comments(path, text, adding=True)
    return text, before


def _set_approvals(ctx: Context, wanted: dict[str, str], changes: Changes) -> None:
    path = allowlist_path(ctx)
    data, original = load_json_object(path)
    approvals = data.get("approvals")
    if not isinstance(approvals, list):
        approvals = []
    kept = [a for a in approvals if not (isinstance(a, dict) and is_ours(a.get("command")))]
    ours = {
        (a.get("event"), a.get("command")): a
        for a in approvals
        if isinstance(a, dict) and is_ours(a.get("command"))
    }
    now = dt.datetime.now(dt.UTC).isoformat().replace("+00:00", "Z")
    for event, command in wanted.items():
        kept.append(
            ours.get((event, command))
            or {
                "approved_at": now,
                "command": command,
                "event": event,
                "script_mtime_at_approval": _mtime_iso(ctx.hook),
            }
        )
    if kept == approvals and original is not None:
        return
    data["approvals"] = kept
    if (
        not wanted
        and not kept
        and remove_if_created(path, ctx, changes, empty=set(data) == {"approvals"})
    ):
        return
    # Hermes writes this file with sorted keys and a 2-space indent; so do we (remove gives back
    # the bytes from before funes' first edit when they hold the same document).
    text = json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    if not wanted:
        text = restored_text(path, text, ctx, json.loads)
    written = write_if_changed(path, text, ctx, changes)
    if written and wanted:
        events = ", ".join(sorted(wanted))
        changes.notes.append(
            f"pre-approved funes' hook commands ({events}) in {path}: Hermes skips shell hooks "
            "nobody approved (`funes remove hermes` takes the approvals out again)"
        )


def _mtime_iso(path: Path) -> str | None:
    try:
        mtime = os.path.getmtime(path)
    except OSError:
        return None
    return dt.datetime.fromtimestamp(mtime, tz=dt.UTC).isoformat().replace("+00:00", "Z")


def _plain(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def uninstall(ctx: Context) -> Changes:
    changes = Changes()
    path = config_path(ctx)
    if path.exists():
        data, yaml, layout = load(path)
        untouched = dump(yaml, data)
        before = keys_before(path, ctx.backups)
        _set_hooks(data, {}, path, before)
        servers = data.get("mcp_servers")
        if isinstance(servers, dict) and is_our_mcp(_plain(servers.get(MCP_NAME))):
            drop([(data, "mcp_servers"), (servers, MCP_NAME)])
            if not servers:
                give_back([(data, "mcp_servers")], before.get("mcp_servers"))
        empty = not dump(yaml, data, layout).strip()  # no key, and no comment either
        removed = remove_if_created(path, ctx, changes, empty=empty)
        if not removed and dump(yaml, data) != untouched:  # else nothing of funes' was in it:
            text = dump(yaml, data, layout)  # left as it is (ruamel may lay it out otherwise)
            text = restored_text(path, text, ctx, functools.partial(normal, yaml))
            keeps_comments(path, text)
            write_if_changed(path, text, ctx, changes)
    note_keys_before(path, ctx.backups, {})
    if allowlist_path(ctx).exists():
        _set_approvals(ctx, {}, changes)
    return changes


def check(ctx: Context) -> Check:
    result = Check()
    try:
        data, _, _ = load(config_path(ctx))
        allow, _ = load_json_object(allowlist_path(ctx))
    except InstallError as exc:
        result.warnings.append(exc.message)
        result.unreadable = True
        return result
    hooks = data.get("hooks") if isinstance(data.get("hooks"), dict) else {}
    configured = {
        event: entry.get("command")
        for event, entries in hooks.items()
        if isinstance(entries, list)
        for entry in entries
        if isinstance(entry, dict) and is_ours(entry.get("command"))
    }
    result.hooks = "post_llm_call" in configured
    servers = data.get("mcp_servers")
    result.mcp = isinstance(servers, dict) and is_our_mcp(_plain(servers.get(MCP_NAME)))
    approved = {
        (a.get("event"), a.get("command"))
        for a in allow.get("approvals") or []
        if isinstance(a, dict)
    }
    missing = [event for event, command in configured.items() if (event, command) not in approved]
    if missing:
        result.warnings.append(
            f"Hermes hooks not approved ({', '.join(missing)}): Hermes skips them outside a "
            "terminal; run `funes add hermes` again or `hermes hooks` to approve"
        )
    result.stale = stale_hook_warnings(list(configured.values()), ctx, "hermes")
    result.warnings.extend(result.stale)
    return result
