"""Purge of the file a dump reads, and purge while a replica is away: a real MariaDB 10.11
primary and the fake master side by side, a real MariaDB 10.11 replica reacting to each.

* ``PURGE BINARY LOGS TO`` a later file while a dump thread reads the first one: the primary
  keeps that file (``log_in_use``: the purge stops there); once the dump is gone the same
  purge removes it. The fake master's :meth:`~fakemaster.server.master.FakeMaster.purge_to` does the
  same.
* A replica that caught up, stopped, and whose dump was killed (KILL of the dump thread: on
  the fake master :meth:`~fakemaster.server.master.FakeMaster.kill_dump`), comes back after its files
  were purged: in file/pos mode and in GTID mode its IO thread stops with ERR 1236 and the text
  the real primary sends; the test asserts the same text from both primaries.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any, Protocol

import pymysql
import pytest

from fakemaster.config.server_config import ServerConfig
from fakemaster.server.master import BackgroundFakeMaster
from fakemaster.store import MemoryBinlogStore
from fakemaster.vocabulary.commands import BinlogDump
from fakemaster.vocabulary.events import QueryEvent
from tests.peers.fixtures import MariaDBFactory
from tests.peers.mariadb import MariaDBServer
from tests.support.streams import (
    TypedStream,
    gtid_set,
    gtid_slave_pos,
    replica_problem,
    wait_for_replica,
)

__all__: list[str] = []

USER, PASSWORD = "repl", "pw"
PRIMARY_ID = 1
REPLICA_ID = 2
# Bytes of the first file: more than loopback socket buffers hold, so a dump that is not read
# stays in that file.
BIG_FILE = 24 << 20
BIG_STATEMENT = 1 << 20
NO_LOG_FILE = (
    "Got fatal error 1236 from master when reading data from binary log: "
    "'Could not find first log file name in binary log index file'"
)
GTID_PURGED = (
    "Got fatal error 1236 from master when reading data from binary log: "
    "'Could not find GTID state requested by slave in any binlog files. Probably the slave "
    "state is too old and required binlog files have been purged.'"
)
WAIT = 60.0


def poll(condition: Callable[[], bool], what: str, timeout: float = WAIT) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"not reached within {timeout}s: {what}")
        time.sleep(0.05)


class Primary(Protocol):
    host: str

    @property
    def port(self) -> int: ...
    def write(self) -> None: ...
    def write_big(self) -> None: ...
    def rotate(self) -> None: ...
    def files(self) -> list[str]: ...
    def gtid_pos(self) -> str: ...
    def purge_to(self, name: str) -> None: ...
    def dump_count(self) -> int: ...
    def dump_threads(self) -> list[int]: ...
    def kill_dumps(self) -> None: ...
    def kill_dump_of(self, server_id: int) -> list[int]: ...


class RealPrimary:
    """A real MariaDB 10.11 primary writing rows into ``d.t``."""

    def __init__(self, server: MariaDBServer) -> None:
        self.server = server
        self.host = server.host
        self.rows = 0
        server.create_replication_user(USER, PASSWORD)
        server.execute(["CREATE DATABASE d", "CREATE TABLE d.t (a INT PRIMARY KEY, b LONGTEXT)"])

    @property
    def port(self) -> int:
        return self.server.port

    def write(self) -> None:
        self.rows += 1
        self.server.execute(f"INSERT INTO d.t VALUES ({self.rows}, 'x')")

    def write_big(self) -> None:
        for _ in range(BIG_FILE // BIG_STATEMENT):
            self.rows += 1
            self.server.execute(
                f"INSERT INTO d.t VALUES ({self.rows}, REPEAT('x', {BIG_STATEMENT}))"
            )

    def rotate(self) -> None:
        self.server.flush_binary_logs()

    def files(self) -> list[str]:
        return [str(row[0]) for row in self.server.execute("SHOW BINARY LOGS")]

    def gtid_pos(self) -> str:
        return str(self.server.query_one("SELECT @@GLOBAL.gtid_binlog_pos"))

    def purge_to(self, name: str) -> None:
        self.server.wait_for_binlog_checkpoint(WAIT)
        self.server.execute(f"PURGE BINARY LOGS TO '{name}'")

    def dump_threads(self) -> list[int]:
        return [
            int(row[0])
            for row in self.server.execute("SHOW PROCESSLIST")
            if row[4] == "Binlog Dump"
        ]

    def dump_count(self) -> int:
        return len(self.dump_threads())

    def kill_dump_of(self, server_id: int) -> list[int]:
        # SHOW SLAVE HOSTS names the server id of each registered replica, not its thread:
        # with one replica, its dump is the only one.
        threads = self.dump_threads()
        for thread in threads:
            self.server.execute(f"KILL {thread}")
        return threads

    def kill_dumps(self) -> None:
        for thread in self.dump_threads():
            self.server.execute(f"KILL {thread}")
        poll(lambda: self.dump_count() == 0, "the dump threads gone")


class FakePrimary:
    """The fake master serving a :class:`TypedStream`."""

    def __init__(self, master: BackgroundFakeMaster, stream: TypedStream) -> None:
        self.master = master
        self.stream = stream
        self.host = master.host

    @property
    def port(self) -> int:
        return self.master.port

    def write(self) -> None:
        self.stream.add_batch()

    def write_big(self) -> None:
        statement = b"SELECT '" + b"x" * BIG_STATEMENT + b"'"
        for _ in range(BIG_FILE // BIG_STATEMENT):
            self.stream.store.append_transaction([QueryEvent(query=statement, database="")])

    def rotate(self) -> None:
        self.stream.rotate()

    def files(self) -> list[str]:
        return self.stream.store.file_names()

    def gtid_pos(self) -> str:
        return self.stream.store.gtid_binlog_pos()

    def purge_to(self, name: str) -> None:
        self.master.purge_to(name)

    def dump_count(self) -> int:
        return len(self.master.dumps())

    def dump_threads(self) -> list[int]:
        return [thread for thread, _, _ in self.master.dumps()]

    def kill_dump_of(self, server_id: int) -> list[int]:
        return self.master.kill_dump(server_id=server_id)

    def kill_dumps(self) -> None:
        # A dump whose replica closed may end by itself meanwhile: what was killed is not
        # asserted here (tests/integration/test_faults_server_kill.py does).
        for _, server_id, _ in self.master.dumps():
            self.master.kill_dump(server_id=server_id)
        poll(lambda: self.dump_count() == 0, "the dumps gone")


@pytest.fixture(params=["real", "fake"])
def primary(request: pytest.FixtureRequest, mariadb_factory: MariaDBFactory) -> Iterator[Primary]:
    if request.param == "real":
        yield RealPrimary(mariadb_factory(server_id=PRIMARY_ID))
        return
    store = MemoryBinlogStore(server_id=PRIMARY_ID)
    stream = TypedStream(store)
    stream.create_schema()
    config = ServerConfig(server_id=PRIMARY_ID, user=USER, password=PASSWORD)
    with BackgroundFakeMaster(config, store) as master:
        yield FakePrimary(master, stream)
        assert master.errors == []


def stalled_dump(primary: Primary) -> Any:
    """A connection that asks for a dump from the start of the first file and reads nothing."""
    connection = pymysql.connect(host=primary.host, port=primary.port, user=USER, password=PASSWORD)
    with connection.cursor() as cursor:
        cursor.execute("SET @master_binlog_checksum = 'CRC32'")
        cursor.execute("SET @mariadb_slave_capability = 4")
    dump = BinlogDump(server_id=77, file_name=primary.files()[0].encode())
    connection._execute_command(dump.COMMAND, dump.body())
    return connection


@pytest.mark.mariadb
def test_purge_stops_at_the_file_a_dump_reads(primary: Primary) -> None:
    primary.write_big()
    first = primary.files()[0]
    primary.rotate()
    primary.write()
    primary.rotate()
    target = primary.files()[-1]
    connection = stalled_dump(primary)
    try:
        poll(lambda: primary.dump_count() == 1, "the dump running")
        primary.purge_to(target)
        assert primary.files()[0] == first  # in use: kept, and the files after it too
        assert len(primary.files()) == 3
    finally:
        connection.close()
    primary.kill_dumps()
    primary.purge_to(target)
    assert primary.files() == [target]


def start_replica(factory: MariaDBFactory, primary: Primary, mode: str) -> MariaDBServer:
    replica = factory(server_id=REPLICA_ID)
    position: dict[str, Any] = (
        {"use_gtid": "slave_pos"}
        if mode == "gtid"
        else {"use_gtid": "no", "log_file": primary.files()[0], "log_pos": 4}
    )
    replica.change_master(primary.host, primary.port, USER, PASSWORD, **position)
    replica.execute("START SLAVE")
    return replica


def wait_applied(replica: MariaDBServer, primary: Primary) -> None:
    wanted = gtid_set(primary.gtid_pos())
    wait_for_replica(
        replica, lambda: gtid_set(gtid_slave_pos(replica)) == wanted, "caught up", timeout=WAIT
    )


@pytest.mark.mariadb
@pytest.mark.parametrize("mode", ["gtid", "file_pos"])
def test_purge_while_the_replica_is_away(
    mode: str, primary: Primary, mariadb_factory: MariaDBFactory
) -> None:
    primary.write()
    replica = start_replica(mariadb_factory, primary, mode)
    wait_applied(replica, primary)
    replica.execute("STOP SLAVE")
    primary.kill_dumps()  # a stopped replica's dump thread lingers until it writes
    primary.write()
    primary.rotate()
    primary.write()
    last = primary.files()[-1]
    primary.purge_to(last)
    assert primary.files() == [last]
    replica.execute("START SLAVE")

    def stopped() -> bool:
        status = replica.slave_status()
        return status["Slave_IO_Running"] == "No" and status["Last_IO_Errno"] == 1236

    poll(stopped, "the replica's IO thread stopped with 1236")
    status = replica.slave_status()
    expected = GTID_PURGED if mode == "gtid" else NO_LOG_FILE
    assert status["Last_IO_Error"] == expected, replica_problem(replica)
