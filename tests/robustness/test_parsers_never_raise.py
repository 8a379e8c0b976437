"""Every parser reads any file content without raising, and every turn it emits is well typed.

Hypothesis drives each source's `read()` directly: random bytes, real fixture records with
fields replaced by values of the wrong type (huge ints, lists, dicts, deep nesting, odd
timestamps), truncated lines, NUL bytes and invalid UTF-8 (JSONL agents); fuzzed row values
in a real Hermes schema; odd rows and odd column types in agent-traces Parquet. Whatever
the content, `read()` returns turns whose fields the store can bind, and those turns can be
stored.
"""

from __future__ import annotations

import json
import sqlite3
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from robust_support import (
    CLAUDE_FIXTURES,
    CODEX_FIXTURES,
    HERMES_SQL,
    PI_FIXTURES,
    build_hermes_db,
    check_turn,
)

from funes.chunks import chunk_turn
from funes.store import Store
from funes.traces import ReadStats, Turn, normalize_ts
from funes.traces.claude_code import read_claude_file
from funes.traces.codex import read_codex_file
from funes.traces.hermes import HermesSource
from funes.traces.parquet import read_parquet_file
from funes.traces.pi import read_pi_file

FUZZ = settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

READERS = {"claude": read_claude_file, "codex": read_codex_file, "pi": read_pi_file}


def _records(paths: list[Path]) -> list[dict[str, Any]]:
    out = []
    for path in paths:
        for line in path.read_bytes().decode("utf-8", "replace").splitlines():
            try:
                value = json.loads(line)
            except ValueError:
                continue  # the fixtures hold corrupt lines on purpose
            if isinstance(value, dict):
                out.append(value)
    return out


FIXTURE_RECORDS = {
    "claude": _records(CLAUDE_FIXTURES),
    "codex": _records(CODEX_FIXTURES),
    "pi": _records(PI_FIXTURES),
}

# Timestamps of every shape a transcript has been seen (or could be fuzzed) to carry.
odd_timestamps = st.one_of(
    st.integers(min_value=-(10**30), max_value=10**30),
    st.integers().map(lambda n: n * 10**300),  # ints far beyond a float
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from(
        [
            "²",  # a digit to str.isdigit(), not to float()
            "١٢٣٤٥٦٧٨٩٠",
            "0001-01-01T00:00:00+05:00",  # out of range once converted to UTC
            "9999-12-31T23:59:59-05:00",
            "0000-00-00",
            "2026-02-30T00:00:00Z",
            "1e400",
            "99999999999999999999999",
            "",
            " ",
            "NaN",
        ]
    ),
    st.text(max_size=30),
)
json_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=40),
    odd_timestamps,
)
json_values = st.recursive(
    json_scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=12), inner, max_size=4)
    ),
    max_leaves=12,
)


def nested(depth: int) -> Any:
    value: Any = "deep"
    for i in range(depth):
        # one reference per level: two would make the value's JSON 2**depth long
        value = [value] if i % 2 else {"content": value, "type": "text"}
    return value


deep_values = st.integers(min_value=10, max_value=3000).map(nested)
any_value = st.one_of(json_values, deep_values, odd_timestamps)


def mutate(value: Any, data: st.DataObject, depth: int = 0) -> Any:
    """Replace, drop or keep each field of a record, recursively, as hypothesis chooses."""
    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            action = data.draw(
                st.sampled_from(["keep", "keep", "keep", "recurse", "replace", "drop"])
            )
            if action == "drop":
                continue
            if action == "replace":
                out[key] = data.draw(any_value)
            elif action == "recurse" and depth < 6:
                out[key] = mutate(item, data, depth + 1)
            else:
                out[key] = item
        return out
    if isinstance(value, list):
        return [mutate(v, data, depth + 1) if depth < 6 else v for v in value]
    return value


def dumps(value: Any) -> bytes:
    try:
        return json.dumps(value).encode()
    except (RecursionError, ValueError):
        return b"{"  # too deep for the encoder: a corrupt line then


def read_bytes(reader: Any, payload: bytes) -> tuple[list[Turn], ReadStats]:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "0b9f6c1e-5d1a-4c55-9a53-7f0d2c1e9a10.jsonl"
        path.write_bytes(payload)
        stats = ReadStats()
        turns = list(reader(path, stats))
    for turn in turns:
        check_turn(turn)
    return turns, stats


