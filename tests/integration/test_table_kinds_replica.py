"""The golden binlog of MariaDB's own types and table kinds (tests/golden/table_kinds: UUID and
INET columns, sequences, system-versioned tables), served by fakemaster from a directory, to a
real MariaDB 10.11 replica: it ends with the tables the primary printed, history rows and the
sequences' rows included."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from fakemaster.config.server_config import ServerConfig
from fakemaster.server.master import BackgroundFakeMaster
from fakemaster.store.directory import DirectoryBinlogStore
from tests.peers.fixtures import require_mariadb
from tests.peers.mariadb import MariaDBServer
from tests.support.streams import wait_caught_up

pytestmark = pytest.mark.mariadb

GOLDEN = Path(__file__).resolve().parent.parent / "golden" / "table_kinds"
USER, PASSWORD = "repl", "pw"


def test_a_replica_of_the_served_golden_binlog_holds_the_primarys_tables(tmp_path: Path) -> None:
    require_mariadb()
    expected: dict[str, Any] = json.loads((GOLDEN / "expected.json").read_text())
    for name in expected["binlog_files"]:
        shutil.copy(GOLDEN / name, tmp_path / name)
    (tmp_path / "mysql-bin.index").write_text(
        "".join(f"./{name}\n" for name in expected["binlog_files"])
    )
    store = DirectoryBinlogStore(tmp_path)
    with MariaDBServer(server_id=53) as replica:
        replica.start()
        with BackgroundFakeMaster(ServerConfig(user=USER, password=PASSWORD), store) as master:
            replica.change_master(
                master.host,
                master.port,
                USER,
                PASSWORD,
                use_gtid="no",
                log_file=expected["binlog_files"][0],
                log_pos=4,
            )
            replica.execute("START SLAVE")
            # The file ends with the primary's STOP event: the replica's position stays
            # before it, its GTID position reaches the last group.
            wait_caught_up(replica, store.gtid_binlog_pos(), master=master)
            replica.execute("STOP SLAVE")
            assert master.errors == []
        for name, table in expected["tables"].items():
            rows = [
                [None if v is None else str(v) for v in row]
                for row in replica.execute(table["query"])
            ]
            assert rows == table["rows"], name
            assert replica.execute(f"SHOW CREATE TABLE kinds.{name}")[0][1] == table["create"]
