"""Malformed TABLE_MAP and ROWS events: the decoder raises DecodeError (with the offset of the
problem) and nothing else, for hand-made defects and for random truncation and corruption."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from decoder.core import decode_event
from decoder.rows import decode_rows, decode_table_map
from encoder.core import encode_event
from fakemaster.vocabulary.constants import ColumnType as T
from fakemaster.vocabulary.constants import EventType
from fakemaster.vocabulary.context import BinlogContext
from fakemaster.vocabulary.errors import DecodeError
from fakemaster.vocabulary.events import TableMapEvent, UpdateRowsEvent, WriteRowsEvent
from fakemaster.vocabulary.header import EventHeader
from fakemaster.vocabulary.values import ABSENT
from scenarios.strategies.rows import rows_events_for, table_maps
from tests.budget import examples

HEADER_LEN = 19


def plain_context(id_size: int = 6) -> BinlogContext:
    return BinlogContext(checksum=False, table_id_size=id_size)


def simple_map(types: tuple[int, ...], meta: tuple[int, ...] | None = None) -> TableMapEvent:
    return TableMapEvent(
        table_id=42,
        database="db",
        table="t",
        column_types=types,
        column_meta=meta if meta is not None else (0,) * len(types),
        nullable=(True,) * len(types),
    )


def header_of(raw: bytes, length: int) -> EventHeader:
    return EventHeader(0, raw[4], 1, length, 0, 0)


def with_body(raw: bytes, body: bytes) -> bytes:
    """``raw`` (an event without CRC) with another body and a matching length field."""
    return raw[:9] + (HEADER_LEN + len(body)).to_bytes(4, "little") + raw[13:19] + body


def decode_body(raw: bytes, body: bytes, ctx: BinlogContext) -> Any:
    """The body decoder itself, without the core's safety net for stray exceptions."""
    header = header_of(raw, HEADER_LEN + len(body))
    if raw[4] == EventType.TABLE_MAP:
        return decode_table_map(memoryview(body), header, ctx)
    return decode_rows(memoryview(body), header, ctx)


# --- random truncation and corruption -----------------------------------------------------


@st.composite
def encoded_map_and_rows(draw: st.DrawFn) -> tuple[bytes, bytes, int]:
    id_size = draw(st.sampled_from([6, 6, 4]))
    table_map = draw(table_maps(max_columns=8, max_table_id=(1 << (8 * id_size)) - 1))
    rows_event = draw(rows_events_for(table_map, max_rows=3, max_string=40))
    ctx = plain_context(id_size)
    return encode_event(table_map, ctx), encode_event(rows_event, ctx), id_size


@st.composite
def mutations(draw: st.DrawFn, body: bytes) -> bytes:
    kind = draw(st.sampled_from(["truncate", "flip", "replace", "insert", "drop"]))
    if kind == "truncate" or not body:
        return body[: draw(st.integers(0, max(len(body) - 1, 0)))]
    at = draw(st.integers(0, len(body) - 1))
    if kind == "flip":
        return body[:at] + bytes([body[at] ^ (1 << draw(st.integers(0, 7)))]) + body[at + 1 :]
    if kind == "replace":
        chunk = draw(st.binary(min_size=1, max_size=8))
        return body[:at] + chunk + body[at + len(chunk) :]
    if kind == "insert":
        return body[:at] + draw(st.binary(min_size=1, max_size=8)) + body[at:]
    return body[:at] + body[at + draw(st.integers(1, 8)) :]


def outcome(raw: bytes, body: bytes, ctx: BinlogContext) -> Any:
    try:
        return decode_body(raw, body, ctx)
    except DecodeError:
        return DecodeError


def only_decode_errors(raw: bytes, body: bytes, ctx: BinlogContext) -> None:
    """Decoded twice: the first sighting of a bitmap is read by the interpreted reader, the
    second by the generated one; they must agree (an error for both, or the same event).
    Compared by repr, where a NaN equals itself."""
    assert repr(outcome(raw, body, ctx)) == repr(outcome(raw, body, ctx))


