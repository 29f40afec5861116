"""Text-protocol responses: result sets, OK (with session-state tracking), ERR, EOF.

A column is described the way MariaDB describes it for a given connection: text columns are
sent in ``character_set_results`` (length = characters x the set's maximum bytes per character)
unless the value is a binary string or the client asked for no conversion; MariaDB clients
that announced EXTENDED_METADATA get an extra (here always empty) string per column, and
CACHE_METADATA clients a "metadata follows" byte after the column count. With
CLIENT_DEPRECATE_EOF the EOF after the columns disappears and the final EOF becomes an OK with
header 0xFE.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from enum import IntEnum, IntFlag

from decoder.packets import parse_err
from decoder.primitives import Buffer, read_packed_int
from encoder.packets import encode_eof, encode_err, encode_ok
from encoder.primitives import packed_int
from fakemaster.protocol.charsets import BINARY_COLLATION_ID, Collation, collation_by_id
from fakemaster.protocol.conversion import (
    converter,
    error_message,
    numeric_converter,
    text_encoder,
)
from fakemaster.protocol.handshake import ClientProtocol  # defined with the capabilities
from fakemaster.vocabulary.constants import ColumnType
from fakemaster.vocabulary.errcodes import (
    ER_ACCESS_DENIED_ERROR,
    ER_BAD_DB_ERROR,
    ER_BAD_FIELD_ERROR,
    ER_CANNOT_USER,
    ER_CANT_CHANGE_TX_CHARACTERISTICS,
    ER_CANT_LOCK_LOG_TABLE,
    ER_COLLATION_CHARSET_MISMATCH,
    ER_CON_COUNT_ERROR,
    ER_CONNECTION_KILLED,
    ER_DB_CREATE_EXISTS,
    ER_DBACCESS_DENIED_ERROR,
    ER_DUP_ENTRY,
    ER_EMPTY_QUERY,
    ER_GLOBAL_VARIABLE,
    ER_HANDSHAKE_ERROR,
    ER_ILLEGAL_VALUE_FOR_TYPE,
    ER_INCORRECT_GLOBAL_LOCAL_VAR,
    ER_KEY_COLUMN_DOES_NOT_EXITS,
    ER_KEY_DOES_NOT_EXISTS,
    ER_KILL_DENIED_ERROR,
    ER_LOCAL_VARIABLE,
    ER_MALFORMED_PACKET,
    ER_MASTER_INFO,
    ER_NET_PACKET_TOO_LARGE,
    ER_NET_PACKETS_OUT_OF_ORDER,
    ER_NO_DB_ERROR,
    ER_NO_SUCH_TABLE,
    ER_NO_SUCH_THREAD,
    ER_NO_TABLES_USED,
    ER_NONEXISTING_GRANT,
    ER_NONUNIQ_TABLE,
    ER_NOT_SUPPORTED_AUTH_MODE,
    ER_NOT_SUPPORTED_YET,
    ER_PARSE_ERROR,
    ER_PASSWORD_NO_MATCH,
    ER_QUERY_INTERRUPTED,
    ER_SLAVE_SAME_ID,
    ER_SP_DOES_NOT_EXIST,
    ER_SPECIFIC_ACCESS_DENIED_ERROR,
    ER_STMT_HAS_NO_OPEN_CURSOR,
    ER_TABLE_EXISTS_ERROR,
    ER_TABLE_NOT_LOCKED,
    ER_TABLEACCESS_DENIED_ERROR,
    ER_UNKNOWN_CHARACTER_SET,
    ER_UNKNOWN_COLLATION,
    ER_UNKNOWN_COM_ERROR,
    ER_UNKNOWN_ERROR,
    ER_UNKNOWN_STMT_HANDLER,
    ER_UNKNOWN_STORAGE_ENGINE,
    ER_UNKNOWN_STRUCTURED_VARIABLE,
    ER_UNKNOWN_SYSTEM_VARIABLE,
    ER_UNKNOWN_TABLE,
    ER_UNKNOWN_TIME_ZONE,
    ER_USER_CREATE_EXISTS,
    ER_USER_DROP_EXISTS,
    ER_VARIABLE_IS_READONLY,
    ER_WRONG_ARGUMENTS,
    ER_WRONG_DB_NAME,
    ER_WRONG_PARAMCOUNT_TO_NATIVE_FCT,
    ER_WRONG_TABLE_NAME,
    ER_WRONG_TYPE_FOR_VAR,
    ER_WRONG_USAGE,
    ER_WRONG_VALUE_COUNT_ON_ROW,
    ER_WRONG_VALUE_FOR_VAR,
)
from fakemaster.vocabulary.errors import DecodeError
from fakemaster.vocabulary.packets import (
    EOF_HEADER,
    EOF_PACKET,
    OK_STATUS_WARNINGS,
    EofPacket,
    ErrPacket,
    OkPacket,
    ServerStatus,
)

__all__ = [
    "ERRORS",
    "MAX_COLUMN_LENGTH",
    "NOT_FIXED_DEC",
    "Cell",
    "ClientProtocol",
    "Column",
    "ColumnDefinition",
    "ColumnFlag",
    "ReadResultSet",
    "ResultSet",
    "SessionTrack",
    "SqlError",
    "converted_rows",
    "encode_row",
    "eof_payload",
    "ok_payload",
    "parse_row",
    "read_result_set",
    "result_set_payloads",
    "session_state_entry",
    "parser_stack_exhausted",
    "sql_error",
    "syntax_error",
    "text_column",
    "with_name",
]

NOT_FIXED_DEC = 39  # "decimals" of strings and values whose scale is not fixed
_BLOB_TYPES = (ColumnType.TINY_BLOB, ColumnType.BLOB)
MAX_COLUMN_LENGTH = 0xFFFFFFFF
_COLUMN_FIXED = struct.Struct("<BHIBHBH")  # 0x0c, charset, length, type, flags, decimals, filler
_NULL_CELL = b"\xfb"


class ColumnFlag(IntFlag):
    NOT_NULL = 1
    PRI_KEY = 2
    UNIQUE_KEY = 4
    MULTIPLE_KEY = 8
    BLOB = 16
    UNSIGNED = 32
    ZEROFILL = 64
    BINARY = 128
    ENUM = 256
    AUTO_INCREMENT = 512
    TIMESTAMP = 1024
    SET = 2048
    NO_DEFAULT_VALUE = 4096
    ON_UPDATE_NOW = 8192
    NUM = 32768


class SessionTrack(IntEnum):
    SYSTEM_VARIABLES = 0
    SCHEMA = 1
    STATE_CHANGE = 2
    GTIDS = 3
    TRANSACTION_CHARACTERISTICS = 4
    TRANSACTION_STATE = 5


@dataclass(frozen=True, slots=True)
class ColumnDefinition:
    """Column Definition 41 as on the wire."""

    name: str
    type: int
    length: int
    charset: int = BINARY_COLLATION_ID
    flags: int = 0
    decimals: int = 0
    catalog: str = "def"
    schema: str = ""
    table: str = ""
    org_table: str = ""
    org_name: str = ""
    extended_metadata: bytes = b""

    def encode(
        self, *, extended_metadata: bool = False, names: Callable[[str], bytes] | None = None
    ) -> bytes:
        """The definition's bytes; ``names`` encodes its names (UTF-8 when None), for a
        ``character_set_results`` the server converts them to."""
        parts = [
            _lenenc_text(self.catalog, names),
            _lenenc_text(self.schema, names),
            _lenenc_text(self.table, names),
            _lenenc_text(self.org_table, names),
            _lenenc_text(self.name, names),
            _lenenc_text(self.org_name, names),
        ]
        if extended_metadata:
            parts.append(packed_int(len(self.extended_metadata)) + self.extended_metadata)
        parts.append(
            _COLUMN_FIXED.pack(
                0x0C,
                self.charset,
                min(self.length, MAX_COLUMN_LENGTH),
                self.type,
                self.flags,
                self.decimals,
                0,
            )
        )
        return b"".join(parts)

    @classmethod
    def decode(cls, payload: Buffer, *, extended_metadata: bool = False) -> ColumnDefinition:
        data = bytes(payload)
        texts = []
        pos = 0
        for _ in range(6):
            raw, pos = _read_lenenc_bytes(data, pos)
            texts.append(raw.decode("utf-8", "surrogateescape"))
        extended = b""
        if extended_metadata:
            extended, pos = _read_lenenc_bytes(data, pos)
        if len(data) < pos + _COLUMN_FIXED.size:
            raise DecodeError("truncated column definition", offset=len(data))
        marker, charset, length, type_, flags, decimals, _filler = _COLUMN_FIXED.unpack_from(
            data, pos
        )
        if marker != 0x0C:
            raise DecodeError(f"column definition fixed part marker 0x{marker:02x}", offset=pos)
        return cls(
            catalog=texts[0],
            schema=texts[1],
            table=texts[2],
            org_table=texts[3],
            name=texts[4],
            org_name=texts[5],
            charset=charset,
            length=length,
            type=type_,
            flags=flags,
            decimals=decimals,
            extended_metadata=extended,
        )


@dataclass(frozen=True, slots=True)
class Column:
    """A result column before the connection's character sets are applied.

    ``text_chars`` set: a string column of that many characters (bytes for the BLOB types)
    whose own collation is ``collation`` (None: the connection's collation); its charset and
    byte length are decided per connection. Otherwise ``length`` is final and the charset is
    binary.
    """

    name: str
    type: int
    length: int = 0
    flags: int = 0
    decimals: int = 0
    text_chars: int | None = None
    collation: int | None = None
    schema: str = ""
    table: str = ""
    org_table: str = ""
    org_name: str = ""

    def resolve(self, results: Collation | None, connection: Collation) -> ColumnDefinition:
        """The wire definition for a connection whose ``character_set_results`` is
        ``results`` (None: NULL, no conversion) and whose collation is ``connection``."""
        charset = BINARY_COLLATION_ID
        length = self.length
        flags = self.flags
        if self.text_chars is not None:
            own = collation_by_id(self.collation) if self.collation is not None else connection
            assert own is not None
            converted = results is not None and own.id != BINARY_COLLATION_ID
            if own.id == BINARY_COLLATION_ID or own.name.endswith("_bin"):
                flags |= ColumnFlag.BINARY  # binary strings and binary-sorting collations
            shown = results if results is not None and converted else own
            charset = shown.id
            if not converted and _BLOB_TYPES[0] <= self.type <= _BLOB_TYPES[1]:
                # Unconverted BLOB-typed text keeps its byte length (MariaDB scales only what
                # it converts: bytes / mbminlen * mbmaxlen, mbminlen being 1 here).
                length = self.text_chars
            else:
                length = self.text_chars * shown.mbmaxlen
        return ColumnDefinition(
            name=self.name,
            type=self.type,
            length=length,
            charset=charset,
            flags=flags,
            decimals=self.decimals,
            schema=self.schema,
            table=self.table,
            org_table=self.org_table,
            org_name=self.org_name,
        )


def text_column(
    name: str,
    chars: int,
    *,
    flags: int = 0,
    collation: int | None = None,
    type: int = ColumnType.VAR_STRING,
    decimals: int = NOT_FIXED_DEC,
) -> Column:
    return Column(name, type, flags=flags, decimals=decimals, text_chars=chars, collation=collation)


Cell = bytes | None


@dataclass(slots=True)
class ResultSet:
    """A result set to send: column definitions, rows and extra status bits."""

    columns: Sequence[Column]
    rows: list[Sequence[Cell]] = field(default_factory=list)
    # Status bits a real server adds for this statement, e.g. QUERY_NO_INDEX_USED after an
    # information_schema scan: (after the column definitions, at the end).
    extra_status: tuple[int, int] = (0, 0)
    # An error met once the column definitions were out: MariaDB sends them, then this ERR
    # instead of rows (EXPLAIN of an unknown column, SHOW GRANTS FOR an unknown account).
    error: SqlError | None = None


def encode_row(cells: Iterable[Cell]) -> bytes:
    return b"".join(_NULL_CELL if cell is None else packed_int(len(cell)) + cell for cell in cells)


def result_set_payloads(
    result: ResultSet,
    protocol: ClientProtocol,
    *,
    status: int,
    results: Collation | None,
    connection: Collation,
    warnings: int = 0,
) -> list[bytes]:
    count = packed_int(len(result.columns))
    payloads = [count + b"\x01" if protocol.cache_metadata else count]
    # What character_set_results converts to (None: nothing is converted).
    target = None if results is None or results.is_binary_charset else results.charset
    names = None if target in (None, "utf8mb4") else text_encoder(str(target))
    payloads.extend(
        column.resolve(results, connection).encode(
            extended_metadata=protocol.extended_metadata, names=names
        )
        for column in result.columns
    )
    after_columns, at_end = result.extra_status
    if not protocol.deprecate_eof:
        payloads.append(
            encode_eof(EofPacket(warnings=warnings, status_flags=status | after_columns))
        )
    if result.error is not None:
        payloads.append(result.error.payload(protocol_41=protocol.protocol_41, results=target))
        return payloads
    payloads.extend(encode_row(row) for row in converted_rows(result, target))
    if protocol.deprecate_eof:
        payloads.append(
            encode_ok(OkPacket(status_flags=status | at_end, warnings=warnings, header=EOF_HEADER))
        )
    else:
        payloads.append(encode_eof(EofPacket(warnings=warnings, status_flags=status | at_end)))
    return payloads


def _cell_converter(
    column: Column, target: str, *, texts_only: bool = False
) -> Callable[[bytes], bytes] | None:
    if column.text_chars is None:  # a number's or a temporal value's ASCII text
        return None if texts_only else numeric_converter(target)
    own = collation_by_id(column.collation) if column.collation is not None else None
    # A column of the connection's collation holds the fake's own text: UTF-8.
    return converter(own.charset if own is not None else "utf8mb4", target)


def converted_rows(
    result: ResultSet, target: str | None, *, texts_only: bool = False
) -> Iterable[Sequence[Cell]]:
    """The rows of ``result`` (each text in its column's own character set) as sent to a
    connection whose ``character_set_results`` is ``target`` (None: NULL or binary).
    ``texts_only``: numbers and temporal values left as they are (the binary protocol sends
    them as numbers, not text)."""
    if target is None:
        return result.rows
    converters = [
        _cell_converter(column, target, texts_only=texts_only) for column in result.columns
    ]
    if not any(converters):
        return result.rows
    return (_converted(row, converters) for row in result.rows)


def _converted(
    row: Sequence[Cell], converters: list[Callable[[bytes], bytes] | None]
) -> Sequence[Cell]:
    if len(row) != len(converters):
        return row  # not a row of these columns: sent as the answer made it
    return [
        cell if convert is None or cell is None else convert(cell)
        for convert, cell in zip(converters, row, strict=True)
    ]


def session_state_entry(kind: SessionTrack, *values: bytes) -> bytes:
    data = b"".join(packed_int(len(value)) + value for value in values)
    return bytes((kind,)) + packed_int(len(data)) + data


def ok_payload(
    protocol: ClientProtocol,
    *,
    status: int,
    warnings: int = 0,
    affected_rows: int = 0,
    last_insert_id: int = 0,
    session_state: Sequence[bytes] = (),
    info: bytes = b"",
) -> bytes:
    """An OK; with CLIENT_SESSION_TRACK the info string and the state-change entries follow as
    MariaDB's net_send_ok writes them (info only when non-empty or when state changed)."""
    tail = info
    if protocol.session_track:
        tail = b""
        if session_state or info:
            tail = packed_int(len(info)) + info
        if session_state:
            status |= ServerStatus.SESSION_STATE_CHANGED
            state = b"".join(session_state)
            tail += packed_int(len(state)) + state
    return encode_ok(
        OkPacket(
            affected_rows=affected_rows,
            last_insert_id=last_insert_id,
            status_flags=status,
            warnings=warnings,
            info=tail,
        )
    )


def eof_payload(*, status: int, warnings: int = 0) -> bytes:
    return encode_eof(EofPacket(warnings=warnings, status_flags=status))


# --- errors -------------------------------------------------------------------------------


class SqlError(Exception):
    """A statement or command failed: the session answers with this ERR packet."""

    def __init__(self, errno: int, sqlstate: str, message: str) -> None:
        super().__init__(f"{errno} ({sqlstate}): {message}")
        self.errno = errno
        self.sqlstate = sqlstate
        self.message = message

    def payload(self, *, protocol_41: bool = True, results: str | None = None) -> bytes:
        """The ERR packet; ``results``: the connection's character_set_results the message is
        converted to (None: NULL or binary, sent as UTF-8)."""
        message = self.message
        if results is not None:
            raw = error_message(message, results)
            message = raw.decode("utf-8", "surrogateescape")  # the encoder writes these bytes
        return encode_err(
            ErrPacket(
                errno=self.errno,
                sqlstate=self.sqlstate if protocol_41 else None,
                message=message,
            )
        )


# errno -> (SQLSTATE, message format), texts as MariaDB 10.11 sends them.
ERRORS: dict[int, tuple[str, str]] = {
    ER_DB_CREATE_EXISTS: ("HY000", "Can't create database '{0}'; database exists"),
    ER_TABLE_EXISTS_ERROR: ("42S01", "Table '{0}' already exists"),
    ER_KEY_COLUMN_DOES_NOT_EXITS: ("42000", "Key column '{0}' doesn't exist in table"),
    ER_DUP_ENTRY: ("23000", "Duplicate entry '{0}' for key '{1}'"),
    ER_WRONG_VALUE_COUNT_ON_ROW: ("21S01", "Column count doesn't match value count at row {0}"),
    ER_CON_COUNT_ERROR: ("08004", "Too many connections"),
    ER_HANDSHAKE_ERROR: ("08S01", "Bad handshake"),
    ER_DBACCESS_DENIED_ERROR: ("42000", "Access denied for user '{0}'@'{1}' to database '{2}'"),
    ER_ACCESS_DENIED_ERROR: ("28000", "Access denied for user '{0}'@'{1}' (using password: {2})"),
    ER_PASSWORD_NO_MATCH: ("28000", "Can't find any matching row in the user table"),
    ER_WRONG_USAGE: ("HY000", "Incorrect usage of {0} and {1}"),
    ER_CANNOT_USER: ("HY000", "Operation {0} failed for {1}"),
    ER_USER_CREATE_EXISTS: ("HY000", "Can't create user '{0}'@'{1}'; it already exists"),
    ER_USER_DROP_EXISTS: ("HY000", "Can't drop user '{0}'@'{1}'; it doesn't exist"),
    ER_NO_DB_ERROR: ("3D000", "No database selected"),
    ER_UNKNOWN_COM_ERROR: ("08S01", "Unknown command"),
    ER_BAD_DB_ERROR: ("42000", "Unknown database '{0}'"),
    ER_BAD_FIELD_ERROR: ("42S22", "Unknown column '{0}' in '{1}'"),
    ER_PARSE_ERROR: (
        "42000",
        "You have an error in your SQL syntax; check the manual that corresponds to your "
        "MariaDB server version for the right syntax to use near '{0}' at line {1}",
    ),
    ER_EMPTY_QUERY: ("42000", "Query was empty"),
    ER_NONUNIQ_TABLE: ("42000", "Not unique table/alias: '{0}'"),
    ER_NO_SUCH_THREAD: ("HY000", "Unknown thread id: {0}"),
    ER_KILL_DENIED_ERROR: ("HY000", "You are not owner of thread {0}"),
    ER_NO_TABLES_USED: ("HY000", "No tables used"),
    ER_TABLE_NOT_LOCKED: ("HY000", "Table '{0}' was not locked with LOCK TABLES"),
    ER_UNKNOWN_ERROR: ("HY000", "{0}"),
    ER_WRONG_DB_NAME: ("42000", "Incorrect database name '{0}'"),
    ER_WRONG_TABLE_NAME: ("42000", "Incorrect table name '{0}'"),
    ER_UNKNOWN_TABLE: ("42S02", "Unknown table '{0}' in {1}"),
    ER_UNKNOWN_CHARACTER_SET: ("42000", "Unknown character set: '{0}'"),
    ER_TABLEACCESS_DENIED_ERROR: (
        "42000",
        "{0} command denied to user '{1}'@'{2}' for table `{3}`.`{4}`",
    ),
    ER_NO_SUCH_TABLE: ("42S02", "Table '{0}.{1}' doesn't exist"),
    ER_KEY_DOES_NOT_EXISTS: ("42000", "Key '{0}' doesn't exist in table '{1}'"),
    ER_UNKNOWN_STORAGE_ENGINE: ("42000", "Unknown storage engine '{0}'"),
    ER_NET_PACKET_TOO_LARGE: ("08S01", "Got a packet bigger than 'max_allowed_packet' bytes"),
    ER_NET_PACKETS_OUT_OF_ORDER: ("08S01", "Got packets out of order"),
    ER_UNKNOWN_SYSTEM_VARIABLE: ("HY000", "Unknown system variable '{0}'"),
    ER_SPECIFIC_ACCESS_DENIED_ERROR: (
        "42000",
        "Access denied; you need (at least one of) the {0} privilege(s) for this operation",
    ),
    ER_LOCAL_VARIABLE: (
        "HY000",
        "Variable '{0}' is a SESSION variable and can't be used with SET GLOBAL",
    ),
    ER_GLOBAL_VARIABLE: (
        "HY000",
        "Variable '{0}' is a GLOBAL variable and should be set with SET GLOBAL",
    ),
    ER_WRONG_VALUE_FOR_VAR: ("42000", "Variable '{0}' can't be set to the value of '{1}'"),
    ER_WRONG_TYPE_FOR_VAR: ("42000", "Incorrect argument type to variable '{0}'"),
    ER_NOT_SUPPORTED_YET: ("42000", "This version of MariaDB doesn't yet support '{0}'"),
    ER_INCORRECT_GLOBAL_LOCAL_VAR: ("HY000", "Variable '{0}' is a {1} variable"),
    ER_NOT_SUPPORTED_AUTH_MODE: (
        "08004",
        "Client does not support authentication protocol requested by server; "
        "consider upgrading MariaDB client",
    ),
    ER_COLLATION_CHARSET_MISMATCH: (
        "42000",
        "COLLATION '{0}' is not valid for CHARACTER SET '{1}'",
    ),
    ER_UNKNOWN_COLLATION: ("HY000", "Unknown collation: '{0}'"),
    ER_UNKNOWN_TIME_ZONE: ("HY000", "Unknown or incorrect time zone: '{0}'"),
    ER_SP_DOES_NOT_EXIST: ("42000", "{0} {1} does not exist"),
    ER_QUERY_INTERRUPTED: ("70100", "Query execution was interrupted"),
    ER_ILLEGAL_VALUE_FOR_TYPE: ("22007", "Illegal {0} '{1}' value found during parsing"),
    ER_CANT_LOCK_LOG_TABLE: ("HY000", "You can't use locks with log tables"),
    ER_MASTER_INFO: ("HY000", "There is no master connection '{0}'"),
    ER_NONEXISTING_GRANT: ("42000", "There is no such grant defined for user '{0}' on host '{1}'"),
    ER_CANT_CHANGE_TX_CHARACTERISTICS: (
        "25001",
        "Transaction characteristics can't be changed while a transaction is in progress",
    ),
    ER_WRONG_PARAMCOUNT_TO_NATIVE_FCT: (
        "42000",
        "Incorrect parameter count in the call to native function '{0}'",
    ),
    ER_VARIABLE_IS_READONLY: (
        "HY000",
        "{0} variable '{1}' is read-only. Use SET {2} to assign the value",
    ),
    ER_CONNECTION_KILLED: ("70100", "Connection was killed"),
    ER_SLAVE_SAME_ID: ("HY000", "A slave with the same server_uuid/server_id is already connected"),
    ER_UNKNOWN_STRUCTURED_VARIABLE: (
        "HY000",
        "Unknown structured system variable or ROW routine variable '{0}'",
    ),
    ER_WRONG_ARGUMENTS: ("HY000", "Incorrect arguments to {0}"),
    ER_UNKNOWN_STMT_HANDLER: ("HY000", "Unknown prepared statement handler ({0}) given to {1}"),
    ER_STMT_HAS_NO_OPEN_CURSOR: ("HY000", "The statement ({0}) has no open cursor"),
    ER_MALFORMED_PACKET: ("HY000", "Malformed communication packet"),
}


def sql_error(errno: int, *args: object) -> SqlError:
    sqlstate, text = ERRORS[errno]
    return SqlError(errno, sqlstate, text.format(*args))


def syntax_error(near: str, line: int = 1) -> SqlError:
    """ER_PARSE_ERROR quoting the statement from the first token the parser rejected (MariaDB
    quotes at most 80 characters, the last three "..." when it cut)."""
    return sql_error(ER_PARSE_ERROR, _near(near), line)


def parser_stack_exhausted(near: str, line: int = 1) -> SqlError:
    """ER_PARSE_ERROR as MariaDB 10.11 sends it for a statement nested deeper than its parser's
    stack holds (about 32,000 levels of parentheses, NOT or unary minus): "memory exhausted" in
    place of the usual sentence, quoting from the token that did not fit."""
    sqlstate, _ = ERRORS[ER_PARSE_ERROR]
    return SqlError(
        ER_PARSE_ERROR, sqlstate, f"memory exhausted near '{_near(near)}' at line {line}"
    )


def _near(text: str) -> str:
    # MariaDB formats the quote as a C string: it stops at a NUL (10.11.19, differential).
    text = text.split("\0", 1)[0]
    return text if len(text) <= 80 else text[:77] + "..."


# --- client side: reading responses (tests, differential comparison) ----------------------


@dataclass(frozen=True, slots=True)
class ReadResultSet:
    """A result set as read from a server's packets."""

    columns: tuple[ColumnDefinition, ...]
    rows: tuple[tuple[Cell, ...], ...]
    status_after_columns: int | None
    status: int
    warnings: int


def parse_row(payload: Buffer, count: int) -> tuple[Cell, ...]:
    data = bytes(payload)
    cells: list[Cell] = []
    pos = 0
    for _ in range(count):
        if pos < len(data) and data[pos] == 0xFB:
            cells.append(None)
            pos += 1
            continue
        raw, pos = _read_lenenc_bytes(data, pos)
        cells.append(raw)
    if pos != len(data):
        raise DecodeError(f"{len(data) - pos} bytes after the last cell of a row", offset=pos)
    return tuple(cells)


def read_result_set(payloads: Iterator[bytes], protocol: ClientProtocol) -> ReadResultSet:
    """Parse one text result set from the payloads that follow a query (the first payload is
    the column count). Raises DecodeError on a malformed sequence, SqlError for an ERR."""
    first = next(payloads)
    if first[:1] == b"\xff":
        err = parse_err(first)
        raise SqlError(err.errno, err.sqlstate or "", err.message)
    count, pos = read_packed_int(first, 0)
    if protocol.cache_metadata:
        pos += 1
    if pos != len(first):
        raise DecodeError("unexpected bytes after the column count", offset=pos)
    columns = tuple(
        ColumnDefinition.decode(next(payloads), extended_metadata=protocol.extended_metadata)
        for _ in range(count)
    )
    status_after_columns = None
    if not protocol.deprecate_eof:
        eof = next(payloads)
        if eof[:1] != b"\xfe" or len(eof) != 5:
            raise DecodeError("missing EOF after the column definitions")
        _, _, status_after_columns = EOF_PACKET.unpack_from(eof, 0)
    rows: list[tuple[Cell, ...]] = []
    for payload in payloads:
        if payload[:1] == b"\xfe" and len(payload) < 0xFFFFFF:
            if protocol.deprecate_eof:
                _, at = read_packed_int(payload, 1)
                _, at = read_packed_int(payload, at)
                status, warnings = OK_STATUS_WARNINGS.unpack_from(payload, at)
            else:
                _, warnings, status = EOF_PACKET.unpack_from(payload, 0)
            return ReadResultSet(columns, tuple(rows), status_after_columns, status, warnings)
        if payload[:1] == b"\xff":
            err = parse_err(payload)
            raise SqlError(err.errno, err.sqlstate or "", err.message)
        rows.append(parse_row(payload, count))
    raise DecodeError("result set ended without EOF")


def with_name(column: Column, name: str) -> Column:
    return replace(column, name=name)


def _lenenc_text(text: str, encode: Callable[[str], bytes] | None = None) -> bytes:
    raw = text.encode("utf-8", "surrogateescape") if encode is None else encode(text)
    return packed_int(len(raw)) + raw


def _read_lenenc_bytes(data: bytes, pos: int) -> tuple[bytes, int]:
    length, pos = read_packed_int(data, pos)
    end = pos + length
    if end > len(data):
        raise DecodeError("length-encoded string runs past the packet", offset=pos)
    return data[pos:end], end
