"""Golden vectors from the seed documents (tests/golden/seed_vectors.json, see its README).

Every hex dump of an event, packet or value in the seed documents must decode to the field
values the document states and encode back to the same bytes. Events go through
``decode_event``/``encode_event``, packets through the packet reader and framing, values through
the value codecs. Independently of the codec, every CRC32 in the dumps is recomputed with zlib.
"""

from __future__ import annotations

import json
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from decoder import decode_event
from decoder.core import read_header
from decoder.packets import (
    PacketReader,
    parse_binlog_packet,
    parse_eof,
    parse_ok,
    parse_semi_sync_ack,
)
from decoder.stream import EventSplitter, check_magic
from decoder.values import decode_value
from encoder import encode_event
from encoder.packets import (
    encode_binlog_packet,
    encode_eof,
    encode_ok,
    encode_semi_sync_ack,
    frame,
)
from encoder.values import encode_value
from fakemaster.vocabulary import constants
from fakemaster.vocabulary.commands import BinlogDump, RegisterSlave
from fakemaster.vocabulary.constants import Command, EventType
from fakemaster.vocabulary.context import BinlogContext
from fakemaster.vocabulary.events import Event
from fakemaster.vocabulary.values import Date, DateTime, Time, Timestamp

VECTORS_PATH = Path(__file__).resolve().parent.parent / "golden" / "seed_vectors.json"
VECTORS: list[dict[str, Any]] = json.loads(VECTORS_PATH.read_text(encoding="utf-8"))["vectors"]
BY_ID = {vector["id"]: vector for vector in VECTORS}

FLAGS_OFFSET = 17
IN_USE = 0x0001
HEADER_FIELDS = ("timestamp", "type_code", "server_id", "event_length", "log_pos", "flags")


def of_kind(*kinds: str) -> list[Any]:
    return [pytest.param(v, id=v["id"]) for v in VECTORS if v["kind"] in kinds]


def data_of(vector: dict[str, Any]) -> bytes:
    return bytes.fromhex(vector["hex"])


# --- comparing decoded values with what the document states ----------------------------------


def tagged(expected: dict[str, Any]) -> Any:
    """The project value a single-key tagged JSON object stands for (see README.md)."""
    ((tag, value),) = expected.items()
    if tag == "text":
        return value.encode("utf-8")
    if tag == "hex":
        return bytes.fromhex(value)
    if tag == "datetime":
        return DateTime(*value)
    if tag == "date":
        return Date(*value)
    if tag == "time":
        return Time(*value)
    if tag == "timestamp":
        return Timestamp(*value)
    raise AssertionError(f"unknown tag {tag!r} in seed_vectors.json")


TAGS = frozenset({"text", "hex", "datetime", "date", "time", "timestamp"})


def assert_matches(actual: Any, expected: Any, path: str) -> None:
    """``actual`` holds every value ``expected`` lists (fields not listed are not compared)."""
    if isinstance(expected, dict) and len(expected) == 1 and next(iter(expected)) in TAGS:
        want = tagged(expected)
        assert type(actual) is type(want) and actual == want, f"{path}: {actual!r} != {want!r}"
    elif isinstance(expected, dict) and set(expected) == {"length"}:
        assert len(actual) == expected["length"], f"{path}: length {len(actual)}"
    elif isinstance(expected, dict):
        for key, value in expected.items():
            if isinstance(actual, dict):
                assert key in actual, f"{path}: no {key!r}"
                item = actual[key]
            else:
                assert hasattr(actual, key), f"{path}: {type(actual).__name__} has no {key!r}"
                item = getattr(actual, key)
            assert_matches(item, value, f"{path}.{key}")
    elif isinstance(expected, list):
        assert isinstance(actual, (list, tuple)), f"{path}: {actual!r} is not a sequence"
        assert len(actual) == len(expected), f"{path}: {len(actual)} items, not {len(expected)}"
        for index, (item, value) in enumerate(zip(actual, expected, strict=True)):
            assert_matches(item, value, f"{path}[{index}]")
    elif expected is None or isinstance(expected, bool):
        assert actual is expected, f"{path}: {actual!r} is not {expected!r}"
    else:
        assert type(actual) is not bytes, f"{path}: bytes {actual!r} where {expected!r} is stated"
        assert actual == expected, f"{path}: {actual!r} != {expected!r}"


