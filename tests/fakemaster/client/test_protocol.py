"""The sans-IO core against a scripted primary (no socket): the login with an auth switch
(the response checked against mysql_native_password computed here with hashlib), answers to
the setup statements, the dump, and the typed errors."""

from __future__ import annotations

import hashlib
import struct
from collections.abc import Callable

import pytest

from decoder.packets import PacketReader
from encoder.core import encode_event
from encoder.packets import encode_err, encode_ok, frame
from fakemaster.client.position import Position
from fakemaster.client.protocol import (
    AuthError,
    BinlogUnavailable,
    ClientConfig,
    EventReceived,
    ProtocolError,
    Ready,
    ReplicaConnection,
    ServerRefused,
)
from fakemaster.protocol.handshake import AuthSwitchRequest, HandshakeResponse, HandshakeV10
from fakemaster.vocabulary.commands import BinlogDump, RegisterSlave, parse_command
from fakemaster.vocabulary.constants import Command
from fakemaster.vocabulary.context import BinlogContext
from fakemaster.vocabulary.events import FormatDescriptionEvent, GtidEvent, RotateEvent, XidEvent
from fakemaster.vocabulary.packets import EofPacket, ErrPacket, OkPacket

SCRAMBLE = b"abcdefghij0123456789"
SWITCHED = b"ZYXWVUTSRQ9876543210"
PASSWORD = "s3cret"
COLUMN = b"\x03def\x00\x00\x00\x01v\x00\x0c\x21\x00\x00\x01\x00\x00\xfd\x00\x00\x00\x00\x00"


def native(password: str, scramble: bytes) -> bytes:
    stage1 = hashlib.sha1(password.encode()).digest()
    mask = hashlib.sha1(scramble + hashlib.sha1(stage1).digest()).digest()
    return bytes(a ^ b for a, b in zip(stage1, mask, strict=True))


def packets(data: bytes) -> list[tuple[int, bytes]]:
    """(sequence number, payload) of each packet in ``data``."""
    out = []
    pos = 0
    while pos < len(data):
        word = struct.unpack_from("<I", data, pos)[0]
        size = word & 0xFFFFFF
        out.append((word >> 24, data[pos + 4 : pos + 4 + size]))
        pos += 4 + size
    return out


def result(*rows: tuple[bytes | None, ...]) -> bytes:
    """A text result set of one or two columns (EOF packets, no CLIENT_DEPRECATE_EOF)."""
    width = len(rows[0]) if rows else 1
    payloads = [bytes((width,)), *([COLUMN] * width), _eof()]
    for row in rows:
        payloads.append(b"".join(b"\xfb" if c is None else bytes((len(c),)) + c for c in row))
    payloads.append(_eof())
    return b"".join(frame(p, seq)[0] for seq, p in enumerate(payloads, 1))


def _eof() -> bytes:
    return struct.pack("<BHH", 0xFE, 0, EofPacket().status_flags)


def ok() -> bytes:
    return frame(encode_ok(OkPacket()), 1)[0]


class ScriptedPrimary:
    """Answers the client's commands as a MariaDB 10.11 primary with checksums on would."""

    def __init__(self, answers: dict[str, Callable[[], bytes]] | None = None) -> None:
        self.queries: list[str] = []
        self.commands: list[bytes] = []
        self.answers = answers or {}

    def answer(self, sent: bytes) -> bytes:
        out = b""
        for _seq, payload in packets(sent):
            self.commands.append(payload)
            if payload[0] == Command.QUERY:
                sql = payload[1:].decode()
                self.queries.append(sql)
                if sql in self.answers:
                    out += self.answers[sql]()
                elif sql == "SHOW VARIABLES LIKE 'SERVER_ID'":
                    out += result((b"server_id", b"1"))
                elif sql == "SELECT @master_binlog_checksum":
                    out += result((b"CRC32",))
                elif sql.startswith("SELECT"):
                    out += result((b"0",))
                else:
                    out += ok()
            elif payload[0] == Command.REGISTER_SLAVE:
                out += ok()
        return out


