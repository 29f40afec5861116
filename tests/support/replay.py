"""Replaying decoded binlog events into per-table row state, and checking that state and the
binlog bytes against what the server says.

:class:`Replayer` applies WRITE/UPDATE/DELETE rows events the way a replica would, per event
group (GTID ... XID/COMMIT), so that only committed changes count: a group ending in a
non-one-phase XA_PREPARE is held until its ``XA COMMIT`` (or dropped on ``XA ROLLBACK``), and
``ROLLBACK TO SAVEPOINT`` drops the changes logged after the savepoint. Rows are located by
their before image: every column present in the image must equal the stored value, so FULL
images match on the whole row and MINIMAL images on the primary key (or on the whole row of a
table without one). A column the binlog never carried for a row (left out of a MINIMAL write,
or added by ``ALTER TABLE`` after the row was logged) stays ``ABSENT``: the server filled it in
and the binlog cannot tell the value.

A few statements change tables without rows events and are tracked from their QUERY text:
``CREATE TABLE`` (starts an empty table), ``DROP TABLE``, ``DROP DATABASE``, ``TRUNCATE``,
``RENAME TABLE``. Statement-based DML (QUERY events with INSERT/UPDATE/DELETE/REPLACE, and
EXECUTE_LOAD_QUERY) is not executed: the target table is recorded in
:attr:`Replayer.statement_tables`, and its rows can only be partly checked.

:func:`roundtrip_file` decodes every event of a binlog file, re-encodes it with a fresh
context and compares the bytes, and re-writes the whole file; :func:`compare_table` compares a
replayed table with the server's rows rendered by :mod:`tests.support.sql_text`.
"""

from __future__ import annotations

import io
import re
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from decoder.binlog_file import iter_raw_events, read_binlog
from decoder.core import decode_event
from encoder.binlog_file import BinlogWriter
from encoder.core import encode_event
from fakemaster.vocabulary.constants import EventType, GtidFlag, event_type_name
from fakemaster.vocabulary.context import BinlogContext
from fakemaster.vocabulary.errors import DecodeError
from fakemaster.vocabulary.events import (
    Event,
    ExecuteLoadQueryEvent,
    GtidEvent,
    QueryEvent,
    RowsEvent,
    TableMapEvent,
    UpdateRowsEvent,
    XaPrepareEvent,
    XaXid,
    XidEvent,
)
from fakemaster.vocabulary.values import ABSENT
from tests.peers.workload import DATABASE, TableResult, WorkloadResult
from tests.support.sql_text import RenderError, render

TableName = tuple[str, str]  # (database, table)


class ReplayError(AssertionError):
    """The events cannot be applied (no row matches a before image, an unknown table id, ...)."""


def short(value: Any, limit: int = 120) -> str:
    """repr() cut to ``limit`` characters, with the length of long bytes values."""
    text = repr(value)
    if isinstance(value, bytes | bytearray) and len(value) > 40:
        text = f"<{len(value)} bytes> {text}"
    return text if len(text) <= limit else text[: limit - 3] + "..."


# --- replay -------------------------------------------------------------------------------


@dataclass
class TableState:
    database: str
    table: str
    width: int
    rows: list[list[Any]] = field(default_factory=list)
    # Per cell, the event (file@offset type row n) that last set it.
    origins: list[list[str]] = field(default_factory=list)
    # Column count before each ALTER that widened the table while it had rows.
    widened_from: list[int] = field(default_factory=list)
    rows_events: int = 0


@dataclass
class _Change:
    kind: str  # "write", "update", "delete"
    table: TableName
    width: int
    rows: tuple[Any, ...]
    where: str


@dataclass
class _Group:
    where: str
    gtid: GtidEvent | None
    changes: list[_Change] = field(default_factory=list)
    savepoints: dict[str, int] = field(default_factory=dict)


_NAME = r"(?:`(?:[^`]|``)+`|[\w$]+)"
_QUALIFIED = rf"({_NAME})(?:\s*\.\s*({_NAME}))?"
_COMMENTS = re.compile(r"/\*.*?\*/|--[^\n]*|#[^\n]*", re.DOTALL)
_DML_TARGET = [
    re.compile(
        rf"^(?:INSERT|REPLACE)\s+(?:LOW_PRIORITY\s+|DELAYED\s+|HIGH_PRIORITY\s+)?"
        rf"(?:IGNORE\s+)?(?:INTO\s+)?{_QUALIFIED}",
        re.IGNORECASE,
    ),
    re.compile(rf"^UPDATE\s+(?:LOW_PRIORITY\s+)?(?:IGNORE\s+)?{_QUALIFIED}", re.IGNORECASE),
    re.compile(
        rf"^DELETE\s+(?:LOW_PRIORITY\s+)?(?:QUICK\s+)?(?:IGNORE\s+)?FROM\s+{_QUALIFIED}",
        re.IGNORECASE,
    ),
    re.compile(rf"^LOAD\s+DATA\b.*?\bINTO\s+TABLE\s+{_QUALIFIED}", re.IGNORECASE | re.DOTALL),
]
_DML_WORDS = ("INSERT", "REPLACE", "UPDATE", "DELETE", "LOAD")


