"""The asyncio shell over the same core: every built-in scenario, and wire faults through the
fault proxy, end with the oracle's tables."""

from __future__ import annotations

from typing import Any

import pytest

from fakemaster.client.aio import AsyncReplica
from fakemaster.client.blocking import ReconnectPolicy
from fakemaster.client.protocol import ClientConfig
from fakemaster.faults import Fault, FaultKind, FaultPlan, Point, PointKind, Where
from scenarios.library import LIBRARY, build
from scenarios.oracle import Oracle
from tests.support.client_apply import Tables, catalogue, initial, target

TX = PointKind.TRANSACTION
PLANS = {
    "none": (),
    "cut_mid_event_mid_transaction": (
        Fault(FaultKind.CUT, Point(TX, 5, Where.INSIDE, 2, into=20), session=0),
    ),
    "blackhole": (Fault(FaultKind.BLACKHOLE, Point(TX, 3, Where.INSIDE, 1), session=0),),
    "trickle_and_duplicate": (
        Fault(FaultKind.TRICKLE, Point(PointKind.BYTE, 0), session=0, params={"size": 3}),
        Fault(FaultKind.DUPLICATE, Point(TX, 2, Where.INSIDE, 2), session=0),
    ),
    "corrupt_crc_then_cut": (
        Fault(FaultKind.CORRUPT_CRC, Point(TX, 4, Where.INSIDE, 1), session=0),
        Fault(FaultKind.CUT, Point(TX, 1, Where.INSIDE, 1), session=1, params={"close": "rst"}),
    ),
}


async def replicate(master: Any, name: str, gtid_mode: bool = True) -> tuple[Tables, AsyncReplica]:
    scenario = build(name)
    goal = target(scenario)
    config = ClientConfig(
        user=master.user,
        password=master.password,
        server_id=77,
        gtid_mode=gtid_mode,
        net_timeout=1.0,
        heartbeat_period=0.25,
    )
    client = AsyncReplica(
        master.host,
        master.port,
        config,
        start=initial(scenario),
        until=lambda p: p.covers(goal),
        catalogue=catalogue(scenario),
        reconnect=ReconnectPolicy(max_retries=5, delay=0.01),
    )
    tables = Tables(scenario)
    async with client:
        async for change in client.changes():
            tables.apply(change)
    return tables, client


@pytest.mark.parametrize("name", sorted(LIBRARY))
async def test_client_aio_ends_with_the_oracles_tables(
    async_fake_master_factory: Any, name: str
) -> None:
    # All released (snapshot_then_stream, live_stream and long_idle start with fewer).
    master = await async_fake_master_factory(scenario=name, released=Oracle(build(name)).points)
    tables, client = await replicate(master, name)
    Oracle(build(name)).assert_matches(tables.rows)
    assert client.connections == 1 and client.errors == []


@pytest.mark.parametrize("mode", ["gtid", "file_pos"])
@pytest.mark.parametrize("plan", sorted(PLANS))
def test_client_aio_resumes_after_wire_faults(
    fake_master_factory: Any, plan: str, mode: str
) -> None:
    import asyncio

    master = fake_master_factory(scenario="rotation_storm", faults=FaultPlan(PLANS[plan]))
    tables, client = asyncio.run(replicate(master, "rotation_storm", mode == "gtid"))
    Oracle(build("rotation_storm")).assert_matches(tables.rows)
    if plan not in ("none", "trickle_and_duplicate"):
        assert client.connections >= 2
    else:
        assert client.connections == 1
