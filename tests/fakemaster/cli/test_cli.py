"""The command line: ``dump`` (listing, --json, positions, hexdump), ``build``, and errors."""

from __future__ import annotations

import json
import os
import shutil
import struct
import subprocess
import sys
import zlib
from pathlib import Path

import pytest

from encoder.binlog_file import BinlogWriter
from fakemaster.cli import main
from fakemaster.forms.listing import format_value
from fakemaster.vocabulary.constants import GtidFlag
from fakemaster.vocabulary.events import (
    AnnotateRowsEvent,
    BinlogCheckpointEvent,
    DeleteRowsEvent,
    Event,
    FormatDescriptionEvent,
    Gtid,
    GtidEvent,
    GtidListEvent,
    QueryEvent,
    RotateEvent,
    StatusVar,
    TableMapEvent,
    UnknownEvent,
    UpdateRowsEvent,
    WriteRowsEvent,
    XidEvent,
)
from tests.peers.policy import require_peer
from tests.peers.workload import WorkloadResult

REPO = Path(__file__).resolve().parents[3]
GOLDEN_BINLOGS = REPO / "tests" / "golden" / "binlogs"
WHEN = 1_700_000_000  # 2023-11-14 22:13:20 UTC
WHEN_TEXT = "231114 22:13:20"
CREATE_TABLE = b"create table t (id int primary key, name varchar(10))"
INSERT = b"insert into t values (1, 'abc'), (2, NULL)"


def table_map() -> TableMapEvent:
    return TableMapEvent(
        timestamp=WHEN,
        table_id=18,
        database="d1",
        table="t",
        column_types=(3, 15),
        column_meta=(0, 40),
        nullable=(False, True),
    )


def sample_events() -> list[Event]:
    """A file's worth of events: control, GTIDs, a DDL, and a row transaction of each kind."""
    return [
        FormatDescriptionEvent(timestamp=WHEN, create_timestamp=WHEN),
        GtidListEvent(timestamp=WHEN, gtids=(Gtid(0, 1, 4), Gtid(1, 2, 3))),
        BinlogCheckpointEvent(timestamp=WHEN, file_name="mysql-bin.000001"),
        GtidEvent(timestamp=WHEN, flags=8, seq_no=5, flags2=GtidFlag.STANDALONE | GtidFlag.DDL),
        QueryEvent(
            timestamp=WHEN,
            flags=8,
            thread_id=4,
            database="d1",
            query=CREATE_TABLE,
            status_vars=(
                StatusVar(0, 0),
                StatusVar(1, 1411383296),
                StatusVar(6, b"std"),
                StatusVar(4, (33, 33, 8)),
            ),
        ),
        GtidEvent(
            timestamp=WHEN,
            flags=8,
            seq_no=6,
            commit_id=9,
            flags2=GtidFlag.TRANSACTIONAL | GtidFlag.GROUP_COMMIT_ID,
        ),
        AnnotateRowsEvent(timestamp=WHEN, query=INSERT),
        table_map(),
        WriteRowsEvent(
            timestamp=WHEN,
            table_id=18,
            rows_flags=1,
            width=2,
            columns_present=b"\x03",
            rows=((1, b"abc"), (2, None)),
        ),
        table_map(),
        UpdateRowsEvent(
            timestamp=WHEN,
            table_id=18,
            rows_flags=1,
            width=2,
            columns_present=b"\x03",
            columns_present_after=b"\x03",
            rows=(((1, b"abc"), (1, b"o-k")),),
        ),
        table_map(),
        DeleteRowsEvent(
            timestamp=WHEN,
            table_id=18,
            rows_flags=1,
            width=2,
            columns_present=b"\x03",
            rows=((2, None),),
        ),
        XidEvent(timestamp=WHEN, xid=7),
        RotateEvent(timestamp=WHEN, next_file="mysql-bin.000002", position=4),
    ]