def _unquote(name: str) -> str:
    if name.startswith("`"):
        return name[1:-1].replace("``", "`")
    return name


def _qualified(first: str, second: str | None, default_db: str) -> TableName:
    if second is None:
        return (default_db, _unquote(first))
    return (_unquote(first), _unquote(second))


def _table_list(text: str, default_db: str) -> list[TableName]:
    return [_qualified(m.group(1), m.group(2), default_db) for m in re.finditer(_QUALIFIED, text)]


class Replayer:
    """Per-table row state built from decoded events fed in binlog order (all files)."""

    def __init__(self) -> None:
        self.tables: dict[TableName, TableState] = {}
        self.dropped: set[TableName] = set()
        # Tables changed by statement-based DML: the queries (and where they were).
        self.statement_tables: dict[TableName, list[str]] = {}
        self._maps: dict[int, TableMapEvent] = {}
        self._group: _Group | None = None
        self._prepared: dict[XaXid, list[_Change]] = {}
        self.applied_changes = 0
        # What could not be applied; the replay goes on without it, so that one bad event
        # does not hide the state of every other table.
        self.errors: list[str] = []

    # -- feeding ---------------------------------------------------------------------------

    def feed_all(self, events: Iterable[tuple[str, Event]]) -> None:
        for where, event in events:
            self.feed(event, where)

    def feed(self, event: Event, where: str = "") -> None:
        try:
            self._feed(event, where)
        except ReplayError as exc:
            self.errors.append(str(exc))

    def _feed(self, event: Event, where: str) -> None:
        if isinstance(event, GtidEvent):
            self._close_unterminated(where)
            self._group = _Group(where, event)
        elif isinstance(event, TableMapEvent):
            self._maps[event.table_id] = event
        elif isinstance(event, RowsEvent):
            self._add_rows(event, where)
        elif isinstance(event, XidEvent):
            self._commit(where)
        elif isinstance(event, XaPrepareEvent):
            group = self._take_group(where)
            if event.one_phase:
                self._apply_all(group.changes)
            else:
                self._prepared[event.xid] = group.changes
        elif isinstance(event, QueryEvent):
            self._query(event, where)
        elif isinstance(event, ExecuteLoadQueryEvent):
            self._statement_dml(event.query, event.database, where)

    def finish(self) -> None:
        """Check that no event group was left open (a group never ends in another file)."""
        self._close_unterminated("end of the binlog")

    @property
    def prepared_xids(self) -> list[XaXid]:
        return list(self._prepared)

    # -- groups ----------------------------------------------------------------------------

    def _close_unterminated(self, where: str) -> None:
        group = self._group
        self._group = None
        if group is not None and group.changes:
            self.errors.append(
                f"{where}: the event group started at {group.where} has"
                f" {len(group.changes)} rows change(s) but ended without XID/COMMIT/XA_PREPARE"
            )

    def _take_group(self, where: str) -> _Group:
        group = self._group
        self._group = None
        return group if group is not None else _Group(where, None)

    def _commit(self, where: str) -> None:
        self._apply_all(self._take_group(where).changes)

    def _add_rows(self, event: RowsEvent, where: str) -> None:
        table_map = self._maps.get(event.table_id)
        if table_map is None:
            raise ReplayError(f"{where}: rows event for unmapped table id {event.table_id}")
        name = (table_map.database, table_map.table)
        change = _Change(event.KIND, name, len(table_map.column_types), event.rows, where)
        if self._group is None:
            self._apply(change)  # an event outside any group: apply as it comes
        else:
            self._group.changes.append(change)

    # -- statements ------------------------------------------------------------------------

    def _query(self, event: QueryEvent, where: str) -> None:
        text = _COMMENTS.sub(" ", event.query.decode("utf-8", "replace")).strip()
        upper = text.upper()
        words = upper.split()
        if not words:
            return
        db = event.database
        if upper == "COMMIT":
            self._commit(where)
        elif upper == "BEGIN":
            pass
        elif upper == "ROLLBACK":
            raise ReplayError(
                f"{where}: event group ends in ROLLBACK (non-transactional changes in a"
                " rolled-back transaction): which of its changes persisted is not modelled"
            )
        elif words[0] == "SAVEPOINT" and len(words) == 2 and self._group is not None:
            self._group.savepoints[_unquote(text.split()[1])] = len(self._group.changes)
        elif upper.startswith("ROLLBACK TO"):
            name = _unquote(text.split()[-1])
            group = self._group
            if group is None or name not in group.savepoints:
                raise ReplayError(f"{where}: {text!r} without its SAVEPOINT in the group")
            del group.changes[group.savepoints[name] :]
        elif upper.startswith(("XA COMMIT", "XA ROLLBACK")):
            group = self._take_group(where)
            gtid = group.gtid
            if gtid is None or not gtid.flags2 & GtidFlag.COMPLETED_XA or gtid.xid is None:
                raise ReplayError(f"{where}: {text!r} without a COMPLETED_XA GTID")
            changes = self._prepared.pop(gtid.xid, None)
            if changes is None:
                raise ReplayError(f"{where}: {text!r} for an XA transaction never prepared here")
            if upper.startswith("XA COMMIT"):
                self._apply_all(changes)
        elif words[0] in _DML_WORDS:
            self._statement_dml(event.query, db, where)
        else:
            self._ddl(text, upper, db, where)

    def _statement_dml(self, query: bytes, db: str, where: str) -> None:
        text = _COMMENTS.sub(" ", query.decode("utf-8", "replace")).strip()
        for pattern in _DML_TARGET:
            match = pattern.match(text)
            if match:
                name = _qualified(match.group(1), match.group(2), db)
                self.statement_tables.setdefault(name, []).append(f"{where}: {text[:200]}")
                return
        raise ReplayError(f"{where}: cannot tell the target table of statement {text[:200]!r}")

    def _ddl(self, text: str, upper: str, db: str, where: str) -> None:
        if re.match(r"CREATE\s+(?:OR\s+REPLACE\s+)?(?:TEMPORARY\s+)?TABLE\b", upper):
            if "TEMPORARY" in upper.split("TABLE", 1)[0]:
                return
            match = re.search(rf"TABLE\s+(?:IF\s+NOT\s+EXISTS\s+)?{_QUALIFIED}", text, re.I)
            if match:
                name = _qualified(match.group(1), match.group(2), db)
                if name in self.tables and "IF NOT EXISTS" in upper:
                    return
                self.tables.pop(name, None)
                self.dropped.discard(name)
        elif re.match(r"DROP\s+(?:TEMPORARY\s+)?TABLE\b", upper):
            rest = re.sub(
                r"^DROP\s+(?:TEMPORARY\s+)?TABLES?\s+(?:IF\s+EXISTS\s+)?", "", text, flags=re.I
            )
            for name in _table_list(rest, db):
                self.tables.pop(name, None)
                self.dropped.add(name)
        elif re.match(r"DROP\s+(?:DATABASE|SCHEMA)\b", upper):
            match = re.search(rf"(?:DATABASE|SCHEMA)\s+(?:IF\s+EXISTS\s+)?({_NAME})", text, re.I)
            if match:
                dropped_db = _unquote(match.group(1))
                for name in [n for n in self.tables if n[0] == dropped_db]:
                    del self.tables[name]
                    self.dropped.add(name)
        elif re.match(r"TRUNCATE\b", upper):
            match = re.search(rf"TRUNCATE\s+(?:TABLE\s+)?{_QUALIFIED}", text, re.I)
            if match:
                name = _qualified(match.group(1), match.group(2), db)
                if name in self.tables:
                    self.tables[name].rows.clear()
                    self.tables[name].origins.clear()
        elif re.match(r"RENAME\s+TABLES?\b", upper):
            pairs = re.findall(rf"{_QUALIFIED}\s+TO\s+{_QUALIFIED}", text[6:], re.I)
            for a1, a2, b1, b2 in pairs:
                old = _qualified(a1, a2 or None, db)
                new = _qualified(b1, b2 or None, db)
                if old in self.tables:
                    state = self.tables.pop(old)
                    state.database, state.table = new
                    self.tables[new] = state
        elif re.match(r"ALTER\s+(?:ONLINE\s+)?(?:IGNORE\s+)?TABLE\b", upper) and re.search(
            r"\bRENAME\b(?!\s+(?:COLUMN|INDEX|KEY))", upper
        ):
            raise ReplayError(f"{where}: ALTER TABLE ... RENAME is not modelled: {text[:200]!r}")

    # -- applying rows ---------------------------------------------------------------------

    def _apply_all(self, changes: Sequence[_Change]) -> None:
        for change in changes:
            self._apply(change)

    def _state(self, change: _Change) -> TableState:
        state = self.tables.get(change.table)
        if state is None:
            state = TableState(change.table[0], change.table[1], change.width)
            self.tables[change.table] = state
            self.dropped.discard(change.table)
        elif change.width != state.width:
            if change.width < state.width and state.rows:
                raise ReplayError(
                    f"{change.where}: {'.'.join(change.table)} shrank from {state.width} to"
                    f" {change.width} columns (a dropped column is not modelled)"
                )
            if state.rows:
                state.widened_from.append(state.width)
                for row in state.rows:
                    row.extend([ABSENT] * (change.width - state.width))
                for origin in state.origins:
                    origin.extend([change.where] * (change.width - state.width))
            state.width = change.width
        return state

    def _apply(self, change: _Change) -> None:
        state = self._state(change)
        state.rows_events += 1
        self.applied_changes += 1
        for index, row in enumerate(change.rows):
            try:
                self._apply_row(state, change.kind, row, f"{change.where} row {index}")
            except ReplayError as exc:
                self.errors.append(str(exc))

    def _apply_row(self, state: TableState, kind: str, row: Any, where: str) -> None:
        if kind == "write":
            self._check_width(row, state, where)
            state.rows.append(list(row))
            state.origins.append([where] * len(row))
        elif kind == "delete":
            self._check_width(row, state, where)
            n = self._find(state, row, where)
            del state.rows[n]
            del state.origins[n]
        else:
            before, after = row
            self._check_width(before, state, where)
            self._check_width(after, state, where)
            n = self._find(state, before, where)
            target, origin = state.rows[n], state.origins[n]
            for i, value in enumerate(before):
                if target[i] is ABSENT and value is not ABSENT:
                    target[i] = value  # a MINIMAL before image can fill in an unknown cell
                    origin[i] = where
            for i, value in enumerate(after):
                if value is not ABSENT:
                    target[i] = value
                    origin[i] = where

    @staticmethod
    def _check_width(row: Sequence[Any], state: TableState, where: str) -> None:
        if len(row) != state.width:
            raise ReplayError(
                f"{where}: {state.database}.{state.table} row image has {len(row)} values,"
                f" the TABLE_MAP {state.width} columns"
            )

    @staticmethod
    def _find(state: TableState, image: Sequence[Any], where: str) -> int:
        present = [(i, v) for i, v in enumerate(image) if v is not ABSENT]
        matches = [
            n
            for n, row in enumerate(state.rows)
            if all(row[i] is ABSENT or _same(row[i], v) for i, v in present)
        ]
        if not matches:
            raise ReplayError(
                f"{where}: no row of {state.database}.{state.table} ({len(state.rows)} rows)"
                f" matches the before image {short(tuple(image), 300)}"
            )
        first = state.rows[matches[0]]
        for n in matches[1:]:
            if any(not _same(a, b) for a, b in zip(first, state.rows[n], strict=True)):
                raise ReplayError(
                    f"{where}: before image {short(tuple(image), 300)} matches"
                    f" {len(matches)} different rows of {state.database}.{state.table}"
                )
        return matches[0]


