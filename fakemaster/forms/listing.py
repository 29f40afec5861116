"""A readable listing of binlog events, in the manner of ``mariadb-binlog -v``.

Each event gives ``# at <offset>``, a header line ``#<yymmdd hh:mm:ss> server id <id>
end_log_pos <pos> CRC32 0x<crc> <description>`` and then detail lines (query text, row images
as ``### INSERT INTO ...``). Times are printed in UTC, so a listing does not depend on the
machine's time zone (mariadb-binlog prints local time). It is a listing for people, not SQL to
replay: the ``SET``/``BINLOG`` statements mariadb-binlog writes for replay are left out.
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import math
from collections.abc import Callable, Iterable, Iterator, Sequence
from decimal import Decimal
from typing import TYPE_CHECKING, Any, cast

from fakemaster.vocabulary.constants import (
    CHECKSUM_LEN,
    HEADER_LEN,
    ChecksumAlg,
    ColumnType,
    EventFlag,
    GtidFlag,
    QueryStatus,
    RowsFlag,
    event_type_name,
)
from fakemaster.vocabulary.context import BinlogContext
from fakemaster.vocabulary.events import (
    AnnotateRowsEvent,
    AppendBlockEvent,
    BeginLoadQueryEvent,
    BinlogCheckpointEvent,
    DeleteFileEvent,
    DeleteRowsEvent,
    Event,
    ExecuteLoadQueryEvent,
    FormatDescriptionEvent,
    GtidEvent,
    GtidListEvent,
    HeartbeatEvent,
    IncidentEvent,
    IntvarEvent,
    QueryEvent,
    RandEvent,
    RotateEvent,
    RowsEvent,
    StartEncryptionEvent,
    StatusVar,
    StopEvent,
    TableMapEvent,
    UnknownEvent,
    UpdateRowsEvent,
    UserVarEvent,
    WriteRowsEvent,
    XaPrepareEvent,
    XaXid,
    XidEvent,
)
from fakemaster.vocabulary.header import (
    CRC,
    EVENT_LENGTH_OFFSET,
    FLAGS_OFFSET,
    HEADER,
    LOG_POS_OFFSET,
    SERVER_ID_OFFSET,
    TYPE_CODE_OFFSET,
)
from fakemaster.vocabulary.layouts import F32, F64, I64, U32, U64
from fakemaster.vocabulary.values import ABSENT, Date, DateTime, Time, Timestamp

_INTEGER_BITS: dict[int, int] = {
    ColumnType.TINY: 8,
    ColumnType.SHORT: 16,
    ColumnType.INT24: 24,
    ColumnType.LONG: 32,
    ColumnType.LONGLONG: 64,
}
_FRACTIONAL_TYPES = frozenset({ColumnType.TIME2, ColumnType.DATETIME2, ColumnType.TIMESTAMP2})


def format_time(seconds: int) -> str:
    """mariadb-binlog's ``yymmdd hh:mm:ss`` (hour space-padded), in UTC."""
    moment = _dt.datetime.fromtimestamp(seconds, _dt.UTC)
    return f"{moment:%y%m%d} {moment.hour:2d}:{moment:%M:%S}"


def event_bytes_at(data: bytes | memoryview, offset: int) -> bytes:
    """The whole event starting at ``offset`` of a binlog file's bytes (as far as it goes)."""
    if offset + EVENT_LENGTH_OFFSET + U32.size > len(data):
        return bytes(data[offset:])
    length = U32.unpack_from(data, offset + EVENT_LENGTH_OFFSET)[0]
    return bytes(data[offset : offset + max(length, 0)])


