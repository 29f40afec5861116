"""Single column values: golden bytes from the facts doc and real MariaDB 10.11 captures, round
trips of every column type with edge values, and the byte-exactness of arbitrary bytes."""

from __future__ import annotations

import datetime as dt
import struct
from decimal import Decimal

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from decoder.mysql_json import JsonOpaque, parse_mysql_json
from decoder.values import column_reader, decode_value
from encoder.values import encode_value
from fakemaster.vocabulary.columns import decimal_size, string_meta_value, string_metadata
from fakemaster.vocabulary.constants import ColumnType as T
from fakemaster.vocabulary.errors import DecodeError, EncodeError
from fakemaster.vocabulary.values import Date, DateTime, Time, Timestamp
from scenarios.strategies.rows import ColumnSpec, column_specs, values_for
from tests.budget import examples


def meta2(byte0: int, byte1: int) -> int:
    """Column metadata from its two bytes as written in a TABLE_MAP."""
    return byte0 | byte1 << 8


def decimal_meta(precision: int, scale: int) -> int:
    return meta2(precision, scale)


def check_golden(column_type: int, meta: int, value: object, hex_bytes: str, **kw: bool) -> None:
    raw = bytes.fromhex(hex_bytes)
    assert encode_value(column_type, meta, value, **kw) == raw
    decoded, end = decode_value(column_type, meta, raw, **kw)
    assert end == len(raw)
    assert decoded == value
    assert type(decoded) is type(value)


# --- NEWDECIMAL (facts §3.3, §6.1 #1-6) ---------------------------------------------------


@pytest.mark.parametrize(
    ("precision", "scale", "text", "hex_bytes"),
    [
        (14, 4, "1234567890.1234", "810dfb38d204d2"),
        (14, 4, "-1234567890.1234", "7ef204c72dfb2d"),
        (11, 4, "-57.1234", "7fffffc6fb2d"),
        (10, 0, "0", "8000000000"),
        (10, 0, "1234567890", "810dfb38d2"),
        (14, 4, "0.1234", "800000000004d2"),
        (2, 2, "0.05", "85"),
        (38, 38, "0." + "5" + "0" * 37, "9dcd6500" + "00" * 13),
        # Captured from MariaDB 10.11 (DECIMAL(65,30) UNSIGNED and DECIMAL(65,38)).
        (
            65,
            30,
            "12345678901234567890123456789012345.123456789012345678901234567890",
            "80bc614e35b7bf87350e34c02f075f79075bcd1500bc614e35b7bf87037a",
        ),
        (
            65,
            38,
            "-123456789012345678901234567.12345678901234567890123456789012345678",
            "78a432eaff439eb1ca484078f8a432eaff439eb1ca484078caf1cb3fb1",
        ),
    ],
)
def test_decimal_golden(precision: int, scale: int, text: str, hex_bytes: str) -> None:
    check_golden(T.NEWDECIMAL, decimal_meta(precision, scale), Decimal(text), hex_bytes)


def test_decimal_sizes() -> None:
    assert decimal_size(65, 30) == 30
    assert decimal_size(65, 38) == 29
    assert decimal_size(38, 38) == 17  # no integer bytes
    assert decimal_size(10, 0) == 5


@pytest.mark.parametrize(
    ("precision", "scale", "hex_bytes"),
    [(10, 0, "7fffffffff"), (10, 2, "7fffffffff"), (38, 38, "7f" + "ff" * 16)],
)
def test_decimal_negative_zero_round_trips(precision: int, scale: int, hex_bytes: str) -> None:
    # Never written by the server, but a decoder must read it (facts §6.1 #6).
    meta = decimal_meta(precision, scale)
    value, _ = decode_value(T.NEWDECIMAL, meta, bytes.fromhex(hex_bytes))
    assert value.as_tuple() == (1, (0,), -scale)
    assert encode_value(T.NEWDECIMAL, meta, value).hex() == hex_bytes
    assert encode_value(T.NEWDECIMAL, meta, Decimal(0)).hex() == "80" + hex_bytes[2:].replace(
        "f", "0"
    )


