"""A dump's thread ends when its client leaves (issue #25): after replicas connect, dump and
disconnect (to the end of a non-blocking dump, or hanging up in the middle of it), the server
runs the threads it ran before them, as a MariaDB primary's dump threads end with their
connections. A pool shared by every connection kept each thread it ever started."""

from __future__ import annotations

import threading
import time

from fakemaster.config.server_config import ServerConfig
from fakemaster.server.master import BackgroundFakeMaster
from fakemaster.vocabulary.commands import BinlogDump
from tests.fakemaster.server.test_server_frame_cache import PASSWORD, USER, corpus, dump_bytes
from tests.support.wire import RawClient

DUMP_PREFIX = "fakemaster-dump-"
# A bound on waiting, never a measured time: the wait ends as soon as the threads are gone.
GIVE_UP_SECONDS = 60.0
FRAMING_THREADS = 2


def dump_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name.startswith(DUMP_PREFIX)]


def new_threads(baseline: set[int | None]) -> list[str]:
    """The threads started since ``baseline`` but the frame cache's framing pool (shared by
    every dump of the server, at most FRAMING_THREADS, started by the first dump to need it)."""
    added = [t.name for t in threading.enumerate() if t.ident not in baseline]
    framing = [name for name in added if name.startswith("fakemaster-frame_")]
    assert len(framing) <= FRAMING_THREADS, framing
    return [name for name in added if name not in framing]


def hang_up_mid_dump(port: int, server_id: int) -> None:
    """Ask for a dump, read its first bytes, and close the connection."""
    client = RawClient("127.0.0.1", port, USER, PASSWORD)
    try:
        client.query("SET @master_binlog_checksum='CRC32'")
        client.query("SET @mariadb_slave_capability=4")
        dump = BinlogDump(flags=0, server_id=server_id, file_name=b"mysql-bin.000001")
        client.write(dump.encode())
        assert client.sock.recv(1 << 16), "the dump sent nothing"
    finally:
        client.close()


def wait_for_no_dump_threads(server: BackgroundFakeMaster) -> list[str]:
    """The names of the dump threads still alive once every connection is gone and each dump
    thread seen was joined (each join returns when its thread ends)."""
    deadline = time.monotonic() + GIVE_UP_SECONDS
    while server.call(lambda: server._running.connection_count) and time.monotonic() < deadline:
        time.sleep(0.01)
    for thread in dump_threads():
        thread.join(max(0.0, deadline - time.monotonic()))
    return [t.name for t in dump_threads()]


def test_dump_threads_end_with_their_connections() -> None:
    config = ServerConfig(user=USER, password=PASSWORD)
    with BackgroundFakeMaster(config, corpus()) as server:
        expected = dump_bytes(server.port, 2)
        assert wait_for_no_dump_threads(server) == []
        baseline = {t.ident for t in threading.enumerate()}
        results: dict[int, bytes] = {}
        seen: set[str] = set()

        def replica(server_id: int) -> None:
            if server_id % 3:
                results[server_id] = dump_bytes(server.port, server_id)
            else:
                hang_up_mid_dump(server.port, server_id)
            seen.update(t.name for t in dump_threads())

        replicas = [threading.Thread(target=replica, args=(10 + n,)) for n in range(12)]
        for thread in replicas:
            thread.start()
        for thread in replicas:
            thread.join()
        assert len(results) == 8 and set(results.values()) == {expected}
        assert seen, "the dumps ran in dump threads"
        assert wait_for_no_dump_threads(server) == []
        assert new_threads(baseline) == []
        assert server.errors == []


def test_a_replica_that_hangs_up_leaves_no_thread() -> None:
    config = ServerConfig(user=USER, password=PASSWORD)
    with BackgroundFakeMaster(config, corpus()) as server:
        baseline = {t.ident for t in threading.enumerate()}
        for server_id in range(2, 6):
            hang_up_mid_dump(server.port, server_id)
        assert wait_for_no_dump_threads(server) == []
        assert new_threads(baseline) == []
        assert server.errors == []
