"""What a primary answers about its own replication: SHOW [ALL] SLAVE|REPLICA STATUS.

A fake master replicates from nobody: every form is the result set a MariaDB 10.11 primary
sends, with its column definitions and no row; a named connection (or the session's
``default_master_connection``) is ER_MASTER_INFO, as there.
"""

from __future__ import annotations

from fakemaster.config.accounts import Privilege
from fakemaster.config.variables import lookup
from fakemaster.protocol.resultset import Column, ColumnFlag, ResultSet, sql_error, text_column
from fakemaster.sql.outcome import Context, Response
from fakemaster.sql.sqltext import Tok
from fakemaster.vocabulary.constants import ColumnType
from fakemaster.vocabulary.errcodes import ER_MASTER_INFO

__all__ = ["SLAVE_STATUS_PRIVILEGES", "show_slave_status"]

# sql_parse.cc: PRIV_STMT_SHOW_SLAVE_STATUS.
SLAVE_STATUS_PRIVILEGES = Privilege.SUPER | Privilege.SLAVE_MONITOR

_TEXT, _LONG, _LONGLONG = "text", ColumnType.LONG, ColumnType.LONGLONG

# (name, type, characters for text, display length for numbers), as a 10.11 primary sends
# them (captured from one: tests/integration/test_sql_comments_differential.py compares).
_STATUS_COLUMNS: tuple[tuple[str, object, int], ...] = (
    ("Slave_IO_State", _TEXT, 30),
    ("Master_Host", _TEXT, 766),
    ("Master_User", _TEXT, 385),
    ("Master_Port", _LONG, 7),
    ("Connect_Retry", _LONG, 10),
    ("Master_Log_File", _TEXT, 512),
    ("Read_Master_Log_Pos", _LONGLONG, 10),
    ("Relay_Log_File", _TEXT, 512),
    ("Relay_Log_Pos", _LONGLONG, 10),
    ("Relay_Master_Log_File", _TEXT, 512),
    ("Slave_IO_Running", _TEXT, 3),
    ("Slave_SQL_Running", _TEXT, 3),
    ("Replicate_Do_DB", _TEXT, 20),
    ("Replicate_Ignore_DB", _TEXT, 20),
    ("Replicate_Do_Table", _TEXT, 20),
    ("Replicate_Ignore_Table", _TEXT, 23),
    ("Replicate_Wild_Do_Table", _TEXT, 24),
    ("Replicate_Wild_Ignore_Table", _TEXT, 28),
    ("Last_Errno", _LONG, 4),
    ("Last_Error", _TEXT, 20),
    ("Skip_Counter", _LONG, 10),
    ("Exec_Master_Log_Pos", _LONGLONG, 10),
    ("Relay_Log_Space", _LONGLONG, 10),
    ("Until_Condition", _TEXT, 6),
    ("Until_Log_File", _TEXT, 512),
    ("Until_Log_Pos", _LONGLONG, 10),
    ("Master_SSL_Allowed", _TEXT, 7),
    ("Master_SSL_CA_File", _TEXT, 512),
    ("Master_SSL_CA_Path", _TEXT, 512),
    ("Master_SSL_Cert", _TEXT, 512),
    ("Master_SSL_Cipher", _TEXT, 512),
    ("Master_SSL_Key", _TEXT, 512),
    ("Seconds_Behind_Master", _LONGLONG, 10),
    ("Master_SSL_Verify_Server_Cert", _TEXT, 3),
    ("Last_IO_Errno", _LONG, 4),
    ("Last_IO_Error", _TEXT, 20),
    ("Last_SQL_Errno", _LONG, 4),
    ("Last_SQL_Error", _TEXT, 20),
    ("Replicate_Ignore_Server_Ids", _TEXT, 512),
    ("Master_Server_Id", _LONG, 8),
    ("Master_SSL_Crl", _TEXT, 512),
    ("Master_SSL_Crlpath", _TEXT, 512),
    ("Using_Gtid", _TEXT, 11),
    ("Gtid_IO_Pos", _TEXT, 30),
    ("Replicate_Do_Domain_Ids", _TEXT, 512),
    ("Replicate_Ignore_Domain_Ids", _TEXT, 512),
    ("Parallel_Mode", _TEXT, 12),
    ("SQL_Delay", _LONG, 10),
    ("SQL_Remaining_Delay", _LONG, 8),
    ("Slave_SQL_Running_State", _TEXT, 20),
    ("Slave_DDL_Groups", _LONGLONG, 20),
    ("Slave_Non_Transactional_Groups", _LONGLONG, 20),
    ("Slave_Transactional_Groups", _LONGLONG, 20),
    ("Replicate_Rewrite_DB", _TEXT, 23),
)
# SHOW ALL SLAVES STATUS: two columns first, six more at the end.
_ALL_FIRST: tuple[tuple[str, object, int], ...] = (
    ("Connection_name", _TEXT, 192),
    ("Slave_SQL_State", _TEXT, 30),
)
_ALL_LAST: tuple[tuple[str, object, int], ...] = (
    ("Retried_transactions", _LONG, 10),
    ("Max_relay_log_size", _LONGLONG, 10),
    ("Executed_log_entries", _LONG, 10),
    ("Slave_received_heartbeats", _LONG, 10),
    ("Slave_heartbeat_period", ColumnType.DOUBLE, 10),
    ("Gtid_Slave_Pos", _TEXT, 0),
)


def _column(name: str, kind: object, size: int) -> Column:
    if kind == _TEXT:
        return text_column(name, size, flags=ColumnFlag.NOT_NULL, decimals=39)
    assert isinstance(kind, int)
    if kind == ColumnType.DOUBLE:  # Slave_heartbeat_period: seconds with 3 decimals
        return Column(
            name, kind, length=size, flags=ColumnFlag.NOT_NULL | ColumnFlag.BINARY, decimals=3
        )
    flags = ColumnFlag.NOT_NULL | ColumnFlag.UNSIGNED | ColumnFlag.BINARY
    return Column(name, kind, length=size, flags=flags)


def show_slave_status(ctx: Context) -> Response:
    """SHOW SLAVE|REPLICA ['name'] STATUS [FOR CHANNEL 'name'], SHOW ALL SLAVES|REPLICAS
    STATUS."""
    parser = ctx.parser(1)
    every = parser.accept_word("ALL") is not None
    if every:
        parser.expect_word("SLAVES", "REPLICAS")
    else:
        parser.expect_word("SLAVE", "REPLICA")
    name: str | None = None
    if not every and parser.peek.kind is Tok.STRING:
        name = parser.next().text
    parser.expect_word("STATUS")
    if not every and name is None and parser.accept_word("FOR"):
        parser.expect_word("CHANNEL")
        token = parser.next()
        if token.kind is not Tok.STRING:
            raise parser.error(token)
        name = token.text
    parser.expect_end()
    ctx.session.require(SLAVE_STATUS_PRIVILEGES)
    if every:
        specs = (*_ALL_FIRST, *_STATUS_COLUMNS, *_ALL_LAST)
        return ResultSet([_column(*spec) for spec in specs])
    if name is None:
        variable = lookup("default_master_connection")
        assert variable is not None
        name = str(ctx.session.value_of(variable, "") or "")
    if name:  # a primary has no replica connection of any name
        raise sql_error(ER_MASTER_INFO, name)
    return ResultSet([_column(*spec) for spec in _STATUS_COLUMNS])
