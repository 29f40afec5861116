"""Malformed commands answered as MariaDB 10.11.19 answers them (each shape was run against a
real server: tests/integration/test_malformed_commands_differential.py compares both ends on
the wire; these are the sans-IO halves, one broken shape each)."""

from __future__ import annotations

import struct

import pytest

from decoder.packets import parse_err
from fakemaster.config.accounts import Account
from fakemaster.core.net_buffer import KEPT, NetBuffer
from fakemaster.core.session import Close, StartDump
from fakemaster.vocabulary.commands import BinlogDump
from tests.fakemaster.core.test_session import logged_in, start_dump


def test_the_net_buffer_keeps_what_longer_packets_left_after_the_nul() -> None:
    buffer = NetBuffer()
    buffer.read(b"\x03SELECT 1 #mysql-bin.000009")
    buffer.read(b"\x12\x04\x00")
    assert buffer.packet()[:27] == b"\x04\x00\x00ECT 1 #mysql-bin.000009\x00"
    buffer.read(b"x" * (3 * KEPT))
    assert len(buffer.packet()) == KEPT - 1


def test_a_short_binlog_dump_reads_its_name_from_the_previous_packet() -> None:
    # MariaDB 10.11.19: after "SELECT 1 #mysql-bin.000009", a 7-byte COM_BINLOG_DUMP asks for
    # mysql-bin.000009 (ERR 1236 there: no such file), not for the first file.
    driver = logged_in()
    driver.query("SELECT 1 #mysql-bin.000009")
    dump = BinlogDump(position=4, flags=1, server_id=99).encode()[:7]
    request = start_dump(driver, dump).request
    assert request.file_name == "mysql-bin.000009"
    assert request.position == 4 and request.flags == 1
    assert request.server_id == struct.unpack("<I", b"\x001 #")[0]


def test_a_binlog_dump_of_ten_bytes_has_an_empty_name() -> None:
    driver = logged_in()
    driver.query("SELECT 1 #mysql-bin.000009")
    request = start_dump(driver, BinlogDump(position=4, flags=1, server_id=99).encode()).request
    assert request.file_name == ""


@pytest.mark.parametrize(("length", "dumps"), [(511, True), (512, False), (600, False)])
def test_a_binlog_name_of_fn_reflen_bytes_is_ok_then_close(length: int, dumps: bool) -> None:
    driver = logged_in()
    reply = driver.send(
        BinlogDump(position=4, flags=1, server_id=9, file_name=b"a" * length).encode()
    )
    if dumps:
        assert reply.of_type(StartDump)
    else:
        assert reply.payloads[0][:1] == b"\x00" and len(reply.payloads) == 1
        assert reply.of_type(Close) and not reply.of_type(StartDump)


def test_bytes_after_a_quit_stay_unread() -> None:
    driver = logged_in()
    reply = driver.send_raw(b"\x01\x00\x00\x00\x01" + b"\x01\x00\x00\x00\x0e")
    assert reply.data == b"" and reply.of_type(Close)
    assert driver.session.unread_input == 5


def test_a_well_formed_session_leaves_nothing_unread() -> None:
    driver = logged_in()
    driver.query("SELECT 1")
    start_dump(driver, BinlogDump(position=4, flags=1, server_id=9).encode())
    assert driver.session.unread_input == 0


def test_a_packet_out_of_order_stays_unread_after_its_error() -> None:
    driver = logged_in()
    reply = driver.send(b"\x0e", 3)
    assert parse_err(reply.payloads[0]).errno == 1156
    assert driver.session.unread_input > 0


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b"shop\0", "Incorrect database name 'shop'"),
        (b"sh\0op", "Incorrect database name 'sh'"),
        (b"shop ", "Incorrect database name 'shop '"),
        (b"x" * 65, "Incorrect database name '" + "x" * 65 + "'"),
    ],
)
def test_init_db_with_an_impossible_name(body: bytes, message: str) -> None:
    error = parse_err(logged_in().send(b"\x02" + body).payloads[0])
    assert (error.errno, error.message) == (1102, message)


def test_com_debug_needs_super_and_answers_eof() -> None:
    driver = logged_in()
    sql = driver.session.sql
    assert sql is not None
    sql.account = Account.replication("repl", "secret")
    refused = parse_err(driver.send(b"\x0d").payloads[0])
    assert (refused.errno, refused.message) == (
        1227,
        "Access denied; you need (at least one of) the SUPER privilege(s) for this operation",
    )
    sql.account = Account.admin("repl", "secret")
    assert driver.send(b"\x0d").payloads == [b"\xfe\x00\x00\x02\x00"]


@pytest.mark.parametrize("query", [b"SELECT 1\0", b"SELECT 1 \0", b"SELECT 1;\0", b"SELECT 1\0;"])
def test_a_final_nul_ends_the_query(query: bytes) -> None:
    payloads = logged_in().send(b"\x03" + query).payloads
    assert payloads[0] == b"\x01" and payloads[-2] == b"\x011"


@pytest.mark.parametrize(("query", "errno"), [(b"SELECT 1\0\0", 1064), (b"\0", 1065)])
def test_a_nul_elsewhere_is_an_error(query: bytes, errno: int) -> None:
    assert parse_err(logged_in().send(b"\x03" + query).payloads[0]).errno == errno
