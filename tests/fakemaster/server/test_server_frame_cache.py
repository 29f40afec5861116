"""The server sends closed and open files framed once (frame cache, sendfile) to plain
replicas: the bytes on the wire are those of a server without the cache, for twenty replicas
at once, with and without annotations."""

from __future__ import annotations

import random
import threading
from typing import Any

from fakemaster.config.server_config import ServerConfig
from fakemaster.server.master import BackgroundFakeMaster
from fakemaster.store import MemoryBinlogStore
from fakemaster.vocabulary.commands import BinlogDump
from fakemaster.vocabulary.constants import DumpFlag
from fakemaster.vocabulary.events import AnnotateRowsEvent, QueryEvent, XidEvent
from tests.support.wire import RawClient

USER, PASSWORD = "repl", "secret"
NOW = 1_700_000_000


def corpus(seed: int = 11) -> MemoryBinlogStore:
    """About 12 MB over three files: small and large events (2 MiB: sent as views of the
    read block on the per-block path), annotations, the last file open. No event reaches 16 MiB,
    so every packet of the dump is a whole event (what dump_bytes relies on)."""
    rng = random.Random(seed)
    store = MemoryBinlogStore(clock=lambda: NOW)
    for number in range(3000):
        size = rng.choice([10, 10, 10, 200, 3000]) if number % 500 else 2 << 20
        body: list[Any] = [
            AnnotateRowsEvent(query=b"INSERT %d" % number),
            QueryEvent(query=b"INSERT " + b"y" * size, database="d"),
            XidEvent(xid=number),
        ]
        store.append_transaction(body)
        if number in (1000, 2000):
            store.rotate()
    return store


def dump_bytes(port: int, server_id: int, flags: int = DumpFlag.NON_BLOCK) -> bytes:
    """Everything a non-blocking dump sends, up to its EOF packet."""
    client = RawClient("127.0.0.1", port, USER, PASSWORD)
    try:
        client.query("SET @master_binlog_checksum='CRC32'")
        client.query("SET @mariadb_slave_capability=4")
        dump = BinlogDump(flags=flags, server_id=server_id, file_name=b"mysql-bin.000001")
        client.write(dump.encode())
        out = bytearray()
        packet = 0  # where the next packet starts
        while True:
            while packet + 4 <= len(out):
                length = int.from_bytes(out[packet : packet + 3], "little")
                if packet + 4 + length > len(out):
                    break
                if out[packet + 4] != 0:  # the EOF (or an ERR) ends a non-blocking dump
                    return bytes(out[: packet + 4 + length])
                packet += 4 + length
            chunk = client.sock.recv(1 << 20)
            assert chunk, "closed before the end of the dump"
            out += chunk
    finally:
        client.close()


def test_twenty_replicas_get_the_bytes_of_a_server_without_the_cache() -> None:
    store = corpus()
    without = ServerConfig(user=USER, password=PASSWORD, frame_cache_bytes=0)
    with BackgroundFakeMaster(without, store) as plain:
        expected = dump_bytes(plain.port, 2)
        with_annotations = dump_bytes(plain.port, 3, DumpFlag.NON_BLOCK | 2)
        assert plain.master is not None and plain.master.frame_cache is None
    assert len(with_annotations) > len(expected) > 12_000_000
    config = ServerConfig(user=USER, password=PASSWORD)
    with BackgroundFakeMaster(config, store) as cached:
        results: dict[int, bytes] = {}

        def replica(server_id: int) -> None:
            flags = DumpFlag.NON_BLOCK | (2 if server_id % 2 else 0)
            results[server_id] = dump_bytes(cached.port, server_id, flags)

        threads = [threading.Thread(target=replica, args=(10 + i,)) for i in range(20)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=120)
        master = cached.master
        assert master is not None
        cache = master.frame_cache
        # One run per file and annotation choice: every replica after the first read them.
        assert cache is not None and cache.bytes_used > len(expected)
        assert cached.errors == []
    assert sorted(results) == list(range(10, 30))
    for server_id, data in results.items():
        assert data == (with_annotations if server_id % 2 else expected), server_id
