"""Issue #21, must-show 1: snapshot, backup and audit tools nobody on the project wrote, run with
identical options against fakemaster serving a scenario and against a real MariaDB 10.11 holding
the same tables (the scenario's SQL: its CREATE TABLEs, rows and transactions), comparing exit
codes, what they print and every file they write.

One real server and one fake serve the whole module. The real server runs with a stock 10.11's
durability settings (the harness turns doublewrite and per-commit flushing off for speed; the fake
answers a stock server's values, and pt-variable-advisor judges exactly those) and has its index
statistics recomputed once loaded (``ANALYZE TABLE``: InnoDB updates them in the background, so
without it the Cardinality the real server shows would depend on timing).

What a comparison masks, each because two servers however alike differ in it, never in the
data or the statements' answers:

* dates and times a tool or server writes about the run (``Started dump at``, ``Dump completed``,
  Create_time/Update_time, mydumper's log prefix), and mydumper's process id in its warnings;
* the server's own description: version string and comment, host, port, uptime;
* binlog coordinates and GTID positions (the real server's binlog holds its own start-up, the
  fake serves the scenario's: both are checked elsewhere, here only their presence).

Both servers have the same accounts (:data:`ACCOUNTS`): the real server's own root accounts
(one per local host name, which differ from machine to machine) are replaced by the fake's
``root@'%'``. Its ``mariadb.sys@localhost`` (the definer of the ``mysql.user`` view, which
cannot log in) stays: the fake has no such account, so pt-show-grants is told to ignore it.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

from fakemaster.config.account_spec import parse_account
from fakemaster.config.server_config import ServerConfig
from fakemaster.server.master import BackgroundFakeMaster
from scenarios.builder import column, table
from scenarios.history import Scenario
from scenarios.live import ScenarioStore
from scenarios.script import setup_sql, step_sql
from scenarios.sql import SESSION_SETUP
from tests.peers.fixtures import require_mariadb
from tests.peers.mariadb import MariaDBServer
from tests.peers.policy import require_peer
from tests.support.snapshot_statements import keyed
from tests.support.wire import RawClient

pytestmark = pytest.mark.mariadb

SERVER_ID = 1  # the server id the scenario's binlog is written with
DATABASE = "keys"
HOW_TO_INSTALL_TOOLS = "apt-get install -y mydumper percona-toolkit (scripts/install-deps.sh)"


def tools_scenario() -> Scenario:
    """The keyed tables, a table big enough for mydumper to cut into chunks, keys a
    duplicate-key checker must report (a unique key repeating the primary key's column), and a
    key prefix with 9 distinct values among 60 rows (InnoDB shows its Cardinality as 20)."""
    scenario = keyed()
    scenario.create_table(
        table(
            f"{DATABASE}.many",
            column("id", "INT", null=False),
            column("code", "VARCHAR(8)", null=False),
            column("n", "BIGINT"),
            column("grp", "INT", null=False),
            column("doc", "JSON"),  # its json_valid CHECK makes the table's frm Version 11
            primary_key=("id",),
            unique=(("id", "code"), ("code",), ("grp", "id")),
        ),
        [
            {"id": i * 3, "code": f"c{i:03}", "n": i * i - 50, "grp": i % 9, "doc": f'{{"i": {i}}}'}
            for i in range(1, 61)
        ],
    )
    scenario.delete(f"{DATABASE}.many", {"id": 30})
    scenario.insert(f"{DATABASE}.many", {"id": 1000, "code": "last", "n": None, "grp": 3})
    return scenario


# Accounts both servers have besides root@'%' (ALL PRIVILEGES WITH GRANT OPTION): a CDC account
# with the documented grants and a database grant, in the fake's form and as the real server's SQL.
ACCOUNTS = [
    "cdc@%:cdc-pw:SELECT, RELOAD, SHOW DATABASES, REPLICATION SLAVE, BINLOG MONITOR;"
    f" SELECT, LOCK TABLES ON {DATABASE}.*"
]
ACCOUNTS_SQL = [
    "CREATE USER 'root'@'%'",
    "GRANT ALL PRIVILEGES ON *.* TO 'root'@'%' WITH GRANT OPTION",
    "CREATE USER 'cdc'@'%' IDENTIFIED BY 'cdc-pw'",
    "GRANT SELECT, RELOAD, SHOW DATABASES, REPLICATION SLAVE, BINLOG MONITOR ON *.* TO 'cdc'@'%'",
    f"GRANT SELECT, LOCK TABLES ON `{DATABASE}`.* TO 'cdc'@'%'",
]


def _same_accounts(real: MariaDBServer) -> None:
    """The real server's accounts made the fake's: :data:`ACCOUNTS_SQL`, and no root but
    root@'%' (the session doing it logs in as one of those it drops, which it may)."""
    real.execute(["SET SESSION sql_log_bin = 0", *ACCOUNTS_SQL])
    hosts = real.execute("SELECT Host FROM mysql.user WHERE User = 'root' AND Host <> '%'")
    real.execute(
        ["SET SESSION sql_log_bin = 0"] + [f"DROP USER 'root'@'{host}'" for (host,) in hosts]
    )


@dataclass(frozen=True)
class Pair:
    real: MariaDBServer
    fake_port: int


@pytest.fixture(scope="module")
def pair() -> Iterator[Pair]:
    require_mariadb()
    with serving() as both:
        yield both


@contextmanager
def serving() -> Iterator[Pair]:
    """A real server loaded with :func:`tools_scenario` and a fake serving it."""
    scenario = tools_scenario()
    real = MariaDBServer(
        {"innodb_doublewrite": "ON", "innodb_flush_log_at_trx_commit": 1}, server_id=SERVER_ID
    )
    try:
        real.start()
        tables = sorted({f"`{t.database}`.`{t.name}`" for t in scenario.tables.values()})
        real.execute(
            [
                "SET SESSION sql_log_bin = 0",
                *SESSION_SETUP,
                f"DROP DATABASE IF EXISTS `{DATABASE}`",
                *setup_sql(scenario),
                *(sql for step in scenario.steps for sql in step_sql(step)),
                f"ANALYZE TABLE {', '.join(tables)}",
            ]
        )
        _same_accounts(real)
        config = ServerConfig(
            server_id=SERVER_ID, accounts=tuple(parse_account(text) for text in ACCOUNTS)
        )
        with BackgroundFakeMaster(config, ScenarioStore(scenario)) as master:
            yield Pair(real, master.port)
            assert master.errors == []
    finally:
        real.close()


@dataclass(frozen=True)
class Run:
    returncode: int
    stdout: str
    stderr: str
    files: dict[str, str]


def _run(command: list[str], port: int, out: Path) -> Run:
    """``command`` with ``{port}`` and ``{out}`` filled in; what it printed and wrote."""
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    args = [a.replace("{port}", str(port)).replace("{out}", str(out / "d")) for a in command]
    done = subprocess.run(args, capture_output=True, timeout=120, check=False, cwd=out)
    files = {
        str(path.relative_to(out)): path.read_text(errors="replace")
        for path in sorted(out.rglob("*"))
        if path.is_file()
    }
    # Kept beside the files (not among them) for whoever reads a failure.
    (out.parent / f"{out.name}.stdout").write_bytes(done.stdout)
    (out.parent / f"{out.name}.stderr").write_bytes(done.stderr)
    return Run(done.returncode, done.stdout.decode(errors="replace"), done.stderr.decode(), files)


# (pattern, replacement): see the module's docstring for why each is masked.
_MASKS = [
    # (mariadb-dump pads the hour with a space: "Dump completed on 2026-12-06  1:26:42".)
    (re.compile(r"\d{4}-\d\d-\d\d[ T]+\d{1,2}:\d\d:\d\d(\.\d+)?"), "<time>"),
    (re.compile(r"\d\d-\d\dT\d\d:\d\d:\d\d"), "<time>"),
    (re.compile(r"\(mydumper:\d+\): WARNING \*\*: [\d:.]+"), "(mydumper:<pid>): WARNING **"),
    (re.compile(r"10\.11\.\d+-MariaDB[-\w.+]*"), "<version>"),
    (re.compile(r"^(-- Host: |Host: ).*$", re.M), r"\1<host>"),
    (re.compile(r"127\.0\.0\.1:\d+"), "127.0.0.1:<port>"),
    (re.compile(r"^Uptime .*$", re.M), "Uptime <uptime>"),
    (re.compile(r"(Pos: |MASTER_LOG_POS=)\d+"), r"\1<pos>"),
    (re.compile(r"(Log: |MASTER_LOG_FILE=')mysql-bin\.\d+"), r"\1<file>"),
    (re.compile(r"(GTID:|gtid_slave_pos=')[\d,-]*"), r"\1<gtid>"),
]


def masked(text: str) -> str:
    for pattern, replacement in _MASKS:
        text = pattern.sub(replacement, text)
    return text


def _differential(pair: Pair, command: list[str], tmp_path: Path) -> tuple[Run, Run]:
    want = _run(command, pair.real.port, tmp_path / "real")
    got = _run(command, pair.fake_port, tmp_path / "fake")
    return want, got


def assert_same(want: Run, got: Run) -> None:
    assert got.returncode == want.returncode, (got.stderr, want.stderr)
    assert masked(got.stderr) == masked(want.stderr)
    assert masked(got.stdout) == masked(want.stdout)
    assert sorted(got.files) == sorted(want.files)
    for name, text in want.files.items():
        assert masked(got.files[name]) == masked(text), name


def _require_tool(name: str) -> None:
    require_peer(name, shutil.which(name) is not None, HOW_TO_INSTALL_TOOLS)


# -- mydumper --------------------------------------------------------------------------------

MYDUMPER_MODES = [
    [],
    ["-r", "7"],
    ["-r", "7", "-t", "2"],
    ["-G"],
    ["-R"],
    ["-E"],
    ["--trx-consistency-only"],
    ["-U", "1"],
    ["--less-locking"],
    ["-r", "20", "-G", "-R", "-E", "--less-locking", "-c"],
    ["-m", "-F", "1"],
    ["--use-savepoints", "-k"],
]


@pytest.mark.parametrize("mode", MYDUMPER_MODES, ids=lambda mode: " ".join(mode) or "plain")
def test_mydumper_writes_the_same_files(pair: Pair, mode: list[str], tmp_path: Path) -> None:
    _require_tool("mydumper")
    command = ["mydumper", "-h", "127.0.0.1", "-P", "{port}", "-u", "root"]
    want, got = _differential(pair, [*command, "-B", DATABASE, "-o", "{out}", *mode], tmp_path)
    assert want.returncode == 0, want.stderr
    if "-r" in mode:  # the mode is exercised: the real server's dump of `many` is in chunks
        assert sum(name.startswith("d/keys.many.0") for name in want.files) > 1
    assert_same(want, got)


# -- mariadb-dump ----------------------------------------------------------------------------

MARIADB_DUMP_OPTIONS = [
    ["--default-character-set=utf8"],
    ["--default-character-set=latin1"],
    ["--xml"],
    ["--gtid", "--master-data=2"],
    ["--gtid", "--dump-slave=2"],
    ["--single-transaction", "--gtid", "--master-data=1"],
    ["--routines", "--events", "--triggers", "--hex-blob", "--complete-insert"],
    ["--compact", "--skip-extended-insert", "--order-by-primary"],
]


@pytest.mark.parametrize("options", MARIADB_DUMP_OPTIONS, ids=" ".join)
def test_mariadb_dump_options(pair: Pair, options: list[str], tmp_path: Path) -> None:
    command = ["mariadb-dump", "--host=127.0.0.1", "--port={port}", "--user=root"]
    want, got = _differential(
        pair, [*command, "--protocol=tcp", *options, "--databases", DATABASE], tmp_path
    )
    assert_same(want, got)


# -- percona-toolkit -------------------------------------------------------------------------

DSN = "h=127.0.0.1,P={port},u=root"

PERCONA_TOOLS = [
    ["pt-duplicate-key-checker", DSN, f"--databases={DATABASE}"],
    ["pt-duplicate-key-checker", DSN, f"--databases={DATABASE}", "--no-sql", "--key-types=fk"],
    ["pt-variable-advisor", DSN],
    # Tables by size and rows (SHOW TABLE STATUS). Not --ctime: DATE_SUB(.., INTERVAL ..).
    ["pt-find", "--host=127.0.0.1", "--port={port}", "--user=root", "--dblike", DATABASE]
    + ["--tablesize", "+20k", "--rows", "+1", "--printf", "%D.%N %T %S %A\n"],
    ["pt-slave-find", DSN],
    # The real server's mariadb.sys@localhost is not an account of the fake (module docstring).
    ["pt-show-grants", DSN, "--ignore", "'mariadb.sys'@'localhost'"],
]


# pt-mysql-summary reports on the server as much as on its data: the lines that describe the
# server itself or its history are masked, by label, each for its reason; every other line
# (variables, features, engines, plugins, the replication and binlog settings) must be equal.
SUMMARY_LINES = {
    # When and where: the servers' own description (the module docstring).
    *("System time", "Time", "Hostname", "Version", "Started", "Datadir", "Pidfile"),
    "log_error",
    "max_allowed_packet",  # the harness's option for the real server (SERVERS_OWN_VARIABLES)
    "Total Size",  # of the binlogs: the real server's start-up, the fake's scenario
    "Users",  # the real server's mariadb.sys@localhost is one more (module docstring)
}
_SUMMARY_LINE = re.compile(r"^( *([^|\n]*?)) \| .*$", re.M)
_SECTION = re.compile(r"^# (Report On Port) \d+ #+$", re.M)
# Between two reads of SHOW GLOBAL STATUS: the rates of every counter that moved, which on the
# real server are what its InnoDB, Aria and handlers did while it loaded the tables.
_COUNTERS = re.compile(r"^(# Status Counters .*\n)(?:(?!# ).*\n)*", re.M)


def summary_masked(text: str) -> str:
    def line(match: re.Match[str]) -> str:
        return f"{match.group(1)} | <masked>" if match.group(2) in SUMMARY_LINES else match.group(0)

    text = _COUNTERS.sub(r"\1<counters>\n", text)
    return _SECTION.sub(r"# \1 <port>", _SUMMARY_LINE.sub(line, text))


def test_pt_mysql_summary_reports_the_same_sections_and_settings(
    pair: Pair, tmp_path: Path
) -> None:
    _require_tool("pt-mysql-summary")
    command = ["pt-mysql-summary", "--sleep=1", "--host=127.0.0.1", "--port={port}", "--user=root"]
    want, got = _differential(pair, command, tmp_path)
    assert (got.returncode, got.stderr) == (want.returncode, want.stderr) == (0, "")
    sections = [line for line in want.stdout.splitlines() if line.startswith("# ")]
    assert len(sections) > 20 and "<counters>" in summary_masked(want.stdout)
    assert summary_masked(got.stdout) == summary_masked(want.stdout)


@pytest.mark.parametrize("command", PERCONA_TOOLS, ids=lambda command: command[0])
def test_percona_toolkit(pair: Pair, command: list[str], tmp_path: Path) -> None:
    _require_tool(command[0])
    want, got = _differential(pair, command, tmp_path)
    assert want.returncode == 0, want.stderr
    assert_same(want, got)


# pt-table-checksum's report: TS is the run's time (masked by _MASKS), TIME how long each table
# took on each server.
_CHECKSUM_TIME = re.compile(r"^(<time>(?: +\d+){6}) +\d+\.\d+ ", re.M)
# What it wrote on each server, compared as result sets (column definitions, rows, status).
CHECKSUM_TABLE = [
    "SELECT db, tbl, chunk, chunk_index, lower_boundary, upper_boundary, this_crc, this_cnt,"
    " master_crc, master_cnt FROM percona.checksums ORDER BY db, tbl, chunk",
    "SHOW TABLES FROM `percona` LIKE 'checksums'",
    "SHOW FULL TABLES FROM percona",
    "SHOW CREATE TABLE `percona`.`checksums`",
]


@pytest.mark.parametrize("options", [[], ["--chunk-size=10"]], ids=" ".join)
def test_pt_table_checksum_writes_the_same_checksums(
    pair: Pair, options: list[str], tmp_path: Path
) -> None:
    """The chunks' checksums (CRC32 of CONCAT_WS of every column, BIT_XORed) are the real
    server's, in its report and in the table it writes them to (percona.checksums, which the
    fake keeps out of its served binlog): whole tables, and `many` cut into chunks of its
    primary key (boundaries read with ORDER BY ... LIMIT, ranges planned by EXPLAIN)."""
    _require_tool("pt-table-checksum")
    command = ["pt-table-checksum", DSN, "--no-check-binlog-format", f"--databases={DATABASE}"]
    command += options
    want, got = _differential(pair, command, tmp_path)
    report = _CHECKSUM_TIME.sub(r"\1 <secs> ", masked(want.stdout))
    assert report.count(f" {DATABASE}.") == 3 and " <secs> " in report, want.stdout
    assert (got.returncode, masked(got.stderr)) == (want.returncode, masked(want.stderr))
    assert _CHECKSUM_TIME.sub(r"\1 <secs> ", masked(got.stdout)) == report
    with (
        RawClient(pair.real.host, pair.real.port, "root", "") as real,
        RawClient("127.0.0.1", pair.fake_port, "root", "") as fake,
    ):
        for sql in CHECKSUM_TABLE:
            assert fake.query(sql) == real.query(sql), sql


# Variables pt-config-diff finds different between the two servers, each because the servers
# are two, never because the fake's catalogue is wrong: every other variable both have is equal.
SERVERS_OWN_VARIABLES = {
    # Where each server lives: paths, host name, port, unique id.
    *("datadir", "hostname", "log_bin_basename", "log_bin_index", "log_error", "pid_file"),
    *("secure_file_priv", "socket", "tmpdir", "port", "report_port", "server_uid"),
    # The binlog each holds: the real server's own start-up, the fake's scenario.
    *("gtid_binlog_pos", "gtid_binlog_state", "gtid_current_pos"),
    # The build: Debian's package, the fake's stock description.
    *("version", "version_comment", "version_source_revision", "version_ssl_library"),
    # The test harness's options for a small, fast private server (DEFAULT_OPTIONS); the fake
    # shows a stock server's values (max_allowed_packet: what its served binlog needs).
    *("innodb_buffer_pool_size", "innodb_log_file_size", "max_connections"),
    *("max_allowed_packet", "time_zone"),
}


def test_pt_config_diff_finds_only_what_makes_two_servers_two(pair: Pair) -> None:
    _require_tool("pt-config-diff")
    servers = [DSN.format(port=port) for port in (pair.real.port, pair.fake_port)]
    done = subprocess.run(
        ["pt-config-diff", *servers], capture_output=True, timeout=120, check=False, text=True
    )
    assert (done.returncode, done.stderr) == (1, ""), done.stdout  # 1: there are differences
    table = done.stdout.split("=\n", 1)[1]
    assert {line.split()[0] for line in table.splitlines() if line.strip()} == SERVERS_OWN_VARIABLES


# What the tools above send that a real server answers from its statistics, optimizer and engines,
# compared byte for byte (column definitions, rows, the EOF's status flags, ERR): the plans
# pt-duplicate-key-checker sizes keys with, and the statistics mariadb-dump --xml prints.
ANSWERS = [
    "EXPLAIN SELECT `grp`, `id` FROM `keys`.`many` FORCE INDEX (`grp`) WHERE `grp`=1 OR `id`=1",
    "EXPLAIN SELECT `grp`, `id` FROM `keys`.`many` FORCE INDEX (`grp`) WHERE `id`=1 OR `n`=1",
    "EXPLAIN SELECT `grp`, `id` FROM `keys`.`many` FORCE INDEX (`grp`) WHERE `id`=1 OR `id`=2",
    "EXPLAIN SELECT `code` FROM `keys`.`many` FORCE INDEX (`code`) WHERE `code`=1 OR `code`<>1",
    "EXPLAIN SELECT `n` FROM `keys`.`many` FORCE INDEX (`code`) WHERE `code`=1 OR `code`<>1",
    "EXPLAIN SELECT * FROM `keys`.`many` FORCE INDEX (`PRIMARY`) WHERE `id`=1 OR `id`<>1",
    "EXPLAIN SELECT `grp` FROM `keys`.`many` FORCE INDEX (`GRP`) WHERE 1=`GRP` OR `grp`<>1",
    "EXPLAIN SELECT `grp` FROM `keys`.`many` FORCE INDEX (`grp`)",
    "EXPLAIN SELECT `n` FROM `keys`.`many` USE INDEX (`grp`)",
    "EXPLAIN SELECT `a`, `b` FROM `keys`.`pairs` FORCE KEY (`a`) WHERE `a`=1 OR `b`=1",
    "EXPLAIN SELECT `team`, `nick` FROM people FORCE INDEX (`team`) WHERE `team`=1 OR `nick`=1",
    "EXPLAIN SELECT `state` FROM people FORCE INDEX (`PRIMARY`) WHERE `id`=1 OR `state`=1",
    "EXPLAIN SELECT `nosuch` FROM `keys`.`many` FORCE INDEX (`nokey`) WHERE `grp`=1 OR `n`=1",
    "EXPLAIN SELECT `nosuch` FROM `keys`.`many` FORCE INDEX (`grp`) WHERE `no`=1 OR `n`=1",
    "EXPLAIN SELECT `grp` FROM `keys`.`many` FORCE INDEX (`grp`) WHERE `no`=1 OR `n`=1",
    # pt-mysql-summary asks every engine it knows of for its status.
    "show /*!50000 ENGINE*/ NDB STATUS",
    "SHOW ENGINE MyISAM STATUS",
    "SHOW ENGINE innodb MUTEX",
    "SHOW ENGINE `Aria` STATUS",
    "SHOW ENGINE 'BLACKHOLE' STATUS",
    "SHOW ENGINE MyISAM",
    # pt-mysql-summary looks for keyring and compression plugins.
    "SHOW PLUGINS",
    "SELECT PLUGIN_NAME, PLUGIN_STATUS FROM INFORMATION_SCHEMA.PLUGINS"
    ' WHERE PLUGIN_NAME LIKE "keyring%"',
    "SELECT * FROM information_schema.PLUGINS",
    "SHOW PLUGINS LIKE 'a%'",
    # What pt-table-checksum and pt-kill look at first.
    "SELECT CRC32('test-string')",
    "SELECT CRC32(NULL), CRC32(12), CRC32('é'), crc32(_latin1'é'), CRC32(1.5)",
    "SELECT CRC32(5, 'b'), CRC32(NULL, 'a')",
    "EXPLAIN SELECT * FROM `keys`.`many` WHERE 1=1",
    "EXPLAIN SELECT COUNT(*) AS cnt, COALESCE(LOWER(CONV(BIT_XOR(CAST(CRC32(CONCAT_WS('#', `id`,"
    " convert(`code` using utf8mb4), `n`, `grp`, CRC32(`doc`), CONCAT(ISNULL(`n`), ISNULL(`doc`))))"
    " AS UNSIGNED)), 10, 16)), 0) AS crc FROM `keys`.`many` /*explain checksum table*/",
    "EXPLAIN SELECT COUNT(*) FROM `keys`.`many`",
    # ... and to cut a table into chunks of its key.
    "SELECT /*!40001 SQL_NO_CACHE */ `id` FROM `keys`.`many` FORCE INDEX(`PRIMARY`) ORDER BY `id`"
    " LIMIT 1 /*first lower boundary*/",
    "EXPLAIN SELECT /*!40001 SQL_NO_CACHE */ * FROM `keys`.`many` FORCE INDEX (`PRIMARY`)"
    " WHERE `id` >= '3' /*key_len*/",
    "EXPLAIN SELECT /*!40001 SQL_NO_CACHE */ `id` FROM `keys`.`many` FORCE INDEX(`PRIMARY`)"
    " WHERE ((`id` >= '36')) ORDER BY `id` LIMIT 9, 2 /*next chunk boundary*/",
    "SELECT /*!40001 SQL_NO_CACHE */ `id` FROM `keys`.`many` FORCE INDEX(`PRIMARY`)"
    " WHERE ((`id` >= '36')) ORDER BY `id` LIMIT 9, 2 /*next chunk boundary*/",
    "EXPLAIN SELECT COUNT(*) AS cnt, '0' AS crc FROM `keys`.`many` FORCE INDEX(`PRIMARY`)"
    " WHERE ((`id` >= '36')) AND ((`id` <= '63')) /*explain checksum chunk*/",
    "EXPLAIN SELECT  COUNT(*), '0' FROM `keys`.`many` FORCE INDEX(`PRIMARY`)"
    " WHERE ((`id` > '1000')) ORDER BY `id` /*explain past upper chunk*/",
    "SHOW VARIABLES LIKE 'wsrep_on'",
    'show session variables like "%wsrep_on%"',
    "SHOW GLOBAL STATUS LIKE 'Threads_running'",
    "SHOW INDEX FROM `many`",
    "SHOW INDEX FROM `people`",
    "SELECT TABLE_NAME, VERSION, TABLE_ROWS, AVG_ROW_LENGTH, DATA_LENGTH, INDEX_LENGTH"
    " FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'keys' ORDER BY TABLE_NAME",
    "SELECT INDEX_NAME, SEQ_IN_INDEX, CARDINALITY FROM information_schema.STATISTICS"
    " WHERE TABLE_SCHEMA = 'keys' ORDER BY TABLE_NAME, INDEX_NAME, SEQ_IN_INDEX",
    # The accounts as pt-show-grants and pt-mysql-summary read them (the real server's
    # mariadb.sys aside, see the module docstring).
    "SELECT * FROM mysql.user WHERE User <> 'mariadb.sys'",
    "SELECT DISTINCT User, Host FROM mysql.user WHERE Host = '%' ORDER BY User, Host",
    "SHOW GRANTS FOR 'cdc'@'%'",
    # What pt-mysql-summary computes with: the accounts, the start time, the caches' state.
    'SELECT COUNT(*), SUM(user=""), SUM(password=""), SUM(password NOT LIKE "*%") FROM mysql.user'
    " WHERE User <> 'mariadb.sys'",
    "SELECT LEFT('2020-01-01 00:00:00' - INTERVAL 155 SECOND, 16), LEFT(NULL, 2), LEFT('é', 1)",
    "SELECT NOW() - INTERVAL 1 DAY > '2000-01-01', '2020-01-01' + INTERVAL 1 WEEK",
    "SHOW GLOBAL STATUS LIKE 'Qcache%'",
    "SHOW /*!50000 GLOBAL */ STATUS LIKE 'Innodb_page_size'",
    "SHOW STATUS WHERE Variable_name IN ('Delayed_writes', 'Ssl_accepts', 'Com_xa_start')",
    # Last: every statement above counted in its Com_* counter of this session, as the server
    # counts it (a statement failing while it is parsed counts in none).
    "SHOW STATUS LIKE 'Com\\_%'",
    "SHOW SESSION STATUS LIKE 'Questions'",
]


def test_plans_and_statistics_answer_as_the_real_server(pair: Pair) -> None:
    with (
        RawClient(pair.real.host, pair.real.port, "root", "", database=DATABASE) as want,
        RawClient("127.0.0.1", pair.fake_port, "root", "", database=DATABASE) as got,
    ):
        differences = [sql for sql in ANSWERS if got.query(sql) != want.query(sql)]
    assert differences == []


def _dump_threads(client: RawClient) -> int:
    return sum(b"Binlog Dump" in payload for payload in client.query("SHOW PROCESSLIST"))


def test_a_replicas_dump_is_a_running_thread(pair: Pair) -> None:
    """Threads_running counts the asking connection and every dump, on both servers."""
    readers = [
        subprocess.Popen(
            ["mariadb-binlog", "--read-from-remote-server", "--stop-never", "--host=127.0.0.1"]
            + [f"--port={port}", "--user=root", "mysql-bin.000001"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        for port in (pair.real.port, pair.fake_port)
    ]
    try:
        with (
            RawClient(pair.real.host, pair.real.port, "root", "") as want,
            RawClient("127.0.0.1", pair.fake_port, "root", "") as got,
        ):
            for client in (want, got):  # until the reader's dump is listed (it logs in first)
                while _dump_threads(client) == 0:
                    assert all(reader.poll() is None for reader in readers)
                    time.sleep(0.05)  # a pause between polls, not a deadline
            sql = "SHOW GLOBAL STATUS LIKE 'Threads_running'"
            assert got.query(sql) == want.query(sql)
            assert b"2" in want.query(sql)[-2]
    finally:
        for reader in readers:
            reader.kill()
            reader.wait()


def test_masks_leave_data_alone() -> None:
    """A dump's rows and a tool's findings survive the masks: only what the docstring names goes."""
    line = "INSERT INTO `many` VALUES (3,'c001',-49),(1000,'last',NULL);"
    assert masked(line) == line
    assert masked("Pos: 877\n") == "Pos: <pos>\n"
    assert masked("-- Dump completed on 2026-12-06  1:26:42") == "-- Dump completed on <time>"
    assert os.linesep not in masked("-- Host: 127.0.0.1    Database: keys")
