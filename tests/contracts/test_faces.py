"""Each package's face (`__init__.py`) only hands names on, its public names are pinned here,
and no module of one package reaches into another package's modules.

A public name added or removed shows up as a failure of the pin: update PUBLIC in the same
change, so the surface each layer offers the others changes on purpose. The import-linter
contracts (pyproject.toml) keep the layers' direction; this test keeps their doors.
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

FUNES = Path(__file__).resolve().parents[2] / "funes"
PACKAGES = sorted(p.name for p in FUNES.iterdir() if (p / "__init__.py").is_file())

PUBLIC: dict[str, set[str]] = {
    "cli": {"cli", "end_on_sigterm", "main", "pass_runtime"},
    "commands": {
        "AgentHookStatus", "AskAgent", "AskMiss", "AskRequest", "BindingStatus", "CurateOutcome",
        "CurationStatus", "DEFAULT_TIMEOUT_S", "ForgetOutcome", "ForgetPlan", "ForgetRequest",
        "GetOutcome", "IndexOutcome", "IndexRequest", "PushRequest", "PushStatus", "RecallOutcome",
        "RecallRequest", "Scope", "ScrubOutcome", "SessionCard", "SessionsOutcome",
        "SessionsRequest", "SourceStatus", "SpoolStatus", "StatusReport", "WatchReport",
        "add_target", "check_shared", "create_shared", "curate_decide", "curate_review",
        "curation_status", "has_hub_token", "local_chunks", "no_support_line", "personal_memory",
        "prefetch_query", "plan_ask", "preflight_agent", "refuse_missing_agent", "plan_forget", "retry_failed", "run_add", "run_ask", "run_drain", "run_forget",
        "run_get", "run_index", "run_push", "run_recall", "run_remove", "run_scrub", "run_sessions",
        "run_spool_status",
        "run_status", "run_watch", "sources_for",
    },
    "inference": {
        "BGE_SMALL", "DEFAULT_EMBEDDER", "DEFAULT_RERANKER", "EMBEDDERS", "MINILM_L6_INT8_PKG",
        "MS_MARCO_MINILM_L6", "ModelChoice", "RERANKERS",
        "Embedder", "LazyEmbedder", "LoadCheck", "ModelFile", "ModelSpec", "Pooling", "QueryModel", "Reranker",
        "available_locally", "check_load", "embedder_for_model_id", "embedder_name", "embedder_spec",
        "load_embedder",
        "load_reranker", "query_vector", "ready_query_model", "reranker_spec", "use_model_path",
        "warm_up",
    },
    "ingest": {
        "OWED_BUDGET_S", "TIERS", "TOP_TIER", "AgentBacklog", "Claimed", "DrainPlan",
        "DrainReport", "IndexJob", "IndexReport", "OwedChunks", "Progress", "ReembedReport", "ScrubReport", "Spool", "SpoolEntry", "UnitFailure",
        "Watcher", "WatchRoot", "agent_of", "apply_plan", "backfill_vectors", "chunks_owed",
        "claim_batch", "count_owed", "entry_sources", "fail", "group_by_memory", "index", "index_unit",
        "order_units", "owed", "plan_entries", "process", "reembed", "scrub", "settle",
        "worker_active", "worker_lock",
    },
    "mcp_server": {"TOOLS", "ToolReply", "Tools", "error_text", "serve", "tool_list"},
    "memory": {
        "Binding", "Curation", "MemoryKind", "MemoryRef", "MemoryState", "OpenMemory", "Probe",
        "PublishQueue", "PublishState", "RERANKER_RETRY_S", "Runtime", "all_curations",
        "as_push_target", "bind", "bindings_path", "bound_agents", "bound_ref", "curation_path", "foreign_owner",
        "load_bindings", "load_curation", "open_for_read", "open_for_write", "open_memory",
        "parse_memory", "probe", "remote_for", "save_curation", "state",
    },
    "redact": {
        "MARKER_PREFIX", "RULES_VERSION", "DetectSecretsScanner", "Finding", "GateResult",
        "GateRow", "ResidualScanner", "RuleScanner", "Scanner", "UnionScanner", "VendorScanner",
        "default_scanner", "gate", "gate_scanner", "merge", "redact", "rewrite_block",
    },
    "remote": {
        "CachedMemory", "DirRemote", "HubRemote", "PushOptions", "PushReport", "Remote",
        "RemoteForgetReport", "RemoteState", "Snapshot", "forget_check", "forget_on_remote",
        "is_export_dir", "open_cached", "push",
        "receipt_path",
    },
    "render": {
        "agent", "human", "json_format",
    },
    "retrieval": {
        "Hit", "MemoryUnion", "RecallResult", "Searchable", "SessionPage", "TurnView", "get_turns",
        "list_sessions", "recall",
    },
    "store": {
        "BlockRows", "CHUNK_COLUMNS", "DEFAULT_VECTOR_ELEMENT", "Filters", "ForgetRule", "Held",
        "NO_FILTERS", "Outbox", "OutboxCounts", "ProjectScope", "ReceiptStatus", "ReviewSummary", "SessionSummary",
        "Store", "StoreState", "StoreStats", "StoredChunk", "UnitRecord", "fts_query", "idf",
        "opening_prompts", "project_matches", "query_terms", "receipt_forget", "receipt_holds", "receipt_meta",
        "receipt_remote", "receipt_status", "seal", "session_summaries", "term_presence",
        "versions",
    },
    "traces": {
        "AGENTS", "Agent", "AgentHomes", "Block", "BlockType", "FilesSource", "Harness",
        "MAX_BLOCK_CHARS",
        "MAX_LABEL",
        "ParquetSource", "ReadStats", "Role", "STALE_TAIL_S", "ToolStatus", "TraceSource", "Turn",
        "Unit",
        "checkout_identities", "clean_text", "discover", "installable", "iso_utc", "names_session",
        "normalize_ts", "one_line", "parse_ts", "printable", "quote_passage", "repo_identity", "short_id",
        "sources_for_path", "strip_terminal_controls", "workdir_facet",
    },
    "wiring": {
        "AgentChanges", "AgentCheck", "agent_harness", "call", "context", "install_hook_script",
        "installer", "launcher", "remove_hook_script", "run_checks", "settings_env",
    },
}  # fmt: skip


def _face(package: str) -> ast.Module:
    return ast.parse((FUNES / package / "__init__.py").read_text())


def _all(package: str) -> set[str]:
    for node in _face(package).body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets
        ):
            return set(ast.literal_eval(node.value))
    return set()


def test_every_package_is_pinned() -> None:
    assert set(PACKAGES) == set(PUBLIC)


def _type_checking_imports(node: ast.stmt) -> bool:
    """`if TYPE_CHECKING:` holding imports only (a face whose names load on first use)."""
    return (
        isinstance(node, ast.If)
        and isinstance(node.test, ast.Name)
        and node.test.id == "TYPE_CHECKING"
        and not node.orelse
        and all(isinstance(n, ast.Import | ast.ImportFrom) for n in node.body)
    )


def _lazy_face_call(node: ast.stmt) -> bool:
    """`lazy_face(__name__, EXPORTS)`: the face's names load on first use (funes.faces)."""
    return (
        isinstance(node, ast.Expr)
        and isinstance(node.value, ast.Call)
        and isinstance(node.value.func, ast.Name)
        and node.value.func.id == "lazy_face"
        and [ast.unparse(a) for a in node.value.args] == ["__name__", "EXPORTS"]
        and not node.value.keywords
    )


