"""The table catalogue of a binlog served as it is (``--binlog-dir``, an in-memory store): what
its events tell of the tables, so that clients looking column names up in information_schema
(python-mysql-replication without FULL metadata, Debezium, Maxwell) can decode its rows.

Every TABLE_MAP describes its table as it was at that point: the last one of each table wins.
From a TABLE_MAP this module knows the columns' binlog types and metadata (hence the SQL type:
length, precision, fsp, BLOB/TEXT size), NULL-ability, and with ``binlog_row_metadata=MINIMAL``
or ``FULL`` signedness and character sets; ``FULL`` adds the column names, ENUM/SET members and
the primary key. DDL (QUERY events) removes dropped tables and databases and renames tables.

What the bytes cannot tell, and what is shown instead:

* without ``FULL``, the column names (``@1``, ``@2``... as mariadb-binlog prints them), ENUM/SET
  members (none) and the primary key (none); without ``MINIMAL``, signedness (signed) and
  character sets (utf8mb4_general_ci for text: CHAR/VARCHAR/TEXT and BINARY/VARBINARY/BLOB
  cannot be told apart, they are taken for text);
* defaults (none shown), UNIQUE and plain keys, AUTO_INCREMENT, comments, the engine (InnoDB)
  and the table's default collation (utf8mb4_general_ci);
* a table created but never written to (no TABLE_MAP yet) is not known;
* rows: a binlog holds changes, not contents, so every table reads empty.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from decoder.core import decode_event
from fakemaster.protocol.charsets import BINARY_COLLATION_ID, collation_by_id
from fakemaster.sql.tables.catalogue import (
    CatalogueColumn,
    CatalogueKey,
    CatalogueTable,
    CellValue,
)
from fakemaster.vocabulary.columns import STRING_REAL_ENUM, STRING_REAL_SET, string_metadata
from fakemaster.vocabulary.constants import ColumnType, EventType, OptionalMetadata
from fakemaster.vocabulary.context import BinlogContext
from fakemaster.vocabulary.events import QueryEvent, TableMapEvent

__all__ = ["BinlogCatalogue", "EmptySnapshot", "table_from_map"]

_INTEGERS = {
    ColumnType.TINY: "tinyint",
    ColumnType.SHORT: "smallint",
    ColumnType.INT24: "mediumint",
    ColumnType.LONG: "int",
    ColumnType.LONGLONG: "bigint",
}
_SIGNED_TYPES = frozenset(
    (*_INTEGERS, ColumnType.NEWDECIMAL, ColumnType.FLOAT, ColumnType.DOUBLE, ColumnType.YEAR)
)
_BLOBS = {1: "tiny", 2: "", 3: "medium", 4: "long"}
_DEFAULT_TEXT = "utf8mb4_general_ci"
_TYPE_OFFSET = 4  # the event type byte in the common header
_WANTED = frozenset(
    (EventType.FORMAT_DESCRIPTION, EventType.TABLE_MAP, EventType.QUERY, EventType.QUERY_COMPRESSED)
)


def _has_charset(column_type: int, meta: int) -> bool:
    """Counted in the DEFAULT/COLUMN_CHARSET metadata: character and binary strings (not ENUM,
    SET)."""
    if column_type in (ColumnType.VARCHAR, ColumnType.VAR_STRING, ColumnType.BLOB):
        return True
    if column_type == ColumnType.STRING:
        real, _ = string_metadata(meta)
        return real not in (STRING_REAL_ENUM, STRING_REAL_SET)
    return False


def _is_enum_set(column_type: int, meta: int) -> bool:
    if column_type in (ColumnType.ENUM, ColumnType.SET):
        return True
    return column_type == ColumnType.STRING and string_metadata(meta)[0] in (
        STRING_REAL_ENUM,
        STRING_REAL_SET,
    )


def _charsets(field: Any, count: int) -> list[int]:
    """Collation ids of ``count`` columns from DEFAULT_CHARSET ((default, exceptions)) or
    COLUMN_CHARSET (one per column) metadata."""
    if field is None:
        return []
    if field.kind in (
        OptionalMetadata.COLUMN_CHARSET,
        OptionalMetadata.ENUM_AND_SET_COLUMN_CHARSET,
    ):
        return list(field.value)
    default, exceptions = field.value
    ids = [default] * count
    for index, collation in exceptions:
        if index < count:
            ids[index] = collation
    return ids


def table_from_map(event: TableMapEvent) -> CatalogueTable:
    """What a TABLE_MAP tells of its table (see the module docstring)."""
    fields = {f.kind: f for f in event.optional_metadata}
    types, metas = event.column_types, event.column_meta
    width = len(types)
    names_field = fields.get(OptionalMetadata.COLUMN_NAME)
    names = [
        (n.decode("utf-8", "replace") if isinstance(n, bytes) else str(n))
        for n in (names_field.value if names_field else ())
    ] or [f"@{i + 1}" for i in range(width)]
    signedness = (
        list(fields[OptionalMetadata.SIGNEDNESS].value)
        if OptionalMetadata.SIGNEDNESS in fields
        else []
    )
    charset_positions = [i for i in range(width) if _has_charset(types[i], metas[i])]
    text_field = fields.get(OptionalMetadata.DEFAULT_CHARSET) or fields.get(
        OptionalMetadata.COLUMN_CHARSET
    )
    collations = dict(
        zip(charset_positions, _charsets(text_field, len(charset_positions)), strict=False)
    )
    enum_positions = [i for i in range(width) if _is_enum_set(types[i], metas[i])]
    enum_field = fields.get(OptionalMetadata.ENUM_AND_SET_DEFAULT_CHARSET) or fields.get(
        OptionalMetadata.ENUM_AND_SET_COLUMN_CHARSET
    )
    collations.update(zip(enum_positions, _charsets(enum_field, len(enum_positions)), strict=False))
    enums = (
        list(fields[OptionalMetadata.ENUM_STR_VALUE].value)
        if OptionalMetadata.ENUM_STR_VALUE in fields
        else []
    )
    sets = (
        list(fields[OptionalMetadata.SET_STR_VALUE].value)
        if OptionalMetadata.SET_STR_VALUE in fields
        else []
    )
    columns: list[CatalogueColumn] = []
    sign_index = 0
    for position in range(width):
        kind, meta = types[position], metas[position]
        unsigned = False
        if kind in _SIGNED_TYPES:
            if sign_index < len(signedness):
                unsigned = bool(signedness[sign_index]) and kind != ColumnType.YEAR
            sign_index += 1
        known = collations.get(position)
        collation = collation_by_id(known) if known is not None else None
        binary = collation is not None and collation.id == BINARY_COLLATION_ID
        textual = position in charset_positions or position in enum_positions
        if not textual or binary:
            text_collation = None
        else:
            text_collation = collation.name if collation is not None else _DEFAULT_TEXT
        mbmaxlen = 1 if binary else collation.mbmaxlen if collation is not None else 4
        facts: dict[str, Any] = {
            "nullable": position < len(event.nullable) and event.nullable[position]
        }
        if kind in _INTEGERS:
            facts.update(data_type=_INTEGERS[ColumnType(kind)], unsigned=unsigned)
        elif kind == ColumnType.NEWDECIMAL:
            facts.update(
                data_type="decimal", precision=meta & 0xFF, scale=meta >> 8, unsigned=unsigned
            )
        elif kind in (ColumnType.FLOAT, ColumnType.DOUBLE):
            facts.update(
                data_type="float" if kind == ColumnType.FLOAT else "double", unsigned=unsigned
            )
        elif kind == ColumnType.BIT:
            facts.update(data_type="bit", length=(meta >> 8) * 8 + (meta & 0xFF))
        elif kind == ColumnType.YEAR:
            facts.update(data_type="year")
        elif kind in (ColumnType.DATE, ColumnType.NEWDATE):
            facts.update(data_type="date")
        elif kind in (ColumnType.TIME, ColumnType.TIME2):
            facts.update(data_type="time", fsp=meta if kind == ColumnType.TIME2 else 0)
        elif kind in (ColumnType.DATETIME, ColumnType.DATETIME2):
            facts.update(data_type="datetime", fsp=meta if kind == ColumnType.DATETIME2 else 0)
        elif kind in (ColumnType.TIMESTAMP, ColumnType.TIMESTAMP2):
            facts.update(data_type="timestamp", fsp=meta if kind == ColumnType.TIMESTAMP2 else 0)
        elif kind in (ColumnType.VARCHAR, ColumnType.VAR_STRING):
            facts.update(
                data_type="varbinary" if binary else "varchar",
                length=meta if binary else meta // mbmaxlen,
                collation=text_collation,
            )
        elif kind == ColumnType.BLOB:
            size = _BLOBS.get(meta, "long")
            facts.update(
                data_type=f"{size}{'blob' if binary else 'text'}", collation=text_collation
            )
        elif _is_enum_set(kind, meta):
            real = string_metadata(meta)[0] if kind == ColumnType.STRING else kind
            is_enum = real in (STRING_REAL_ENUM, ColumnType.ENUM)
            pool = enums if is_enum else sets
            members = pool.pop(0) if pool else ()
            codec = _CODECS.get(collation.charset if collation else "utf8mb4") or "utf-8"
            facts.update(
                data_type="enum" if is_enum else "set",
                members=tuple(
                    m.decode(codec, "replace") if isinstance(m, bytes) else str(m) for m in members
                ),
                collation=text_collation,
            )
        elif kind == ColumnType.STRING:
            _, max_len = string_metadata(meta)
            facts.update(
                data_type="binary" if binary else "char",
                length=max_len if binary else max_len // mbmaxlen,
                collation=text_collation,
            )
        else:
            facts.update(data_type="geometry" if kind == ColumnType.GEOMETRY else "blob")
        if facts["nullable"]:
            facts["default"] = "NULL"
        columns.append(CatalogueColumn(name=names[position], **facts))
    keys: list[CatalogueKey] = []
    key_field = fields.get(OptionalMetadata.SIMPLE_PRIMARY_KEY) or fields.get(
        OptionalMetadata.PRIMARY_KEY_WITH_PREFIX
    )
    if key_field is not None and key_field.value:
        parts = [p[0] if isinstance(p, tuple) else p for p in key_field.value]
        keys.append(CatalogueKey("PRIMARY", tuple(names[p] for p in parts if p < width)))
    return CatalogueTable(event.database, event.table, tuple(columns), tuple(keys))


class EmptySnapshot:
    """A binlog's tables read at any point: no rows (the binlog holds changes, not contents)."""

    def rows(self, table: CatalogueTable) -> Sequence[Sequence[CellValue]]:
        return []


