"""A second COM_BINLOG_DUMP with the same replica server id ends the first, as on MariaDB.

What MariaDB 10.11.19 did (raw clients and two ``mariadb-binlog --stop-never`` against a
harness server): the older dump gets ERR 4052 (ER_SLAVE_SAME_ID, SQLSTATE HY000) "A slave with
the same server_uuid/server_id is already connected; the first event '<file>' at <pos>, the
last event read from '<file>' at <start of the last event>, the last byte read from '<file>'
at <its end>." as the next packet of its dump sequence, then the connection closes. Only
COM_BINLOG_DUMP triggers it (COM_REGISTER_SLAVE with the same id does not), server id 0 takes
no part, a non-blocking dump ends a blocking one, and the user does not matter.
"""

from __future__ import annotations

import socket
import struct
import time

import pytest

from decoder.packets import parse_err
from fakemaster.config.accounts import Account
from fakemaster.config.server_config import ServerConfig
from fakemaster.core.dump.stream import DumpStream
from fakemaster.core.session import DumpRequest, EndDump, ServerSession, StartDump
from fakemaster.server.master import BackgroundFakeMaster
from fakemaster.sql.state import ServerState
from fakemaster.store import MemoryBinlogStore
from fakemaster.vocabulary.commands import BinlogDump
from fakemaster.vocabulary.constants import Command, DumpFlag
from fakemaster.vocabulary.events import QueryEvent
from tests.support.wire import RawClient, Reply, SessionDriver, packets

SAME_ID = "A slave with the same server_uuid/server_id is already connected"
CONFIG = ServerConfig(user="repl", password="pw", extra_users={"other": "pw"})


def dump_packet(server_id: int, flags: int = 0) -> bytes:
    return BinlogDump(
        position=4, flags=flags, server_id=server_id, file_name=b"mysql-bin.000001"
    ).encode()


def replica(server: ServerState, user: str = "repl") -> SessionDriver:
    driver = SessionDriver(ServerSession(server))
    driver.login(user, "pw")
    return driver


def ended(reply: Reply) -> list[int]:
    """The connections whose dump the reply's actions end."""
    return [action.thread_id for action in reply.actions if isinstance(action, EndDump)]


def test_second_dump_with_the_same_server_id_ends_the_first() -> None:
    server = ServerState(CONFIG)
    first, second = replica(server), replica(server, "other")
    assert ended(first.send(dump_packet(5))) == []
    actions = second.send(dump_packet(5)).actions
    ends = [a for a in actions if isinstance(a, EndDump)]
    assert [(end.thread_id, end.error.errno, end.error.sqlstate) for end in ends] == [
        (first.session.thread_id, 4052, "HY000")
    ]
    assert ends[0].error.message == SAME_ID
    # The older dump is ended before the new one starts.
    assert [type(a) for a in actions] == [EndDump, StartDump]
    # A third one ends the second, not the first again.
    third = replica(server)
    assert ended(third.send(dump_packet(5))) == [second.session.thread_id]


def test_other_ids_register_and_server_id_zero_take_no_part() -> None:
    server = ServerState(CONFIG)
    blocking = replica(server)
    blocking.send(dump_packet(5))
    assert ended(replica(server).send(dump_packet(6))) == []
    registered = replica(server)
    register = b"\x15" + struct.pack("<I", 5) + b"\x00\x00\x00" + struct.pack("<HII", 0, 0, 0)
    assert ended(registered.send(register)) == []
    zero = replica(server)
    zero.send(dump_packet(0))
    assert ended(replica(server).send(dump_packet(0))) == []
    # A non-blocking dump with the id ends the blocking one all the same.
    nonblocking = replica(server).send(dump_packet(5, DumpFlag.NON_BLOCK))
    assert ended(nonblocking) == [blocking.session.thread_id]


def test_a_closed_connection_is_not_ended() -> None:
    server = ServerState(CONFIG)
    first = replica(server)
    first.send(dump_packet(5))
    first.session.connection_lost()
    assert ended(replica(server).send(dump_packet(5))) == []


