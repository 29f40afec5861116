"""No silent loss in the encoder (issue #6, item 6).

For every column type and metadata (generated too): a value the column can hold encodes and
decodes back equal, fractional seconds included; a value it cannot hold (too long for its
length prefix, out of range, more fractional digits than its precision or scale, a str where
bytes are expected, the wrong Python type, an ENUM index or SET bit beyond the members a
TABLE_MAP lists, a BIT wider than its width) raises EncodeError naming the column and the
value, in a single value and in a rows event (first and compiled writers, with and without
NULLs), and ``build`` refuses to write a lossy file.

Each column's limits are computed here from its declared type and metadata (widths, ranges,
precisions, members), never asked of the encoder; where MariaDB reads fewer bits than the bytes
have (TIME2 hours, TIMESTAMP seconds, ...: tests/support/mariadb_reads.py) the limit is what it
reads.
"""

from __future__ import annotations

import datetime as dt
import json
import math
import os
import struct
import subprocess
import sys
from dataclasses import dataclass, replace
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from decoder.core import decode_event
from decoder.values import decode_value
from encoder.core import encode_event
from encoder.values import encode_value
from fakemaster.vocabulary.columns import NUMERIC_TYPES, string_meta_value
from fakemaster.vocabulary.constants import ColumnType as T
from fakemaster.vocabulary.constants import OptionalMetadata as M
from fakemaster.vocabulary.context import BinlogContext
from fakemaster.vocabulary.errors import EncodeError
from fakemaster.vocabulary.events import (
    MetadataField,
    TableMapEvent,
    UpdateRowsEvent,
    WriteRowsEvent,
)
from fakemaster.vocabulary.values import ABSENT, Date, DateTime, Time, Timestamp

REPO = Path(__file__).resolve().parents[2]
UTC = dt.UTC
MICRO = 10**6
# What MariaDB 10.11 reads back (sql/compat56.cc, sql/field.cc; seen on a real replica,
# tests/integration/test_temporal_edges.py): TIME2 hours are 10 bits; a TIMESTAMP ends at
# 2038-01-19 03:14:07; an old DATETIME's YYYYMMDD is cast to 32 bits; MariaDB 5.3 TIME(n) hours
# wrap at 24 * 32 * 13; a MariaDB 5.3 DATETIME(n) is a signed 64-bit count of microseconds.
TIME2_MAX_HOUR = 1023
TIMESTAMP_MAX = 2**31 - 1
OLD_DATETIME_MAX_YEAR = (2**32 - 1) // 10**4
HIRES_TIME_MAX_HOUR = 24 * 32 * 13 - 1
INTEGER_BYTES = {T.TINY: 1, T.SHORT: 2, T.INT24: 3, T.LONG: 4, T.LONGLONG: 8}
BLOB_FAMILY = (
    T.TINY_BLOB,
    T.MEDIUM_BLOB,
    T.LONG_BLOB,
    T.BLOB,
    T.GEOMETRY,
    T.JSON,
    T.BLOB_COMPRESSED,
)
ENUM_BYTE, SET_BYTE, CHAR_BYTE = 0xF7, 0xF8, 0xFE
# Old TIME/DATETIME/TIMESTAMP: no TABLE_MAP metadata; a precision > 0 (from the schema) means
# MariaDB 5.3's format.
OLD_TEMPORAL = ("time", "datetime", "timestamp")


@dataclass(frozen=True)
class Column:
    """A column as a TABLE_MAP describes it; ``members``: the ENUM/SET members it lists."""

    family: str
    column_type: int
    meta: int = 0
    unsigned: bool = False
    members: int | None = None

    @property
    def fsp(self) -> int:
        return self.meta

    @property
    def bits(self) -> int:
        return (self.meta >> 8) * 8 + (self.meta & 0xFF)

    @property
    def pack_length(self) -> int:
        """Bytes of an ENUM index or SET bitmask."""
        return self.meta >> 8

    @property
    def prefix(self) -> int:
        """Bytes of a string's length prefix."""
        if self.family == "char":
            return 1 if self.declared_length <= 255 else 2
        if self.family == "varchar":
            return 1 if self.meta <= 255 else 2
        return self.meta

    @property
    def declared_length(self) -> int:
        if self.family == "char":
            byte0, byte1 = self.meta & 0xFF, self.meta >> 8
            return (((byte0 & 0x30) ^ 0x30) << 4) | byte1
        return self.meta


# --- columns ------------------------------------------------------------------------------