class Lister:
    """Formats events in file order; remembers the FDE and table maps, as a reader must."""

    def __init__(self, *, hexdump: bool = False) -> None:
        self.context = BinlogContext()
        self.hexdump = hexdump

    def observe(self, event: Event) -> None:
        """Take in an event that is read but not listed (before ``--start-position``)."""
        self.context.observe(event)

    def lines(self, offset: int, event: Event, raw: bytes | None = None) -> list[str]:
        """The listing of ``event`` found at ``offset``; ``raw`` is its bytes, for CRC and hex."""
        # Like mariadb-binlog, the CRC is shown only under the CRC32 algorithm: an FDE that
        # announces OFF still carries 4 checksum bytes, which mean nothing.
        if isinstance(event, FormatDescriptionEvent):
            has_crc = event.checksum_alg == ChecksumAlg.CRC32
        else:
            has_crc = self.context.checksum
        description, details = describe(event, self.context)
        crc = ""
        if has_crc and raw is not None and len(raw) >= HEADER_LEN + CHECKSUM_LEN:
            crc = f"CRC32 0x{CRC.unpack_from(raw, len(raw) - CHECKSUM_LEN)[0]:08x} "
        out = [f"# at {offset}"]
        head = (
            f"#{format_time(event.timestamp)} server id {event.server_id}  "
            f"end_log_pos {event.log_pos} {crc}"
        )
        if self.hexdump and raw is not None:
            out.append(head)
            out.extend(hexdump_lines(offset, raw))
            out.append(f"# Event: \t{description}")
        else:
            out.append(f"{head}\t{description}")
        out.extend(details)
        self.context.observe(event)
        return out


def list_events(
    events: Iterable[tuple[int, Event]], data: bytes | None = None, *, hexdump: bool = False
) -> Iterator[str]:
    """Listing lines of ``(offset, event)`` pairs; ``data`` is the file's bytes, if known."""
    lister = Lister(hexdump=hexdump)
    for offset, event in events:
        raw = event_bytes_at(data, offset) if data is not None else None
        yield from lister.lines(offset, event, raw)


# --- hexdump ------------------------------------------------------------------------------


def hexdump_lines(offset: int, raw: bytes) -> list[str]:
    """mariadb-binlog's ``--hexdump`` layout: the header's fields, then 16 bytes a line."""
    out = [
        "# Position",
        "#           |Timestamp   |Type |Master ID   |Size        |Master Pos  |Flags",
    ]
    if len(raw) >= HEADER.size:

        def hex_bytes(start: int, end: int) -> str:
            return " ".join(f"{byte:02x}" for byte in raw[start:end])

        out.append(
            f"# {offset:8x}  |{hex_bytes(0, TYPE_CODE_OFFSET)} "
            f"|{hex_bytes(TYPE_CODE_OFFSET, SERVER_ID_OFFSET)}   "
            f"|{hex_bytes(SERVER_ID_OFFSET, EVENT_LENGTH_OFFSET)} "
            f"|{hex_bytes(EVENT_LENGTH_OFFSET, LOG_POS_OFFSET)} "
            f"|{hex_bytes(LOG_POS_OFFSET, FLAGS_OFFSET)} |{hex_bytes(FLAGS_OFFSET, HEADER.size)}"
        )
        body_start = HEADER.size
    else:
        body_start = 0
    out.append("#")
    for start in range(body_start, len(raw), 16):
        chunk = raw[start : start + 16]
        left = " ".join(f"{byte:02x}" for byte in chunk[:8])
        right = " ".join(f"{byte:02x}" for byte in chunk[8:])
        text = "".join(chr(byte) if 0x20 <= byte < 0x7F else "." for byte in chunk)
        out.append(f"# {offset + start:8x}  {left:<23}  {right:<23}  |{text}|")
    if len(raw) > body_start:
        out.append("#")
    return out


# --- one line and details per event type ----------------------------------------------------


def describe(event: Event, context: BinlogContext) -> tuple[str, list[str]]:
    """The header-line description of ``event`` and its detail lines."""
    describer = DESCRIBERS.get(type(event))
    if describer is None:
        for cls, candidate in DESCRIBERS.items():
            if isinstance(event, cls):
                describer = candidate
                break
    if describer is None:
        return _describe_generic(event), []
    return describer(event, context)