class Sample:
    def __init__(self, path: Path, events: list[Event]) -> None:
        self.path = path
        with BinlogWriter(path, fix_positions=True) as writer:
            self.ends = [writer.write(event) for event in events]
        self.offsets = [4, *self.ends[:-1]]
        self.data = path.read_bytes()

    def crc(self, index: int) -> int:
        end = self.ends[index]
        crc: int = struct.unpack_from("<I", self.data, end - 4)[0]
        # Independent of the codec: the CRC32 of the event's other bytes.
        assert crc == zlib.crc32(self.data[self.offsets[index] : end - 4])
        return crc

    def head(self, index: int, description: str) -> list[str]:
        return [
            f"# at {self.offsets[index]}",
            f"#{WHEN_TEXT} server id 1  end_log_pos {self.ends[index]} "
            f"CRC32 0x{self.crc(index):08x} \t{description}",
        ]


@pytest.fixture
def sample(tmp_path: Path) -> Sample:
    return Sample(tmp_path / "mysql-bin.000001", sample_events())


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = main(list(argv))
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def expected_listing(sample: Sample) -> list[str]:
    row_head = "### {} `d1`.`t`"
    return [
        *sample.head(
            0, f"Start: binlog v 4, server v 10.11.14-MariaDB-log created {WHEN_TEXT} at startup"
        ),
        *sample.head(1, "Gtid list [0-1-4,"),
        "# 1-2-3]",
        *sample.head(2, "Binlog checkpoint mysql-bin.000001"),
        *sample.head(3, "GTID 0-1-5 ddl"),
        *sample.head(4, "Query\tthread_id=4\texec_time=0\terror_code=0\txid=0"),
        "use `d1`",
        CREATE_TABLE.decode(),
        *sample.head(5, "GTID 0-1-6 cid=9 trans"),
        "START TRANSACTION",
        *sample.head(6, "Annotate_rows:"),
        "#Q> " + INSERT.decode(),
        *sample.head(7, "Table_map: `d1`.`t` mapped to number 18"),
        *sample.head(8, "Write_rows: table id 18 flags: STMT_END_F"),
        row_head.format("INSERT INTO"),
        "### SET",
        "###   @1=1",
        "###   @2='abc'",
        row_head.format("INSERT INTO"),
        "### SET",
        "###   @1=2",
        "###   @2=NULL",
        "# Number of rows: 2",
        *sample.head(9, "Table_map: `d1`.`t` mapped to number 18"),
        *sample.head(10, "Update_rows: table id 18 flags: STMT_END_F"),
        row_head.format("UPDATE"),
        "### WHERE",
        "###   @1=1",
        "###   @2='abc'",
        "### SET",
        "###   @1=1",
        "###   @2='o-k'",
        "# Number of rows: 1",
        *sample.head(11, "Table_map: `d1`.`t` mapped to number 18"),
        *sample.head(12, "Delete_rows: table id 18 flags: STMT_END_F"),
        row_head.format("DELETE FROM"),
        "### WHERE",
        "###   @1=2",
        "###   @2=NULL",
        "# Number of rows: 1",
        *sample.head(13, "Xid = 7"),
        "COMMIT",
        *sample.head(14, "Rotate to mysql-bin.000002  pos: 4"),
    ]


