"""A scenario: tables with their initial rows, then transactions of row changes, under binlog
settings.

The short form, for the common case::

    scenario = Scenario()
    scenario.create_table(
        "CREATE TABLE shop.orders (id INT PRIMARY KEY, status ENUM('new','paid') NOT NULL)"
    )
    scenario.insert("shop.orders", {"id": 1, "status": "new"})      # one transaction
    with scenario.transaction(domain_id=1, server_id=7) as tx:        # several changes in one
        tx.update("shop.orders", {"id": 1}, {"status": "paid"})
        tx.insert("shop.orders", {"id": 2, "status": "new"}, {"id": 3, "status": "new"})
        tx.delete("shop.orders", {"id": 2})

Changes are column -> value dicts of plain Python values (converted per column, see
:mod:`scenarios.values`). An insert may leave out columns that have a DEFAULT or are NULL-able;
an update and a delete name their row by its key (PRIMARY KEY, or the first UNIQUE NOT NULL
key), or, in a table without a key, by its whole value (one of identical rows is changed, as
``LIMIT 1`` does); an update may change the key. Each change is checked against the tables as
they are when it is added (:class:`~scenarios.errors.HistoryError` for a duplicate key or a row
that is not there), so a scenario always describes a history that can happen.

Each change is one statement, except an insert of several rows (one multi-row ``INSERT``). A
statement that changes nothing (an update to the values the row has) is kept -- the server runs
it -- but writes no rows event; a transaction whose statements change nothing writes nothing and
takes no GTID, as on a real server.

:meth:`Scenario.rotate` puts a rotation (``FLUSH BINARY LOGS``) between transactions:
``scenario.steps`` holds both kinds of steps in order. :class:`Settings` mirror the server
variables of the binlog. DDL statements (:meth:`Scenario.ddl`, :meth:`Scenario.alter_table`,
``create_table`` after the first step, ``drop_table``, ``truncate_table``, ``rename_table``) are
steps too (:class:`Ddl`): the rows of a change always have the schema of their table at that
point.

The changes a transaction holds are :mod:`scenarios.changes`' classes; :attr:`Ddl.sql` and
:meth:`Scenario.describe` spell SQL with :mod:`scenarios.sql`, below this module; the
statements that replay whole steps on a server are :mod:`scenarios.script`'s, above it.
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from fakemaster.config.accounts import Account
from fakemaster.store.memory import DEFAULT_SERVER_VERSION
from fakemaster.vocabulary.events import Gtid, XaXid
from fakemaster.vocabulary.values import DateTime, Timestamp
from scenarios.changes import Change, Delete, Insert, SequenceWrite, Update
from scenarios.create_table import parse_ddl
from scenarios.ddl import (
    AddColumn,
    Alteration,
    AlterTable,
    CreateTable,
    DdlStatement,
    DropTable,
    RenameTable,
    TableOptions,
    TruncateTable,
    altered,
    renamed,
)
from scenarios.errors import HistoryError, ScenarioError, SchemaError, did_you_mean
from scenarios.generated import compute_generated, refuse_generated, with_generated
from scenarios.schema import NO_DEFAULT, Column, Table
from scenarios.sequences import SequenceState, is_create_sequence, parse_create_sequence
from scenarios.sql import create_table_sql, ddl_sql, insert_rows_sql, statement_sql
from scenarios.state import Contents, LiveTables, Row, TableState, Undo
from scenarios.values import convert
from scenarios.versioning import ROW_END_CURRENT

__all__ = [
    "ROW_IMAGES",
    "Idle",
    "Restart",
    "ROW_METADATA",
    "DEFAULT_SERVER_VERSION",
    "Contents",
    "Ddl",
    "Rotate",
    "Row",
    "Scenario",
    "SETTABLE",
    "SetSettings",
    "Settings",
    "Step",
    "Transaction",
    "TransactionBuilder",
    "XaEnd",
    "apply_ddl",
    "xa_text",
    "xa_xid",
]

ROW_IMAGES = ("FULL", "MINIMAL", "NOBLOB")
ROW_METADATA = ("NO_LOG", "MINIMAL", "FULL")
# MariaDB's binlog_row_event_max_size (a command-line option only): default, and the block size it is rounded down to.
DEFAULT_ROW_EVENT_MAX_SIZE = 8192
# The history's clock at its start (Unix seconds): the compiler's first event timestamp too.
DEFAULT_CLOCK = 1_700_000_000
ROW_EVENT_MAX_SIZE_BLOCK = 256


@dataclass(frozen=True, slots=True)
class Settings:
    """The binlog settings of a scenario, named after the server variables they mirror."""

    binlog_checksum: bool = True  # CRC32, or NONE
    binlog_row_image: str = "FULL"
    binlog_row_metadata: str = "NO_LOG"
    binlog_annotate_row_events: bool = True
    binlog_row_event_max_size: int = DEFAULT_ROW_EVENT_MAX_SIZE
    log_bin_compress: bool = False
    log_bin_compress_min_len: int = 256
    server_id: int = 1
    gtid_domain_id: int = 0
    server_version: str = DEFAULT_SERVER_VERSION
    # 1: MariaDB's rows events (v1); 2: MySQL-flavoured v2 rows events (WRITE/UPDATE/
    # DELETE_ROWS 30-32; compiled only: no MariaDB writes them).
    rows_event_version: int = 1

    def __post_init__(self) -> None:
        if self.rows_event_version not in (1, 2):
            raise ScenarioError("rows_event_version is 1 (MariaDB) or 2 (MySQL v2 rows events)")
        if self.rows_event_version == 2 and self.log_bin_compress:
            raise ScenarioError("MySQL v2 rows events are not compressed (log_bin_compress)")
        if self.binlog_row_image not in ROW_IMAGES:
            raise ScenarioError(f"binlog_row_image is one of {ROW_IMAGES}")
        if self.binlog_row_metadata not in ROW_METADATA:
            raise ScenarioError(f"binlog_row_metadata is one of {ROW_METADATA}")
        if not 10 <= self.log_bin_compress_min_len <= 1024:
            raise ScenarioError("log_bin_compress_min_len is 10..1024")
        size = self.binlog_row_event_max_size
        if size < ROW_EVENT_MAX_SIZE_BLOCK or size % ROW_EVENT_MAX_SIZE_BLOCK:
            raise ScenarioError(
                f"binlog_row_event_max_size is a multiple of {ROW_EVENT_MAX_SIZE_BLOCK}, at least"
                f" {ROW_EVENT_MAX_SIZE_BLOCK} (the server rounds it down), not {size}"
            )


@dataclass(frozen=True, slots=True)
class Transaction:
    """Statements committed together, with the GTID domain and server id they are logged
    under."""

    changes: tuple[Change, ...]
    domain_id: int = 0
    server_id: int = 1
    # An XA transaction (XA START ... XA END): prepared (XA PREPARE; its changes count from
    # its XaEnd's XA COMMIT on), or committed at once with ``one_phase`` (XA COMMIT ... ONE
    # PHASE, written as any transaction).
    xa: XaXid | None = None
    one_phase: bool = False
    # The history's clock when it ran (Unix seconds): what current_timestamp() gave its
    # statements (None: a transaction built without a scenario).
    clock: int | None = None

    @property
    def uses_clock(self) -> bool:
        """Whether a statement took a value from the clock (a DEFAULT current_timestamp(),
        an ON UPDATE): its SQL sets the session's timestamp to :attr:`clock` first."""
        return any(
            change.table.columns[p].default_expression is not None
            or change.table.columns[p].on_update is not None
            for change in self.changes
            if isinstance(change, Insert | Update)
            for p in change.filled
        ) or any(change.table.period is not None for change in self.changes)

    @property
    def prepared(self) -> bool:
        """An XA PREPARE: the changes are not the tables' until an :class:`XaEnd` commits."""
        return self.xa is not None and not self.one_phase

    @property
    def writes_rows(self) -> bool:
        return any(not (isinstance(c, Update) and c.changes_nothing) for c in self.changes)


