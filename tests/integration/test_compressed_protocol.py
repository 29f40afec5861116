"""The compressed protocol against real peers.

* A real MariaDB 10.11 primary runs the codec workload with a row over 16 MiB; its compressed
  non-blocking dump (a raw client with CLIENT_COMPRESS) must be byte for byte the fake
  master's compressed dump of the same binlog files.
* A real replica with ``slave_compressed_protocol=1`` replicates those files from the fake
  master (the > 16 MiB event crosses compressed packets) and ends with the primary's tables;
  another follows a live stream with heartbeats and semi-sync over compression.
* The ``mariadb`` command-line client with ``--compress`` (and with ``--ssl`` too: compression
  inside TLS) runs queries against the fake master.

``mariadb-binlog`` 10.11 has no ``--compress`` option (it refuses it, also from an option
file), so it cannot be checked here.
"""

from __future__ import annotations

import shutil
import ssl
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from fakemaster.config.server_config import ServerConfig
from fakemaster.core.dump.stream import DumpStream, semi_sync_master
from fakemaster.core.session import DumpRequest
from fakemaster.protocol.handshake import Capability
from fakemaster.server.master import BackgroundFakeMaster
from fakemaster.store import DirectoryBinlogStore, MemoryBinlogStore
from fakemaster.vocabulary.commands import BinlogDump
from tests.fakemaster.server.test_server import tls_context  # noqa: F401 (a fixture)
from tests.integration.test_real_replica import append_acked_groups, caught_up, check_tables
from tests.integration.test_served_real_binlogs import compare_with_primary
from tests.peers.fixtures import MariaDBFactory, require_mariadb
from tests.peers.mariadb import MariaDBServer
from tests.peers.policy import require_peer
from tests.peers.workload import WorkloadResult, run_codec_workload
from tests.support.compressed_wire import CompressedClient, inner_stream, split_compressed
from tests.support.streams import (
    TypedStream,
    gtid_set,
    replica_problem,
    wait_caught_up,
    wait_for_replica,
)

USER, PASSWORD = "repl", "pw"
COMPRESSED_REPLICA = {"slave_compressed_protocol": "ON"}


@dataclass
class Primary:
    result: WorkloadResult
    server_id: int
    checksum: str
    binlogs: Path  # a copy of the binlog files, taken while the primary ran
    gtid_binlog_pos: str  # the workload's, and the replication user's creation after it
    compressed_dump: bytes  # what the primary sent a compressed non-blocking dump of them


def non_blocking_dump(host: str, port: int, user: str, password: str, first_file: str) -> bytes:
    """Every byte of a compressed non-blocking dump from the start (CRC32, capability 4)."""
    client = CompressedClient(host, port, user, password)
    client.query("SET @master_binlog_checksum= @@global.binlog_checksum")
    client.query("SET @mariadb_slave_capability= 4")
    client.command(
        BinlogDump(position=4, flags=1, server_id=99, file_name=first_file.encode()).encode()
    )
    return client.until_closed()


@pytest.fixture(scope="module")
def primary(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Primary]:
    require_mariadb()
    server = MariaDBServer(server_id=1)
    try:
        server.start()
        result = run_codec_workload(server, huge_row=True)
        server.create_replication_user(USER, PASSWORD)
        dump = non_blocking_dump(server.host, server.port, USER, PASSWORD, result.binlog_files[0])
        copy = tmp_path_factory.mktemp("binlogs")
        for name in result.binlog_files:
            shutil.copyfile(server.binlog_dir / name, copy / name)
        # Relative names: the copy must not lead back to the primary's own files.
        (copy / "mysql-bin.index").write_text("".join(f"./{n}\n" for n in result.binlog_files))
        checksum = str(server.query_one("SELECT @@GLOBAL.binlog_checksum"))
        position = str(server.query_one("SELECT @@GLOBAL.gtid_binlog_pos"))
        yield Primary(result, server.server_id, checksum, copy, position, dump)
    finally:
        server.close()


def fake_config(primary: Primary) -> ServerConfig:
    return ServerConfig(
        server_id=primary.server_id,
        user=USER,
        password=PASSWORD,
        binlog_checksum=primary.checksum,
    )


@pytest.mark.mariadb
def test_the_compressed_dump_of_a_large_event_is_the_real_primarys(primary: Primary) -> None:
    real = primary.compressed_dump
    largest = max(len(payload) for payload in _payloads(real))
    assert largest > 0xFFFFFF  # the huge row's event crossed compressed packets
    with (
        DirectoryBinlogStore(primary.binlogs) as store,
        BackgroundFakeMaster(fake_config(primary), store) as master,
    ):
        fake = non_blocking_dump(
            master.host, master.port, USER, PASSWORD, primary.result.binlog_files[0]
        )
        assert master.errors == []
    assert len(fake) == len(real)
    assert _compressed_headers(fake) == _compressed_headers(real)
    assert fake == real


def _payloads(wire: bytes) -> list[bytes]:
    from decoder.packets import PacketReader

    reader = PacketReader(check_sequence=False)
    reader.feed(inner_stream(wire))
    return list(reader)


