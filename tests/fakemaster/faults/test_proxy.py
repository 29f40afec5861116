"""The fault proxy in front of the fake master, read by a raw dump client: FIN and RST cuts as
the client's socket sees them, dump sessions counted over connections, a fault due at a time
with no bytes flowing, a connection without a dump passing through, an upstream that is down,
and the asyncio form."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator

import pymysql
import pytest

from fakemaster.config.server_config import ServerConfig
from fakemaster.faults import Fault, FaultKind, FaultPlan, Point, PointKind, Where
from fakemaster.faults.proxy import BackgroundFaultProxy, FaultProxy
from fakemaster.server.master import BackgroundFakeMaster
from fakemaster.store import MemoryBinlogStore
from tests.support.rawdump import packet_starts, raw_dump
from tests.support.streams import TypedStream

USER, PASSWORD = "repl", "pw"


@pytest.fixture(scope="module")
def master() -> Iterator[BackgroundFakeMaster]:
    store = MemoryBinlogStore(server_id=100)
    stream = TypedStream(store)
    stream.create_schema()
    stream.add_batches(3)
    config = ServerConfig(server_id=100, user=USER, password=PASSWORD)
    with BackgroundFakeMaster(config, store) as running:
        yield running
        assert running.errors == []


@pytest.fixture(scope="module")
def direct(master: BackgroundFakeMaster) -> bytes:
    data, how = raw_dump(master.host, master.port, USER, PASSWORD)
    assert how == "eof"
    return data


@pytest.mark.parametrize("close", ["fin", "rst"])
def test_a_cut_is_seen_by_the_client_as_planned(
    master: BackgroundFakeMaster, direct: bytes, close: str
) -> None:
    plan = [
        Fault(FaultKind.CUT, Point(PointKind.EVENT, 9, Where.INSIDE, 11), params={"close": close})
    ]
    with BackgroundFaultProxy((master.host, master.port), plan) as proxy:
        data, how = raw_dump(proxy.host, proxy.port, USER, PASSWORD)
        assert proxy.sessions == 1
    assert how == close
    assert data == direct[: packet_starts(direct)[9] + 11]


def test_sessions_count_dumps_over_connections(master: BackgroundFakeMaster, direct: bytes) -> None:
    # Only the second dump session is cut; a connection without a dump does not count.
    plan = FaultPlan((Fault(FaultKind.CUT, Point(PointKind.BYTE, 100), session=1),))
    with BackgroundFaultProxy((master.host, master.port), plan) as proxy:
        conn = pymysql.connect(host=proxy.host, port=proxy.port, user=USER, password=PASSWORD)
        with conn.cursor() as cursor:
            cursor.execute("SELECT @@server_id")
            assert cursor.fetchone() == (100,)
        conn.close()
        first, how_first = raw_dump(proxy.host, proxy.port, USER, PASSWORD)
        second, how_second = raw_dump(proxy.host, proxy.port, USER, PASSWORD)
        assert proxy.sessions == 2
        applied = [(engine.session, [a.offset for a in engine.applied]) for engine in proxy.engines]
    assert (first, how_first) == (direct, "eof")
    assert (second, how_second) == (direct[:100], "fin")
    assert applied == [(None, []), (0, []), (1, [100])]


def test_a_time_fault_fires_on_an_idle_blocking_dump(
    master: BackgroundFakeMaster, direct: bytes
) -> None:
    """A blocking dump waits at the end of the binlog (the fake master sends nothing more
    without heartbeats asked for): the fault due 0.3 s after the dump started cuts it with
    RST though no byte flows."""
    plan = [Fault(FaultKind.CUT, Point(PointKind.TIME, 0.3), params={"close": "rst"})]
    with BackgroundFaultProxy((master.host, master.port), plan) as proxy:
        data, how = raw_dump(proxy.host, proxy.port, USER, PASSWORD, non_blocking=False)
    assert how == "rst"
    # Everything up to the end of the binlog came first (the blocking dump has no EOF).
    assert data == direct[: packet_starts(direct)[-1]]


def test_a_hold_keeps_the_dump_at_its_point_until_released(
    master: BackgroundFakeMaster, direct: bytes
) -> None:
    """A stall without a duration holds the stream at event 9 until release(): the proxy
    reports the hold (release() before it ends nothing), the dump does not end meanwhile,
    and after the release the client gets the whole stream, byte for byte."""
    plan = [Fault(FaultKind.STALL, Point(PointKind.EVENT, 9))]
    with BackgroundFaultProxy((master.host, master.port), plan) as proxy:
        assert proxy.release() == 0
        result: list[tuple[bytes, str]] = []
        thread = threading.Thread(
            target=lambda: result.append(raw_dump(proxy.host, proxy.port, USER, PASSWORD)),
            daemon=True,
        )
        thread.start()
        deadline = time.monotonic() + 60
        while not any(engine.holding for engine in proxy.engines):
            assert time.monotonic() < deadline, "the hold never started"
            time.sleep(0.01)
        (engine,) = proxy.engines
        assert [applied.offset for applied in engine.applied] == [packet_starts(direct)[9]]
        assert thread.is_alive() and result == []
        assert proxy.release() == 1
        thread.join(60)
        assert not engine.holding and proxy.release() == 0
    assert result == [(direct, "eof")]


def test_an_upstream_that_is_down_resets_the_client() -> None:
    with socket.socket() as placeholder:
        placeholder.bind(("127.0.0.1", 0))
        port = placeholder.getsockname()[1]
    # Nothing listens on ``port`` now.
    with BackgroundFaultProxy(("127.0.0.1", port)) as proxy:
        with pytest.raises(pymysql.err.OperationalError):
            pymysql.connect(
                host=proxy.host, port=proxy.port, user=USER, password=PASSWORD, connect_timeout=10
            )


async def test_the_asyncio_proxy(master: BackgroundFakeMaster, direct: bytes) -> None:
    import asyncio

    plan = [Fault(FaultKind.TRICKLE, Point(PointKind.BYTE, 0), params={"size": 5})]
    async with FaultProxy((master.host, master.port), plan) as proxy:
        data, how = await asyncio.to_thread(raw_dump, proxy.host, proxy.port, USER, PASSWORD)
        assert proxy.pieces >= len(direct) // 5
    assert (data, how) == (direct, "eof")
