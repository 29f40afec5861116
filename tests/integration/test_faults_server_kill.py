"""KILL of the dump thread: a real MariaDB 10.11 primary's ``KILL <thread>`` and the fake
master's :meth:`~fakemaster.server.master.FakeMaster.kill_dump` (the path SQL ``KILL`` takes: the
socket closes without a packet). A real MariaDB 10.11 replica reconnects by itself, in GTID and
file/pos mode, and goes on with what is written afterwards; its status after the reconnect is
the same against both primaries."""

from __future__ import annotations

import pytest

from tests.integration.test_faults_server_purge import (
    REPLICA_ID,
    Primary,
    poll,
    primary,  # noqa: F401 - the fixture
    start_replica,
    wait_applied,
)
from tests.peers.fixtures import MariaDBFactory

__all__: list[str] = []


@pytest.mark.mariadb
@pytest.mark.parametrize("mode", ["gtid", "file_pos"])
def test_kill_of_the_dump_thread(
    mode: str,
    primary: Primary,  # noqa: F811 - the fixture
    mariadb_factory: MariaDBFactory,
) -> None:
    primary.write()
    replica = start_replica(mariadb_factory, primary, mode)
    wait_applied(replica, primary)
    killed = primary.kill_dump_of(REPLICA_ID)
    assert len(killed) == 1
    # The replica dumps again, on a new connection.
    poll(
        lambda: any(thread not in killed for thread in primary.dump_threads()),
        "the replica's dump back",
    )
    primary.write()
    primary.rotate()
    primary.write()
    wait_applied(replica, primary)
    status = replica.slave_status()
    seen = {key: status[key] for key in ("Slave_IO_Running", "Last_IO_Errno", "Last_IO_Error")}
    assert seen == {"Slave_IO_Running": "Yes", "Last_IO_Errno": 0, "Last_IO_Error": ""}
