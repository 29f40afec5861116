"""The SQL-visible state behind COM_QUERY.

:class:`ServerState` is one per fake master (global variables, connected threads and
registered replicas, the binlog files and GTID positions of :class:`BinlogPositions`);
:class:`SessionState` one per connection (session and user variables, current database,
transaction flag).
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from fakemaster.config.accounts import Account, Privilege, privilege_names
from fakemaster.config.served_variables import SERVED_VARIABLES, ServedVariables
from fakemaster.config.server_config import ServerConfig
from fakemaster.config.variables import SESSION_VARIABLES, SystemVariable, Value
from fakemaster.protocol.charsets import (
    UTF8MB3_GENERAL_CI,
    Collation,
    charset_default,
    collation_by_id,
    collation_by_name,
)
from fakemaster.vocabulary.errcodes import (
    ER_INCORRECT_GLOBAL_LOCAL_VAR,
    ER_SPECIFIC_ACCESS_DENIED_ERROR,
)
from fakemaster.vocabulary.errors import ConfigError
from fakemaster.vocabulary.packets import ServerStatus

if TYPE_CHECKING:
    # The tables, the typed values and the responses' module are loaded at the first question
    # that needs them: a server answers its first handshake without them (issue #25).
    from fakemaster.protocol.resultset import SqlError
    from fakemaster.sql.sqlvalue import SqlValue
    from fakemaster.sql.tables.catalogue import Snapshot, TableCatalogue
    from fakemaster.sql.tables.client_tables import ClientStore

__all__ = [
    "BinlogPositions",
    "ConnectionInfo",
    "ReplicaInfo",
    "RotatingBinlog",
    "ServerState",
    "SessionSnapshot",
    "SessionState",
]


class BinlogPositions(Protocol):
    """What SQL statements need to know about the binlog (the store provides it)."""

    def binary_logs(self) -> Sequence[tuple[str, int]]:
        """(file name, size) of every binlog file, oldest first."""
        ...

    def gtid_binlog_pos(self) -> str:
        """@@gtid_binlog_pos: the last GTID logged in each domain."""
        ...

    def gtid_binlog_state(self) -> str:
        """@@gtid_binlog_state: the last GTID of each (domain, server) pair."""
        ...

    def binlog_gtid_pos(self, file_name: str, position: int) -> str | None:
        """BINLOG_GTID_POS(): the GTID position at an event boundary, None if not one."""
        ...


@runtime_checkable
class RotatingBinlog(Protocol):
    """A served binlog that FLUSH BINARY LOGS can end (a memory store: a ROTATE, then a new
    file). A directory of files another server writes cannot."""

    def rotate(self) -> str:
        """End the current file with a ROTATE and start the next; its name."""
        ...


@dataclass(frozen=True, slots=True)
class SessionSnapshot:
    """The tables and the binlog coordinates at one instant (START TRANSACTION WITH CONSISTENT
    SNAPSHOT keeps one for its transaction)."""

    tables: Snapshot | None
    file_name: str
    position: int
    gtid_binlog_pos: str


@dataclass(slots=True)
class ReplicaInfo:
    """What COM_REGISTER_SLAVE told (SHOW SLAVE HOSTS)."""

    server_id: int
    host: str
    user: str
    password: str
    port: int
    rank: int
    master_id: int


@dataclass(slots=True)
class ConnectionInfo:
    """One open connection as the server's state sees it (SHOW PROCESSLIST, KILL...)."""

    thread_id: int
    host: str
    user: str = ""
    replica: ReplicaInfo | None = None
    dumping: bool = False
    # The server id of its COM_BINLOG_DUMP (None: not dumping that way).
    dump_server_id: int | None = None


