"""Must-show 2: binlog files a real MariaDB 10.11 wrote for a workload with every column type
(the ``every_type`` scenario run as SQL, with its CREATE TABLE and initial rows in the same
binlog) and some DDL, read by the batch data source and materialised, equal the primary's own
tables read back with SELECT."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from fakemaster.cli import main
from scenarios.library import build
from scenarios.oracle import canonical_rows, client_row
from tests.fakemaster.spark.test_look_groups import assert_the_tasks_agree_with_spark
from tests.peers.fixtures import module_mariadb
from tests.peers.mariadb import MariaDBServer
from tests.peers.policy import require_peer
from tests.support.ddl_workload import DDL_WORKLOAD
from tests.support.mariadb_run import run_on_server
from tests.support.spark_tables import read_tables, sorted_rows

pytestmark = pytest.mark.mariadb


server = module_mariadb({"binlog_row_metadata": "FULL"})


def test_real_binlogs_materialise_to_the_primarys_tables(
    spark: Any, server: MariaDBServer, tmp_path: Path
) -> None:
    from fakemaster.spark import FORMAT_NAME, materialise

    scenario = build("every_type")
    run = run_on_server(server, scenario)
    server.execute(DDL_WORKLOAD)
    selected = {
        name: sorted_rows([tuple(None if v is None else str(v) for v in row) for row in rows])
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
        assert sorted_rows(mine) == sorted_rows(run.tables[name]), name
    for name, expected in selected.items():
        got = sorted_rows(
            [tuple(None if v is None else str(v) for v in row.values()) for row in tables[name]]
        )
        assert expected and got == expected, name
    assert "ddl.gone" not in tables
    assert [c for c in tables["ddl.t"][0]] == ["id", "v", "w"]

    # The same check without code: `pipeline compare` against the live server, then against
    # dumps the real `mariadb --batch` wrote (BIT columns selected as numbers, see docs/spark.md).
    out = str(tmp_path / "out")
    assert main(["pipeline", "compare", out, f"mariadb://root@{server.host}:{server.port}"]) == 0
    assert (
        main(["pipeline", "compare", out, f"mariadb://root@{server.host}:{server.port}/ddl"]) == 0
    )
    dumps = tmp_path / "dumps"
    dumps.mkdir()
    every = scenario.tables["types.every"]
    selects = {
        "types.every": ", ".join(
            f"`{c.name}` + 0 AS `{c.name}`" if c.type == "bit" else f"`{c.name}`"
            for c in every.columns
        ),
        **{name: "*" for name in selected},
    }
    for name, columns in selects.items():
        (dumps / f"{name}.tsv").write_bytes(_mariadb_batch(server, f"SELECT {columns} FROM {name}"))
    assert main(["pipeline", "compare", out, str(dumps)]) == 0
    # A row the server changes afterwards is the one difference both references show.
    server.execute("UPDATE ddl.t SET v = 'changed' WHERE id = 2")
    (dumps / "ddl.t.tsv").write_bytes(_mariadb_batch(server, "SELECT * FROM ddl.t"))
    for reference in (f"mariadb://root@{server.host}:{server.port}", str(dumps)):
        assert main(["pipeline", "compare", out, reference, "--table", "ddl.t"]) == 1


def _mariadb_batch(server: MariaDBServer, query: str) -> bytes:
    """What `mariadb --batch -e QUERY` prints (utf8mb4, as a user dumping for compare does)."""
    require_peer(
        "the mariadb client", shutil.which("mariadb") is not None, "apt-get install mariadb-client"
    )
    command = [shutil.which("mariadb") or "mariadb", "--batch", "--default-character-set=utf8mb4"]
    command += ["-h", server.host, "-P", str(server.port), "-uroot", "-e", query]
    return subprocess.run(command, capture_output=True, check=True).stdout


@pytest.mark.parametrize("row_image", ["MINIMAL", "NOBLOB", "FULL"])
def test_a_real_shops_column_updates_materialise_to_its_table(
    spark: Any, server: MariaDBServer, tmp_path: Path, row_image: str
) -> None:
    """A shop's orders updated a column or two at a time, as MariaDB 10.11 logs them under
    each row image (MINIMAL and NOBLOB after images lack the unassigned columns: the rows are
    the merge of their images; FULL ones are whole: each key's last image), equal the table
    the server itself holds."""
    from fakemaster.spark import FORMAT_NAME, materialise

    database = f"shop_{row_image.lower()}"
    server.execute(
        [
            f"SET SESSION binlog_row_image = '{row_image}'",
            f"CREATE DATABASE {database}",
            f"CREATE TABLE {database}.orders (id INT PRIMARY KEY, customer VARCHAR(40) NOT NULL,"
            " status VARCHAR(16) NOT NULL DEFAULT 'new', total DECIMAL(10,2), note TEXT)",
            f"INSERT INTO {database}.orders VALUES (1, 'ann', 'new', 10.00, 'n1'),"
            " (2, 'bob', 'new', 20.00, 'n2'), (3, 'cy', 'new', 30.00, 'n3')",
            f"UPDATE {database}.orders SET status = 'paid' WHERE id IN (1, 2)",
            f"UPDATE {database}.orders SET note = 'gift wrap' WHERE id = 3",
            f"UPDATE {database}.orders SET total = 12.50 WHERE id = 1",
            f"DELETE FROM {database}.orders WHERE id = 2",
        ]
    )
    expected = sorted_rows(
        [
            tuple(None if v is None else str(v) for v in row)
            for row in server.execute(f"SELECT * FROM {database}.orders")
        ]
    )
    server.execute("FLUSH BINARY LOGS")
    files = [str(p) for p in server.binlog_files()]
    materialise(spark, spark.read.format(FORMAT_NAME).load(files), str(tmp_path / "out"))
    table = read_tables(tmp_path / "out")[f"{database}.orders"]
    got = sorted_rows([tuple(None if v is None else str(v) for v in row.values()) for row in table])
    assert len(expected) == 2 and got == expected


def test_the_tasks_change_log_and_first_look_on_a_real_primarys_binlogs(
    spark: Any, server: MariaDBServer, tmp_path: Path
) -> None:
    """Binlogs MariaDB 10.11 wrote for a rental store's day (AUTO_INCREMENT, DEFAULT
    current_timestamp(), UUID keys, a key changed under a MINIMAL image, an ALTER and a RENAME,
    statement-format DML, an XA transaction): what the data source's tasks write and group is
    what Spark's writer and look query give on the same files."""
    server.execute(
        [
            "CREATE DATABASE rental",
            "CREATE TABLE rental.film (film_id SMALLINT UNSIGNED AUTO_INCREMENT PRIMARY KEY,"
            " title VARCHAR(128) NOT NULL, rate DECIMAL(4,2) NOT NULL DEFAULT 4.99,"
            " last_update TIMESTAMP NOT NULL DEFAULT current_timestamp()"
            " ON UPDATE current_timestamp())",
            "CREATE TABLE rental.member (id UUID PRIMARY KEY DEFAULT uuid(),"
            " email VARCHAR(80) NOT NULL UNIQUE, joined DATETIME DEFAULT current_timestamp())",
            "INSERT INTO rental.film (title) VALUES ('ALIEN CENTER'), ('BANGER PINOCCHIO'),"
            " ('CHAMBER ITALIAN')",
            "INSERT INTO rental.member (email) VALUES ('ann@example.com'), ('bo@example.com')",
            "SET SESSION binlog_row_image = 'MINIMAL'",
            "UPDATE rental.film SET film_id = 10 WHERE film_id = 1",
            "UPDATE rental.film SET rate = 2.99 WHERE film_id = 2",
            "SET SESSION binlog_row_image = 'FULL'",
            "ALTER TABLE rental.film ADD COLUMN rating VARCHAR(5) DEFAULT 'G'",
            "UPDATE rental.film SET rating = 'PG' WHERE film_id = 3",
            "RENAME TABLE rental.member TO rental.customer",
            "DELETE FROM rental.customer WHERE email = 'bo@example.com'",
            "SET SESSION binlog_format = 'STATEMENT'",
            "UPDATE rental.film SET rate = rate + 1 WHERE film_id = 3",
            "SET SESSION binlog_format = 'ROW'",
            "XA START 'late-fee'",
            "INSERT INTO rental.film (title) VALUES ('DRACULA CRYSTAL')",
            "XA END 'late-fee'",
            "XA PREPARE 'late-fee'",
            "XA COMMIT 'late-fee'",
            "FLUSH BINARY LOGS",
        ]
    )
    files = [str(p) for p in server.binlog_files()]
    log = assert_the_tasks_agree_with_spark(spark, files, tmp_path)
    # Each row group of the tasks' files holds one table's events, in sequence order.
    import pyarrow.parquet as pq

    parts = sorted((tmp_path / "through").rglob("*.parquet"))
    assert parts
    for part in parts:
        parquet = pq.ParquetFile(part)
        for index in range(parquet.num_row_groups):
            group = parquet.read_row_group(index, columns=["database", "table", "seq"])
            names = {(r["database"], r["table"]) for r in group.to_pylist()}
            assert len(names) == 1, (part.name, index, names)
            order = [tuple(r["seq"].values()) for r in group.to_pylist()]
            assert order == sorted(order), (part.name, index)
    # The day logged what the flags and groups are about.
    rental = log.where("database = 'rental'")
    assert rental.where("carries").count() == 1  # film 1 -> 10 under MINIMAL
    assert rental.where("partial").count() == 2
    assert log.where("ddl_kind = 'STATEMENT' AND ddl LIKE '%rental.film%'").count() == 1
    assert rental.where("ddl_kind = 'RENAME_TABLE'").count() == 1
    assert log.where("op = 'xa'").count() >= 1


