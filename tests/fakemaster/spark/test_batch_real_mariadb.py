"""Must-show 2: binlog files a real MariaDB 10.11 wrote for a workload with every column type
(the ``every_type`` scenario run as SQL, with its CREATE TABLE and initial rows in the same
binlog) and some DDL, read by the batch data source and materialised, equal the primary's own
tables read back with SELECT."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from scenarios.library import build
from scenarios.oracle import canonical_rows, client_row
from tests.peers.fixtures import require_mariadb
from tests.peers.mariadb import MariaDBServer
from tests.support.mariadb_run import run_on_server
from tests.support.spark_tables import read_tables

pytestmark = pytest.mark.mariadb

# Row-format changes after the scenario: an ALTER between rows, a TRUNCATE, a dropped table.
DDL_WORKLOAD = (
    "CREATE DATABASE ddl",
    "CREATE TABLE ddl.t (id INT PRIMARY KEY, v VARCHAR(20))",
    "INSERT INTO ddl.t VALUES (1, 'one'), (2, 'two'), (3, 'three')",
    "ALTER TABLE ddl.t ADD COLUMN w INT NULL",
    "UPDATE ddl.t SET w = id * 10 WHERE id >= 2",
    "UPDATE ddl.t SET id = 30 WHERE id = 3",
    "DELETE FROM ddl.t WHERE id = 1",
    "CREATE TABLE ddl.emptied (id INT PRIMARY KEY)",
    "INSERT INTO ddl.emptied VALUES (1), (2)",
    "TRUNCATE TABLE ddl.emptied",
    "INSERT INTO ddl.emptied VALUES (3)",
    "CREATE TABLE ddl.gone (id INT PRIMARY KEY)",
    "INSERT INTO ddl.gone VALUES (1)",
    "DROP TABLE ddl.gone",
    "CREATE TABLE ddl.nokey (a INT, b VARCHAR(5))",
    "INSERT INTO ddl.nokey VALUES (1, 'x'), (1, 'x'), (2, 'y')",
    "DELETE FROM ddl.nokey WHERE a = 2",
    "UPDATE ddl.nokey SET b = 'z' LIMIT 1",
)


@pytest.fixture(scope="module")
def server() -> Iterator[MariaDBServer]:
    require_mariadb()
    instance = MariaDBServer({"binlog_row_metadata": "FULL"})
    try:
        yield instance.start()
    finally:
        instance.close()


def _sorted(rows: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    return sorted(rows, key=lambda r: tuple((c is None, "" if c is None else str(c)) for c in r))


def test_real_binlogs_materialise_to_the_primarys_tables(
    spark: Any, server: MariaDBServer, tmp_path: Path
) -> None:
    from fakemaster.spark import FORMAT_NAME, materialise

    scenario = build("every_type")
    run = run_on_server(server, scenario)
    server.execute(DDL_WORKLOAD)
    selected = {
        name: _sorted([tuple(None if v is None else str(v) for v in row) for row in rows])
        for name, rows in (
            ("ddl.t", server.execute("SELECT id, v, w FROM ddl.t")),
            ("ddl.emptied", server.execute("SELECT id FROM ddl.emptied")),
            ("ddl.nokey", server.execute("SELECT a, b FROM ddl.nokey")),
        )
    }
    server.execute("FLUSH BINARY LOGS")
    files = [str(p) for p in server.binlog_files()]
    assert len(files) >= 3

    events = spark.read.format(FORMAT_NAME).load(files)
    assert events.rdd.getNumPartitions() == len(files)
    materialise(spark, events, str(tmp_path / "out"))
    tables = read_tables(tmp_path / "out")

    for name, table in scenario.tables.items():
        assert run.tables[name], name
        mine = canonical_rows(table, [client_row(table, row) for row in tables[name]])
        assert _sorted(mine) == _sorted(run.tables[name]), name
    for name, expected in selected.items():
        got = _sorted(
            [tuple(None if v is None else str(v) for v in row.values()) for row in tables[name]]
        )
        assert expected and got == expected, name
    assert "ddl.gone" not in tables
    assert [c for c in tables["ddl.t"][0]] == ["id", "v", "w"]