def test_decimal_keeps_exactly_scale_fraction_digits() -> None:
    meta = decimal_meta(10, 2)
    for given_value, text in ((Decimal("1.5"), "1.50"), (Decimal("1.500"), "1.50"), (1, "1.00")):
        value, _ = decode_value(T.NEWDECIMAL, meta, encode_value(T.NEWDECIMAL, meta, given_value))
        assert str(value) == text
        assert value.as_tuple().exponent == -2
    assert encode_value(T.NEWDECIMAL, meta, "-0.5") == encode_value(
        T.NEWDECIMAL, meta, -Decimal("0.50")
    )


@pytest.mark.parametrize(
    ("value", "why"),
    [
        (Decimal("1.234"), "fraction digits"),
        (Decimal("123456789"), "digits"),
        (Decimal("NaN"), "NaN"),
        (Decimal("Infinity"), "Infinity"),
        (1.5, "not a Decimal"),
    ],
)
def test_decimal_rejects_what_does_not_fit(value: object, why: str) -> None:
    with pytest.raises(EncodeError, match=why):
        encode_value(T.NEWDECIMAL, decimal_meta(10, 2), value)


def test_decimal_digit_group_above_nine_digits_is_an_error() -> None:
    # DECIMAL(10,0): 1 leading byte (1 digit) + one 4-byte word holding 0x3b9aca00 = 10**9.
    with pytest.raises(DecodeError, match="digit group"):
        decode_value(T.NEWDECIMAL, decimal_meta(10, 0), bytes.fromhex("803b9aca00"))


# --- temporal (facts §3.4, §6.1 #7-17) ----------------------------------------------------


@pytest.mark.parametrize(
    ("column_type", "meta", "value", "hex_bytes"),
    [
        (T.DATE, 0, Date(2023, 0, 15), "0fce0f"),
        (T.DATE, 0, Date(2023, 5, 0), "a0ce0f"),
        (T.DATE, 0, Date(0, 0, 0), "000000"),
        (T.DATETIME2, 0, DateTime(2023, 0, 15, 10, 0, 0), "99aedea000"),
        (T.DATETIME2, 0, DateTime(2023, 5, 0, 10, 0, 0), "99b000a000"),
        (T.DATETIME2, 0, DateTime(0, 0, 0), "8000000000"),
        (T.DATETIME2, 6, DateTime(0, 0, 0), "8000000000000000"),
        (T.DATETIME2, 6, DateTime(9999, 12, 31, 23, 59, 59, 999999), "fef3ff7efb0f423f"),
        (T.DATETIME2, 1, DateTime(2001, 2, 3, 4, 5, 6, 700000), "9967c6414646"),
        (T.DATETIME2, 3, DateTime(2001, 2, 3, 4, 5, 6, 789000), "9967c641461ed2"),
        (T.TIMESTAMP2, 0, Timestamp(0), "00000000"),
        (T.TIMESTAMP2, 6, Timestamp(0x7FFFFFFF, 999999), "7fffffff0f423f"),
        (T.TIMESTAMP2, 3, Timestamp(1, 123000), "0000000104ce"),
        (T.TIMESTAMP2, 5, Timestamp(1, 123450), "0000000101e23a"),
        (T.TIME2, 0, Time(True, 16, 8, 4), "7efdfc"),
        (T.TIME2, 3, Time(True, 16, 8, 4, 250000), "7efdfbf63c"),
        (T.TIME2, 6, Time(True, 16, 8, 4, 250000), "7efdfbfc2f70"),
        (T.TIME2, 6, Time(True, 16, 8, 4, 10123), "7efdfbffd875"),
        (T.TIME2, 2, Time(True, 0, 0, 0, 10000), "7fffffff"),
        (T.TIME2, 2, Time(True, 0, 0, 1, 100000), "7ffffef6"),
        (T.TIME2, 0, Time(True, 838, 59, 59), "4b9105"),
        (T.TIME2, 0, Time(False, 838, 59, 59), "b46efb"),
        (T.TIME2, 0, Time(False, 24, 0, 0), "818000"),
        (T.TIME2, 6, Time(True, 838, 59, 59, 0), "4b9105000000"),
        (T.TIME2, 1, Time(False, 0, 0, 0, 700000), "80000046"),
        (T.TIME, 0, Time(True, 838, 59, 59), (-8385959 & 0xFFFFFF).to_bytes(3, "little").hex()),
        (T.TIME, 0, Time(False, 12, 34, 56), "40e201"),
        # Old DATETIME / TIMESTAMP captured from MariaDB 10.11 (mysql56_temporal_format=OFF).
        (T.DATETIME, 0, DateTime(2001, 2, 3, 4, 5, 6), "fa4a0bfd32120000"),
        (T.DATETIME, 0, DateTime(0, 0, 0), "0000000000000000"),
        (T.TIMESTAMP, 0, Timestamp(981173106), "72837b3a"),
        (T.YEAR, 0, 0, "00"),
        (T.YEAR, 0, 1901, "01"),
        (T.YEAR, 0, 2155, "ff"),
    ],
)
def test_temporal_golden(column_type: int, meta: int, value: object, hex_bytes: str) -> None:
    check_golden(column_type, meta, value, hex_bytes)