def _same(a: Any, b: Any) -> bool:
    if a is ABSENT or b is ABSENT:
        return a is b
    if a is None or b is None:
        return a is b
    return type(a) is type(b) and bool(a == b)


# --- decoding, re-encoding and re-writing files -------------------------------------------


@dataclass
class FileReport:
    """What checking one binlog file found. ``events`` are the decoded events in order."""

    path: Path
    size: int = 0
    events: list[tuple[int, Event]] = field(default_factory=list)
    type_counts: Counter[int] = field(default_factory=Counter)
    problems: list[str] = field(default_factory=list)
    # (offset, type code, length) of every event, decoded or not.
    layout: list[tuple[int, int, int]] = field(default_factory=list)

    def where(self, offset: int) -> str:
        return f"{self.path.name}@{offset}"

    def labelled_events(self) -> Iterator[tuple[str, Event]]:
        for offset, event in self.events:
            yield f"{self.where(offset)} {event_type_name(event.type_code)}", event


def _first_difference(a: bytes, b: bytes) -> int:
    limit = min(len(a), len(b))
    step = 4096
    for start in range(0, limit, step):
        if a[start : start + step] != b[start : start + step]:
            for i in range(start, min(start + step, limit)):
                if a[i] != b[i]:
                    return i
    return limit


