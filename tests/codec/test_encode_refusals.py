"""No event or packet encoder raises anything but EncodeError, or writes a value it cannot hold
(issue #6, item 6, beyond the column values of tests/codec/test_encode_limits.py).

Every event type (and every protocol packet) is built valid, then one of its fields -- or a
field of a value inside it (a GTID's XA xid, a GTID_LIST entry, a status variable) -- is set to
something its bytes may not hold: a negative number, one wider than its field, a text or byte
string too long for its length field or not writable in its encoding, a value of the wrong
type. Encoding it must either raise EncodeError naming the event type and that field, or give
bytes that decode back to an equal event: never another exception, never a value that comes
back different. (Lists come back as tuples, and an optional metadata value given as raw bytes
that are the canonical form of a typed value comes back typed: the same bytes either way.)
"""

from __future__ import annotations

import dataclasses
import io
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from decoder.core import decode_event
from decoder.packets import parse_eof, parse_err, parse_ok, parse_semi_sync_ack
from encoder.binlog_file import BinlogWriter
from encoder.compression import compress_record
from encoder.core import encode_event
from encoder.encryption import FileEncryption, encrypt_event
from encoder.packets import (
    encode_binlog_packet,
    encode_eof,
    encode_err,
    encode_ok,
    encode_semi_sync_ack,
    frame,
    frame_parts,
)
from encoder.stream import StreamEncoder
from fakemaster.vocabulary.constants import event_type_name
from fakemaster.vocabulary.context import BinlogContext
from fakemaster.vocabulary.encryption import BinlogKeys
from fakemaster.vocabulary.errors import EncodeError
from fakemaster.vocabulary.events import (
    Event,
    FormatDescriptionEvent,
    RotateEvent,
    StartEncryptionEvent,
    TableMapEvent,
    XaXid,
    XidEvent,
)
from fakemaster.vocabulary.packets import EofPacket, ErrPacket, OkPacket, SemiSyncAck
from scenarios.strategies.control import control_events, format_description_events
from scenarios.strategies.framing import eof_packets, err_packets, ok_packets, semi_sync_acks
from scenarios.strategies.rows import table_maps, table_maps_with_rows
from scenarios.strategies.statements import (
    annotate_rows_events,
    append_block_events,
    begin_load_query_events,
    binlog_checkpoint_events,
    delete_file_events,
    execute_load_query_events,
    gtid_events,
    gtid_list_events,
    intvar_events,
    query_events,
    rand_events,
    user_var_events,
    xa_prepare_events,
    xid_events,
)
from tests.budget import examples

# Fields whose value decides the event's type code: a bad one leaves the event no type name, so
# the error names its class instead.
TYPE_FIELDS = frozenset({"code", "compressed", "version"})


def events_in_context() -> st.SearchStrategy[tuple[tuple[Event, ...], Event]]:
    """(events that set up the stream's context, an event of every type)."""
    alone: list[st.SearchStrategy[Any]] = [
        format_description_events(),
        control_events(),
        gtid_events(),
        gtid_list_events(),
        binlog_checkpoint_events(),
        query_events(),
        execute_load_query_events(),
        xid_events(),
        xa_prepare_events(),
        intvar_events(),
        rand_events(),
        user_var_events(),
        annotate_rows_events(),
        begin_load_query_events(),
        append_block_events(),
        delete_file_events(),
        table_maps(max_columns=6),
    ]
    with_map = table_maps_with_rows(max_columns=6, max_rows=2, max_string=40)
    return st.one_of(
        st.one_of(alone).map(lambda event: ((), event)),
        with_map.map(lambda pair: ((pair[0],), pair[1])),
    )


# --- values a field may not hold ----------------------------------------------------------

WIDE = [-1, -(2**63), 2**8, 2**16, 2**24, 2**28, 2**31, 2**32, 2**48, 2**63, 2**64, 2**70]
scalars = st.one_of(
    st.sampled_from(WIDE),
    st.integers(-(2**80), 2**80),
    st.floats(),
    st.text(max_size=4),
    st.sampled_from(["x" * 300, "\ud800", "é" * 200, "€" * 30, "\x00", "a\x00", "5.5.5\x00x"]),
    st.binary(max_size=4),
    st.sampled_from([b"x" * 256, b"y" * 70000, bytearray(b"ab"), memoryview(b"cd")]),
    st.sampled_from([b"\x00", b"a\x00", b"\x00a", b"\x00" * 20]),
    st.sampled_from([None, True, False, [], [1], (), ("a",), {}, object(), 1.0]),
)
bad_values = st.one_of(scalars, st.tuples(scalars), st.tuples(st.just(0), scalars))


