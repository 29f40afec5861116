"""The value edges the generated histories reach only by luck, on purpose: each history is
written out, run on a real MariaDB 10.11 and compared with the compiler's events and the
oracle's tables (:func:`tests.scenarios.mariadb_run.compare_with_server`). No random draw:
the verdict is the same on every run.

The edges: a FLOAT default that needs more than 6 significant digits kept over an ALTER TABLE
(the server reads a kept column's default back through its 6-digit text); BINARY(n) NUL
padding, in a key too; YEAR 0; every unsigned integer at exactly 2^(bits-1) (its top bit set:
the value a reader without SIGNEDNESS metadata takes for negative) under each
binlog_row_metadata; FLOAT and DOUBLE values and defaults at the float32 edges (largest,
smallest normal, smallest subnormal) and DOUBLE's own.
"""

from __future__ import annotations

import pytest

from scenarios.builder import column
from scenarios.history import Scenario, Settings
from scenarios.schema import NO_DEFAULT
from scenarios.values import copied_default, float32
from tests.peers.mariadb import MariaDBServer
from tests.support.mariadb_run import compare_with_server

IMAGES = ["FULL", "MINIMAL", "NOBLOB"]
METADATA = ["NO_LOG", "MINIMAL", "FULL"]

# The issue's default: a float32 value whose shortest text has 16 digits.
ISSUE_DEFAULT = -4.187074711047373e16
FLT_MAX = float32(3.4028234663852886e38)
FLT_MIN_NORMAL = float32(1.1754943508222875e-38)
FLT_MIN_SUBNORMAL = float32(1.401298464324817e-45)
FLT_MAX_SUBNORMAL = float32(1.1754942106924411e-38)
FLOAT_EDGES = (FLT_MAX, -FLT_MAX, FLT_MIN_NORMAL, FLT_MIN_SUBNORMAL, FLT_MAX_SUBNORMAL, 16777216.0)
DOUBLE_EDGES = (1.7976931348623157e308, -2.2250738585072014e-308, 5e-324, 0.30000000000000004)


def test_a_float_default_kept_over_an_alter_reads_back_through_six_digits() -> None:
    # The value the server logged for the issue's default after an ALTER TABLE (observed on
    # MariaDB 10.11 by test_a_float_default_over_ddl below).
    table_column = column("a", "FLOAT", null=False, default=ISSUE_DEFAULT)
    assert copied_default(table_column) == -4.187069986583347e16
    # Six digits or fewer, a DOUBLE, NULL and no default come through unchanged.
    assert copied_default(column("a", "FLOAT", default=0.5)) == 0.5
    assert copied_default(column("a", "DOUBLE", default=0.30000000000000004)) == (
        0.30000000000000004
    )
    assert copied_default(column("a", "FLOAT", default=None)) is None
    assert copied_default(column("a", "FLOAT")) is NO_DEFAULT


def float_defaults(settings: Settings) -> Scenario:
    """The issue's history (an INSERT that omits a FLOAT NOT NULL DEFAULT
    -4.187074711047373e+16), then each DDL that keeps the column: ALTER (ADD, MODIFY of
    another column, DROP of another), TRUNCATE, RENAME, each followed by such an INSERT."""
    scenario = Scenario(settings)
    floats = ", ".join(
        f"f{n} FLOAT NOT NULL DEFAULT {value!r}"
        for n, value in enumerate((ISSUE_DEFAULT, *FLOAT_EDGES))
    )
    # Number literals the server rounds: to the nearest double, then float32 for a FLOAT.
    floats += ", r0 FLOAT DEFAULT 16777217, r1 FLOAT DEFAULT 0.1, r2 FLOAT DEFAULT 3.4028235e38"
    floats += ", r3 DOUBLE DEFAULT 0.1, r4 DOUBLE DEFAULT 1e-400"
    doubles = ", ".join(
        f"d{n} DOUBLE NOT NULL DEFAULT {value!r}" for n, value in enumerate(DOUBLE_EDGES)
    )
    scenario.create_table(
        f"CREATE TABLE e.t (id INT PRIMARY KEY, {floats}, {doubles}, x INT)", rows=[{"id": 1}]
    )
    scenario.insert("e.t", {"id": 2})
    scenario.alter_table("e.t", f"ADD COLUMN g FLOAT NOT NULL DEFAULT {ISSUE_DEFAULT!r} FIRST")
    scenario.insert("e.t", {"id": 3})
    scenario.alter_table("e.t", "MODIFY COLUMN x BIGINT")
    scenario.insert("e.t", {"id": 4})
    scenario.update("e.t", {"id": 1}, {"x": 5})
    scenario.ddl("TRUNCATE TABLE e.t")
    scenario.insert("e.t", {"id": 5})
    scenario.ddl("RENAME TABLE e.t TO e.u")
    scenario.insert("e.u", {"id": 6})
    scenario.alter_table("e.u", "DROP COLUMN x")
    scenario.insert("e.u", {"id": 7})
    return scenario


