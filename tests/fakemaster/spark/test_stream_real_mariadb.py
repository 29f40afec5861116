"""Must-show 3: the streaming source pointed at a real MariaDB 10.11 (started by the tests)
while a workload runs on it ends with the primary's tables: the every-type scenario and some
DDL, consumed by an availableNow query, then more transactions and the query restarted on its
checkpoint."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from fakemaster.cli import main
from scenarios.library import build
from scenarios.oracle import canonical_rows, client_row
from tests.peers.fixtures import module_mariadb
from tests.peers.mariadb import MariaDBServer
from tests.support.ddl_workload import DDL_WORKLOAD
from tests.support.mariadb_run import run_on_server
from tests.support.spark_tables import read_tables, sorted_rows

pytestmark = pytest.mark.mariadb

LATER = (
    "INSERT INTO ddl.t (id, v, w) VALUES (40, 'forty', 400), (41, 'forty-one', NULL)",
    "UPDATE ddl.t SET v = 'TWO' WHERE id = 2",
    "DELETE FROM ddl.emptied",
    "INSERT INTO ddl.emptied VALUES (7)",
)


server = module_mariadb({"binlog_row_metadata": "FULL"})


def _stream(spark: Any, server: MariaDBServer, out: Path, checkpoint: Path) -> None:
    from fakemaster.spark import FORMAT_NAME, Materialiser

    materialiser = Materialiser(spark, str(out))
    query = (
        spark.readStream.format(FORMAT_NAME)
        .option("host", server.host)
        .option("port", str(server.port))
        .option("user", "root")
        .option("maxRowsPerBatch", "50")
        .load()
        .writeStream.foreachBatch(lambda frame, n: materialiser.apply(frame, n))
        .option("checkpointLocation", str(checkpoint))
        .trigger(availableNow=True)
        .start()
    )
    query.awaitTermination(300)
    assert query.exception() is None


def _plain_tables(server: MariaDBServer) -> dict[str, list[tuple[Any, ...]]]:
    return {
        name: sorted_rows([tuple(None if v is None else str(v) for v in row) for row in rows])
        for name, rows in (
            ("ddl.t", server.execute("SELECT id, v, w FROM ddl.t")),
            ("ddl.emptied", server.execute("SELECT id FROM ddl.emptied")),
            ("ddl.nokey", server.execute("SELECT a, b FROM ddl.nokey")),
        )
    }


def _check(tables: dict[str, list[dict[str, Any]]], expected: dict[str, list[Any]]) -> None:
    for name, rows in expected.items():
        got = sorted_rows(
            [tuple(None if v is None else str(v) for v in r.values()) for r in tables[name]]
        )
        assert rows and got == rows, name


def test_streaming_from_a_real_primary(spark: Any, server: MariaDBServer, tmp_path: Path) -> None:
    scenario = build("every_type")
    run = run_on_server(server, scenario)
    server.execute(DDL_WORKLOAD)
    out, checkpoint = tmp_path / "out", tmp_path / "checkpoint"
    _stream(spark, server, out, checkpoint)
    tables = read_tables(out)
    for name, table in scenario.tables.items():
        mine = canonical_rows(table, [client_row(table, row) for row in tables[name]])
        assert run.tables[name] and sorted_rows(mine) == sorted_rows(run.tables[name]), name
    _check(tables, _plain_tables(server))
    assert "ddl.gone" not in tables
    primary = f"mariadb://root@{server.host}:{server.port}"
    assert main(["pipeline", "compare", str(out), primary]) == 0

    server.execute(LATER)  # the primary goes on while the query is down
    assert main(["pipeline", "compare", str(out), primary, "--table", "ddl.t"]) == 1  # behind
    _stream(spark, server, out, checkpoint)
    _check(read_tables(out), _plain_tables(server))
    assert main(["pipeline", "compare", str(out), primary]) == 0
