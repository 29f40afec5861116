"""``serve --account`` and a served scenario file's ``[[accounts]]``: several accounts log in at
once with their own grants (SHOW GRANTS as each sees itself), ``--account`` wins over the
scenario's account of the same name, and a bad account is a usage error naming it."""

from __future__ import annotations

from pathlib import Path

import pymysql
import pytest

from tests.fakemaster.cli.test_serve_cli import run_cli, serve

SCENARIO = """
[[accounts]]
user = "cdc"
password = "from-file"
grants = "SELECT, RELOAD, SHOW DATABASES, REPLICATION SLAVE, REPLICATION CLIENT"

[[accounts]]
user = "dump"
password = "old"

[[tables]]
create = "CREATE TABLE shop.orders (id INT PRIMARY KEY)"
rows = [{ id = 1 }]
"""


def grants(host: str, port: int, user: str, password: str) -> list[str]:
    connection = pymysql.connect(host=host, port=port, user=user, password=password)
    try:
        with connection.cursor() as cursor:
            cursor.execute("SHOW GRANTS")
            return [row[0] for row in cursor.fetchall()]
    finally:
        connection.close()


def test_accounts_from_the_command_line_and_the_scenario_file(tmp_path: Path) -> None:
    path = tmp_path / "cdc.toml"
    path.write_text(SCENARIO, encoding="utf-8")
    options = ["--scenario", str(path), "--user", "repl", "--password", "pw"]
    options += ["--account", "dump:new:RELOAD; SELECT, LOCK TABLES ON shop.*"]
    options += ["--account", "mon@127.0.0.1:m:BINLOG MONITOR"]
    with serve(*options) as served:
        seen = {
            user: grants(served.host, served.port, user, password)
            for user, password in (("cdc", "from-file"), ("dump", "new"), ("mon", "m"))
        }
        with pytest.raises(pymysql.err.OperationalError) as refused:
            grants(served.host, served.port, "dump", "old")  # --account replaced it
        assert refused.value.args[0] == 1045
        assert grants(served.host, served.port, "repl", "pw")[0].startswith(
            "GRANT REPLICATION SLAVE, BINLOG MONITOR ON *.* TO `repl`@`%`"
        )
    # The hash is a real server's SELECT PASSWORD('from-file').
    assert seen["cdc"] == [
        "GRANT SELECT, RELOAD, SHOW DATABASES, REPLICATION SLAVE, BINLOG MONITOR ON *.* TO "
        "`cdc`@`%` IDENTIFIED BY PASSWORD '*76D6C3024C8673C2D8F658FEFCA424457AFF881C'"
    ]
    assert seen["dump"][1:] == ["GRANT SELECT, LOCK TABLES ON `shop`.* TO `dump`@`%`"]
    assert seen["mon"][0].startswith("GRANT BINLOG MONITOR ON *.* TO `mon`@`127.0.0.1`")


@pytest.mark.parametrize(
    ("account", "message"),
    [
        ("nocolon", "expected USER[@HOST]:PASSWORD[:GRANTS]"),
        ("u:p:SELECT, FLY", "unknown privilege 'FLY'"),
        ("u:p:RELOAD ON shop.*", "RELOAD cannot be granted ON shop.*"),
    ],
)
def test_a_bad_account_is_a_usage_error(account: str, message: str) -> None:
    result = run_cli("serve", "--account", account)
    assert result.returncode == 2, result.stderr
    assert "--account" in result.stderr and message in result.stderr
    assert "Traceback" not in result.stderr


def test_a_password_less_account_is_not_offered_remotely_unless_told() -> None:
    result = run_cli("serve", "--host", "0.0.0.0", "--port", "0", "-pPW", "--account", "x:")
    assert result.returncode == 1 and result.stderr.count("\n") == 1
    assert "account(s) 'x' have no password" in result.stderr