def assert_header(data: bytes, expected: dict[str, Any], path: str) -> None:
    header = read_header(data)
    for name, value in expected.items():
        assert name in HEADER_FIELDS, f"{path}: unknown header field {name}"
        assert getattr(header, name) == value, f"{path}.{name}: {getattr(header, name)} != {value}"


def assert_event(event: Event, spec: dict[str, Any], path: str) -> None:
    assert type(event).__name__ == spec["class"], (
        f"{path}: decoded as {type(event).__name__}, not {spec['class']}"
    )
    assert event.type_code == EventType[spec["event_type"]], f"{path}: type {event.type_code}"
    assert_matches(event, spec["expected"], path)


# --- contexts: the events a vector needs to have been seen before it --------------------------


@dataclass
class Contexts:
    decode: BinlogContext
    encode: BinlogContext


def contexts_for(vector: dict[str, Any]) -> Contexts:
    """Decoder and encoder contexts that have seen the vector's context events (e.g. the
    TABLE_MAP of a rows event), then set to the vector's checksum setting."""
    decode_ctx = BinlogContext()
    encode_ctx = BinlogContext()
    for context_id in vector.get("context", {}).get("events", ()):
        context = BY_ID[context_id]
        decode_ctx.checksum = encode_ctx.checksum = context["checksum"]
        event = decode_event(data_of(context), decode_ctx)
        encode_event(event, encode_ctx)
    decode_ctx.checksum = encode_ctx.checksum = vector.get("checksum", True)
    return Contexts(decode_ctx, encode_ctx)


# --- CRC32, independently of the codec ---------------------------------------------------------


def crc_ok(event: bytes) -> bool:
    body = bytearray(event[:-4])
    if body[4] == EventType.FORMAT_DESCRIPTION:
        body[FLAGS_OFFSET] &= ~IN_USE & 0xFF
    return zlib.crc32(body) == int.from_bytes(event[-4:], "little")


def events_with_crc() -> list[Any]:
    """(vector id, event bytes, stated CRC or None) of every dumped event with a CRC32."""
    found = []
    for vector in VECTORS:
        if vector["kind"] == "event" and vector["checksum"]:
            found.append(pytest.param(data_of(vector), vector.get("crc32"), id=vector["id"]))
        elif vector["kind"] == "packets" and vector.get("checksum"):
            for index, (_, payload) in enumerate(split_packets(data_of(vector))):
                if payload[:1] == b"\x00":
                    event = payload[3:] if vector.get("semi_sync") else payload[1:]
                    found.append(pytest.param(event, None, id=f"{vector['id']}#{index}"))
    return found


def split_packets(data: bytes) -> list[tuple[int, bytes]]:
    """(sequence number, payload) of each packet, read by the codec's PacketReader."""
    reader = PacketReader(expected_seq=data[3] if len(data) > 3 else None)
    reader.feed(data)
    packets = []
    while (packet := reader.next_packet()) is not None:
        offset, payload = packet
        packets.append((data[offset + 3], payload))
    reader.finish()
    return packets


@pytest.mark.parametrize(("event", "stated_crc"), events_with_crc())
def test_dumped_crc32_verifies(event: bytes, stated_crc: str | None) -> None:
    assert crc_ok(event), f"CRC32 {event[-4:].hex()} does not verify"
    if stated_crc is not None:
        assert int.from_bytes(event[-4:], "little") == int(stated_crc, 16)


@pytest.mark.parametrize(
    "vector", [p for p in of_kind("event", "packets") if "doc_hex" in p.values[0]]
)
def test_corrected_dumps_are_proven_by_their_crc(vector: dict[str, Any]) -> None:
    """A dump printed with a defect: the printed bytes fail their own CRC, the corrected pass."""
    printed = bytes.fromhex(vector["doc_hex"])
    corrected = data_of(vector)
    if vector["kind"] == "packets":
        skip = 7 if vector.get("semi_sync") else 5
        printed, corrected = printed[skip:], corrected[skip:]
    assert not crc_ok(printed)
    assert crc_ok(corrected)


# --- whole events ------------------------------------------------------------------------------


@pytest.mark.parametrize("vector", of_kind("event"))
def test_event_decodes_to_stated_fields(vector: dict[str, Any]) -> None:
    data = data_of(vector)
    assert_header(data, vector.get("header", {}), vector["id"])
    event = decode_event(data, contexts_for(vector).decode)
    assert_event(event, vector, vector["id"])