def _hex_around(data: bytes, at: int, radius: int = 12) -> str:
    start = max(0, at - radius)
    return f"[{start}:{min(len(data), at + radius)}] {data[start : at + radius].hex(' ')}"


def _field_differences(original: Event, again: Event) -> list[str]:
    if type(original) is not type(again):
        return [f"re-decodes as {type(again).__name__}"]
    out = []
    for f in fields(original):
        a, b = getattr(original, f.name), getattr(again, f.name)
        if a != b:
            out.append(f"{f.name}: decoded {short(a, 200)} / re-decoded {short(b, 200)}")
    return out


def roundtrip_file(
    path: Path,
    *,
    temporal_precisions: dict[tuple[str, str], tuple[int, ...]] | None = None,
    max_problems: int = 40,
) -> FileReport:
    """Decode every event of ``path``, re-encode each one (fresh context per file) and compare
    the bytes, then re-write the whole file with BinlogWriter and compare it to the original.
    ``temporal_precisions`` is the schema knowledge MariaDB 5.3-format temporal columns need."""
    report = FileReport(path)
    data = path.read_bytes()
    report.size = len(data)
    decode_ctx = BinlogContext(temporal_precisions=dict(temporal_precisions or {}))
    encode_ctx = BinlogContext(temporal_precisions=dict(temporal_precisions or {}))
    problems: list[str] = []
    undecoded: dict[int, bytes] = {}
    for offset, raw in iter_raw_events(path):
        code = raw[4]
        name = event_type_name(code)
        report.layout.append((offset, code, len(raw)))
        report.type_counts[code] += 1
        label = f"{report.where(offset)} {name} ({len(raw)} bytes)"
        try:
            event = decode_event(raw, decode_ctx, offset=offset)
        except Exception as exc:  # report every failure, keep going with the next event
            undecoded[offset] = raw
            table = ""
            if code in _ROWS_CODES and len(raw) >= 25:
                table_id = int.from_bytes(raw[19 : 19 + decode_ctx.table_id_size], "little")
                tm = decode_ctx.table_maps.get(table_id)
                if tm is not None:
                    table = f" table {tm.database}.{tm.table} columns {_column_types(tm)}"
            problems.append(f"{label}: decode failed: {type(exc).__name__}: {exc}{table}")
            continue
        report.events.append((offset, event))
        try:
            encoded = encode_event(event, encode_ctx)
        except Exception as exc:
            problems.append(f"{label}: encode failed: {type(exc).__name__}: {exc}")
            continue
        if encoded != raw:
            at = _first_difference(encoded, raw)
            detail = (
                f"{label}: re-encoded bytes differ at byte {at} (lengths {len(encoded)} /"
                f" {len(raw)}): original {_hex_around(raw, at)} re-encoded"
                f" {_hex_around(encoded, at)}"
            )
            try:
                again = decode_event(
                    encoded, decode_ctx.copy(), offset=offset, verify_checksum=False
                )
                diffs = _field_differences(event, again)
                if diffs:
                    detail += "; fields: " + "; ".join(diffs)
            except Exception as exc:
                detail += f"; the re-encoded bytes do not decode: {exc}"
            problems.append(detail)
    problems += _check_read_binlog(path, report, undecoded, temporal_precisions or {})
    # The whole file again through BinlogWriter; an event that did not decode is copied as it
    # is, so that the rest of the file is still checked.
    out = io.BytesIO()
    writer = BinlogWriter(
        out, ctx=BinlogContext(temporal_precisions=dict(temporal_precisions or {}))
    )
    decoded = dict(report.events)
    copied = f" ({len(undecoded)} undecodable event(s) copied raw)" if undecoded else ""
    try:
        for offset, _code, _length in report.layout:
            if offset in undecoded:
                writer.write_raw(undecoded[offset])
            else:
                writer.write(decoded[offset])
        rewritten = out.getvalue()
        if rewritten != data:
            at = _first_difference(rewritten, data)
            problems.append(
                f"{path.name}: re-written file{copied} differs from the original at byte {at}"
                f" (sizes {len(rewritten)} / {len(data)}): original {_hex_around(data, at)}"
                f" re-written {_hex_around(rewritten, at)}"
            )
    except Exception as exc:
        problems.append(f"{path.name}: re-writing the file failed: {type(exc).__name__}: {exc}")
    if len(problems) > max_problems:
        problems = problems[:max_problems] + [f"... and {len(problems) - max_problems} more"]
    report.problems = problems
    return report


