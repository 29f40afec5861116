"""Real replication traffic, captured, dissected by ``fakemaster.scapy``.

``mariadb-binlog --read-from-remote-server --raw`` fetches a stream from the fake master (typed
rows across many column types and a rotation) while the traffic is recorded: through
``fakemaster.scapy.capture.CaptureProxy`` (the stream then also has one event of more than
16 MiB, which travels as split packets), and with tcpdump on ``lo`` (real TCP segments; the
stream stays below 64 KiB per burst, since a kernel capture of loopback cuts its 64 KiB
segments to 65,535 bytes). Every MySQL packet of the capture must dissect into a known layer
(no ``Raw``), and every binlog event the capture carries must equal what the decoder reads from
the served file at the position the event's header names; together they must be all the
events of the served files (the dump's artificial ROTATE names the file; the FDE of the file
being written is sent with LOG_EVENT_BINLOG_IN_USE_F clear, as a real primary does).
"""

from __future__ import annotations

import shutil
import subprocess
from contextlib import AbstractContextManager
from pathlib import Path

from fakemaster.config.server_config import ServerConfig
from fakemaster.server.master import BackgroundFakeMaster
from fakemaster.store import MemoryBinlogStore
from fakemaster.vocabulary.events import QueryEvent
from tests.peers.policy import require_module, require_peer
from tests.support.capture import check_capture, tcpdump_capture
from tests.support.streams import TypedStream, store_file_bytes

require_module("scapy.contrib.mysql", "pip install 'fakemaster[scapy]' (scapy 2.8 or later)")

from fakemaster.scapy import dissect_pcap  # noqa: E402
from fakemaster.scapy.capture import CaptureProxy  # noqa: E402

USER, PASSWORD = "repl", "pw"
BIG = 17 << 20  # more than one 16 MiB packet


def served_store(big_event: bool) -> MemoryBinlogStore:
    store = MemoryBinlogStore(server_id=100)
    stream = TypedStream(store)
    stream.create_schema()
    stream.add_batches(2)
    stream.rotate()
    if big_event:
        store.append_transaction(
            [QueryEvent(database="typed", query=b"/* " + b"x" * BIG + b" */ DO 1")]
        )
    stream.add_batch()
    return store


def served_files(store: MemoryBinlogStore) -> dict[str, bytes]:
    return {name: store_file_bytes(store, name) for name in store.file_names()}


def fetch_raw(host: str, port: int, first: str, into: Path) -> None:
    tool = shutil.which("mariadb-binlog") or shutil.which("mysqlbinlog")
    require_peer("mariadb-binlog", tool is not None, "apt-get install mariadb-client")
    assert tool is not None
    into.mkdir()
    subprocess.run(
        [
            tool,
            "--read-from-remote-server",
            f"--host={host}",
            f"--port={port}",
            f"--user={USER}",
            f"--password={PASSWORD}",
            "--raw",
            f"--result-file={into}/",
            "--to-last-log",
            first,
        ],
        check=True,
        capture_output=True,
        timeout=120,
    )


def test_a_proxied_capture_dissects_and_matches_the_served_files(tmp_path: Path) -> None:
    store = served_store(big_event=True)
    pcap = tmp_path / "dump.pcap"
    config = ServerConfig(server_id=100, user=USER, password=PASSWORD)
    with BackgroundFakeMaster(config, store) as master:
        with CaptureProxy(master.host, master.port, pcap) as proxy:
            fetch_raw(proxy.host, proxy.port, store.file_names()[0], tmp_path / "fetched")
    records = dissect_pcap(pcap, proxy.port)
    check_capture(records, served_files(store))
    big = [r for r in records if isinstance(r.event, QueryEvent) and len(r.event.query) > BIG]
    assert [r.chunks for r in big] == [2]


def test_a_tcpdump_capture_of_lo_dissects_and_matches_the_served_files(tmp_path: Path) -> None:
    store = served_store(big_event=False)
    pcap = tmp_path / "dump.pcap"
    config = ServerConfig(server_id=100, user=USER, password=PASSWORD)
    with BackgroundFakeMaster(config, store) as master:
        capture: AbstractContextManager[Path] = tcpdump_capture(pcap, master.port)
        with capture:
            fetch_raw(master.host, master.port, store.file_names()[0], tmp_path / "fetched")
        port = master.port
    check_capture(dissect_pcap(pcap), served_files(store))
    assert port  # the capture found the server port by itself (first SYN)
