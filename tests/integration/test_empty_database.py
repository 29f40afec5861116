"""Clients that send CONNECT_WITH_DB with an empty database name can replicate.

mysql-connector-python (like Node's mysql/mysql2) always sets CONNECT_WITH_DB and sends "" when
no database was asked for; MariaDB ignores an empty name, so the fake master must too. Shown with
the real library: on the wire (through a recording relay) it sends the flag with an empty name;
against a real MariaDB 10.11 and the fake master it logs in, runs what a replica client runs and
reads the binlog over the same connection (its low-level ``_send_cmd``, the library having no
binlog API).
"""

from __future__ import annotations

import dataclasses
import socket
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from decoder import decode_event
from fakemaster.config.accounts import Account
from fakemaster.config.server_config import ServerConfig
from fakemaster.protocol.handshake import Capability, HandshakeResponse
from fakemaster.server.master import BackgroundFakeMaster
from fakemaster.store import MemoryBinlogStore
from fakemaster.vocabulary.commands import BinlogDump
from fakemaster.vocabulary.constants import DumpFlag
from fakemaster.vocabulary.context import BinlogContext
from fakemaster.vocabulary.events import Event, QueryEvent, RotateEvent
from tests.peers.fixtures import MariaDBFactory
from tests.peers.policy import require_peer

pytestmark = pytest.mark.mariadb

USER, PASSWORD = "repl", "pw"


def connector() -> Any:
    try:
        import mysql.connector
    except ImportError:
        mysql = None
    require_peer(
        "mysql-connector-python",
        mysql is not None,
        "python3 -m pip install -e '.[test]' (PyPI: mysql-connector-python)",
    )
    return mysql.connector  # type: ignore[union-attr]


def connect(host: str, port: int) -> Any:
    # The pure-Python protocol: the one whose _send_cmd reads the dump's packets below.
    return connector().connect(
        host=host, port=port, user=USER, password=PASSWORD, database="", use_pure=True
    )


class RecordingRelay:
    """Forwards one TCP connection to ``target`` and keeps what the client sent."""

    def __init__(self, target: tuple[str, int]) -> None:
        self.target = target
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.from_client = bytearray()
        self._threads = [threading.Thread(target=self._serve, daemon=True)]
        self._threads[0].start()

    def _serve(self) -> None:
        client, _ = self.listener.accept()
        server = socket.create_connection(self.target)
        pumps = [
            threading.Thread(target=self._pump, args=(client, server, self.from_client)),
            threading.Thread(target=self._pump, args=(server, client, None)),
        ]
        for pump in pumps:
            pump.start()
        for pump in pumps:
            pump.join()
        client.close()
        server.close()

    @staticmethod
    def _pump(source: socket.socket, sink: socket.socket, record: bytearray | None) -> None:
        try:
            while data := source.recv(65536):
                if record is not None:
                    record += data
                sink.sendall(data)
        except OSError:
            pass
        finally:
            try:
                sink.shutdown(socket.SHUT_WR)
            except OSError:
                pass

    def close(self) -> None:
        self.listener.close()
        self._threads[0].join(timeout=30)


def first_client_packet(data: bytes) -> tuple[int, bytes]:
    length = int.from_bytes(data[:3], "little")
    return data[3], bytes(data[4 : 4 + length])


def replica_session(conn: Any) -> list[tuple[Any, ...]]:
    """What replica clients run before dumping, with the results' shapes."""
    cursor = conn.cursor()
    shapes = []
    for sql in (
        "SELECT DATABASE()",
        "SELECT @@gtid_binlog_pos",
        "SELECT @@GLOBAL.gtid_domain_id, @@server_id",
        "SHOW VARIABLES LIKE 'SERVER_ID'",
        "SET @master_binlog_checksum= @@global.binlog_checksum",
        "SELECT @master_binlog_checksum",
        "SET @mariadb_slave_capability=4",
        "SHOW MASTER STATUS",
    ):
        cursor.execute(sql)
        rows = cursor.fetchall() if cursor.description else None
        names = tuple(column[0] for column in cursor.description or ())
        shapes.append((sql, names, None if rows is None else len(rows)))
        if sql == "SELECT DATABASE()":
            assert rows == [(None,)], "an empty name selects no database"
    cursor.close()
    return shapes


def dump_events(conn: Any) -> list[Event]:
    """A non-blocking COM_BINLOG_DUMP from the start, over the connector's own connection."""
    dump = BinlogDump(flags=DumpFlag.NON_BLOCK, server_id=0, file_name=b"mysql-bin.000001")
    packet = bytes(conn._send_cmd(dump.COMMAND, dump.body()))
    context = BinlogContext.for_checksum(True)  # @master_binlog_checksum is CRC32
    events = []
    while packet[4] == 0x00:
        events.append(decode_event(packet[5:], context))
        packet = bytes(conn._socket.recv())
    assert packet[4] == 0xFE, packet  # EOF: the end of a non-blocking dump
    return events


@pytest.fixture
def fake_master() -> Iterator[tuple[BackgroundFakeMaster, MemoryBinlogStore]]:
    store = MemoryBinlogStore(server_id=1)
    store.append_transaction([QueryEvent(database="d", query=b"CREATE TABLE t (i INT)")])
    config = ServerConfig(accounts=(Account.replication(USER, PASSWORD),))
    with BackgroundFakeMaster(config, store) as master:
        yield master, store
        assert master.errors == []


def test_connector_sends_connect_with_db_and_an_empty_name(
    fake_master: tuple[BackgroundFakeMaster, MemoryBinlogStore],
) -> None:
    master, _ = fake_master
    relay = RecordingRelay((master.host, master.port))
    conn = connect("127.0.0.1", relay.port)
    conn.close()
    relay.close()
    seq, payload = first_client_packet(bytes(relay.from_client))
    response = HandshakeResponse.decode(payload)
    assert seq == 1
    assert response.capabilities & Capability.CONNECT_WITH_DB
    assert response.database == b""


def test_connector_replicates_from_the_fake_master(
    fake_master: tuple[BackgroundFakeMaster, MemoryBinlogStore],
) -> None:
    master, store = fake_master
    conn = connect(master.host, master.port)
    replica_session(conn)
    events = dump_events(conn)
    conn.close()
    context = BinlogContext.for_checksum(True)
    stored = [decode_event(raw, context) for _, raw in store.iter_events("mysql-bin.000001")]
    # After the fake ROTATE a dump starts with, the file's events, all of them; the FDE of the
    # file being written goes out with its in-use flag cleared, as a real primary sends it.
    assert isinstance(events[0], RotateEvent)
    assert events[1] == dataclasses.replace(stored[0], flags=0)
    assert events[2:] == stored[1:]


def test_connector_same_on_a_real_mariadb_and_the_fake_master(
    mariadb_factory: MariaDBFactory,
    fake_master: tuple[BackgroundFakeMaster, MemoryBinlogStore],
) -> None:
    real = mariadb_factory()
    real.create_replication_user(USER, PASSWORD, privileges="REPLICATION SLAVE, BINLOG MONITOR")
    master, _ = fake_master
    real_conn = connect(real.host, real.port)
    fake_conn = connect(master.host, master.port)
    assert replica_session(fake_conn) == replica_session(real_conn)
    real_events, fake_events = dump_events(real_conn), dump_events(fake_conn)
    assert real_events and fake_events
    real_conn.close()
    fake_conn.close()