_DROP_TABLE = re.compile(
    r"^\s*DROP\s+(?:TEMPORARY\s+)?TABLE\s+(?:IF\s+EXISTS\s+)?(.*)$", re.I | re.S
)
_DROP_DATABASE = re.compile(r"^\s*DROP\s+(?:DATABASE|SCHEMA)\s+(?:IF\s+EXISTS\s+)?(\S+)", re.I)
_CREATE_DATABASE = re.compile(
    r"^\s*CREATE\s+(?:OR\s+REPLACE\s+)?(?:DATABASE|SCHEMA)\s+(?:IF\s+NOT\s+EXISTS\s+)?([^\s;]+)",
    re.I,
)
_RENAME = re.compile(r"^\s*RENAME\s+TABLES?\s+(.*)$", re.I | re.S)
_NAME = re.compile(r"`((?:[^`]|``)+)`|([^\s,.`]+)")


def _names(text: str) -> list[tuple[str | None, str]]:
    """``[db.]table`` names of a comma-separated list (comments after them ignored)."""
    out: list[tuple[str | None, str]] = []
    for item in text.split(","):
        parts = [
            m.group(1).replace("``", "`") if m.group(1) else m.group(2)
            for m in _NAME.finditer(item.split("/*")[0])
        ]
        parts = [p for p in parts if p.upper() not in ("RESTRICT", "CASCADE", "WAIT", "NOWAIT")]
        if len(parts) >= 2:
            out.append((parts[0], parts[1]))
        elif parts:
            out.append((None, parts[0]))
    return out


