"""Statements of a consistent read: START TRANSACTION WITH CONSISTENT SNAPSHOT, FLUSH TABLES
[WITH READ LOCK], UNLOCK TABLES, SAVEPOINT / ROLLBACK TO / RELEASE SAVEPOINT, and the
``Binlog_snapshot_file`` / ``Binlog_snapshot_position`` status a dump reads its coordinates
from.

The tables change only when the binlog does (a scenario's transactions are released into its
binlog), and FLUSH TABLES WITH READ LOCK holds that back as it holds commits back on MariaDB:
while a connection holds it, releases wait (:mod:`scenarios.live`), so SHOW MASTER STATUS and
every read agree until UNLOCK TABLES (or the connection's end). The read of a transaction is one
:class:`~fakemaster.sql.state.SessionSnapshot` taken with the binlog coordinates of the same
instant. ``WITH CONSISTENT SNAPSHOT`` takes it at once; a plain ``BEGIN`` at its first read of a
table (InnoDB's REPEATABLE READ); outside a transaction every read takes a new one. As on
MariaDB, ``SHOW STATUS LIKE 'binlog_snapshot_%'`` gives the coordinates of the transaction's
snapshot, the current ones outside one (what ``mariadb-dump --single-transaction
--master-data`` uses instead of FLUSH TABLES WITH READ LOCK).
"""

from __future__ import annotations

from fakemaster.config.accounts import Privilege
from fakemaster.protocol.resultset import sql_error
from fakemaster.sql.outcome import Context, OkResult, Response
from fakemaster.sql.state import SessionSnapshot, SessionState
from fakemaster.sql.tables.catalogue import find_table
from fakemaster.sql.tables.system_tables import is_system_table
from fakemaster.vocabulary.errcodes import (
    ER_CANT_LOCK_LOG_TABLE,
    ER_DBACCESS_DENIED_ERROR,
    ER_NO_DB_ERROR,
    ER_NO_SUCH_TABLE,
    ER_NONUNIQ_TABLE,
    ER_SP_DOES_NOT_EXIST,
)

__all__ = [
    "binlog_snapshot_status",
    "flush_tables",
    "lock_tables",
    "release_table_locks",
    "read_snapshot",
    "savepoint",
    "start_consistent_snapshot",
    "unlock_tables",
]


def read_snapshot(session: SessionState) -> SessionSnapshot:
    """What a read sees: the transaction's snapshot (taken now at its first read), else the
    current tables."""
    if session.snapshot is not None:
        return session.snapshot
    point = session.server.snapshot_point()
    if session.in_transaction:
        session.snapshot = point
    return point


def start_consistent_snapshot(ctx: Context) -> Response:
    """START TRANSACTION [READ ONLY|READ WRITE,] WITH CONSISTENT SNAPSHOT."""
    session = ctx.session
    parser = ctx.parser(2)
    session.transaction_read_only = bool(session.variables.get("tx_read_only"))
    consistent = False
    while True:
        if parser.accept_word("WITH"):
            parser.expect_word("CONSISTENT")
            parser.expect_word("SNAPSHOT")
            consistent = True
        elif parser.accept_word("READ"):
            session.transaction_read_only = parser.expect_word("ONLY", "WRITE").is_word("ONLY")
        else:
            raise parser.error()
        if not parser.accept_op(","):
            break
    parser.expect_end()
    release_table_locks(session)
    session.in_transaction = True
    session.savepoints.clear()
    session.snapshot = session.server.snapshot_point() if consistent else None
    return OkResult()


def flush_tables(ctx: Context) -> Response:
    """FLUSH [LOCAL|NO_WRITE_TO_BINLOG] TABLES [WITH READ LOCK]: RELOAD needed (as on
    MariaDB); the read lock is held by the session until UNLOCK TABLES."""
    parser = ctx.parser(1)
    parser.accept_word("LOCAL", "NO_WRITE_TO_BINLOG")
    parser.expect_word("TABLES", "TABLE")
    lock = False
    if parser.accept_word("WITH"):
        parser.expect_word("READ")
        parser.expect_word("LOCK")
        lock = True
    parser.expect_end()
    ctx.session.require(Privilege.RELOAD)
    if lock:
        ctx.server.lock_tables(ctx.session.thread_id)
    return OkResult()