def _text(raw: bytes) -> str:
    return raw.decode("utf-8", "backslashreplace")


def _text_lines(raw: bytes, prefix: str = "") -> list[str]:
    return [prefix + line for line in _text(raw).split("\n")]


def _describe_generic(event: Event) -> str:
    parts = [f"{f.name}={getattr(event, f.name)!r}" for f in dataclasses.fields(event)[4:]]
    return " ".join([type(event).__name__, *parts])


def _describe_fde(event: FormatDescriptionEvent, ctx: BinlogContext) -> tuple[str, list[str]]:
    text = (
        f"Start: binlog v {event.binlog_version}, server v {event.server_version} "
        f"created {format_time(event.timestamp)}"
    )
    if event.create_timestamp:
        text += " at startup"
    details = []
    if event.flags & EventFlag.BINLOG_IN_USE:
        details.append("# Warning: this binlog is either in use or was not closed properly.")
    return text, details


def _describe_rotate(event: RotateEvent, ctx: BinlogContext) -> tuple[str, list[str]]:
    return f"Rotate to {event.next_file}  pos: {event.position}", []


def _describe_stop(event: StopEvent, ctx: BinlogContext) -> tuple[str, list[str]]:
    return "Stop", []


def _describe_heartbeat(event: HeartbeatEvent, ctx: BinlogContext) -> tuple[str, list[str]]:
    position = event.log_pos if event.position is None else event.position
    return f"Heartbeat {event.file_name}  pos: {position}", []


def _describe_start_encryption(
    event: StartEncryptionEvent, ctx: BinlogContext
) -> tuple[str, list[str]]:
    return (
        f"Start_encryption scheme {event.scheme} key_version {event.key_version} "
        f"nonce {event.nonce.hex()}",
        [],
    )


def _describe_incident(event: IncidentEvent, ctx: BinlogContext) -> tuple[str, list[str]]:
    return f"Incident: {event.incident}", _text_lines(event.message, "# ")


def _describe_unknown(event: UnknownEvent, ctx: BinlogContext) -> tuple[str, list[str]]:
    return (
        f"Unknown event type {event.code} ({event_type_name(event.code)}), "
        f"{len(event.body)} body bytes",
        [],
    )


def _gtid_text(domain_id: int, server_id: int, seq_no: int) -> str:
    return f"{domain_id}-{server_id}-{seq_no}"


def _xid_text(xid: XaXid) -> str:
    return f"X'{xid.gtrid.hex()}',X'{xid.bqual.hex()}',{xid.format_id}"


def _describe_gtid(event: GtidEvent, ctx: BinlogContext) -> tuple[str, list[str]]:
    text = "GTID " + _gtid_text(event.domain_id, event.server_id, event.seq_no)
    if event.commit_id is not None:
        text += f" cid={event.commit_id}"
    if event.flags2 & GtidFlag.DDL:
        text += " ddl"
    if event.flags2 & GtidFlag.WAITED:
        text += " waited"
    if event.flags2 & GtidFlag.TRANSACTIONAL:
        text += " trans"
    details = []
    if event.xid is not None:
        verb = "XA START" if event.flags2 & GtidFlag.PREPARED_XA else "XA"
        details.append(f"{verb} {_xid_text(event.xid)}")
    elif not event.flags2 & GtidFlag.STANDALONE:
        details.append("START TRANSACTION")
    return text, details


def _describe_gtid_list(event: GtidListEvent, ctx: BinlogContext) -> tuple[str, list[str]]:
    gtids = [str(gtid) for gtid in event.gtids]
    text = "Gtid list [" + ",\n# ".join(gtids) + "]"
    first, *rest = text.split("\n")
    return first, rest


