"""The tables of the server itself that a fake master describes: ``mysql.general_log`` and
``mysql.slow_log``, next to the served tables (:mod:`fakemaster.sql.tables.catalogue`).

A fake master lists the ``mysql`` database (``SHOW DATABASES``, ``USE mysql``) as every MariaDB
does, so it describes what that database holds, and it holds only what can be described: the
two log tables. ``mariadb-dump --all-databases`` (and ``--databases mysql``) reads their
structure unconditionally (10.11's ``dump_first_mysql_tables``: ``SHOW CREATE TABLE
`general_log``` fails the whole dump with 1146 when the table is missing), and a dump loaded
into a real server recreates them with ``CREATE TABLE IF NOT EXISTS``. Their definitions are
MariaDB 10.11's (CSV engine, utf8mb3, ``SHOW CREATE TABLE`` text and information_schema rows
captured from 10.11.19); they are empty, as on a server with ``general_log`` and
``slow_query_log`` OFF (the fake master keeps no query log). The privilege, time zone, help,
statistics and replication-state tables of a real ``mysql`` database are not listed: their
contents would be the fake's accounts and settings rendered as another server's rows, and a dump
carrying them would overwrite the accounts of the server it is loaded into.
"""

from __future__ import annotations

from collections.abc import Sequence

from fakemaster.sql.tables.catalogue import (
    CatalogueColumn,
    CatalogueTable,
    CellValue,
    Snapshot,
    TableCatalogue,
)

__all__ = [
    "MYSQL_LOG_TABLES",
    "SYSTEM_DATABASE",
    "SystemSnapshot",
    "WithSystemTables",
    "is_system_table",
]

SYSTEM_DATABASE = "mysql"
_UTF8MB3 = "utf8mb3_general_ci"
_NOW6 = "current_timestamp(6)"


def _log_time(name: str) -> CatalogueColumn:
    return CatalogueColumn(name, "timestamp", nullable=False, fsp=6, default=_NOW6, on_update=_NOW6)


def _text(name: str, kind: str = "mediumtext", length: int | None = None) -> CatalogueColumn:
    return CatalogueColumn(name, kind, nullable=False, length=length, collation=_UTF8MB3)


def _number(
    name: str, kind: str, *, unsigned: bool = True, width: int | None = None
) -> CatalogueColumn:
    return CatalogueColumn(name, kind, nullable=False, unsigned=unsigned, width=width)


GENERAL_LOG = CatalogueTable(
    database=SYSTEM_DATABASE,
    name="general_log",
    columns=(
        _log_time("event_time"),
        _text("user_host"),
        _number("thread_id", "bigint", width=21),
        _number("server_id", "int"),
        _text("command_type", "varchar", 64),
        _text("argument"),
    ),
    engine="CSV",
    collation=_UTF8MB3,
    comment="General log",
)
SLOW_LOG = CatalogueTable(
    database=SYSTEM_DATABASE,
    name="slow_log",
    columns=(
        _log_time("start_time"),
        _text("user_host"),
        CatalogueColumn("query_time", "time", nullable=False, fsp=6),
        CatalogueColumn("lock_time", "time", nullable=False, fsp=6),
        _number("rows_sent", "bigint"),
        _number("rows_examined", "bigint"),
        _text("db", "varchar", 512),
        _number("last_insert_id", "int", unsigned=False),
        _number("insert_id", "int", unsigned=False),
        _number("server_id", "int"),
        _text("sql_text"),
        _number("thread_id", "bigint", width=21),
        _number("rows_affected", "bigint"),
    ),
    engine="CSV",
    collation=_UTF8MB3,
    comment="Slow log",
)
MYSQL_LOG_TABLES: tuple[CatalogueTable, ...] = (GENERAL_LOG, SLOW_LOG)

# The Python codecs of the character sets system tables are shown in, when no served
# catalogue says.
_CODECS = {"utf8mb4": "utf-8", "utf8mb3": "utf-8", "latin1": "cp1252", "ascii": "ascii"}


def is_system_table(table: CatalogueTable) -> bool:
    return any(table is system for system in MYSQL_LOG_TABLES)


class SystemSnapshot:
    """A snapshot of the served tables (``served``, None: none) in which the system tables
    are empty."""

    def __init__(self, served: Snapshot | None) -> None:
        self.served = served

    def rows(self, table: CatalogueTable) -> Sequence[Sequence[CellValue]]:
        if is_system_table(table) or self.served is None:
            return []
        return self.served.rows(table)


class WithSystemTables:
    """The served catalogue (None: no served tables) with the ``mysql`` log tables, when the
    server lists ``mysql`` (``system``). A served table of the same name wins."""

    def __init__(self, served: TableCatalogue | None, *, system: bool = True) -> None:
        self.served = served
        self.system = system

    def databases(self) -> Sequence[str]:
        names = set(self.served.databases()) if self.served is not None else set()
        if self.system:
            names.add(SYSTEM_DATABASE)
        return sorted(names)

    def tables(self, database: str) -> Sequence[CatalogueTable]:
        served = list(self.served.tables(database)) if self.served is not None else []
        if not (self.system and database == SYSTEM_DATABASE):
            return served
        known = {table.name for table in served}
        extra = [table for table in MYSQL_LOG_TABLES if table.name not in known]
        return sorted(served + extra, key=lambda table: table.name)

    def snapshot(self) -> SystemSnapshot:
        return SystemSnapshot(self.served.snapshot() if self.served is not None else None)

    def text_codec(self, charset: str) -> str | None:
        if self.served is not None:
            return self.served.text_codec(charset)
        return None if charset == "binary" else _CODECS.get(charset, "utf-8")