def field_paths(obj: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Paths to every field of a dataclass value: names, and indexes into tuples of them."""
    paths = []
    for field in dataclasses.fields(obj):
        path = (*prefix, field.name)
        paths.append(path)
        value = getattr(obj, field.name)
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            paths += field_paths(value, path)
        elif isinstance(value, tuple) and value and dataclasses.is_dataclass(value[0]):
            paths += field_paths(value[0], (*path, 0))
    return paths


def replaced(obj: Any, path: tuple[Any, ...], value: Any) -> Any:
    """``obj`` with the field at ``path`` set to ``value`` (frozen values rebuilt)."""
    head, *rest = path
    if isinstance(obj, tuple):
        return (replaced(obj[head], tuple(rest), value), *obj[head + 1 :]) if rest else obj
    inner = value if not rest else replaced(getattr(obj, head), tuple(rest), value)
    return dataclasses.replace(obj, **{head: inner})


def normalized(value: Any) -> Any:
    """Lists as the tuples the decoder gives back (the encoder takes either)."""
    if isinstance(value, (list, tuple)):
        return tuple(normalized(item) for item in value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.replace(
            value, **{f.name: normalized(getattr(value, f.name)) for f in dataclasses.fields(value)}
        )
    return value


def label(event: Event) -> str:
    return event_type_name(event.type_code)


def named(field: str) -> str:
    """How a message names a field: a row value's error names its row ("row 2, column 3 `c`:
    ..."), any other error the field."""
    return "row" if field == "rows" else field


def check_names_the_field(error: EncodeError, path: tuple[Any, ...], where: str) -> None:
    """The error names the event type and the corrupted field (``field`` is the one to blame,
    which may be its partner in a rule between two fields: then the message names both)."""
    message = str(error)
    assert error.field is not None, f"{message!r} names no field (corrupted {path})"
    assert named(error.field.split(".")[0].split("[")[0]) in message, message
    assert named(path[0]) in message, f"{message!r} does not name {path[0]}"
    assert error.event_type is not None and message.endswith(f" in {error.event_type}"), message
    if path[0] not in TYPE_FIELDS:
        assert error.event_type == where, message


# --- events -------------------------------------------------------------------------------


@settings(max_examples=examples(6))  # cheap, and a fuzz target
@given(events_in_context(), st.data())
def test_a_field_an_event_cannot_hold_is_an_encode_error(
    case: tuple[tuple[Event, ...], Event], data: st.DataObject
) -> None:
    setup, event = case
    path = data.draw(st.sampled_from(field_paths(event)), label="field")
    bad = replaced(event, path, data.draw(bad_values, label="value"))
    ctx = BinlogContext()
    decoding = BinlogContext()
    for earlier in setup:
        decode_event(encode_event(earlier, ctx), decoding)
    try:
        encoded = encode_event(bad, ctx)
    except EncodeError as error:
        check_names_the_field(error, path, label(event))
        return
    if isinstance(bad, FormatDescriptionEvent):
        decoding = BinlogContext()
    decoded = decode_event(encoded, decoding, allow_unknown=True)
    if path[-1] == "value" and decoded != normalized(bad):
        # An optional metadata field's value given as raw bytes is written as it is; when the
        # bytes are the canonical form of a typed value they come back typed: the same bytes.
        assert isinstance(bad, TableMapEvent), (decoded, bad)
        assert encode_event(decoded, BinlogContext()) == encode_event(bad, BinlogContext())
        return
    assert decoded == normalized(bad)


def test_the_issue_example_names_the_event_and_field() -> None:
    with pytest.raises(EncodeError) as caught:
        encode_event(RotateEvent(position=-1, next_file="mysql-bin.000002"))
    assert str(caught.value) == ("position -1: not in 0..18446744073709551615 (64 bits) in ROTATE")
    assert (caught.value.field, caught.value.event_type) == ("position", "ROTATE")


@pytest.mark.parametrize(
    ("event", "field", "why"),
    [
        (XidEvent(xid=2**64), "xid", "64 bits"),
        (XidEvent(server_id=-5), "server_id", "32 bits"),
        (XidEvent(flags=1 << 16), "flags", "16 bits"),
        (XidEvent(xid="7"), "xid", "not an int"),
        (TableMapEvent(database="é" * 200), "database", "400 bytes, its length field holds 255"),
        (TableMapEvent(table="\udcff\ud800"), "table", "cannot be written"),
        (
            TableMapEvent(column_types=(3, 300), column_meta=(0, 0), nullable=(0, 1)),
            "column_types[1]",
            "8 bits",
        ),  # fmt: skip
        (TableMapEvent(nullable=(2,)), "nullable[0]", "not a bool"),
        (RotateEvent(next_file=b"mysql-bin.000002"), "next_file", "not a str"),
        (FormatDescriptionEvent(server_version="10.11-é€"), "server_version", "cannot be"),
    ],
)
def test_refusals_name_the_field(event: Event, field: str, why: str) -> None:
    with pytest.raises(EncodeError, match=why) as caught:
        encode_event(event)
    assert caught.value.field == field


def test_an_unknown_event_cannot_take_a_modelled_type_code() -> None:
    from fakemaster.vocabulary.events import UnknownEvent

    with pytest.raises(EncodeError, match="QUERY") as caught:
        encode_event(UnknownEvent(code=2, body=b"x"))
    assert caught.value.field == "code"


def test_xid_values_in_two_events_have_their_own_length_fields() -> None:
    """A GTID's XA xid has one-byte lengths, XA_PREPARE's four-byte ones limited to 64."""
    from fakemaster.vocabulary.constants import GtidFlag
    from fakemaster.vocabulary.events import GtidEvent, XaPrepareEvent

    long_xid = XaXid(1, b"g" * 256, b"")
    with pytest.raises(EncodeError, match="holds 255") as caught:
        encode_event(GtidEvent(flags2=GtidFlag.PREPARED_XA, xid=long_xid))
    assert caught.value.field == "xid.gtrid"
    with pytest.raises(EncodeError, match=r"not 1\.\.64") as caught:
        encode_event(XaPrepareEvent(xid=XaXid(1, b"g" * 65, b"")))
    assert caught.value.field == "xid.gtrid"


# --- packets ------------------------------------------------------------------------------

PACKETS: list[tuple[st.SearchStrategy[Any], Callable[[Any], bytes], Callable[[bytes], Any]]] = [
    (ok_packets(), encode_ok, parse_ok),
    (err_packets(), encode_err, parse_err),
    (eof_packets(), encode_eof, parse_eof),
    (semi_sync_acks(), encode_semi_sync_ack, parse_semi_sync_ack),
]


@settings(max_examples=examples(3))
@given(st.sampled_from(PACKETS), st.data())
def test_a_field_a_packet_cannot_hold_is_an_encode_error(
    codec: tuple[st.SearchStrategy[Any], Callable[[Any], bytes], Callable[[bytes], Any]],
    data: st.DataObject,
) -> None:
    packets, encode, parse = codec
    packet = data.draw(packets, label="packet")
    path = data.draw(st.sampled_from(field_paths(packet)), label="field")
    bad = replaced(packet, path, data.draw(bad_values, label="value"))
    try:
        payload = encode(bad)
    except EncodeError as error:
        check_names_the_field(error, path, type(packet).__name__)
        return
    assert parse(payload) == normalized(bad)


@pytest.mark.parametrize(
    ("packet", "encode", "field"),
    [
        (OkPacket(affected_rows=-1), encode_ok, "affected_rows"),
        (OkPacket(header=0x01), encode_ok, "header"),
        (ErrPacket(errno=70000, message="x"), encode_err, "errno"),
        (ErrPacket(errno=1, sqlstate="HY00"), encode_err, "sqlstate"),
        (ErrPacket(errno=1, sqlstate=None, message="#x"), encode_err, "message"),
        (EofPacket(warnings=2.0), encode_eof, "warnings"),  # type: ignore[arg-type]
        (SemiSyncAck(position=2**64, file_name="f"), encode_semi_sync_ack, "position"),
    ],
)
def test_packet_refusals_name_the_packet_and_field(
    packet: Any, encode: Callable[[Any], bytes], field: str
) -> None:
    with pytest.raises(EncodeError) as caught:
        encode(packet)
    assert caught.value.field == field
    assert str(caught.value).endswith(f" in {type(packet).__name__}")


# --- compression, encryption, files, streams, framing -------------------------------------

KEY = bytes(range(16))
CRYPTO = StartEncryptionEvent(nonce=bytes(12))
AN_EVENT = encode_event(XidEvent(xid=1))
NOT_AN_EVENT: Any = OkPacket()
NOT_A_PACKET: Any = "EOF"


def _frame_parts(parts: Any, seq: Any) -> Any:
    return frame_parts(parts, seq)


# Each call, with the arguments that are fine; one of them is replaced by a bad value.
CALLS: list[tuple[str, Callable[..., Any], tuple[Any, ...]]] = [
    ("compress_record", compress_record, (b"text",)),
    ("encrypt_event", encrypt_event, (AN_EVENT, 4, CRYPTO, KEY)),
    ("frame", frame, (b"payload", 0)),
    ("frame_parts", _frame_parts, ([b"pay", b"load"], 0)),
    ("encode_binlog_packet", encode_binlog_packet, (AN_EVENT,)),
    ("BinlogWriter.write_raw", lambda data: BinlogWriter(io.BytesIO()).write_raw(data), (b"x",)),
    ("BinlogWriter offset", lambda offset: BinlogWriter(io.BytesIO(), offset=offset), (4,)),
    ("BinlogWriter.write", lambda event: BinlogWriter(io.BytesIO()).write(event), (XidEvent(),)),
    (
        "StreamEncoder.raw_event",
        lambda data: StreamEncoder(network=True).raw_event(data),
        (AN_EVENT,),
    ),
    ("StreamEncoder.event", lambda event: StreamEncoder().event(event), (XidEvent(),)),
    (
        "StreamEncoder first_sequence",
        lambda seq: StreamEncoder(network=True, first_sequence=seq).event(XidEvent()),
        (1,),
    ),
    ("StreamEncoder.end", lambda packet: StreamEncoder(network=True).end(packet), (EofPacket(),)),
    (
        "FileEncryption.encrypt",
        lambda offset, data: encrypting().encrypt(offset, data),
        (4, AN_EVENT),
    ),
]


def encrypting() -> FileEncryption:
    encryption = FileEncryption(BinlogKeys({1: {1: KEY}}))
    encryption.begin(CRYPTO)
    return encryption


@settings(max_examples=examples(3))
@given(st.sampled_from(CALLS), st.data())
def test_a_bad_argument_is_an_encode_error(
    call: tuple[str, Callable[..., Any], tuple[Any, ...]], data: st.DataObject
) -> None:
    """Given a bad value for one argument, each call raises EncodeError or works."""
    _name, function, good = call
    args = list(good)
    args[data.draw(st.integers(0, len(args) - 1), label="argument")] = data.draw(
        st.one_of(bad_values, st.sampled_from([XidEvent(xid=-1), OkPacket(), CRYPTO])),
        label="value",
    )
    try:
        function(*args)
    except EncodeError:
        pass


@pytest.mark.parametrize(
    ("name", "call", "why"),
    [
        ("compress", lambda: compress_record("text"), "must be bytes"),
        ("offset", lambda: encrypt_event(AN_EVENT, -1, CRYPTO, KEY), "offset"),
        ("scheme", lambda: encrypt_event(AN_EVENT, 4, replace(CRYPTO, scheme=300), KEY), "scheme"),
        ("key", lambda: encrypt_event(AN_EVENT, 4, CRYPTO, "k" * 16), "key must be bytes"),
        ("length", lambda: encrypt_event(AN_EVENT[:-1], 4, CRYPTO, KEY), "event length"),
        ("seq", lambda: frame(b"x", 256), "sequence number 256"),
        ("payload", lambda: frame("x", 0), "payload must be bytes"),
        ("writer", lambda: BinlogWriter(io.BytesIO(), offset=-4), "offset"),
        ("raw", lambda: BinlogWriter(io.BytesIO()).write_raw("x"), "raw bytes must be bytes"),
        ("event", lambda: BinlogWriter(io.BytesIO()).write(NOT_AN_EVENT), "no encoder"),
        ("stream", lambda: StreamEncoder(network=True).end(NOT_A_PACKET), "EofPacket, not str"),
    ],
)
def test_the_other_encoders_refuse_with_encode_errors(
    name: str, call: Callable[[], Any], why: str
) -> None:
    with pytest.raises(EncodeError, match=why):
        call()