@dataclass(frozen=True, slots=True)
class XaEnd:
    """``XA COMMIT`` or ``XA ROLLBACK`` of a prepared XA transaction (from any session: the
    GTID domain and server id are this statement's)."""

    transaction: Transaction
    commit: bool
    domain_id: int = 0
    server_id: int = 1


@dataclass(frozen=True, slots=True)
class Rotate:
    """``FLUSH BINARY LOGS`` between transactions: the binlog goes on in a new file."""


@dataclass(frozen=True, slots=True)
class Ddl:
    """One DDL statement: its own event group (a standalone GTID and the statement's QUERY
    event). ``before`` is the table it acts on as it was (None for CREATE TABLE), ``after`` the
    table it leaves (None for DROP TABLE); for an ALTER, ``sources`` gives for each column of
    ``after`` its position in ``before`` (None: added, the rows take its default)."""

    statement: DdlStatement
    before: Table | None
    after: Table | None
    sources: tuple[int | None, ...] = ()
    domain_id: int = 0
    server_id: int = 1

    @property
    def sql(self) -> str:
        """The statement as it is run (and logged: DROP TABLE is logged as the server rewrites
        it, see :mod:`scenarios.compiler`)."""
        return ddl_sql(self.statement)


# The settings a history may change between steps, and the scope of the variable that does.
SETTABLE = {
    "binlog_row_image": "SESSION",
    "binlog_annotate_row_events": "SESSION",
    "binlog_row_metadata": "GLOBAL",
    "log_bin_compress": "GLOBAL",
    "log_bin_compress_min_len": "GLOBAL",
    "binlog_checksum": "GLOBAL",
}


@dataclass(frozen=True, slots=True)
class SetSettings:
    """Settings changed between steps, as ``SET SESSION``/``SET GLOBAL`` of the variables
    they mirror would (:data:`SETTABLE`): later steps are written under ``settings``. Setting
    ``binlog_checksum`` rotates the binlog, even to the value it has (MariaDB 10.11 starts a new
    file whose FORMAT_DESCRIPTION announces the checksum); ``rotates`` says so."""

    changes: tuple[tuple[str, Any], ...]
    settings: Settings
    rotates: bool = False


@dataclass(frozen=True, slots=True)
class Restart:
    """A clean restart of the server: STOP ends the binlog file, a new one starts (its
    FORMAT_DESCRIPTION with a creation time) with the server id and settings the server comes
    back with (``settings``: the configured ones; what SET changed is gone, as after a real
    restart). GTIDs go on in every domain; table ids are handed out anew."""

    settings: Settings
    changes: tuple[tuple[str, Any], ...] = ()  # what differs from the configuration before


@dataclass(frozen=True, slots=True)
class Idle:
    """Nothing happens for ``seconds``: the events after it are that much later (served live,
    a replica sees only heartbeats meanwhile)."""

    seconds: int


Step = Transaction | Rotate | Ddl | SetSettings | XaEnd | Restart | Idle


def xa_xid(xid: XaXid | str | tuple[str | bytes, str | bytes, int]) -> XaXid:
    """An XA transaction id: an XaXid, a gtrid (bqual empty, formatID 1), or (gtrid, bqual,
    formatID); gtrid and bqual at most 64 bytes each."""
    if isinstance(xid, XaXid):
        found = xid
    elif isinstance(xid, str):
        found = XaXid(1, xid.encode(), b"")
    else:
        gtrid, bqual, format_id = xid
        found = XaXid(
            format_id,
            gtrid.encode() if isinstance(gtrid, str) else gtrid,
            bqual.encode() if isinstance(bqual, str) else bqual,
        )
    if not 1 <= len(found.gtrid) <= 64 or len(found.bqual) > 64:
        raise HistoryError(f"an XA gtrid is 1..64 bytes, a bqual at most 64: {found!r}")
    if not 0 <= found.format_id < 1 << 31:
        raise HistoryError(f"an XA formatID is 0..2**31-1: {found.format_id}")
    return found


def xa_text(xid: XaXid) -> str:
    """The xid as MariaDB writes it in XA statements it logs: ``X'gtrid',X'bqual',formatID``."""
    return f"X'{xid.gtrid.hex()}',X'{xid.bqual.hex()}',{xid.format_id}"