def _check_read_binlog(
    path: Path,
    report: FileReport,
    undecoded: dict[int, bytes],
    temporal_precisions: dict[tuple[str, str], tuple[int, ...]],
) -> list[str]:
    """read_binlog (the file reader) must give the same events as decoding one by one, and
    stop with a DecodeError exactly at the first event that does not decode."""
    decoded = dict(report.events)
    first_bad = min(undecoded) if undecoded else None
    seen = 0
    try:
        ctx = BinlogContext(temporal_precisions=dict(temporal_precisions))
        for offset, event in read_binlog(path, ctx=ctx):
            seen += 1
            if decoded.get(offset) != event:
                return [
                    f"{report.where(offset)}: read_binlog gives {short(event, 300)}, decoding"
                    f" the event alone gives {short(decoded.get(offset), 300)}"
                ]
    except DecodeError as exc:
        if first_bad is None or not first_bad <= exc.offset < first_bad + len(undecoded[first_bad]):
            return [f"{path.name}: read_binlog failed at {exc.offset}: {exc}"]
        return []
    except Exception as exc:
        return [f"{path.name}: read_binlog raised {type(exc).__name__}: {exc}"]
    if first_bad is not None:
        return [f"{path.name}: read_binlog decoded the event at {first_bad} that failed alone"]
    if seen != len(report.layout):
        return [f"{path.name}: read_binlog gave {seen} events, the file has {len(report.layout)}"]
    return []