# MariaDB 5.3 TIME(n)/DATETIME(n)/TIMESTAMP(n): the schema's precision given as the metadata.
# Bytes captured from MariaDB 10.11 with mysql56_temporal_format=OFF (tests/golden/binlogs).
@pytest.mark.parametrize(
    ("column_type", "fsp", "value", "hex_bytes"),
    [
        (T.TIME, 3, Time(True, 838, 59, 59, 999000), "0000000001"),
        (T.TIME, 6, Time(True, 838, 59, 59, 999999), "000000000001"),
        (T.TIME, 3, Time(True, 0, 0, 0, 1000), "00b407a57f"),
        (T.TIME, 6, Time(False, 838, 59, 59, 999999), "057e7bbcf7ff"),
        (T.DATETIME, 3, DateTime(1000, 1, 1, 0, 0, 0, 1000), "0020b127eddc01"),
        (T.DATETIME, 6, DateTime(9999, 12, 31, 23, 59, 59, 999999), "04fcee3943bfffff"),
        (T.TIMESTAMP, 3, Timestamp(0x7FFFFFFF, 999000), "7fffffff03e7"),
        (T.TIMESTAMP, 6, Timestamp(1709210096, 123456), "65e079f001e240"),
    ],
)
def test_mariadb_53_temporal_golden(
    column_type: int, fsp: int, value: object, hex_bytes: str
) -> None:
    check_golden(column_type, fsp, value, hex_bytes)


@settings(max_examples=examples(2))
@given(
    st.sampled_from([T.TIME, T.DATETIME, T.TIMESTAMP]).flatmap(
        lambda column_type: st.integers(1, 6).flatmap(
            lambda fsp: st.tuples(st.just(column_type), st.just(fsp), values_for(column_type, fsp))
        )
    )
)
def test_mariadb_53_temporal_round_trips(case: tuple[int, int, object]) -> None:
    column_type, fsp, value = case
    raw = encode_value(column_type, fsp, value)
    assert decode_value(column_type, fsp, raw) == (value, len(raw))


@settings(max_examples=examples(2))
@given(st.sampled_from([T.TIME, T.DATETIME, T.TIMESTAMP]), st.integers(1, 6), st.data())
def test_any_mariadb_53_temporal_bytes_encode_back(
    column_type: int, fsp: int, data: st.DataObject
) -> None:
    """Whatever the bytes, the decoder refuses them or gives a value that encodes back to them
    (which bytes it refuses, and why: tests/codec/test_temporal_reads.py)."""
    size = column_reader(column_type, fsp).size
    raw = data.draw(st.binary(min_size=size, max_size=size))
    try:
        value, _ = decode_value(column_type, fsp, raw)
    except DecodeError:
        return
    assert encode_value(column_type, fsp, value) == raw


def test_odd_fsp_scaling() -> None:
    # fsp 1: .7 -> 70, fsp 3: .123 -> 1230, fsp 5: .12345 -> 123450 (facts §3.4)
    assert encode_value(T.TIME2, 1, Time(False, 0, 0, 0, 700000))[-1:] == bytes([70])
    assert encode_value(T.TIME2, 3, Time(False, 0, 0, 0, 123000))[-2:] == (1230).to_bytes(2, "big")
    assert encode_value(T.TIME2, 5, Time(False, 0, 0, 0, 123450))[-3:] == (123450).to_bytes(
        3, "big"
    )


