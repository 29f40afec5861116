"""fakemaster.sql.answers.client_writes: the databases and tables a client creates on a fake
master, written and read back as pt-table-checksum does, kept out of the served binlog; the
scenario's own tables stay read-only."""

from __future__ import annotations

from fakemaster.config.account_spec import parse_account
from fakemaster.sql.outcome import OkResult
from fakemaster.sql.state import SessionState
from fakemaster.sql.statements import execute
from tests.fakemaster.sql.test_statements import error_of, make_session, values

CHECKSUMS = """CREATE TABLE IF NOT EXISTS `percona`.`checksums` (
     db             CHAR(64)     NOT NULL,
     tbl            CHAR(64)     NOT NULL,
     chunk          INT          NOT NULL,
     chunk_time     FLOAT            NULL,
     this_crc       CHAR(40)     NOT NULL,
     this_cnt       INT          NOT NULL,
     master_crc     CHAR(40)         NULL,
     master_cnt     INT              NULL,
     ts             TIMESTAMP    NOT NULL DEFAULT CURRENT_TIMESTAMP ON UPDATE CURRENT_TIMESTAMP,
     PRIMARY KEY (db, tbl, chunk),
     INDEX ts_db_tbl (ts, db, tbl)
  ) ENGINE=InnoDB DEFAULT CHARSET=utf8"""
WRITE = (
    "REPLACE INTO `percona`.`checksums` (db, tbl, chunk, this_cnt, this_crc) SELECT 'shop', 't',"
    " '1', COUNT(*) AS cnt, COALESCE(LOWER(CONV(BIT_XOR(CAST(CRC32(`id`) AS UNSIGNED)), 10, 16)),"
    " 0) AS crc FROM `shop`.`t` /*checksum table*/"
)


def ok(session: object, sql: str) -> OkResult:
    response = execute(session, sql).responses[-1]  # type: ignore[arg-type]
    assert isinstance(response, OkResult), (sql, response)
    return response


def test_a_checksum_is_written_updated_read_and_deleted() -> None:
    server, session = make_session()
    position = values(session, "SHOW MASTER STATUS")
    assert ok(session, "CREATE DATABASE IF NOT EXISTS `percona` /* pt-table-checksum */")
    assert [b"percona"] in values(session, "SHOW DATABASES")
    ok(session, "USE `percona`")
    ok(session, CHECKSUMS)
    assert ok(session, CHECKSUMS).warnings == 1  # it exists: a note, as on a server
    assert ok(session, WRITE).affected_rows == 1
    assert ok(session, WRITE).affected_rows == 2  # REPLACE: the old row deleted, the new one in
    read = "SELECT this_crc, this_cnt FROM `percona`.`checksums` WHERE db = 'shop' AND tbl = 't'"
    crc = format(0 ^ 0x83DCEFB7 ^ 0x1AD5BE0D ^ 0xA15D25E1, "x").encode()  # CRC32('1'), '2', '10'
    assert values(session, read) == [[crc, b"3"]]
    update = (
        f"UPDATE `percona`.`checksums` SET chunk_time = '0.014952', master_crc = '{crc.decode()}',"
        " master_cnt = '3' WHERE db = 'shop' AND tbl = 't' AND chunk = '1'"
    )
    assert ok(session, update).affected_rows == 1
    assert ok(session, update).affected_rows == 0  # nothing changed
    assert values(session, "SELECT master_crc, master_cnt, chunk_time FROM checksums") == [
        [crc, b"3", b"0.014952"]
    ]
    done = ok(session, "DELETE FROM `percona`.`checksums` WHERE db = 'shop' AND tbl = 't'")
    assert done.affected_rows == 1
    assert values(session, "SELECT * FROM checksums") == []
    # None of it is in the served binlog.
    assert values(session, "SHOW MASTER STATUS") == position
    assert server.client_tables.databases["percona"]["checksums"].rows == []


def test_a_duplicate_key_and_a_wrong_count_are_refused() -> None:
    _, session = make_session()
    ok(session, "CREATE DATABASE d")
    ok(session, "CREATE TABLE d.k (a INT NOT NULL, b VARCHAR(3), PRIMARY KEY (a))")
    ok(session, "INSERT INTO d.k VALUES (1, 'x'), (2, NULL)")
    assert error_of(session, "INSERT INTO d.k VALUES (1, 'y')").errno == 1062
    assert error_of(session, "INSERT INTO d.k (a) VALUES (3, 'y')").errno == 1136
    assert error_of(session, "SELECT * FROM d.nosuch").errno == 1146
    assert values(session, "SELECT * FROM d.k ORDER BY a") == [[b"1", b"x"], [b"2", None]]


def test_the_scenarios_tables_stay_read_only() -> None:
    _, session = make_session()
    for sql in (
        "DELETE FROM shop.t WHERE id = 1",
        "UPDATE shop.t SET name = 'b' WHERE id = 1",
        "INSERT INTO shop.t (id) VALUES (5)",
        "REPLACE INTO shop.t (id) VALUES (5)",
        "CREATE TABLE shop.n (a INT)",
    ):
        assert error_of(session, sql).errno == 1235, sql  # ER_NOT_SUPPORTED_YET, as before
    assert error_of(session, "CREATE DATABASE shop").errno == 1007  # ER_DB_CREATE_EXISTS
    assert len(values(session, "SELECT * FROM shop.t")) == 3


def test_an_account_writes_only_where_its_grants_let_it() -> None:
    server, admin = make_session()
    ok(admin, "CREATE DATABASE percona")
    ok(admin, "CREATE TABLE percona.c (a INT NOT NULL, PRIMARY KEY (a))")
    reader = SessionState.create(
        server, 98, "cdc", "127.0.0.1", 45, parse_account("cdc@%:pw:SELECT, RELOAD")
    )
    denied = error_of(reader, "CREATE DATABASE other")
    assert (denied.errno, denied.message) == (
        1044,
        "Access denied for user 'cdc'@'%' to database 'other'",
    )
    denied = error_of(reader, "DELETE FROM percona.c WHERE a = 1")
    assert (denied.errno, denied.message) == (
        1142,
        "DELETE command denied to user 'cdc'@'127.0.0.1' for table `percona`.`c`",
    )
    assert error_of(reader, "REPLACE INTO percona.c VALUES (1)").errno == 1142
    assert values(reader, "SELECT * FROM percona.c") == []


def test_rows_come_back_in_the_primary_keys_order() -> None:
    _, session = make_session()
    ok(session, "CREATE DATABASE d")
    ok(session, "CREATE TABLE d.c (db CHAR(8) NOT NULL, n INT NOT NULL, PRIMARY KEY (db, n))")
    ok(session, "INSERT INTO d.c VALUES ('b', 10), ('b', 2), ('a', 7)")
    # The key's collation (utf8mb4_general_ci): 'B' is 'b', so REPLACE replaces that row.
    assert ok(session, "REPLACE INTO d.c VALUES ('B', 2)").affected_rows == 2
    assert error_of(session, "INSERT INTO d.c VALUES ('A', 7)").errno == 1062
    assert values(session, "SELECT * FROM d.c") == [[b"a", b"7"], [b"B", b"2"], [b"b", b"10"]]