def _describe_checkpoint(event: BinlogCheckpointEvent, ctx: BinlogContext) -> tuple[str, list[str]]:
    return f"Binlog checkpoint {event.file_name}", []


def _status_value(status_vars: Sequence[StatusVar], code: int) -> Any:
    for var in status_vars:
        if var.code == code:
            return var.value
    return None


def _query_text(event: QueryEvent) -> bytes:
    if not event.compressed:
        return event.query
    from decoder.compression import decompress_record
    from fakemaster.vocabulary.errors import DecodeError

    try:
        return decompress_record(event.query)
    except DecodeError:
        return event.query  # already the text


def _query_head(name: str, event: QueryEvent | ExecuteLoadQueryEvent) -> str:
    xid = _status_value(event.status_vars, QueryStatus.XID)
    return (
        f"{name}\tthread_id={event.thread_id}\texec_time={event.exec_time}"
        f"\terror_code={event.error_code}\txid={xid if isinstance(xid, int) else 0}"
    )


def _describe_query(event: QueryEvent, ctx: BinlogContext) -> tuple[str, list[str]]:
    name = "Query_compressed" if event.compressed else "Query"
    details = [f"use `{event.database}`"] if event.database else []
    return _query_head(name, event), details + _text_lines(_query_text(event))


def _describe_execute_load_query(
    event: ExecuteLoadQueryEvent, ctx: BinlogContext
) -> tuple[str, list[str]]:
    details = [f"use `{event.database}`"] if event.database else []
    details.append(f"# file_id={event.file_id}")
    return _query_head("Execute_load_query", event), details + _text_lines(event.query)


def _describe_begin_load_query(
    event: BeginLoadQueryEvent, ctx: BinlogContext
) -> tuple[str, list[str]]:
    return f"Begin_load_query: file_id: {event.file_id}  block_len: {len(event.data)}", []


def _describe_append_block(event: AppendBlockEvent, ctx: BinlogContext) -> tuple[str, list[str]]:
    return f"Append_block: file_id: {event.file_id}  block_len: {len(event.data)}", []


def _describe_delete_file(event: DeleteFileEvent, ctx: BinlogContext) -> tuple[str, list[str]]:
    return f"Delete_file: file_id={event.file_id}", []


def _describe_xid(event: XidEvent, ctx: BinlogContext) -> tuple[str, list[str]]:
    return f"Xid = {event.xid}", ["COMMIT"]


def _describe_xa_prepare(event: XaPrepareEvent, ctx: BinlogContext) -> tuple[str, list[str]]:
    xid = _xid_text(event.xid)
    statement = f"XA COMMIT {xid} ONE PHASE" if event.one_phase else f"XA PREPARE {xid}"
    return f"XID = {xid}", [statement]


_INTVAR_NAMES = {1: "LAST_INSERT_ID", 2: "INSERT_ID"}


def _describe_intvar(event: IntvarEvent, ctx: BinlogContext) -> tuple[str, list[str]]:
    name = _INTVAR_NAMES.get(event.kind, f"INTVAR_{event.kind}")
    return "Intvar", [f"SET {name}={event.value}"]


def _describe_rand(event: RandEvent, ctx: BinlogContext) -> tuple[str, list[str]]:
    return "Rand", [f"SET @@RAND_SEED1={event.seed1}, @@RAND_SEED2={event.seed2}"]


def _user_var_value(event: UserVarEvent) -> str:
    value = event.value
    if value is None:
        return "NULL"
    if event.value_type == 1 and len(value) == 8:
        return repr(F64.unpack(value)[0])
    if event.value_type == 2 and len(value) == 8:
        unsigned = event.value_flags is not None and event.value_flags & 1
        return str((U64 if unsigned else I64).unpack(value)[0])
    if event.value_type == 0:
        return f"X'{value.hex()}' /* charset {event.charset} */"
    return f"X'{value.hex()}' /* type {event.value_type} */"