def logged_in(config: ClientConfig, primary: ScriptedPrimary) -> ReplicaConnection:
    core = ReplicaConnection(config)
    handshake = HandshakeV10("5.5.5-10.11.19-MariaDB-log", 9, SCRAMBLE, auth_plugin="ed25519")
    assert core.feed(frame(handshake.encode(), 0)[0]) == []
    ((seq, payload),) = packets(core.data_to_send())
    response = HandshakeResponse.decode(payload)
    assert seq == 1 and response.user == b"repl" and response.auth_plugin == "mysql_native_password"
    assert response.auth_response == native(PASSWORD, SCRAMBLE)
    # The account's plugin differs: the server switches, with a fresh scramble.
    switch = AuthSwitchRequest("mysql_native_password", SWITCHED).encode()
    assert core.feed(frame(switch, 2)[0]) == []
    ((seq, payload),) = packets(core.data_to_send())
    assert seq == 3 and payload == native(PASSWORD, SWITCHED)
    core.feed(frame(encode_ok(OkPacket()), 4)[0])
    return core


def run_setup(core: ReplicaConnection, primary: ScriptedPrimary) -> list[object]:
    happenings: list[object] = []
    while not happenings:
        reply = primary.answer(core.data_to_send())
        assert reply, "the client waits for nothing"
        happenings = list(core.feed(reply))
    assert primary.answer(core.data_to_send()) == b""  # COM_BINLOG_DUMP: no answer but events
    return happenings


CONFIG = ClientConfig(user="repl", password=PASSWORD, server_id=42)


def test_client_core_logs_in_through_an_auth_switch_and_dumps() -> None:
    primary = ScriptedPrimary()
    core = logged_in(CONFIG, primary)
    happenings = run_setup(core, primary)
    assert happenings == [
        Ready(
            "5.5.5-10.11.19-MariaDB-log",
            9,
            master_server_id=1,
            checksum=True,
            semi_sync=False,
            gtid_domain_id=0,
        )
    ]
    assert parse_command(primary.commands[-1]) == BinlogDump(position=4, flags=0, server_id=42)
    register = next(c for c in primary.commands if c[0] == Command.REGISTER_SLAVE)
    assert RegisterSlave.parse(register[1:]).server_id == 42
    # The dump: events, then ERR 1236 in the same read.
    ctx = BinlogContext(checksum=True)
    events = [
        RotateEvent(next_file="mysql-bin.000001", position=4),
        FormatDescriptionEvent(log_pos=256),
        GtidEvent(seq_no=1, log_pos=300),
        XidEvent(xid=1, log_pos=331),
    ]
    stream = b"".join(
        frame(b"\x00" + encode_event(e, ctx), seq)[0] for seq, e in enumerate(events, 1)
    )
    err = ErrPacket(1236, "HY000", "Could not find first log file name in binary log index file")
    stream += frame(encode_err(err), len(events) + 1)[0]
    got = core.feed(stream)
    assert [h.decoded.event for h in got if isinstance(h, EventReceived)] == events
    assert {h.file for h in got if isinstance(h, EventReceived)} == {"mysql-bin.000001"}
    with pytest.raises(BinlogUnavailable) as raised:
        core.raise_error()
    assert raised.value.errno == 1236 and not raised.value.retryable


def test_client_core_file_pos_mode_asks_binlog_gtid_pos_and_dumps_from_the_position() -> None:
    primary = ScriptedPrimary(
        {"SELECT binlog_gtid_pos('mysql-bin.000003',1234)": lambda: result((b"0-1-9",))}
    )
    start = Position.from_gtids("0-1-9").at("mysql-bin.000003", 1234)
    config = ClientConfig(user="repl", password=PASSWORD, server_id=42, gtid_mode=False)
    core = ReplicaConnection(config, start)
    core.feed(frame(HandshakeV10("5.5.5-10.11.19-MariaDB-log", 9, SCRAMBLE).encode(), 0)[0])
    core.data_to_send()
    core.feed(frame(encode_ok(OkPacket()), 2)[0])
    run_setup(core, primary)
    assert "SELECT binlog_gtid_pos('mysql-bin.000003',1234)" in primary.queries
    assert not any("slave_connect_state" in q for q in primary.queries)
    assert parse_command(primary.commands[-1]) == BinlogDump(
        position=1234, flags=0, server_id=42, file_name=b"mysql-bin.000003"
    )
    assert core.binlog_gtid_pos == "0-1-9"


def test_client_core_gtid_mode_sends_its_position_as_the_connect_state() -> None:
    primary = ScriptedPrimary()
    config = ClientConfig(user="repl", password=PASSWORD, server_id=42)
    core = ReplicaConnection(config, Position.from_gtids("1-2-30,0-1-9"))
    core.feed(frame(HandshakeV10("5.5.5-10.11.19-MariaDB-log", 9, SCRAMBLE).encode(), 0)[0])
    core.data_to_send()
    core.feed(frame(encode_ok(OkPacket()), 2)[0])
    run_setup(core, primary)
    assert "SET @slave_connect_state='0-1-9,1-2-30'" in primary.queries


