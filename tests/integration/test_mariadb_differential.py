"""Differential test of the binlog codec against a live MariaDB 10.11.

For each workload variant a private server (temporary datadir, loopback) runs the workload of
``tests/peers/workload.py`` and is stopped cleanly; then

* every event of every binlog file it wrote decodes, re-encodes (fresh context per file) to its
  exact bytes, and each whole file re-written with ``BinlogWriter`` equals the original;
* replaying the decoded row events of all the files leaves every table exactly as the server
  returns it over SQL (cells rendered by ``tests.support.sql_text``);
* the binlogs really contain what the variant is meant to exercise (compressed event types, an
  XA_PREPARE, a ROTATE, a rows event over 16 MiB, partial images, several TABLE_MAPs in one
  transaction, every column type, ...), so that the test cannot pass on empty coverage.

All problems of a variant are collected and reported together, each naming the file, offset,
event type, table, column and both values.
"""

from __future__ import annotations

import datetime as dt
import math
import random
import struct
import subprocess
import sys
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from fakemaster.vocabulary.constants import ChecksumAlg, ColumnType, EventType
from fakemaster.vocabulary.events import (
    FormatDescriptionEvent,
    StopEvent,
    TableMapEvent,
    UpdateRowsEvent,
)
from fakemaster.vocabulary.values import ABSENT
from tests.peers.fixtures import MariaDBFactory
from tests.peers.mariadb import MariaDBServer
from tests.peers.workload import (
    HUGE_ROW_LENGTH,
    SESSION_SETUP,
    WorkloadResult,
    collect_result,
    run_codec_workload,
    run_compressed_workload,
    run_full_metadata_workload,
    run_minimal_image_workload,
)
from tests.support.replay import BinlogFeatures, VariantCheck, binlog_features, check_variant

pytestmark = pytest.mark.mariadb

SIXTEEN_MIB = 16 * 1024 * 1024


@dataclass(frozen=True)
class Variant:
    options: dict[str, Any]
    run: Callable[[MariaDBServer], WorkloadResult]
    codec_workload: bool  # the every-column-type workload (as opposed to MINIMAL's tables)


VARIANTS: dict[str, Variant] = {
    "default": Variant({}, lambda s: run_codec_workload(s, huge_row=True, variant="default"), True),
    "minimal": Variant(
        {"binlog_row_image": "MINIMAL"},
        lambda s: run_minimal_image_workload(s, variant="minimal"),
        False,
    ),
    "compressed": Variant(
        {"log_bin_compress": "ON", "log_bin_compress_min_len": 10},
        lambda s: run_compressed_workload(s, variant="compressed"),
        True,
    ),
    "full_metadata": Variant(
        {"binlog_row_metadata": "FULL"}, lambda s: run_full_metadata_workload(s), True
    ),
    "checksum_none": Variant(
        {"binlog_checksum": "NONE"},
        lambda s: run_codec_workload(s, variant="checksum_none"),
        True,
    ),
}

# Every binlog column type the codec workload creates (ENUM/SET travel as STRING).
CODEC_COLUMN_TYPES = frozenset(
    {
        ColumnType.TINY,
        ColumnType.SHORT,
        ColumnType.INT24,
        ColumnType.LONG,
        ColumnType.LONGLONG,
        ColumnType.FLOAT,
        ColumnType.DOUBLE,
        ColumnType.NEWDECIMAL,
        ColumnType.BIT,
        ColumnType.YEAR,
        ColumnType.DATE,
        ColumnType.TIME,
        ColumnType.DATETIME,
        ColumnType.TIMESTAMP,
        ColumnType.TIME2,
        ColumnType.DATETIME2,
        ColumnType.TIMESTAMP2,
        ColumnType.VARCHAR,
        ColumnType.BLOB,
        ColumnType.GEOMETRY,
        ColumnType.STRING,
    }
)
CODEC_STRING_REAL_TYPES = frozenset({ColumnType.STRING, ColumnType.ENUM, ColumnType.SET})


