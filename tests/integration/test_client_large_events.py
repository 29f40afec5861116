"""Events of 16 MiB and more arrive in split packets (0xFFFFFF-byte chunks): the client joins
them, here a 17 MiB LONGBLOB written, then updated (before and after images: 34 MiB)."""

from __future__ import annotations

from typing import Any

from fakemaster.client.blocking import BlockingReplica
from fakemaster.client.changes import group_changes
from fakemaster.client.protocol import ClientConfig
from scenarios.history import Scenario, Settings
from scenarios.oracle import Oracle
from tests.support.client_apply import Tables, target

SIZE = 17 * 1024 * 1024


def test_client_joins_split_packets_of_events_over_16_mib(fake_master_factory: Any) -> None:
    scenario = Scenario(Settings(binlog_row_metadata="FULL"))
    scenario.create_table("CREATE TABLE big.b (id INT PRIMARY KEY, v LONGBLOB)")
    scenario.insert("big.b", {"id": 1, "v": bytes(range(256)) * (SIZE // 256)})
    scenario.update("big.b", {"id": 1}, {"v": b"\xab" * (SIZE + 5)})
    scenario.insert("big.b", {"id": 2, "v": b"small"})
    master = fake_master_factory(scenario=scenario)
    config = ClientConfig(user=master.user, password=master.password, server_id=77)
    goal = target(scenario)
    tables = Tables(scenario)
    sizes = []
    with BlockingReplica(master.host, master.port, config, until=lambda p: p.covers(goal)) as c:
        for group in c.groups():
            ends = [r.end_position for r in group.events]
            sizes += [b - a for a, b in zip(ends, ends[1:], strict=False)]
            tables.apply_all(group_changes(group))
    Oracle(scenario).assert_matches(tables.rows)
    assert c.connections == 1 and c.errors == []
    # The rows events were more than one packet's 0xFFFFFF bytes (the update's two).
    assert sorted(sizes)[-2:][0] > 0xFFFFFF and max(sizes) > 2 * SIZE
