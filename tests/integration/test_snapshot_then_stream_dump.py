"""The built-in snapshot_then_stream scenario snapshotted by a real tool: mariadb-dump
--single-transaction --master-data=1 (file/position and GTID forms) of fakemaster serving it,
loaded into a real MariaDB 10.11 replica that then replicates the rest from the dump's
coordinates, ends with the oracle's tables (also while transactions arrive during the dump)."""

from __future__ import annotations

import pytest

from scenarios.library import build
from tests.integration.test_snapshot_dump import dump_and_replicate, replica
from tests.peers.mariadb import MariaDBServer

# The real replica fixture of test_snapshot_dump.
__all__ = ["replica"]


@pytest.mark.mariadb
@pytest.mark.parametrize("arriving", [False, True], ids=["still", "arriving"])
@pytest.mark.parametrize("gtid", [False, True], ids=["file_pos", "gtid"])
def test_a_dump_of_snapshot_then_stream_seeds_a_replica_that_ends_with_the_oracle(
    replica: MariaDBServer, gtid: bool, arriving: bool
) -> None:
    dump_and_replicate(replica, build("snapshot_then_stream"), gtid=gtid, arriving=arriving)
