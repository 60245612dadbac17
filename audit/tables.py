"""The audit's tables on disk: ``OUT/parquet/<table>/part-NNNNN.parquet`` and
``OUT/json/<table>/part-NNNNN.jsonl``, the same rows in both.

Parts are written by whoever holds the rows (a Spark task, the driver, or the single process), each
under its own part number, so a retried task rewrites its own files. Every table gets at least one
part, possibly empty, so readers always find its schema (``spark.read.parquet(OUT + "/parquet/
reassignments")``, ``pandas.read_parquet``, ``jq``). Timestamps are UTC milliseconds: a Parquet
timestamp, a number in JSON. The ``fields`` column of ``records`` is a JSON string in Parquet and
an object in JSON lines.
"""
from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from itertools import accumulate, chain
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from . import storage
from .rows import COLUMNS

_INTS = pa.list_(pa.int32())
_TEXTS = pa.list_(pa.string())
_TIME = pa.timestamp("ms", tz="UTC")
_TYPES = {
    "records": (pa.int64(), _TIME, pa.int32(), pa.bool_(), pa.bool_(), pa.string(), pa.int16(), pa.string(),
                pa.string(), pa.int32(), pa.string()),
    "partition_states": (pa.int64(), _TIME, pa.string(), pa.string(), pa.int32(), pa.string(), _INTS, _INTS,
                         pa.int32(), pa.int32(), pa.int32(), _INTS, _INTS, _TEXTS, pa.int8()),
    "reassignments": (pa.string(), pa.string(), pa.int32(), pa.int64(), _TIME, pa.int64(), _TIME, pa.string(),
                      _INTS, _INTS, _INTS, _INTS, _INTS, pa.int32(), pa.int32(), pa.int64()),
    "rf_changes": (pa.string(), pa.string(), pa.int32(), pa.int64(), _TIME, pa.int32(), pa.int32(), _INTS, _INTS,
                   pa.int64(), pa.string()),
    "throttles": (pa.string(), pa.string(), pa.string(), pa.string(), pa.int64(), _TIME, pa.int64(), _TIME,
                  pa.string(), pa.int32(), _TIME, pa.int64(), pa.bool_()),
    "violations": (pa.int64(), _TIME, pa.string(), pa.string(), pa.string(), pa.int32(), pa.int32(), pa.string(),
                   pa.string(), pa.int64()),
    "brokers": (pa.int64(), _TIME, pa.int32(), pa.string(), pa.int64(), pa.bool_(), pa.bool_(), pa.string(),
                _TEXTS, pa.string()),
    "directories": (pa.int64(), _TIME, pa.int32(), pa.string(), pa.string(), pa.string()),
    "under_replicated": (pa.int64(), _TIME, pa.int32(), pa.int32()),
}
SCHEMAS = {name: pa.schema(list(zip(COLUMNS[name], _TYPES[name]))) for name in COLUMNS}
RAW_JSON_COLUMN = {"records": "fields"}


def table_uri(out: str, table: str, fmt: str, part: int | None = None) -> str:
    """``fmt`` is "parquet" or "json"; without ``part``, the table's directory."""
    directory = storage.join(out, fmt, table)
    if part is None:
        return directory
    return storage.join(directory, f"part-{part:05d}.{'parquet' if fmt == 'parquet' else 'jsonl'}")


def clear(out: str) -> None:
    """Remove the tables of an earlier run, so no stale part survives."""
    for fmt in ("parquet", "json"):
        storage.remove_tree(storage.join(out, fmt))


def to_arrow(table: str, rows: list[tuple]) -> pa.Table:
    schema = SCHEMAS[table]
    columns = list(zip(*rows))
    return pa.Table.from_arrays([_array(c, f.type) for c, f in zip(columns, schema)], schema=schema)


def _array(values: tuple, kind: pa.DataType) -> pa.Array:
    """A column; lists are built from one flat array and offsets, several times faster than from
    Python sequences."""
    if not pa.types.is_list(kind) or None in values:
        return pa.array(values, type=kind)
    offsets = [0]
    offsets.extend(accumulate(map(len, values)))
    return pa.ListArray.from_arrays(pa.array(offsets, pa.int32()),
                                    pa.array(list(chain.from_iterable(values)), kind.value_type))