def _content_problems(name: str, check: VariantCheck, result: WorkloadResult) -> list[str]:
    """What the variant's binlogs lack of what the issue requires them to contain."""
    features: BinlogFeatures = binlog_features(check.reports)
    missing: list[str] = []

    def need(condition: bool, what: str) -> None:
        if not condition:
            missing.append(f"{name}: the binlogs lack {what}")

    events = [event for report in check.reports for _, event in report.events]
    need(features.files == len(result.binlog_files), f"the {result.binlog_files} files")
    need(bool(events) and isinstance(events[-1], StopEvent), "a STOP ending the last file")
    for kind in ("write", "update", "delete"):
        need(features.multi_row_events[kind] > 0, f"a multi-row {kind} rows event")
    need(features.multi_table_groups > 0, "a transaction with TABLE_MAPs of several tables")
    if VARIANTS[name].codec_workload:
        need(
            CODEC_COLUMN_TYPES <= features.column_types,
            f"column types {sorted(t.name for t in CODEC_COLUMN_TYPES - features.column_types)}",
        )
        need(
            CODEC_STRING_REAL_TYPES <= features.string_real_types,
            f"CHAR/ENUM/SET columns (STRING real types {sorted(features.string_real_types)})",
        )
        need(any(q.startswith("ALTER TABLE") for q in features.ddl_queries), "an ALTER TABLE")
        need(features.has_type(EventType.XA_PREPARE), "an XA_PREPARE event")
        need(features.rotates_ending_files >= 1 and features.files >= 2, "a rotation (ROTATE)")
        need(
            features.has_type(EventType.EXECUTE_LOAD_QUERY),
            "statement-based LOAD DATA (EXECUTE_LOAD_QUERY)",
        )
    if name == "default":
        size, where = features.largest_rows_event
        need(size > SIXTEEN_MIB, f"a rows event over 16 MiB (largest: {size} bytes at {where})")
        huge = check.comparisons.get("t_huge")
        need(
            huge is not None and huge.compared_cells > 0 and not huge.problems,
            f"the {HUGE_ROW_LENGTH}-byte LONGBLOB compared with the server's value",
        )
    if name == "compressed":
        for code in (
            EventType.QUERY_COMPRESSED,
            EventType.WRITE_ROWS_COMPRESSED_V1,
            EventType.UPDATE_ROWS_COMPRESSED_V1,
            EventType.DELETE_ROWS_COMPRESSED_V1,
        ):
            need(features.has_type(code), f"{EventType(code).name} ({int(code)}) events")
    if name == "minimal":
        need(features.partial_image_events > 0, "rows events with partial images")
        need(
            any(
                isinstance(e, UpdateRowsEvent)
                and any(v is ABSENT for before, _ in e.rows for v in before)
                and any(v is ABSENT for _, after in e.rows for v in after)
                for e in events
            ),
            "an UPDATE with partial before and after images",
        )
        uncovered = sum(len(c.uncovered_cells) for c in check.comparisons.values())
        need(uncovered > 0, "columns left to server defaults by MINIMAL inserts")
    if name == "full_metadata":
        need(
            any(isinstance(e, TableMapEvent) and e.optional_metadata for e in events),
            "TABLE_MAP optional metadata",
        )
    fdes = [e for e in events if isinstance(e, FormatDescriptionEvent)]
    expected_alg = ChecksumAlg.OFF if name == "checksum_none" else ChecksumAlg.CRC32
    need(
        len(fdes) == features.files and all(f.checksum_alg == expected_alg for f in fdes),
        f"a FORMAT_DESCRIPTION with checksum {expected_alg.name} in every file",
    )
    return missing


def _cli_rebuild_problems(files: list[Path], result: WorkloadResult, tmp_path: Path) -> list[str]:
    """``python -m fakemaster dump --json`` then ``build`` must give every file back byte for
    byte (through the real command line, as a user runs it)."""
    hints = [
        f"--temporal-precision={db}.{table}={','.join(map(str, precisions))}"
        for (db, table), precisions in result.temporal_precisions().items()
    ]
    problems = []
    for path in files:
        events = tmp_path / f"{path.name}.jsonl"
        rebuilt = tmp_path / path.name
        command = [sys.executable, "-m", "fakemaster"]
        with open(events, "wb") as out:
            dump = subprocess.run(
                [*command, "dump", "--json", *hints, str(path)],
                stdout=out,
                stderr=subprocess.PIPE,
                timeout=300,
            )
        build = subprocess.run(
            [*command, "build", str(events), "-o", str(rebuilt), *hints],
            capture_output=True,
            timeout=300,
        )
        if dump.returncode or build.returncode:
            problems.append(f"{path.name}: dump/build failed: {dump.stderr!r} {build.stderr!r}")
        elif rebuilt.read_bytes() != path.read_bytes():
            problems.append(f"{path.name}: the rebuilt file differs from the server's")
    return problems