def test_fractions_beyond_the_precision_are_refused_not_dropped() -> None:
    with pytest.raises(EncodeError, match=r"\.123456 have more than 2 digits"):
        encode_value(T.DATETIME2, 2, DateTime(2020, 1, 2, 3, 4, 5, 123456))
    # Issue #6: -838:59:59.999000 used to become -838:59:59.
    with pytest.raises(EncodeError, match=r"TIME2\(0\) cannot hold .*999000.*has none"):
        encode_value(T.TIME2, 0, Time(True, 838, 59, 59, 999000))
    with pytest.raises(EncodeError, match="temporal_precisions"):
        encode_value(T.TIME, 0, Time(True, 838, 59, 59, 999000))
    raw = encode_value(T.DATETIME2, 2, DateTime(2020, 1, 2, 3, 4, 5, 120000))
    assert decode_value(T.DATETIME2, 2, raw)[0].microsecond == 120000


def test_standard_library_temporal_values_are_accepted() -> None:
    assert encode_value(T.DATE, 0, dt.date(2023, 5, 7)) == encode_value(T.DATE, 0, Date(2023, 5, 7))
    moment = dt.datetime(2023, 5, 7, 1, 2, 3, 456000)
    assert encode_value(T.DATETIME2, 3, moment) == encode_value(
        T.DATETIME2, 3, DateTime(2023, 5, 7, 1, 2, 3, 456000)
    )
    delta = -dt.timedelta(hours=16, minutes=8, seconds=4, milliseconds=250)
    assert encode_value(T.TIME2, 3, delta).hex() == "7efdfbf63c"


def test_zero_datetime2_consumes_its_fraction_bytes() -> None:
    # facts §6.1 #12: a zero DATETIME2(6) followed by another DATETIME2(6)
    data = bytes.fromhex("8000000000000000") + encode_value(
        T.DATETIME2, 6, DateTime(2020, 1, 1, 0, 0, 0, 1)
    )
    first, pos = decode_value(T.DATETIME2, 6, data)
    second, end = decode_value(T.DATETIME2, 6, data, pos)
    assert first == DateTime(0, 0, 0)
    assert second == DateTime(2020, 1, 1, 0, 0, 0, 1)
    assert end == len(data)


@pytest.mark.parametrize(
    ("column_type", "meta", "value", "why"),
    [
        (T.YEAR, 0, 1900, "YEAR"),
        (T.YEAR, 0, 2156, "YEAR"),
        (T.DATE, 0, Date(2023, 16, 1), "month"),
        (T.DATETIME2, 0, DateTime(2023, 13, 1), "month"),
        (T.DATETIME2, 0, DateTime(2023, 1, 1, 32), "hour"),
        (T.TIME2, 0, Time(False, 2048, 0, 0), "hour"),
        (T.TIME2, 0, Time(True, 1024, 0, 0), r"hour 1024 not in 0..1023 \(MariaDB reads TIME2"),
        (T.TIME2, 2, Time(False, 1, 0, 0, 2_560_000), "microsecond"),
        (T.TIMESTAMP2, 0, Timestamp(1 << 32), "seconds"),
        (T.TIMESTAMP2, 6, Timestamp(1 << 31), "2038-01-19 03:14:07"),
        (T.TIMESTAMP, 0, Timestamp(1 << 31), "2038-01-19 03:14:07"),
        (T.TIMESTAMP, 3, Timestamp(1 << 31), "2038-01-19 03:14:07"),
        (T.DATETIME, 0, DateTime(429497, 0, 0), "32 bits"),
        (T.TIME, 6, Time(False, 9984, 0, 0), "modulo 9984"),
        (T.DATETIME, 6, DateTime(300000, 1, 1), "64-bit microsecond"),
        (T.TIMESTAMP2, 0, 5, "TIMESTAMP2"),
        (T.DATE, 0, "2023-01-01", "DATE"),
    ],
)
def test_temporal_rejects_what_does_not_fit(
    column_type: int, meta: int, value: object, why: str
) -> None:
    with pytest.raises(EncodeError, match=why):
        encode_value(column_type, meta, value)


def test_negative_datetime2_is_a_decode_error() -> None:
    with pytest.raises(DecodeError, match="negative DATETIME2"):
        decode_value(T.DATETIME2, 0, bytes(5))


