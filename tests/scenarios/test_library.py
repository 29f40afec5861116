"""The built-in scenarios: listed and shown by the command line, and each, served by
fakemaster, ends with the oracle's tables in a real MariaDB 10.11 replica and in a
python-mysql-replication client."""

from __future__ import annotations

from typing import Any

import pytest
from pymysqlreplication import BinLogStreamReader
from pymysqlreplication.event import QueryEvent, XAPrepareEvent, XidEvent
from pymysqlreplication.row_event import DeleteRowsEvent, UpdateRowsEvent, WriteRowsEvent

from fakemaster.config.server_config import ServerConfig
from fakemaster.server.master import BackgroundFakeMaster
from scenarios import Oracle, Scenario, to_store
from scenarios.create_table import parse_ddl
from scenarios.ddl import apply_ddl
from scenarios.history import Row
from scenarios.library import LIBRARY, build
from scenarios.schema import NO_DEFAULT, Table
from scenarios.serving import scenario_variables
from scenarios.values import convert
from tests.fakemaster.cli.test_serve_cli import run_cli
from tests.peers.mariadb import MariaDBServer
from tests.scenarios.test_served_to_replica import replica, replicate_and_compare
from tests.support.mariadb_run import compare_with_server

# The real replica fixture, shared with test_served_to_replica (the server: conftest.py).
__all__ = ["replica"]

NAMES = sorted(LIBRARY)


def test_the_command_line_lists_every_built_in_scenario_one_per_line() -> None:
    result = run_cli("scenarios")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert [line.split()[0] for line in lines] == list(LIBRARY)
    assert all(len(line.split()) > 2 for line in lines)  # a name and what it holds


@pytest.mark.parametrize("name", ["primary_key_updates", "multi_domain"])
def test_the_command_line_shows_a_scenario(name: str) -> None:
    result = run_cli("scenarios", "show", name)
    assert result.returncode == 0, result.stderr
    assert result.stdout == build(name).describe() + "\n"


def test_showing_an_unknown_scenario_is_one_error_line() -> None:
    result = run_cli("scenarios", "show", "nope")
    assert result.returncode == 1
    assert result.stderr.startswith("error: no scenario 'nope'")


def test_each_build_is_a_new_scenario() -> None:
    first, second = build("rotation_storm"), build("rotation_storm")
    assert first is not second and first.describe() == second.describe()
    assert sum(1 for step in first.steps if not hasattr(step, "changes")) == 46


@pytest.mark.mariadb
@pytest.mark.parametrize("name", NAMES)
def test_a_real_replica_of_a_built_in_scenario_ends_with_the_oracles_tables(
    replica: MariaDBServer, name: str
) -> None:
    replicate_and_compare(replica, build(name))


@pytest.mark.mariadb
@pytest.mark.parametrize("name", NAMES)
def test_a_real_server_running_a_built_in_scenario_writes_the_compiled_events(
    server: MariaDBServer, name: str
) -> None:
    assert compare_with_server(server, build(name)) == []


# --- python-mysql-replication ---------------------------------------------------------------

# What python-mysql-replication cannot give back, per scenario (seen when these were written;
# the real replica above covers these scenarios).
PYMYSQLREPLICATION_LIMITS = {
    "every_type": "BIT comes back as a string of binary digits, TIMESTAMP as a naive datetime",
    "compressed": "compressed rows events (log_bin_compress) are skipped",
    "no_log_metadata": "without binlog_row_metadata FULL it has no column names (UNKNOWN_COLn)"
    " nor charsets (it decodes latin1 text as UTF-8)",
    "settings_changes": "binlog_row_metadata MINIMAL gives no column names, and it takes the"
    " checksum once at connect while the files change it (the server refuses, 1236)",
}


def _present(row: dict[str, Any], absent: dict[str, Any]) -> dict[str, Any]:
    """The columns a rows event image holds (python-mysql-replication gives the others as None
    with the source 'cols bitmap')."""
    return {name: value for name, value in row.items() if absent.get(name) != "cols bitmap"}


def _model(table: Table, values: dict[str, Any]) -> dict[int, Any]:
    return {
        table.position(name): convert(table.column(name), value, table=table.qualified)
        for name, value in values.items()
    }


def _find(rows: list[Row], values: dict[int, Any]) -> int:
    for index, row in enumerate(rows):
        if all(type(row[p]) is type(v) and row[p] == v for p, v in values.items()):
            return index
    raise AssertionError(f"no row with {values} among {rows}")


