"""A real MariaDB 10.11 replica's traffic, captured through ``CaptureProxy``, dissected.

The replica connects through the proxy to the fake master (GTID mode, semi-sync, heartbeats)
and, in the second test, to a real MariaDB 10.11 primary. Every packet of the capture must
dissect (no ``Raw`` bytes), the replica's COM_REGISTER_SLAVE and its GTID start
(``SET @slave_connect_state``) must be read, and every binlog event must equal what the decoder
reads from the primary's binlog files at the position its header names; semi-sync event packets
and the replica's ACKs, and heartbeats, must be recognised.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from fakemaster.config.server_config import ServerConfig
from fakemaster.server.master import BackgroundFakeMaster
from fakemaster.store import MemoryBinlogStore
from fakemaster.store.semi_sync import semi_sync_master
from fakemaster.vocabulary.events import HeartbeatEvent
from tests.peers.fixtures import MariaDBFactory
from tests.peers.mariadb import MariaDBServer
from tests.peers.policy import require_module
from tests.support.capture import check_capture
from tests.support.streams import (
    TypedStream,
    store_file_bytes,
    wait_caught_up,
    wait_for_replica,
)

require_module("scapy.contrib.mysql", "pip install 'fakemaster[scapy]' (scapy 2.8 or later)")

from fakemaster.scapy import PacketRecord, dissect_pcap  # noqa: E402
from fakemaster.scapy.capture import CaptureProxy  # noqa: E402

USER, PASSWORD = "repl", "pw"


def start_replica(
    proxy: CaptureProxy, replica: MariaDBServer, gtid_pos: str, master: object
) -> None:
    replica.change_master(proxy.host, proxy.port, USER, PASSWORD, heartbeat_period=0.1)
    replica.execute("START SLAVE")
    wait_caught_up(replica, gtid_pos, master=master)


def check_replica_session(records: list[PacketRecord], files: dict[str, bytes]) -> list[object]:
    extra = check_capture(records, files)
    layers = [r.layer for r in records]
    assert "MySQL COM_REGISTER_SLAVE" in layers
    assert any("@slave_connect_state" in r.summary for r in records)
    return list(extra)


def master_config() -> ServerConfig:
    return ServerConfig(
        server_id=100,
        user=USER,
        password=PASSWORD,
        semi_sync_enabled=True,
        semi_sync_timeout_ms=10_000,
    )


@pytest.fixture
def fake_primary() -> Iterator[tuple[TypedStream, BackgroundFakeMaster]]:
    store = MemoryBinlogStore(server_id=100)
    config = master_config()
    stream = TypedStream(store)
    stream.create_schema()
    stream.add_batches(2)
    with BackgroundFakeMaster(config, store) as master:
        yield stream, master


@pytest.mark.mariadb
def test_a_replica_of_the_fake_master(
    fake_primary: tuple[TypedStream, BackgroundFakeMaster],
    mariadb_factory: MariaDBFactory,
    tmp_path: Path,
) -> None:
    stream, master = fake_primary
    # The primary's semi-sync state: a group committed while the replica is connected is
    # flagged for an ACK.
    semi = semi_sync_master(stream.store, master_config(), clock=lambda: 0.0)
    replica = mariadb_factory({"rpl_semi_sync_slave_enabled": "ON"}, server_id=2)
    pcap = tmp_path / "replica.pcap"
    with CaptureProxy(master.host, master.port, pcap) as proxy:
        start_replica(proxy, replica, stream.gtid_pos(), master)
        group = stream.add_batch()
        acks: list[bool] = []
        semi.wait_for_ack(group.file_name, group.end, acks.append)
        wait_caught_up(replica, stream.gtid_pos(), master=master)
        wait_for_replica(replica, lambda: acks == [True], "the semi-sync ACK", master=master)
        wait_for_replica(
            replica,
            lambda: int(replica.status_variable("Slave_received_heartbeats") or 0) >= 2,
            "two heartbeats",
            master=master,
        )
        replica.execute("STOP SLAVE")
    records = dissect_pcap(pcap, proxy.port)
    store = stream.store
    extra = check_replica_session(
        records, {name: store_file_bytes(store, name) for name in store.file_names()}
    )
    assert any(isinstance(event, HeartbeatEvent) for event in extra)
    assert "Binlog event packet (semi-sync)" in [r.layer for r in records]
    assert "MySQL semi-sync ACK" in [r.layer for r in records]


@pytest.mark.mariadb
def test_a_replica_of_a_real_primary(mariadb_factory: MariaDBFactory, tmp_path: Path) -> None:
    primary = mariadb_factory({"log_bin": "mysql-bin"}, server_id=1)
    primary.create_replication_user(USER, PASSWORD)
    primary.execute(
        [
            "CREATE DATABASE d",
            "CREATE TABLE d.t (id INT PRIMARY KEY, v VARCHAR(20), b MEDIUMBLOB)",
            "INSERT INTO d.t VALUES (1, 'one', NULL), (2, 'two', REPEAT('x', 70000))",
            "UPDATE d.t SET v = 'uno' WHERE id = 1",
            "DELETE FROM d.t WHERE id = 2",
        ]
    )
    gtid_pos = str(primary.query_one("SELECT @@gtid_binlog_pos"))
    replica = mariadb_factory(server_id=2)
    pcap = tmp_path / "replica.pcap"
    with CaptureProxy(primary.host, primary.port, pcap) as proxy:
        start_replica(proxy, replica, gtid_pos, None)
        replica.execute("STOP SLAVE")
    records = dissect_pcap(pcap, proxy.port)
    files = {path.name: path.read_bytes() for path in primary.binlog_files()}
    check_replica_session(records, files)
