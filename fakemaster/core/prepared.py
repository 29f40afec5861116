"""A connection's prepared statements (COM_STMT_*), sans-IO, as MariaDB 10.11 answers them.

A statement is prepared once and executed with values bound to its ``?`` placeholders: each
execute binds the values as SQL literals into the statement's text and runs it through the
statement table the text protocol uses (so every statement a query answers can be prepared),
then sends the result in the binary row format. What MariaDB says in terms of the text as the
client wrote it is said so here too: a column made from an expression is named after the
original text (``?`` for a placeholder alone, with the type of the value bound to it), a
syntax error quotes the original text.

At prepare time the columns of a statement that returns rows (SELECT, SHOW, EXPLAIN, ...) are
found by running it with NULL bound to every placeholder; any other statement is not run
before it is executed (so a syntax error in it shows at the first execute, not at prepare).

Statement ids count from 1 across the server (not per connection), also for statements that
failed to prepare; COM_RESET_CONNECTION and COM_CHANGE_USER close every statement of the
connection. A long-data error (a piece for a parameter the statement lacks) fails every execute
until COM_STMT_RESET, as on the server.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from encoder.primitives import packed_int
from fakemaster.protocol.binary import (
    CURSOR_TYPE_READ_ONLY,
    PARAMETER_DEFINITION,
    BoundParam,
    ExecuteRequest,
    binary_row,
    column_count_payload,
    definition_payloads,
    end_of_rows,
    param_column,
    param_literal,
    prepare_ok_payload,
)
from fakemaster.protocol.charsets import Collation
from fakemaster.protocol.handshake import Capability
from fakemaster.protocol.resultset import (
    Cell,
    ClientProtocol,
    Column,
    ColumnDefinition,
    ColumnFlag,
    ResultSet,
    SqlError,
    converted_rows,
    ok_payload,
    sql_error,
    syntax_error,
)
from fakemaster.sql.outcome import OkResult, Outcome
from fakemaster.sql.placeholders import BoundText, bind, placeholders
from fakemaster.sql.sqltext import line_of
from fakemaster.sql.state import SessionState
from fakemaster.vocabulary.constants import Command
from fakemaster.vocabulary.errcodes import (
    ER_MALFORMED_PACKET,
    ER_PARSE_ERROR,
    ER_STMT_HAS_NO_OPEN_CURSOR,
    ER_UNKNOWN_STMT_HANDLER,
    ER_WRONG_ARGUMENTS,
)
from fakemaster.vocabulary.errors import DecodeError
from fakemaster.vocabulary.packets import ServerStatus

__all__ = ["PREPARED_COMMANDS", "PreparedReply", "PreparedStatements"]

PREPARED_COMMANDS = frozenset(
    {
        Command.STMT_PREPARE,
        Command.STMT_EXECUTE,
        Command.STMT_SEND_LONG_DATA,
        Command.STMT_CLOSE,
        Command.STMT_RESET,
        Command.STMT_FETCH,
    }
)

# The statements that return rows: their columns are known (and checked) at prepare time.
_RETURNS_ROWS = re.compile(
    r"(?:\s|\(|/\*(?!M?!).*?\*/|--\s[^\n]*|#[^\n]*)*"
    r"(?:SELECT|SHOW|EXPLAIN|DESCRIBE|DESC|WITH|VALUES|TABLE|CHECKSUM|ANALYZE)\b",
    re.IGNORECASE | re.DOTALL,
)
_KEY_FLAGS = ColumnFlag.PRI_KEY | ColumnFlag.UNIQUE_KEY | ColumnFlag.MULTIPLE_KEY | 0x4000
_LAST_PREPARED = 0xFFFFFFFF
_BLANKS = " \t\n\r\v\f"
_NEAR = re.compile(r"near '(.*)' at line \d+\Z", re.DOTALL)
# COM_STMT_EXECUTE's fixed head: statement id u32, flags u8, iteration count u32.
_EXECUTE_HEAD_SIZE = 9


@dataclass(slots=True)
class _Cursor:
    definitions: list[ColumnDefinition]
    rows: list[Sequence[Cell]]
    status: int
    sent: int = 0


@dataclass(slots=True)
class _Statement:
    text: str
    positions: list[int]
    columns: int
    bound_types: tuple[tuple[int, bool], ...] | None = None
    long_data: dict[int, bytes] = field(default_factory=dict)
    long_data_error: bool = False
    cursor: _Cursor | None = None
    # The column definitions last sent for it (at prepare, then at each execute): a client
    # with MARIADB_CLIENT_CACHE_METADATA is not sent them again while they stay the same.
    sent_metadata: list[bytes] = field(default_factory=list)


@dataclass(slots=True)
class PreparedReply:
    """What a COM_STMT_* command answers: packets (sequence numbers from 1), or an ERR (which
    the session also keeps for SHOW WARNINGS), and the outcome of a statement it ran (its
    KILLs to carry out). No packets and no error: the command has no answer."""

    payloads: list[bytes] = field(default_factory=list)
    error: SqlError | None = None
    outcome: Outcome | None = None


class PreparedStatements:
    """The prepared statements of one connection."""

    def __init__(self) -> None:
        self._statements: dict[int, _Statement] = {}
        self._last_prepared = 0  # what statement id 0xFFFFFFFF stands for

    def _resolved(self, statement_id: int) -> int:
        """MariaDB's id -1 (0xFFFFFFFF) is the statement this connection prepared last, so
        that a client can send a prepare and its execute without waiting (MariaDB
        Connector/J's pipelining)."""
        return self._last_prepared if statement_id == _LAST_PREPARED else statement_id

    def _find(self, statement_id: int) -> _Statement | None:
        return self._statements.get(self._resolved(statement_id))

    def close_all(self) -> None:
        """COM_RESET_CONNECTION, COM_CHANGE_USER: every statement is gone (ids go on)."""
        self._statements.clear()

    def handle(
        self, command: int, body: bytes, sql: SessionState, protocol: ClientProtocol
    ) -> PreparedReply:
        # Then an execute runs its statement through the statement table, which counts it
        # (Questions, Com_select ...) as MariaDB does.
        sql.count(_COUNTERS.get(command, "Com_stmt_reset"))
        if command == Command.STMT_PREPARE:
            return self._prepare(body.decode("utf-8", "surrogateescape"), sql, protocol)
        if command == Command.STMT_EXECUTE:
            return self._execute(body, sql, protocol)
        if command == Command.STMT_FETCH:
            return self._fetch(body, sql, protocol)
        statement_id = ExecuteRequest.statement_id_of(body)
        statement = self._find(statement_id)
        if command == Command.STMT_CLOSE:
            self._statements.pop(self._resolved(statement_id), None)
            return PreparedReply()
        if command == Command.STMT_SEND_LONG_DATA:
            if statement is not None and len(body) >= 6:
                self._long_data(statement, int.from_bytes(body[4:6], "little"), body[6:])
            return PreparedReply()
        # COM_STMT_RESET
        if statement is None:
            return _unknown(statement_id, "mysqld_stmt_reset")
        statement.long_data.clear()
        statement.long_data_error = False
        statement.cursor = None
        return PreparedReply([ok_payload(protocol, status=sql.status())])

    # -- COM_STMT_PREPARE ------------------------------------------------------------------

    def _prepare(self, text: str, sql: SessionState, protocol: ClientProtocol) -> PreparedReply:
        sql.server.last_statement_id += 1
        statement_id = sql.server.last_statement_id
        # As for a query (MariaDB's alloc_query): blanks around it and ';' after it are not
        # part of it.
        text = text.lstrip(_BLANKS).rstrip(_BLANKS + ";")
        positions = placeholders(text)
        columns: list[ColumnDefinition] = []
        if _RETURNS_ROWS.match(text) or not text:
            bound = bind(text, positions, ["NULL"] * len(positions))
            sql.counting = False  # run for its columns only: a prepare counts in none of them
            try:
                outcome = _run(sql, bound.text)
            finally:
                sql.counting = True
            response = outcome.responses[0]
            if isinstance(response, SqlError):
                return PreparedReply(error=_in_original(response, bound), outcome=outcome)
            if isinstance(response, ResultSet):
                results, connection = outcome.collations[0]
                nulls = [BoundParam(0, False, None)] * len(positions)
                shown = _as_written(response.columns, bound, nulls)
                columns = [column.resolve(results, connection) for column in shown]
        else:
            bound = bind(text, positions, ["NULL"] * len(positions))
            refused = _check_syntax(sql, bound.text)
            if refused is not None:
                return PreparedReply(error=_in_original(refused, bound))
        statement = _Statement(text, positions, len(columns))
        statement.sent_metadata = _encoded(columns, protocol)
        self._statements[statement_id] = statement
        self._last_prepared = statement_id
        status = sql.status()
        payloads = [prepare_ok_payload(statement_id, len(columns), len(positions))]
        payloads += definition_payloads(
            [PARAMETER_DEFINITION] * len(positions), protocol, status=status
        )
        payloads += definition_payloads(columns, protocol, status=status)
        return PreparedReply(payloads)

    # -- COM_STMT_EXECUTE ------------------------------------------------------------------

    def _execute(self, body: bytes, sql: SessionState, protocol: ClientProtocol) -> PreparedReply:
        if len(body) < _EXECUTE_HEAD_SIZE:
            return PreparedReply(error=sql_error(ER_MALFORMED_PACKET))
        statement_id = ExecuteRequest.statement_id_of(body)
        statement = self._find(statement_id)
        if statement is None:
            return _unknown(statement_id, "mysqld_stmt_execute")
        if statement.long_data_error:
            return PreparedReply(error=sql_error(ER_WRONG_ARGUMENTS, "mysqld_stmt_send_long_data"))
        try:
            request = ExecuteRequest.parse(
                body, len(statement.positions), statement.bound_types, statement.long_data
            )
        except DecodeError:
            return PreparedReply(error=sql_error(ER_WRONG_ARGUMENTS, "mysqld_stmt_execute"))
        finally:
            statement.long_data.clear()  # MariaDB forgets it once an execute has read it
        statement.bound_types = request.types
        statement.cursor = None
        literals = [param_literal(param) for param in request.params]
        bound = bind(statement.text, statement.positions, literals)
        outcome = _run(sql, bound.text)
        response = outcome.responses[0]
        status = outcome.statuses[0]
        if isinstance(response, SqlError):
            return PreparedReply(error=_in_original(response, bound), outcome=outcome)
        if isinstance(response, OkResult):
            payload = ok_payload(
                protocol,
                status=status,
                warnings=response.warnings,
                affected_rows=response.affected_rows,
                session_state=response.session_state,
            )
            return PreparedReply([payload], outcome=outcome)
        results, connection = outcome.collations[0]
        shown = _as_written(response.columns, bound, request.params)
        definitions = [column.resolve(results, connection) for column in shown]
        if request.flags & CURSOR_TYPE_READ_ONLY and response.error is None:
            # The server reads the rows into a temporary table: its columns carry no keys.
            definitions = [
                replace(definition, flags=definition.flags & ~_KEY_FLAGS)
                for definition in definitions
            ]
            cursor_status = status | ServerStatus.CURSOR_EXISTS
            payloads = _result_head(statement, definitions, protocol, cursor_status)
            if protocol.deprecate_eof:  # the EOF's place: an OK saying a cursor is open
                payloads.append(end_of_rows(protocol, status=cursor_status))
            rows = converted_rows(response, _target(results), texts_only=True)
            statement.cursor = _Cursor(definitions, list(rows), status)
            return PreparedReply(payloads, outcome=outcome)
        # Status bits the statement adds (QUERY_NO_INDEX_USED after an information_schema scan).
        after_columns, at_end = response.extra_status
        payloads = _result_head(statement, definitions, protocol, status | after_columns)
        if response.error is not None:
            error = response.error.payload(
                protocol_41=protocol.protocol_41, results=_target(results)
            )
            payloads.append(error)
            return PreparedReply(payloads, outcome=outcome)
        rows = converted_rows(response, _target(results), texts_only=True)
        payloads += [binary_row(definitions, row) for row in rows]
        payloads.append(end_of_rows(protocol, status=status | at_end))
        return PreparedReply(payloads, outcome=outcome)

    # -- COM_STMT_FETCH, COM_STMT_SEND_LONG_DATA ------------------------------------------

    def _fetch(self, body: bytes, sql: SessionState, protocol: ClientProtocol) -> PreparedReply:
        statement_id = ExecuteRequest.statement_id_of(body)
        statement = self._find(statement_id)
        if statement is None:
            return _unknown(statement_id, "mysqld_stmt_fetch")
        cursor = statement.cursor
        if cursor is None:
            return PreparedReply(error=sql_error(ER_STMT_HAS_NO_OPEN_CURSOR, statement_id))
        wanted = int.from_bytes(body[4:8].ljust(4, b"\0"), "little")
        rows = cursor.rows[cursor.sent : cursor.sent + wanted]
        cursor.sent += len(rows)
        payloads = [binary_row(cursor.definitions, row) for row in rows]
        if cursor.sent < len(cursor.rows):
            status = cursor.status | ServerStatus.CURSOR_EXISTS
        else:
            status = cursor.status | ServerStatus.LAST_ROW_SENT
            statement.cursor = None
        payloads.append(end_of_rows(protocol, status=status))
        return PreparedReply(payloads)

    @staticmethod
    def _long_data(statement: _Statement, param: int, data: bytes) -> None:
        """A piece of a parameter's value; a parameter the statement does not have is an error
        MariaDB reports at the next execute (COM_STMT_SEND_LONG_DATA has no answer)."""
        if param >= len(statement.positions):
            statement.long_data_error = True
            return
        statement.long_data[param] = statement.long_data.get(param, b"") + data


def _encoded(definitions: Sequence[ColumnDefinition], protocol: ClientProtocol) -> list[bytes]:
    return [d.encode(extended_metadata=protocol.extended_metadata) for d in definitions]


def _result_head(
    statement: _Statement,
    definitions: Sequence[ColumnDefinition],
    protocol: ClientProtocol,
    status: int,
) -> list[bytes]:
    """The column count and definitions before an execute's rows. A client that caches
    metadata gets the count with "metadata follows" 0 and no definitions (the EOF after them
    all the same) when they are the ones last sent for the statement, as MariaDB does."""
    encoded = _encoded(definitions, protocol)
    if protocol.cache_metadata and encoded == statement.sent_metadata:
        head = [packed_int(len(definitions)) + b"\x00"]
        return head if protocol.deprecate_eof else [*head, end_of_rows(protocol, status=status)]
    statement.sent_metadata = encoded
    return [column_count_payload(len(definitions), protocol)] + definition_payloads(
        definitions, protocol, status=status
    )


def _unknown(statement_id: int, command_name: str) -> PreparedReply:
    return PreparedReply(error=sql_error(ER_UNKNOWN_STMT_HANDLER, statement_id, command_name))


# The Com_* counter of each command (MariaDB counts each command it receives in its own).
_COUNTERS: dict[int, str] = {
    Command.STMT_PREPARE: "Com_stmt_prepare",
    Command.STMT_EXECUTE: "Com_stmt_execute",
    Command.STMT_FETCH: "Com_stmt_fetch",
    Command.STMT_CLOSE: "Com_stmt_close",
    Command.STMT_SEND_LONG_DATA: "Com_stmt_send_long_data",
}


def _run(sql: SessionState, text: str) -> Outcome:
    """The statement's answer through the statement table: one statement only, as a prepared
    statement is one statement whatever the client's CLIENT_MULTI_STATEMENTS."""
    from fakemaster.sql.statements import execute

    capabilities = sql.capabilities
    sql.capabilities = capabilities & ~Capability.MULTI_STATEMENTS
    try:
        return execute(sql, text)
    finally:
        sql.capabilities = capabilities


def _check_syntax(sql: SessionState, text: str) -> SqlError | None:
    from fakemaster.sql.statements import check_syntax

    return check_syntax(sql, text)


def _as_written(
    columns: Sequence[Column], bound: BoundText, params: Sequence[BoundParam]
) -> list[Column]:
    """The answer's columns named after the statement as written: a column made from an
    expression takes the original text of that expression, and a select item that is a
    placeholder alone is described by the value bound to it."""
    shown: list[Column] = []
    cursor = 0
    for column in columns:
        if column.org_table:  # a table's column: named by the table, not by the text
            shown.append(column)
            continue
        name, param, cursor = bound.map_name(column.name, cursor)
        if param is not None:
            shown.append(param_column(params[param]))
        else:
            shown.append(replace(column, name=name))
    return shown


def _in_original(error: SqlError, bound: BoundText) -> SqlError:
    """A syntax error quotes the statement as the client wrote it, from the same place."""
    if error.errno != ER_PARSE_ERROR:
        return error
    near = _NEAR.search(error.message)
    if near is None:
        return error
    quoted = near.group(1)
    head = quoted[:-3] if len(quoted) == 80 and quoted.endswith("...") else quoted
    start = bound.text.rfind(head) if head else len(bound.text)
    if start < 0:
        return error
    tail = bound.original_suffix(bound.text[start:])
    if tail is None:
        return error
    offset = len(bound.original) - len(tail)
    return syntax_error(tail, line_of(bound.original, offset))


def _target(results: Collation | None) -> str | None:
    """The character set ``character_set_results`` converts to (None: no conversion)."""
    return None if results is None or results.is_binary_charset else results.charset