# --- integers, floats, BIT (facts §3.2, §6.1 #18, #30) ------------------------------------


@pytest.mark.parametrize(
    ("column_type", "size"), [(T.TINY, 1), (T.SHORT, 2), (T.INT24, 3), (T.LONG, 4), (T.LONGLONG, 8)]
)
def test_integer_extremes_signed_and_unsigned(column_type: int, size: int) -> None:
    bits = 8 * size
    all_ones = b"\xff" * size
    assert decode_value(column_type, 0, all_ones) == (-1, size)
    assert decode_value(column_type, 0, all_ones, unsigned=True) == ((1 << bits) - 1, size)
    # The encoder takes the column's own range: another would come back as another number.
    assert encode_value(column_type, 0, -1) == all_ones
    assert encode_value(column_type, 0, (1 << bits) - 1, unsigned=True) == all_ones
    low, high = -(1 << (bits - 1)), (1 << (bits - 1)) - 1
    for edge in (low, high):
        assert decode_value(column_type, 0, encode_value(column_type, 0, edge)) == (edge, size)
    for outside in (low - 1, high + 1, (1 << bits) - 1):
        with pytest.raises(EncodeError, match="signed"):
            encode_value(column_type, 0, outside)
    for outside in (-1, 1 << bits):
        with pytest.raises(EncodeError, match="UNSIGNED"):
            encode_value(column_type, 0, outside, unsigned=True)
    with pytest.raises(EncodeError, match="not an int"):
        encode_value(column_type, 0, 1.0)


def test_int24_negative_is_sign_extended() -> None:
    assert decode_value(T.INT24, 0, bytes.fromhex("000080")) == (-8388608, 3)
    assert decode_value(T.INT24, 0, bytes.fromhex("000080"), unsigned=True) == (8388608, 3)


def test_floats() -> None:
    check_golden(T.FLOAT, 4, 1.5, "0000c03f")
    check_golden(T.DOUBLE, 8, -2.25, "00000000000002c0")
    with pytest.raises(EncodeError):
        encode_value(T.FLOAT, 4, 1e300)
    with pytest.raises(EncodeError):
        encode_value(T.DOUBLE, 8, "1.0")


@pytest.mark.parametrize(
    ("bits", "meta_bytes", "value", "hex_bytes"),
    [
        (1, (1, 0), 1, "01"),
        (8, (0, 1), 0xA5, "a5"),
        (9, (1, 1), 257, "0101"),
        (64, (0, 8), (1 << 63) | 1, "8000000000000001"),
    ],
)
def test_bit_golden(bits: int, meta_bytes: tuple[int, int], value: int, hex_bytes: str) -> None:
    check_golden(T.BIT, meta2(*meta_bytes), value, hex_bytes)


# --- strings, ENUM, SET, BLOB (facts §3.5, §3.6, §6.1 #19-29) -----------------------------


def test_string_metadata_folding() -> None:
    assert string_metadata(meta2(0xCE, 0xFC)) == (0xFE, 1020)  # CHAR(255) utf8mb4
    assert string_metadata(meta2(0xEE, 0x00)) == (0xFE, 256)  # CHAR(64) utf8mb4
    assert string_metadata(meta2(0xFE, 0x0A)) == (0xFE, 10)
    for max_len in (0, 10, 255, 256, 511, 767, 1020, 1023):
        assert string_metadata(string_meta_value(0xFE, max_len)) == (0xFE, max_len)
    assert string_meta_value(0xFE, 1020) == meta2(0xCE, 0xFC)


def test_char_length_prefix_depends_on_byte_capacity() -> None:
    check_golden(T.STRING, meta2(0xFE, 10), b"ab", "026162")
    check_golden(T.STRING, meta2(0xEE, 0x00), b"ab", "02006162")  # 256 bytes: 2-byte length
    long_value = "é".encode() * 255
    raw = encode_value(T.STRING, meta2(0xCE, 0xFC), long_value)
    assert raw[:2] == (510).to_bytes(2, "little")
    assert decode_value(T.STRING, meta2(0xCE, 0xFC), raw) == (long_value, len(raw))
    # BINARY(8) 'ab' and INET6 '::': trailing zero bytes stripped by the server, kept as stored.
    check_golden(T.STRING, meta2(0xFE, 8), b"ab", "026162")
    check_golden(T.STRING, meta2(0xFE, 16), b"", "00")