class ServerState:
    """State shared by all connections of one fake master."""

    def __init__(
        self,
        config: ServerConfig,
        positions: BinlogPositions | None = None,
        *,
        clock: Callable[[], float] = time.time,
        port: int | None = None,
        tables: TableCatalogue | None = None,
    ) -> None:
        self.config = config
        self.positions = positions
        # The served tables and the tables clients create (the ``tables`` and
        # ``client_tables`` properties), made at the first question about tables.
        self._served_tables = tables
        self._tables: TableCatalogue | None = None
        self._tables_made = False
        self._client_tables: ClientStore | None = None
        self._tables_lock = threading.Lock()
        self.clock = clock
        self.started_at = clock()
        self.globals: dict[str, Value] = config.global_variables(port)
        # The variables the served binlog settles (version, server_id, ...): see
        # fakemaster.config.served_variables. A contradiction with the configuration found after
        # check_served() goes to on_config_error (raised when None).
        self.served = ServedVariables.for_positions(config, positions)
        self.on_config_error: Callable[[ConfigError], None] | None = None
        self.connections: dict[int, ConnectionInfo] = {}
        # The last prepared statement id given out: MariaDB numbers prepared statements across
        # the server, not per connection (fakemaster.core.prepared).
        self.last_statement_id = 0
        # Connections holding FLUSH TABLES WITH READ LOCK: while any does, nothing commits (a
        # served scenario's releases wait, see scenarios.live); on_unlocked runs when the last
        # one lets go.
        self.read_locks: set[int] = set()
        self.on_unlocked: Callable[[], None] | None = None
        self._next_thread_id = config.first_thread_id
        self.accounts: dict[str, Account] = config.all_accounts()
        # The status counters the server counts (Com_*, Questions ...: sql.status_variables),
        # over every session, and the most connections open at once.
        self.counts: Counter[str] = Counter()
        self.max_used_connections = 0

    @property
    def tables(self) -> TableCatalogue | None:
        """The served tables (SHOW, SELECT, information_schema): see sql.tables.catalogue; with
        the mysql database's own (sql.tables.system_tables) when the server lists mysql."""
        if not self._tables_made:
            with self._tables_lock:  # a big statement may ask from a worker thread
                if not self._tables_made:
                    from fakemaster.sql.tables.system_tables import (
                        SYSTEM_DATABASE,
                        WithSystemTables,
                    )

                    self._tables = WithSystemTables(
                        self._served_tables, system=SYSTEM_DATABASE in self.config.databases
                    )
                    self._tables_made = True
        return self._tables

    @tables.setter
    def tables(self, tables: TableCatalogue | None) -> None:
        with self._tables_lock:
            self._tables = tables
            self._tables_made = True

    @property
    def client_tables(self) -> ClientStore:
        """What clients create and write (sql.tables.client_tables): never in the served
        binlog."""
        store = self._client_tables
        if store is None:
            with self._tables_lock:
                if self._client_tables is None:
                    from fakemaster.sql.tables.client_tables import ClientStore

                    self._client_tables = ClientStore()
                store = self._client_tables
        return store

    @property
    def connections_opened(self) -> int:
        """Connections since the start (the Connections status counter)."""
        return self._next_thread_id - self.config.first_thread_id

    def check_served(self) -> None:
        """Bring the served variables up to date; ConfigError (the first one, naming the others)
        when the configuration contradicts the served binlog."""
        errors = self.served.sync(self.globals)
        if errors:
            first = errors[0]
            if len(errors) > 1:
                others = "; ".join(str(error) for error in errors[1:])
                first.args = (f"{first}; and {others}",)
            raise first

    def sync_served(self) -> None:
        """Take in what was appended to the binlog since the last call."""
        for error in self.served.sync(self.globals):
            if self.on_config_error is None:
                raise error
            self.on_config_error(error)

    def set_port(self, port: int) -> None:
        self.globals["port"] = port
        self.globals["report_port"] = port

    def open_connection(self, host: str) -> ConnectionInfo:
        self.sync_served()  # the new session copies the globals
        info = ConnectionInfo(self._next_thread_id, host)
        self._next_thread_id += 1
        self.connections[info.thread_id] = info
        self.max_used_connections = max(self.max_used_connections, len(self.connections))
        return info

    def close_connection(self, thread_id: int) -> None:
        self.connections.pop(thread_id, None)
        self.unlock_tables(thread_id)  # a closed connection's read lock goes with it

    def lock_tables(self, thread_id: int) -> None:
        """FLUSH TABLES WITH READ LOCK by connection ``thread_id``."""
        self.read_locks.add(thread_id)

    def unlock_tables(self, thread_id: int) -> None:
        """UNLOCK TABLES (or the end) of connection ``thread_id``: when no connection holds the
        read lock any more, what waited for it goes on (``on_unlocked``)."""
        if thread_id not in self.read_locks:
            return
        self.read_locks.discard(thread_id)
        if not self.read_locks and self.on_unlocked is not None:
            self.on_unlocked()

    def claim_dump(self, thread_id: int, server_id: int) -> int | None:
        """Connection ``thread_id`` starts a COM_BINLOG_DUMP as replica ``server_id``; the
        connection already dumping for that server id, which MariaDB ends (ER_SLAVE_SAME_ID),
        if any. Server id 0 (a one-shot reader such as mariadb-binlog without --stop-never)
        neither ends nor is ended by another dump, as on a real primary."""
        info = self.connections.get(thread_id)
        if info is not None:
            info.dump_server_id = server_id
        if server_id == 0:
            return None
        # A copy: a big statement read in a worker thread may run this while the loop opens
        # or closes a connection.
        for other_id, other in list(self.connections.items()):
            if other_id != thread_id and other.dump_server_id == server_id:
                other.dump_server_id = None
                return other_id
        return None

    def replicas(self) -> list[ReplicaInfo]:
        """Registered replicas, newest connection first (the order of MariaDB's thread list)."""
        return [
            info.replica
            for _, info in sorted(self.connections.items(), reverse=True)
            if info.replica is not None
        ]

    def snapshot_point(self) -> SessionSnapshot:
        """The tables and SHOW MASTER STATUS at this instant (one step of the binlog's own
        when it offers one: ``snapshot_point()`` of a scenario's store)."""
        positions = self.positions
        point = getattr(positions, "snapshot_point", None)
        if point is not None:
            from fakemaster.sql.tables.system_tables import SystemSnapshot

            tables, (file_name, position), gtid_pos = point()
            return SessionSnapshot(SystemSnapshot(tables), file_name, position, gtid_pos)
        logs = list(positions.binary_logs()) if positions is not None else []
        file_name, position = logs[-1] if logs else ("", 0)
        gtid_pos = positions.gtid_binlog_pos() if positions is not None else ""
        tables = self.tables.snapshot() if self.tables is not None else None
        return SessionSnapshot(tables, file_name, position, gtid_pos)

    def databases(self) -> list[str]:
        """Every database: the configured ones and those of the served tables."""
        names = set(self.config.databases)
        names.update(self.client_tables.databases)
        if self.tables is not None:
            names.update(self.tables.databases())
        return sorted(names)

    def dynamic_global(self, name: str) -> Value:
        """A global value, with the ones computed from the binlog or the clock filled in."""
        if name in SERVED_VARIABLES:
            self.sync_served()
        positions = self.positions
        if name in ("gtid_binlog_pos", "gtid_current_pos"):
            return positions.gtid_binlog_pos() if positions is not None else self.globals[name]
        if name == "gtid_binlog_state":
            return positions.gtid_binlog_state() if positions is not None else self.globals[name]
        return self.globals[name]