def _compressed_headers(wire: bytes) -> list[tuple[int, int, int]]:
    return [(seq, stated, len(body)) for seq, stated, body, _ in split_compressed(wire)]


class RecordingDumps:
    """The fake master's dump factory, keeping the requests."""

    def __init__(self, store: Any, config: ServerConfig) -> None:
        self.store = store
        self.config = config
        self.requests: list[DumpRequest] = []

    def __call__(self, request: DumpRequest) -> DumpStream:
        self.requests.append(request)
        return DumpStream(self.store, request, self.config)


@pytest.mark.mariadb
def test_a_compressed_replica_replicates_the_real_binlogs(
    primary: Primary, mariadb_factory: MariaDBFactory
) -> None:
    expected = primary.result
    config = fake_config(primary)
    with DirectoryBinlogStore(primary.binlogs) as store:
        dumps = RecordingDumps(store, config)
        with BackgroundFakeMaster(config, store, dump_factory=dumps) as master:
            replica = mariadb_factory(COMPRESSED_REPLICA, server_id=2)
            replica.change_master(master.host, master.port, USER, PASSWORD, use_gtid="slave_pos")
            replica.execute("START SLAVE")
            wait_caught_up(replica, primary.gtid_binlog_pos, master=master, timeout=180)
            status = replica.slave_status()
            assert status["Master_Log_File"] == expected.binlog_files[-1], replica_problem(
                replica, master
            )
            compare_with_primary(replica, expected)
            assert gtid_set(str(replica.query_one("SELECT @@GLOBAL.gtid_slave_pos"))) == (
                gtid_set(primary.gtid_binlog_pos)
            )
            assert [bool(r.client_capabilities & Capability.COMPRESS) for r in dumps.requests] == [
                True
            ]
            assert master.errors == []


@pytest.mark.mariadb
def test_a_compressed_replica_follows_live_with_heartbeats_and_semi_sync(
    mariadb_factory: MariaDBFactory,
) -> None:
    store = MemoryBinlogStore(server_id=100)
    config = ServerConfig(
        server_id=100,
        user=USER,
        password=PASSWORD,
        semi_sync_enabled=True,
        semi_sync_timeout_ms=10_000,
    )
    stream = TypedStream(store)
    stream.create_schema()
    stream.add_batches(2)
    dumps = RecordingDumps(store, config)
    with BackgroundFakeMaster(config, store, dump_factory=dumps) as master:
        replica = mariadb_factory(
            {**COMPRESSED_REPLICA, "rpl_semi_sync_slave_enabled": "ON"}, server_id=2
        )
        replica.change_master(
            master.host, master.port, USER, PASSWORD, use_gtid="slave_pos", heartbeat_period=0.1
        )
        replica.execute("START SLAVE")
        caught_up(replica, stream, master)
        assert replica.status_variable("Rpl_semi_sync_slave_status") == "ON"
        received = int(replica.status_variable("Slave_received_heartbeats") or 0)
        wait_for_replica(
            replica,
            lambda: int(replica.status_variable("Slave_received_heartbeats") or 0) >= received + 3,
            "three more heartbeats",
            master=master,
        )
        semi = semi_sync_master(store)
        acks = append_acked_groups(replica, stream, semi, master)
        assert acks == [True, True]
        check_tables(replica, stream)
        status = replica.slave_status()
        assert (status["Slave_IO_Running"], status["Slave_SQL_Running"]) == ("Yes", "Yes")
        assert all(r.client_capabilities & Capability.COMPRESS for r in dumps.requests)
        assert len(dumps.requests) == 1  # it never had to reconnect
        assert master.errors == []


# --- the command-line client ----------------------------------------------------------------


def mariadb_cli() -> str:
    path = shutil.which("mariadb")
    require_peer("mariadb command-line client", path is not None, "apt-get install mariadb-client")
    assert path is not None
    return path


QUERIES = "SHOW STATUS LIKE 'Compression'; SELECT 1; SELECT @@gtid_binlog_pos; SHOW MASTER STATUS"


def run_cli(master: BackgroundFakeMaster, *options: str) -> str:
    result = subprocess.run(
        [
            mariadb_cli(),
            "-h127.0.0.1",
            f"-P{master.port}",
            f"-u{USER}",
            f"-p{PASSWORD}",
            "--batch",
            *options,
            "-e",
            QUERIES,
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_the_mariadb_cli_with_compress(
    tls_context: ssl.SSLContext,  # noqa: F811 (the fixture imported above)
) -> None:
    store = MemoryBinlogStore(server_id=1)
    stream = TypedStream(store)
    stream.create_schema()
    config = ServerConfig(user=USER, password=PASSWORD, ssl_context=tls_context)
    with BackgroundFakeMaster(config, store) as master:
        plain = run_cli(master)
        compressed = run_cli(master, "--compress")
        secure = run_cli(master, "--compress", "--ssl", "--skip-ssl-verify-server-cert")
        assert master.errors == []
    assert plain.startswith("Variable_name\tValue\nCompression\tOFF\n1\n1\n")
    on = plain.replace("Compression\tOFF", "Compression\tON")
    assert compressed == on
    assert secure == on
