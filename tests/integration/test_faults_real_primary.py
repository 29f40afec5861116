"""The fault proxy in front of a real MariaDB 10.11 primary, and what that primary itself does
to a dumping connection when it goes away (the behaviour the ``cut`` fault imitates).

* ``mariadb-binlog --raw`` through a proxy that re-slices the stream in 3-byte pieces writes
  the same files as without it (the proxy is not tied to the fake master).
* KILL of the dump thread, and SHUTDOWN of the primary, end the dump with an orderly close
  (FIN) and no ERR or EOF packet: the client reads the events, then the end of the stream.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
from pathlib import Path
from typing import Any

import pytest

from fakemaster.faults import Fault, FaultKind, Point, PointKind
from fakemaster.faults.proxy import BackgroundFaultProxy
from tests.peers.fixtures import MariaDBFactory
from tests.peers.mariadb import MariaDBServer
from tests.peers.policy import require_peer

USER, PASSWORD = "repl", "pw"
# Bounds a wait for a replica's ACK only: a healthy run never comes near it.
ACK_BOUND_MS = 60_000


def prepared_primary(factory: MariaDBFactory) -> MariaDBServer:
    primary = factory(server_id=1)
    primary.create_replication_user(USER, PASSWORD)
    primary.execute(
        [
            "CREATE DATABASE d",
            "CREATE TABLE d.t (id INT PRIMARY KEY, v VARCHAR(400))",
            *(f"INSERT INTO d.t VALUES ({i}, REPEAT('x', {i * 7}))" for i in range(1, 30)),
            "FLUSH BINARY LOGS",
            "UPDATE d.t SET v = CONCAT(v, 'y')",
        ]
    )
    return primary


def fetch_raw(host: str, port: int, directory: Path, first: str) -> dict[str, bytes]:
    tool = shutil.which("mariadb-binlog") or shutil.which("mysqlbinlog")
    require_peer("mariadb-binlog", tool is not None, "apt-get install mariadb-client")
    assert tool is not None
    directory.mkdir()
    command = [
        tool,
        "--read-from-remote-server",
        f"--host={host}",
        f"--port={port}",
        f"--user={USER}",
        f"--password={PASSWORD}",
        "--raw",
        f"--result-file={directory}/",
        "--to-last-log",
        first,
    ]
    result = subprocess.run(command, capture_output=True, timeout=300)
    assert result.returncode == 0, result.stderr.decode(errors="replace")
    return {path.name: path.read_bytes() for path in sorted(directory.iterdir())}


@pytest.mark.mariadb
def test_faults_mariadb_binlog_raw_through_a_reslicing_proxy_in_front_of_a_real_primary(
    mariadb_factory: MariaDBFactory, tmp_path: Path
) -> None:
    primary = prepared_primary(mariadb_factory)
    first = primary.binlog_files()[0].name
    direct = fetch_raw(primary.host, primary.port, tmp_path / "direct", first)
    plan = [Fault(FaultKind.TRICKLE, Point(PointKind.BYTE, 0), params={"size": 3})]
    with BackgroundFaultProxy((primary.host, primary.port), plan) as proxy:
        through = fetch_raw(proxy.host, proxy.port, tmp_path / "through", first)
        applied = [a.fault for e in proxy.engines for a in e.applied]
    assert len(direct) >= 2 and through == direct
    assert applied == plan


def start_dump(primary: MariaDBServer) -> tuple[Any, socket.socket, int]:
    """A blocking dump from the start of the current binlog, over a pymysql connection's
    socket; the connection, its socket and its thread id."""
    conn = primary.connect()
    with conn.cursor() as cursor:
        cursor.execute("SET @master_binlog_checksum = 'CRC32'")
        cursor.execute("SET @mariadb_slave_capability = 4")
        cursor.execute("SELECT CONNECTION_ID()")
        thread_id = int(cursor.fetchone()[0])
    name = primary.master_status()[0].encode()
    payload = b"\x12" + (4).to_bytes(4, "little") + bytes(2) + (77).to_bytes(4, "little") + name
    sock = conn._sock
    sock.sendall(len(payload).to_bytes(3, "little") + b"\x00" + payload)
    return conn, sock, thread_id


def read_until_closed(sock: socket.socket, first: bytes) -> tuple[list[bytes], str]:
    """The payloads read (``first`` and on) until the peer closes (``fin``: recv gives b"";
    ``rst``: reset)."""
    sock.settimeout(30)
    data = bytearray(first)
    how = "fin"
    while True:
        try:
            chunk = sock.recv(1 << 16)
        except ConnectionResetError:
            how = "rst"
            break
        if not chunk:
            break
        data += chunk
    payloads = []
    at = 0
    while at + 4 <= len(data):
        size = int.from_bytes(data[at : at + 3], "little")
        payloads.append(bytes(data[at + 4 : at + 4 + size]))
        at += 4 + size
    assert at == len(data)  # whole packets only
    return payloads, how


@pytest.mark.mariadb
def test_faults_a_real_primary_ends_a_dump_with_fin_and_no_packet_on_kill_and_shutdown(
    mariadb_factory: MariaDBFactory,
) -> None:
    primary = prepared_primary(mariadb_factory)

    conn, sock, thread_id = start_dump(primary)
    # The dump is under way: the fake ROTATE has come.
    sock.settimeout(30)
    first = sock.recv(1 << 16)
    assert first[4:5] == b"\x00"
    primary.execute(f"KILL {thread_id}")
    payloads, how = read_until_closed(sock, first)
    assert how == "fin"
    assert all(payload[:1] == b"\x00" for payload in payloads)  # events only: no ERR, no EOF
    conn.close()

    conn, sock, _ = start_dump(primary)
    first = sock.recv(1 << 16)
    assert first[4:5] == b"\x00"
    primary.stop()
    payloads, how = read_until_closed(sock, first)
    assert how == "fin"
    assert all(payload[:1] == b"\x00" for payload in payloads)
    conn.close()


def status_number(server: MariaDBServer, name: str) -> int:
    return int(server.status_variable(name) or 0)


@pytest.mark.mariadb
def test_faults_dropped_acks_make_a_real_semi_sync_primary_time_out(
    mariadb_factory: MariaDBFactory,
) -> None:
    """A real semi-sync primary and replica through the proxy. Session 0 passes the replica's
    ACKs: the primary's commit is acknowledged (yes_tx). Session 1 (after STOP/START SLAVE)
    drops them: the commit waits rpl_semi_sync_master_timeout, then the primary turns
    semi-sync off (status OFF, no_tx counted) and the replica still gets the row.

    The primary waits 500 ms while no semi-sync replica is connected (the setup's statements),
    as long as a hang bound for session 0's ACK (an ACK that comes late on a loaded machine is
    still an ACK: with 500 ms the commit was once counted no_tx in CI), and 500 ms again for
    session 1, whose ACKs never come."""
    from tests.support.streams import wait_for_replica

    primary = mariadb_factory(
        {"rpl_semi_sync_master_enabled": "ON", "rpl_semi_sync_master_timeout": 500},
        server_id=1,
    )
    primary.create_replication_user(USER, PASSWORD)
    primary.execute(["CREATE DATABASE d", "CREATE TABLE d.t (id INT PRIMARY KEY)"])
    plan = [Fault(FaultKind.DROP_ACKS, Point(PointKind.EVENT, 0), session=1)]
    with BackgroundFaultProxy((primary.host, primary.port), plan) as proxy:
        replica = mariadb_factory({"rpl_semi_sync_slave_enabled": "ON"}, server_id=2)
        replica.change_master(proxy.host, proxy.port, USER, PASSWORD)
        replica.execute("START SLAVE")

        def has(row_id: int) -> bool:
            return replica.execute(f"SELECT id FROM d.t WHERE id = {row_id}") == [(row_id,)]

        wait_for_replica(
            replica,
            lambda: status_number(primary, "Rpl_semi_sync_master_clients") == 1,
            "a semi-sync replica on the primary",
        )
        primary.execute(f"SET GLOBAL rpl_semi_sync_master_timeout = {ACK_BOUND_MS}")
        # (The statements before any semi-sync replica connected count as no_tx.)
        yes, no = (status_number(primary, f"Rpl_semi_sync_master_{n}_tx") for n in ("yes", "no"))
        primary.execute("INSERT INTO d.t VALUES (1)")
        wait_for_replica(replica, lambda: has(1), "row 1")
        assert status_number(primary, "Rpl_semi_sync_master_yes_tx") == yes + 1
        assert status_number(primary, "Rpl_semi_sync_master_no_tx") == no
        assert primary.status_variable("Rpl_semi_sync_master_status") == "ON"
        primary.execute("SET GLOBAL rpl_semi_sync_master_timeout = 500")

        replica.execute("STOP SLAVE")
        replica.execute("START SLAVE")
        wait_for_replica(replica, lambda: proxy.sessions == 2, "the second dump session")
        wait_for_replica(
            replica,
            lambda: status_number(primary, "Rpl_semi_sync_master_clients") == 1,
            "the semi-sync replica back on the primary",
        )
        primary.execute("INSERT INTO d.t VALUES (2)")
        wait_for_replica(replica, lambda: has(2), "row 2")
        assert primary.status_variable("Rpl_semi_sync_master_status") == "OFF"
        assert status_number(primary, "Rpl_semi_sync_master_no_tx") == no + 1
        assert status_number(primary, "Rpl_semi_sync_master_yes_tx") == yes + 1
        dropped = sum(engine.dropped_acks for engine in proxy.engines)
        assert dropped >= 1
        assert "Timeout waiting for reply of binlog" in primary.error_log_text()
