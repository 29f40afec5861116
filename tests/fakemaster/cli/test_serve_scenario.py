"""``serve --scenario NAME|FILE`` serves a scenario: a real client (python-mysql-replication)
ends with the oracle's tables, and the served variables are the scenario's settings."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pymysql
import pytest

from scenarios import Oracle
from scenarios.library import LIBRARY, build
from scenarios.toml_form import read_scenario
from tests.fakemaster.cli.test_serve_cli import run_cli, serve
from tests.support.toy_client import apply_row_events

SHOP = """
[settings]
binlog_row_metadata = "FULL"
binlog_row_image = "FULL"
binlog_annotate_row_events = false
log_bin_compress = false
log_bin_compress_min_len = 10
binlog_checksum = "NONE"
server_id = 42
gtid_domain_id = 3

[[tables]]
create = "CREATE TABLE shop.orders (id INT PRIMARY KEY, status ENUM('new','paid') NOT NULL, note VARCHAR(40))"
rows = [{ id = 1, status = "new", note = "before the binlog" }]

[[steps]]
changes = [{ insert = "shop.orders", rows = [{ id = 2, status = "new", note = "first" }] }]

[[steps]]
rotate = true

[[steps]]
changes = [
    { update = "shop.orders", where = { id = 2 }, set = { status = "paid" } },
    { insert = "shop.orders", rows = [{ id = 3, status = "new", note = { null = true } }] },
]

[[steps]]
changes = [{ delete = "shop.orders", where = { id = 1 } }]
"""

VARIABLES = (
    "binlog_format",
    "binlog_row_image",
    "binlog_row_metadata",
    "binlog_annotate_row_events",
    "log_bin_compress",
    "log_bin_compress_min_len",
    "binlog_checksum",
    "server_id",
    "gtid_domain_id",
    "gtid_binlog_pos",
)


def served_variables(host: str, port: int) -> dict[str, str]:
    connection = pymysql.connect(host=host, port=port, user="repl", password="pw")
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT " + ", ".join(f"@@{name}" for name in VARIABLES))
            row = cursor.fetchone()
    finally:
        connection.close()
    assert row is not None
    return {name: str(value) for name, value in zip(VARIABLES, row, strict=True)}


def stream_into(tables: dict[str, list[dict[str, Any]]], host: str, port: int) -> None:
    """A CDC client that starts from a snapshot (``tables``) and applies the whole binlog (from
    the first file: without a position, python-mysql-replication starts at the last file)."""
    apply_row_events(
        tables, host, port, "repl", "pw", log_file="mysql-bin.000001", log_pos=4, resume_stream=True
    )


def test_a_toml_scenario_is_served_with_its_settings(tmp_path: Path) -> None:
    path = tmp_path / "shop.toml"
    path.write_text(SHOP, encoding="utf-8")
    with serve("--scenario", str(path), "--user", "repl", "--password", "pw") as served:
        assert "server_id 42" in served.first_line
        # The initial rows, as the file gives them (what a snapshot would hold).
        tables = {"shop.orders": [{"id": 1, "status": "new", "note": "before the binlog"}]}
        stream_into(tables, served.host, served.port)
        variables = served_variables(served.host, served.port)
    Oracle(read_scenario(path)).assert_matches(tables)
    assert tables["shop.orders"] == [
        {"id": 2, "status": "paid", "note": "first"},
        {"id": 3, "status": "new", "note": None},
    ]
    assert variables == {
        "binlog_format": "ROW",
        "binlog_row_image": "FULL",
        "binlog_row_metadata": "FULL",
        "binlog_annotate_row_events": "0",
        "log_bin_compress": "0",
        "log_bin_compress_min_len": "10",
        "binlog_checksum": "NONE",
        "server_id": "42",
        "gtid_domain_id": "3",
        "gtid_binlog_pos": "3-42-3",
    }


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--scenario", "no_such_scenario"], "no scenario 'no_such_scenario'"),
        (["--scenario", "missing.toml"], "missing.toml"),
        (["--scenario", "minimal_image", "--binlog-dir", "."], "leave out --binlog-dir"),
        (
            ["--scenario", "minimal_image", "--variable", "binlog_row_image=FULL"],
            "contradicts the scenario's binlog_row_image=MINIMAL",
        ),
        (["--scenario", "multi_domain", "--server-id", "5"], "server_id: configured 5"),
        (
            ["--scenario", "multi_domain", "--binlog-checksum", "NONE"],
            "binlog_checksum: configured",
        ),
    ],
)
def test_bad_scenario_options_are_one_error_line(options: list[str], message: str) -> None:
    result = run_cli("serve", "--port", "0", *options)
    assert result.returncode == 1
    assert result.stderr.startswith("error: ") and message in result.stderr
    assert result.stderr.count("\n") == 1


def test_a_built_in_scenario_is_served_by_name() -> None:
    name = "primary_key_updates"
    scenario = build(name)
    assert name in LIBRARY
    with serve("--scenario", name, "--user", "repl", "--password", "pw") as served:
        tables: dict[str, list[dict[str, Any]]] = {}
        for table, rows in scenario.initial.rows.items():
            columns = scenario.tables[table].column_names
            tables[table] = [
                dict(zip(columns, (_text(v) for v in row), strict=True)) for row in rows
            ]
        stream_into(tables, served.host, served.port)
        variables = served_variables(served.host, served.port)
    Oracle(scenario).assert_matches(tables)
    assert variables["binlog_row_metadata"] == "FULL"
    assert variables["gtid_binlog_pos"] == "0-1-5"


def _text(value: object) -> object:
    return value.decode() if isinstance(value, bytes) else value