class BinlogCatalogue:
    """The tables of a binlog store, read incrementally as it grows (thread-safe)."""

    def __init__(self, store: Any) -> None:
        self.store = store
        self._lock = threading.Lock()
        self._offsets: dict[str, int] = {}
        self._contexts: dict[str, BinlogContext] = {}
        self._tables: dict[tuple[str, str], CatalogueTable] = {}
        self._databases: set[str] = set()

    def _scan(self) -> None:
        with self._lock:
            for name in self.store.file_names():
                start = self._offsets.get(name, 4)
                ctx = self._contexts.setdefault(name, BinlogContext())
                end = start
                for offset, data in self.store.iter_events(name, start):
                    end = offset + len(data)
                    if data[_TYPE_OFFSET] not in _WANTED:
                        continue
                    try:
                        event = decode_event(data, ctx, offset=offset)
                    except Exception:  # an event this catalogue cannot read tells it nothing
                        continue
                    self._take(event)
                self._offsets[name] = end

    def _take(self, event: Any) -> None:
        if isinstance(event, TableMapEvent):
            table = table_from_map(event)
            self._tables[(table.database, table.name)] = table
            self._databases.add(table.database)
        elif isinstance(event, QueryEvent):
            self._ddl(event.database, event.query.decode("utf-8", "replace"))

    def _ddl(self, current: str, query: str) -> None:
        if match := _DROP_TABLE.match(query):
            for database, name in _names(match.group(1)):
                self._tables.pop((database or current, name), None)
        elif match := _DROP_DATABASE.match(query):
            for _, gone in _names(match.group(1))[:1]:
                self._databases.discard(gone)
                for key in [k for k in self._tables if k[0] == gone]:
                    del self._tables[key]
        elif match := _CREATE_DATABASE.match(query):
            for _, name in _names(match.group(1))[:1]:
                self._databases.add(name)
        elif match := _RENAME.match(query):
            for pair in match.group(1).split(","):
                pieces = re.split(r"\s+TO\s+", pair, flags=re.I)
                olds, news = (
                    (_names(pieces[0]), _names(pieces[1])) if len(pieces) == 2 else ([], [])
                )
                if not olds or not news:
                    continue
                (old_db, old_name), (new_db, new_name) = olds[0], news[0]
                table = self._tables.pop((old_db or current, old_name), None)
                if table is not None:
                    moved = replace(table, database=new_db or current, name=new_name, _positions={})
                    self._tables[(moved.database, moved.name)] = moved
                    self._databases.add(moved.database)

    def databases(self) -> Sequence[str]:
        self._scan()
        return sorted(self._databases | {db for db, _ in self._tables})

    def tables(self, database: str) -> Sequence[CatalogueTable]:
        self._scan()
        return sorted(
            (t for (db, _), t in self._tables.items() if db == database), key=lambda t: t.name
        )

    def snapshot(self) -> EmptySnapshot:
        return EmptySnapshot()

    def text_codec(self, charset: str) -> str | None:
        return _CODECS.get(charset, "utf-8")


# The character sets a binlog's text columns are shown in (others: as UTF-8).
_CODECS = {
    "utf8mb4": "utf-8",
    "utf8mb3": "utf-8",
    "latin1": "cp1252",
    "ascii": "ascii",
    "binary": None,
}