def _describe_user_var(event: UserVarEvent, ctx: BinlogContext) -> tuple[str, list[str]]:
    return "User_var", [f"SET @`{_text(event.name)}`:={_user_var_value(event)}"]


def _describe_annotate(event: AnnotateRowsEvent, ctx: BinlogContext) -> tuple[str, list[str]]:
    return "Annotate_rows:", _text_lines(event.query, "#Q> ")


def _describe_table_map(event: TableMapEvent, ctx: BinlogContext) -> tuple[str, list[str]]:
    return (
        f"Table_map: `{event.database}`.`{event.table}` mapped to number {event.table_id}",
        [],
    )


_ROWS_NAMES: dict[type[RowsEvent], tuple[str, str]] = {
    WriteRowsEvent: ("Write", "INSERT INTO"),
    UpdateRowsEvent: ("Update", "UPDATE"),
    DeleteRowsEvent: ("Delete", "DELETE FROM"),
}


def _rows_flag_names(flags: int) -> str:
    names = []
    for flag in RowsFlag:
        if flags & flag:
            names.append(f"{flag.name}_F")
            flags &= ~flag
    if flags:
        names.append(f"0x{flags:x}")
    return "|".join(names)


def _describe_rows(event: RowsEvent, ctx: BinlogContext) -> tuple[str, list[str]]:
    kind, verb = _ROWS_NAMES.get(type(event), ("Rows", "ROWS"))
    name = f"{kind}_compressed_rows" if event.compressed else f"{kind}_rows"
    text = f"{name}: table id {event.table_id}"
    flag_names = _rows_flag_names(event.rows_flags)
    if flag_names:
        text += f" flags: {flag_names}"
    table = ctx.table_maps.get(event.table_id)
    target = (
        f"`{table.database}`.`{table.table}`" if table else f"`?`.`?` (table id {event.table_id})"
    )
    details: list[str] = []
    for row in event.rows:
        details.append(f"### {verb} {target}")
        if isinstance(event, UpdateRowsEvent):
            before, after = cast("RowPair", row)  # an UPDATE's rows are pairs
            details.append("### WHERE")
            details.extend(_row_lines(before, table))
            details.append("### SET")
            details.extend(_row_lines(after, table))
        else:
            details.append("### WHERE" if isinstance(event, DeleteRowsEvent) else "### SET")
            details.extend(_row_lines(row, table))
    details.append(f"# Number of rows: {len(event.rows)}")
    return text, details


def _row_lines(row: Sequence[Any], table: TableMapEvent | None) -> list[str]:
    lines = []
    for index, value in enumerate(row):
        if value is ABSENT:
            continue
        column_type, meta = _column(table, index)
        lines.append(f"###   @{index + 1}={format_value(value, column_type, meta)}")
    return lines


def _column(table: TableMapEvent | None, index: int) -> tuple[int | None, int]:
    if table is None or index >= len(table.column_types):
        return None, 0
    meta = table.column_meta[index] if index < len(table.column_meta) else 0
    return table.column_types[index], meta


def _quote(text: str) -> str:
    """A quoted literal; bytes that were not UTF-8 (surrogate-escaped) as ``\\xNN``."""
    out = []
    for char in text:
        code = ord(char)
        if 0xDC80 <= code <= 0xDCFF:
            out.append(f"\\x{code - 0xDC00:02x}")
        elif char in "'\\":
            out.append("\\" + char)
        elif char.isprintable():
            out.append(char)
        elif ord(char) < 0x100:
            out.append(f"\\x{ord(char):02x}")
        else:
            out.append(f"\\u{ord(char):04x}" if ord(char) < 0x10000 else f"\\U{ord(char):08x}")
    return "'" + "".join(out) + "'"


