"""Where each name of the funes.commands face lives, loaded on first use (PEP 562).

`funes recall` then imports the modules recall runs, not every verb's: measured in a fresh
process on the 2-core bench machine under load (15 interleaved runs, a 210-chunk memory),
time to the first byte of `funes recall` p50 533 → 481 ms together with the pre-fused int8
graph (funes.inference.quantize step 3); `import funes.commands` alone went from ~110–170 ms to
nothing until a name is used.
"""

from __future__ import annotations

import importlib
import sys
from typing import Any

PACKAGE = "funes.commands"

# name on the face → (module of funes.commands, its name there)
EXPORTS: dict[str, tuple[str, str]] = {
    "add_target": ("add", "add_target"),
    "check_shared": ("add", "check_shared"),
    "create_shared": ("add", "create_shared"),
    "has_hub_token": ("add", "has_hub_token"),
    "local_chunks": ("add", "local_chunks"),
    "personal_memory": ("add", "personal_memory"),
    "preflight_agent": ("add", "preflight_agent"),
    "refuse_missing_agent": ("add", "refuse_missing_agent"),
    "run_add": ("add", "run_add"),
    "AskAgent": ("ask", "AskAgent"),
    "AskMiss": ("ask", "AskMiss"),
    "AskRequest": ("ask", "AskRequest"),
    "DEFAULT_TIMEOUT_S": ("ask", "DEFAULT_TIMEOUT_S"),
    "plan_ask": ("ask", "plan_ask"),
    "run_ask": ("ask", "run_ask"),
    "BindingStatus": ("bindings", "BindingStatus"),
    "CurateOutcome": ("curate", "CurateOutcome"),
    "CurationStatus": ("curate", "CurationStatus"),
    "SessionCard": ("curate", "SessionCard"),
    "curate_decide": ("curate", "decide"),
    "curate_review": ("curate", "review"),
    "curation_status": ("curate", "curation_status"),
    "ForgetOutcome": ("forget", "ForgetOutcome"),
    "ForgetPlan": ("forget", "ForgetPlan"),
    "ForgetRequest": ("forget", "ForgetRequest"),
    "plan_forget": ("forget", "plan_forget"),
    "run_forget": ("forget", "run_forget"),
    "GetOutcome": ("get", "GetOutcome"),
    "run_get": ("get", "run_get"),
    "IndexOutcome": ("index", "IndexOutcome"),
    "IndexRequest": ("index", "IndexRequest"),
    "run_index": ("index", "run_index"),
    "sources_for": ("index", "sources_for"),
    "PushRequest": ("push", "PushRequest"),
    "run_push": ("push", "run_push"),
    "RecallOutcome": ("recall", "RecallOutcome"),
    "RecallRequest": ("recall", "RecallRequest"),
    "no_support_line": ("recall", "no_support_line"),
    "run_recall": ("recall", "run_recall"),
    "run_remove": ("remove", "run_remove"),
    "Scope": ("scope", "Scope"),
    "ScrubOutcome": ("scrub", "ScrubOutcome"),
    "run_scrub": ("scrub", "run_scrub"),
    "SessionsOutcome": ("sessions", "SessionsOutcome"),
    "SessionsRequest": ("sessions", "SessionsRequest"),
    "run_sessions": ("sessions", "run_sessions"),
    "SpoolStatus": ("spool", "SpoolStatus"),
    "retry_failed": ("spool", "retry_failed"),
    "run_drain": ("spool", "run_drain"),
    "run_spool_status": ("spool", "run_spool_status"),
    "AgentHookStatus": ("status", "AgentHookStatus"),
    "PushStatus": ("status", "PushStatus"),
    "SourceStatus": ("status", "SourceStatus"),
    "StatusReport": ("status", "StatusReport"),
    "run_status": ("status", "run_status"),
    "WatchReport": ("watch", "WatchReport"),
    "run_watch": ("watch", "run_watch"),
}


def __getattr__(name: str) -> Any:
    """The face's `name`, its module imported now; kept on the face so later lookups are plain
    attribute reads. AttributeError for a name the face does not offer."""
    try:
        module, attribute = EXPORTS[name]
    except KeyError:
        raise AttributeError(f"module {PACKAGE!r} has no attribute {name!r}") from None
    value = getattr(importlib.import_module(f"{PACKAGE}.{module}"), attribute)
    setattr(sys.modules[PACKAGE], name, value)
    return value