def lock_tables(ctx: Context) -> Response:
    """LOCK TABLE[S] t [[AS] alias] READ [LOCAL] | [LOW_PRIORITY] WRITE [, ...]: what a dump
    without ``--single-transaction`` or ``--master-data`` takes for each database. As on
    MariaDB 10.11: the session's transaction ends first (an implicit COMMIT, even when the
    statement then fails), a name or alias twice is 1066, an account without LOCK TABLES gets
    1044 for the database, a missing table 1146, a log table (``mysql.general_log``) 1556. While
    held, releases wait as under FLUSH TABLES WITH READ LOCK, until UNLOCK TABLES or the
    connection's end (stricter than MariaDB, which holds back only the transactions writing a
    locked table: a fake master's transactions are released whole)."""
    session = ctx.session
    session.in_transaction = False
    session.snapshot = None
    session.savepoints.clear()
    release_table_locks(session)  # the earlier ones go first, even when this one fails
    parser = ctx.parser(1)
    parser.expect_word("TABLES", "TABLE")
    named: list[tuple[str | None, str]] = []
    aliases: set[str] = set()
    while True:
        first = parser.name()
        database, name = session.database, first
        if parser.accept_op("."):
            database, name = first, parser.name()
        alias = name
        if parser.accept_word("AS"):
            alias = parser.name()
        elif not parser.peek.is_word("READ", "WRITE", "LOW_PRIORITY"):
            alias = parser.name()
        if parser.accept_word("READ"):
            parser.accept_word("LOCAL")
        else:
            parser.accept_word("LOW_PRIORITY")
            parser.expect_word("WRITE")
        if alias.lower() in aliases:
            raise sql_error(ER_NONUNIQ_TABLE, alias)
        aliases.add(alias.lower())
        named.append((database, name))
        if not parser.accept_op(","):
            break
    parser.expect_end()
    account = session.account
    catalogue = ctx.server.tables
    for database, name in named:
        if database is None:
            raise sql_error(ER_NO_DB_ERROR)
        if not account.privileges_on(database) & Privilege.LOCK_TABLES:
            raise sql_error(ER_DBACCESS_DENIED_ERROR, account.user, account.host, database)
        table = find_table(catalogue, database, name) if catalogue is not None else None
        if table is None:
            raise sql_error(ER_NO_SUCH_TABLE, database, name)
        if is_system_table(table):
            raise sql_error(ER_CANT_LOCK_LOG_TABLE)
    ctx.server.lock_tables(session.thread_id)
    session.locked_tables = frozenset((db, name) for db, name in named if db is not None)
    return OkResult()


def release_table_locks(session: SessionState) -> None:
    """What BEGIN / START TRANSACTION do to LOCK TABLES (not to FLUSH TABLES WITH READ LOCK):
    release them."""
    if session.locked_tables is not None:
        session.locked_tables = None
        session.server.unlock_tables(session.thread_id)


def unlock_tables(ctx: Context) -> Response:
    ctx.parser(2).expect_end()
    ctx.session.locked_tables = None
    ctx.server.unlock_tables(ctx.session.thread_id)
    return OkResult()


def savepoint(ctx: Context) -> Response:
    """SAVEPOINT name, ROLLBACK [WORK] TO [SAVEPOINT] name, RELEASE SAVEPOINT name. Reads
    change nothing, so a rollback to a savepoint only forgets the later ones; outside a
    transaction there are none (MariaDB: SAVEPOINT is then a no-op)."""
    session = ctx.session
    parser = ctx.parser(0)
    first = parser.next()
    if first.is_word("SAVEPOINT"):
        name = parser.name()
        parser.expect_end()
        if session.in_transaction:
            _forget(session, name)
            session.savepoints.append(name)
        return OkResult()
    if first.is_word("RELEASE"):
        parser.expect_word("SAVEPOINT")
        name = parser.name()
        parser.expect_end()
        index = _index(session, name)
        del session.savepoints[index:]
        return OkResult()
    parser.accept_word("WORK")
    parser.expect_word("TO")
    parser.accept_word("SAVEPOINT")
    name = parser.name()
    parser.expect_end()
    index = _index(session, name)
    del session.savepoints[index + 1 :]
    return OkResult()


def _forget(session: SessionState, name: str) -> None:
    session.savepoints[:] = [s for s in session.savepoints if s.lower() != name.lower()]


def _index(session: SessionState, name: str) -> int:
    for index, known in enumerate(session.savepoints):
        if known.lower() == name.lower():
            return index
    raise sql_error(ER_SP_DOES_NOT_EXIST, "SAVEPOINT", name)


def binlog_snapshot_status(session: SessionState) -> list[tuple[str, str]]:
    """The Binlog_snapshot_file and Binlog_snapshot_position status rows."""
    point = session.snapshot
    if point is None:
        positions = session.server.positions
        logs = list(positions.binary_logs()) if positions is not None else []
        file_name, position = logs[-1] if logs else ("", 0)
    else:
        file_name, position = point.file_name, point.position
    return [("Binlog_snapshot_file", file_name), ("Binlog_snapshot_position", str(position))]
