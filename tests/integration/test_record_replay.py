"""Record and replay (issue 9, must-show 4): ``python -m fakemaster record`` against a real
MariaDB 10.11 primary that ran the codec workload (tests/peers/workload.py: every column type,
DDL, XA, statement-based DML, LOAD DATA, a rotation), then ``python -m fakemaster serve
--binlog-dir`` of the recording (its replay file found there):

* the recorded files are the primary's files, byte for byte (the one it is still writing with
  its IN_USE flag), and the index lists them;
* the replay answers as the primary does: the handshake's version, ``@@version``,
  ``@@server_id``, ``@@gtid_domain_id``, ``@@sql_mode``..., and ``@@gtid_binlog_pos``;
* a real MariaDB replica of the replay ends with the primary's tables, row for row;
* ``mariadb-binlog --raw`` gets the same bytes from the replay as from the primary, and those
  are the primary's files (the file being written with IN_USE clear, as a primary sends it).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from fakemaster.faults import Fault, FaultKind, Point, PointKind, Where
from fakemaster.faults.proxy import BackgroundFaultProxy
from fakemaster.record.recorder import RecordOptions, record
from tests.integration.test_served_real_binlogs import compare_with_primary
from tests.peers.fixtures import MariaDBFactory, require_mariadb
from tests.peers.mariadb import MariaDBServer
from tests.peers.policy import require_peer
from tests.peers.workload import WorkloadResult, run_codec_workload
from tests.support.serve_process import REPO_ROOT, ServeProcess
from tests.support.streams import as_sent, gtid_set, gtid_slave_pos, wait_caught_up

USER, PASSWORD = "repl", "pw"
# What the replay must answer as the primary does (SELECT @@GLOBAL.x on both).
ANSWERED = (
    "version",
    "version_comment",
    "server_id",
    "binlog_checksum",
    "binlog_format",
    "binlog_row_image",
    "gtid_domain_id",
    "gtid_strict_mode",
    "log_slave_updates",
    "character_set_server",
    "collation_server",
    "sql_mode",
    "time_zone",
    "lower_case_table_names",
    "max_allowed_packet",
    "gtid_binlog_pos",
    "gtid_current_pos",
)


@dataclass
class Recording:
    primary: MariaDBServer
    result: WorkloadResult
    directory: Path
    files: dict[str, bytes]  # the primary's binlog files once the recording ended
    output: str


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "fakemaster", *args],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )


# Primary options: the defaults (CRC32), and events without checksums.
VARIANTS = {"default": {}, "checksum_none": {"binlog_checksum": "NONE"}}


@pytest.fixture(scope="module", params=list(VARIANTS))
def recording(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Recording]:
    require_mariadb()
    primary = MariaDBServer(VARIANTS[request.param], server_id=1)
    try:
        primary.start()
        primary.create_replication_user(USER, PASSWORD)
        result = run_codec_workload(primary)
        primary.wait_for_binlog_checkpoint()
        directory = tmp_path_factory.mktemp("recording") / "rec"
        done = run_cli(
            "record", "--host", primary.host, "--port", str(primary.port),
            "--user", USER, "--password", PASSWORD,
            "--out", str(directory),
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        files = {path.name: path.read_bytes() for path in primary.binlog_files()}
        yield Recording(primary, result, directory, files, done.stdout)
    finally:
        primary.close()


@pytest.mark.mariadb
def test_the_recording_holds_the_primarys_files_byte_for_byte(recording: Recording) -> None:
    files = recording.files
    names = list(files)
    assert len(names) >= 2  # the workload rotates
    recorded = sorted(p.name for p in recording.directory.iterdir())
    assert recorded == sorted([*names, "mysql-bin.index", "fakemaster-replay.json"])
    for name in names:
        assert (recording.directory / name).read_bytes() == files[name], name
    index = (recording.directory / "mysql-bin.index").read_text()
    assert index == "".join(f"./{name}\n" for name in names)
    assert f"recorded {len(names)} binlog file(s)" in recording.output

    replay = json.loads((recording.directory / "fakemaster-replay.json").read_text())
    primary = recording.primary
    assert replay["variables"]["version"] == primary.version()
    assert replay["variables"]["server_id"] == str(primary.server_id)
    assert replay["gtid"]["gtid_binlog_pos"] == recording.result.gtid_binlog_pos
    assert replay["binlog"]["files"] == [{"name": n, "size": len(files[n])} for n in names]
    assert replay["binlog"]["end"]["file"] == names[-1]
    assert replay["binlog"]["end"]["position"] == len(files[names[-1]])
    assert gtid_set(replay["binlog"]["end"]["gtids"]) == gtid_set(recording.result.gtid_binlog_pos)
    assert [(f["name"], f["size"]) for f in replay["binary_logs_at_start"]] == [
        (n, len(files[n])) for n in names
    ]


@pytest.fixture
def replay(recording: Recording, tmp_path: Path) -> Iterator[ServeProcess]:
    served = ServeProcess(recording.directory, tmp_path / "serve.stderr", USER, PASSWORD)
    try:
        yield served
    finally:
        stderr = served.stop()
        assert "replay:" not in stderr, stderr  # nothing recorded was contradicted


def answers(host: str, port: int, user: str, password: str) -> dict[str, object]:
    import pymysql

    conn = pymysql.connect(host=host, port=port, user=user, password=password)
    try:
        with conn.cursor() as cursor:
            cursor.execute("SELECT " + ", ".join(f"@@GLOBAL.{name}" for name in ANSWERED))
            row = cursor.fetchone()
            assert row is not None
            cursor.execute("SHOW VARIABLES LIKE 'SERVER_ID'")
            show = cursor.fetchone()
        found: dict[str, object] = dict(zip(ANSWERED, row, strict=True))
        found["SHOW VARIABLES LIKE 'SERVER_ID'"] = show
        found["handshake"] = conn.get_server_info()
        return found
    finally:
        conn.close()


@pytest.mark.mariadb
def test_the_replay_answers_as_the_primary_did(recording: Recording, replay: ServeProcess) -> None:
    primary = recording.primary
    expected = answers(primary.host, primary.port, USER, PASSWORD)
    got = answers("127.0.0.1", replay.port, USER, PASSWORD)
    assert got == expected


@pytest.mark.mariadb
def test_a_real_replica_of_the_replay_ends_with_the_primarys_tables(
    recording: Recording, replay: ServeProcess, mariadb_factory: MariaDBFactory
) -> None:
    expected = recording.result
    replica = mariadb_factory(server_id=2)
    replica.change_master("127.0.0.1", replay.port, USER, PASSWORD, use_gtid="slave_pos")
    replica.execute("START SLAVE")
    wait_caught_up(replica, expected.gtid_binlog_pos)
    status = replica.slave_status()
    assert status["Master_Log_File"] == list(recording.files)[-1]
    assert status["Read_Master_Log_Pos"] == len(recording.files[status["Master_Log_File"]])
    compare_with_primary(replica, expected)
    assert gtid_set(gtid_slave_pos(replica)) == gtid_set(expected.gtid_binlog_pos)


def fetch_raw(host: str, port: int, first: str, directory: Path) -> dict[str, bytes]:
    tool = shutil.which("mariadb-binlog") or shutil.which("mysqlbinlog")
    require_peer("mariadb-binlog", tool is not None, "apt-get install mariadb-client")
    assert tool is not None
    directory.mkdir()
    done = subprocess.run(
        [
            tool,
            "--read-from-remote-server",
            f"--host={host}",
            f"--port={port}",
            f"--user={USER}",
            f"--password={PASSWORD}",
            "--raw",
            f"--result-file={directory}/",
            "--to-last-log",
            first,
        ],
        capture_output=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr.decode(errors="replace")
    return {path.name: path.read_bytes() for path in sorted(directory.iterdir())}


@pytest.mark.mariadb
def test_mariadb_binlog_raw_gets_the_same_bytes_from_the_replay(
    recording: Recording, replay: ServeProcess, tmp_path: Path
) -> None:
    files = recording.files
    names = list(files)
    primary = recording.primary
    from_primary = fetch_raw(primary.host, primary.port, names[0], tmp_path / "primary")
    from_replay = fetch_raw("127.0.0.1", replay.port, names[0], tmp_path / "replay")
    assert list(from_replay) == names
    assert from_replay == from_primary
    # The primary's files as it sends them: the one it is writing with IN_USE clear.
    assert from_replay == {n: as_sent(files[n]) if n == names[-1] else files[n] for n in names}
    assert from_replay[names[-1]] != files[names[-1]]  # the flag is set in the file itself


@pytest.mark.mariadb
def test_without_its_replay_file_the_recording_answers_otherwise(
    recording: Recording, tmp_path: Path
) -> None:
    """The same files served without the replay file answer with the fake master's defaults
    where the files cannot tell (so the replay is what made them equal above); with the replay
    file given by --replay, edited to contradict the files, the files' values are served and
    stderr says which recorded value was not."""
    primary = recording.primary
    expected = answers(primary.host, primary.port, USER, PASSWORD)
    bare = tmp_path / "bare"
    bare.mkdir()
    for name in [*recording.files, "mysql-bin.index"]:
        shutil.copyfile(recording.directory / name, bare / name)
    served = ServeProcess(bare, tmp_path / "bare.stderr", USER, PASSWORD)
    try:
        got = answers("127.0.0.1", served.port, USER, PASSWORD)
    finally:
        served.stop()
    differ = {name for name in expected if got[name] != expected[name]}
    assert differ and differ <= {"version_comment", "time_zone", "sql_mode", "max_allowed_packet"}

    edited = json.loads((recording.directory / "fakemaster-replay.json").read_text())
    edited["variables"]["server_id"] = "99"
    replay_file = tmp_path / "edited.json"
    replay_file.write_text(json.dumps(edited))
    served = ServeProcess(
        bare, tmp_path / "edited.stderr", USER, PASSWORD, "--replay", str(replay_file)
    )
    try:
        got = answers("127.0.0.1", served.port, USER, PASSWORD)
    finally:
        stderr = served.stop()
    assert got == expected
    assert (
        f"replay: server_id: the replay file says 99, the served binlog says {primary.server_id}"
        in stderr
    )


@pytest.mark.mariadb
def test_a_recording_through_wire_faults_holds_the_same_files(
    recording: Recording, tmp_path: Path
) -> None:
    """Cut mid-transaction (RST), then 100 bytes into a dump: the recorder resumes after the
    last whole group each time and ends with the primary's files all the same."""
    primary = recording.primary
    plan = [
        Fault(
            FaultKind.CUT,
            Point(PointKind.TRANSACTION, 5, Where.INSIDE, 2),
            session=0,
            params={"close": "rst"},
        ),
        Fault(FaultKind.CUT, Point(PointKind.BYTE, 100), session=1),
    ]
    with BackgroundFaultProxy((primary.host, primary.port), plan) as proxy:
        out = tmp_path / "rec"
        summary = record(RecordOptions(proxy.host, proxy.port, out, USER, PASSWORD))
        applied = [a.fault for engine in proxy.engines for a in engine.applied]
    assert applied == plan
    assert summary.connections == 3
    for name, data in recording.files.items():
        assert (out / name).read_bytes() == data, name