@pytest.mark.parametrize("name", list(VARIANTS))
def test_live_binlogs_decode_reencode_and_match_sql(
    name: str, mariadb_factory: MariaDBFactory, tmp_path: Path
) -> None:
    variant = VARIANTS[name]
    server = mariadb_factory(variant.options)
    result = variant.run(server)
    server.stop()  # clean shutdown: the last file ends with STOP and nothing is in flight
    files = server.binlog_files()
    assert [f.name for f in files] == result.binlog_files, (
        f"binlog files after shutdown {[f.name for f in files]}, during the workload"
        f" {result.binlog_files}"
    )

    check = check_variant(files, result)

    sections = [
        ("codec (decode / re-encode / re-write)", check.file_problems()),
        ("replay", check.problems),
        ("rows versus SQL", check.table_problems()),
        ("binlog content", _content_problems(name, check, result)),
    ]
    sections.append(("dump --json then build", _cli_rebuild_problems(files, result, tmp_path)))
    failed = [(title, problems) for title, problems in sections if problems]
    compared = sum(c.compared_cells for c in check.comparisons.values())
    summary = (
        f"variant {name}: {len(files)} file(s), {sum(len(r.events) for r in check.reports)}"
        f" events decoded, {compared} cells compared with the server"
    )
    if failed:
        report = "".join(
            f"\n[{title}] {len(problems)} problem(s)\n  " + "\n  ".join(problems)
            for title, problems in failed
        )
        pytest.fail(summary + report, pytrace=False)
    assert compared > 0, summary


# --- a seeded random sweep over the value formats the renderer and the codec must agree on --

SWEEP_SEED = 20_240_611
SWEEP_ROWS = 240
_ENUM_LABELS = ("alpha", "beta", "gamma", "délta", "e'q")
_SET_LABELS = tuple(f"s{i}" for i in range(11))

SWEEP_DDL = """CREATE TABLE fm.sweep (
    pk INT NOT NULL PRIMARY KEY,
    f FLOAT NULL, d DOUBLE NULL, f73 FLOAT(7,3) NULL, d155 DOUBLE(15,5) NULL,
    dec30 DECIMAL(30,10) NULL, dec5u DECIMAL(5,0) UNSIGNED NULL,
    i6 INET6 NULL, i4 INET4 NULL, u UUID NULL,
    t4 TIME(4) NULL, dt3 DATETIME(3) NULL, ts6 TIMESTAMP(6) NULL DEFAULT NULL,
    biu BIGINT UNSIGNED NULL, mi MEDIUMINT NULL, b13 BIT(13) NULL, y YEAR NULL,
    e ENUM({enum}) NULL, s SET({set}) NULL,
    vc VARCHAR(40) CHARACTER SET utf8mb4 NULL, ch CHAR(6) CHARACTER SET latin1 NULL,
    bin5 BINARY(5) NULL
) DEFAULT CHARSET=utf8mb4"""


def _sql_str(text: str) -> str:
    return "'" + text.replace("\\", "\\\\").replace("'", "''") + "'"