@pytest.mark.parametrize("vector", of_kind("event"))
def test_event_encodes_back_to_the_dumped_bytes(vector: dict[str, Any]) -> None:
    data = data_of(vector)
    contexts = contexts_for(vector)
    event = decode_event(data, contexts.decode)
    # An undecoded body (UnknownEvent) would round-trip trivially: require the modelled class.
    assert type(event).__name__ == vector["class"]
    assert encode_event(event, contexts.encode).hex() == data.hex()


@pytest.mark.parametrize("vector", of_kind("event_prefix"))
def test_event_prefix_header(vector: dict[str, Any]) -> None:
    data = data_of(vector)
    assert_header(data, vector["header"], vector["id"])
    (whole_id,) = vector["context"]["events"]
    assert data_of(BY_ID[whole_id]).startswith(data)


# --- binlog file -----------------------------------------------------------------------------


@pytest.mark.parametrize("vector", of_kind("file_fragment"))
def test_binlog_file_fragment(vector: dict[str, Any]) -> None:
    """The printed rows of a file dump are the magic and the context events at their offsets."""
    magic = tagged(vector["expected"]["magic"])
    assert magic == constants.BINLOG_MAGIC
    events = [data_of(BY_ID[event_id]) for event_id in vector["context"]["events"]]
    file_bytes = magic + b"".join(events)
    for segment in vector["segments"]:
        start = segment["offset"]
        printed = bytes.fromhex(segment["hex"])
        assert file_bytes[start : start + len(printed)].hex() == printed.hex()
    check_magic(file_bytes)
    splitter = EventSplitter()
    splitter.feed(file_bytes)
    found = list(splitter)
    splitter.finish()
    stated = vector["expected"]["events"]
    assert [(offset, len(event)) for offset, event in found] == [
        (item["offset"], item["event_length"]) for item in stated
    ]
    ctx = BinlogContext()
    for (_, event_bytes), item in zip(found, stated, strict=True):
        assert decode_event(event_bytes, ctx).type_code == EventType[item["event_type"]]


@pytest.mark.parametrize("vector", of_kind("constant"))
def test_protocol_constant(vector: dict[str, Any]) -> None:
    assert getattr(constants, vector["name"]) == data_of(vector)


# --- packets -----------------------------------------------------------------------------------


@pytest.mark.parametrize("vector", of_kind("packets"))
def test_packets_split_and_reframe(vector: dict[str, Any]) -> None:
    data = data_of(vector)
    packets = split_packets(data)
    stated = vector["packets"]
    assert [(seq, len(payload)) for seq, payload in packets] == [
        (item["seq"], item["length"]) for item in stated
    ]
    assert b"".join(frame(payload, seq)[0] for seq, payload in packets).hex() == data.hex()


def packet_params(*payload_kinds: str) -> list[Any]:
    params = []
    for vector in VECTORS:
        if vector["kind"] != "packets":
            continue
        for index, item in enumerate(vector["packets"]):
            if item["payload"] in payload_kinds:
                params.append(pytest.param(vector, index, id=f"{vector['id']}#{index}"))
    return params


def payload_of(vector: dict[str, Any], index: int) -> bytes:
    return split_packets(data_of(vector))[index][1]


@pytest.mark.parametrize(("vector", "index"), packet_params("binlog_event"))
def test_binlog_event_packet(vector: dict[str, Any], index: int) -> None:
    """An event of a dump stream decodes (in the stream's context) to the stated fields and its
    packet payload is rebuilt byte for byte."""
    semi_sync = vector.get("semi_sync", False)
    contexts = contexts_for(vector)
    event = None
    payload = b""
    for position, (_, payload) in enumerate(split_packets(data_of(vector))[: index + 1]):
        event_bytes, ack_requested = parse_binlog_packet(payload, semi_sync)
        event = decode_event(bytes(event_bytes), contexts.decode)
        encoded = encode_event(event, contexts.encode)
        if position == index:
            spec = vector["packets"][index]
            path = f"{vector['id']}#{index}"
            assert ack_requested is spec.get("ack_requested", False)
            assert_header(bytes(event_bytes), spec.get("header", {}), path)
            assert_event(event, spec, path)
            rebuilt = encode_binlog_packet(
                encoded, semi_sync=semi_sync, ack_requested=ack_requested
            )
            assert rebuilt.hex() == payload.hex()