@pytest.fixture(scope="module")
def sink() -> Iterator[Store]:
    """One in-memory store every fuzzed turn is written to (binding must never fail)."""
    store = Store.open(Path(":memory:"))
    yield store
    store.close()


def store_turns(store: Store, turns: list[Turn]) -> None:
    chunks = [c for t in turns for c in chunk_turn(t)]
    store.add(chunks, None)


@pytest.mark.parametrize("agent", sorted(READERS))
@FUZZ
@given(data=st.data())
def test_a_jsonl_parser_never_raises_on_mutated_real_records(
    agent: str, data: st.DataObject, sink: Store
) -> None:
    records = FIXTURE_RECORDS[agent]
    picks = data.draw(st.lists(st.sampled_from(records), min_size=1, max_size=6))
    lines = [dumps(mutate(r, data)) for r in picks]
    if agent != "claude" and data.draw(st.booleans()):
        lines.insert(0, dumps(records[0]))  # keep the session header first sometimes
    turns, _ = read_bytes(READERS[agent], b"\n".join(lines) + b"\n")
    store_turns(sink, turns)


@pytest.mark.parametrize("agent", sorted(READERS))
@FUZZ
@given(
    chunks=st.lists(
        st.one_of(
            st.binary(max_size=200),
            st.sampled_from(
                [b"\x00", b"\xff\xfe", b"\xed\xa0\x80", b"\n", b"{", b"}", b'"', b"[]"]
            ),
        ),
        max_size=20,
    ),
    cut=st.floats(min_value=0.0, max_value=1.0),
    data=st.data(),
)
def test_a_jsonl_parser_never_raises_on_random_bytes_between_real_lines(
    agent: str, chunks: list[bytes], cut: float, data: st.DataObject, sink: Store
) -> None:
    records = FIXTURE_RECORDS[agent]
    real = [
        json.dumps(r).encode() for r in data.draw(st.lists(st.sampled_from(records), max_size=4))
    ]
    payload = b"\n".join(real + chunks)
    payload = payload[: int(len(payload) * cut)] if data.draw(st.booleans()) else payload
    turns, stats = read_bytes(READERS[agent], payload)
    assert stats.records <= payload.count(b"\n") + 1
    store_turns(sink, turns)


@pytest.mark.parametrize("agent", sorted(READERS))
def test_deeply_nested_json_in_any_field_is_skipped_or_read_never_raised(agent: str) -> None:
    # Depths around the interpreter's recursion limit: json.loads fails at some, the readers'
    # own recursion (rendering tool input, walking content parts) at others.
    records = FIXTURE_RECORDS[agent]
    for depth in (400, 900, 950, 990, 999, 1000, 1001, 1500, 100_000):
        deep = "[" * depth + "]" * depth
        for rec in records[:12]:
            for key in list(rec):
                line = json.dumps({**rec, key: "__DEEP__"}).replace('"__DEEP__"', deep)
                read_bytes(READERS[agent], line.encode() + b"\n")


HOSTILE_VALUES: list[Any] = [
    None,
    7,
    10**400,
    -1.5,
    [],
    ["x", 1],
    {"uuid": {"a": 1}},
    nested(40),
    "²",
    "0001-01-01T00:00:00+05:00",
    "",
    "\x00",
    "\ud800",  # a lone surrogate, as a JSON \ud800 escape decodes
    "line\nbreak",
]


def _paths(record: dict[str, Any], prefix: tuple[str, ...] = ()) -> Iterator[tuple[str, ...]]:
    """Every key path of a record down to depth 3 (lists entered at their first element)."""
    for key, value in record.items():
        path = (*prefix, key)
        yield path
        if len(path) < 3:
            if isinstance(value, dict):
                yield from _paths(value, path)
            elif isinstance(value, list) and value and isinstance(value[0], dict):
                yield from _paths(value[0], (*path, "0"))


def _replaced(record: Any, path: tuple[str, ...], value: Any) -> Any:
    if not path:
        return value
    head, rest = path[0], path[1:]
    if isinstance(record, list):
        return [_replaced(record[0], rest, value), *record[1:]]
    return {**record, head: _replaced(record[head], rest, value)}