def bit_meta(bits: int) -> int:
    return bits % 8 | (bits // 8) << 8


@st.composite
def enum_or_set_columns(draw: st.DrawFn) -> Column:
    if draw(st.booleans()):
        pack = draw(st.sampled_from([1, 2]))
        most = 255 if pack == 1 else 65535
        members = draw(st.one_of(st.none(), st.integers(1, min(most, 300)), st.just(most)))
        return Column("enum", T.STRING, ENUM_BYTE | pack << 8, members=members)
    pack = draw(st.sampled_from([1, 2, 3, 4, 8]))
    members = draw(st.one_of(st.none(), st.integers(1, 8 * pack)))
    return Column("set", T.STRING, SET_BYTE | pack << 8, members=members)


def columns() -> st.SearchStrategy[Column]:
    return st.one_of(
        st.builds(
            lambda column_type, unsigned: Column("int", column_type, 0, unsigned),
            st.sampled_from(list(INTEGER_BYTES)),
            st.booleans(),
        ),
        st.just(Column("float", T.FLOAT, 4)),
        st.just(Column("double", T.DOUBLE, 8)),
        st.integers(1, 65).flatmap(
            lambda precision: st.integers(0, min(precision, 38)).map(
                lambda scale: Column("decimal", T.NEWDECIMAL, precision | scale << 8)
            )
        ),
        st.just(Column("year", T.YEAR)),
        st.integers(1, 64).map(lambda bits: Column("bit", T.BIT, bit_meta(bits))),
        st.sampled_from([Column("date", T.DATE), Column("date", T.NEWDATE)]),
        # The old types: meta 0 is the pre-5.6 format, 1..6 MariaDB 5.3's format whose
        # precision the schema gives (BinlogContext.temporal_precisions).
        st.builds(
            lambda family, fsp: Column(
                family,
                {"time": T.TIME, "datetime": T.DATETIME, "timestamp": T.TIMESTAMP}[family],
                fsp,
            ),
            st.sampled_from(["time", "datetime", "timestamp"]),
            st.integers(0, 6),
        ),  # fmt: skip
        st.builds(
            lambda family, fsp: Column(
                family,
                {"time2": T.TIME2, "datetime2": T.DATETIME2, "timestamp2": T.TIMESTAMP2}[family],
                fsp,
            ),
            st.sampled_from(["time2", "datetime2", "timestamp2"]),
            st.integers(0, 6),
        ),  # fmt: skip
        st.integers(0, 1023).map(
            lambda length: Column("char", T.STRING, string_meta_value(CHAR_BYTE, length))
        ),
        st.builds(
            lambda column_type, length: Column("varchar", column_type, length),
            st.sampled_from([T.VARCHAR, T.VAR_STRING, T.VARCHAR_COMPRESSED]),
            st.one_of(st.integers(1, 600), st.sampled_from([255, 256, 65535])),
        ),
        st.builds(
            lambda column_type, prefix: Column("blob", column_type, prefix),
            st.sampled_from(BLOB_FAMILY),
            st.integers(1, 4),
        ),
        enum_or_set_columns(),
        st.just(Column("null", T.NULL)),
    )


# --- what a column holds (computed from its declaration) -----------------------------------


def integer_range(column: Column) -> tuple[int, int]:
    bits = 8 * INTEGER_BYTES[column.column_type]
    if column.unsigned:
        return 0, (1 << bits) - 1
    return -(1 << (bits - 1)), (1 << (bits - 1)) - 1


def float32_exact(number: float) -> bool:
    try:
        return bool(struct.unpack("<f", struct.pack("<f", number))[0] == number)
    except (OverflowError, struct.error):  # beyond float32's range
        return False


def odd_integers(mantissa_bits: int) -> st.SearchStrategy[int]:
    """Integers that need more significant bits than a float's mantissa holds."""
    return st.builds(
        lambda odd, shift, sign: sign * (odd << shift),
        st.integers(2**mantissa_bits, 2**70).map(lambda number: 2 * number + 1),
        st.integers(0, 30),
        st.sampled_from([1, -1]),
    )


def fraction_units(fsp: int) -> st.SearchStrategy[int]:
    """Microseconds with at most ``fsp`` significant fraction digits."""
    step = 10 ** (6 - fsp)
    return st.one_of(
        st.integers(0, MICRO // step - 1).map(lambda units: units * step),
        st.sampled_from([0, MICRO - step]),
    )


def longer_fraction(fsp: int) -> st.SearchStrategy[int]:
    """Microseconds in 0..999999 with a non-zero digit beyond ``fsp`` digits."""
    step = 10 ** (6 - fsp)
    return st.integers(1, MICRO - 1).filter(lambda micro: micro % step != 0)


def bad_fraction(fsp: int) -> st.SearchStrategy[int]:
    """Microseconds no column of precision ``fsp`` holds."""
    beyond = st.one_of(st.integers(MICRO, 10 * MICRO), st.integers(-MICRO, -1))
    return beyond if fsp == 6 else st.one_of(longer_fraction(fsp), beyond)


def times(hours: int, minutes: int, seconds: int, fsp: int) -> st.SearchStrategy[Time]:
    """TIME values up to the given field limits, never a negative zero."""
    return st.builds(
        Time,
        st.booleans(),
        st.integers(0, hours),
        st.integers(0, minutes),
        st.integers(0, seconds),
        fraction_units(fsp),
    ).filter(lambda value: not value.negative or any(value[1:]))


def byte_strings(column: Column) -> st.SearchStrategy[bytes]:
    """Values up to what the length prefix holds: longer than a declared CHAR/VARCHAR length
    too (the prefix tells the length, and the decoder gives them back)."""
    limit = (1 << (8 * column.prefix)) - 1
    most = min(limit, max(column.declared_length, 0) + 300, 2000)
    return st.one_of(st.binary(max_size=most), st.just(b"\xff" * min(limit, 2000)))


def holdable(column: Column) -> st.SearchStrategy[Any]:
    """Values the column holds exactly, in the form the decoder gives them back."""
    family, fsp = column.family, column.fsp
    if family == "int":
        low, high = integer_range(column)
        return st.one_of(st.integers(low, high), st.sampled_from([low, high, 0]))
    if family == "float":
        return st.one_of(st.floats(width=32, allow_nan=False), st.integers(-(2**24), 2**24))
    if family == "double":
        return st.one_of(st.floats(allow_nan=False), st.integers(-(2**53), 2**53))
    if family == "decimal":
        precision, scale = column.meta & 0xFF, column.meta >> 8

        def decimals(drop: int) -> st.SearchStrategy[Decimal]:
            # ``drop`` fewer fraction digits than the scale: still exact (1.5 in a scale of 2).
            most = (10**precision - 1) // 10**drop
            return st.builds(
                lambda sign, units: Decimal(f"{sign}{units}E-{scale - drop}"),
                st.sampled_from(["", "-"]),
                st.one_of(st.integers(0, most), st.just(most)),
            )

        whole = 10 ** (precision - scale) - 1
        return st.one_of(st.integers(0, scale).flatmap(decimals), st.integers(-whole, whole))
    if family == "year":
        return st.one_of(st.just(0), st.integers(1901, 2155))
    if family == "bit":
        return st.one_of(st.integers(0, (1 << column.bits) - 1), st.just((1 << column.bits) - 1))
    if family == "date":
        # Bits: day 5, month 4, year 15 (month 13..15 and day 0 are the server's oddities).
        return st.builds(Date, st.integers(0, (1 << 15) - 1), st.integers(0, 15),
                         st.integers(0, 31))  # fmt: skip
    if family == "time" and fsp == 0:
        # hhmmss as a 24-bit signed number: minute and second up to 99.
        edges = st.sampled_from([Time(True, 838, 59, 59), Time(False, 838, 83, 99)])
        return st.one_of(times(837, 99, 99, 0), edges)
    if family == "time":
        # Positive TIME(n) values go up to what MariaDB reads or the bytes hold (TIME(5) has
        # the 5 bytes of TIME(4) for ten times the units: 2215:11:56).
        most = HIRES_TIME_MAX_HOUR if fsp != 5 else 2214
        return st.one_of(times(838, 59, 59, fsp), st.just(Time(False, most, 59, 59)))
    if family == "datetime":
        if fsp == 0:
            fields = [st.integers(0, 99)] * 5
            return st.one_of(
                st.builds(DateTime, st.integers(0, 9999), *fields, st.just(0)),
                st.just(DateTime(OLD_DATETIME_MAX_YEAR, 72, 95, 99, 99, 99)),
            )
        return st.builds(DateTime, st.integers(0, 9999), st.integers(0, 12),
                         st.integers(0, 31), st.integers(0, 23), st.integers(0, 59),
                         st.integers(0, 59), fraction_units(fsp))  # fmt: skip
    if family == "timestamp":
        return st.builds(Timestamp, st.integers(0, TIMESTAMP_MAX),
                         fraction_units(fsp) if fsp else st.just(0))  # fmt: skip
    if family == "datetime2":
        # Bits: year*13+month 17, day 5, hour 5, minute 6, second 6 (minute 61 included).
        return st.builds(DateTime, st.integers(0, 10081), st.integers(0, 12),
                         st.integers(0, 31), st.integers(0, 31), st.integers(0, 63),
                         st.integers(0, 63), fraction_units(fsp))  # fmt: skip
    if family == "timestamp2":
        return st.builds(Timestamp, st.integers(0, TIMESTAMP_MAX), fraction_units(fsp))
    if family == "time2":
        return times(TIME2_MAX_HOUR, 63, 63, fsp)
    if family in ("char", "varchar", "blob"):
        return byte_strings(column)
    if family == "enum":
        # Index 0 is what the server writes for an invalid value ('').
        top = (1 << (8 * column.pack_length)) - 1
        return st.integers(0, top if column.members is None else column.members)
    if family == "set":
        top = 8 * column.pack_length if column.members is None else column.members
        return st.integers(0, (1 << top) - 1)
    assert family == "null"
    return st.just(b"")


def wrong_types(*kinds: str) -> st.SearchStrategy[Any]:
    pool: dict[str, st.SearchStrategy[Any]] = {
        "str": st.text(max_size=5),
        "bytes": st.binary(max_size=5),
        "float": st.floats(),
        "decimal": st.decimals(allow_nan=False, allow_infinity=False, places=2),
        "date": st.just(Date(2020, 1, 2)),
        "list": st.lists(st.integers(0, 3), max_size=2),
    }
    return st.one_of([pool[kind] for kind in kinds])


def not_holdable(column: Column) -> st.SearchStrategy[Any]:
    """Values the column cannot hold exactly."""
    family, fsp = column.family, column.fsp
    if family == "int":
        low, high = integer_range(column)
        other = (1 << (8 * INTEGER_BYTES[column.column_type])) - 1 if not column.unsigned else -1
        return st.one_of(
            st.integers(high + 1, high + (1 << 70)),
            st.integers(low - (1 << 70), low - 1),
            st.just(other),  # in the other signedness's range: it would come back changed
            st.integers(-5, 5).map(float),
            wrong_types("str", "bytes", "decimal"),
        )
    if family == "float":
        return st.one_of(
            # The next double after a float32 is not one (a double has 29 more mantissa bits).
            st.floats(width=32, allow_nan=False, allow_infinity=False)
            .filter(lambda number: abs(number) < 3e38)
            .map(lambda number: math.nextafter(number, math.inf)),
            st.floats(min_value=3.5e38, allow_infinity=False).flatmap(
                lambda number: st.sampled_from([number, -number])
            ),
            odd_integers(24),
            wrong_types("str", "bytes", "decimal"),
        )
    if family == "double":
        return st.one_of(
            odd_integers(53),
            st.integers(2**1024, 2**1100),
            wrong_types("str", "bytes", "decimal"),
        )
    if family == "decimal":
        precision, scale = column.meta & 0xFF, column.meta >> 8
        sign = st.sampled_from(["", "-"])
        too_precise = st.builds(
            lambda s, whole, extra: Decimal(f"{s}{whole}.{extra}"),
            sign,
            st.integers(0, 10 ** (precision - scale) - 1),
            st.integers(1, 9999)
            .map(lambda digits: "0" * scale + str(digits))
            .filter(lambda text: not text.endswith("0")),
        )
        too_large = st.builds(
            lambda s, whole: Decimal(f"{s}{whole}"),
            sign,
            st.integers(10 ** (precision - scale), 10 ** (precision - scale + 3)),
        )
        return st.one_of(
            too_precise,
            too_large,
            too_large.map(int),
            st.sampled_from(
                [
                    Decimal("NaN"),
                    Decimal("-Infinity"),
                    Decimal("sNaN"),
                    Decimal("1E+999999999"),
                    Decimal("1E-999999999"),
                    "1.2.3",
                    "abc",
                    "",
                    True,
                ]
            ),  # fmt: skip
            wrong_types("float", "bytes", "date"),
        )
    if family == "year":
        return st.one_of(
            st.integers(1, 1900),
            st.integers(2156, 10**6),
            st.integers(-(10**6), -1),
            st.sampled_from([2000.0, "2000", Decimal(2000)]),
        )
    if family == "bit":
        width = column.bits
        return st.one_of(
            st.integers(1 << width, (1 << width) + (1 << 70)),
            st.integers(-(1 << 70), -1),
            wrong_types("float", "bytes", "str"),
        )
    if family == "date":
        return st.one_of(
            st.builds(Date, st.integers(1 << 15, 1 << 20), st.just(1), st.just(1)),
            st.builds(Date, st.just(2020), st.integers(16, 300), st.just(1)),
            st.builds(Date, st.just(2020), st.just(1), st.integers(32, 300)),
            st.builds(Date, st.just(2020), st.integers(-3, -1), st.just(1)),
            # A time of day would be dropped.
            st.builds(DateTime, st.just(2020), st.just(1), st.just(2), st.integers(1, 23)),
            st.builds(
                dt.datetime,
                st.just(2020),
                st.just(1),
                st.just(2),
                st.just(0),
                st.just(0),
                st.just(0),
                st.integers(1, MICRO - 1),
            ),  # fmt: skip
            wrong_types("str", "float"),
            st.just(Time(False, 1, 2, 3)),
        )
    if family == "time":
        limits = (100, 100) if fsp == 0 else (60, 60)
        negative_zero = st.just(Time(True, 0, 0, 0, 0))
        return st.one_of(
            negative_zero,
            st.builds(
                Time,
                st.booleans(),
                st.integers(0, 838),
                st.integers(0, 59),
                st.integers(0, 59),
                bad_fraction(fsp),
            ),  # fmt: skip
            st.builds(
                Time, st.booleans(), st.just(1), st.integers(limits[0], 1000), st.just(0)
            ),  # fmt: skip
            st.builds(
                Time, st.booleans(), st.just(1), st.just(0), st.integers(limits[1], 1000)
            ),  # fmt: skip
            st.builds(
                Time,
                st.booleans(),
                st.integers(839, 10**4) if fsp == 0 else st.integers(1 << 32, 1 << 40),
                st.just(0),
                st.just(0),
            ),  # fmt: skip
            st.builds(
                Time,
                st.just(False),
                st.integers(HIRES_TIME_MAX_HOUR + 1, 10**5) if fsp else st.just(10**4),
                st.just(0),
                st.just(0),
            ),  # fmt: skip
            # The issue's case as a timedelta (or one beyond the range when it fits).
            st.just(
                -dt.timedelta(hours=838, minutes=59, seconds=59, microseconds=999999)
                if fsp < 6
                else -dt.timedelta(days=10**6)
            ),
            wrong_types("str", "float", "date"),
        )
    if family == "datetime":
        fields = st.builds(
            DateTime, st.integers(0, 9999), st.integers(0, 12), st.integers(0, 28),
            st.integers(0, 23), st.integers(0, 59), st.integers(0, 59),
        )  # fmt: skip
        # The old format is decimal digits (two per field); MariaDB 5.3's a mixed radix.
        limits = (
            dict.fromkeys(["month", "day", "hour", "minute", "second"], 100)
            if fsp == 0
            else {"month": 13, "day": 32, "hour": 24, "minute": 60, "second": 60}
        )
        too_big = st.sampled_from(sorted(limits.items())).flatmap(
            lambda item: st.integers(item[1], item[1] + 300).map(
                lambda number: DateTime(2020, 1, 1)._replace(**{item[0]: number})
            )
        )
        # Beyond what MariaDB reads: a 32-bit YYYYMMDD, a 63-bit count of microseconds.
        too_late = (
            st.integers(OLD_DATETIME_MAX_YEAR + 1, 10**7).map(lambda year: DateTime(year, 1, 1))
            if fsp == 0
            else st.integers(256616, 10**6).map(lambda year: DateTime(year, 1, 1))
        )
        return st.one_of(
            fields.flatmap(
                lambda value: bad_fraction(fsp).map(lambda micro: value._replace(microsecond=micro))
            ),
            too_big,
            too_late,
            st.just(dt.datetime(2020, 1, 2, 3, 4, 5, tzinfo=UTC)),
            st.just(Date(2020, 1, 2)),
            wrong_types("str", "float"),
        )
    if family == "timestamp":
        return st.one_of(
            st.builds(Timestamp, st.integers(0, TIMESTAMP_MAX), bad_fraction(fsp)),
            st.builds(Timestamp, st.integers(TIMESTAMP_MAX + 1, 1 << 40)),
            st.builds(Timestamp, st.integers(-(1 << 40), -1)),
            st.just(dt.datetime(2020, 1, 2, tzinfo=UTC)),
            wrong_types("str", "float"),
        )
    if family == "datetime2":
        base = DateTime(2020, 1, 1)
        return st.one_of(
            st.builds(lambda micro: base._replace(microsecond=micro), bad_fraction(fsp)),
            st.builds(lambda month: base._replace(month=month), st.integers(13, 300)),
            st.builds(lambda day: base._replace(day=day), st.integers(32, 300)),
            st.builds(lambda hour: base._replace(hour=hour), st.integers(32, 300)),
            st.builds(lambda minute: base._replace(minute=minute), st.integers(64, 300)),
            st.builds(lambda second: base._replace(second=second), st.integers(64, 300)),
            st.builds(lambda year: base._replace(year=year), st.integers(10083, 10**6)),
            st.builds(lambda hour: base._replace(hour=hour), st.integers(-5, -1)),
            st.just(dt.datetime(2020, 1, 2, 3, 4, 5, tzinfo=UTC)),
            st.just(Date(2020, 1, 2)),
            wrong_types("str", "float"),
        )
    if family == "timestamp2":
        return st.one_of(
            st.builds(Timestamp, st.integers(0, TIMESTAMP_MAX), bad_fraction(fsp)),
            st.builds(Timestamp, st.integers(TIMESTAMP_MAX + 1, 1 << 40)),
            st.builds(Timestamp, st.integers(-(1 << 40), -1)),
            st.just(DateTime(2020, 1, 2)),
            wrong_types("str", "float"),
        )
    if family == "time2":
        return st.one_of(
            st.just(Time(True, 0, 0, 0, 0)),
            st.builds(
                Time,
                st.booleans(),
                st.integers(0, 838),
                st.integers(0, 59),
                st.integers(0, 59),
                bad_fraction(fsp),
            ),  # fmt: skip
            st.builds(
                Time,
                st.booleans(),
                st.integers(TIME2_MAX_HOUR + 1, 1 << 20),
                st.just(0),
                st.just(0),
            ),  # fmt: skip
            st.builds(Time, st.booleans(), st.just(1), st.integers(64, 300), st.just(0)),
            st.builds(Time, st.booleans(), st.just(1), st.just(0), st.integers(64, 300)),
            st.just(
                -dt.timedelta(hours=838, minutes=59, seconds=59, microseconds=999999)
                if fsp < 6
                else dt.timedelta(days=1000)
            ),
            wrong_types("str", "float", "date"),
        )
    if family in ("char", "varchar", "blob"):
        limit = (1 << (8 * column.prefix)) - 1
        too_long = (
            st.integers(limit + 1, limit + 300).map(lambda size: b"x" * size)
            if column.prefix <= 2
            else st.nothing()
        )
        return st.one_of(
            too_long,
            st.text(max_size=20),  # str: its charset is not the encoder's to choose
            st.just("café"),
            wrong_types("float", "list"),
            st.integers(0, 9),
        )
    if family == "enum":
        top = (1 << (8 * column.pack_length)) - 1
        beyond = (
            st.integers(column.members + 1, top + 10)
            if column.members is not None
            else st.integers(top + 1, top + 1000)
        )
        return st.one_of(
            beyond, st.integers(-1000, -1), wrong_types("float", "bytes", "str"), st.just(b"m1")
        )
    if family == "set":
        width = 8 * column.pack_length
        top = width if column.members is None else column.members
        beyond = st.builds(
            lambda low, bit: low | 1 << bit,
            st.integers(0, (1 << top) - 1),
            st.integers(top, width + 8),
        )
        return st.one_of(
            beyond, st.integers(-1000, -1), wrong_types("float", "bytes", "str", "list")
        )
    assert family == "null"
    return st.one_of(st.binary(min_size=1, max_size=5), st.integers(), st.just(""))


# --- single values ------------------------------------------------------------------------


def same_value(decoded: Any, value: Any) -> bool:
    if isinstance(value, float) and value == 0:
        return isinstance(decoded, float) and math.copysign(1, decoded) == math.copysign(1, value)
    return bool(decoded == value)


def encode(column: Column, value: Any) -> bytes:
    return encode_value(column.column_type, column.meta, value, column.unsigned, column.members)


@given(columns().flatmap(lambda column: st.tuples(st.just(column), holdable(column))))
def test_a_value_the_column_holds_comes_back_equal(case: tuple[Column, Any]) -> None:
    column, value = case
    raw = encode(column, value)
    decoded, end = decode_value(column.column_type, column.meta, raw + b"\xaa", 0, column.unsigned)
    assert end == len(raw)
    assert same_value(decoded, value)
    assert encode(column, decoded) == raw


@given(columns().flatmap(lambda column: st.tuples(st.just(column), not_holdable(column))))
def test_a_value_the_column_cannot_hold_is_an_encode_error(case: tuple[Column, Any]) -> None:
    column, value = case
    with pytest.raises(EncodeError) as caught:
        encode(column, value)
    assert caught.value.value is value
    assert repr(value)[:40] in str(caught.value)


def test_the_issue_examples() -> None:
    # -838:59:59.999000 in a TIME(0) of either format (issue #6) and in a DATETIME2(0).
    value = Time(True, 838, 59, 59, 999000)
    for column_type in (T.TIME2, T.TIME):
        with pytest.raises(EncodeError, match=r"cannot hold .*999000.*the column has none"):
            encode_value(column_type, 0, value)
    assert decode_value(T.TIME, 3, encode_value(T.TIME, 3, value))[0] == value
    with pytest.raises(EncodeError, match=r"\.999999 have more than 3 digits"):
        encode_value(T.DATETIME2, 3, DateTime(2020, 1, 1, microsecond=999999))


def test_special_floats_are_kept() -> None:
    for column_type, meta in ((T.FLOAT, 4), (T.DOUBLE, 8)):
        assert math.isnan(decode_value(column_type, meta, encode_value(column_type, meta,
                                                                         math.nan))[0])  # fmt: skip
        for number in (math.inf, -math.inf, -0.0):
            assert same_value(
                decode_value(column_type, meta, encode_value(column_type, meta, number))[0],
                number,
            )


def test_a_three_byte_length_prefix_holds_at_most_16_mib() -> None:
    limit = (1 << 24) - 1
    value = bytes(limit)
    assert decode_value(T.BLOB, 3, encode_value(T.BLOB, 3, value))[0] == value
    with pytest.raises(EncodeError, match=f"{limit + 1} bytes, its 3-byte length holds at most"):
        encode_value(T.BLOB, 3, value + b"x")


def test_standard_library_forms_keep_every_field() -> None:
    moment = dt.datetime(2023, 5, 7, 1, 2, 3, 456000)
    decoded = decode_value(T.DATETIME2, 3, encode_value(T.DATETIME2, 3, moment))[0]
    assert decoded.to_datetime() == moment
    delta = -dt.timedelta(hours=16, minutes=8, seconds=4, milliseconds=250)
    assert decode_value(T.TIME2, 2, encode_value(T.TIME2, 2, delta))[0].to_timedelta() == delta
    day = dt.date(2023, 5, 7)
    assert decode_value(T.DATE, 0, encode_value(T.DATE, 0, day))[0].to_date() == day
    # A DATE at midnight loses nothing; a decimal string is read exactly.
    assert decode_value(T.DATE, 0, encode_value(T.DATE, 0, dt.datetime(2023, 5, 7)))[0] == Date(
        2023, 5, 7
    )
    meta = 10 | 2 << 8
    assert decode_value(T.NEWDECIMAL, meta, encode_value(T.NEWDECIMAL, meta, "-1.5"))[0] == (
        Decimal("-1.50")
    )


# --- in rows events -----------------------------------------------------------------------


def member_lists(count: int) -> tuple[bytes, ...]:
    return tuple(b"m%d" % index for index in range(count))


@dataclass(frozen=True)
class Table:
    columns: tuple[Column, ...]
    names: tuple[bytes, ...] | None

    def table_map(self) -> TableMapEvent:
        fields: list[MetadataField] = []
        numeric = [c.unsigned for c in self.columns if c.column_type in NUMERIC_TYPES]
        if numeric:
            fields.append(MetadataField(M.SIGNEDNESS, tuple(numeric)))
        if self.names is not None:
            fields.append(MetadataField(M.COLUMN_NAME, self.names))
        for family, kind in (("set", M.SET_STR_VALUE), ("enum", M.ENUM_STR_VALUE)):
            lists = [member_lists(c.members or 0) for c in self.columns if c.family == family]
            if lists and self.names is not None:
                fields.append(MetadataField(kind, tuple(lists)))
        return TableMapEvent(
            table_id=7,
            database="d",
            table="t",
            column_types=tuple(c.column_type for c in self.columns),
            column_meta=tuple(0 if c.family in OLD_TEMPORAL else c.meta for c in self.columns),
            nullable=(True,) * len(self.columns),
            optional_metadata=tuple(fields),
        )

    def precisions(self) -> dict[tuple[str, str], tuple[int, ...]]:
        """The schema's precisions of the old TIME/DATETIME/TIMESTAMP columns (5.3 format)."""
        return {("d", "t"): tuple(c.meta for c in self.columns)}


def table_column(column: Column, full: bool) -> Column:
    """The column as a table of this metadata level describes it: with FULL metadata every
    ENUM/SET column has its member list (at most 300 here), without it none has."""
    if column.family in ("enum", "set"):
        return replace(column, members=min(column.members or 3, 300) if full else None)
    return column


@st.composite
def tables_with_a_bad_value(draw: st.DrawFn) -> tuple[Table, int, Any, tuple[Any, ...]]:
    full = draw(st.booleans())
    drawn = draw(st.lists(columns(), min_size=1, max_size=6))
    cols = tuple(table_column(column, full) for column in drawn)
    names = (
        tuple(draw(st.sampled_from([b"c%d" % i, "prix_\u20ac%d".encode() % i]))
              for i in range(len(cols)))
        if full
        else None
    )  # fmt: skip
    bad = draw(st.integers(0, len(cols) - 1))
    row = tuple(
        draw(not_holdable(column)) if index == bad else draw(st.none() | holdable(column))
        for index, column in enumerate(cols)
    )
    return Table(cols, names), bad, row[bad], row


def rows_event(table: Table, rows: tuple[Any, ...]) -> WriteRowsEvent:
    width = len(table.columns)
    present = ((1 << width) - 1).to_bytes((width + 7) >> 3, "little")
    return WriteRowsEvent(table_id=7, width=width, columns_present=present, rows=rows)


def table_context(table: Table) -> BinlogContext:
    ctx = BinlogContext(temporal_precisions=table.precisions())
    encode_event(table.table_map(), ctx)
    return ctx


def check_names_the_column(
    error: EncodeError, table: Table, bad: int, value: Any, where: str
) -> None:
    message = str(error)
    assert error.value is value
    assert error.column == bad
    name = None if table.names is None else table.names[bad].decode()
    assert error.column_name == name
    expected = f"{where}, column {bad}" + ("" if name is None else f" `{name}`") + ": "
    assert message.startswith(expected), message
    assert repr(value)[:40] in message


@settings(suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(tables_with_a_bad_value(), st.data())
def test_a_rows_event_names_the_column_and_value(
    case: tuple[Table, int, Any, tuple[Any, ...]], data: st.DataObject
) -> None:
    table, bad, value, row = case
    ctx = table_context(table)
    before = tuple(data.draw(st.none() | holdable(column)) for column in table.columns)
    # The first time a bitmap is seen the checked writer runs.
    with pytest.raises(EncodeError) as caught:
        encode_event(rows_event(table, (before, row)), ctx)
    check_names_the_column(caught.value, table, bad, value, "row 1")
    # From the second time on a compiled writer runs: it must refuse the same value, with NULLs
    # in the row or without.
    encode_event(rows_event(table, (before,)), ctx)
    for other in (row, tuple(v if i == bad else None for i, v in enumerate(row))):
        with pytest.raises(EncodeError) as caught:
            encode_event(rows_event(table, (before, other)), ctx)
        check_names_the_column(caught.value, table, bad, value, "row 1")
    # An UPDATE's after image.
    width = len(table.columns)
    present = ((1 << width) - 1).to_bytes((width + 7) >> 3, "little")
    update = UpdateRowsEvent(table_id=7, width=width, columns_present=present,
                             columns_present_after=present, rows=((before, row),))  # fmt: skip
    with pytest.raises(EncodeError) as caught:
        encode_event(update, ctx)
    check_names_the_column(caught.value, table, bad, value, "row 0 after")
    # The good rows still round-trip through a stream that had the errors.
    decoding = BinlogContext(temporal_precisions=table.precisions())
    decode_event(encode_event(table.table_map(), BinlogContext()), decoding)
    decoded = decode_event(encode_event(rows_event(table, (before,)), ctx), decoding)
    assert all(same_value(d, v) for d, v in zip(decoded.rows[0], before, strict=True))


def test_partial_images_name_the_column_too() -> None:
    table = Table(
        (Column("int", T.LONG), Column("time2", T.TIME2, 0), Column("varchar", T.VARCHAR, 10)),
        (b"id", b"t", b"v"),
    )
    ctx = table_context(table)
    event = WriteRowsEvent(
        table_id=7, width=3, columns_present=b"\x06", rows=((ABSENT, Time(False, 1, 0, 0, 5), b""),)
    )
    for _ in range(3):  # checked, then compiled writers
        with pytest.raises(EncodeError, match=r"^row 0, column 1 `t`: TIME2\(0\) cannot hold"):
            encode_event(event, ctx)


# --- build on the command line ------------------------------------------------------------


def run_module(*argv: str, cwd: Path) -> subprocess.CompletedProcess[str]:
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
        cwd=cwd,
        timeout=300,
        check=False,
    )


def has_fraction(cell: Any) -> bool:
    """Whether a JSON-form TIME/DATETIME/TIMESTAMP value has fractional seconds."""
    if not isinstance(cell, dict):
        return False
    if "timestamp" in cell:
        return bool(cell["timestamp"][1])
    text = cell.get("time") or cell.get("datetime") or ""
    return bool(text.rpartition(".")[2].strip("0"))


GOLDEN_53 = REPO / "tests" / "golden" / "binlogs" / "full_metadata" / "mysql-bin.000001"
HINT_53 = "--temporal-precision=fm.t_temporal_old=0,0,3,6,0,3,6,0,3,6"


def test_build_without_the_precisions_refuses_the_fractions(tmp_path: Path) -> None:
    """dump --json of a real server's file with MariaDB 5.3-format columns, then build without
    --temporal-precision: the fractions have nowhere to go, so no file is written."""
    dumped = run_module("dump", "--json", HINT_53, str(GOLDEN_53), cwd=tmp_path)
    assert (dumped.returncode, dumped.stderr) == (0, "")
    events = tmp_path / "events.jsonl"
    events.write_text(dumped.stdout, encoding="utf-8")
    # Where the first fraction in an old TIME/DATETIME/TIMESTAMP column is, from the JSON.
    tables: dict[int, tuple[list[int], list[str]]] = {}
    expected = None
    for number, line in enumerate(dumped.stdout.splitlines(), 1):
        obj = json.loads(line)
        if obj["type"] == "TABLE_MAP":
            named = [f["value"] for f in obj["optional_metadata"] if f["kind"] == M.COLUMN_NAME]
            tables[obj["table_id"]] = (obj["column_types"], [n["b"] for n in named[0]])
        if "rows" not in obj or expected is not None:
            continue
        types, names = tables[obj["table_id"]]
        for row_index, row in enumerate(obj["rows"]):
            hits = [
                column
                for column, cell in enumerate(row)
                if types[column] in (T.TIME, T.DATETIME, T.TIMESTAMP) and has_fraction(cell)
            ]
            if hits:
                expected = (number, obj["type"], obj["offset"], row_index, hits[0], names[hits[0]])
                break
    assert expected is not None
    number, type_name, offset, row_index, column, name = expected
    output = tmp_path / "rebuilt.000001"
    built = run_module("build", str(events), "-o", str(output), cwd=tmp_path)
    assert built.returncode == 1
    assert "Traceback" not in built.stderr and built.stderr.count("\n") == 1
    assert built.stderr.startswith(
        f"error: {events}:{number} ({type_name}), event {number} at offset {offset}: "
        f"row {row_index}, column {column} `{name}`: "
    )
    assert "the column has none" in built.stderr and "--temporal-precision" in built.stderr
    assert not output.exists()
    # With the precisions it is the real server's file again.
    built = run_module("build", HINT_53, str(events), "-o", str(output), cwd=tmp_path)
    assert (built.returncode, built.stderr) == (0, "")
    assert output.read_bytes() == GOLDEN_53.read_bytes()


def test_build_names_the_event_column_and_value(tmp_path: Path) -> None:
    head = [
        {"type": "FORMAT_DESCRIPTION"},
        {"type": "TABLE_MAP", "table_id": 5, "database": "d", "table": "t",
         "column_types": [T.LONG, T.TIME2], "column_meta": [0, 0], "nullable": [False, True],
         "optional_metadata": [{"kind": M.COLUMN_NAME, "value": [{"b": "id"}, {"b": "t"}]}]},
    ]  # fmt: skip
    rows = {
        "type": "WRITE_ROWS_V1", "table_id": 5, "width": 2, "columns_present": {"hex": "03"},
        "rows": [[1, {"time": "01:00:00"}], [2, {"time": "-838:59:59.999000"}]],
    }  # fmt: skip
    prefix = tmp_path / "head.jsonl"
    prefix.write_text("".join(json.dumps(obj) + "\n" for obj in head), encoding="utf-8")
    head_file = tmp_path / "head.000001"
    assert run_module("build", str(prefix), "-o", str(head_file), cwd=tmp_path).returncode == 0
    offset = head_file.stat().st_size  # where the rows event starts
    events = tmp_path / "events.jsonl"
    events.write_text(prefix.read_text(encoding="utf-8") + json.dumps(rows) + "\n", "utf-8")
    output = tmp_path / "out.000001"
    built = run_module("build", str(events), "-o", str(output), cwd=tmp_path)
    assert built.returncode == 1
    assert built.stderr == (
        f"error: {events}:3 (WRITE_ROWS_V1), event 3 at offset {offset}: row 1, column 1 `t`: "
        "TIME2(0) cannot hold Time(negative=True, hour=838, minute=59, second=59, "
        "microsecond=999000): fractional seconds .999000: the column has none in WRITE_ROWS_V1\n"
    )
    assert not output.exists()