@settings(
    max_examples=examples(4),
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(encoded_map_and_rows(), st.data())
def test_mutated_table_maps_raise_only_decode_errors(
    case: tuple[bytes, bytes, int], data: st.DataObject
) -> None:
    raw_map, _, id_size = case
    for _ in range(5):
        body = data.draw(mutations(raw_map[HEADER_LEN:]))
        only_decode_errors(raw_map, body, plain_context(id_size))


@settings(
    max_examples=examples(4),
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(encoded_map_and_rows(), st.data())
def test_mutated_rows_events_raise_only_decode_errors(
    case: tuple[bytes, bytes, int], data: st.DataObject
) -> None:
    raw_map, raw_rows, id_size = case
    ctx = plain_context(id_size)
    decode_event(raw_map, ctx)
    for _ in range(5):
        body = data.draw(mutations(raw_rows[HEADER_LEN:]))
        only_decode_errors(raw_rows, body, ctx)


@settings(max_examples=examples(2), suppress_health_check=[HealthCheck.too_slow])
@given(encoded_map_and_rows(), st.data())
def test_truncated_events_through_the_core_raise_decode_errors(
    case: tuple[bytes, bytes, int], data: st.DataObject
) -> None:
    raw_map, raw_rows, id_size = case
    ctx = plain_context(id_size)
    decode_event(raw_map, ctx)
    for raw in (raw_map, raw_rows):
        cut = data.draw(st.integers(HEADER_LEN, len(raw) - 1))
        truncated = with_body(raw, raw[HEADER_LEN:cut])
        try:
            decode_event(truncated, ctx.copy())
        except DecodeError as exc:
            assert 0 <= exc.offset <= len(raw)


# --- defects made by hand -----------------------------------------------------------------


def encoded(*events: Any, ctx: BinlogContext | None = None) -> list[bytes]:
    ctx = plain_context() if ctx is None else ctx
    return [encode_event(event, ctx) for event in events]


LONG_AND_TEXT = simple_map((T.LONG, T.VARCHAR), (0, 10))
ONE_ROW = WriteRowsEvent(table_id=42, width=2, columns_present=b"\x03", rows=((1, b"a"),))


def test_rows_event_without_a_table_map() -> None:
    (raw_rows,) = encoded(
        WriteRowsEvent(table_id=99, width=1, columns_present=b"\x01"),
        ctx=_context_with(simple_map((T.LONG,)), table_id=99),
    )
    with pytest.raises(DecodeError, match="no TABLE_MAP for table id 99") as caught:
        decode_event(raw_rows, plain_context())
    assert caught.value.offset == HEADER_LEN


def _context_with(table_map: TableMapEvent, table_id: int) -> BinlogContext:
    ctx = plain_context()
    table_map.table_id = table_id
    encode_event(table_map, ctx)
    return ctx


def test_truncated_row_points_at_the_row() -> None:
    two_rows = WriteRowsEvent(
        table_id=42, width=2, columns_present=b"\x03", rows=((1, b"a"), (2, b"bcd"))
    )
    raw_map, raw_rows = encoded(LONG_AND_TEXT, two_rows)
    ctx = plain_context()
    decode_event(raw_map, ctx)
    # post-header 8, width 1, bitmap 1; first row: NULL bitmap 1 + LONG 4 + VARCHAR 2
    second_row = HEADER_LEN + 8 + 1 + 1 + 7
    with pytest.raises(DecodeError, match="truncated row image") as caught:
        decode_event(with_body(raw_rows, raw_rows[HEADER_LEN:-1]), ctx)
    assert caught.value.offset == second_row
    assert caught.value.event_type == "WRITE_ROWS_V1"


def test_width_above_the_table_map() -> None:
    raw_map, raw_rows = encoded(LONG_AND_TEXT, ONE_ROW)
    ctx = plain_context()
    decode_event(raw_map, ctx)
    body = bytearray(raw_rows[HEADER_LEN:])
    body[8] = 3
    with pytest.raises(DecodeError, match="3 columns, the TABLE_MAP .* has 2"):
        decode_body(raw_rows, bytes(body), ctx)


@pytest.mark.parametrize(
    ("extra_length", "why"), [(1, "less than its own 2 bytes"), (200, "truncated")]
)
def test_v2_extra_data_length(extra_length: int, why: str) -> None:
    v2 = WriteRowsEvent(table_id=42, version=2, width=2, columns_present=b"\x03", rows=((1, b"a"),))
    raw_map, raw_rows = encoded(LONG_AND_TEXT, v2)
    ctx = plain_context()
    decode_event(raw_map, ctx)
    body = bytearray(raw_rows[HEADER_LEN:])
    body[8:10] = extra_length.to_bytes(2, "little")
    with pytest.raises(DecodeError, match=why):
        decode_body(raw_rows, bytes(body), ctx)


def test_trailing_bytes_after_rows_without_columns() -> None:
    no_columns = WriteRowsEvent(table_id=42, width=2, columns_present=b"\x00")
    raw_map, raw_rows = encoded(LONG_AND_TEXT, no_columns)
    ctx = plain_context()
    decode_event(raw_map, ctx)
    assert decode_body(raw_rows, raw_rows[HEADER_LEN:], ctx).rows == ()
    with pytest.raises(DecodeError, match="no columns"):
        decode_body(raw_rows, raw_rows[HEADER_LEN:] + b"\x00", ctx)


def test_corrupt_compressed_rows() -> None:
    compressed = WriteRowsEvent(
        table_id=42, compressed=True, width=2, columns_present=b"\x03", rows=((1, b"a" * 50),)
    )
    raw_map, raw_rows = encoded(LONG_AND_TEXT, compressed)
    ctx = plain_context()
    decode_event(raw_map, ctx)
    body = raw_rows[HEADER_LEN:]
    for bad in (body[:-3], body[:10] + b"\x85" + body[11:], body[:14] + b"\xff" + body[15:]):
        with pytest.raises(DecodeError):
            decode_body(raw_rows, bad, ctx)


def test_bad_value_inside_compressed_rows_is_reported_at_the_record() -> None:
    table_map = simple_map((T.NEWDECIMAL,), (10,))
    good = WriteRowsEvent(table_id=42, compressed=True, width=1, columns_present=b"\x01",
                          rows=((5,),))  # fmt: skip
    raw_map, raw_rows = encoded(table_map, good)
    ctx = plain_context()
    decode_event(raw_map, ctx)
    # Rebuild the record around a DECIMAL(10,0) whose 4-byte word is 10**9.
    from encoder.compression import compress_record

    body = raw_rows[HEADER_LEN : HEADER_LEN + 10] + compress_record(bytes.fromhex("00803b9aca00"))
    with pytest.raises(DecodeError, match="digit group .* uncompressed") as caught:
        decode_body(raw_rows, body, ctx)
    assert caught.value.offset == 10


@pytest.mark.parametrize(
    ("types", "meta", "why"),
    [
        ((T.DECIMAL,), (0,), "old DECIMAL"),
        ((T.DATETIME2,), (7,), "precision 7"),
        ((T.BLOB,), (0,), "length-prefix size 0"),
        ((T.NEWDECIMAL,), (3 | 4 << 8,), "DECIMAL"),
    ],
)
def test_rows_of_columns_no_value_can_have(
    types: tuple[int, ...], meta: tuple[int, ...], why: str
) -> None:
    raw_map = encoded(simple_map(types, meta))[0]
    ctx = plain_context()
    decode_event(raw_map, ctx)
    rows_event = WriteRowsEvent(table_id=42, width=1, columns_present=b"\x01")
    raw_rows = encoded(simple_map((T.LONG,)), rows_event)[1]
    with pytest.raises(DecodeError, match=f"column 0: .*{why}"):
        decode_event(raw_rows, ctx)


@pytest.mark.parametrize(
    ("types", "meta", "value_hex", "why"),
    [
        ((T.DATETIME2,), (0,), "0000000000", "negative DATETIME2"),
        ((T.NEWDECIMAL,), (10,), "803b9aca00", "digit group"),
    ],
)
def test_impossible_values_are_decode_errors_at_their_row(
    types: tuple[int, ...], meta: tuple[int, ...], value_hex: str, why: str
) -> None:
    raw_map = encoded(simple_map(types, meta))[0]
    ctx = plain_context()
    decode_event(raw_map, ctx)
    template = encoded(simple_map((T.LONG,)), WriteRowsEvent(table_id=42, width=1,
                                                             columns_present=b"\x01"))[1]  # fmt: skip
    raw_rows = with_body(template, template[HEADER_LEN:] + b"\x00" + bytes.fromhex(value_hex))
    with pytest.raises(DecodeError, match=why) as caught:
        decode_event(raw_rows, ctx)
    assert caught.value.offset == HEADER_LEN + 10


# --- TABLE_MAP defects --------------------------------------------------------------------


def map_body() -> tuple[bytes, bytes]:
    (raw,) = encoded(LONG_AND_TEXT)
    return raw, raw[HEADER_LEN:]


# body: id 6, flags 2, "db" 1+2+1, "t" 1+1+1, count 1 (at 15), types 2, meta length 1 (at 18),
# metadata 2, NULL-able bitmap 1 (at 21)
@pytest.mark.parametrize(
    ("patch", "why"),
    [
        (lambda b: b[:11] + b"X" + b[12:], "database name is not NUL-terminated"),
        (lambda b: b[:16] + b"\x64" + b[17:], "unknown type 100"),
        (lambda b: b[:18] + b"\x03" + b[19:] + b"\x00", "column metadata is 3 bytes"),
        (lambda b: b[:18] + b"\x01" + b[19:], "column metadata is 1 bytes"),
        (lambda b: b[:21], "NULL-able bitmap"),
        (lambda b: b + b"\x04\x05ab", "optional metadata field 4"),
        (lambda b: b + b"\x04", "packed integer"),
        (lambda b: b[:15] + b"\xfb" + b[16:], "invalid packed integer"),
        (lambda b: b[:7], "post-header"),
    ],
)
def test_table_map_defects(patch: Any, why: str) -> None:
    raw, body = map_body()
    with pytest.raises(DecodeError, match=why):
        decode_body(raw, patch(body), plain_context())


def test_table_map_defect_offsets_are_event_offsets() -> None:
    raw, body = map_body()
    bad = with_body(raw, body[:16] + b"\x64" + body[17:])
    with pytest.raises(DecodeError) as caught:
        decode_event(bad, plain_context(), offset=1000)
    # the metadata block starts after the types: body offset 19
    assert caught.value.offset == 1000 + HEADER_LEN + 19
    assert caught.value.event_type == "TABLE_MAP"


def test_update_rows_with_a_missing_after_image() -> None:
    update = UpdateRowsEvent(
        table_id=42,
        width=2,
        columns_present=b"\x03",
        columns_present_after=b"\x02",
        rows=(((1, b"a"), (ABSENT, b"b")),),
    )
    raw_map, raw_rows = encoded(LONG_AND_TEXT, update)
    ctx = plain_context()
    decode_event(raw_map, ctx)
    assert decode_body(raw_rows, raw_rows[HEADER_LEN:], ctx).rows == update.rows
    # Drop the after image (NULL bitmap + 2 bytes): the last row has only its before image.
    with pytest.raises(DecodeError, match="truncated row image"):
        decode_body(raw_rows, raw_rows[HEADER_LEN:-3], ctx)