@pytest.mark.parametrize("package", PACKAGES)
def test_a_face_only_hands_names_on(package: str) -> None:
    for node in _face(package).body:
        docstring = isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
        names = isinstance(node, ast.Assign) and [getattr(t, "id", None) for t in node.targets] == [
            "__all__"
        ]
        imports = isinstance(node, ast.Import | ast.ImportFrom) or _type_checking_imports(node)
        assert docstring or names or imports or _lazy_face_call(node), (
            f"funes/{package}/__init__.py holds {type(node).__name__} at line {node.lineno}: "
            "move it into a module named for its job"
        )


@pytest.mark.parametrize("package", PACKAGES)
def test_the_public_names_of_each_package_are_pinned(package: str) -> None:
    assert _all(package) == PUBLIC[package]
    face = importlib.import_module(f"funes.{package}")
    for name in PUBLIC[package]:
        assert hasattr(face, name) or importlib.util.find_spec(f"funes.{package}.{name}"), name


def _own_package(path: Path) -> str | None:
    parts = path.relative_to(FUNES).parts
    return parts[0] if len(parts) > 1 else None


def _deep_imports(path: Path) -> list[str]:
    own = _own_package(path)
    found: list[str] = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            targets = [(alias.name, None) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            targets = [(node.module, alias.name) for alias in node.names]
        else:
            continue
        for module, name in targets:
            parts = module.split(".")
            if parts[0] != "funes" or len(parts) < 2 or parts[1] not in PUBLIC:
                continue
            if parts[1] == own:
                continue
            if len(parts) > 2:
                found.append(f"{path.relative_to(FUNES.parent)}:{node.lineno} imports {module}")
            elif name is not None and name not in PUBLIC[parts[1]]:
                found.append(
                    f"{path.relative_to(FUNES.parent)}:{node.lineno} imports {name} from "
                    f"funes.{parts[1]}, which does not offer it"
                )
    return found


def test_no_module_reaches_into_another_packages_modules() -> None:
    found = [hit for path in sorted(FUNES.rglob("*.py")) for hit in _deep_imports(path)]
    assert found == []