_ROWS_CODES = frozenset(
    {
        EventType.WRITE_ROWS_V1,
        EventType.UPDATE_ROWS_V1,
        EventType.DELETE_ROWS_V1,
        EventType.WRITE_ROWS_V2,
        EventType.UPDATE_ROWS_V2,
        EventType.DELETE_ROWS_V2,
        EventType.WRITE_ROWS_COMPRESSED_V1,
        EventType.UPDATE_ROWS_COMPRESSED_V1,
        EventType.DELETE_ROWS_COMPRESSED_V1,
        EventType.WRITE_ROWS_COMPRESSED,
        EventType.UPDATE_ROWS_COMPRESSED,
        EventType.DELETE_ROWS_COMPRESSED,
    }
)


def _column_types(table_map: TableMapEvent) -> str:
    from fakemaster.vocabulary.constants import ColumnType

    names = []
    for code, meta in zip(table_map.column_types, table_map.column_meta, strict=False):
        try:
            names.append(f"{ColumnType(code).name}/{meta}")
        except ValueError:
            names.append(f"{code}/{meta}")
    return "(" + ", ".join(names) + ")"


# --- comparing with the server's rows -----------------------------------------------------


@dataclass
class TableComparison:
    name: str
    problems: list[str] = field(default_factory=list)
    compared_cells: int = 0
    # Cells the binlog never carried (ABSENT): (row key, column name).
    uncovered_cells: list[tuple[str, str]] = field(default_factory=list)
    # Server rows with no replayed counterpart, tolerated for statement-based tables.
    unreplayed_rows: int = 0


def _row_label(rendered: Sequence[Any], names: Sequence[str], key: Sequence[int]) -> str:
    if key:
        return ", ".join(f"{names[i]}={short(rendered[i], 40)}" for i in key)
    return short(tuple(rendered), 160)


def compare_table(
    state: TableState | None,
    expected: TableResult,
    *,
    statement_based: bool = False,
    max_problems: int = 30,
) -> TableComparison:
    """Compare replayed rows with the server's. Rows are paired by the primary key (from
    information_schema), or as a multiset for tables without one; ``ABSENT`` cells are not
    compared but counted. With ``statement_based`` the server may have rows the binlog's rows
    events never carried (statement-logged inserts); every replayed row must still match."""
    label = f"{expected.schema}.{expected.name}"
    result = TableComparison(label)
    problems = result.problems
    columns = expected.columns
    names = [c.name for c in columns]
    if state is None:
        if expected.rows and not statement_based:
            problems.append(
                f"{label}: no rows events replayed, the server has {len(expected.rows)} rows"
            )
        result.unreplayed_rows = len(expected.rows)
        return result
    if state.width != len(columns):
        problems.append(
            f"{label}: the binlog's TABLE_MAP has {state.width} columns, the server's table"
            f" {len(columns)} ({', '.join(names)})"
        )
        return result
    rendered_rows = [_rendered_row(row, columns) for row in state.rows]
    key = [i for i, c in enumerate(columns) if c.column_key == "PRI"]
    server_rows = list(expected.rows)
    pair = _pair_by_key if key else _pair_as_multiset
    pairs, unmatched_replayed, unmatched_server = pair(rendered_rows, server_rows, key)
    for r, n in pairs:
        rrow, srow, decoded = rendered_rows[r], server_rows[n], state.rows[r]
        origins = state.origins[r]
        row_label = _row_label(srow, names, key)
        for i, column in enumerate(columns):
            mine = rrow[i]
            if mine is ABSENT:
                result.uncovered_cells.append((row_label, column.name))
                continue
            result.compared_cells += 1
            if isinstance(mine, _Unrenderable):
                problems.append(
                    f"{label} [{row_label}] column {column.name} ({column.column_type}):"
                    f" decoded {short(decoded[i])} cannot be rendered: {mine.reason};"
                    f" server has {short(srow[i])} (value from {origins[i]})"
                )
            elif mine != srow[i]:
                problems.append(
                    f"{label} [{row_label}] column {column.name} ({column.column_type}):"
                    f" decoded {short(decoded[i])} renders as {short(mine)},"
                    f" server has {short(srow[i])} (value from {origins[i]})"
                )
    for r in unmatched_replayed:
        problems.append(
            f"{label}: replayed row (written by {state.origins[r][0]}) not on the server:"
            f" {short(tuple(state.rows[r]), 300)}"
            f" (rendered {short(tuple(rendered_rows[r]), 300)})"
        )
    if statement_based:
        result.unreplayed_rows = len(unmatched_server)
    else:
        for n in unmatched_server:
            problems.append(
                f"{label}: server row missing from the replay: {short(tuple(server_rows[n]), 300)}"
            )
    if len(problems) > max_problems:
        del problems[max_problems:]
        problems.append("... (more problems cut)")
    return result


