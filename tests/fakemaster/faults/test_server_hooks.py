"""The fake master's server-side faults on the wire: a blocking dump read raw from a socket
ends with FIN and no packet after its last event, whether its dump is killed
(:meth:`FakeMaster.kill_dump <fakemaster.server.master.FakeMaster.kill_dump>`, like a real primary's
KILL) or the server restarts (:meth:`FakeMaster.restart`, like a real primary's shutdown)."""

from __future__ import annotations

import contextlib
import io
import threading
import time
from collections.abc import Callable

import pymysql
import pytest

from decoder.binlog_file import read_binlog
from fakemaster.config.server_config import ServerConfig
from fakemaster.core.dump.stream import CHUNK_SIZE
from fakemaster.server.master import BackgroundFakeMaster
from fakemaster.store import MemoryBinlogStore
from fakemaster.vocabulary.commands import BinlogDump
from fakemaster.vocabulary.constants import BINLOG_MAGIC
from fakemaster.vocabulary.events import (
    BinlogCheckpointEvent,
    Event,
    FormatDescriptionEvent,
    GtidEvent,
    GtidListEvent,
    QueryEvent,
    StopEvent,
)
from tests.support.rawdump import packet_starts, raw_dump
from tests.support.socket_buffers import kernel_socket_buffers
from tests.support.streams import TypedStream

__all__: list[str] = []

USER, PASSWORD = "repl", "pw"
RAW_DUMP_SERVER_ID = 77  # what raw_dump sends


def wait_until(condition: Callable[[], bool]) -> None:
    deadline = time.monotonic() + 60
    while not condition():
        assert time.monotonic() < deadline, "not reached"
        time.sleep(0.01)


def dump_until_closed(
    master: BackgroundFakeMaster, close: Callable[[], object]
) -> tuple[bytes, str]:
    """A blocking dump's bytes and how it ended, ``close`` called once the client has received
    everything the binlog holds: as many bytes as a non-blocking dump gets before its EOF.
    (Waiting on the server's dump position is not enough: the sender thread may not have
    written those bytes yet, and on a loaded machine a close then comes before any of them.)"""
    complete, how = raw_dump(master.host, master.port, USER, PASSWORD)
    assert how == "eof"
    everything = packet_starts(complete)[-1]  # the bytes before the EOF packet
    wait_until(lambda: master.dumps() == [])
    received = [0]
    result: list[tuple[bytes, str]] = []

    def read() -> None:
        def note(count: int) -> None:
            received[0] = count

        result.append(
            raw_dump(master.host, master.port, USER, PASSWORD, non_blocking=False, progress=note)
        )

    reader = threading.Thread(target=read)
    reader.start()
    wait_until(lambda: len(master.dumps()) == 1)
    wait_until(lambda: received[0] >= everything)
    close()
    reader.join(60)
    assert result
    return result[0]


def served() -> tuple[MemoryBinlogStore, BackgroundFakeMaster]:
    store = MemoryBinlogStore(server_id=1)
    stream = TypedStream(store)
    stream.create_schema()
    stream.add_batches(3)
    return store, BackgroundFakeMaster(ServerConfig(user=USER, password=PASSWORD), store)


def assert_ends_after_whole_events(data: bytes, store: MemoryBinlogStore) -> None:
    starts = packet_starts(data)
    last = starts[-1]
    assert last + 4 + int.from_bytes(data[last : last + 3], "little") == len(data)
    # Every packet is an event (OK byte), none an ERR or EOF.
    assert all(data[at + 4] == 0x00 for at in starts)
    # Each file's events, after a fake ROTATE and the FDE: the dump had sent all it had.
    assert len(starts) >= sum(1 for name in store.file_names() for _ in store.iter_events(name))


@pytest.mark.parametrize("by", ["thread_id", "server_id"])
def test_kill_dump_closes_with_fin_and_no_packet(by: str) -> None:
    store, background = served()
    with background as master:

        def kill() -> None:
            ((thread, server_id, _),) = master.dumps()
            assert server_id == RAW_DUMP_SERVER_ID
            if by == "thread_id":
                assert master.kill_dump(thread_id=thread) == [thread]
            else:
                assert master.kill_dump(server_id=server_id) == [thread]

        data, how = dump_until_closed(master, kill)
        assert how == "fin"
        assert_ends_after_whole_events(data, store)
        assert master.dumps() == []
        assert master.errors == []