def test_varchar_length_prefix_depends_on_metadata() -> None:
    check_golden(T.VARCHAR, 255, b"a", "0161")
    check_golden(T.VARCHAR, 256, b"a", "010061")  # VARCHAR(64) utf8mb4
    check_golden(T.VARCHAR_COMPRESSED, 101, b"\x00abc", "0400616263")
    with pytest.raises(EncodeError, match="256 bytes, its 1-byte length holds at most 255"):
        encode_value(T.VARCHAR, 255, b"x" * 256)


@pytest.mark.parametrize(
    ("meta", "value", "hex_bytes"),
    [
        (meta2(0xF7, 1), 2, "02"),
        (meta2(0xF7, 2), 300, "2c01"),
        (meta2(0xF8, 1), 0b101, "05"),
        (meta2(0xF8, 2), 0xFFFF, "ffff"),
        (meta2(0xF8, 3), 0x123456, "563412"),
        (meta2(0xF8, 4), 0x80000001, "01000080"),
        (meta2(0xF8, 8), (1 << 64) - 1, "ff" * 8),
    ],
)
def test_enum_and_set_golden(meta: int, value: int, hex_bytes: str) -> None:
    check_golden(T.STRING, meta, value, hex_bytes)


@pytest.mark.parametrize("pack_length", [1, 2, 3, 4])
def test_blob_pack_lengths(pack_length: int) -> None:
    value = b"\x00\xffdata"
    check_golden(
        T.BLOB, pack_length, value, len(value).to_bytes(pack_length, "little").hex() + value.hex()
    )
    with pytest.raises(EncodeError, match="at most 255"):
        encode_value(T.BLOB, 1, b"x" * 256)


def test_geometry_point_with_srid() -> None:
    # POINT(1 2) SRID 4326 captured from MariaDB 10.11: length, SRID, WKB.
    wkb = bytes.fromhex("e61000000101000000000000000000f03f0000000000000040")
    check_golden(T.GEOMETRY, 4, wkb, "19000000" + wkb.hex())


def test_mariadb_json_is_a_longtext_blob() -> None:
    text = b'{"a": [1, 2]}'
    check_golden(T.BLOB, 4, text, "0d000000" + text.hex())


def test_strings_must_be_bytes() -> None:
    with pytest.raises(EncodeError, match="not bytes"):
        encode_value(T.VARCHAR, 20, "text")
    assert encode_value(T.VARCHAR, 20, bytearray(b"ab")) == b"\x02ab"


# --- metadata no value can have -----------------------------------------------------------


@pytest.mark.parametrize(
    ("column_type", "meta", "why"),
    [
        (T.DECIMAL, 0, "old DECIMAL"),
        (T.NEWDECIMAL, decimal_meta(0, 0), "DECIMAL"),
        (T.NEWDECIMAL, decimal_meta(10, 11), "DECIMAL"),
        (T.DATETIME2, 7, "precision"),
        (T.BLOB, 5, "length-prefix"),
        (T.FLOAT, 8, "metadata"),
        (200, 0, "unknown column type"),
    ],
)
def test_impossible_metadata(column_type: int, meta: int, why: str) -> None:
    with pytest.raises(DecodeError, match=why):
        column_reader(column_type, meta)
    with pytest.raises(EncodeError, match=why):
        encode_value(column_type, meta, 0)


def test_truncated_values_are_decode_errors() -> None:
    with pytest.raises(DecodeError, match="truncated"):
        decode_value(T.LONG, 0, b"\x00\x00")
    with pytest.raises(DecodeError, match="truncated"):
        decode_value(T.VARCHAR, 20, b"\x05ab")
    with pytest.raises(DecodeError, match="truncated"):
        decode_value(T.BLOB, 4, b"\x01\x00")


# --- properties ---------------------------------------------------------------------------


@st.composite
def spec_and_value(draw: st.DrawFn) -> tuple[int, int, bool, object]:
    spec = draw(column_specs())
    value = draw(values_for(spec.column_type, spec.meta, spec.unsigned, max_string=2000))
    return spec.column_type, spec.meta, spec.unsigned, value