def test_listing(sample: Sample, capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = run(capsys, "dump", str(sample.path))
    assert (status, err) == (0, "")
    assert out.splitlines() == expected_listing(sample)


def test_listing_of_several_files(sample: Sample, capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run(capsys, "dump", str(sample.path), str(sample.path))
    assert status == 0
    assert out.splitlines() == expected_listing(sample) * 2


def test_json_lines_then_build_gives_the_same_bytes(
    sample: Sample, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    status, out, err = run(capsys, "dump", "--json", str(sample.path))
    assert (status, err) == (0, "")
    objects = [json.loads(line) for line in out.splitlines()]
    assert [obj["offset"] for obj in objects] == sample.offsets
    assert [obj["type"] for obj in objects][:5] == [
        "FORMAT_DESCRIPTION",
        "GTID_LIST",
        "BINLOG_CHECKPOINT",
        "GTID",
        "QUERY",
    ]
    assert [obj["log_pos"] for obj in objects] == sample.ends
    events_file = tmp_path / "events.jsonl"
    events_file.write_text(out, encoding="utf-8")
    rebuilt = tmp_path / "rebuilt.000001"
    status, _, err = run(capsys, "build", str(events_file), "-o", str(rebuilt))
    assert (status, err) == (0, "")
    assert rebuilt.read_bytes() == sample.data


def test_build_fix_positions(
    sample: Sample, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    _, out, _ = run(capsys, "dump", "--json", str(sample.path))
    objects = [json.loads(line) for line in out.splitlines()]
    for obj in objects:
        obj["log_pos"] = 0
        del obj["offset"]
    events_file = tmp_path / "events.jsonl"
    events_file.write_text("\n\n".join(json.dumps(obj) for obj in objects), encoding="utf-8")
    unfixed = tmp_path / "unfixed"
    fixed = tmp_path / "fixed"
    assert run(capsys, "build", str(events_file), "-o", str(unfixed))[0] == 0
    assert run(capsys, "build", str(events_file), "-o", str(fixed), "--fix-positions")[0] == 0
    assert fixed.read_bytes() == sample.data
    unfixed_data = unfixed.read_bytes()
    assert len(unfixed_data) == len(sample.data)
    for offset in sample.offsets:
        assert struct.unpack_from("<I", unfixed_data, offset + 13)[0] == 0


def test_build_from_hand_written_lines(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    events_file = tmp_path / "events.jsonl"
    events_file.write_text(
        '{"type": "FORMAT_DESCRIPTION"}\n'
        '{"type": "QUERY", "database": "d1", "query": "BEGIN"}\n'
        '{"type": "XID", "xid": 12}\n'
        '{"type": "UNKNOWN_200", "flags": 128, "body": {"hex": "00ff"}}\n',
        encoding="utf-8",
    )
    output = tmp_path / "hand.000001"
    assert run(capsys, "build", str(events_file), "-o", str(output), "--fix-positions")[0] == 0
    status, out, err = run(capsys, "dump", str(output))
    assert (status, err) == (0, "")
    assert "Xid = 12" in out and "BEGIN" in out and "Unknown event type 200" in out


def test_positions_limit_the_listing_but_not_the_reading(
    sample: Sample, capsys: pytest.CaptureFixture[str]
) -> None:
    write_rows, xid = sample.offsets[8], sample.offsets[13]
    status, out, _ = run(
        capsys,
        "dump",
        "--start-position",
        str(write_rows),
        "--stop-position",
        str(xid),
        str(sample.path),
    )
    assert status == 0
    lines = out.splitlines()
    assert lines[0] == f"# at {write_rows}"
    # The table map before the start was read: the rows know their table.
    assert "### INSERT INTO `d1`.`t`" in lines
    assert f"# at {xid}" not in lines and not any("Xid =" in line for line in lines)
    assert sum(line.startswith("# at ") for line in lines) == 13 - 8


def test_hexdump(sample: Sample, capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run(capsys, "dump", "--hexdump", "--stop-position", "5", str(sample.path))
    assert status == 0
    lines = out.splitlines()
    fde = sample.data[4 : sample.ends[0]]
    header = " ".join(f"{byte:02x}" for byte in fde[:4])
    assert (
        f"#        4  |{header} |0f   |01 00 00 00 |{fde[9]:02x} 00 00 00 |00 01 00 00 |00 00"
        in lines
    )
    body_first = " ".join(f"{byte:02x}" for byte in fde[19:27])
    assert any(line.startswith(f"#       17  {body_first}  ") for line in lines)
    assert lines[-1].startswith("# Event: \tStart: binlog v 4")


def corrupt(sample: Sample, index: int, tmp_path: Path) -> Path:
    data = bytearray(sample.data)
    data[sample.offsets[index] + 19 + 20] ^= 0x01  # inside the body, before the CRC
    path = tmp_path / "corrupt.000001"
    path.write_bytes(data)
    return path


def test_corrupt_event_gives_one_error_line(
    sample: Sample, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = corrupt(sample, 4, tmp_path)
    status, out, err = run(capsys, "dump", str(path))
    assert status == 1
    assert err.count("\n") == 1 and err.startswith(f"error: {path}: CRC32 mismatch")
    assert "in QUERY" in err and f"at offset {sample.ends[4] - 4}" in err
    assert out.splitlines() == expected_listing(sample)[: out.count("\n")]
    assert f"# at {sample.offsets[3]}" in out.splitlines()
    status, out, err = run(capsys, "dump", "--no-verify-checksum", str(path))
    assert (status, err) == (0, "")


@pytest.mark.parametrize(
    "mangle, message",
    [
        (lambda data: data[:-7], "truncated event"),
        (lambda data: b"hello, world" + data[12:], "not a binlog file"),
        (
            lambda data: data[:13] + b"\x03\x00\x00\x00" + data[17:],
            "shorter than the 19-byte header",
        ),
    ],
    ids=["truncated", "not-binlog", "bad-length"],
)
def test_malformed_files_give_one_error_line(
    sample: Sample, capsys: pytest.CaptureFixture[str], tmp_path: Path, mangle: object, message: str
) -> None:
    path = tmp_path / "bad.000001"
    path.write_bytes(mangle(sample.data))  # type: ignore[operator]
    for mode in ([], ["--json"]):
        status, _, err = run(capsys, "dump", *mode, str(path))
        assert status == 1
        assert err.count("\n") == 1 and err.startswith(f"error: {path}: ") and message in err
        assert "offset" in err


def test_missing_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    status, _, err = run(capsys, "dump", str(tmp_path / "nothing"))
    assert status == 1 and err.startswith("error: ") and err.count("\n") == 1


def test_unknown_event_types_need_allow_unknown(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "unknown.000001"
    with BinlogWriter(path, fix_positions=True) as writer:
        writer.write(FormatDescriptionEvent(timestamp=WHEN))
        writer.write(UnknownEvent(timestamp=WHEN, code=200, body=b"\x01\x02"))
    status, _, err = run(capsys, "dump", str(path))
    assert status == 1 and "unknown event type 200" in err and err.count("\n") == 1
    status, out, _ = run(capsys, "dump", "--allow-unknown", str(path))
    assert status == 0 and "Unknown event type 200 (UNKNOWN_200), 2 body bytes" in out


@pytest.mark.parametrize(
    "lines, message",
    [
        (['{"type": "FORMAT_DESCRIPTION"}', "{not json"], ":2: not JSON"),
        (
            ['{"type": "FORMAT_DESCRIPTION"}', '{"type": "NO_SUCH"}'],
            ":2 (NO_SUCH): unknown event type",
        ),
        (['{"type": "FORMAT_DESCRIPTION"}', "[1, 2]"], ":2: an event is a JSON object"),
        (
            ['{"type": "FORMAT_DESCRIPTION"}', '{"type": "GTID", "commit_id": 5}'],
            ":2 (GTID), event 2 at offset 256: GTID commit_id is set but its flag is clear",
        ),
        (
            ['{"type": "ROTATE", "position": -1}'],
            ":1 (ROTATE), event 1 at offset 4: position -1: not in 0..18446744073709551615",
        ),
    ],
    ids=["json", "type", "array", "encode", "range"],
)
def test_bad_build_input_gives_one_error_line_and_no_file(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, lines: list[str], message: str
) -> None:
    events_file = tmp_path / "events.jsonl"
    events_file.write_text("\n".join(lines) + "\n", encoding="utf-8")
    output = tmp_path / "out.000001"
    status, _, err = run(capsys, "build", str(events_file), "-o", str(output))
    assert status == 1
    assert err.count("\n") == 1 and err.startswith(f"error: {events_file}{message}")
    assert not output.exists()


def test_text_that_is_not_utf8_survives_dump_and_build(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "names.000001"
    with BinlogWriter(path, fix_positions=True) as writer:
        writer.write(FormatDescriptionEvent(timestamp=WHEN))
        writer.write(RotateEvent(timestamp=WHEN, next_file="caf\u00e9-\udcff.000002"))
    status, out, _ = run(capsys, "dump", "--json", str(path))
    assert status == 0
    assert "\\udcff" in out
    events_file = tmp_path / "events.jsonl"
    events_file.write_text(out, encoding="utf-8")
    rebuilt = tmp_path / "rebuilt"
    assert run(capsys, "build", str(events_file), "-o", str(rebuilt))[0] == 0
    assert rebuilt.read_bytes() == path.read_bytes()


def test_value_formats() -> None:
    assert format_value(b"o'k\\\n\xff") == "'o\\'k\\\\\\x0a\\xff'"
    assert format_value(None) == "NULL"
    assert format_value(21, 16, 5) == "b'10101'"


# --- as a program -----------------------------------------------------------------------------


def run_module(*argv: str) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])),
    }
    return subprocess.run(
        [sys.executable, "-m", "fakemaster", *argv],
        capture_output=True,
        text=True,
        encoding="utf-8",
        env=env,
        timeout=120,
        check=False,
    )


def test_python_dash_m(sample: Sample, tmp_path: Path) -> None:
    result = run_module("dump", str(sample.path))
    assert (result.returncode, result.stderr) == (0, "")
    assert result.stdout.splitlines() == expected_listing(sample)
    result = run_module("dump", str(corrupt(sample, 8, tmp_path)))
    assert result.returncode == 1
    assert result.stderr.count("\n") == 1 and result.stderr.startswith("error: ")
    assert "Traceback" not in result.stderr and "WRITE_ROWS_V1" in result.stderr


# --- against mariadb-binlog and real server files -----------------------------------------------


def test_header_and_row_lines_match_mariadb_binlog(sample: Sample) -> None:
    tool = shutil.which("mariadb-binlog")
    require_peer("mariadb-binlog", tool is not None, "apt-get install mariadb-client")
    assert tool is not None
    theirs = subprocess.run(
        [tool, "-v", str(sample.path)],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "TZ": "UTC"},
        timeout=60,
    ).stdout.splitlines()
    ours = expected_listing(sample)

    def comparable(lines: list[str]) -> list[str]:
        # mariadb-binlog groups "# at" lines differently around ANNOTATE_ROWS; the event lines
        # themselves must be the same.
        return sorted(line for line in lines if line.startswith(("#2", "###", "# 1-", "#Q>")))

    assert comparable(ours) == comparable(theirs)


GOLDEN_FILES = sorted(
    path for path in GOLDEN_BINLOGS.rglob("*") if path.is_file() and path.name[-6:].isdigit()
)


def test_golden_binlogs_exist() -> None:
    assert GOLDEN_FILES


@pytest.mark.parametrize(
    "path", GOLDEN_FILES, ids=[str(path.relative_to(GOLDEN_BINLOGS)) for path in GOLDEN_FILES]
)
def test_golden_binlog_dump_then_build_is_identical(
    path: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # Tables with MariaDB 5.3-format temporal columns need their precisions from the schema.
    expected = WorkloadResult.loads((path.parent / "expected.json").read_text("utf-8"))
    hints = [
        f"--temporal-precision={db}.{table}={','.join(map(str, precisions))}"
        for (db, table), precisions in expected.temporal_precisions().items()
    ]
    status, out, err = run(capsys, "dump", "--json", *hints, str(path))
    assert (status, err) == (0, "")
    events_file = tmp_path / "events.jsonl"
    events_file.write_text(out, encoding="utf-8")
    rebuilt = tmp_path / path.name
    status, _, err = run(capsys, "build", str(events_file), "-o", str(rebuilt), *hints)
    assert (status, err) == (0, "")
    assert rebuilt.read_bytes() == path.read_bytes()
    status, out, err = run(capsys, "dump", *hints, str(path))
    assert (status, err) == (0, "")
    assert out.count("# at ") == len(events_file.read_text(encoding="utf-8").splitlines())


def test_listing_without_checksums_and_with_compressed_rows(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "plain.000001"
    events: list[Event] = [
        FormatDescriptionEvent(timestamp=WHEN, checksum_alg=0),
        table_map(),
        WriteRowsEvent(
            timestamp=WHEN,
            table_id=18,
            rows_flags=1,
            compressed=True,
            width=2,
            columns_present=b"\x03",
            rows=((-1, b"x"),),
        ),
    ]
    with BinlogWriter(path, fix_positions=True) as writer:
        ends = [writer.write(event) for event in events]
    status, out, err = run(capsys, "dump", str(path))
    assert (status, err) == (0, "")
    heads = [line for line in out.splitlines() if line.startswith(f"#{WHEN_TEXT}")]
    assert heads == [
        f"#{WHEN_TEXT} server id 1  end_log_pos {ends[0]} \tStart: binlog v 4, "
        f"server v 10.11.14-MariaDB-log created {WHEN_TEXT}",
        f"#{WHEN_TEXT} server id 1  end_log_pos {ends[1]} \t"
        "Table_map: `d1`.`t` mapped to number 18",
        f"#{WHEN_TEXT} server id 1  end_log_pos {ends[2]} \t"
        "Write_compressed_rows: table id 18 flags: STMT_END_F",
    ]
    # An INT column's negative value is shown with its unsigned reading too.
    assert "###   @1=-1 (4294967295)" in out.splitlines()