class _SweepValues:
    """SQL literals of random values, each column drawing from edge cases and random bits."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)

    def _maybe_null(self, literal: str) -> str:
        return "NULL" if self.rng.random() < 0.08 else literal

    def _float32(self) -> float:
        rng = self.rng
        while True:
            if rng.random() < 0.3:
                value = rng.choice([0.0, 1.0, -1.0, 0.1, 1e-7, 3.0e38, -1.17549e-38, 16777217.0])
            else:
                value = struct.unpack("<f", struct.pack("<I", rng.getrandbits(32)))[0]
            if math.isfinite(value):
                return float(struct.unpack("<f", struct.pack("<f", value))[0])

    def _float64(self) -> float:
        rng = self.rng
        while True:
            pick = rng.random()
            if pick < 0.2:
                value = rng.choice([0.0, 1e15, 1e16, 123456789012345.6, 1e-14, 1e-15, 5e-324])
            elif pick < 0.5:
                value = rng.uniform(-1, 1) * 10.0 ** rng.randint(-20, 20)
            else:
                value = struct.unpack("<d", struct.pack("<Q", rng.getrandbits(64)))[0]
            if math.isfinite(value):
                return value

    def _inet6(self) -> bytes:
        rng = self.rng
        kind = rng.random()
        if kind < 0.15:
            return bytes(10) + b"\xff\xff" + rng.randbytes(4)
        if kind < 0.25:
            return bytes(12) + rng.randbytes(4)
        words = [0 if rng.random() < 0.45 else rng.getrandbits(16) for _ in range(8)]
        return b"".join(w.to_bytes(2, "big") for w in words)

    def row(self, pk: int) -> str:
        rng = self.rng
        sign = "-" if rng.random() < 0.5 else ""
        time4 = (
            f"{sign}{rng.randint(0, 838):02d}:{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d}"
            f".{rng.randint(0, 9999):04d}"
        )
        if rng.random() < 0.1:
            datetime3 = "0000-00-00 00:00:00.000"
        else:
            datetime3 = (
                f"{rng.randint(1000, 9999):04d}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"
                f" {rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d}"
                f".{rng.randint(0, 999):03d}"
            )
        moment = dt.datetime.fromtimestamp(rng.randint(1, 2**31 - 1), dt.UTC)
        timestamp6 = moment.strftime("%Y-%m-%d %H:%M:%S") + f".{rng.randint(0, 999999):06d}"
        digits = "".join(rng.choice("0123456789") for _ in range(rng.randint(1, 20)))
        fraction = "".join(rng.choice("0123456789") for _ in range(rng.randint(0, 10)))
        decimal30 = f"{sign}{digits}" + (f".{fraction}" if fraction else "")
        text = "".join(rng.choice("ab é😀€ \t'\\z") for _ in range(rng.randint(0, 40)))
        char6 = "".join(rng.choice("xyzé ") for _ in range(rng.randint(0, 6)))
        values = [
            str(pk),
            self._maybe_null(repr(self._float32())),
            self._maybe_null(repr(self._float64())),
            self._maybe_null(f"{rng.uniform(-9999.999, 9999.999):.3f}"),
            self._maybe_null(f"{rng.uniform(-1e9, 1e9):.{rng.randint(0, 5)}f}"),
            self._maybe_null(decimal30),
            self._maybe_null(str(rng.randint(0, 99999))),
            self._maybe_null(f"INET6_NTOA(X'{self._inet6().hex()}')"),
            self._maybe_null(f"INET6_NTOA(X'{rng.randbytes(4).hex()}')"),
            self._maybe_null(_sql_str(str(uuid.UUID(bytes=rng.randbytes(16))))),
            self._maybe_null(_sql_str(time4)),
            self._maybe_null(_sql_str(datetime3)),
            self._maybe_null(_sql_str(timestamp6)),
            self._maybe_null(str(rng.choice([0, 2**64 - 1, 2**63, rng.getrandbits(64)]))),
            self._maybe_null(str(rng.randint(-(2**23), 2**23 - 1))),
            self._maybe_null(str(rng.getrandbits(13))),
            self._maybe_null(str(rng.choice([0, 1901, 2155, rng.randint(1901, 2155)]))),
            self._maybe_null(str(rng.randint(1, len(_ENUM_LABELS)))),
            self._maybe_null(str(rng.getrandbits(len(_SET_LABELS)))),
            self._maybe_null(_sql_str(text)),
            self._maybe_null(_sql_str(char6)),
            self._maybe_null(f"X'{rng.randbytes(rng.randint(0, 5)).hex()}'"),
        ]
        return "(" + ", ".join(values) + ")"


def test_live_random_values_render_like_the_server(mariadb_factory: MariaDBFactory) -> None:
    """Seeded random FLOAT/DOUBLE/DECIMAL/INET/UUID/temporal/ENUM/SET/... values written,
    updated and deleted in multi-row statements: the decoded rows, rendered, equal what the
    server returns; every event re-encodes to its bytes."""
    server = mariadb_factory({"binlog_row_image": "FULL"})
    values = _SweepValues(SWEEP_SEED)
    ddl = SWEEP_DDL.format(
        enum=", ".join(_sql_str(v) for v in _ENUM_LABELS),
        set=", ".join(_sql_str(v) for v in _SET_LABELS),
    )
    statements = [*SESSION_SETUP, "CREATE DATABASE fm", ddl]
    for start in range(0, SWEEP_ROWS, 40):
        rows = [values.row(pk) for pk in range(start, start + 40)]
        statements.append("INSERT INTO fm.sweep VALUES " + ", ".join(rows))
    # Re-write a third of the rows with fresh values (multi-row UPDATE via a join), delete some.
    statements += [
        "CREATE TABLE fm.fresh LIKE fm.sweep",
        "INSERT INTO fm.fresh VALUES "
        + ", ".join(values.row(pk) for pk in range(0, SWEEP_ROWS, 3)),
        "UPDATE fm.sweep s JOIN fm.fresh n ON s.pk = n.pk SET s.f = n.f, s.d = n.d,"
        " s.dec30 = n.dec30, s.i6 = n.i6, s.t4 = n.t4, s.ts6 = n.ts6, s.s = n.s, s.vc = n.vc",
        "DELETE FROM fm.sweep WHERE pk % 7 = 0",
        "DROP TABLE fm.fresh",
    ]
    server.execute(statements)
    result = collect_result(server, variant="sweep", steps=["sweep"])
    server.stop()
    check = check_variant(server.binlog_files(), result)
    problems = check.all_problems()
    compared = check.comparisons["sweep"].compared_cells
    if problems:
        pytest.fail(
            f"random sweep (seed {SWEEP_SEED}): {compared} cells compared, {len(problems)}"
            " problem(s)\n  " + "\n  ".join(problems),
            pytrace=False,
        )
    expected_rows = len(result.tables["sweep"].rows)
    assert expected_rows > SWEEP_ROWS // 2
    assert compared == expected_rows * len(result.tables["sweep"].columns)