def test_dump_stream_ends_with_the_error_in_its_sequence() -> None:
    store = MemoryBinlogStore(server_id=1)
    store.append_transaction([QueryEvent(database="d", query=b"CREATE TABLE t (i INT)")])
    stream = DumpStream(store, _request(server_id=5), CONFIG)
    sent = b""
    while (chunk := stream.next_chunk()) is not None:
        sent += chunk
    sequences = [seq for seq, _ in packets(sent)]
    assert sequences == list(range(1, len(sequences) + 1))
    offsets = [offset for offset, _ in store.iter_events("mysql-bin.000001")]
    size = store.file_size("mysql-bin.000001")
    [(seq, payload)] = packets(stream.end_with_error(4052, SAME_ID))
    assert seq == len(sequences) + 1
    error = parse_err(payload)
    assert (error.errno, error.sqlstate) == (4052, "HY000")
    assert error.message == (
        f"{SAME_ID}; the first event 'mysql-bin.000001' at 4, the last event read from "
        f"'mysql-bin.000001' at {offsets[-1]}, the last byte read from 'mysql-bin.000001' at "
        f"{size}."
    )
    assert stream.is_finished and stream.next_chunk() is None
    assert stream.end_with_error(4052, SAME_ID) == b""


def _request(server_id: int) -> DumpRequest:
    return DumpRequest(
        command=Command.BINLOG_DUMP,
        thread_id=1,
        server_id=server_id,
        position=4,
        flags=0,
        file_name="mysql-bin.000001",
        master_binlog_checksum="CRC32",
        slave_capability=4,
    )


def test_the_shell_sends_the_error_and_closes_the_older_connection() -> None:
    store = MemoryBinlogStore(server_id=1)
    store.append_transaction([QueryEvent(database="d", query=b"CREATE TABLE t (i INT)")])
    config = ServerConfig(accounts=(Account.replication("repl", "pw"),))
    with BackgroundFakeMaster(config, store) as master:
        first = RawClient(master.host, master.port, "repl", "pw", timeout=30)
        first.query("SET @master_binlog_checksum='CRC32'")
        first.write(dump_packet(9))
        # Everything the dump has, until it waits for more.
        events = len(list(store.iter_events("mysql-bin.000001"))) + 1  # + the fake ROTATE
        for _ in range(events):
            assert first.read()[:1] == b"\x00"
        second = RawClient(master.host, master.port, "repl", "pw", timeout=30)
        second.query("SET @master_binlog_checksum='CRC32'")
        second.write(dump_packet(9))
        assert second.read()[:1] == b"\x00"  # the new dump streams
        error = parse_err(first.read())
        assert (error.errno, error.sqlstate) == (4052, "HY000")
        assert error.message.startswith(SAME_ID + "; the first event 'mysql-bin.000001' at 4")
        assert first.sock.recv(1) == b""  # then the connection closes
        second.close()
        first.close()
        assert master.errors == []


def test_a_replaced_replica_that_does_not_read_holds_up_nobody(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The older dump is in the middle of sending a large binlog to a replica that stopped
    reading: its ERR cannot go out between two packets, so after END_DUMP_WAIT the connection is
    cut, and the newer dump with the same server id streams meanwhile all the same."""
    import fakemaster.server.master

    monkeypatch.setattr(fakemaster.server.master, "END_DUMP_WAIT", 0.2)
    store = MemoryBinlogStore(server_id=1)
    for number in range(400):
        query = b"INSERT INTO t VALUES ('" + b"s" * 50_000 + b"%d')" % number
        store.append_transaction([QueryEvent(database="d", query=query)])
    config = ServerConfig(accounts=(Account.replication("repl", "pw"),))
    with BackgroundFakeMaster(config, store) as master:
        stalled = RawClient(master.host, master.port, "repl", "pw", timeout=30)
        stalled.query("SET @master_binlog_checksum='CRC32'")
        stalled.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        stalled.write(dump_packet(9))
        newer = RawClient(master.host, master.port, "repl", "pw", timeout=30)
        newer.query("SET @master_binlog_checksum='CRC32'")
        newer.write(dump_packet(9, DumpFlag.NON_BLOCK))
        payloads = []
        while True:
            payload = newer.read()
            payloads.append(payload)
            if payload[:1] != b"\x00":
                break
        assert payloads[-1][:1] == b"\xfe"  # the EOF: the whole binlog came
        assert len(payloads) == len(list(store.iter_events("mysql-bin.000001"))) + 2
        # The older connection was cut (what its socket had queued may still trickle out).
        running = master.master
        assert running is not None
        deadline = time.monotonic() + 60  # bounds a hang only
        while running.connection_count and time.monotonic() < deadline:
            time.sleep(0.01)
        assert running.connection_count == 0
        newer.close()
        stalled.close()
        assert master.errors == []
