"""``python -m fakemaster record`` against the fake master (in process): the files it serves
recorded byte for byte, the stop rules, resuming through wire faults, and what ``serve`` takes
from a replay file (the served bytes win over it, options win over it)."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from fakemaster.cli import main
from fakemaster.config.server_config import ServerConfig
from fakemaster.faults import Fault, FaultKind, Point, PointKind, Where
from fakemaster.faults.proxy import BackgroundFaultProxy
from fakemaster.record.query import QueryConnection
from fakemaster.record.rebuild import RecordError
from fakemaster.record.recorder import RecordOptions, StopRule, record
from fakemaster.record.replay import Replay, replay_settings
from fakemaster.server.master import BackgroundFakeMaster
from fakemaster.store import MemoryBinlogStore
from fakemaster.store.directory import INCOMPLETE_MARKER, DirectoryBinlogStore, IncompleteRecording
from fakemaster.vocabulary.constants import EventType
from fakemaster.vocabulary.events import QueryEvent, XidEvent
from fakemaster.vocabulary.header import TYPE_CODE_OFFSET
from tests.fakemaster.cli.test_serve_cli import serve
from tests.fakemaster.record.test_record_rebuild import build_store, events_of, files_of

USER, PASSWORD = "repl", "pw"


@pytest.fixture
def served() -> Iterator[tuple[MemoryBinlogStore, BackgroundFakeMaster]]:
    store = build_store()
    with BackgroundFakeMaster(ServerConfig(user=USER, password=PASSWORD), store) as master:
        yield store, master
        assert master.errors == []


def recorded(directory: Path) -> dict[str, bytes]:
    index = (directory / "mysql-bin.index").read_text().split()
    return {line.removeprefix("./"): (directory / line).read_bytes() for line in index}


def test_record_writes_the_served_files_their_index_and_the_replay_file(
    served: tuple[MemoryBinlogStore, BackgroundFakeMaster],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    store, master = served
    out = tmp_path / "rec"
    argv = ["record", "--host", master.host, "--port", str(master.port), "--user", USER]
    assert main([*argv, "--password", PASSWORD, "--out", str(out)]) == 0
    files = files_of(store)
    assert recorded(out) == files
    printed = capsys.readouterr().out
    assert f"recorded {len(files)} binlog file(s)" in printed
    replay = json.loads((out / "fakemaster-replay.json").read_text())
    assert replay["handshake"]["server_version"] == "5.5.5-" + store.server_version
    assert replay["variables"]["server_id"] == "7"
    assert replay["gtid"]["gtid_binlog_pos"] == store.gtid_binlog_pos()
    assert replay["binlog"]["end"] == {
        "file": store.file_names()[-1],
        "position": store.file_size(store.file_names()[-1]),
        "gtids": store.gtid_binlog_pos(),
        "stopped_by": "end of binlog",
    }
    # A second recording into the same directory is refused; nothing is overwritten.
    assert main([*argv, "--password", PASSWORD, "--out", str(out)]) == 1
    assert "holds a recording" in capsys.readouterr().err
    assert recorded(out) == files


def group_bounds(data: bytes, seq_no: int) -> tuple[int, int]:
    """The end offsets of the GTID event of transaction ``seq_no`` and of its XID."""
    gtid_end = None
    for offset, event in events_of(data):
        kind = event[TYPE_CODE_OFFSET]
        if kind == EventType.GTID and int.from_bytes(event[19:27], "little") == seq_no:
            gtid_end = offset + len(event)
        elif kind == EventType.XID and gtid_end is not None:
            return gtid_end, offset + len(event)
    raise AssertionError(f"no transaction {seq_no}")


@pytest.mark.parametrize("how", ["gtid", "file_pos"])
def test_stop_at_ends_the_recording_after_a_whole_group(
    how: str, served: tuple[MemoryBinlogStore, BackgroundFakeMaster], tmp_path: Path
) -> None:
    store, master = served
    files = files_of(store)
    first = next(iter(files))
    inside, end = group_bounds(files[first], 3)
    # A position inside group 3 (its GTID event's end) stops after the whole group too.
    stop = StopRule.parse_stop_at("0-7-3" if how == "gtid" else f"{first}:{inside}")
    out = tmp_path / "rec"
    summary = record(RecordOptions(master.host, master.port, out, USER, PASSWORD, stop))
    # The recorded file is the primary's up to there, marked in use (it goes on).
    got = recorded(out)
    assert list(got) == [first]
    assert len(got[first]) == end
    assert got[first][4 + 17] & 0x01
    assert got[first][:21] == files[first][:21]
    assert got[first][22:] == files[first][22:end]
    assert summary.gtids == "0-7-3"
    assert summary.stopped_by.startswith("stop-at")


def test_until_idle_follows_the_binlog_until_nothing_comes(
    served: tuple[MemoryBinlogStore, BackgroundFakeMaster], tmp_path: Path
) -> None:
    store, master = served
    out = tmp_path / "rec"
    stop = StopRule(until_idle=0.5)
    summary = record(RecordOptions(master.host, master.port, out, USER, PASSWORD, stop))
    assert recorded(out) == files_of(store)
    assert summary.stopped_by == "idle for 0.5 s"


def test_a_recording_resumes_through_wire_faults(
    served: tuple[MemoryBinlogStore, BackgroundFakeMaster], tmp_path: Path
) -> None:
    store, master = served
    plan = [
        Fault(FaultKind.CUT, Point(PointKind.TRANSACTION, 1, Where.INSIDE, 2), session=0),
        Fault(
            FaultKind.CORRUPT_CRC,
            Point(PointKind.TRANSACTION, 3, Where.INSIDE, 1),
            session=1,
            params={"target": "body"},
        ),
        Fault(FaultKind.CUT, Point(PointKind.EVENT, 3, Where.INSIDE, 7), session=2),
    ]
    with BackgroundFaultProxy((master.host, master.port), plan) as proxy:
        out = tmp_path / "rec"
        options = RecordOptions(proxy.host, proxy.port, out, USER, PASSWORD)
        summary = record(options)
        applied = [a.fault for engine in proxy.engines for a in engine.applied]
    assert applied == plan
    assert summary.connections == 4
    assert recorded(out) == files_of(store)


def test_the_served_bytes_win_over_the_replay_file_and_options_over_both() -> None:
    store = build_store()
    version = store.server_version
    replay = Replay(
        variables={
            "server_id": "9",  # the files say 7
            "version": version,
            "binlog_checksum": "NONE",  # the files say CRC32
            "sql_mode": "STRICT_TRANS_TABLES",
            "time_zone": "+00:00",
            "max_allowed_packet": "67108864",
            "gtid_domain_id": "3",
            "rpl_semi_sync_master_enabled": "ON",
            "port": "3306",  # a path or port of the recorded machine: not replayed
            "lower_case_table_names": "seven",  # not a value: not served, with a note
        }
    )
    settings = replay_settings(replay, store, given={"time_zone": "SYSTEM"})
    assert settings.variables == {
        "version": version,
        "sql_mode": "STRICT_TRANS_TABLES",
        "max_allowed_packet": 67108864,
        "gtid_domain_id": 3,
    }
    assert settings.fields == {"rpl_semi_sync_master_enabled": True}
    notes = "\n".join(settings.notes)
    assert "server_id: the replay file says 9, the served binlog says 7" in notes
    assert "binlog_checksum: the replay file says NONE, the served binlog says CRC32" in notes
    assert "lower_case_table_names" in notes
    assert len(settings.notes) == 3


def test_a_replay_file_round_trips(tmp_path: Path) -> None:
    replay = Replay(
        upstream="db:3306",
        recorded_at="2026-01-01T00:00:00Z",
        handshake_version="5.5.5-10.11.19-MariaDB-log",
        variables={"server_id": "1"},
        gtid={"gtid_binlog_pos": "0-1-5"},
        binary_logs=[("mysql-bin.000001", 400)],
        basename="mysql-bin",
        files=[("mysql-bin.000001", 400)],
        end={"file": "mysql-bin.000001", "position": 400},
    )
    path = tmp_path / "fakemaster-replay.json"
    replay.save(path)
    assert Replay.load(path) == replay
    assert json.loads(path.read_text())["binlog"]["index"] == "mysql-bin.index"


def test_an_event_of_more_than_16_mib_is_recorded_whole(tmp_path: Path) -> None:
    """Split into several packets by the dump, joined again in the file."""
    store = MemoryBinlogStore(server_id=7)
    big = b"INSERT INTO d.t VALUES ('" + b"x" * (17 << 20) + b"')"
    store.append_transaction(
        [QueryEvent(database="d", query=b"BEGIN"), QueryEvent(database="d", query=big)]
        + [XidEvent(xid=1)]
    )
    with BackgroundFakeMaster(ServerConfig(user=USER, password=PASSWORD), store) as master:
        summary = record(RecordOptions(master.host, master.port, tmp_path / "rec", USER, PASSWORD))
    assert recorded(tmp_path / "rec") == files_of(store)
    assert max(size for _, size in summary.files) > 17 << 20


def test_the_query_session_keeps_refusals_when_told_to(
    served: tuple[MemoryBinlogStore, BackgroundFakeMaster],
) -> None:
    store, master = served
    statements = ["SELECT @@GLOBAL.server_id, @@GLOBAL.gtid_binlog_pos", "SELECT nope()"]
    session = QueryConnection(USER, PASSWORD, statements, tolerate_errors=True)
    with socket.create_connection((master.host, master.port), timeout=10) as sock:
        while not session.done:
            data = sock.recv(1 << 16)
            assert data
            session.feed(data)
            sock.sendall(session.data_to_send())
    first, second = session.results
    assert first.columns == ["@@GLOBAL.server_id", "@@GLOBAL.gtid_binlog_pos"]
    assert first.text_rows() == [("7", store.gtid_binlog_pos())]
    assert first.error is None
    assert second.rows == [] and second.error is not None
    assert second.error.errno == 1305  # ER_SP_DOES_NOT_EXIST: FUNCTION nope does not exist


@pytest.mark.parametrize("text", ["nonsense", "mysql-bin.000001:", ":12", "0-1"])
def test_stop_at_must_be_gtids_or_a_position(
    text: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["record", "--port", "1", "--out", str(tmp_path / "x"), "--stop-at"]
    assert main([*argv, text]) == 1
    assert "--stop-at: expected" in capsys.readouterr().err
    assert not (tmp_path / "x").exists()


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "fakemaster", *args],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=Path(__file__).resolve().parents[3],
    )


def test_record_gives_up_on_an_upstream_failing_at_the_same_point(
    served: tuple[MemoryBinlogStore, BackgroundFakeMaster], tmp_path: Path
) -> None:
    """Every connection is cut inside the same group (the one a resume starts with): the events
    sent again before the cut are no progress; record ends with one error line after
    --max-retries, and leaves a directory serve refuses."""
    _store, master = served
    cut = Fault(FaultKind.CUT, Point(PointKind.TRANSACTION, 0, Where.INSIDE, 2), session=None)
    out = tmp_path / "rec"
    with BackgroundFaultProxy((master.host, master.port), [cut]) as proxy:
        argv = ["record", "--host", proxy.host, "--port", str(proxy.port), "--user", USER]
        result = _cli(*argv, "--password", PASSWORD, "--out", str(out), "--max-retries", "2")
        connections = len(proxy.engines)
    assert result.returncode == 1, result
    errors = result.stderr.splitlines()
    assert len(errors) == 1 and "Traceback" not in result.stderr, result.stderr
    assert errors[0].startswith("error: record: gave up after 3 connections in a row"), errors
    # The queries' connection, then four dumps: the first recorded the file's start (progress),
    # the next three nothing new.
    assert connections == 1 + 4
    assert not (out / "fakemaster-replay.json").exists()
    assert "record stopped without finishing" in (out / INCOMPLETE_MARKER).read_text()
    refused = _cli("serve", "--binlog-dir", str(out), "--port", "0")
    assert refused.returncode == 1
    assert refused.stderr.count("\n") == 1, refused.stderr
    assert "an incomplete recording (record stopped without finishing" in refused.stderr
    assert "--allow-incomplete serves it anyway" in refused.stderr
    with pytest.raises(IncompleteRecording):
        DirectoryBinlogStore(out)
    # Asked for, it is served: the files hold whole groups only.
    with DirectoryBinlogStore(out, allow_incomplete=True) as store:
        assert store.file_names()
    with serve("--binlog-dir", str(out), "--allow-incomplete") as server:
        status, _stdout, stderr = server.stop()
    assert status == 0, stderr


def test_a_finished_recording_leaves_no_marker(
    served: tuple[MemoryBinlogStore, BackgroundFakeMaster], tmp_path: Path
) -> None:
    _store, master = served
    out = tmp_path / "rec"
    record(RecordOptions(master.host, master.port, out, USER, PASSWORD))
    assert not (out / INCOMPLETE_MARKER).exists()
    DirectoryBinlogStore(out).close()


def _store_with_a_gtid_out_of_order() -> MemoryBinlogStore:
    """Seq 1, 2, then 2 again in domain 0: what a GTID corrupted on the way (CRC recomputed by a
    relay) looks like; its CRC is valid, the encoder wrote it."""
    store = MemoryBinlogStore(server_id=7, clock=lambda: 1_700_000_000)
    for seq_no in (1, 2, 2, 3):
        store.append_transaction(
            [QueryEvent(database="d", query=f"CREATE TABLE d.t{seq_no} (id INT)".encode())],
            seq_no=seq_no,
        )
    return store


@pytest.mark.parametrize("strict", [True, False], ids=["strict", "not_strict"])
def test_a_gtid_out_of_order_is_damage_only_under_gtid_strict_mode(
    tmp_path: Path, strict: bool
) -> None:
    """A primary with gtid_strict_mode=ON cannot have binlogged it (ER_GTID_STRICT_OUT_OF_ORDER):
    the recording retries, then gives up naming both GTIDs. Without strict mode the binlog may
    hold it (a real replica applies it), and it is recorded as it is."""
    store = _store_with_a_gtid_out_of_order()
    config = ServerConfig(user=USER, password=PASSWORD, gtid_strict_mode=strict)
    with BackgroundFakeMaster(config, store) as master:
        out = tmp_path / "rec"
        options = RecordOptions(master.host, master.port, out, USER, PASSWORD, max_retries=1)
        if not strict:
            record(options)
            assert recorded(out) == files_of(store)
            return
        with pytest.raises(RecordError, match="gave up after 2 connections") as raised:
            record(options)
    assert "GTID 0-7-2 would create an out-of-order sequence number with existing GTID 0-7-2" in (
        str(raised.value)
    )
    assert (out / INCOMPLETE_MARKER).exists()
    assert not (out / "fakemaster-replay.json").exists()