@pytest.mark.parametrize(("vector", "index"), packet_params("ok"))
def test_ok_packet(vector: dict[str, Any], index: int) -> None:
    payload = payload_of(vector, index)
    packet = parse_ok(payload)
    assert_matches(packet, vector["packets"][index]["expected"], vector["id"])
    assert encode_ok(packet) == payload


@pytest.mark.parametrize(("vector", "index"), packet_params("eof"))
def test_eof_packet(vector: dict[str, Any], index: int) -> None:
    payload = payload_of(vector, index)
    packet = parse_eof(payload)
    assert_matches(packet, vector["packets"][index]["expected"], vector["id"])
    assert encode_eof(packet) == payload


@pytest.mark.parametrize(("vector", "index"), packet_params("semi_sync_ack"))
def test_semi_sync_ack_packet(vector: dict[str, Any], index: int) -> None:
    payload = payload_of(vector, index)
    ack = parse_semi_sync_ack(payload)
    assert_matches(ack, vector["packets"][index]["expected"], vector["id"])
    assert encode_semi_sync_ack(ack) == payload


@pytest.mark.parametrize(("vector", "index"), packet_params("com_query"))
def test_com_query_packet(vector: dict[str, Any], index: int) -> None:
    payload = payload_of(vector, index)
    assert payload[0] == Command.QUERY
    expected = vector["packets"][index]["expected"]
    if expected:
        assert_matches({"command": payload[0], "query": payload[1:]}, expected, vector["id"])


COMMAND_PAYLOADS = ("com_register_slave", "com_binlog_dump")


@pytest.mark.parametrize(("vector", "index"), packet_params("com_register_slave"))
def test_register_slave_packet(vector: dict[str, Any], index: int) -> None:
    payload = payload_of(vector, index)
    assert payload[0] == Command.REGISTER_SLAVE
    request = RegisterSlave.parse(payload[1:])
    expected = dict(vector["packets"][index]["expected"])
    assert expected.pop("command") == payload[0]
    assert_matches(request, expected, vector["id"])
    assert request.encode() == payload


@pytest.mark.parametrize(("vector", "index"), packet_params("com_binlog_dump"))
def test_binlog_dump_packet(vector: dict[str, Any], index: int) -> None:
    payload = payload_of(vector, index)
    assert payload[0] == Command.BINLOG_DUMP
    request = BinlogDump.parse(payload[1:])
    expected = dict(vector["packets"][index]["expected"])
    assert expected.pop("command") == payload[0]
    assert_matches(request, expected, vector["id"])
    assert request.encode() == payload


# --- row values --------------------------------------------------------------------------------


def column_type(name: str) -> int:
    return int(constants.ColumnType[name])


@pytest.mark.parametrize("vector", of_kind("row_value"))
def test_row_value(vector: dict[str, Any]) -> None:
    data = data_of(vector)
    value, end = decode_value(column_type(vector["type"]), vector["meta"], data)
    assert end == len(data)
    assert_matches(value, vector["expected"], vector["id"])
    assert encode_value(column_type(vector["type"]), vector["meta"], value).hex() == data.hex()


@pytest.mark.parametrize("vector", of_kind("row_values"))
def test_row_image_values(vector: dict[str, Any]) -> None:
    data = data_of(vector)
    pos = 0
    encoded = b""
    for column in vector["columns"]:
        code = column_type(column["type"])
        value, pos = decode_value(code, column["meta"], data, pos)
        assert_matches(value, column["expected"], f"{vector['id']}.{column['name']}")
        encoded += encode_value(code, column["meta"], value)
    assert pos == len(data)
    assert encoded.hex() == data.hex()


def test_every_vector_kind_is_tested() -> None:
    tested = {
        "event",
        "event_prefix",
        "file_fragment",
        "constant",
        "packets",
        "row_value",
        "row_values",
    }
    assert {vector["kind"] for vector in VECTORS} <= tested
    payloads = {item["payload"] for vector in VECTORS for item in vector.get("packets", ())}
    framed_only = {
        "handshake",
        "handshake_response",
        "column_count",
        "column_definition",
        "text_row",
    }
    assert payloads <= {
        "binlog_event",
        "ok",
        "eof",
        "semi_sync_ack",
        "com_query",
        *COMMAND_PAYLOADS,
        *framed_only,
    }