@pytest.mark.parametrize("agent", sorted(READERS))
def test_every_known_field_of_the_wrong_type_is_ignored_not_raised(agent: str) -> None:
    """Each field of each real record, replaced in turn by each hostile value, reads cleanly."""
    seen: set[tuple[str, ...]] = set()
    for rec in FIXTURE_RECORDS[agent]:
        kind = (
            rec.get("type"),
            (rec.get("payload") or {}).get("type")
            if isinstance(rec.get("payload"), dict)
            else None,
        )
        for path in _paths(rec):
            if (*map(str, kind), *path) in seen:
                continue
            seen.add((*map(str, kind), *path))
            lines = [dumps(_replaced(rec, path, v)) for v in HOSTILE_VALUES]
            header = [] if agent == "claude" else [dumps(FIXTURE_RECORDS[agent][0])]
            read_bytes(READERS[agent], b"\n".join(header + lines) + b"\n")
    assert len(seen) > 20


@FUZZ
@given(value=any_value)
def test_normalize_ts_returns_a_string_for_any_json_value(value: Any) -> None:
    out = normalize_ts(value)
    assert isinstance(out, str)
    assert out == "" or out.endswith("Z")


# -- Hermes: fuzzed rows in the real schema -----------------------------------------------------

sql_values = st.one_of(
    st.none(),
    st.integers(min_value=-(2**63), max_value=2**63 - 1),
    st.floats(allow_nan=False),
    st.text(max_size=40),
    st.binary(max_size=40),
    st.sampled_from(["user", "assistant", "tool", "system"]),
)
hermes_content = st.one_of(
    sql_values,
    json_values.map(lambda v: "\x00json:" + json.dumps(v)),
    st.integers(min_value=10, max_value=3000).map(lambda d: "\x01json:" + "[" * d + "]" * d),
)
hermes_tool_calls = st.one_of(
    sql_values,
    json_values.map(json.dumps),
    st.lists(
        st.fixed_dictionaries(
            {
                "id": json_values,
                "function": st.one_of(
                    json_values,
                    st.fixed_dictionaries({"name": json_values, "arguments": any_value}),
                ),
            }
        ),
        max_size=3,
    ).map(lambda v: dumps(v).decode()),
)
hermes_rows = st.lists(
    st.fixed_dictionaries(
        {
            "session_id": st.one_of(st.sampled_from(["s1", "s2"]), sql_values),
            "role": st.one_of(st.sampled_from(["user", "assistant", "tool", "system"]), sql_values),
            "content": hermes_content,
            "tool_calls": hermes_tool_calls,
            "tool_name": sql_values,
            "tool_call_id": sql_values,
            "timestamp": st.one_of(
                sql_values,
                odd_timestamps.filter(lambda v: not isinstance(v, int) or abs(v) < 2**63),
            ),
            "reasoning": sql_values,
            "reasoning_content": sql_values,
        }
    ),
    min_size=1,
    max_size=8,
)


NOT_NULL = {"session_id": "s1", "role": "user", "timestamp": 0.0}