def stream_scenario(scenario: Scenario, host: str, port: int) -> dict[str, list[Row]]:
    """A CDC client: starts from the initial rows (a snapshot), applies the rows events of
    each transaction at its commit (XID, COMMIT, or an XA COMMIT of a prepared one) by the
    columns their images hold (MINIMAL and NOBLOB images hold only some), filling columns an
    insert leaves out with their DEFAULT as a client that knows the schema would, and follows
    the DDL it reads (QUERY events) in its own copy of the schema."""
    tables = {name: list(rows) for name, rows in scenario.initial.rows.items()}
    schemas = dict(scenario.initial_tables)
    pending: list[tuple[Table, Any, list[Any]]] = []
    prepared: dict[str, list[tuple[Table, Any, list[Any]]]] = {}
    stream = BinLogStreamReader(
        connection_settings={"host": host, "port": port, "user": "repl", "passwd": "pw"},
        server_id=99,
        blocking=False,
        log_file="mysql-bin.000001",
        log_pos=4,
        resume_stream=True,
        only_events=[
            WriteRowsEvent,
            UpdateRowsEvent,
            DeleteRowsEvent,
            XidEvent,
            QueryEvent,
            XAPrepareEvent,
        ],
    )
    try:
        for event in stream:
            if isinstance(event, WriteRowsEvent | UpdateRowsEvent | DeleteRowsEvent):
                table = schemas[f"{event.schema}.{event.table}"]
                pending.append((table, type(event), list(event.rows)))
            elif isinstance(event, XidEvent):
                _apply_all(tables, pending)
                pending = []
            elif isinstance(event, XAPrepareEvent):
                xid = f"X'{event.xid_gtrid.hex()}',X'{event.xid_bqual.hex()}',{event.xid_format_id}"
                prepared[xid], pending = pending, []
            elif isinstance(event, QueryEvent):
                query = event.query
                if query == "COMMIT":
                    _apply_all(tables, pending)
                    pending = []
                elif query.startswith("XA COMMIT "):
                    _apply_all(tables, prepared.pop(query[len("XA COMMIT ") :]))
                elif query.startswith("XA ROLLBACK "):
                    del prepared[query[len("XA ROLLBACK ") :]]
                elif query != "BEGIN" and not query.startswith("XA END "):
                    _follow_ddl(schemas, tables, query)
    finally:
        stream.close()
    return tables


def _follow_ddl(schemas: dict[str, Table], tables: dict[str, list[Row]], query: str) -> None:
    apply_ddl(parse_ddl(query), schemas, tables)


def _apply_all(tables: dict[str, list[Row]], changes: list[tuple[Table, Any, list[Any]]]) -> None:
    for table, kind, items in changes:
        rows = tables[table.qualified]
        for item in items:
            if kind is WriteRowsEvent:
                given = _model(table, _present(item["values"], item["none_sources"]))
                rows.append(
                    tuple(
                        given[p] if p in given else None if c.default is NO_DEFAULT else c.default
                        for p, c in enumerate(table.columns)
                    )
                )
            elif kind is UpdateRowsEvent:
                before = _model(table, _present(item["before_values"], item["before_none_sources"]))
                after = _model(table, _present(item["after_values"], item["after_none_sources"]))
                index = _find(rows, before)
                rows[index] = tuple(after.get(p, v) for p, v in enumerate(rows[index]))
            else:
                index = _find(rows, _model(table, _present(item["values"], item["none_sources"])))
                del rows[index]


@pytest.mark.parametrize("name", [name for name in NAMES if name not in PYMYSQLREPLICATION_LIMITS])
def test_python_mysql_replication_reading_a_built_in_scenario_ends_with_the_oracles_tables(
    name: str,
) -> None:
    scenario = build(name)
    config = ServerConfig(user="repl", password="pw", variables=_variables(scenario))
    with BackgroundFakeMaster(config, to_store(scenario)) as master:
        tables = stream_scenario(scenario, master.host, master.port)
        assert master.errors == []
    Oracle(scenario).assert_matches(tables)


def _variables(scenario: Scenario) -> dict[str, Any]:
    told = scenario_variables(scenario.settings)
    return {k: v for k, v in told.items() if k not in ("server_id", "version", "binlog_checksum")}