def format_value(value: Any, column_type: int | None = None, meta: int = 0) -> str:
    """One column value as mariadb-binlog -v prints it (dates with '-' rather than ':')."""
    fsp = min(meta, 6) if column_type in _FRACTIONAL_TYPES else (6 if _has_fraction(value) else 0)
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "1" if value else "0"
    if column_type == ColumnType.BIT and isinstance(value, (int, bytes)):
        number = value if isinstance(value, int) else int.from_bytes(value, "big")
        # BIT metadata: the bits of the last byte in the low byte, whole bytes in the high one.
        width = max((meta >> 8) * 8 + (meta & 0xFF), 1)
        return f"b'{number:0{width}b}'"
    if isinstance(value, int):
        bits = _INTEGER_BITS.get(column_type) if column_type is not None else None
        if bits and value < 0:
            # The row image does not say whether the column is unsigned: show both readings.
            return f"{value} ({value + (1 << bits)})"
        return str(value)
    if isinstance(value, float):
        return _float_text(value, single=column_type == ColumnType.FLOAT)
    if isinstance(value, Decimal):
        return format(value, "f")  # positional, as the column shows it: 0E-9 is 0.000000000
    if isinstance(value, DateTime):
        return f"'{value.format(fsp)}'"
    if isinstance(value, Date):
        return f"'{value}'"
    if isinstance(value, Time):
        return f"'{value.format(fsp)}'"
    if isinstance(value, Timestamp):
        fraction = f".{value.microsecond:06d}"[: fsp + 1] if fsp else ""
        return f"{value.seconds}{fraction}"
    if isinstance(value, (bytes, bytearray, memoryview)):
        return _quote(bytes(value).decode("utf-8", "surrogateescape"))
    if isinstance(value, str):
        return _quote(value)
    return repr(value)


def _float_text(value: float, *, single: bool) -> str:
    """The shortest text that reads back to the value (to the 4-byte value for a FLOAT)."""
    if single and math.isfinite(value):
        try:
            stored = F32.pack(value)
        except OverflowError:
            return repr(value)
        for digits in range(6, 10):
            text = f"{value:.{digits}g}"
            if F32.pack(float(text)) == stored:
                return text
    return repr(value)


def _has_fraction(value: Any) -> bool:
    return isinstance(value, (DateTime, Time, Timestamp)) and bool(value.microsecond)


# A describer takes an event of its key's class (which a dict's type cannot say: hence Any).
_Describer = Callable[[Any, BinlogContext], tuple[str, list[str]]]

# The describer of each event class (a subclass falls back to its base's, then to the generic
# "Class field=value" line): tests/test_checklists.py checks every event class has one.
DESCRIBERS: dict[type[Event], _Describer] = {
    FormatDescriptionEvent: _describe_fde,
    RotateEvent: _describe_rotate,
    StopEvent: _describe_stop,
    HeartbeatEvent: _describe_heartbeat,
    StartEncryptionEvent: _describe_start_encryption,
    IncidentEvent: _describe_incident,
    UnknownEvent: _describe_unknown,
    GtidEvent: _describe_gtid,
    GtidListEvent: _describe_gtid_list,
    BinlogCheckpointEvent: _describe_checkpoint,
    QueryEvent: _describe_query,
    ExecuteLoadQueryEvent: _describe_execute_load_query,
    BeginLoadQueryEvent: _describe_begin_load_query,
    AppendBlockEvent: _describe_append_block,
    DeleteFileEvent: _describe_delete_file,
    XidEvent: _describe_xid,
    XaPrepareEvent: _describe_xa_prepare,
    IntvarEvent: _describe_intvar,
    RandEvent: _describe_rand,
    UserVarEvent: _describe_user_var,
    AnnotateRowsEvent: _describe_annotate,
    TableMapEvent: _describe_table_map,
    RowsEvent: _describe_rows,
}

if TYPE_CHECKING:
    from fakemaster.vocabulary.events import RowPair

__all__ = ["DESCRIBERS", "Lister", "describe", "format_value", "hexdump_lines", "list_events"]
