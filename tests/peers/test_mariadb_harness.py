"""Tests of the real-MariaDB harness and of the differential workloads."""

from __future__ import annotations

import pytest

from tests.peers import policy
from tests.peers.binlog_scan import BINLOG_MAGIC, event_type_counts, iter_event_headers
from tests.peers.fixtures import MariaDBFactory
from tests.peers.mariadb import MariaDBServer, PeerMissing
from tests.peers.workload import (
    CODEC_TABLES,
    COMPRESSED_TABLES,
    HUGE_ROW_LENGTH,
    MINIMAL_TABLES,
    WorkloadResult,
    run_codec_workload,
    run_compressed_workload,
    run_full_metadata_workload,
    run_minimal_image_workload,
)

CODEC_EVENT_TYPES = {
    "FORMAT_DESCRIPTION",
    "GTID_LIST",
    "BINLOG_CHECKPOINT",
    "GTID",
    "QUERY",
    "ANNOTATE_ROWS",
    "TABLE_MAP",
    "WRITE_ROWS_V1",
    "UPDATE_ROWS_V1",
    "DELETE_ROWS_V1",
    "XID",
    "XA_PREPARE",
    "INTVAR",
    "RAND",
    "USER_VAR",
    "BEGIN_LOAD_QUERY",
    "APPEND_BLOCK",
    "EXECUTE_LOAD_QUERY",
    "ROTATE",
    "STOP",
}


def _assert_binlogs_ok(server: MariaDBServer) -> None:
    files = server.binlog_files()
    assert files, "no binlog files listed in the index"
    for f in files:
        assert f.parent == server.binlog_dir
        assert f.name.startswith("mysql-bin.")
        with open(f, "rb") as fh:
            assert fh.read(4) == BINLOG_MAGIC == bytes.fromhex("fe62696e")


# -- policy (no server needed) ---------------------------------------------


def test_require_peer_fails_by_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(policy.ALLOW_MISSING_ENV, raising=False)
    with pytest.raises(pytest.fail.Exception, match="install-me"):
        policy.require_peer("thing", False, "install-me")
    policy.require_peer("thing", True, "install-me")  # found: no-op


def test_require_peer_skips_when_allowed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(policy.ALLOW_MISSING_ENV, "1")
    with pytest.raises(pytest.skip.Exception, match="thing"):
        policy.require_peer("thing", False, "install-me")


