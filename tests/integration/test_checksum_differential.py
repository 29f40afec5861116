"""pt-table-checksum's chunk checksum, byte for byte against a real MariaDB 10.11 holding the
same tables: for every table of the snapshot differential's scenarios (every column type at its
edges in ``every_type``), the statements pt-table-checksum 3.x sends, built here as its
``make_row_checksum`` builds them from the table's column types (CHAR/VARCHAR/ENUM/SET
converted to utf8mb4, TEXT/BLOB/BINARY/JSON through CRC32, TIMESTAMP through UNIX_TIMESTAMP, a
bitmap of the nullable columns' ISNULL), whole-table and as a chunk of the primary key
(``FORCE INDEX``, ``WHERE ((`id` >= ..)) AND ((`id` <= ..))``, ``LOCK IN SHARE MODE``, its
comment); and what an expression that cannot be evaluated answers (the server's ERR).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from fakemaster.config.server_config import ServerConfig
from fakemaster.server.master import BackgroundFakeMaster
from scenarios.history import Scenario
from scenarios.live import ScenarioStore
from scenarios.sql import quote_name
from tests.peers.fixtures import require_mariadb
from tests.peers.mariadb import MariaDBServer
from tests.support.snapshot_statements import SCENARIOS, describe_payload, load_scenario
from tests.support.wire import RawClient

pytestmark = pytest.mark.mariadb

# The type names pt-table-checksum reads from SHOW CREATE TABLE (JSON is a LONGTEXT there).
_SHOWN_AS = {"json": "longtext"}


def _column_text(name: str, kind: str) -> tuple[str, str]:
    """(the column as selected, as put in CONCAT_WS), as pt-table-checksum writes them."""
    quoted = quote_name(name)
    kind = _SHOWN_AS.get(kind, kind)
    if kind == "timestamp":
        return f"UNIX_TIMESTAMP({quoted})", f"UNIX_TIMESTAMP({quoted})"
    if any(word in kind for word in ("blob", "text", "binary")):
        return f"CRC32({quoted})", f"CRC32({quoted})"
    if kind in ("char", "varchar", "enum", "set"):
        return quoted, f"convert({quoted} using utf8mb4)"
    return quoted, quoted


def checksum_queries(scenario: Scenario) -> list[tuple[str, str]]:
    """(database, statement) for every table: the whole table, and a chunk of its key."""
    out = []
    for model in scenario.tables.values():
        parts = [_column_text(c.name, c.type)[1] for c in model.columns]
        nulls = [f"ISNULL({quote_name(c.name)})" for c in model.columns if c.nullable]
        if nulls:
            parts.append(f"CONCAT({', '.join(nulls)})")
        row = (
            f"CRC32(CONCAT_WS('#', {', '.join(parts)}))" if len(parts) > 1 else f"CRC32({parts[0]})"
        )
        crc = f"COALESCE(LOWER(CONV(BIT_XOR(CAST({row} AS UNSIGNED)), 10, 16)), 0) AS crc"
        table = f"{quote_name(model.database)}.{quote_name(model.name)}"
        out.append(
            (model.database, f"SELECT COUNT(*) AS cnt, {crc} FROM {table} /*checksum table*/")
        )
        if len(model.key) == 1:
            key = quote_name(model.columns[model.key[0]].name)
            out.append(
                (
                    model.database,
                    f"SELECT /*!40001 SQL_NO_CACHE */ COUNT(*) AS cnt, {crc} FROM {table}"
                    f" FORCE INDEX(`PRIMARY`) WHERE (({key} >= '1')) AND (({key} <= '2'))"
                    " LOCK IN SHARE MODE /*checksum chunk*/",
                )
            )
    return out


# Expressions the server refuses: the same ERR from the fake, never a crash.
REFUSED = [
    "SELECT COUNT(*), BIT_XOR(CRC32(nosuch)) FROM `keys`.`pairs`",
    "SELECT COUNT(*), BIT_XOR(NOSUCHFUNC(a)) FROM `keys`.`pairs`",
    "SELECT COUNT(*), BIT_XOR(CONV(a, 10)) FROM `keys`.`pairs`",
    "SELECT COUNT(*), BIT_XOR(CRC32()) FROM `keys`.`pairs`",
]


@pytest.fixture(scope="module")
def real() -> Iterator[MariaDBServer]:
    require_mariadb()
    instance = MariaDBServer(server_id=7)
    try:
        yield instance.start()
    finally:
        instance.close()


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_chunk_checksums_answer_as_the_real_server(real: MariaDBServer, name: str) -> None:
    scenario = SCENARIOS[name]()
    databases = sorted({t.database for t in scenario.tables.values()})
    for database in databases:
        load_scenario(real, scenario, database)
    queries = checksum_queries(scenario)
    if name == "keyed":
        queries += [("keys", sql) for sql in REFUSED]
    differences = []
    with BackgroundFakeMaster(ServerConfig(), ScenarioStore(scenario)) as master:
        for database, sql in queries:
            with (
                RawClient(real.host, real.port, "root", "", database=database) as want,
                RawClient(master.host, master.port, "root", "", database=database) as got,
            ):
                expected, answered = want.query(sql), got.query(sql)
            # A checksum is a row of two columns, a refused expression an ERR.
            assert (expected[0][:1] == b"\xff") == (sql in REFUSED), (sql, expected)
            if expected != answered:
                differences.append(
                    (
                        sql,
                        [describe_payload(p) for p in expected],
                        [describe_payload(p) for p in answered],
                    )
                )
        assert master.errors == []
    assert differences == []