def apply_ddl(live: LiveTables, step: Ddl) -> None:
    """Apply ``step`` to the tables (their rows carried over as the server does)."""
    statement = step.statement
    if isinstance(statement, CreateTable | TruncateTable):
        assert step.after is not None
        live.add_table(step.after)
        if isinstance(statement, CreateTable) and statement.sequence is not None:
            live[step.after.qualified].insert(statement.sequence.start_state().row())
        return
    assert step.before is not None
    old = live.tables[step.before.qualified]
    if isinstance(statement, DropTable):
        del live.tables[step.before.qualified]
        return
    assert step.after is not None
    new = TableState(step.after)
    if isinstance(statement, RenameTable):
        for row in old.rows.values():
            new.insert(row)
    else:
        fills = [
            None if column.default is NO_DEFAULT else column.default
            for column in step.after.columns
        ]
        for row in old.rows.values():
            moved = with_generated(  # an added or changed generated column: computed (10.11)
                step.after,
                tuple(
                    fills[at] if source is None else row[source]
                    for at, source in enumerate(step.sources)
                ),
            )
            for column, value in zip(step.after.columns, moved, strict=True):
                if value is None and not column.nullable:
                    raise HistoryError(
                        f"{step.after.qualified}: MODIFY {column.name} NOT NULL: a row holds"
                        f" NULL there ({row!r})"
                    )
            new.insert(moved)
    # Only now (nothing raised): the old table goes, the new one takes its place.
    del live.tables[step.before.qualified]
    live.tables[step.after.qualified] = new


def apply_change(live: LiveTables, change: Change) -> list[Undo]:
    """Apply ``change`` to the tables (raising HistoryError if it cannot happen); its undos,
    in the order they were made. A sequence's row is replaced; a system-versioned table
    keeps what an UPDATE or DELETE ends as a history row (what ``FOR SYSTEM_TIME ALL``
    shows)."""
    state = live[change.table.qualified]
    undo: list[Undo] = []
    try:
        if isinstance(change, SequenceWrite):
            if change.rows:
                undo.append(state.update(change.before, change.rows[0]))
        elif isinstance(change, Insert):
            for row in change.rows:
                undo.append(state.insert(row))
        elif isinstance(change, Update):
            undo.append(state.update(change.before, change.after))
            history = history_row(change)
            if history is not None:
                undo.append(state.insert(history))
        elif change.after is not None:
            undo.append(state.update(change.before, change.after))
        else:
            undo.append(state.delete(change.before))
    except BaseException:
        for step in reversed(undo):
            step()
        raise
    return undo


def history_row(change: Update) -> Row | None:
    """The history row an UPDATE of a system-versioned table writes (the old values, ended
    when the new ones start), None for another table or an UPDATE that changes nothing."""
    period = change.table.period_positions
    if period is None or change.changes_nothing:
        return None
    start, end = period
    if change.before[start] >= change.after[start]:
        return None  # a row that started in this second is updated in place (10.11)
    return tuple(change.after[start] if p == end else v for p, v in enumerate(change.before))


# --- the scenario --------------------------------------------------------------------------


