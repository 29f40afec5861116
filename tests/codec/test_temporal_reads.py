"""The decoder reads a temporal value's bytes as MariaDB 10.11 reads them, or refuses them.

The model of what MariaDB reads is ``tests/support/mariadb_reads.py`` (from ``sql/compat56.cc``
and ``sql/field.cc``, checked against a real replica by
``tests/integration/test_temporal_edges.py``). For any bytes of any temporal column: the decoder
gives exactly the model's reading, or raises DecodeError -- and then the model's reading is not
a value those bytes encode (MariaDB reads them as another value, or as one the encoder
refuses), so refusing them loses nothing a replica would see. The encoder, in turn, refuses the
values whose bytes MariaDB would read otherwise.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from decoder.values import column_reader, decode_value
from encoder.values import encode_value
from fakemaster.vocabulary.constants import ColumnType as T
from fakemaster.vocabulary.errors import DecodeError, EncodeError
from fakemaster.vocabulary.values import DateTime, Time, Timestamp
from scenarios.strategies.rows import values_for
from tests.budget import examples
from tests.support.mariadb_reads import Reading, Timeval, read, value_of

FSPS = range(7)
# (column type, precision): TIME/DATETIME/TIMESTAMP with a precision are MariaDB 5.3's format.
COLUMNS = [
    *((column_type, fsp) for column_type in (T.TIME2, T.DATETIME2, T.TIMESTAMP2) for fsp in FSPS),
    *((column_type, fsp) for column_type in (T.TIME, T.DATETIME, T.TIMESTAMP) for fsp in FSPS),
    (T.DATE, 0),
    (T.YEAR, 0),
]


def encodes_to(column_type: int, fsp: int, reading: Reading | Timeval | None, raw: bytes) -> bool:
    """Whether MariaDB's reading of ``raw`` is a value that the encoder writes as ``raw``."""
    if reading is None:
        return False
    try:
        return encode_value(column_type, fsp, value_of(column_type, reading)) == raw
    except EncodeError:
        return False


@st.composite
def column_bytes(draw: st.DrawFn) -> tuple[int, int, bytes]:
    """A column and bytes of its size: any bytes, or those of a valid value with one byte
    changed (near the canonical values, where most of the edges are)."""
    column_type, fsp = draw(st.sampled_from(COLUMNS))
    size = column_reader(column_type, fsp).size
    if draw(st.booleans()):
        return column_type, fsp, draw(st.binary(min_size=size, max_size=size))
    raw = bytearray(encode_value(column_type, fsp, draw(values_for(column_type, fsp))))
    raw[draw(st.integers(0, size - 1))] = draw(st.integers(0, 255))
    return column_type, fsp, bytes(raw)


@settings(max_examples=examples(8))  # cheap, and a fuzz target
@given(column_bytes())
def test_the_decoder_reads_what_mariadb_reads_or_refuses(case: tuple[int, int, bytes]) -> None:
    column_type, fsp, raw = case
    reading = read(column_type, fsp, raw)
    try:
        decoded, end = decode_value(column_type, fsp, raw)
    except DecodeError:
        assert not encodes_to(column_type, fsp, reading, raw), (raw.hex(), reading)
        return
    assert end == len(raw)
    assert reading is not None, f"MariaDB keeps no TIMESTAMP {raw.hex()}, decoded {decoded}"
    if isinstance(reading, Reading) and column_type not in (T.TIME, T.TIME2):
        assert not reading.negative, f"MariaDB reads {raw.hex()} as a negative date"
    assert decoded == value_of(column_type, reading)


# Bytes and what MariaDB 10.11 read from them, as seen on a real replica (the SQL functions
# YEAR() .. MICROSECOND() and UNIX_TIMESTAMP(); tests/integration/test_temporal_edges.py).
REAL_READINGS: list[tuple[int, int, str, Any]] = [
    (T.TIME2, 0, "c05042", Time(False, 5, 1, 2)),  # 1029:01:02 spelled; hours are 10 bits
    (T.TIME2, 6, "3fafbe000000", Time(True, 5, 1, 2)),
    (T.TIME2, 0, "000000", Time(True, 0, 0, 0)),
    (T.TIME2, 2, "800005ff", Time(False, 0, 0, 5, 2_550_000)),
    (T.DATETIME2, 1, "99b2caa51e80", DateTime(2024, 3, 5, 10, 20, 29, 15_497_216)),
    (T.DATETIME2, 3, "99b2caa500ffff", DateTime(2024, 3, 5, 10, 19, 63, 16_777_116)),
    (T.DATETIME2, 6, "99b2caa51e7fffff", DateTime(2024, 3, 5, 10, 20, 30, 8_388_607)),
    (T.DATETIME, 0, "00c42ba140420f00", DateTime(0, 27, 4, 0, 0, 0)),  # year 429497 spelled
    (T.DATETIME, 0, "0000000000000080", DateTime(221771, 49, 54, 429419, 14, 88)),
    (T.DATETIME, 0, "ffffffffffffffff", DateTime(0, 0, 0, 429496, 72, 95)),
    (T.TIME, 6, "2373f06ebb83", Time(False, 5, 1, 2, 3)),  # 9989 hours spelled
    (T.TIME, 1, "ffffffff", Time(False, 8641, 38, 49, 500000)),
    (T.DATETIME, 1, "ffffffffffff", DateTime(243333, 6, 21, 14, 59, 13, 603232)),
    (T.DATETIME, 3, "ffffffffffffff", DateTime(48115, 4, 30, 8, 15, 10, 271464)),
    (T.DATETIME, 6, "ffffffffffffffff", DateTime(0, 0, 0, 0, 0, 0, 1)),
]


