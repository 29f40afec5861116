"""Issue #8, must-show 3: ``mariadb-dump --single-transaction --master-data=1`` (and its GTID
form, ``--gtid``) run against fakemaster serving a scenario, loaded into a real MariaDB 10.11,
which then replicates from fakemaster from the dumped coordinates: its tables end equal to the
oracle's after the last transaction.

The scenario is served live: half of its transactions are in the binlog when the dump starts,
the rest released afterwards. In the ``during`` variant, transactions keep arriving while the
dump runs: the served store releases two more right after each snapshot point is taken (the
consistent snapshot of ``START TRANSACTION WITH CONSISTENT SNAPSHOT`` among them) and one at each
``BINLOG_GTID_POS()`` the dump asks, so the dump's rows and coordinates must describe the same
instant for the replica to end right (deterministic: it is the dump's own statements that
release them, no timing involved). Without ``--single-transaction`` the dump reads under FLUSH
TABLES WITH READ LOCK, which holds those releases back until its connection ends.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Iterator

import pytest

from fakemaster.config.accounts import REPLICATION_PRIVILEGES, Account, Privilege
from fakemaster.config.server_config import ServerConfig
from fakemaster.server.master import BackgroundFakeMaster
from scenarios.catalogue import ScenarioSnapshot
from scenarios.history import Scenario
from scenarios.library import build
from scenarios.live import ScenarioStore
from scenarios.serving import scenario_variables
from scenarios.sql import quote_name
from tests.fakemaster.server.test_server import wait_for
from tests.peers.fixtures import require_mariadb
from tests.peers.mariadb import MariaDBServer
from tests.peers.policy import require_peer
from tests.support.replica_tables import compare_with_oracle
from tests.support.streams import wait_caught_up, wait_for_replica

pytestmark = pytest.mark.mariadb

USER, PASSWORD = "dumper", "pw"
REPLICA_SERVER_ID = 50  # none of the scenarios' server ids


class ArrivingStore(ScenarioStore):
    """A scenario store whose transactions keep arriving while a dump reads it: two are
    released right after each snapshot point, one at each BINLOG_GTID_POS()."""

    held = 0  # releases asked while a read lock held them back

    def release(self, count: int = 1) -> int:
        if self.hold():
            self.held += 1
        return super().release(count)

    def snapshot_point(self) -> tuple[ScenarioSnapshot, tuple[str, int], str]:
        point = super().snapshot_point()
        self.release(2)
        return point

    def binlog_gtid_pos(self, file_name: str, position: int) -> str | None:
        answer = super().binlog_gtid_pos(file_name, position)
        self.release(1)
        return answer


@pytest.fixture(scope="module")
def replica() -> Iterator[MariaDBServer]:
    require_mariadb()
    instance = MariaDBServer(server_id=REPLICA_SERVER_ID)
    try:
        yield instance.start()
    finally:
        instance.close()


def _served_config(scenario: Scenario) -> ServerConfig:
    told = scenario_variables(scenario.settings)
    variables = {
        k: v for k, v in told.items() if k not in ("server_id", "version", "binlog_checksum")
    }
    # What mariadb-dump --master-data and a replica need: SELECT, RELOAD, LOCK TABLES, SHOW
    # VIEW, REPLICATION SLAVE and BINLOG MONITOR.
    account = Account(
        user=USER,
        password=PASSWORD,
        privileges=Privilege.SELECT
        | Privilege.RELOAD
        | Privilege.LOCK_TABLES
        | Privilege.SHOW_VIEW
        | REPLICATION_PRIVILEGES,
    )
    return ServerConfig(
        user=USER,
        password=PASSWORD,
        accounts=(account,),
        variables=variables,
        gtid_domain_id=scenario.settings.gtid_domain_id,
    )


def _run(command: list[str], data: bytes | None = None) -> bytes:
    done = subprocess.run(command, input=data, capture_output=True, timeout=300, check=False)
    assert done.returncode == 0, f"{command[0]}: {done.stderr.decode(errors='replace')}"
    return done.stdout


def dump_and_replicate(
    replica: MariaDBServer,
    scenario: Scenario,
    *,
    gtid: bool,
    arriving: bool,
    single_transaction: bool = True,
) -> bytes:
    """The dump taken (``--single-transaction``, else under FLUSH TABLES WITH READ LOCK: what
    ``--master-data`` alone does), loaded into ``replica`` which then replicates to the end;
    returns the dump."""
    require_peer(
        "mariadb-dump and mariadb clients", _have_clients(), "apt-get install mariadb-client"
    )
    databases = sorted({table.database for table in scenario.tables.values()})
    replica.execute(["STOP SLAVE", "RESET SLAVE ALL", "SET GLOBAL gtid_slave_pos = ''"])
    replica.execute(
        ["SET SESSION sql_log_bin = 0"]
        + [f"DROP DATABASE IF EXISTS {quote_name(name)}" for name in databases]
    )
    first = len(scenario.transactions) // 2
    kind = ArrivingStore if arriving else ScenarioStore
    store = kind(scenario, released=first)
    with BackgroundFakeMaster(_served_config(scenario), store) as master:
        dump = _run(
            [
                "mariadb-dump",
                f"--host={master.host}",
                f"--port={master.port}",
                f"--user={USER}",
                f"--password={PASSWORD}",
                *(["--single-transaction"] if single_transaction else []),
                "--master-data=1",
                *(["--gtid"] if gtid else []),
                "--databases",
                *databases,
            ]
        )
        if arriving and single_transaction:
            # The dump's coordinates are those of its snapshot, before what arrived during it.
            assert store.released > first
        if arriving and not single_transaction:
            # Held back by the dump's read lock (released when its connection ended).
            assert isinstance(store, ArrivingStore) and store.held > 0
        master.release_all()
        load_and_replicate(replica, master, store, dump, gtid)
    compare_with_oracle(replica, scenario)
    return dump


def load_and_replicate(
    replica: MariaDBServer,
    master: BackgroundFakeMaster,
    store: ScenarioStore,
    dump: bytes,
    gtid: bool,
    log_file: str | None = None,
    log_pos: int | None = None,
) -> None:
    """Point ``replica`` at ``master`` (from the dump's coordinates, or ``log_file``/``log_pos``
    when given), load ``dump`` into it, replicate until it executed everything ``store`` serves,
    and stop it."""
    replica.change_master(
        master.host,
        master.port,
        USER,
        PASSWORD,
        use_gtid="slave_pos" if gtid else "no",
        log_file=log_file,
        log_pos=log_pos,
    )
    _run(
        ["mariadb", f"--host={replica.host}", f"--port={replica.port}", "--user=root"],
        b"SET SESSION sql_log_bin = 0;\n" + dump,
    )
    replica.execute("START SLAVE")
    end = store.master_status()
    wait_for_replica(
        replica,
        lambda: (
            ((s := replica.slave_status())["Relay_Master_Log_File"], s["Exec_Master_Log_Pos"])
            == end
        ),
        f"replica at {end}",
        master=master,
    )
    if gtid:
        wait_caught_up(replica, store.gtid_binlog_pos(), master=master)
    replica.execute("STOP SLAVE")
    assert master.errors == []


def _have_clients() -> bool:
    import shutil

    return shutil.which("mariadb-dump") is not None and shutil.which("mariadb") is not None


SCENARIOS = [
    "every_type",
    "primary_key_updates",
    "no_key_duplicates",
    "multi_domain",
    "rotation_storm",
    "minimal_image",
    "compressed",
    "many_tables",
]


@pytest.mark.parametrize("gtid", [False, True], ids=["file_pos", "gtid"])
@pytest.mark.parametrize("name", SCENARIOS)
def test_a_replica_seeded_by_mariadb_dump_of_fakemaster_ends_with_the_oracles_tables(
    replica: MariaDBServer, name: str, gtid: bool
) -> None:
    scenario = build(name)
    dump = dump_and_replicate(replica, scenario, gtid=gtid, arriving=False)
    if gtid:
        assert re.search(rb"^SET GLOBAL gtid_slave_pos='[0-9,-]+';$", dump, re.M)
    else:
        assert re.search(
            rb"^CHANGE MASTER TO MASTER_LOG_FILE='[^']+', MASTER_LOG_POS=\d+;$", dump, re.M
        )


@pytest.mark.parametrize("single", [True, False], ids=["single_transaction", "read_lock"])
@pytest.mark.parametrize("gtid", [False, True], ids=["file_pos", "gtid"])
@pytest.mark.parametrize("name", ["every_type", "primary_key_updates", "multi_domain"])
def test_transactions_arriving_during_the_dump_reach_the_replica_by_replication(
    replica: MariaDBServer, name: str, gtid: bool, single: bool
) -> None:
    dump_and_replicate(replica, build(name), gtid=gtid, arriving=True, single_transaction=single)


@pytest.mark.parametrize("gtid", [False, True], ids=["file_pos", "gtid"])
@pytest.mark.parametrize(("name", "rate"), [("many_tables", "100"), ("rotation_storm", "50")])
def test_a_dump_of_serve_live_seeds_a_replica_that_ends_with_the_oracles_tables(
    replica: MariaDBServer, gtid: bool, name: str, rate: str
) -> None:
    """``serve --scenario NAME --live RATE``: the dump runs while transactions are released at
    a rate (wherever its snapshot falls, the replica must end right)."""
    from scenarios.compiler import to_store
    from tests.fakemaster.cli.test_serve_cli import serve

    require_peer(
        "mariadb-dump and mariadb clients", _have_clients(), "apt-get install mariadb-client"
    )
    scenario = build(name)
    databases = sorted({table.database for table in scenario.tables.values()})
    replica.execute(["STOP SLAVE", "RESET SLAVE ALL", "SET GLOBAL gtid_slave_pos = ''"])
    replica.execute(
        ["SET SESSION sql_log_bin = 0"]
        + [f"DROP DATABASE IF EXISTS {quote_name(name)}" for name in databases]
    )
    final = to_store(scenario)
    with serve("--scenario", name, "--live", rate) as served:
        dump = _run(
            [
                "mariadb-dump",
                f"--host={served.host}",
                f"--port={served.port}",
                "--user=root",
                "--single-transaction",
                "--master-data=1",
                *(["--gtid"] if gtid else []),
                "--databases",
                *databases,
            ]
        )
        replica.change_master(
            served.host, served.port, "root", "", use_gtid="slave_pos" if gtid else "no"
        )
        _run(
            ["mariadb", f"--host={replica.host}", f"--port={replica.port}", "--user=root"],
            b"SET SESSION sql_log_bin = 0;\n" + dump,
        )
        replica.execute("START SLAVE")
        end = final.master_status()  # the served binlog once every transaction is released
        wait_for_replica(
            replica,
            lambda: (
                ((s := replica.slave_status())["Relay_Master_Log_File"], s["Exec_Master_Log_Pos"])
                == end
            ),
            f"replica at {end}",
            timeout=120,
        )
        replica.execute("STOP SLAVE")
    compare_with_oracle(replica, scenario)


# --all-databases: (mariadb-dump options, transactions keep arriving during the dump). The
# coordinates come from the dump itself (--master-data=1: its CHANGE MASTER / SET GLOBAL
# gtid_slave_pos; --master-data=2: the commented CHANGE MASTER, given to the replica), or, for a
# plain dump (LOCK TABLES per database, no coordinates), from SHOW MASTER STATUS of a primary
# where nothing arrives.
ALL_DATABASES_MODES = {
    "single_transaction_gtid": (["--single-transaction", "--master-data=1", "--gtid"], True),
    "read_lock_file_pos": (["--master-data=1"], True),
    "commented_file_pos": (["--master-data=2"], False),
    "plain_lock_tables": ([], False),
    # --events and --routines: SHOW EVENTS and SHOW ... STATUS (nothing to dump), and the LOCK
    # TABLES mysql.event / mysql.proc a plain dump takes around them (1146 here, ignored).
    "plain_events_routines": (["--events", "--routines"], False),
    "single_transaction_events_routines": (
        ["--single-transaction", "--master-data=1", "--events", "--routines"],
        False,
    ),
}


@pytest.mark.parametrize("mode", sorted(ALL_DATABASES_MODES))
@pytest.mark.parametrize("name", ["every_type", "many_tables"])
def test_an_all_databases_dump_seeds_a_replica_that_ends_with_the_oracles_tables(
    replica: MariaDBServer, name: str, mode: str
) -> None:
    """``mariadb-dump --all-databases``: the ``mysql`` database comes with it (the structure of
    its log tables, which mariadb-dump always reads), loads into a real server, and the replica
    started from the dump's coordinates ends with the oracle's tables."""
    require_peer(
        "mariadb-dump and mariadb clients", _have_clients(), "apt-get install mariadb-client"
    )
    options, arriving = ALL_DATABASES_MODES[mode]
    gtid = "--gtid" in options
    scenario = build(name)
    databases = sorted({table.database for table in scenario.tables.values()})
    replica.execute(["STOP SLAVE", "RESET SLAVE ALL", "SET GLOBAL gtid_slave_pos = ''"])
    replica.execute(
        ["SET SESSION sql_log_bin = 0"]
        + [f"DROP DATABASE IF EXISTS {quote_name(db)}" for db in databases]
    )
    first = len(scenario.transactions) // 2
    store = (ArrivingStore if arriving else ScenarioStore)(scenario, released=first)
    with BackgroundFakeMaster(_served_config(scenario), store) as master:
        before = store.master_status()
        dump = _run(
            [
                "mariadb-dump",
                f"--host={master.host}",
                f"--port={master.port}",
                f"--user={USER}",
                f"--password={PASSWORD}",
                *options,
                "--all-databases",
            ]
        )
        # Every database SHOW DATABASES lists (sorted) but the system ones mariadb-dump skips.
        dumped = re.findall(rb"^-- Current Database: `([^`]+)`$", dump, re.M)
        assert dumped == sorted(db.encode() for db in ["mysql", *databases])
        mysql_part = dump.split(b"-- Current Database: `mysql`")[1].split(b"-- Current Database")[0]
        assert re.findall(rb"^CREATE TABLE IF NOT EXISTS `(\w+)`", mysql_part, re.M) == [
            b"general_log",
            b"slow_log",
        ]
        assert b"INSERT INTO" not in mysql_part
        if arriving and "--single-transaction" in options:
            assert store.released > first  # arrived during the dump, after its snapshot
        elif arriving:
            # Held back by the dump's read lock, released when its connection has ended.
            assert isinstance(store, ArrivingStore) and store.held > 0
            server = master.master
            assert server is not None
            wait_for(lambda: server.connection_count == 0)
            assert store.released > first
        else:
            assert store.master_status() == before
        master.release_all()
        log_file: str | None = None
        log_pos: int | None = None
        if "--master-data=2" in options:
            found = re.search(
                rb"^-- CHANGE MASTER TO MASTER_LOG_FILE='([^']+)', MASTER_LOG_POS=(\d+);$",
                dump,
                re.M,
            )
            assert found is not None
            log_file, log_pos = found.group(1).decode(), int(found.group(2))
        elif not any(option.startswith("--master-data") for option in options):
            assert b"CHANGE MASTER" not in dump
            log_file, log_pos = before
        load_and_replicate(replica, master, store, dump, gtid, log_file, log_pos)
    compare_with_oracle(replica, scenario)