@pytest.mark.mariadb
@pytest.mark.parametrize("metadata", METADATA)
def test_a_float_default_over_ddl(server: MariaDBServer, metadata: str) -> None:
    assert compare_with_server(server, float_defaults(Settings(binlog_row_metadata=metadata))) == []


def values_at_edges(settings: Settings) -> Scenario:
    scenario = Scenario(settings)
    scenario.create_table(
        """CREATE TABLE e.num (id INT PRIMARY KEY, ti TINYINT UNSIGNED, si SMALLINT UNSIGNED,
        mi MEDIUMINT UNSIGNED, i INT UNSIGNED, bi BIGINT UNSIGNED, sti TINYINT, sbi BIGINT,
        y YEAR, y0 YEAR NOT NULL DEFAULT 0, f FLOAT, d DOUBLE)"""
    )
    top = {
        name: 1 << bits - 1
        for name, bits in (("ti", 8), ("si", 16), ("mi", 24), ("i", 32), ("bi", 64))
    }
    below = {name: value - 1 for name, value in top.items()}
    largest = {name: 2 * value - 1 for name, value in top.items()}
    for row in (
        {"id": 1, **top, "sti": -128, "sbi": -(1 << 63), "y": 0, "f": FLT_MAX},
        {"id": 2, **below, "sti": 127, "sbi": (1 << 63) - 1, "y": 1901, "f": -FLT_MAX},
        {"id": 3, **largest, "y": 2155, "f": FLT_MIN_SUBNORMAL, "d": 5e-324},
        {"id": 4, "f": FLT_MIN_NORMAL, "d": 1.7976931348623157e308},
        {"id": 5, "f": FLT_MAX_SUBNORMAL, "d": -2.2250738585072014e-308},
    ):
        scenario.insert("e.num", row)
    scenario.update("e.num", {"id": 2}, {**top, "y": 0, "y0": 2155, "f": 16777216.0})
    scenario.update("e.num", {"id": 1}, {"bi": 0, "y": 2000})
    scenario.delete("e.num", {"id": 3})
    scenario.create_table(
        """CREATE TABLE e.bin (b BINARY(4) NOT NULL PRIMARY KEY, c BINARY(3),
        z BINARY(2) NOT NULL DEFAULT X'00', v VARBINARY(4))"""
    )
    scenario.insert("e.bin", {"b": b"\x01", "c": b""}, {"b": b"", "c": b"\x00\x00\x00"})
    scenario.insert("e.bin", {"b": b"ab\x00\x00", "c": b"a\x00"})
    scenario.insert(
        "e.bin", {"b": b"\xff\xff\xff\xff", "c": b"xyz", "z": b"\x00\x01", "v": b"\x00"}
    )
    scenario.update("e.bin", {"b": b"\x01\x00\x00\x00"}, {"c": b"q", "b": b"\x02"})
    scenario.delete("e.bin", {"b": b"\x00\x00\x00\x00"})
    return scenario


@pytest.mark.mariadb
@pytest.mark.parametrize("image", IMAGES)
@pytest.mark.parametrize("metadata", METADATA)
def test_values_at_their_edges(server: MariaDBServer, image: str, metadata: str) -> None:
    scenario = values_at_edges(Settings(binlog_row_image=image, binlog_row_metadata=metadata))
    assert compare_with_server(server, scenario) == []