@pytest.mark.parametrize(("column_type", "fsp", "hex_bytes", "seen"), REAL_READINGS)
def test_the_model_gives_what_a_real_replica_read(
    column_type: int, fsp: int, hex_bytes: str, seen: Any
) -> None:
    reading = read(column_type, fsp, bytes.fromhex(hex_bytes))
    assert reading is not None
    assert value_of(column_type, reading) == seen
    # None of these bytes decodes: each is read as another value than it spells.
    with pytest.raises(DecodeError):
        decode_value(column_type, fsp, bytes.fromhex(hex_bytes))


@pytest.mark.parametrize(
    ("column_type", "fsp", "hex_bytes"),
    [
        (T.TIMESTAMP2, 0, "80000000"),  # a replica reads 2038-01-19 03:14:07
        (T.TIMESTAMP2, 6, "ffffffff0f423f"),
        (T.TIMESTAMP2, 1, "000f4240ff"),  # .9 (the most of TIMESTAMP(1)), not 2.55 s
        (T.TIMESTAMP2, 3, "000f42408000"),
        (T.TIMESTAMP, 0, "00000080"),  # a replica refuses the row
        (T.TIMESTAMP, 3, "0000000503e8"),
    ],
)
def test_timestamps_mariadb_does_not_keep_are_refused(
    column_type: int, fsp: int, hex_bytes: str
) -> None:
    assert read(column_type, fsp, bytes.fromhex(hex_bytes)) is None
    with pytest.raises(DecodeError):
        decode_value(column_type, fsp, bytes.fromhex(hex_bytes))


@pytest.mark.parametrize(
    ("column_type", "fsp", "value"),
    [
        (T.TIME2, 0, Time(False, 1024, 0, 0)),
        (T.TIME2, 6, Time(True, 1024, 0, 0, 1)),
        (T.TIMESTAMP2, 0, Timestamp(0x80000000)),
        (T.TIMESTAMP, 0, Timestamp(0xFFFFFFFF)),
        (T.TIMESTAMP, 6, Timestamp(0x80000000, 1)),
        (T.DATETIME, 0, DateTime(429497, 0, 0)),
        (T.TIME, 1, Time(False, 9984, 0, 0)),
        # One unit after the last moment whose microsecond count fits in 63 bits.
        (T.DATETIME, 6, DateTime(256615, 4, 23, 4, 0, 54, 775808)),
        (T.DATETIME, 3, DateTime(256615, 4, 23, 4, 0, 54, 776000)),
        (T.DATETIME, 1, DateTime(256615, 4, 23, 4, 0, 54, 800000)),
    ],
)
def test_values_mariadb_would_read_otherwise_are_refused(
    column_type: int, fsp: int, value: Any
) -> None:
    with pytest.raises(EncodeError, match="MariaDB"):
        encode_value(column_type, fsp, value)


@pytest.mark.parametrize(
    ("column_type", "fsp", "value"),
    [
        (T.TIME2, 0, Time(False, 1023, 63, 63)),
        (T.TIME2, 6, Time(True, 1023, 59, 59, 999999)),
        (T.TIMESTAMP2, 6, Timestamp(0x7FFFFFFF, 999999)),
        (T.TIMESTAMP, 0, Timestamp(0x7FFFFFFF)),
        (T.DATETIME, 0, DateTime(429496, 72, 95, 99, 99, 99)),
        (T.TIME, 6, Time(False, 9983, 59, 59, 999999)),
        (T.DATETIME, 6, DateTime(256615, 4, 23, 4, 0, 54, 775807)),
        (T.DATETIME, 3, DateTime(256615, 4, 23, 4, 0, 54, 775000)),
        (T.DATETIME, 1, DateTime(256615, 4, 23, 4, 0, 54, 700000)),
    ],
)
def test_the_last_values_mariadb_reads_as_written_round_trip(
    column_type: int, fsp: int, value: Any
) -> None:
    raw = encode_value(column_type, fsp, value)
    reading = read(column_type, fsp, raw)
    assert reading is not None and value_of(column_type, reading) == value
    assert decode_value(column_type, fsp, raw) == (value, len(raw))
