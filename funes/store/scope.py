"""Which chunks a read may see: `Filters` (facets, session, time range, project) as SQL.

Both candidate legs of recall apply the same filters *before* their top-k cut: BM25 joins
`chunks` and filters in the MATCH query; the vector leg filters inside the sqlite-vec KNN
(metadata columns `harness`, `block_type` — `block_type in (…)` for several types — and
`rowid in (…)` over `chunks` for the rest, which vec0 applies while it ranks), so a selective
filter still yields k candidates.

A project is matched on the session's working directory (`origins.cwd`):

    ProjectScope(path="/home/u/shop")   cwd is that directory or below it; a session without
                                        a cwd matches when its workdir facet is the path's
    ProjectScope(name="shop")           the last component of cwd is `shop` (a session
                                        without a cwd: its workdir facet ends in `-shop`)

`project_matches` is the same rule in Python, for chunks not stored yet (forget's rules).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from funes.traces import workdir_facet


@dataclass(frozen=True, slots=True)
class ProjectScope:
    """A project: a directory (`path`, absolute, no trailing slash) or a bare `name`."""

    path: str | None = None
    name: str | None = None

    def __post_init__(self) -> None:
        if (self.path is None) == (self.name is None):
            raise ValueError("a project is a path or a name")

    @property
    def label(self) -> str:
        return self.path if self.path is not None else str(self.name)


def like_literal(value: str) -> str:
    """`value` as a literal inside a LIKE pattern (escape character `\\`)."""
    return value.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def project_sql(project: ProjectScope, prefix: str = "p") -> tuple[str, dict[str, Any]]:
    """A condition over `origins` (unaliased columns) selecting the project's origins."""
    if project.path is not None:
        path = project.path.rstrip("/") or "/"
        under = like_literal(path if path != "/" else "") + "/%"
        return (
            f"(cwd = :{prefix}_path or cwd like :{prefix}_under escape '\\' "
            f"or (cwd is null and workdir = :{prefix}_facet))",
            {
                f"{prefix}_path": path,
                f"{prefix}_under": under,
                f"{prefix}_facet": workdir_facet(path),
            },
        )
    name = str(project.name).strip("/")
    return (
        f"(cwd = :{prefix}_name or cwd like :{prefix}_tail escape '\\' "
        f"or (cwd is null and (workdir = :{prefix}_facet or workdir like :{prefix}_ftail escape '\\')))",
        {
            f"{prefix}_name": name,
            f"{prefix}_tail": "%/" + like_literal(name),
            f"{prefix}_facet": workdir_facet(name),
            f"{prefix}_ftail": "%-" + like_literal(workdir_facet(name)),
        },
    )


def project_matches(project: ProjectScope, cwd: str | None, workdir: str) -> bool:
    """`project_sql`'s rule in Python (for chunks not stored yet)."""
    if project.path is not None:
        path = project.path.rstrip("/") or "/"
        if cwd:
            return cwd == path or cwd.startswith(path.rstrip("/") + "/")
        return workdir == workdir_facet(path)
    name = str(project.name).strip("/")
    if cwd:
        return cwd == name or cwd.endswith("/" + name)
    facet = workdir_facet(name)
    return workdir == facet or workdir.endswith("-" + facet)


@dataclass(frozen=True, slots=True)
class Filters:
    """Optional restrictions of a read (None = any). `block_types`: the block types a chunk
    may have, any of them (`("text", "thinking")`; empty = any). Times are ISO-8601 UTC
    strings as stored (`2026-04-02T10:11:12.345Z`): `since` inclusive, `until` exclusive; a
    chunk without a timestamp is outside every time range."""

    harness: str | None = None
    block_types: tuple[str, ...] = ()
    session: str | None = None  # a full session id
    since: str | None = None
    until: str | None = None
    project: ProjectScope | None = None

    @property
    def beyond_facets(self) -> bool:
        """Restricts more than the vec0 metadata columns can say."""
        return (
            self.session is not None
            or self.since is not None
            or self.until is not None
            or self.project is not None
        )

    def admits(self, chunk: Any) -> bool:
        """`sql`'s conditions in Python, over a chunk read already (a `StoredChunk`: its
        harness, block_type, session_id, ts, cwd and workdir), for reads that reach beyond
        the filtered legs (a candidate's prompt or answer turn)."""
        if self.harness is not None and chunk.harness != self.harness:
            return False
        if self.block_types and chunk.block_type not in self.block_types:
            return False
        if self.session is not None and chunk.session_id != self.session:
            return False
        if self.since is not None and not (chunk.ts and chunk.ts >= self.since):
            return False
        if self.until is not None and not (chunk.ts and chunk.ts < self.until):
            return False
        return self.project is None or project_matches(self.project, chunk.cwd, chunk.workdir)

    def sql(self, alias: str = "c", *, facets: bool = True) -> tuple[str, dict[str, Any]]:
        """` and …` conditions over `chunks` aliased `alias` (`facets`: harness and block type
        too), and their bound parameters; ("", {}) when nothing is restricted."""
        clauses: list[str] = []
        params: dict[str, Any] = {}
        if facets and self.harness is not None:
            clauses.append(f"{alias}.origin in (select id from origins where harness = :harness)")
            params["harness"] = self.harness
        if facets and self.block_types:
            clauses.append(f"{alias}.block_type in ({self._block_type_marks(params)})")
        if self.session is not None:
            clauses.append(
                f"{alias}.session = (select id from sessions where session_id = :session)"
            )
            params["session"] = self.session
        if self.since is not None:
            clauses.append(f"{alias}.ts >= :since and {alias}.ts != ''")
            params["since"] = self.since
        if self.until is not None:
            clauses.append(f"{alias}.ts < :until and {alias}.ts != ''")
            params["until"] = self.until
        if self.project is not None:
            condition, more = project_sql(self.project)
            clauses.append(f"{alias}.origin in (select id from origins where {condition})")
            params.update(more)
        return (" and " + " and ".join(clauses)) if clauses else "", params

    def vector_sql(self) -> tuple[str, dict[str, Any]]:
        """` and …` conditions for a KNN query on `chunks_vec`: the facets as metadata columns,
        the rest as `rowid in (…)` over `chunks`, both applied by vec0 before its top-k cut."""
        clauses: list[str] = []
        params: dict[str, Any] = {}
        if self.harness is not None:
            clauses.append("harness = :harness")
            params["harness"] = self.harness
        if self.block_types:
            clauses.append(f"block_type in ({self._block_type_marks(params)})")
        if self.beyond_facets:
            where, more = self.sql("c", facets=False)
            clauses.append(f"rowid in (select c.rowid from chunks c where 1{where})")
            params.update(more)
        return (" and " + " and ".join(clauses)) if clauses else "", params

    def _block_type_marks(self, params: dict[str, Any]) -> str:
        """`:block_type_0, :block_type_1, …` for an `in (…)`, their values added to `params`."""
        names = [f"block_type_{i}" for i in range(len(self.block_types))]
        params.update(zip(names, self.block_types, strict=True))
        return ", ".join(f":{name}" for name in names)


NO_FILTERS = Filters()
