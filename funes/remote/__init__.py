"""Sharing: export a memory to Lance and sync it with a Hugging Face dataset (or a directory).

`push` publishes the chunks a remote lacks (one commit per push, compare-and-swap on the
parent commit, secrets gate, receipts); `open_cached` materializes a remote commit into a
local SQLite memory that the ordinary read path queries; `forget_on_remote` deletes forgotten
sessions' rows in one commit. `HubRemote` and `DirRemote`
implement the `Remote` protocol.
"""

from __future__ import annotations

from funes.remote.base import Remote, RemoteState, Snapshot
from funes.remote.directory import DirRemote, is_export_dir
from funes.remote.forget import RemoteForgetReport, forget_on_remote
from funes.remote.hub import HubRemote
from funes.remote.push import PushOptions, PushReport, push, receipt_path
from funes.remote.read import CachedMemory, forget_check, open_cached

__all__ = [
    "CachedMemory",
    "DirRemote",
    "HubRemote",
    "PushOptions",
    "PushReport",
    "Remote",
    "RemoteForgetReport",
    "RemoteState",
    "Snapshot",
    "forget_check",
    "forget_on_remote",
    "is_export_dir",
    "open_cached",
    "push",
    "receipt_path",
]