@FUZZ
@given(rows=hermes_rows, session_cwd=sql_values, session_parent=sql_values)
def test_the_hermes_reader_never_raises_on_fuzzed_rows_of_the_real_schema(
    rows: list[dict[str, Any]], session_cwd: Any, session_parent: Any, sink: Store
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        db = build_hermes_db(Path(tmp) / "state.db", HERMES_SQL)
        conn = sqlite3.connect(db)
        conn.execute("pragma foreign_keys = off")
        conn.execute(
            "insert into sessions (id, source, started_at, cwd, parent_session_id) values ('s1', 'cli', 0, ?, ?)",
            (session_cwd, session_parent),
        )
        for row in rows:
            # the real schema's NOT NULL columns get a value; every other one any value
            row = {k: NOT_NULL.get(k, v) if v is None else v for k, v in row.items()}
            cols = ", ".join(row)
            conn.execute(
                f"insert into messages ({cols}) values ({', '.join('?' * len(row))})",
                [v if not isinstance(v, float) or v == v else 0.0 for v in row.values()],
            )
        conn.commit()
        conn.close()
        source = HermesSource(databases=[db])
        turns: list[Turn] = []
        for unit in source.units():
            stats = ReadStats()
            turns.extend(source.read(unit, stats))
        for turn in turns:
            check_turn(turn)
        store_turns(sink, turns)


@FUZZ
@given(payload=st.binary(max_size=4096), keep=st.integers(min_value=0, max_value=8192))
def test_a_damaged_hermes_database_yields_no_units_or_a_retryable_error(
    payload: bytes, keep: int
) -> None:
    """units() never raises; read() raises only sqlite3.Error/OSError (a failure retried later)."""
    with tempfile.TemporaryDirectory() as tmp:
        good = build_hermes_db(Path(tmp) / "good" / "state.db", HERMES_SQL)
        conn = sqlite3.connect(good)
        conn.execute("pragma wal_checkpoint(truncate)")
        conn.close()
        db = Path(tmp) / "state.db"
        db.write_bytes(good.read_bytes()[:keep] + payload)
        source = HermesSource(databases=[db])
        for unit in list(source.units()):
            try:
                for turn in source.read(unit, ReadStats()):
                    check_turn(turn)
            except (sqlite3.Error, OSError):
                pass


# -- Parquet: odd rows and odd column types -----------------------------------------------------

message_json = st.one_of(
    json_values.map(lambda v: dumps(v).decode()),
    st.fixed_dictionaries(
        {
            "role": st.one_of(
                st.sampled_from(["user", "assistant", "tool", "system"]), json_scalars
            ),
            "content": any_value,
            "tool_calls": any_value,
            "reasoning_content": json_values,
            "timestamp": odd_timestamps,
            "tool_call_id": json_values,
            "name": json_values,
        }
    ).map(lambda v: dumps(v).decode()),
    st.none(),
)


@FUZZ
@given(
    rows=st.lists(
        st.fixed_dictionaries(
            {
                "session_id": st.one_of(st.none(), st.text(max_size=12)),
                "messages": st.one_of(st.none(), st.lists(message_json, max_size=5)),
                "sent_at": st.one_of(st.none(), st.text(max_size=30)),
                "harness": st.one_of(st.none(), st.text(max_size=12)),
                "metadata": st.one_of(
                    st.none(), json_values.map(lambda v: dumps(v).decode()), st.text(max_size=20)
                ),
            }
        ),
        max_size=6,
    )
)
def test_the_parquet_reader_never_raises_on_odd_rows(
    rows: list[dict[str, Any]], sink: Store
) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    schema = pa.schema(
        [
            ("session_id", pa.string()),
            ("messages", pa.list_(pa.string())),
            ("sent_at", pa.string()),
            ("harness", pa.string()),
            ("metadata", pa.string()),
        ]
    )
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "t.parquet"
        pq.write_table(pa.Table.from_pylist(rows, schema=schema), path)
        turns = list(read_parquet_file(path, ReadStats()))
    for turn in turns:
        check_turn(turn)
    store_turns(sink, turns)


ODD_COLUMNS = {
    "session_id": [pa_t for pa_t in ("int64", "string", "binary")],
    "sent_at": ["int64", "double", "timestamp", "string"],
    "harness": ["int64", "string"],
    "metadata": ["int64", "string"],
}


@pytest.mark.parametrize(
    "column,kind",
    [(c, k) for c, kinds in ODD_COLUMNS.items() for k in kinds] + [("messages", "string")],
)
def test_the_parquet_reader_accepts_columns_of_unexpected_types(
    column: str, kind: str, tmp_path: Path
) -> None:
    import datetime as dt

    import pyarrow as pa
    import pyarrow.parquet as pq

    good_messages = [json.dumps({"role": "user", "content": "kiln cobalt glaze"})]
    values = {
        "int64": (pa.int64(), 12345678901234),
        "double": (pa.float64(), 1.7e9),
        "timestamp": (pa.timestamp("ms", tz="UTC"), dt.datetime(2026, 3, 1, tzinfo=dt.UTC)),
        "string": (pa.string(), "x"),
        "binary": (pa.binary(), b"\xff\xfe"),
    }
    columns: dict[str, Any] = {
        "session_id": pa.array(["s1"], pa.string()),
        "messages": pa.array([good_messages], pa.list_(pa.string())),
    }
    typ, value = values[kind]
    if column == "messages":
        columns["messages"] = pa.array([good_messages[0]], pa.string())
    else:
        columns[column] = pa.array([value], typ)
    path = tmp_path / "odd.parquet"
    pq.write_table(pa.table(columns), path)
    stats = ReadStats()
    turns = list(read_parquet_file(path, stats))
    for turn in turns:
        check_turn(turn)
    assert turns or stats.corrupt_records


@FUZZ
@given(payload=st.binary(max_size=2048), keep=st.integers(min_value=0, max_value=4096))
def test_a_damaged_parquet_file_raises_only_oserror(payload: bytes, keep: int) -> None:
    from robust_support import PARQUET_FIXTURE

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "t.parquet"
        path.write_bytes(PARQUET_FIXTURE.read_bytes()[:keep] + payload)
        try:
            for turn in read_parquet_file(path, ReadStats()):
                check_turn(turn)
        except OSError:
            pass