def _rendered_row(row: Sequence[Any], columns: Sequence[Any]) -> list[Any]:
    """Every replayed cell rendered as the server shows it; a rendering failure is a mismatch of
    its own."""
    rendered: list[Any] = []
    for value, column in zip(row, columns, strict=True):
        if value is ABSENT:
            rendered.append(ABSENT)
            continue
        try:
            rendered.append(render(value, column))
        except RenderError as exc:
            rendered.append(_Unrenderable(value, str(exc)))
        except Exception as exc:  # a renderer bug must still name the cell
            rendered.append(_Unrenderable(value, f"{type(exc).__name__}: {exc}"))
    return rendered


# (replayed row, server row) pairs, the replayed rows without a pair, the server rows without one.
_Pairing = tuple[list[tuple[int, int]], list[int], list[int]]


def _pair_by_key(
    rendered_rows: list[list[Any]], server_rows: list[Any], key: list[int]
) -> _Pairing:
    by_key: dict[tuple[Any, ...], int] = {}
    for n, srow in enumerate(server_rows):
        by_key[tuple(srow[i] for i in key)] = n
    pairs: list[tuple[int, int]] = []
    unmatched_replayed: list[int] = []
    for r, rrow in enumerate(rendered_rows):
        n_or_none = by_key.pop(tuple(rrow[i] for i in key), None)
        if n_or_none is None:
            unmatched_replayed.append(r)
        else:
            pairs.append((r, n_or_none))
    return pairs, unmatched_replayed, sorted(by_key.values())


def _pair_as_multiset(
    rendered_rows: list[list[Any]], server_rows: list[Any], _key: list[int]
) -> _Pairing:
    """Rows of a table without a primary key: the most complete replayed rows pick first."""
    remaining = list(range(len(server_rows)))
    pairs: list[tuple[int, int]] = []
    unmatched_replayed: list[int] = []
    order = sorted(
        range(len(rendered_rows)), key=lambda r: sum(v is ABSENT for v in rendered_rows[r])
    )
    for r in order:
        rrow = rendered_rows[r]
        hit = next(
            (
                n
                for n in remaining
                if all(v is ABSENT or v == s for v, s in zip(rrow, server_rows[n], strict=True))
            ),
            None,
        )
        if hit is None:
            unmatched_replayed.append(r)
        else:
            remaining.remove(hit)
            pairs.append((r, hit))
    return pairs, unmatched_replayed, remaining


class _Unrenderable:
    """A decoded value sql_text refused; equal to nothing, so it never matches a server cell."""

    def __init__(self, value: Any, reason: str) -> None:
        self.value = value
        self.reason = reason

    def __eq__(self, other: object) -> bool:
        return False

    __hash__ = object.__hash__

    def __repr__(self) -> str:
        return f"<unrenderable {short(self.value, 60)}: {self.reason}>"


# --- what a set of binlog files contains --------------------------------------------------


@dataclass
class BinlogFeatures:
    """Facts about a variant's binlog files, so that a test can require the workload's
    coverage (and cannot pass on binlogs that lack what it is meant to exercise)."""

    files: int = 0
    type_counts: Counter[int] = field(default_factory=Counter)
    column_types: set[int] = field(default_factory=set)
    string_real_types: set[int] = field(default_factory=set)  # ENUM/SET/STRING under STRING
    largest_rows_event: tuple[int, str] = (0, "")
    multi_row_events: Counter[str] = field(default_factory=Counter)  # kind -> events, >= 2 rows
    partial_image_events: int = 0
    multi_table_groups: int = 0  # event groups mapping >= 2 different tables
    rotates_ending_files: int = 0  # files other than the last that end with a ROTATE
    ddl_queries: list[str] = field(default_factory=list)

    def has_type(self, code: int) -> bool:
        return self.type_counts[code] > 0