@settings(max_examples=examples(10))  # cheap, and every column type shares it
@given(spec_and_value())
def test_every_column_type_round_trips(case: tuple[int, int, bool, object]) -> None:
    column_type, meta, unsigned, value = case
    raw = encode_value(column_type, meta, value, unsigned)
    decoded, end = decode_value(column_type, meta, raw + b"\xaa", unsigned=unsigned)
    assert end == len(raw)
    assert decoded == value
    assert type(decoded) is type(value)
    assert encode_value(column_type, meta, decoded, unsigned) == raw
    if isinstance(value, Decimal) and isinstance(decoded, Decimal):
        assert decoded.as_tuple() == value.as_tuple()  # sign of zero and exponent included


@st.composite
def fixed_size_spec_and_bytes(draw: st.DrawFn) -> tuple[ColumnSpec, bytes]:
    spec = draw(column_specs())
    reader = column_reader(spec.column_type, spec.meta, spec.unsigned)
    assume(reader.fmt)
    return spec, draw(st.binary(min_size=reader.size, max_size=reader.size))


def beyond_the_declared_column(spec: ColumnSpec, value: object) -> bool:
    """Whether a decoded value is outside what its column declares, though its bytes hold it:
    bits beyond a BIT's width, fractional seconds beyond the precision."""
    if spec.column_type == T.BIT:
        assert isinstance(value, int)
        return value >= 1 << ((spec.meta >> 8) * 8 + (spec.meta & 0xFF))
    if spec.column_type in (T.DATETIME2, T.TIMESTAMP2, T.TIME2):
        assert isinstance(value, (DateTime, Timestamp, Time))
        return value.microsecond % 10 ** (6 - spec.meta) != 0
    return False


@settings(max_examples=examples(6))  # cheap fuzzing of every fixed-size type
@given(fixed_size_spec_and_bytes())
def test_any_fixed_size_bytes_decode_and_encode_back(case: tuple[ColumnSpec, bytes]) -> None:
    """Whatever a fixed-size value's bytes are, the decoder either rejects them or gives a value
    whose encoding is the same bytes (values a server would never write included), unless the
    value is beyond what its column declares: the encoder refuses that (EncodeError)."""
    spec, raw = case
    if spec.column_type == T.FLOAT and struct.unpack("<f", raw)[0] != struct.unpack("<f", raw)[0]:
        return  # a float32 NaN's payload does not survive Python's float conversion
    try:
        value, _ = decode_value(spec.column_type, spec.meta, raw, unsigned=spec.unsigned)
    except DecodeError:
        # A DECIMAL digit group above nine digits, a negative DATETIME2, temporal bytes MariaDB
        # reads as another value (tests/codec/test_temporal_reads.py).
        assert spec.column_type in (
            T.NEWDECIMAL, T.DATETIME2, T.TIME2, T.TIMESTAMP2, T.TIMESTAMP, T.DATETIME,
        )  # fmt: skip
        return
    if beyond_the_declared_column(spec, value):
        with pytest.raises(EncodeError):
            encode_value(spec.column_type, spec.meta, value, spec.unsigned)
        return
    assert encode_value(spec.column_type, spec.meta, value, spec.unsigned) == raw


# --- MySQL binary JSON (facts §3.7; decoded only) -----------------------------------------


def jsonb(value: object, large: bool = False) -> bytes:
    """A MySQL binary JSON document: a type byte and the value (test builder)."""
    kind, payload = _jsonb_value(value, large)
    return bytes([kind]) + payload


def _varlen(length: int) -> bytes:
    out = bytearray()
    while True:
        byte = length & 0x7F
        length >>= 7
        out.append(byte | (0x80 if length else 0))
        if not length:
            return bytes(out)


