"""Serving a real server's binlog directory, fakemaster's information_schema tells what the
binlog's TABLE_MAPs (binlog_row_metadata=FULL) tell of the tables, equal to what the real
server's information_schema says for those facts: column names, positions, types, NULL-ability,
character sets, the primary key. (Defaults, other keys and rows are not in the binlog: see
fakemaster/sql/tables/binlog_catalogue.py.)"""

from __future__ import annotations

import pymysql
import pytest

from fakemaster.config.server_config import ServerConfig
from fakemaster.server.master import BackgroundFakeMaster
from fakemaster.store import DirectoryBinlogStore
from scenarios.library import build
from scenarios.script import setup_sql, step_sql
from scenarios.sql import SESSION_SETUP, quote_name
from tests.peers.fixtures import module_mariadb
from tests.peers.mariadb import MariaDBServer

pytestmark = pytest.mark.mariadb

FACTS = (
    "SELECT table_name, column_name, ordinal_position, data_type, column_type, is_nullable,"
    " character_set_name, collation_name, character_maximum_length, numeric_precision,"
    " numeric_scale, datetime_precision, column_key FROM information_schema.COLUMNS"
    " WHERE table_schema = '{db}' ORDER BY table_name, ordinal_position"
)


real = module_mariadb({"binlog_row_metadata": "FULL"}, server_id=3)


def _rows(host: str, port: int, sql: str) -> list[tuple[object, ...]]:
    connection = pymysql.connect(host=host, port=port, user="root", password="")
    try:
        with connection.cursor() as cursor:
            cursor.execute(sql)
            return [tuple(row) for row in cursor.fetchall()]
    finally:
        connection.close()


@pytest.mark.parametrize("name", ["every_type", "primary_key_updates", "no_key_duplicates"])
def test_information_schema_of_a_served_binlog_dir_agrees_with_the_server(
    real: MariaDBServer, name: str
) -> None:
    scenario = build(name)
    databases = sorted({t.database for t in scenario.tables.values()})
    real.execute(
        [
            *SESSION_SETUP,
            *(f"DROP DATABASE IF EXISTS {quote_name(db)}" for db in databases),
            *setup_sql(scenario),
            *(sql for step in scenario.steps for sql in step_sql(step)),
        ]
    )
    with DirectoryBinlogStore(real.binlog_dir) as store:
        with BackgroundFakeMaster(ServerConfig(), store) as master:
            for db in databases:
                want = _rows(real.host, real.port, FACTS.format(db=db))
                got = _rows(master.host, master.port, FACTS.format(db=db))
                assert got == want, db
                for (table,) in _rows(real.host, real.port, f"SHOW TABLES FROM {quote_name(db)}"):
                    show = f"SHOW COLUMNS FROM {quote_name(str(table))} FROM {quote_name(db)}"
                    want_columns = [r[:5] for r in _rows(real.host, real.port, show)]
                    got_columns = [r[:5] for r in _rows(master.host, master.port, show)]
                    assert got_columns == want_columns, table
            assert master.errors == []