class Scenario:
    """Tables, their initial rows and transactions, under :class:`Settings` (see the module
    docstring). ``gtid_state`` is the binlog's GTID state before the first transaction (the
    last GTID of each domain)."""

    def __init__(
        self,
        settings: Settings | None = None,
        *,
        gtid_state: Sequence[Gtid] = (),
        clock: int = DEFAULT_CLOCK,
    ) -> None:
        # The settings in effect now (after the last step); ``initial_settings`` before the
        # first step.
        self.settings = settings or Settings()
        self.initial_settings = self.settings
        # The settings the server is configured with (what a restart comes back to).
        self.configured_settings = self.settings
        self.tables: dict[str, Table] = {}
        # The tables declared before the first step (with ``initial`` rows).
        self.initial_tables: dict[str, Table] = {}
        self.initial = Contents()
        self.transactions: list[Transaction] = []
        # The transactions and rotations in order.
        self.steps: list[Step] = []
        # Steps handed over by take_steps() (a streamed history: no longer held), and how many
        # of them were points (transactions, DDL statements, XA COMMIT/ROLLBACK).
        self.steps_taken = 0
        self.points_taken = 0
        self.gtid_state = tuple(gtid_state)
        # Accounts the server serving it offers besides its --user (a TOML file's
        # [[accounts]]).
        self.accounts: tuple[Account, ...] = ()
        self._live = LiveTables()
        # Prepared XA transactions not yet committed or rolled back, by xid.
        self.prepared: dict[XaXid, Transaction] = {}
        # The next AUTO_INCREMENT value of each table that has such a column (InnoDB's
        # counter: never given back by a DELETE).
        self._next_auto: dict[str, int] = {}
        # Each sequence's state (its next value, the row it logs), by qualified name.
        self._sequences: dict[str, SequenceState] = {}
        # The history's clock (Unix seconds, UTC): current_timestamp() for DEFAULT and ON
        # UPDATE; idle periods move it on (never the machine's clock).
        self.clock = clock

    # --- declaring tables ----------------------------------------------------------------

    def create_table(self, table: Table | str, rows: Sequence[Mapping[str, Any]] = ()) -> Table:
        """Declare a table (a :class:`Table` or CREATE TABLE text) with its initial rows."""
        statement = CreateTable(table) if isinstance(table, Table) else None
        if isinstance(table, str):
            parsed = parse_ddl(table, tables=self.tables)
            if not isinstance(parsed, CreateTable):
                raise ScenarioError(f"not a CREATE TABLE: {table[:60]!r}")
            statement, table = parsed, parsed.table
        if self.steps or self.steps_taken:
            assert statement is not None
            step = self.ddl(statement)
            if rows:
                self.insert(table.qualified, *rows)
            return step.after  # type: ignore[return-value]
        name = table.qualified
        if name in self.tables:
            raise ScenarioError(f"table {name} is declared twice")
        if rows and table.period is not None:
            raise ScenarioError(
                f"{name}: a system-versioned table takes its rows in steps (their row_start is"
                " the history's clock), not as initial rows"
            )
        self._live.add_table(table)
        undo: list[Undo] = []
        try:
            for values in rows:
                self._apply(self._insert(table, [values]), undo)
        except Exception:
            del self._live.tables[name]
            raise
        self.tables[name] = table
        self.initial_tables[name] = table
        self.initial.rows[name] = list(self._live[name].rows.values())
        return table

    @property
    def databases(self) -> list[str]:
        """Every database a table of the scenario is in, at any point."""
        found = {table.database for table in self.initial_tables.values()}
        for step in self.steps:
            if isinstance(step, Ddl):
                found |= {t.database for t in (step.before, step.after) if t is not None}
        return sorted(found)

    # --- DDL -----------------------------------------------------------------------------

    def ddl(
        self,
        statement: str | DdlStatement,
        *,
        domain_id: int | None = None,
        server_id: int | None = None,
    ) -> Ddl:
        """A DDL statement (text, or a :mod:`scenarios.ddl` statement) as a step: CREATE TABLE,
        ALTER TABLE ADD/DROP/MODIFY [COLUMN] with FIRST/AFTER, DROP TABLE, TRUNCATE TABLE,
        RENAME TABLE. Rows before it keep the old schema, rows after it use the new one."""
        if isinstance(statement, str):
            if is_create_sequence(statement):
                return self.create_sequence(statement, **_given(domain_id, server_id))
            statement = parse_ddl(statement, tables=self.tables)
        sources: tuple[int | None, ...] = ()
        before: Table | None
        after: Table | None
        if isinstance(statement, CreateTable):
            before, after = None, statement.table
            if after.qualified in self.tables:
                raise HistoryError(f"CREATE TABLE {after.qualified}: the table exists")
        else:
            before = self.table(f"{statement.database}.{statement.name}")
            if self.prepared:
                self._check_unlocked(before.qualified)
            if before.sequence or before.period is not None:
                kind = "a sequence" if before.sequence else "a system-versioned table"
                verb = " ".join(ddl_sql(statement).split()[:2])
                raise HistoryError(f"{before.qualified}: {verb} of {kind} is not modelled")
            if isinstance(statement, DropTable):
                after = None
            elif isinstance(statement, TruncateTable):
                after = before
            elif isinstance(statement, RenameTable):
                after = renamed(before, statement.new_database, statement.new_name)
                if after.qualified in self.tables:
                    raise HistoryError(f"RENAME TABLE to {after.qualified}: the table exists")
            else:
                try:
                    after, sources = altered(before, statement.alterations)
                except SchemaError as exc:
                    raise HistoryError(str(exc)) from None
                self._check_clocked_columns(before, statement.alterations)
        step = Ddl(
            statement,
            before,
            after,
            sources,
            self.settings.gtid_domain_id if domain_id is None else domain_id,
            self.settings.server_id if server_id is None else server_id,
        )
        apply_ddl(self._live, step)
        if before is not None:
            del self.tables[before.qualified]
        if after is not None:
            self.tables[after.qualified] = after
        self._carry_counter(statement, before, after)
        self.steps.append(step)
        return step

    def _check_clocked_columns(self, table: Table, alterations: tuple[Alteration, ...]) -> None:
        """An ADD COLUMN whose DEFAULT is current_timestamp() fills the rows already there
        with the server's time at the ALTER: not modelled (the DDL's SQL sets no clock)."""
        if not self._live[table.qualified].rows:
            return
        for alteration in alterations:
            if isinstance(alteration, AddColumn) and alteration.column.default_expression:
                raise HistoryError(
                    f"{table.qualified}: ADD COLUMN {alteration.column.name} DEFAULT"
                    f" {alteration.column.default_expression} to a table with rows is not"
                    " modelled"
                )

    def _carry_counter(
        self, statement: DdlStatement, before: Table | None, after: Table | None
    ) -> None:
        """The AUTO_INCREMENT counter across DDL: kept by ALTER and RENAME, back to 1 by
        TRUNCATE (whatever the table's AUTO_INCREMENT option), gone with DROP."""
        counter = self._next_auto.pop(before.qualified, None) if before is not None else None
        if after is None or after.auto_increment_position is None:
            return
        if isinstance(statement, TruncateTable):
            self._next_auto[after.qualified] = 1  # not the table option (checked on 10.11)
        elif counter is not None and not isinstance(statement, CreateTable):
            self._next_auto[after.qualified] = counter
        if isinstance(statement, AlterTable):
            for alteration in statement.alterations:
                if isinstance(alteration, TableOptions):
                    for name, value in alteration.options:
                        if name == "AUTO_INCREMENT":
                            self._reset_counter(after, int(value))

    def _reset_counter(self, table: Table, wanted: int) -> None:
        """ALTER TABLE ... AUTO_INCREMENT=N as InnoDB does it: the counter becomes N, or the
        largest value in the table plus one when N is not above it (it may go down)."""
        position = table.auto_increment_position
        assert position is not None
        values = [row[position] for row in self._live[table.qualified].rows.values()]
        largest = max((value for value in values if value is not None), default=0)
        self._next_auto[table.qualified] = max(wanted, largest + 1)

    def _auto_values(self, table: Table, rows: list[list[Any]], given: tuple[int, ...]) -> None:
        """Fill the AUTO_INCREMENT column of ``rows`` where the insert leaves it out or gives
        NULL or 0 (the next value of the counter), and move the counter past every value."""
        position = table.auto_increment_position
        if position is None:
            return
        counter = self._next_auto.get(table.qualified, max(table.auto_increment or 1, 1))
        for row in rows:
            value = row[position] if position in given else None
            if not value:
                row[position] = value = counter
            counter = max(counter, value + 1)
        self._next_auto[table.qualified] = counter

    def alter_table(
        self,
        table: str,
        *alterations: str | Alteration,
        domain_id: int | None = None,
        server_id: int | None = None,
    ) -> Ddl:
        """``ALTER TABLE table`` with ``alterations`` (each ``"ADD COLUMN c INT NULL AFTER id"``,
        ``"DROP COLUMN c"``, ``"MODIFY COLUMN c BIGINT FIRST"`` or a :mod:`scenarios.ddl`
        alteration)."""
        found = self.table(table)
        parsed: list[Alteration] = []
        for item in alterations:
            if isinstance(item, str):
                statement = parse_ddl(f"ALTER TABLE `{found.database}`.`{found.name}` {item}")
                assert isinstance(statement, AlterTable)
                parsed += statement.alterations
            else:
                parsed.append(item)
        return self.ddl(
            AlterTable(found.database, found.name, tuple(parsed)),
            domain_id=domain_id,
            server_id=server_id,
        )

    def drop_table(self, table: str, **ids: int) -> Ddl:
        found = self.table(table)
        return self.ddl(DropTable(found.database, found.name), **ids)

    def truncate_table(self, table: str, **ids: int) -> Ddl:
        found = self.table(table)
        return self.ddl(TruncateTable(found.database, found.name), **ids)

    def rename_table(self, table: str, new_name: str, **ids: int) -> Ddl:
        """RENAME TABLE ``table`` TO ``new_name`` (both ``database.table``)."""
        found = self.table(table)
        database, dot, bare = new_name.partition(".")
        if not dot:
            raise HistoryError(f"a table is named database.table, not {new_name!r}")
        return self.ddl(RenameTable(found.database, found.name, database, bare), **ids)

    def table(self, name: str) -> Table:
        try:
            return self.tables[name]
        except KeyError:
            hint = did_you_mean(name, self.tables) or f" (declared: {sorted(self.tables)})"
            raise HistoryError(f"no table {name!r}{hint}") from None

    # --- transactions --------------------------------------------------------------------

    @contextmanager
    def transaction(
        self, *, domain_id: int | None = None, server_id: int | None = None
    ) -> Iterator[TransactionBuilder]:
        """Changes made in the block are one transaction (committed when the block ends
        without an exception; on an exception nothing of it is kept)."""
        builder = TransactionBuilder(self)
        try:
            yield builder
        except BaseException:
            builder.undo()
            raise
        self._record(builder.changes, domain_id, server_id)

    @contextmanager
    def xa_transaction(
        self,
        xid: XaXid | str | tuple[str | bytes, str | bytes, int],
        *,
        one_phase: bool = False,
        domain_id: int | None = None,
        server_id: int | None = None,
    ) -> Iterator[TransactionBuilder]:
        """An XA transaction (``XA START xid`` ... ``XA END xid``), then ``XA PREPARE xid``:
        its changes are not the tables' until :meth:`xa_commit` (and never after
        :meth:`xa_rollback`); until then its tables are locked (another step changing them is a
        HistoryError, as the server would make it wait). With ``one_phase``, ``XA COMMIT xid
        ONE PHASE`` at once. ``xid``: an :class:`~fakemaster.vocabulary.events.XaXid`, a gtrid text, or
        (gtrid, bqual, formatID). Only transactional tables."""
        key = xa_xid(xid)
        if key in self.prepared:
            raise HistoryError(f"XA {xa_text(key)} is prepared already")
        builder = TransactionBuilder(self)
        try:
            yield builder
            for change in builder.changes:
                if not change.table.transactional:
                    raise HistoryError(
                        f"{change.table.qualified}: an XA transaction changes transactional"
                        " tables only"
                    )
            if not one_phase and not Transaction(tuple(builder.changes)).writes_rows:
                raise HistoryError(
                    f"XA PREPARE {xa_text(key)} of a transaction that changes no row (the server"
                    " rolls such a branch back when its session ends: it cannot be committed"
                    " later)"
                )
        except BaseException:
            builder.undo()
            raise
        transaction = self._record(
            builder.changes, domain_id, server_id, xa=key, one_phase=one_phase
        )
        if not one_phase:
            builder.undo()  # not the tables' until XA COMMIT
            self.prepared[key] = transaction

    def xa_commit(
        self, xid: XaXid | str | tuple[str | bytes, str | bytes, int], **ids: int
    ) -> XaEnd:
        """``XA COMMIT`` of a prepared XA transaction: its changes are the tables' from here."""
        return self._xa_end(xid, True, **ids)

    def xa_rollback(
        self, xid: XaXid | str | tuple[str | bytes, str | bytes, int], **ids: int
    ) -> XaEnd:
        """``XA ROLLBACK`` of a prepared XA transaction: its changes are dropped."""
        return self._xa_end(xid, False, **ids)

    def _xa_end(
        self,
        xid: XaXid | str | tuple[str | bytes, str | bytes, int],
        commit: bool,
        domain_id: int | None = None,
        server_id: int | None = None,
    ) -> XaEnd:
        key = xa_xid(xid)
        transaction = self.prepared.pop(key, None)
        if transaction is None:
            raise HistoryError(f"no prepared XA transaction {xa_text(key)}")
        if commit:
            undo: list[Undo] = []
            try:
                for change in transaction.changes:
                    self._apply(change, undo)
            except BaseException:
                for step in reversed(undo):
                    step()
                self.prepared[key] = transaction
                raise
        end = XaEnd(
            transaction,
            commit,
            self.settings.gtid_domain_id if domain_id is None else domain_id,
            self.settings.server_id if server_id is None else server_id,
        )
        self.steps.append(end)
        return end

    def add_transaction(
        self,
        changes: Sequence[Change],
        *,
        domain_id: int | None = None,
        server_id: int | None = None,
    ) -> Transaction:
        """Append resolved changes as one transaction (checked against the current tables;
        all or nothing)."""
        undo: list[Undo] = []
        try:
            for change in changes:
                current = self.tables.get(change.table.qualified)
                if current is not change.table and current != change.table:
                    raise HistoryError(
                        f"no table {change.table.qualified!r} with that schema at this point"
                    )
                self._apply(change, undo)
        except BaseException:
            for step in reversed(undo):
                step()
            raise
        return self._record(changes, domain_id, server_id)

    def _record(
        self,
        changes: Sequence[Change],
        domain_id: int | None,
        server_id: int | None,
        *,
        xa: XaXid | None = None,
        one_phase: bool = False,
    ) -> Transaction:
        transaction = Transaction(
            tuple(changes),
            self.settings.gtid_domain_id if domain_id is None else domain_id,
            self.settings.server_id if server_id is None else server_id,
            xa,
            one_phase,
            self.clock,
        )
        self.transactions.append(transaction)
        self.steps.append(transaction)
        return transaction

    def set(self, **changes: Any) -> SetSettings:
        """Change settings from here on (``binlog_row_image``, ``binlog_annotate_row_events``,
        ``binlog_row_metadata``, ``log_bin_compress``, ``log_bin_compress_min_len``,
        ``binlog_checksum``: see :class:`SetSettings`)."""
        if not changes:
            raise ScenarioError("set() of no setting")
        for name in changes:
            if name not in SETTABLE:
                if name == "binlog_row_event_max_size":
                    raise ScenarioError(
                        "binlog_row_event_max_size is a command-line option of the server: it"
                        " changes only at a restart"
                    )
                raise ScenarioError(
                    f"{name!r} is not a setting a history changes (one of {sorted(SETTABLE)})"
                )
        from dataclasses import replace

        new = replace(self.settings, **changes)
        rotates = "binlog_checksum" in changes  # even to the value it has (10.11 does)
        step = SetSettings(tuple(changes.items()), new, rotates)
        self.settings = new
        self.steps.append(step)
        return step

    def restart(self, server_id: int | None = None, **settings: Any) -> Restart:
        """A clean server restart, with ``server_id`` (default: the same) and the configured
        ``settings`` changed (any :class:`Settings` field, ``binlog_row_event_max_size``
        too); what ``set()`` changed since the last restart is gone."""
        from dataclasses import replace

        changes = dict(settings)
        if server_id is not None:
            changes["server_id"] = server_id
        if "server_version" in changes:
            raise ScenarioError("a restart keeps the server version")
        configured = replace(self.configured_settings, **changes)
        step = Restart(configured, tuple(changes.items()))
        self.configured_settings = configured
        self.settings = configured
        self.steps.append(step)
        return step

    def idle(self, seconds: int) -> Idle:
        """An idle period of ``seconds`` (at least 1) between steps."""
        if isinstance(seconds, bool) or not isinstance(seconds, int) or seconds < 1:
            raise ScenarioError(
                f"an idle period is a whole number of seconds >= 1, not {seconds!r}"
            )
        step = Idle(seconds)
        self.steps.append(step)
        self.clock += seconds
        return step

    def rotate(self) -> Rotate:
        """Rotate the binlog here (``FLUSH BINARY LOGS``)."""
        step = Rotate()
        self.steps.append(step)
        return step

    def take_steps(self) -> list[Step]:
        """The steps added since the last call (all of them the first time), no longer held by
        the scenario: a history streamed as it is made (:mod:`scenarios.streaming`) keeps only
        its tables' current rows. What needs the whole history afterwards (the oracle's state
        after an earlier point, :meth:`describe`, :attr:`databases`) sees only the steps
        still held."""
        taken = self.steps
        self.steps = []
        self.transactions = []
        self.steps_taken += len(taken)
        self.points_taken += sum(1 for step in taken if isinstance(step, Transaction | Ddl | XaEnd))
        return taken

    def _apply(self, change: Change, undo: list[Undo]) -> None:
        """Check ``change`` against the current tables and apply it (its undo appended)."""
        if self.prepared:
            self._check_unlocked(change.table.qualified)
        undo += apply_change(self._live, change)

    def _check_unlocked(self, name: str) -> None:
        for xid, transaction in self.prepared.items():
            if any(change.table.qualified == name for change in transaction.changes):
                raise HistoryError(
                    f"{name} is locked by the prepared XA transaction {xa_text(xid)}"
                    " (XA COMMIT or XA ROLLBACK it first)"
                )

    def insert(self, table: str, *rows: Mapping[str, Any]) -> Transaction:
        """One transaction inserting ``rows`` (one statement)."""
        with self.transaction() as tx:
            tx.insert(table, *rows)
        return self.transactions[-1]

    # --- sequences -------------------------------------------------------------------------

    def create_sequence(self, text: str, **ids: int) -> Ddl:
        """``CREATE SEQUENCE`` (text, the name qualified) as a DDL step: its table holds the
        sequence's row from here on."""
        sequence = parse_create_sequence(text)
        statement = CreateTable(sequence.table(), sequence=sequence)
        step = self.ddl(statement, **ids)
        self._sequences[sequence.table().qualified] = sequence.start_state()
        return step

    def nextval(self, name: str, **ids: int) -> int:
        """``SELECT NEXTVAL(name)`` as one transaction; the value it returns (a sequence of
        NOCYCLE past its end: :class:`~scenarios.sequences.SequenceRunOut`)."""
        state = self._sequence(name)
        value, after, _ = state.nextval()
        self._sequence_write(name, state, after, f"SELECT NEXTVAL({_quoted(name)})", value, ids)
        return value

    def setval(self, name: str, value: int, **ids: int) -> int | None:
        """``SELECT SETVAL(name, value)`` as one transaction; what it returns (None: the
        sequence is past ``value`` already, nothing changes)."""
        if isinstance(value, bool) or not isinstance(value, int):
            raise HistoryError(f"SETVAL({name}, {value!r}): a whole number")
        state = self._sequence(name)
        after, _ = state.setval(value)
        returned = None if after is state else value
        sql = f"SELECT SETVAL({_quoted(name)}, {value})"
        self._sequence_write(name, state, after, sql, returned, ids)
        return returned

    def _sequence(self, name: str) -> SequenceState:
        found = self._sequences.get(name)
        if found is None or name not in self.tables:
            hint = did_you_mean(name, self._sequences) or f" (declared: {sorted(self._sequences)})"
            raise HistoryError(f"no sequence {name!r}{hint}")
        return found

    def _sequence_write(
        self,
        name: str,
        before: SequenceState,
        after: SequenceState,
        sql: str,
        value: int | None,
        ids: Mapping[str, int],
    ) -> None:
        table = self.tables[name]
        old, new = before.row(), after.row()
        rows = () if old == new else (new,)
        # What the server writes of it (a MINIMAL image): next_not_cached_value, cycle_count.
        moved = (0, table.width - 1)
        change = SequenceWrite(table, rows, moved, (), old, sql, value)
        self.add_transaction([change], **ids)
        self._sequences[name] = after

    def update(
        self, table: str, where: Mapping[str, Any], values: Mapping[str, Any]
    ) -> Transaction:
        with self.transaction() as tx:
            tx.update(table, where, values)
        return self.transactions[-1]

    def delete(self, table: str, where: Mapping[str, Any]) -> Transaction:
        with self.transaction() as tx:
            tx.delete(table, where)
        return self.transactions[-1]

    @property
    def contents(self) -> Contents:
        """The tables after the last transaction."""
        return self._live.snapshot()

    @property
    def row_counts(self) -> dict[str, int]:
        """How many rows each table holds after the last transaction (nothing copied)."""
        return {name: len(state.rows) for name, state in self._live.tables.items()}

    def describe(self) -> str:
        """The scenario as readable text: its settings, the DDL and initial rows of its tables,
        and each transaction's statements (the SQL that makes it)."""
        lines = [
            f"Scenario({self.initial_settings!r}, gtid_state={[str(g) for g in self.gtid_state]})"
        ]
        for name, table in self.initial_tables.items():
            lines.append(f"  {create_table_sql(table)}")
            lines += [f"    {sql}" for sql in insert_rows_sql(table, self.initial.rows[name])]
        number = 0
        for step in self.steps:
            if isinstance(step, Rotate):
                lines.append("  FLUSH BINARY LOGS")
                continue
            if isinstance(step, Ddl):
                lines.append(
                    f"  DDL (domain {step.domain_id}, server {step.server_id}): {step.sql}"
                )
                continue
            if isinstance(step, SetSettings):
                lines.append(f"  SET {', '.join(f'{n}={v!r}' for n, v in step.changes)}")
                continue
            if isinstance(step, Restart):
                changed = ", ".join(f"{n}={v!r}" for n, v in step.changes)
                lines.append(f"  RESTART{f' ({changed})' if changed else ''}")
                continue
            if isinstance(step, Idle):
                lines.append(f"  IDLE {step.seconds} s")
                continue
            if isinstance(step, XaEnd):
                assert step.transaction.xa is not None
                verb = "COMMIT" if step.commit else "ROLLBACK"
                lines.append(
                    f"  XA {verb} {xa_text(step.transaction.xa)} (domain {step.domain_id},"
                    f" server {step.server_id})"
                )
                continue
            number += 1
            xa = ""
            if step.xa is not None:
                xa = f" XA {xa_text(step.xa)}" + (" ONE PHASE" if step.one_phase else " PREPARE")
            lines.append(
                f"  transaction {number} (domain {step.domain_id}, server {step.server_id}){xa}:"
            )
            lines += [f"    {statement_sql(change)}" for change in step.changes]
        return "\n".join(lines)

    def __repr__(self) -> str:
        return self.describe()

    # --- resolving changes ---------------------------------------------------------------

    def _insert(self, table: Table, rows: Sequence[Mapping[str, Any]]) -> Insert:
        if not rows:
            raise HistoryError(f"{table.qualified}: an insert of no rows")
        given_names = [_positions(table, values) for values in rows]
        if any(names != given_names[0] for names in given_names):
            raise HistoryError(
                f"{table.qualified}: the rows of one insert name the same columns"
                " (make several inserts)"
            )
        given = given_names[0]
        refuse_generated(table, given, "an INSERT")
        _refuse_period(table, given, "an INSERT")
        if table.sequence:
            raise HistoryError(f"{table.qualified} is a sequence: nextval() or setval() it")
        period = table.period_positions or ()
        auto = table.auto_increment_position
        full_rows: list[list[Any]] = []
        for values in rows:
            by_position = {table.position(name): value for name, value in values.items()}
            row: list[Any] = []
            for position, item in enumerate(table.columns):
                if position in by_position and not (position == auto and not by_position[position]):
                    row.append(convert(item, by_position[position], table=table.qualified))
                elif position == auto or item.generated is not None:
                    row.append(None)  # filled below
                elif period and position == period[0]:
                    row.append(self._now(item))
                elif period and position == period[1]:
                    row.append(ROW_END_CURRENT)
                elif item.default_expression is not None:
                    row.append(self._now(item))
                elif item.default is not NO_DEFAULT:
                    row.append(item.default)
                elif item.nullable:
                    row.append(None)
                else:
                    raise HistoryError(
                        f"{table.qualified}: an insert leaves out {item.name}, which is NOT NULL"
                        " without a DEFAULT"
                    )
            full_rows.append(row)
        self._auto_values(table, full_rows, given)
        for row in full_rows:
            if auto is not None:
                row[auto] = convert(table.columns[auto], row[auto], table=table.qualified)
            compute_generated(table, row)
        logged = table.always_logged_generated
        filled = tuple(
            p
            for p, item in enumerate(table.columns)
            if p not in given
            and (
                p == auto
                or item.default_expression is not None
                or item.default_constant is not None  # evaluated per row: logged (10.11)
                or p in logged
                or p in period
            )
        )
        return Insert(table, tuple(tuple(row) for row in full_rows), given, filled)

    def _locate(self, table: Table, where: Mapping[str, Any]) -> Row:
        if table.sequence:
            raise HistoryError(f"{table.qualified} is a sequence: nextval() or setval() it")
        if table.period is not None:
            return self._locate_current(table, where)
        key = table.key
        wanted = {table.position(name): value for name, value in where.items()}
        expected = set(key) if key else set(range(table.width))
        if set(wanted) != expected:
            names = [table.columns[p].name for p in sorted(expected)]
            what = "its key" if key else "every column (the table has no key)"
            raise HistoryError(f"{table.qualified}: a row is named by {what}: {names}")
        image = {
            position: convert(table.columns[position], value, table=table.qualified)
            for position, value in wanted.items()
        }
        state: TableState = self._live[table.qualified]
        found = state.find(image)
        if found is None:
            raise HistoryError(f"{table.qualified}: no row where {dict(where)!r}")
        return state.rows[found]

    def _locate_current(self, table: Table, where: Mapping[str, Any]) -> Row:
        """The current row of a system-versioned table that ``where`` names (by its declared
        key, or every declared column), as :meth:`_locate` (its history rows are not seen)."""
        period = table.period_positions
        assert period is not None
        expected = [p for p in table.key or table.declared_positions if p not in period]
        wanted = {table.position(name): value for name, value in where.items()}
        if set(wanted) != set(expected):
            names = [table.columns[p].name for p in expected]
            what = "its key" if table.key else "every column (the table has no key)"
            raise HistoryError(f"{table.qualified}: a row is named by {what}: {names}")
        image = {
            position: convert(table.columns[position], value, table=table.qualified)
            for position, value in wanted.items()
        }
        image[period[1]] = ROW_END_CURRENT
        for row in self._live[table.qualified].rows.values():
            if all(type(row[p]) is type(v) and row[p] == v for p, v in image.items()):
                return row
        raise HistoryError(f"{table.qualified}: no current row where {dict(where)!r}")

    def _delete(self, table: Table, where: Mapping[str, Any]) -> Delete:
        before = self._locate(table, where)
        period = table.period_positions
        if period is None:
            return Delete(table, before)
        now = self._now(table.columns[period[1]])
        ended = tuple(now if p == period[1] else v for p, v in enumerate(before))
        key = table.key
        if key and any(
            all(row[p] == ended[p] for p in key)
            for row in self._live[table.qualified].rows.values()
        ):
            # A history row of that key ends now already (an UPDATE in this second): the
            # server deletes the row instead (DELETE_ROWS, checked on 10.11).
            return Delete(table, before)
        return Delete(table, before, ended)

    def _update(self, table: Table, where: Mapping[str, Any], values: Mapping[str, Any]) -> Update:
        if not values:
            raise HistoryError(f"{table.qualified}: an update that sets no column")
        before = self._locate(table, where)
        after = list(before)
        assigned = _positions(table, values)
        refuse_generated(table, assigned, "an UPDATE")
        _refuse_period(table, assigned, "an UPDATE")
        for name, value in values.items():
            position = table.position(name)
            after[position] = convert(table.columns[position], value, table=table.qualified)
        changed = any(type(a) is not type(b) or a != b for a, b in zip(before, after, strict=True))
        # ON UPDATE current_timestamp(): set when the row changes and the SET leaves it out.
        filled = tuple(
            p
            for p, item in enumerate(table.columns)
            if item.on_update is not None and p not in assigned and changed
        )
        for position in filled:
            after[position] = self._now(table.columns[position])
        compute_generated(table, after)
        period = table.period_positions
        if period is not None:  # the new values start now (the same ones too: 10.11)
            after[period[0]] = self._now(table.columns[period[0]])
            filled = tuple(sorted({*filled, period[0]}))
        if changed:  # a MINIMAL image carries these whether they changed or not
            filled = tuple(sorted({*filled, *table.always_logged_generated}))
        return Update(table, before, tuple(after), assigned, filled)

    def _now(self, column: Column) -> Any:
        """current_timestamp() in ``column`` at the history's clock (the session's time zone
        is UTC)."""
        if column.default_expression is not None and not column.default_expression.startswith(
            "current_timestamp"
        ):
            # DEFAULT uuid(): the server draws each row's value; no history can know it.
            raise HistoryError(
                f"{column.name}: an insert that leaves it out takes DEFAULT"
                f" {column.default_expression}, which the server draws (not modelled): give"
                " its value"
            )
        moment = _dt.datetime.fromtimestamp(self.clock, _dt.UTC)
        if column.type == "timestamp":
            return Timestamp(self.clock, 0)
        if column.type == "datetime":
            return DateTime(
                moment.year, moment.month, moment.day, moment.hour, moment.minute, moment.second, 0
            )
        raise HistoryError(
            f"{column.name}: current_timestamp() in a {column.type} column is not modelled"
        )


