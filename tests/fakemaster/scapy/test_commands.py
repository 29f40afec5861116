"""The client commands' layers against the vocabulary's parsers and encoders.

``fakemaster.vocabulary.commands`` parses COM_REGISTER_SLAVE, COM_BINLOG_DUMP and
COM_BINLOG_DUMP_GTID for the server and encodes them for the client; ``encoder``/``decoder``
handle the semi-sync ACK. A layer built from fields must give the bytes those produce or accept with the
same values, and dissecting those bytes must give back the fields.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from decoder.packets import parse_semi_sync_ack
from encoder.packets import encode_semi_sync_ack
from fakemaster.vocabulary.commands import (
    GTID_DUMP_THROUGH_GTID,
    BinlogDump,
    BinlogDumpGtid,
    RegisterSlave,
)
from fakemaster.vocabulary.constants import Command
from fakemaster.vocabulary.packets import SemiSyncAck
from tests.budget import examples
from tests.peers.policy import require_module

require_module("scapy.contrib.mysql", "pip install 'fakemaster[scapy]' (scapy 2.8 or later)")

from fakemaster.scapy import (  # noqa: E402
    ComBinlogDump,
    ComBinlogDumpGtid,
    ComRegisterSlave,
    SemiSyncAckPacket,
)

u16 = st.integers(0, 0xFFFF)
u32 = st.integers(0, 0xFFFFFFFF)
u64 = st.integers(0, 2**64 - 1)
short = st.binary(max_size=60)
names = st.binary(max_size=300).filter(lambda name: b"\0" not in name)


@settings(max_examples=examples(0.5))
@given(server_id=u32, host=short, user=short, password=short, port=u16, rank=u32, master_id=u32)
def test_register_slave_is_the_request_the_server_parses(
    server_id: int, host: bytes, user: bytes, password: bytes, port: int, rank: int, master_id: int
) -> None:
    request = RegisterSlave(
        server_id=server_id,
        host=host,
        user=user,
        password=password,
        port=port,
        rank=rank,
        master_id=master_id,
    )
    layer = ComRegisterSlave(
        server_id=server_id,
        host=host,
        user=user,
        password=password,
        port=port,
        rank=rank,
        master_id=master_id,
    )
    assert bytes(layer) == request.encode()
    assert RegisterSlave.parse(bytes(layer)[1:]) == request
    back = ComRegisterSlave(request.encode())
    assert (back.cmd, back.server_id, back.host, back.user, back.password) == (
        Command.REGISTER_SLAVE,
        server_id,
        host,
        user,
        password,
    )
    assert (back.port, back.rank, back.master_id) == (port, rank, master_id)


@settings(max_examples=examples(0.5))
@given(position=u32, flags=u16, server_id=u32, name=names)
def test_binlog_dump_is_what_the_server_parses(
    position: int, flags: int, server_id: int, name: bytes
) -> None:
    layer = ComBinlogDump(position=position, flags=flags, server_id=server_id, file_name=name)
    data = bytes(layer)
    assert data[0] == Command.BINLOG_DUMP
    dump = BinlogDump(position=position, flags=flags, server_id=server_id, file_name=name)
    assert data == dump.encode()
    assert BinlogDump.parse(data[1:]) == dump
    back = ComBinlogDump(data)
    assert (back.position, int(back.flags), back.server_id, back.file_name) == (
        position,
        flags,
        server_id,
        name,
    )


@settings(max_examples=examples(0.5))
@given(
    flags=u16,
    server_id=u32,
    name=names,
    position=u64,
    gtid_set=st.binary(max_size=100),
)
def test_binlog_dump_gtid_is_what_the_server_parses(
    flags: int, server_id: int, name: bytes, position: int, gtid_set: bytes
) -> None:
    with_set = bool(flags & GTID_DUMP_THROUGH_GTID)
    layer = ComBinlogDumpGtid(flags=flags, server_id=server_id, file_name=name, position=position)
    if with_set:
        layer.gtid_set = gtid_set
    data = bytes(layer)
    assert data[0] == Command.BINLOG_DUMP_GTID
    expected_set = gtid_set if with_set else b""
    dump = BinlogDumpGtid(
        flags=flags, server_id=server_id, file_name=name, position=position, gtid_set=expected_set
    )
    assert data == dump.encode()
    assert BinlogDumpGtid.parse(data[1:]) == dump
    back = ComBinlogDumpGtid(data)
    assert (int(back.flags), back.server_id, back.file_name, back.position) == (
        flags,
        server_id,
        name,
        position,
    )
    assert (back.gtid_set if with_set else b"") == expected_set


@settings(max_examples=examples(0.5))
@given(position=u64, name=st.text(st.characters(min_codepoint=32, max_codepoint=126), max_size=40))
def test_semi_sync_ack_is_the_encoders(position: int, name: str) -> None:
    ack = SemiSyncAck(position=position, file_name=name)
    layer = SemiSyncAckPacket(position=position, file_name=name.encode())
    assert bytes(layer) == encode_semi_sync_ack(ack)
    back = SemiSyncAckPacket(encode_semi_sync_ack(ack))
    assert parse_semi_sync_ack(bytes(back)) == ack
    assert (back.position, back.file_name) == (position, name.encode())