def test_missing_binary_names_install_script(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKEMASTER_MARIADBD", "/nonexistent/mariadbd")
    with pytest.raises(PeerMissing, match="scripts/install-deps.sh"):
        MariaDBServer()


# -- server lifecycle --------------------------------------------------------


@pytest.mark.mariadb
def test_server_starts(mariadb_server: MariaDBServer) -> None:
    version = mariadb_server.version()
    assert "MariaDB" in version and version.startswith("10.11."), version
    row = mariadb_server.execute(
        "SELECT @@log_bin, @@binlog_format, @@server_id, @@port, @@log_bin_basename"
    )[0]
    assert row[0] == 1 and row[1] == "ROW" and row[2] == 1
    assert row[3] == mariadb_server.port
    assert row[4] == str(mariadb_server.binlog_dir / "mysql-bin")
    # Measured (for reports), not judged: the start-up wait is bounded by start_timeout.
    assert mariadb_server.startup_seconds is not None and mariadb_server.startup_seconds > 0
    _assert_binlogs_ok(mariadb_server)
    assert "ready for connections" in mariadb_server.error_log_text()


@pytest.mark.mariadb
def test_two_servers_at_once(mariadb_factory: MariaDBFactory) -> None:
    a = mariadb_factory(server_id=11)
    b = mariadb_factory({"binlog_row_image": "MINIMAL"}, server_id=12)
    assert a.port != b.port and a.datadir != b.datadir and a.binlog_dir != b.binlog_dir
    assert a.query_one("SELECT @@server_id") == 11
    assert b.query_one("SELECT @@server_id") == 12
    assert a.query_one("SELECT @@binlog_row_image") == "FULL"
    assert b.query_one("SELECT @@binlog_row_image") == "MINIMAL"
    a.execute(["CREATE DATABASE only_a"])
    assert b.execute("SHOW DATABASES LIKE 'only_a'") == []


@pytest.mark.mariadb
def test_extra_options(mariadb_factory: MariaDBFactory) -> None:
    s = mariadb_factory(
        {
            "binlog_row_image": "MINIMAL",
            "log_bin_compress": "ON",
            "log_bin_compress_min_len": 10,
            "binlog_row_metadata": "FULL",
            "binlog_checksum": "NONE",
        }
    )
    row = s.execute(
        "SELECT @@binlog_row_image, @@log_bin_compress, @@log_bin_compress_min_len,"
        " @@binlog_row_metadata, @@binlog_checksum, @@max_allowed_packet"
    )[0]
    assert row == ("MINIMAL", 1, 10, "FULL", "NONE", 64 * 1024 * 1024)


@pytest.mark.mariadb
def test_clean_stop_writes_stop_event_and_restart(mariadb_factory: MariaDBFactory) -> None:
    s = mariadb_factory()
    s.execute(
        ["CREATE DATABASE d", "CREATE TABLE d.t (pk INT PRIMARY KEY)", "INSERT INTO d.t VALUES (1)"]
    )
    s.stop()
    assert not s.is_running()
    assert "Shutdown complete" in s.error_log_text()
    files = s.binlog_files()
    headers = list(iter_event_headers(files[-1]))
    assert headers[0].type_name == "FORMAT_DESCRIPTION"
    assert headers[-1].type_name == "STOP"
    assert headers[-1].pos + headers[-1].event_length == files[-1].stat().st_size
    s.start()  # same datadir: a new binlog file is opened
    assert s.query_one("SELECT COUNT(*) FROM d.t") == 1
    assert len(s.binlog_files()) == len(files) + 1
    s.kill()
    assert not s.is_running()
    last = list(iter_event_headers(s.binlog_files()[-1]))
    assert last[-1].type_name != "STOP"


@pytest.mark.mariadb
def test_replication_user(mariadb_server: MariaDBServer) -> None:
    mariadb_server.create_replication_user("repl", "s3cret")
    conn = mariadb_server.connect(user="repl", password="s3cret")
    try:
        with conn.cursor() as cur:
            cur.execute("SHOW MASTER STATUS")
            name, pos = cur.fetchone()[:2]
            cur.execute("SHOW GRANTS")
            grants = " ".join(r[0] for r in cur.fetchall())
    finally:
        conn.close()
    assert name.startswith("mysql-bin.") and pos >= 4
    assert "REPLICATION SLAVE" in grants


@pytest.mark.mariadb
def test_waiting_for_the_binlog_checkpoint_after_a_rotation(mariadb_server: MariaDBServer) -> None:
    """The server writes the checkpoint naming a new file in the background after a rotation:
    once the wait returns, the file ends with it, read from disk by the independent scanner."""
    mariadb_server.execute(
        [
            "CREATE DATABASE shop",
            "CREATE TABLE shop.orders (id INT PRIMARY KEY, total DECIMAL(10,2)) ENGINE=InnoDB",
            "INSERT INTO shop.orders VALUES (1, 9.99), (2, 19.50)",
            "FLUSH BINARY LOGS",
            "INSERT INTO shop.orders VALUES (3, 5.00)",
        ]
    )
    last = mariadb_server.wait_for_binlog_checkpoint()
    assert last == mariadb_server.binlog_files()[-1].name
    headers = list(iter_event_headers(mariadb_server.binlog_files()[-1]))
    assert headers[-1].type_name == "BINLOG_CHECKPOINT"
    assert last == mariadb_server.wait_for_binlog_checkpoint()  # already there: at once


def test_waiting_for_a_binlog_checkpoint_that_never_comes(monkeypatch: pytest.MonkeyPatch) -> None:
    server = MariaDBServer(server_id=1)
    listing = [
        ("mysql-bin.000002", 4, "Format_desc", 1, 256, "Server ver: 10.11"),
        ("mysql-bin.000002", 256, "Gtid_list", 1, 299, "[0-1-3]"),
        ("mysql-bin.000002", 299, "Binlog_checkpoint", 1, 342, "mysql-bin.000001"),
    ]
    monkeypatch.setattr(server, "master_status", lambda: ("mysql-bin.000002", 342))
    monkeypatch.setattr(server, "execute", lambda sql: listing)
    with pytest.raises(TimeoutError, match="no BINLOG_CHECKPOINT naming mysql-bin.000002"):
        server.wait_for_binlog_checkpoint(timeout=0)


# -- workloads ---------------------------------------------------------------


@pytest.mark.mariadb
def test_codec_workload(mariadb_factory: MariaDBFactory) -> None:
    s = mariadb_factory()
    result = run_codec_workload(s)
    s.stop()
    _assert_binlogs_ok(s)
    assert [p.name for p in s.binlog_files()][: len(result.binlog_files)] == result.binlog_files
    assert len(result.binlog_files) >= 2  # FLUSH BINARY LOGS rotated
    counts = event_type_counts(s.binlog_files())
    missing = CODEC_EVENT_TYPES - set(counts)
    assert not missing, f"workload did not produce {missing}; got {dict(counts)}"
    assert counts["APPEND_BLOCK"] >= 2
    for spec in CODEC_TABLES:
        assert spec.name in result.tables
        table = result.tables[spec.name]
        assert table.columns and table.rows
        for row in table.rows:
            assert len(row) == len(table.columns)
            assert all(v is None or isinstance(v, bytes) for v in row)
    assert "t_ctas" in result.tables
    # spot checks of the documented raw format
    t_int = result.table("t_int").rows_as_dicts()
    assert t_int[1]["biu"] == b"18446744073709551615" and t_int[0]["zf"] == b"00000000"
    assert result.table("t_int").column("biu").unsigned
    t_string = result.table("t_string").rows_as_dicts()
    assert t_string[1]["c10"] == b"\xe9"  # latin1, not converted
    assert len(t_string[1]["c255"] or b"") == 1020
    assert t_string[1]["bin8"] == b"\x00" * 8
    assert result.table("t_bit").rows[1][5] == b"\xff" * 8
    assert result.table("t_load").rows[-1][0] == b"300"
    assert (
        result.table("t_stmt").rows[3][3]
        == "héllo|18446744073709551615|3.14|1.5|null|00FF".encode()
    )
    # JSON round trip (golden files)
    again = WorkloadResult.loads(result.dumps())
    assert again == result


@pytest.mark.mariadb
def test_codec_workload_huge_row(mariadb_factory: MariaDBFactory) -> None:
    s = mariadb_factory()
    result = run_codec_workload(s, huge_row=True)
    s.stop()
    huge = result.table("t_huge").rows
    assert huge[0][1] is not None and len(huge[0][1]) == HUGE_ROW_LENGTH > 16 * 1024 * 1024
    assert huge[0][1].endswith(b"END")
    biggest = max(h.event_length for f in s.binlog_files() for h in iter_event_headers(f))
    assert biggest > 16 * 1024 * 1024


@pytest.mark.mariadb
def test_minimal_image_workload(mariadb_factory: MariaDBFactory) -> None:
    s = mariadb_factory({"binlog_row_image": "MINIMAL"})
    result = run_minimal_image_workload(s)
    s.stop()
    _assert_binlogs_ok(s)
    assert {t.name for t in MINIMAL_TABLES} <= set(result.tables)
    assert result.server_variables["binlog_row_image"] == "MINIMAL"
    assert result.table("m_nopk").order_by == ["a", "b", "c"]
    counts = event_type_counts(s.binlog_files())
    assert {"UPDATE_ROWS_V1", "DELETE_ROWS_V1", "WRITE_ROWS_V1"} <= set(counts)


@pytest.mark.mariadb
def test_minimal_workload_refuses_full_image(mariadb_server: MariaDBServer) -> None:
    with pytest.raises(ValueError, match="binlog_row_image"):
        run_minimal_image_workload(mariadb_server)


@pytest.mark.mariadb
def test_compressed_workload(mariadb_factory: MariaDBFactory) -> None:
    s = mariadb_factory({"log_bin_compress": "ON", "log_bin_compress_min_len": 10})
    result = run_compressed_workload(s)
    s.stop()
    counts = event_type_counts(s.binlog_files())
    for t in (
        "QUERY_COMPRESSED",
        "WRITE_ROWS_COMPRESSED_V1",
        "UPDATE_ROWS_COMPRESSED_V1",
        "DELETE_ROWS_COMPRESSED_V1",
    ):
        assert counts[t] > 0, (t, dict(counts))
    assert {t.name for t in COMPRESSED_TABLES} <= set(result.tables)


@pytest.mark.mariadb
def test_full_metadata_workload(mariadb_factory: MariaDBFactory) -> None:
    s = mariadb_factory({"binlog_row_metadata": "FULL", "binlog_checksum": "NONE"})
    result = run_full_metadata_workload(s)
    s.stop()
    assert result.server_variables["binlog_row_metadata"] == "FULL"
    assert result.server_variables["binlog_checksum"] == "NONE"
    assert "TABLE_MAP" in event_type_counts(s.binlog_files())
