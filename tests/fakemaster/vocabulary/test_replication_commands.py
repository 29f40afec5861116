"""The replication commands of the vocabulary (``fakemaster.vocabulary.commands``): each value
encodes to the bytes its parser reads back, and malformed bodies read as a MariaDB primary reads
them (the server's answers to them are in test_session.py and the integration tests)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fakemaster.vocabulary.commands import (
    GTID_DUMP_THROUGH_GTID,
    BinlogDump,
    BinlogDumpGtid,
    RegisterSlave,
    ReplicationCommand,
    parse_command,
)
from fakemaster.vocabulary.constants import Command
from fakemaster.vocabulary.errors import DecodeError
from tests.budget import examples

u16 = st.integers(0, 0xFFFF)
u32 = st.integers(0, 0xFFFFFFFF)
short = st.binary(max_size=96)

commands = st.one_of(
    st.builds(
        RegisterSlave,
        server_id=u32,
        host=short,
        user=short,
        password=short,
        port=u16,
        rank=u32,
        master_id=u32,
    ),
    st.builds(BinlogDump, position=u32, flags=u16, server_id=u32, file_name=st.binary()),
    st.builds(
        BinlogDumpGtid,
        flags=u16.map(lambda flags: flags | GTID_DUMP_THROUGH_GTID),
        server_id=u32,
        file_name=st.binary(),
        position=st.integers(0, 2**64 - 1),
        gtid_set=st.binary(),
    ),
)


@settings(max_examples=examples(0.5))
@given(command=commands)
def test_every_command_reads_back_from_its_bytes(command: ReplicationCommand) -> None:
    payload = command.encode()
    assert payload == bytes((command.COMMAND,)) + command.body()
    assert type(command).parse(command.body()) == command
    assert parse_command(payload) == command


def test_a_binlog_dump_reads_missing_fixed_fields_as_zero() -> None:
    assert BinlogDump.parse(b"") == BinlogDump(position=0, flags=0, server_id=0)
    assert BinlogDump.parse(b"\x04\x00\x00\x00\x01") == BinlogDump(position=4, flags=1)


def test_a_gtid_dump_without_the_flag_carries_no_gtid_set() -> None:
    dump = BinlogDumpGtid(server_id=3, file_name=b"mysql-bin.000001", gtid_set=b"ignored")
    assert BinlogDumpGtid.parse(dump.body()).gtid_set == b""


@pytest.mark.parametrize("cut", [0, 9, 10, 17])
def test_a_gtid_dump_cut_before_its_position_is_malformed(cut: int) -> None:
    body = BinlogDumpGtid(server_id=3).body()
    assert len(body) == 18
    with pytest.raises(DecodeError, match="truncated COM_BINLOG_DUMP_GTID"):
        BinlogDumpGtid.parse(body[:cut])


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        (b"", "Failed to register slave: too long 'report-host'"),
        (b"\x01\x00\x00\x00", "Failed to register slave: too long 'report-host'"),
        (b"\x01\x00\x00\x00\x00", "Failed to register slave: too long 'report-user'"),
        (b"\x01\x00\x00\x00\x00\x00\x61" + b"p" * 0x61, "too long 'report-password'"),
        (b"\x01\x00\x00\x00\x00\x00\x00\x00", "Wrong parameters to function register_slave"),
    ],
)
def test_a_malformed_register_slave_names_what_mariadb_answers(body: bytes, reason: str) -> None:
    with pytest.raises(DecodeError) as raised:
        RegisterSlave.parse(body)
    assert reason in raised.value.reason


def test_only_replication_commands_parse() -> None:
    with pytest.raises(DecodeError, match="not a replication command"):
        parse_command(bytes((Command.QUERY,)) + b"SELECT 1")
    with pytest.raises(DecodeError):
        parse_command(b"")