def test_kill_dump_names_one_thing() -> None:
    _, background = served()
    with background as master:
        with pytest.raises(ValueError):
            master.kill_dump()
        with pytest.raises(ValueError):
            master.kill_dump(thread_id=1, server_id=2)
        assert master.kill_dump(server_id=12345) == []


def test_restart_closes_with_fin_and_serves_the_new_identity() -> None:
    store, background = served()
    with background as master:
        port = master.port
        new = MemoryBinlogStore(server_id=9, basename="failover-bin")
        data, how = dump_until_closed(master, lambda: master.restart(server_id=9, store=new))
        assert how == "fin"
        assert_ends_after_whole_events(data, store)
        assert master.port == port
        assert master.call(lambda: master._running.state.globals["server_id"]) == 9
        data, how = raw_dump(master.host, port, USER, PASSWORD)
        # The new store has no mysql-bin.000001: ERR 1236 as from a real primary.
        assert how == "fin"
        assert b"Could not find first log file name in binary log index file" in data
        assert master.errors == []


def test_a_restart_with_another_server_id_writes_the_stop_with_the_old_one() -> None:
    """Restarted with another server id, the binlog kept: the STOP that ends the file is the
    stopped server's (the old id), the next file's header events and the groups written after
    it have the new id, as MariaDB 10.11 writes them (tests/scenarios/test_restart.py compares
    a restart with a new server_id against a real server)."""
    store, background = served()
    with background as master:
        master.restart(server_id=9)
        master.call(lambda: store.append_transaction([QueryEvent(query=b"DO 1", database="")]))
        assert master.errors == []
    first, second = store.file_names()
    files = {name: decoded(store, name) for name in (first, second)}
    assert isinstance(files[first][-1], StopEvent)
    assert files[first][-1].server_id == 1
    assert {event.server_id for event in files[first]} == {1}
    assert [type(event) for event in files[second]] == [
        FormatDescriptionEvent,
        GtidListEvent,
        BinlogCheckpointEvent,
        GtidEvent,
        QueryEvent,
        BinlogCheckpointEvent,
    ]
    assert {event.server_id for event in files[second]} == {9}


def decoded(store: MemoryBinlogStore, name: str) -> list[Event]:
    data = BINLOG_MAGIC + b"".join(raw for _, raw in store.iter_events(name))
    return [event for _, event in read_binlog(io.BytesIO(data))]


def test_purge_keeps_the_file_a_dump_reads_unless_forced() -> None:
    """A dump that does not read stays in its first file (bigger than the connection's kernel
    buffers can hold, and one batch of the dump and its copy): the purge stops there; forced,
    the file goes and the dump, at its next read of it, ends with ERR 1236 after whole packets
    (the text of a file that left the index)."""
    store = MemoryBinlogStore()
    statement = b"SELECT '" + b"x" * (1 << 20) + b"'"
    for _ in range(2 + ((kernel_socket_buffers() + 2 * (CHUNK_SIZE + len(statement))) >> 20)):
        store.append_transaction([QueryEvent(query=statement, database="")])
    store.rotate()
    store.rotate()
    with BackgroundFakeMaster(ServerConfig(user=USER, password=PASSWORD), store) as master:
        conn = pymysql.connect(host=master.host, port=master.port, user=USER, password=PASSWORD)
        try:
            with conn.cursor() as cursor:
                cursor.execute("SET @master_binlog_checksum = 'CRC32'")
                cursor.execute("SET @mariadb_slave_capability = 4")
            payload = BinlogDump(
                position=4, flags=0, server_id=77, file_name=b"mysql-bin.000001"
            ).encode()
            sock = conn._sock
            sock.sendall(len(payload).to_bytes(3, "little") + b"\x00" + payload)
            wait_until(lambda: master.dumps() == [(1, 77, "mysql-bin.000001")])
            assert master.purge_to("mysql-bin.000003") == []
            purged = master.purge_to("mysql-bin.000003", force=True)
            assert purged == ["mysql-bin.000001", "mysql-bin.000002"]
            sock.settimeout(60)
            data = bytearray()
            while chunk := sock.recv(1 << 20):
                data += chunk
        finally:
            with contextlib.suppress(Exception):
                conn.close()
        starts = packet_starts(bytes(data))
        last = starts[-1]
        assert last + 4 + int.from_bytes(data[last : last + 3], "little") == len(data)
        assert all(data[at + 4] == 0x00 for at in starts[:-1])
        err = bytes(data[last + 4 :])
        assert err[:3] == b"\xff\xd4\x04"  # ERR 1236
        assert err[9:].startswith(b"could not find next log; the first event 'mysql-bin.000001'")
        assert master.errors == []