def read_rows(out: str, table: str) -> list[tuple]:
    """Every row of a table under OUT, as the replay made it: lists as tuples, timestamps as ms."""
    schema = SCHEMAS[table]
    fs, path = storage.resolve(table_uri(out, table, "parquet"))
    data = pq.read_table(path, filesystem=fs, schema=schema)
    columns = []
    for f, column in zip(schema, data.columns):
        if pa.types.is_timestamp(f.type):
            column = column.cast(pa.int64())
        values = column.to_pylist()
        if pa.types.is_list(f.type):
            values = [None if v is None else tuple(v) for v in values]
        columns.append(values)
    return list(zip(*columns))


def json_lines(table: str, rows: list[tuple]) -> str:
    return "".join(map(_LINES[table], rows))


def _line_function(table: str) -> Callable[[tuple[Any, ...]], str]:
    """A function turning one row into its JSON line, compiled from the schema: one string format
    per row instead of a dict and a JSON encoder call (about 2-3x faster on the big tables)."""
    pieces = []
    for i, f in enumerate(SCHEMAS[table]):
        v = f"r[{i}]"
        if f.name == RAW_JSON_COLUMN.get(table):
            text = v
        elif pa.types.is_boolean(f.type):
            text = f"('true' if {v} else 'false')"
        elif pa.types.is_integer(f.type) or pa.types.is_timestamp(f.type):
            text = f"str({v})"
        elif pa.types.is_string(f.type):
            text = f"quote({v})"
        elif pa.types.is_integer(f.type.value_type):
            text = f"'[' + ','.join(map(str, {v})) + ']'"
        else:
            text = f"'[' + ','.join(map(quote, {v})) + ']'"
        pieces.append(f"('{json.dumps(f.name)}:' + ({text} if {v} is not None else 'null'))")
    source = f"def line(r):\n    return '{{' + ','.join(({', '.join(pieces)})) + '}}\\n'\n"
    namespace: dict[str, Any] = {"quote": json.encoder.encode_basestring_ascii}
    exec(compile(source, f"<json line of {table}>", "exec"), namespace)
    line: Callable[[tuple[Any, ...]], str] = namespace["line"]
    return line


_LINES = {name: _line_function(name) for name in SCHEMAS}


class TableWriter:
    """Appends rows to one part of each table; ``close`` finishes the files (and creates empty parts
    for the tables named in ``ensure``)."""

    def __init__(self, out: str, part: int, ensure: tuple[str, ...] = ()):
        self.out = out
        self.part = part
        self.counts: dict[str, int] = {}
        self._parquet: dict[str, tuple] = {}
        self._json: dict[str, storage.OutputStream] = {}
        for table in ensure:
            self.write(table, [])

    def write(self, table: str, rows: list[tuple]) -> None:
        if table not in self._parquet:
            stream = storage.open_output(table_uri(self.out, table, "parquet", self.part))
            self._parquet[table] = (stream, pq.ParquetWriter(stream, SCHEMAS[table]))
            self._json[table] = storage.open_output(table_uri(self.out, table, "json", self.part))
            self.counts[table] = 0
        if rows:
            self._parquet[table][1].write_table(to_arrow(table, rows))
            self._json[table].write(json_lines(table, rows).encode())
            self.counts[table] += len(rows)

    def close(self) -> dict[str, int]:
        for table, (stream, writer) in self._parquet.items():
            writer.close()
            stream.close()
            self._json[table].close()
        self._parquet.clear()
        self._json.clear()
        return self.counts


def unseen(out: str, parts: Mapping[str, Sequence[int]], counts: dict[str, int]) -> list[str]:
    """What is wrong with the tables under OUT as this process sees them: parts (by table, the part
    numbers written) that are not there, and tables whose Parquet parts hold other row counts than
    ``counts``. Empty when every part is visible."""
    problems = []
    for table, numbers in parts.items():
        rows = 0
        for part in numbers:
            for fmt in ("parquet", "json"):
                uri = table_uri(out, table, fmt, part)
                if not storage.exists(uri):
                    problems.append(f"{uri} is missing")
                elif fmt == "parquet":
                    fs, path = storage.resolve(uri)
                    with fs.open_input_file(path) as f:
                        rows += pq.ParquetFile(f).metadata.num_rows
        if rows != counts.get(table, 0):
            problems.append(f"{table} has {rows} rows there, {counts.get(table, 0)} were written")
    return problems
