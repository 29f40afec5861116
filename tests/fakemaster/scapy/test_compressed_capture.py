"""A capture of a client on the compressed protocol (CLIENT_COMPRESS) dissects: the login in
plain packets, then the inner packets of both directions' compressed packets, every binlog event
equal to the served file's."""

from __future__ import annotations

from pathlib import Path

from fakemaster.config.server_config import ServerConfig
from fakemaster.server.master import BackgroundFakeMaster
from fakemaster.store import MemoryBinlogStore
from fakemaster.vocabulary.commands import BinlogDump
from fakemaster.vocabulary.events import QueryEvent, XidEvent
from tests.peers.policy import require_module
from tests.support.compressed_wire import CompressedClient
from tests.support.streams import store_file_bytes

USER, PASSWORD = "repl", "pw"


def test_a_compressed_dump_dissects(tmp_path: Path) -> None:
    require_module("scapy.contrib.mysql", "pip install 'fakemaster[scapy]' (scapy 2.8 or later)")
    from fakemaster.scapy import dissect_pcap
    from fakemaster.scapy.capture import CaptureProxy
    from tests.support.capture import check_capture

    store = MemoryBinlogStore(server_id=1, clock=lambda: 1_700_000_000)
    for number in range(300):
        # Compressible rows and a few larger than the 16 KiB write buffer.
        text = b"x" * (number * 97 % 40_000)
        store.append_transaction([QueryEvent(database="d", query=b"INSERT " + text), XidEvent()])
        if number == 150:
            store.rotate()
    pcap = tmp_path / "compressed.pcap"
    with BackgroundFakeMaster(ServerConfig(user=USER, password=PASSWORD), store) as master:
        with CaptureProxy(master.host, master.port, pcap) as proxy:
            client = CompressedClient(proxy.host, proxy.port, USER, PASSWORD)
            client.query("SET @master_binlog_checksum= @@global.binlog_checksum")
            client.query("SET @mariadb_slave_capability= 4")
            client.command(
                BinlogDump(
                    position=4, flags=1, server_id=99, file_name=b"mysql-bin.000001"
                ).encode()
            )
            streamed = client.until_closed()
        assert master.errors == []
    assert streamed
    records = dissect_pcap(pcap, proxy.port)
    check_capture(records, {name: store_file_bytes(store, name) for name in store.file_names()})
    # The SET statements went compressed, and were read as queries.
    queries = [r.summary for r in records if not r.from_server and "SET" in r.summary]
    assert len(queries) == 2, [r.line() for r in records if not r.from_server]