def binlog_features(reports: Sequence[FileReport]) -> BinlogFeatures:
    from fakemaster.vocabulary.constants import ColumnType

    features = BinlogFeatures(files=len(reports))
    for n, report in enumerate(reports):
        features.type_counts.update(report.type_counts)
        for offset, code, length in report.layout:
            if code in _ROWS_CODES and length > features.largest_rows_event[0]:
                features.largest_rows_event = (length, report.where(offset))
        if n + 1 < len(reports) and report.layout and report.layout[-1][1] == EventType.ROTATE:
            features.rotates_ending_files += 1
        group_tables: set[TableName] = set()
        for _offset, event in report.events:
            if isinstance(event, GtidEvent):
                group_tables = set()
            elif isinstance(event, TableMapEvent):
                before = len(group_tables)
                group_tables.add((event.database, event.table))
                if before == 1 and len(group_tables) == 2:
                    features.multi_table_groups += 1
                features.column_types.update(event.column_types)
                for code, meta in zip(event.column_types, event.column_meta, strict=False):
                    if code == ColumnType.STRING:
                        features.string_real_types.add((meta & 0xFF) | 0x30)
            elif isinstance(event, RowsEvent):
                if len(event.rows) >= 2:
                    features.multi_row_events[event.KIND] += 1
                images = (
                    [img for pair in event.rows for img in pair]
                    if isinstance(event, UpdateRowsEvent)
                    else list(event.rows)
                )
                if any(value is ABSENT for image in images for value in image):
                    features.partial_image_events += 1
            elif isinstance(event, QueryEvent):
                text = event.query.decode("utf-8", "replace").lstrip().upper()
                if text.startswith(("ALTER ", "CREATE ", "DROP ", "RENAME ", "TRUNCATE ")):
                    features.ddl_queries.append(text[:80])
    return features


# --- one variant, end to end --------------------------------------------------------------


@dataclass
class VariantCheck:
    reports: list[FileReport]
    replayer: Replayer
    comparisons: dict[str, TableComparison]
    problems: list[str]  # about the variant as a whole (tables, XA, ...)

    def file_problems(self) -> list[str]:
        return [p for report in self.reports for p in report.problems]

    def table_problems(self) -> list[str]:
        return [p for c in self.comparisons.values() for p in c.problems]

    def all_problems(self) -> list[str]:
        return self.file_problems() + self.problems + self.table_problems()


def check_variant(files: Sequence[Path], expected: WorkloadResult) -> VariantCheck:
    """Round-trip every file, replay all of them in order, compare every table of the
    workload database with the server's rows."""
    precisions = expected.temporal_precisions()
    reports = [roundtrip_file(Path(f), temporal_precisions=precisions) for f in files]
    replayer = Replayer()
    for report in reports:
        replayer.feed_all(report.labelled_events())
    replayer.finish()
    problems = [f"replay: {error}" for error in replayer.errors]
    if replayer.prepared_xids:
        problems.append(f"XA transactions prepared but never completed: {replayer.prepared_xids}")
    partial_images = expected.server_variables.get("binlog_row_image", "FULL").upper() != "FULL"
    comparisons: dict[str, TableComparison] = {}
    for name, table in expected.tables.items():
        key = (table.schema, name)
        state = replayer.tables.get(key)
        comparison = compare_table(state, table, statement_based=key in replayer.statement_tables)
        if (
            comparison.uncovered_cells
            and not partial_images
            and not (state is not None and state.widened_from)
        ):
            comparison.problems.append(
                f"{table.schema}.{name}: {len(comparison.uncovered_cells)} cell(s) the FULL-image"
                f" binlog never carried, e.g. {comparison.uncovered_cells[:3]}"
            )
        failed_here = [
            p
            for report in reports
            for p in report.problems
            if f" table {table.schema}.{name} " in p
        ]
        if comparison.problems and failed_here:
            comparison.problems.append(
                f"{table.schema}.{name}: {len(failed_here)} of its rows events failed to decode,"
                f" first: {failed_here[0]}"
            )
        comparisons[name] = comparison
    for (db, name), state in replayer.tables.items():
        if db == DATABASE and name not in expected.tables:
            problems.append(
                f"{db}.{name}: replayed ({len(state.rows)} rows) but not on the server"
                " (a DROP/RENAME the replay missed?)"
            )
    return VariantCheck(reports, replayer, comparisons, problems)


__all__ = [
    "BinlogFeatures",
    "FileReport",
    "ReplayError",
    "Replayer",
    "TableComparison",
    "TableState",
    "binlog_features",
    "compare_table",
    "roundtrip_file",
    "check_variant",
    "short",
]