def test_client_core_refuses_a_primary_with_its_own_server_id() -> None:
    primary = ScriptedPrimary(
        {"SHOW VARIABLES LIKE 'SERVER_ID'": lambda: result((b"server_id", b"42"))}
    )
    core = logged_in(CONFIG, primary)
    with pytest.raises(ServerRefused) as raised:
        run_setup(core, primary)
    assert not raised.value.retryable and "equal MariaDB server ids" in str(raised.value)


def test_client_core_errors_are_typed() -> None:
    core = ReplicaConnection(CONFIG)
    core.feed(frame(HandshakeV10("5.5.5-10.11.19-MariaDB-log", 9, SCRAMBLE).encode(), 0)[0])
    core.data_to_send()
    denied = ErrPacket(
        1045, "28000", "Access denied for user 'repl'@'localhost' (using password: YES)"
    )
    with pytest.raises(AuthError) as raised:
        core.feed(frame(encode_err(denied), 2)[0])
    assert raised.value.errno == 1045 and not raised.value.retryable
    busy = ReplicaConnection(CONFIG)
    with pytest.raises(ServerRefused) as refused:
        busy.feed(frame(encode_err(ErrPacket(1040, None, "Too many connections")), 0)[0])
    assert refused.value.retryable
    switch = ReplicaConnection(CONFIG)
    switch.feed(frame(HandshakeV10("5.5.5-10.11.19-MariaDB-log", 9, SCRAMBLE).encode(), 0)[0])
    with pytest.raises(AuthError):
        switch.feed(frame(AuthSwitchRequest("sha256_password", SWITCHED).encode(), 2)[0])
    # A setup statement the primary refuses.
    primary = ScriptedPrimary(
        {
            "SET @mariadb_slave_capability=4": lambda: frame(
                encode_err(ErrPacket(1227, "42000", "Access denied")), 1
            )[0]
        }
    )
    core = logged_in(CONFIG, primary)
    with pytest.raises(ServerRefused) as setup:
        run_setup(core, primary)
    assert setup.value.errno == 1227 and "mariadb_slave_capability" in str(setup.value)


def test_client_core_an_empty_packet_in_the_login_or_setup_is_a_typed_error() -> None:
    for answers in (0, 1):
        primary = ScriptedPrimary()
        core = ReplicaConnection(CONFIG)
        core.feed(frame(HandshakeV10("5.5.5-10.11.19-MariaDB-log", 9, SCRAMBLE).encode(), 0)[0])
        core.data_to_send()
        if answers:
            core.feed(ok())  # logged in: the setup's first statement is sent
            primary.answer(core.data_to_send())
        with pytest.raises(ProtocolError if answers else AuthError, match="empty|0x00"):
            core.feed(frame(b"", 2)[0])


def test_client_core_semi_sync_acks_the_events_the_primary_asks_for() -> None:
    primary = ScriptedPrimary(
        {
            "SHOW VARIABLES LIKE 'rpl_semi_sync_master_enabled'": lambda: result(
                (b"rpl_semi_sync_master_enabled", b"ON")
            )
        }
    )
    config = ClientConfig(user="repl", password=PASSWORD, server_id=42, semi_sync=True)
    core = logged_in(config, primary)
    (ready,) = run_setup(core, primary)
    assert isinstance(ready, Ready) and ready.semi_sync
    assert primary.queries[-1] == "SET @rpl_semi_sync_slave= 1"
    ctx = BinlogContext(checksum=True)
    rotate = RotateEvent(next_file="mysql-bin.000002", position=4)
    xid = XidEvent(xid=1, log_pos=900)
    stream = frame(b"\x00\xef\x00" + encode_event(rotate, ctx), 1)[0]
    stream += frame(b"\x00\xef\x01" + encode_event(xid, ctx), 2)[0]
    # After an event that asked for an ACK, the primary's packets start again at 1.
    stream += frame(b"\x00\xef\x00" + encode_event(XidEvent(xid=2, log_pos=950), ctx), 1)[0]
    got = core.feed(stream)
    assert [h.acknowledged for h in got if isinstance(h, EventReceived)] == [False, True, False]
    ((seq, ack),) = packets(core.data_to_send())
    assert seq == 0 and ack == b"\xef" + struct.pack("<Q", 900) + b"mysql-bin.000002"
    reader = PacketReader(check_sequence=False)
    reader.feed(frame(ack, 0)[0])
    assert list(reader) == [ack]