def _given(domain_id: int | None, server_id: int | None) -> dict[str, int]:
    """The GTID domain and server id a step names (the others: the settings')."""
    found = {"domain_id": domain_id, "server_id": server_id}
    return {name: value for name, value in found.items() if value is not None}


def _quoted(name: str) -> str:
    """``database.table`` as SQL names it."""
    return ".".join("`" + part.replace("`", "``") + "`" for part in name.split(".", 1))


def _refuse_period(table: Table, given: tuple[int, ...], what: str) -> None:
    period = table.period_positions
    for position in period or ():
        if position in given:
            raise HistoryError(
                f"{table.qualified}: {what} cannot set {table.columns[position].name} (the"
                " server sets a system-versioned table's period)"
            )


def _positions(table: Table, values: Mapping[str, Any]) -> tuple[int, ...]:
    positions = sorted(table.position(name) for name in values)
    if len(set(positions)) != len(positions):
        raise HistoryError(f"{table.qualified}: a column named twice in {list(values)}")
    return tuple(positions)


class TransactionBuilder:
    """The changes of one transaction, checked and applied as they are added (see
    :meth:`Scenario.transaction`; undone if the block raises)."""

    def __init__(self, scenario: Scenario) -> None:
        self._scenario = scenario
        self._undo: list[Undo] = []
        self.changes: list[Change] = []

    def _add(self, change: Change) -> Change:
        undo: list[Undo] = []
        try:
            self._scenario._apply(change, undo)
        except BaseException:
            for step in reversed(undo):
                step()
            raise
        self._undo += undo
        self.changes.append(change)
        return change

    def undo(self) -> None:
        """Take back every change of this transaction."""
        for step in reversed(self._undo):
            step()
        self._undo.clear()
        self.changes.clear()

    def insert(self, table: str, *rows: Mapping[str, Any]) -> Change:
        """Insert ``rows`` in one statement (every row names the same columns)."""
        return self._add(self._scenario._insert(self._scenario.table(table), rows))

    def update(self, table: str, where: Mapping[str, Any], values: Mapping[str, Any]) -> Change:
        """Set ``values`` in the row ``where`` names (its key, or its whole value)."""
        found = self._scenario.table(table)
        return self._add(self._scenario._update(found, where, values))

    def delete(self, table: str, where: Mapping[str, Any]) -> Change:
        found = self._scenario.table(table)
        return self._add(self._scenario._delete(found, where))

    def rows(self, table: str) -> list[Row]:
        """The rows of ``table`` as this transaction has left them so far."""
        return list(self._scenario._live[self._scenario.table(table).qualified].rows.values())
