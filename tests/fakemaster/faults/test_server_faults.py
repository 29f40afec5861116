"""Server-side faults as data (:mod:`fakemaster.faults.server_faults`): parsed from a plan
file, checked, and applied to a running fake master."""

from __future__ import annotations

from typing import Any

import pytest

from fakemaster.config.server_config import ServerConfig
from fakemaster.faults.plan import PlanError
from fakemaster.faults.server_faults import (
    ServerFault,
    ServerFaultKind,
    load_server_faults,
    schedule,
)
from fakemaster.server.master import BackgroundFakeMaster
from fakemaster.store import MemoryBinlogStore
from tests.fakemaster.faults.test_server_hooks import (
    PASSWORD,
    USER,
    assert_ends_after_whole_events,
    dump_until_closed,
    served,
)

__all__: list[str] = []

PLAN = """
[[faults]]
kind = "cut"
at = { event = 3 }

[[server_faults]]
kind = "kill_dump"
server_id = 2
at = 1.5

[[server_faults]]
kind = "purge"
to = "mysql-bin.000003"
force = true

[[server_faults]]
kind = "restart"
server_id = 9
"""


def test_a_plan_file_names_server_faults() -> None:
    faults = load_server_faults(PLAN)
    assert faults == (
        ServerFault(ServerFaultKind.KILL_DUMP, 1.5, {"server_id": 2}),
        ServerFault(ServerFaultKind.PURGE, 0.0, {"to": "mysql-bin.000003", "force": True}),
        ServerFault(ServerFaultKind.RESTART, 0.0, {"server_id": 9}),
    )
    assert [ServerFault.from_dict(f.to_dict()) for f in faults] == list(faults)
    assert load_server_faults('{"faults": []}', toml=False) == ()


@pytest.mark.parametrize(
    "item",
    [
        {"kind": "reboot"},
        {"kind": "purge", "to": 3},
        {"kind": "purge", "force": 1},
        {"kind": "restart", "server_id": True},
        {"kind": "restart", "server_id": 2, "at": -1},
        {"kind": "kill_dump"},
        {"kind": "kill_dump", "server_id": 2, "thread_id": 1},
        {"kind": "kill_dump", "host": "x"},
        "purge",
    ],
)
def test_bad_server_faults_are_refused(item: Any) -> None:
    with pytest.raises(PlanError):
        ServerFault.from_dict(item)


def run(master: BackgroundFakeMaster, faults: list[ServerFault]) -> list[Any]:
    async def go() -> list[Any]:
        return await schedule(master._running, faults)

    return list(master._await(go()))


def test_scheduled_faults_happen_on_the_running_master() -> None:
    store, background = served()
    store.rotate()
    store.rotate()
    with background as master:
        data, how = dump_until_closed(
            master,
            lambda: run(master, [ServerFault(ServerFaultKind.KILL_DUMP, 0, {"server_id": 77})]),
        )
        assert how == "fin"
        assert_ends_after_whole_events(data, store)
        purge = ServerFault(ServerFaultKind.PURGE)  # to the last file
        restart = ServerFault(ServerFaultKind.RESTART, 0, {"server_id": 9})
        purged = ["mysql-bin.000001", "mysql-bin.000002", "mysql-bin.000003"]
        # The restart ended the binlog's file and started the next one, which the purge keeps.
        assert run(master, [restart, purge]) == [None, purged]
        assert store.file_names() == ["mysql-bin.000004"]
        assert store.format_description("mysql-bin.000004")[5:9] == (9).to_bytes(4, "little")
        assert master.call(lambda: master._running.state.globals["server_id"]) == 9
        assert master.errors == []


def test_a_failing_fault_is_recorded_and_the_plan_goes_on() -> None:
    store = MemoryBinlogStore()
    with BackgroundFakeMaster(ServerConfig(user=USER, password=PASSWORD), store) as master:
        bad = ServerFault(ServerFaultKind.PURGE, 0, {"to": "mysql-bin.000099"})
        kill = ServerFault(ServerFaultKind.KILL_DUMP, 0, {"thread_id": 1})
        results = run(master, [bad, kill])
        assert isinstance(results[0], KeyError)
        assert results[1] == []
        assert master.errors == [results[0]]
