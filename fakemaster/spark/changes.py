"""Binlog files to change events as Arrow record batches (pyarrow only: no Spark here).

One file decodes alone: its FORMAT_DESCRIPTION sets the checksum, each event group's
TABLE_MAPs precede its rows. Every row of a WRITE/UPDATE/DELETE_ROWS event is one change event
(``c``/``u``/``d``); a QUERY event other than BEGIN/COMMIT/ROLLBACK/XA is one ``ddl`` event
(``t`` for TRUNCATE), its kind in ``ddl_kind``; snapshot rows (:func:`snapshot_batches`) are
``r``. The schema (:data:`CHANGE_EVENT_DDL`) is in docs/spark.md.

The decoded rows become Arrow columns in one place, :func:`rows_to_arrow` (a columnar decoder can
replace the decoding and that step together).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import chain
from pathlib import PurePosixPath
from typing import TYPE_CHECKING, Any, cast

from fakemaster.spark.columns import Catalogue, TableInfo, table_info
from fakemaster.vocabulary.constants import GtidFlag
from fakemaster.vocabulary.events import (
    AnnotateRowsEvent,
    DeleteRowsEvent,
    Event,
    GtidEvent,
    QueryEvent,
    RotateEvent,
    RowsEvent,
    TableMapEvent,
    UpdateRowsEvent,
    WriteRowsEvent,
    XidEvent,
)

if TYPE_CHECKING:
    import pyarrow as pa  # type: ignore[import-untyped]

    from decoder.binlog_file import Source
    from fakemaster.vocabulary.events import RowPair

__all__ = [
    "CHANGE_EVENT_DDL",
    "DDL_KINDS",
    "EventColumns",
    "FileState",
    "add_event",
    "arrow_schema",
    "classify_statement",
    "file_index",
    "find_table",
    "read_changes",
    "read_snapshot_file",
    "rows_to_arrow",
    "snapshot_batches",
    "typed_batch",
    "typed_schema_ddl",
]

SOURCE_DDL = (
    "server_id BIGINT, gtid STRING, file STRING, pos BIGINT, row INT, thread BIGINT,"
    " db STRING, `table` STRING, ts_ms BIGINT, query STRING"
)
SEQ_DDL = "file_index BIGINT, pos BIGINT, event INT, row INT"
CHANGE_EVENT_DDL = (
    "op STRING, database STRING, `table` STRING,"
    " before MAP<STRING, STRING>, after MAP<STRING, STRING>,"
    f" source STRUCT<{SOURCE_DDL}>, seq STRUCT<{SEQ_DDL}>,"
    " ddl STRING, ddl_kind STRING,"
    " columns ARRAY<STRING>, column_types ARRAY<STRING>, primary_key ARRAY<STRING>"
)
"""The change-event table, a Spark SQL DDL schema (docs/spark.md says each field)."""

DDL_KINDS = (
    "CREATE_TABLE",
    "ALTER_TABLE",
    "DROP_TABLE",
    "RENAME_TABLE",
    "TRUNCATE",
    "CREATE_DATABASE",
    "DROP_DATABASE",
    "STATEMENT",
    "OTHER",
)


def arrow_schema() -> pa.Schema:
    """:data:`CHANGE_EVENT_DDL` as Arrow (what ``pyspark.sql.pandas.types.to_arrow_schema``
    gives for it: a test checks they are equal)."""
    import pyarrow as pa

    text = pa.string()
    strings = pa.list_(pa.field("element", text))
    images = pa.map_(pa.field("key", text, nullable=False), pa.field("value", text))
    source = pa.struct(
        [
            ("server_id", pa.int64()),
            ("gtid", text),
            ("file", text),
            ("pos", pa.int64()),
            ("row", pa.int32()),
            ("thread", pa.int64()),
            ("db", text),
            ("table", text),
            ("ts_ms", pa.int64()),
            ("query", text),
        ]
    )
    seq = pa.struct(
        [
            ("file_index", pa.int64()),
            ("pos", pa.int64()),
            ("event", pa.int32()),
            ("row", pa.int32()),
        ]
    )
    return pa.schema(
        [
            ("op", text),
            ("database", text),
            ("table", text),
            ("before", images),
            ("after", images),
            ("source", source),
            ("seq", seq),
            ("ddl", text),
            ("ddl_kind", text),
            ("columns", strings),
            ("column_types", strings),
            ("primary_key", strings),
        ]
    )


_FILE_NUMBER = re.compile(r"\.(\d+)$")


def file_index(name: str, fallback: int) -> int:
    """The number of a binlog file (``mysql-bin.000042`` -> 42), else ``fallback``."""
    found = _FILE_NUMBER.search(PurePosixPath(name).name)
    return int(found.group(1)) if found else fallback


# --- statements ---------------------------------------------------------------------------

_NAME = r"(?:`(?:[^`]|``)+`|[\w$]+)"
_QUALIFIED = rf"({_NAME}(?:\s*\.\s*{_NAME})?)"
_COMMENTS = re.compile(r"/\*.*?\*/|--[^\n]*|#[^\n]*", re.S)
_TABLE_DDL = re.compile(
    r"^(CREATE|ALTER|DROP|TRUNCATE|RENAME)\s+(?:OR\s+REPLACE\s+)?(?:TEMPORARY\s+)?"
    r"(?:ONLINE\s+|IGNORE\s+)?(TABLE\s+)?(?:IF\s+(?:NOT\s+)?EXISTS\s+)?" + _QUALIFIED,
    re.I,
)
_DATABASE_DDL = re.compile(
    rf"^(CREATE|DROP)\s+(?:OR\s+REPLACE\s+)?(?:DATABASE|SCHEMA)\s+(?:IF\s+(?:NOT\s+)?EXISTS\s+)?({_NAME})",
    re.I,
)
_DML = re.compile(r"^(INSERT|UPDATE|DELETE|REPLACE|LOAD)\b", re.I)
_TRANSACTION_CONTROL = re.compile(r"^(BEGIN|COMMIT|ROLLBACK|XA\s|SAVEPOINT|RELEASE)\b", re.I)


def _unquote(name: str) -> str:
    name = name.strip()
    if name.startswith("`"):
        return name[1:-1].replace("``", "`")
    return name


def _split(qualified: str, database: str) -> tuple[str, str]:
    parts = re.findall(_NAME, qualified)
    if len(parts) == 2:
        return _unquote(parts[0]), _unquote(parts[1])
    return database, _unquote(parts[0])


def classify_statement(text: str, database: str) -> tuple[str, list[tuple[str, str]]] | None:
    """``(ddl_kind, [(database, table), ...])`` of a QUERY event's statement; None for
    transaction control (BEGIN, COMMIT, XA ...)."""
    statement = _COMMENTS.sub(" ", text).strip()
    if not statement or _TRANSACTION_CONTROL.match(statement):
        return None
    found = _DATABASE_DDL.match(statement)
    if found:
        return f"{found.group(1).upper()}_DATABASE", [(_unquote(found.group(2)), "")]
    found = _TABLE_DDL.match(statement)
    if found:
        verb = found.group(1).upper()
        if verb == "TRUNCATE":
            return "TRUNCATE", [_split(found.group(3), database)]
        if found.group(2):  # ... TABLE name
            targets = [_split(found.group(3), database)]
            if verb == "DROP":
                rest = statement[found.end(3) :]
                for extra in re.findall(rf"\s*,\s*{_QUALIFIED}", rest.split("/*")[0]):
                    targets.append(_split(extra, database))
            return f"{verb}_TABLE", targets
        return "OTHER", []
    if _DML.match(statement):
        return "STATEMENT", []
    return "OTHER", []


# --- the column accumulator ----------------------------------------------------------------


class _Images:
    """One image column (``before`` or ``after``): a map per event, kept as flat lists."""

    __slots__ = ("keys", "offsets", "values")

    def __init__(self) -> None:
        self.offsets: list[int | None] = []
        self.keys: list[str] = []
        self.values: list[str | None] = []

    def null(self, count: int = 1) -> None:
        self.offsets.extend([None] * count)

    def add(self, entries: Iterable[tuple[str, str | None]]) -> None:
        self.offsets.append(len(self.keys))
        for key, value in entries:
            self.keys.append(key)
            self.values.append(value)

    def add_columns(
        self, names: Sequence[str], texts: Sequence[list[str | None]], rows: int
    ) -> None:
        """``rows`` images of the same ``names``; ``texts[c][r]`` is column c of row r."""
        width = len(names)
        start = len(self.keys)
        self.offsets.extend(range(start, start + width * rows, width))
        self.keys.extend(list(names) * rows)
        if width:
            self.values.extend(chain.from_iterable(zip(*texts, strict=True)))

    def to_arrow(self, type_: Any) -> Any:
        import pyarrow as pa

        offsets = list(self.offsets)
        offsets.append(len(self.keys))
        return pa.MapArray.from_arrays(
            pa.array(offsets, pa.int32()),
            pa.array(self.keys, pa.string()),
            pa.array(self.values, pa.string()),
            type=type_,
        )


class _Lists:
    """One array<string> column, as flat lists."""

    __slots__ = ("offsets", "values")

    def __init__(self) -> None:
        self.offsets: list[int | None] = []
        self.values: list[str] = []

    def add(self, items: Sequence[str] | None, count: int = 1) -> None:
        if items is None:
            self.offsets.extend([None] * count)
            return
        start = len(self.values)
        width = len(items)
        self.offsets.extend(
            range(start, start + width * count, width) if width else [start] * count
        )
        self.values.extend(list(items) * count)

    def to_arrow(self, type_: Any) -> Any:
        import pyarrow as pa

        offsets = list(self.offsets)
        offsets.append(len(self.values))
        return pa.ListArray.from_arrays(
            pa.array(offsets, pa.int32()), pa.array(self.values, pa.string()), type=type_
        )


_SOURCE_FIELDS = (
    "server_id",
    "gtid",
    "file",
    "pos",
    "row",
    "thread",
    "db",
    "table",
    "ts_ms",
    "query",
)
_SEQ_FIELDS = ("file_index", "pos", "event", "row")


class EventColumns:
    """Change events gathered column by column (flat lists), until :func:`rows_to_arrow`
    makes a batch of them."""

    def __init__(self) -> None:
        self.op: list[str] = []
        self.database: list[str | None] = []
        self.table: list[str | None] = []
        self.before = _Images()
        self.after = _Images()
        self.source: dict[str, list[Any]] = {name: [] for name in _SOURCE_FIELDS}
        self.seq: dict[str, list[int]] = {name: [] for name in _SEQ_FIELDS}
        self.ddl: list[str | None] = []
        self.ddl_kind: list[str | None] = []
        self.columns = _Lists()
        self.column_types = _Lists()
        self.primary_key = _Lists()

    def __len__(self) -> int:
        return len(self.op)

    def add_common(
        self,
        count: int,
        op: str,
        database: str | None,
        table: str | None,
        source: Mapping[str, Any],
        rows: Sequence[int],
        seq: tuple[int, int, int],
        ddl: str | None = None,
        ddl_kind: str | None = None,
        *,
        query_once: bool = False,
    ) -> None:
        """Everything but the images and table description of ``count`` events that differ
        only in their row index (``rows``, also the source block's ``row``); with
        ``query_once`` the source's query is on the first of them only."""
        self.op.extend([op] * count)
        self.database.extend([database] * count)
        self.table.extend([table] * count)
        for name in _SOURCE_FIELDS:
            if name == "row":
                self.source["row"].extend(rows)
            elif name == "query" and query_once and count:
                self.source["query"].extend([source["query"]] + [None] * (count - 1))
            else:
                self.source[name].extend([source[name]] * count)
        file_index_, pos, event = seq
        self.seq["file_index"].extend([file_index_] * count)
        self.seq["pos"].extend([pos] * count)
        self.seq["event"].extend([event] * count)
        self.seq["row"].extend(rows)
        self.ddl.extend([ddl] * count)
        self.ddl_kind.extend([ddl_kind] * count)


def rows_to_arrow(columns: EventColumns) -> pa.RecordBatch:
    """The gathered events as one record batch of :func:`arrow_schema`."""
    import pyarrow as pa

    schema = arrow_schema()

    def struct(name: str, values: Mapping[str, list[Any]]) -> Any:
        type_ = schema.field(name).type
        return pa.StructArray.from_arrays(
            [pa.array(values[f.name], f.type) for f in type_], fields=list(type_)
        )

    arrays = [
        pa.array(columns.op, pa.string()),
        pa.array(columns.database, pa.string()),
        pa.array(columns.table, pa.string()),
        columns.before.to_arrow(schema.field("before").type),
        columns.after.to_arrow(schema.field("after").type),
        struct("source", columns.source),
        struct("seq", columns.seq),
        pa.array(columns.ddl, pa.string()),
        pa.array(columns.ddl_kind, pa.string()),
        columns.columns.to_arrow(schema.field("columns").type),
        columns.column_types.to_arrow(schema.field("column_types").type),
        columns.primary_key.to_arrow(schema.field("primary_key").type),
    ]
    return pa.RecordBatch.from_arrays(arrays, schema=schema)


# --- one binlog file -----------------------------------------------------------------------


def _present(bitmap: bytes, width: int) -> list[int]:
    return [i for i in range(width) if i >> 3 < len(bitmap) and bitmap[i >> 3] >> (i & 7) & 1]


def _add_images(
    target: _Images, info: TableInfo, present: list[int], images: Sequence[Sequence[Any]]
) -> None:
    """Images of the columns at ``present`` (the event's bitmap), converted column by column."""
    width = len(info.columns)
    for image in images:
        if len(image) != width:
            raise ValueError(
                f"{info.database}.{info.table}: a row image of {len(image)} values,"
                f" the table has {width} columns"
            )
    by_column = list(zip(*images, strict=True)) if images else []
    texts = []
    for position in present:
        convert = info.columns[position].to_text
        values = by_column[position]
        if any(v is None for v in values):
            texts.append([None if v is None else convert(v) for v in values])
        else:
            texts.append(list(map(convert, values)))
    target.add_columns([info.columns[p].name for p in present], texts, len(images))


@dataclass
class FileState:
    """What the events of one file (or stream) tell the next."""

    name: str
    index: int
    catalogue: Catalogue | None
    gtid: str | None = None
    server_id: int | None = None
    ts_ms: int | None = None
    query: str | None = None
    event: int = 0
    xid: str | None = None  # the XA xid of the current group (GTID flags PREPARED/COMPLETED_XA)
    maps: dict[int, TableInfo] = field(default_factory=dict)
    shapes: dict[tuple[Any, ...], TableInfo] = field(default_factory=dict)


def _table_map(state: FileState, event: TableMapEvent) -> None:
    shape = (
        event.database,
        event.table,
        event.column_types,
        event.column_meta,
        event.optional_metadata,
    )
    info = state.shapes.get(shape)
    if info is None:
        info = table_info(event, state.catalogue)
        state.shapes[shape] = info
    state.maps[event.table_id] = info


def _source(
    state: FileState, pos: int, db: str | None, table: str | None, thread: int | None
) -> dict[str, Any]:
    return {
        "server_id": state.server_id,
        "gtid": state.gtid,
        "file": state.name,
        "pos": pos,
        "thread": thread,
        "db": db,
        "table": table,
        "ts_ms": state.ts_ms,
        "query": state.query,
    }


def _rows(state: FileState, out: EventColumns, pos: int, event: RowsEvent) -> None:
    info = state.maps.get(event.table_id)
    if info is None:
        raise ValueError(
            f"{state.name} at {pos}: rows of table id {event.table_id} without its TABLE_MAP"
        )
    if isinstance(event, WriteRowsEvent):
        op = "c"
    elif isinstance(event, UpdateRowsEvent):
        op = "u"
    elif isinstance(event, DeleteRowsEvent):
        op = "d"
    else:
        return
    count = len(event.rows)
    if not count:
        return
    width = len(info.columns)
    present = _present(event.columns_present, width)
    if op == "c":
        out.before.null(count)
        _add_images(out.after, info, present, event.rows)
    elif op == "d":
        _add_images(out.before, info, present, event.rows)
        out.after.null(count)
    else:
        assert isinstance(event, UpdateRowsEvent)
        pairs = cast("tuple[RowPair, ...]", event.rows)  # an UPDATE's rows are pairs
        _add_images(out.before, info, present, [r[0] for r in pairs])
        after_present = _present(event.columns_present_after, width)
        _add_images(out.after, info, after_present, [r[1] for r in pairs])
    out.add_common(
        count,
        op,
        info.database,
        info.table,
        _source(state, pos, info.database, info.table, None),
        range(count),
        (state.index, pos, state.event),
        query_once=True,
    )
    # The annotated statement is given once, on its first change event: a bulk INSERT's text
    # repeated on each of its thousands of rows would cost its size squared.
    state.query = None
    out.columns.add(info.names, count)
    out.column_types.add(info.spark_types, count)
    out.primary_key.add(info.primary_key, count)


def _statement(state: FileState, out: EventColumns, pos: int, event: QueryEvent) -> None:
    text = event.query.decode("utf-8", "replace")
    found = classify_statement(text, event.database)
    if found is None:
        return
    kind, targets = found
    for row_index, (database, table) in enumerate(targets or [(event.database or None, None)]):
        source = _source(state, pos, database or None, table or None, event.thread_id)
        source["query"] = text
        out.add_common(
            1,
            "t" if kind == "TRUNCATE" else "ddl",
            database or None,
            table or None,
            source,
            [row_index],
            (state.index, pos, state.event),
            text,
            kind,
        )
        out.before.null()
        out.after.null()
        out.columns.add(None)
        out.column_types.add(None)
        out.primary_key.add(None)


_PREPARED_XA = int(GtidFlag.PREPARED_XA)


def _xid(event: GtidEvent) -> str | None:
    xid = event.xid
    return None if xid is None else f"{xid.format_id}:{xid.gtrid.hex()}:{xid.bqual.hex()}"


def _xa(state: FileState, out: EventColumns, pos: int, kind: str) -> None:
    """An ``xa`` event: ``ddl_kind`` XA_PREPARE (at the prepared group's GTID: the rows with its
    ``source.gtid`` wait for their xid), XA_COMMIT or XA_ROLLBACK; ``ddl`` is the xid."""
    out.add_common(
        1,
        "xa",
        None,
        None,
        _source(state, pos, None, None, None),
        [0],
        (state.index, pos, state.event),
        state.xid,
        kind,
    )
    out.before.null()
    out.after.null()
    out.columns.add(None)
    out.column_types.add(None)
    out.primary_key.add(None)


def read_changes(
    source: Source,
    name: str,
    index: int,
    *,
    catalogue: Catalogue | None = None,
    batch_rows: int = 8192,
    verify_checksum: bool = True,
) -> Iterator[pa.RecordBatch]:
    """The change events of one binlog file (``source``: a path or a binary file object) as
    record batches of about ``batch_rows`` events; ``name`` and ``index`` go into each event's
    source block and sequence."""
    from decoder.binlog_file import read_binlog

    state = FileState(PurePosixPath(name).name, index, catalogue)
    out = EventColumns()
    for pos, event in read_binlog(source, verify_checksum=verify_checksum):
        add_event(state, out, pos, event)
        if len(out) >= batch_rows:
            yield rows_to_arrow(out)
            out = EventColumns()
    if len(out):
        yield rows_to_arrow(out)


def gtid_text(domain_id: int, server_id: int, seq_no: int) -> str:
    """A GTID as the change events' ``source.gtid`` holds it."""
    return f"{domain_id}-{server_id}-{seq_no}"


def start_group(
    state: FileState, gtid: str, server_id: int, ts_ms: int, xid: str | None = None
) -> None:
    """What a GTID sets in ``state``: a new event group (no annotated query yet)."""
    state.gtid = gtid
    state.server_id = server_id
    state.ts_ms = ts_ms
    state.query = None
    state.event = 0
    state.xid = xid


def add_event(state: FileState, out: EventColumns, pos: int, event: Event) -> None:
    """One decoded event of ``state``'s file at offset ``pos``: its change events into ``out``."""
    if isinstance(event, GtidEvent):
        start_group(
            state,
            gtid_text(event.domain_id, event.server_id, event.seq_no),
            event.server_id,
            event.timestamp * 1000,
            _xid(event),
        )
        if state.xid is not None and event.flags2 & _PREPARED_XA:
            # The group's rows count at the XA COMMIT of its xid (none at XA ROLLBACK).
            _xa(state, out, pos, "XA_PREPARE")
        return
    state.event += 1
    if isinstance(event, TableMapEvent):
        _table_map(state, event)
    elif isinstance(event, RowsEvent):
        _rows(state, out, pos, event)
    elif isinstance(event, AnnotateRowsEvent):
        state.query = event.query.decode("utf-8", "replace")
    elif isinstance(event, QueryEvent):
        if state.gtid is None:
            state.server_id = event.server_id
            state.ts_ms = event.timestamp * 1000
        if state.xid is not None and event.query[:10].upper() in (b"XA COMMIT ", b"XA ROLLBAC"):
            _xa(state, out, pos, "XA_COMMIT" if event.query[3:4] in b"Cc" else "XA_ROLLBACK")
        _statement(state, out, pos, event)
    elif isinstance(event, XidEvent | RotateEvent):
        state.query = None


# --- snapshot rows ---------------------------------------------------------------------------


def snapshot_batches(
    rows: Iterable[Mapping[str, Any]],
    database: str,
    table: str,
    *,
    file_name: str,
    ordinal: int = 0,
    batch_rows: int = 8192,
    catalogue: Catalogue | None = None,
) -> Iterator[pa.RecordBatch]:
    """Snapshot rows of one table (each a column -> text mapping, NULL as None: the form of
    ``scenarios.Oracle.export`` JSON lines) as ``r`` events, ordered before every binlog event
    (sequence: ``file_index`` -1, ``pos`` the snapshot file's ``ordinal``, ``row`` the row's
    number; source ``pos`` the row's number)."""
    entry = (catalogue or {}).get(f"{database}.{table}", {})
    names = tuple(entry.get("columns", ())) or None
    key = tuple(entry.get("primary_key", ())) or None
    out = EventColumns()
    source = {
        "server_id": None,
        "gtid": None,
        "file": file_name,
        "pos": 0,
        "thread": None,
        "db": database,
        "table": table,
        "ts_ms": None,
        "query": None,
    }
    for number, row in enumerate(rows):
        out.add_common(1, "r", database, table, source, [0], (-1, ordinal, 0))
        out.seq["row"][-1] = number
        out.source["pos"][-1] = number
        out.before.null()
        out.after.add((str(k), None if v is None else str(v)) for k, v in row.items())
        out.columns.add(names)
        out.column_types.add(None)
        out.primary_key.add(key)
        if len(out) >= batch_rows:
            yield rows_to_arrow(out)
            out = EventColumns()
    if len(out):
        yield rows_to_arrow(out)


def read_snapshot_file(
    path: str, ordinal: int, *, batch_rows: int = 8192, catalogue: Catalogue | None = None
) -> Iterator[pa.RecordBatch]:
    """A ``<database>.<table>.jsonl`` snapshot file (one JSON object per row) as ``r`` events."""
    stem = PurePosixPath(path).name.removesuffix(".jsonl")
    database, _, table = stem.partition(".")
    with open(path, encoding="utf-8") as handle:
        rows = (json.loads(line) for line in handle if line.strip())
        yield from snapshot_batches(
            rows,
            database,
            table,
            file_name=stem,
            ordinal=ordinal,
            batch_rows=batch_rows,
            catalogue=catalogue,
        )


# --- typed images for one table ---------------------------------------------------------------


def _arrow_type(spark_type: str) -> Any:
    import pyarrow as pa

    simple = {
        "tinyint": pa.int8(),
        "smallint": pa.int16(),
        "int": pa.int32(),
        "bigint": pa.int64(),
        "float": pa.float32(),
        "double": pa.float64(),
        "string": pa.string(),
        "binary": pa.binary(),
        "date": pa.date32(),
        "timestamp": pa.timestamp("us", tz="UTC"),
        "timestamp_ntz": pa.timestamp("us"),
    }
    if spark_type in simple:
        return simple[spark_type]
    found = re.fullmatch(r"decimal\((\d+),(\d+)\)", spark_type)
    if found is None:
        raise ValueError(f"no Arrow type for {spark_type}")
    return pa.decimal128(int(found.group(1)), int(found.group(2)))


def _typed(spark_type: str, text: str | None) -> Any:
    """A text form (see fakemaster.spark.columns) as the Python value of ``spark_type``;
    None where Spark's type cannot hold it (MariaDB's zero dates)."""
    import datetime as dt
    from decimal import Decimal

    if text is None:
        return None
    if spark_type in ("tinyint", "smallint", "int", "bigint"):
        return int(text)
    if spark_type.startswith("decimal"):
        return Decimal(text)
    if spark_type in ("float", "double"):
        return float(text)
    if spark_type == "binary":
        return bytes.fromhex(text[2:])
    try:
        if spark_type == "date":
            return dt.date.fromisoformat(text)
        if spark_type == "timestamp_ntz":
            return dt.datetime.fromisoformat(text)
        if spark_type == "timestamp":
            return dt.datetime.fromisoformat(text).replace(tzinfo=dt.UTC)
    except ValueError:
        return None
    return text


def typed_schema_ddl(info: TableInfo) -> str:
    """The change-event schema of one table with typed images: ``before``/``after`` are
    structs of its columns (an absent column of a partial image is NULL there too)."""
    columns = ", ".join(
        f"`{c.name.replace('`', '``')}`: {c.spark_type.upper()}" for c in info.columns
    )
    return (
        f"op STRING, database STRING, `table` STRING, before STRUCT<{columns}>,"
        f" after STRUCT<{columns}>, source STRUCT<{SOURCE_DDL}>, seq STRUCT<{SEQ_DDL}>,"
        " ddl STRING, ddl_kind STRING"
    )


def typed_batch(batch: pa.RecordBatch, info: TableInfo) -> pa.RecordBatch:
    """The events of ``info``'s table in ``batch`` (generic images) with typed images."""
    import pyarrow as pa

    generic = arrow_schema()
    struct = pa.struct([pa.field(c.name, _arrow_type(c.spark_type)) for c in info.columns])
    rows = batch.to_pylist()
    keep = [
        r
        for r in rows
        if r["database"] == info.database and (r["table"] == info.table or r["table"] is None)
    ]

    def image(entries: list[tuple[str, str | None]] | None) -> dict[str, Any] | None:
        if entries is None:
            return None
        given = dict(entries)
        return {c.name: _typed(c.spark_type, given.get(c.name)) for c in info.columns}

    arrays = [
        pa.array([r["op"] for r in keep], pa.string()),
        pa.array([r["database"] for r in keep], pa.string()),
        pa.array([r["table"] for r in keep], pa.string()),
        pa.array([image(r["before"]) for r in keep], struct),
        pa.array([image(r["after"]) for r in keep], struct),
        pa.array([r["source"] for r in keep], generic.field("source").type),
        pa.array([r["seq"] for r in keep], generic.field("seq").type),
        pa.array([r["ddl"] for r in keep], pa.string()),
        pa.array([r["ddl_kind"] for r in keep], pa.string()),
    ]
    names = ["op", "database", "table", "before", "after", "source", "seq", "ddl", "ddl_kind"]
    return pa.RecordBatch.from_arrays(arrays, names=names)


def find_table(paths: Iterable[str], qualified: str, catalogue: Catalogue | None) -> TableInfo:
    """The table ``database.table`` as the first TABLE_MAP of it in ``paths`` describes it."""
    from decoder.binlog_file import read_binlog

    database, _, table = qualified.partition(".")
    for path in paths:
        for _, event in read_binlog(path):
            if (
                isinstance(event, TableMapEvent)
                and event.database == database
                and event.table == table
            ):
                return table_info(event, catalogue)
    raise ValueError(f"no TABLE_MAP of {qualified} in the files")