def _jsonb_value(value: object, large: bool) -> tuple[int, bytes]:
    if value is None or isinstance(value, bool):
        return 0x04, bytes([{None: 0, True: 1, False: 2}[value]])
    if isinstance(value, int):
        if -(1 << 15) <= value < 1 << 15:
            return 0x05, struct.pack("<h", value)
        if -(1 << 31) <= value < 1 << 31:
            return 0x07, struct.pack("<i", value)
        return (0x09, struct.pack("<q", value)) if value < 0 else (0x0A, struct.pack("<Q", value))
    if isinstance(value, float):
        return 0x0B, struct.pack("<d", value)
    if isinstance(value, str):
        raw = value.encode()
        return 0x0C, _varlen(len(raw)) + raw
    assert isinstance(value, (dict, list))
    is_object = isinstance(value, dict)
    items = list(value.items()) if isinstance(value, dict) else [(None, v) for v in value]
    offset_size = 4 if large else 2
    pack = struct.Struct("<I" if large else "<H").pack
    inline = {0x04, 0x05, 0x06} | ({0x07, 0x08} if large else set())
    header = 2 * offset_size + len(items) * (
        1 + offset_size + (offset_size + 2 if is_object else 0)
    )
    keys = b"".join(str(key).encode() for key, _ in items) if is_object else b""
    key_entries = b""
    at = header
    for key, _ in items:
        if is_object:
            assert key is not None
            key_entries += pack(at) + struct.pack("<H", len(key.encode()))
            at += len(key.encode())
    value_entries = b""
    tail = b""
    for _, item in items:
        kind, payload = _jsonb_value(item, large)
        if kind in inline:
            value_entries += bytes([kind]) + payload.ljust(offset_size, b"\x00")
        else:
            value_entries += bytes([kind]) + pack(at + len(tail))
            tail += payload
    body = key_entries + value_entries + keys + tail
    kind = (0x01 if large else 0x00) if is_object else (0x03 if large else 0x02)
    return kind, pack(len(items)) + pack(2 * offset_size + len(body)) + body


def test_mysql_json_small_object_layout() -> None:
    document = bytes.fromhex("00010016000b000100020c006102000a00050100050200")
    assert jsonb({"a": [1, 2]}) == document
    assert parse_mysql_json(document) == {"a": [1, 2]}


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(1 << 63), (1 << 64) - 1)
    | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda children: st.lists(children, max_size=5)
    | st.dictionaries(st.text(max_size=8), children, max_size=5),
    max_leaves=20,
)  # fmt: skip


@given(json_values, st.booleans())
def test_mysql_json_round_trips_through_the_builder(value: object, large: bool) -> None:
    assert parse_mysql_json(jsonb(value, large)) == value


def test_mysql_json_opaque_and_holes() -> None:
    decimal_bytes = encode_value(T.NEWDECIMAL, decimal_meta(5, 2), Decimal("-12.34"))
    opaque = bytes([0x0F, T.NEWDECIMAL]) + _varlen(2 + len(decimal_bytes)) + bytes([5, 2])
    assert parse_mysql_json(opaque + decimal_bytes) == Decimal("-12.34")
    packed = ((2023 * 13 + 5) << 5 | 7) << 17 | (1 << 12 | 2 << 6 | 3)
    moment = bytes([0x0F, T.DATETIME, 8]) + ((packed << 24) | 456).to_bytes(8, "little")
    assert parse_mysql_json(moment) == DateTime(2023, 5, 7, 1, 2, 3, 456)
    other = bytes([0x0F, T.BLOB, 2]) + b"\x01\x02"
    assert parse_mysql_json(other) == JsonOpaque(T.BLOB, b"\x01\x02")
    assert parse_mysql_json(b"") is None
    # A partially updated document keeps unused bytes (a hole) before a value.
    array = jsonb(["abc"])
    with_hole = bytearray(array[:1] + array[1:3] + (len(array) - 1 + 2).to_bytes(2, "little"))
    with_hole += array[5:6] + (7 + 2).to_bytes(2, "little") + b"\xee\xee" + array[8:]
    assert parse_mysql_json(bytes(with_hole)) == ["abc"]


@given(json_values, st.data())
def test_corrupt_mysql_json_raises_only_decode_errors(value: object, data: st.DataObject) -> None:
    document = bytearray(jsonb(value, data.draw(st.booleans())))
    if data.draw(st.booleans()):
        document = document[: data.draw(st.integers(0, len(document)))]
    elif document:
        document[data.draw(st.integers(0, len(document) - 1))] = data.draw(st.integers(0, 255))
    try:
        parse_mysql_json(bytes(document))
    except DecodeError:
        pass
