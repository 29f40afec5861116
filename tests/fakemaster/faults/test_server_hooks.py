"""The fake master's server-side faults on the wire: a blocking dump read raw from a socket
ends with FIN and no packet after its last event, whether its dump is killed
(:meth:`FakeMaster.kill_dump <fakemaster.server.FakeMaster.kill_dump>`, like a real primary's
KILL) or the server restarts (:meth:`FakeMaster.restart`, like a real primary's shutdown)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

import pytest

from fakemaster.config import ServerConfig
from fakemaster.server import BackgroundFakeMaster
from fakemaster.store import MemoryBinlogStore
from tests.fakemaster.faults.rawdump import packet_starts, raw_dump
from tests.integration.streams import TypedStream

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
    result: list[tuple[bytes, str]] = []
    reader = threading.Thread(
        target=lambda: result.append(
            raw_dump(master.host, master.port, USER, PASSWORD, non_blocking=False)
        )
    )
    reader.start()
    wait_until(lambda: len(master.dumps()) == 1)
    wait_until(lambda: master.call(lambda: idle(master)))
    close()
    reader.join(60)
    assert result
    return result[0]


def idle(master: BackgroundFakeMaster) -> bool:
    """The one dump waits at the end of the binlog (everything sent)."""
    running = master._running
    store = running.store
    (connection,) = running._connections.values()
    dump = connection.dump
    if dump is None:
        return False
    name = store.last_file()
    return bool(dump.file_name == name and dump.position == store.file_size(name))


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