@dataclass(slots=True)
class SessionState:
    """The SQL-visible state of one connection."""

    server: ServerState
    thread_id: int
    user: str
    host: str
    # The account it logged in with: what it may do.
    account: Account = field(default_factory=lambda: Account(user=""))
    capabilities: int = 0
    database: str | None = None
    variables: dict[str, Value] = field(default_factory=dict)
    user_variables: dict[str, SqlValue] = field(default_factory=dict)
    in_transaction: bool = False
    transaction_read_only: bool = False
    # SHOW WARNINGS of the last statement: (level, code, message).
    diagnostics: list[tuple[str, int, str]] = field(default_factory=list)
    # character_set_results is a collation inside the server: the handshake's or SET NAMES'
    # COLLATE one; None: no conversion (SET character_set_results = NULL).
    results_collation_id: int | None = None
    # START TRANSACTION WITH CONSISTENT SNAPSHOT: what the transaction reads.
    snapshot: SessionSnapshot | None = None
    # SAVEPOINTs of the transaction, oldest first.
    savepoints: list[str] = field(default_factory=list)
    # LOCK TABLES: the (database, table) it holds, the only tables it may read until UNLOCK
    # TABLES or a new transaction; None: no LOCK TABLES.
    locked_tables: frozenset[tuple[str, str]] | None = None
    # The session's own status counters (SHOW SESSION STATUS), counted in the server's too;
    # not while ``counting`` is off (COM_STMT_PREPARE runs a statement to learn its columns).
    counts: Counter[str] = field(default_factory=Counter)
    counting: bool = True

    @classmethod
    def create(
        cls,
        server: ServerState,
        thread_id: int,
        user: str,
        host: str,
        client_collation: int,
        account: Account | None = None,
    ) -> SessionState:
        """A fresh session of ``user`` (its account from the server's, unless given)."""
        server_globals = server.globals
        variables = {name: server_globals[name] for name in SESSION_VARIABLES}
        variables["pseudo_thread_id"] = thread_id
        collation = collation_by_id(client_collation)
        results: int | None = None
        if collation is not None:
            variables["character_set_client"] = collation.charset
            variables["character_set_connection"] = collation.charset
            variables["character_set_results"] = collation.charset
            variables["collation_connection"] = collation.name
            results = collation.id
        if account is None:
            account = server.accounts.get(user) or Account(user=user)
        session = cls(server, thread_id, user, host, account, variables=variables)
        session.results_collation_id = results
        if results is None:
            session.set_results_charset(variables["character_set_results"])
        return session

    def count(self, counter: str, step: int = 1) -> None:
        """One more (``step``) in status counter ``counter``, the session's and the server's."""
        if not self.counting:
            return
        self.counts[counter] += step
        self.server.counts[counter] += step

    def require(self, accepted: Privilege) -> None:
        """ER_SPECIFIC_ACCESS_DENIED_ERROR naming ``accepted`` unless the account holds one of
        them."""
        if not self.account.has_any(accepted):
            from fakemaster.protocol.resultset import sql_error

            raise sql_error(ER_SPECIFIC_ACCESS_DENIED_ERROR, privilege_names(accepted))

    def set_results_charset(self, charset: Value, collation: Collation | None = None) -> None:
        """Set character_set_results to a character set (None: NULL) or a collation."""
        if collation is None and charset is not None:
            collation = charset_default(str(charset))
        self.variables["character_set_results"] = None if collation is None else collation.charset
        self.results_collation_id = None if collation is None else collation.id

    @property
    def autocommit(self) -> bool:
        return bool(self.variables["autocommit"])

    def status(self) -> int:
        status = ServerStatus.AUTOCOMMIT if self.autocommit else 0
        if self.in_transaction:
            status |= ServerStatus.IN_TRANS
            if self.transaction_read_only:
                status |= ServerStatus.IN_TRANS_READONLY
        modes = str(self.variables.get("sql_mode") or "").split(",")
        if "ANSI_QUOTES" in modes:
            status |= ServerStatus.ANSI_QUOTES
        if "NO_BACKSLASH_ESCAPES" in modes:
            status |= ServerStatus.NO_BACKSLASH_ESCAPES
        return int(status)

    def connection_collation(self) -> Collation:
        name = self.variables["collation_connection"]
        collation = collation_by_name(str(name)) if name is not None else None
        return collation or _must(collation_by_id(UTF8MB3_GENERAL_CI))

    def results_collation(self) -> Collation | None:
        """The collation result text is converted to; None: no conversion (NULL)."""
        if self.results_collation_id is None:
            return None
        return collation_by_id(self.results_collation_id)

    def value_of(self, var: SystemVariable, scope: str) -> Value:
        """The value ``SELECT @@[scope.]name`` reads; ER_INCORRECT_GLOBAL_LOCAL_VAR for the
        wrong scope."""
        name = var.name
        if scope == "global":
            if not var.allows_global():
                raise _wrong_scope(name, "SESSION")
            return self.server.dynamic_global(name)
        if scope in ("session", "local") and not var.allows_session():
            raise _wrong_scope(name, "GLOBAL")
        if not var.allows_session():
            return self.server.dynamic_global(name)
        return self._session_value(name)

    def _session_value(self, name: str) -> Value:
        if name == "timestamp":
            return self.server.clock()
        if name == "warning_count":
            return sum(1 for level, _, _ in self.diagnostics if level != "Note")
        if name == "error_count":
            return sum(1 for level, _, _ in self.diagnostics if level == "Error")
        if name == "in_transaction":
            return int(self.in_transaction)
        return self.variables[name]


def _wrong_scope(name: str, scope: str) -> SqlError:
    from fakemaster.protocol.resultset import sql_error

    return sql_error(ER_INCORRECT_GLOBAL_LOCAL_VAR, name, scope)


def _must(collation: Collation | None) -> Collation:
    assert collation is not None
    return collation
