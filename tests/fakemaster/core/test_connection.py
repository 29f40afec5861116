"""A whole replication connection driven without a socket (fakemaster.core.connection): login, the
replica's statements, a binlog dump; the bytes are those a client of the running server reads
for the same conversation."""

from __future__ import annotations

from dataclasses import replace

from encoder.packets import frame
from fakemaster.config.server_config import ServerConfig
from fakemaster.core.connection import ServerConnection, sent_bytes
from fakemaster.core.dump.stream import DumpStream
from fakemaster.core.session import DumpRequest, ServerSession, StartDump
from fakemaster.server.master import BackgroundFakeMaster
from fakemaster.sql.state import ServerState
from fakemaster.store import MemoryBinlogStore
from fakemaster.vocabulary.commands import BinlogDump
from fakemaster.vocabulary.constants import DumpFlag
from fakemaster.vocabulary.events import QueryEvent, XidEvent
from tests.support.wire import RawClient, SessionDriver

USER, PASSWORD = "repl", "secret"
CONFIG = ServerConfig(user=USER, password=PASSWORD)
STATEMENTS = ["SET @master_binlog_checksum='CRC32'", "SET @mariadb_slave_capability=4"]


def corpus() -> MemoryBinlogStore:
    store = MemoryBinlogStore(clock=lambda: 1_700_000_000)
    for number in range(200):
        query = b"INSERT INTO t VALUES ('" + b"v" * (number * 97 % 5000) + b"')"
        store.append_transaction([QueryEvent(query=query, database="d"), XidEvent(xid=number)])
        if number == 120:
            store.rotate()
    return store


def dump_command(server_id: int) -> bytes:
    return BinlogDump(
        flags=DumpFlag.NON_BLOCK, server_id=server_id, file_name=b"mysql-bin.000001"
    ).encode()


def connection_over(store: MemoryBinlogStore) -> ServerConnection:
    state = ServerState(CONFIG, store)
    session = ServerSession(state, peer_host="127.0.0.1")
    server_id = int(state.globals["server_id"] or 0)
    config = replace(CONFIG, server_id=server_id)

    def make_dump(request: DumpRequest) -> DumpStream:
        return DumpStream(store, request, config)

    return ServerConnection(session, make_dump)


def test_a_dump_without_a_socket_is_the_dump_a_socket_client_reads() -> None:
    store = corpus()
    connection = connection_over(store)
    # The client side: the project's test client logic, fed through the connection object.
    driver = SessionDriver(connection.session)
    assert driver.login(USER, PASSWORD).payloads[0][:1] == b"\x00"
    for sql in STATEMENTS:
        actions = connection.receive_data(frame(b"\x03" + sql.encode(), 0)[0])
        assert sent_bytes(actions)[4:5] == b"\x00", sql
    actions = connection.receive_data(frame(dump_command(7), 0)[0])
    assert [type(action) for action in actions] == [StartDump]
    assert connection.dump is not None
    streamed = bytearray()
    while parts := connection.dump_output():
        for part in parts:
            streamed += part
    assert connection.dump.is_finished

    with BackgroundFakeMaster(CONFIG, store) as running:
        client = RawClient("127.0.0.1", running.port, USER, PASSWORD)
        for sql in STATEMENTS:
            client.query(sql)
        client.write(dump_command(7))
        received = bytearray()
        while len(received) < len(streamed):
            chunk = client.sock.recv(1 << 20)
            assert chunk
            received += chunk
        client.close()
    assert bytes(received) == bytes(streamed)
    assert streamed.endswith(b"\xfe\x00\x00\x02\x00")  # the EOF of a non-blocking dump


def test_a_dump_reads_no_command_and_goes_on() -> None:
    """Like a MariaDB dump thread, which reads nothing but semi-sync ACKs: a COM_QUIT sent
    during the dump gives no action, and the dump still ends with its EOF."""
    connection = connection_over(corpus())
    SessionDriver(connection.session).login(USER, PASSWORD)
    for sql in STATEMENTS:
        connection.receive_data(frame(b"\x03" + sql.encode(), 0)[0])
    connection.receive_data(frame(dump_command(8), 0)[0])
    first = connection.dump_output()
    assert first
    assert connection.receive_data(frame(b"\x01", 0)[0]) == []
    last = first
    while parts := connection.dump_output():
        last = parts
    assert bytes(last[-1]).endswith(b"\xfe\x00\x00\x02\x00")
    connection.connection_lost()
    connection.close_dump()
    assert connection.dump is not None and connection.dump.is_finished
