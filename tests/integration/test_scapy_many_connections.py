"""A capture holding many connections, sequential and concurrent, dissects each apart.

Through ``CaptureProxy`` (what ``serve --pcap`` records with), the fake master serves typed rows
across a rotation while: a probe connects and closes; ``pymysql`` runs ``SELECT 1``; a replica
(pymysql-replication, with its own control connection) starts a blocking dump and reads every
event; while that dump is still open, ``mariadb-binlog --read-from-remote-server --raw`` fetches
every file and another probe comes and goes; then a transaction is appended, which only the
replica's dump carries. Each dump connection of the capture must dissect to exactly the events
of the files served to it, in order (expected: the decoder reading the files the store serves,
and ``mariadb-binlog``'s own copies of them), and nothing may be reported missing or
undecoded.
"""

from __future__ import annotations

import io
import shutil
import socket
import subprocess
from pathlib import Path

from decoder import read_binlog
from fakemaster.config.server_config import ServerConfig
from fakemaster.server.master import BackgroundFakeMaster
from fakemaster.store import MemoryBinlogStore
from fakemaster.vocabulary.constants import DumpFlag, EventFlag
from fakemaster.vocabulary.events import AnnotateRowsEvent, Event, HeartbeatEvent, QueryEvent
from tests.peers.policy import require_module, require_peer
from tests.support.streams import TypedStream, as_sent, store_file_bytes

require_module("scapy.contrib.mysql", "pip install 'fakemaster[scapy]' (scapy 2.8 or later)")
require_module("pymysqlreplication", "pip install mysql-replication")

import pymysql  # noqa: E402
from pymysqlreplication import BinLogStreamReader  # noqa: E402

from fakemaster.scapy import PacketRecord, dissect_pcap  # noqa: E402
from fakemaster.scapy.capture import CaptureProxy  # noqa: E402

USER, PASSWORD = "repl", "pw"
FIRST = "mysql-bin.000001"
HANG_BOUND = 120
REPLICA_ID = 7
SMALL_GROUPS = 150


def served_stream() -> TypedStream:
    stream = TypedStream(MemoryBinlogStore(server_id=100))
    stream.create_schema()
    stream.add_batches(3)
    # Many small events: one TCP segment carries more than a hundred packets.
    for number in range(SMALL_GROUPS):
        stream.store.append_transaction([QueryEvent(database="typed", query=b"DO %d" % number)])
    stream.rotate()
    stream.add_batches(2)
    return stream


def served_files(store: MemoryBinlogStore) -> dict[str, bytes]:
    return {name: as_sent(store_file_bytes(store, name)) for name in store.file_names()}


def read_until(replica: BinLogStreamReader, files: dict[str, bytes]) -> int:
    """Read the replica's events up to the end of ``files``; how many it handed over."""
    last = sorted(files)[-1]
    count = 0
    for _ in replica:
        count += 1
        if replica.log_file == last and replica.log_pos == len(files[last]):
            return count
    raise AssertionError(f"the replica's dump ended before {last}:{len(files[last])}")


def file_events(files: dict[str, bytes]) -> list[Event]:
    """Every event of the files, in order, as a primary sends them."""
    return [event for name in sorted(files) for _, event in read_binlog(io.BytesIO(files[name]))]


def dumped_events(records: list[PacketRecord]) -> list[Event]:
    """The events of one connection that come from files (not the dump's artificial ROTATE,
    fake FDE or heartbeats)."""
    return [
        record.event
        for record in records
        if record.event is not None
        and not record.event.flags & EventFlag.ARTIFICIAL
        and not isinstance(record.event, HeartbeatEvent)
        and record.event.log_pos != 0
    ]


def probe(host: str, port: int) -> None:
    """Connect and close without a word (a health check)."""
    with socket.create_connection((host, port), timeout=HANG_BOUND):
        pass


def select_one(host: str, port: int) -> None:
    connection = pymysql.connect(host=host, port=port, user=USER, password=PASSWORD)
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            assert cursor.fetchall() == ((1,),)
    finally:
        connection.close()


def fetch_raw(host: str, port: int, into: Path) -> None:
    tool = shutil.which("mariadb-binlog")
    require_peer("mariadb-binlog", tool is not None, "apt-get install mariadb-client")
    assert tool is not None
    into.mkdir()
    subprocess.run(
        [tool, "--read-from-remote-server", f"--host={host}", f"--port={port}",
         f"--user={USER}", f"--password={PASSWORD}", "--raw", f"--result-file={into}/",
         "--to-last-log", FIRST],
        check=True, capture_output=True, timeout=HANG_BOUND,
    )  # fmt: skip


def test_every_dump_of_a_capture_of_many_connections(tmp_path: Path) -> None:
    stream = served_stream()
    store = stream.store
    before = served_files(store)
    pcap = tmp_path / "many.pcap"
    fetched = tmp_path / "fetched"
    with BackgroundFakeMaster(ServerConfig(user=USER, password=PASSWORD), store) as master:
        with CaptureProxy(master.host, master.port, pcap) as proxy:
            probe(proxy.host, proxy.port)
            select_one(proxy.host, proxy.port)
            replica = BinLogStreamReader(
                connection_settings={"host": proxy.host, "port": proxy.port, "user": USER,
                                     "passwd": PASSWORD, "read_timeout": HANG_BOUND},
                server_id=REPLICA_ID, blocking=True, resume_stream=True, log_file=FIRST,
                log_pos=4,
            )  # fmt: skip
            try:
                assert read_until(replica, before) > 0
                fetch_raw(proxy.host, proxy.port, fetched)
                probe(proxy.host, proxy.port)
                stream.add_batch()
                master.notify_binlog_changed()
                after = served_files(store)
                assert read_until(replica, after) > 0
            finally:
                replica.close()
    # mariadb-binlog's copies are the served files: the expected events are what was served.
    assert {path.name: path.read_bytes() for path in fetched.iterdir()} == before

    records = dissect_pcap(pcap, proxy.port)
    assert records.problems == []
    assert records.connections >= 5  # probes, query, replica (+ its control), mariadb-binlog
    by_connection: dict[int, list[PacketRecord]] = {}
    for record in records:
        by_connection.setdefault(record.connection, []).append(record)
    dumps = {
        number: own
        for number, own in by_connection.items()
        if any(r.layer == "MySQL COM_BINLOG_DUMP" for r in own)
    }
    assert len(dumps) == 2
    replica_dump = mariadb_dump = 0
    for number, own in dumps.items():
        request = next(r for r in own if r.layer == "MySQL COM_BINLOG_DUMP").packet.payload
        if int(request.server_id) == REPLICA_ID:
            replica_dump, wanted = number, file_events(after)
        else:
            mariadb_dump, wanted = number, file_events(before)
        if not int(request.flags) & DumpFlag.SEND_ANNOTATE_ROWS:
            wanted = [e for e in wanted if not isinstance(e, AnnotateRowsEvent)]
        assert dumped_events(own) == wanted, f"connection {number}"
    # The dumps overlapped: mariadb-binlog's came and went inside the replica's.
    replica_records, mariadb_records = dumps[replica_dump], dumps[mariadb_dump]
    assert replica_records[0].time <= mariadb_records[0].time
    assert mariadb_records[-1].time <= replica_records[-1].time
    assert replica_dump < mariadb_dump
    queries = [r.summary for r in records if r.layer == "MySQL COM_QUERY"]
    assert "COM_QUERY b'SELECT 1'" in queries