def test_a_real_tables_columns_named_as_the_materialisers_work_columns(
    spark: Any, server: MariaDBServer, tmp_path: Path
) -> None:
    """A table whose own columns bear the names the materialiser gives its work columns while
    it types a table (``image``, ``__fm_text_0``, ...), written by MariaDB 10.11 under a
    MINIMAL row image (updates log only the columns they set): its rows are the server's, and
    each NULL the binlog does not say is counted in its own column: the zero date the server
    keeps for row 2 (Spark's DATE cannot hold it) and row 1's value that no statement set (the
    MINIMAL insert logs only the columns it names: in no image, with no default)."""
    from fakemaster.spark import FORMAT_NAME, materialise

    name = "workcols.t"
    server.execute(
        [
            "SET SESSION sql_mode = ''",
            "SET SESSION binlog_row_image = 'MINIMAL'",
            "CREATE DATABASE workcols",
            f"CREATE TABLE {name} (image INT PRIMARY KEY, __fm_text_0 VARCHAR(10),"
            " __fm_value_1 DATE, __fm_absent_0 INT, __fm_text_1 DATE, image2 INT DEFAULT 5)",
            f"INSERT INTO {name} (image, __fm_text_0, __fm_value_1) VALUES (1, 'a', '2024-02-29')",
            f"INSERT INTO {name} VALUES (2, NULL, NULL, 7, '0000-00-00', NULL)",
            f"UPDATE {name} SET __fm_absent_0 = 3 WHERE image = 1",
            f"UPDATE {name} SET __fm_text_0 = 'b', image2 = 6 WHERE image = 2",
            "FLUSH BINARY LOGS",
        ]
    )
    columns = ["image", "__fm_text_0", "__fm_value_1", "__fm_absent_0", "__fm_text_1", "image2"]
    texts = ", ".join(f"CAST(`{c}` AS CHAR)" for c in columns)
    held = server.execute(f"SELECT {texts} FROM {name}")
    assert ("2", "b", None, "7", "0000-00-00", "6") in held  # the zero date the server keeps
    expected = sorted_rows([tuple(None if v == "0000-00-00" else v for v in row) for row in held])
    files = [str(p) for p in server.binlog_files()]
    out = tmp_path / "out"
    materialise(spark, spark.read.format(FORMAT_NAME).load(files), str(out))
    table = read_tables(out)[name]
    assert [list(row) for row in table][0] == columns
    got = sorted_rows([tuple(None if v is None else str(v) for v in row.values()) for row in table])
    assert len(expected) == 2 and got == expected
    report = json.loads((out / "report.json").read_text())["tables"][name]
    assert report["nulls"] == {"__fm_text_1": {"unrepresentable": 1, "absent": 1}}
