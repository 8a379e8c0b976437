"""What funes does when asked: one module per verb, shared by the CLI and the MCP server.

    index.py  recall.py  get.py  status.py  sessions.py  add.py  remove.py  push.py  scrub.py
    ask.py  forget.py  scope.py (what a read is restricted to)
    spool.py (drain, status, retry)  watch.py
    publish.py (publishing a bound memory at session boundaries)  bindings.py (status of them)
    reading.py (a bound memory read with this host's unpublished turns)
    curate.py (which sessions a project memory receives)

No click, no rich, no printing: commands take a Runtime (funes.memory) and return result
objects that funes.render turns into text. Other packages import from this face.

Each name loads its module on first use (PEP 562 `__getattr__`, from lazy.py): `funes recall`
imports the modules recall needs, not every verb's (issue 15: cold start). Type checkers read
the imports under TYPE_CHECKING; lazy.EXPORTS says where each name lives at run time.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from funes.commands.lazy import EXPORTS
from funes.faces import lazy_face

if TYPE_CHECKING:
    from funes.commands.add import (
        add_target,
        check_shared,
        create_shared,
        has_hub_token,
        local_chunks,
        personal_memory,
        preflight_agent,
        refuse_missing_agent,
        run_add,
    )
    from funes.commands.ask import (
        DEFAULT_TIMEOUT_S,
        AskAgent,
        AskMiss,
        AskRequest,
        plan_ask,
        run_ask,
    )
    from funes.commands.bindings import BindingStatus
    from funes.commands.curate import CurateOutcome, CurationStatus, SessionCard, curation_status
    from funes.commands.curate import decide as curate_decide
    from funes.commands.curate import review as curate_review
    from funes.commands.forget import (
        ForgetOutcome,
        ForgetPlan,
        ForgetRequest,
        plan_forget,
        run_forget,
    )
    from funes.commands.get import GetOutcome, run_get
    from funes.commands.index import IndexOutcome, IndexRequest, run_index, sources_for
    from funes.commands.push import PushRequest, run_push
    from funes.commands.recall import (
        RecallOutcome,
        RecallRequest,
        no_support_line,
        prefetch_query,
        run_recall,
    )
    from funes.commands.remove import run_remove
    from funes.commands.scope import Scope
    from funes.commands.scrub import ScrubOutcome, run_scrub
    from funes.commands.sessions import SessionsOutcome, SessionsRequest, run_sessions
    from funes.commands.spool import SpoolStatus, retry_failed, run_drain, run_spool_status
    from funes.commands.status import (
        AgentHookStatus,
        PushStatus,
        SourceStatus,
        StatusReport,
        run_status,
    )
    from funes.commands.watch import WatchReport, run_watch

__all__ = [
    "DEFAULT_TIMEOUT_S",
    "AgentHookStatus",
    "AskAgent",
    "AskMiss",
    "AskRequest",
    "BindingStatus",
    "CurateOutcome",
    "CurationStatus",
    "ForgetOutcome",
    "ForgetPlan",
    "ForgetRequest",
    "GetOutcome",
    "IndexOutcome",
    "IndexRequest",
    "PushRequest",
    "PushStatus",
    "RecallOutcome",
    "RecallRequest",
    "Scope",
    "ScrubOutcome",
    "SessionCard",
    "SessionsOutcome",
    "SessionsRequest",
    "SourceStatus",
    "SpoolStatus",
    "StatusReport",
    "WatchReport",
    "add_target",
    "check_shared",
    "create_shared",
    "curate_decide",
    "curate_review",
    "curation_status",
    "has_hub_token",
    "local_chunks",
    "personal_memory",
    "plan_ask",
    "plan_forget",
    "retry_failed",
    "preflight_agent",
    "refuse_missing_agent",
    "run_add",
    "run_ask",
    "run_drain",
    "run_forget",
    "run_get",
    "run_index",
    "run_push",
    "no_support_line",
    "prefetch_query",
    "run_recall",
    "run_remove",
    "run_scrub",
    "run_sessions",
    "run_spool_status",
    "run_status",
    "run_watch",
    "sources_for",
]

lazy_face(__name__, EXPORTS)  # each name imports its module when first read
