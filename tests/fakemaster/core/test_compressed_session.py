"""The compressed protocol in the sans-IO core: ``ServerSession`` and
``fakemaster.protocol.compression`` against what a real MariaDB 10.11 sent for the same bytes
(``tests/golden/compressed_protocol``, made by ``scripts/capture-compressed-protocol.py``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from encoder.packets import frame
from fakemaster.config.accounts import Account
from fakemaster.config.server_config import ServerConfig
from fakemaster.core.dump.stream import DumpStream
from fakemaster.core.session import Close, SendBytes, ServerSession, StartDump
from fakemaster.protocol.compression import CompressedChannel, CompressedDump
from fakemaster.protocol.handshake import (
    NATIVE_PASSWORD,
    HandshakeResponse,
    native_password_response,
)
from fakemaster.sql.state import ServerState
from fakemaster.store import DirectoryBinlogStore
from fakemaster.vocabulary.constants import NET_BUFFER_LENGTH
from scenarios.strategies.framing import cut_points, split_at
from tests.support.compressed_wire import (
    CAPTURE_DIR,
    COMPRESSED_CAPABILITIES,
    compressed_packet,
    inner_stream,
    load_capture,
    result_ends,
    split_compressed,
)
from tests.support.wire import BASE_CAPABILITIES, Reply, SessionDriver

CAPTURE = load_capture()
EXACT_SESSIONS = [session for session in CAPTURE["sessions"] if session["fake_exact"]]


def compressed_driver(
    capabilities: int = COMPRESSED_CAPABILITIES, **config: Any
) -> tuple[SessionDriver, Reply]:
    # The capture's account: repl with ALL PRIVILEGES (scripts/capture-compressed-protocol.py).
    settings = {
        "user": "repl",
        "password": "secret",
        "accounts": (Account.admin("repl", "secret"),),
        **config,
    }
    driver = SessionDriver(ServerSession(ServerState(ServerConfig(**settings))))
    return driver, driver.login(capabilities=capabilities)


def sent_bytes(actions: list[Any]) -> bytes:
    return b"".join(action.data for action in actions if isinstance(action, SendBytes))


@pytest.mark.parametrize("session", EXACT_SESSIONS, ids=[s["name"] for s in EXACT_SESSIONS])
def test_the_fake_answers_compressed_clients_byte_for_byte(session: dict[str, Any]) -> None:
    """Each step's bytes (results, errors, multi-statements, the compression threshold, a
    command over several compressed packets, packets out of order, too large, damaged) get
    exactly the bytes the real server sent, and the connection closes where it closed."""
    driver, login = compressed_driver(
        session["capabilities"], max_allowed_packet=session["max_allowed_packet"]
    )
    # The login's OK is a plain packet: compression starts after it.
    assert login.packets == [(2, bytes.fromhex(session["login_reply"]))]
    assert driver.session.compressed
    for step in session["steps"]:
        actions = driver.session.receive_data(bytes.fromhex(step["sent"]))
        assert sent_bytes(actions).hex() == step["received"], step["what"]
        closes = [index for index, action in enumerate(actions) if isinstance(action, Close)]
        # Closed where the real server closed, after the bytes it sent.
        assert closes == ([len(actions) - 1] if step["closed"] else []), step["what"]


def test_without_compress_nothing_changes() -> None:
    driver, _ = compressed_driver(BASE_CAPABILITIES)
    assert not driver.session.compressed
    assert driver.query("SELECT 1").packets[0] == (1, b"\x01")


def test_a_command_sent_with_the_handshake_response_is_read_compressed() -> None:
    """A client that writes its first command right behind its handshake response."""
    driver = SessionDriver(ServerSession(ServerState(ServerConfig(user="repl", password="s"))))
    response = HandshakeResponse(
        capabilities=COMPRESSED_CAPABILITIES,
        user=b"repl",
        auth_response=native_password_response("s", driver.greeting.scramble),
        auth_plugin=NATIVE_PASSWORD,
    )
    command = compressed_packet(frame(b"\x03SELECT 1", 0)[0], 0)
    reply = driver.send_raw(frame(response.encode(), 1)[0] + command)
    (basic,) = [s for s in CAPTURE["sessions"] if s["name"] == "basic"]
    login_ok = frame(bytes.fromhex(basic["login_reply"]), 2)[0]
    assert reply.data.hex() == login_ok.hex() + basic["steps"][0]["received"]


# --- dumps ----------------------------------------------------------------------------------


@dataclass
class ScriptedDump:
    """A dump that sends given packets, then has nothing more (caught up)."""

    packets: bytes
    heartbeat: bytes = b""
    is_finished: bool = False

    def next_chunk(self) -> bytes | None:
        chunk, self.packets = self.packets, b""
        return chunk or None

    def heartbeat_packet(self) -> bytes:
        return self.heartbeat

    def on_semi_sync_ack(self, position: int, file_name: str) -> None:
        raise AssertionError("no ACK expected")


def _setup_and_dump(driver: SessionDriver, dump: dict[str, Any]) -> StartDump:
    for sql in dump["setup"]:
        command = compressed_packet(frame(b"\x03" + sql.encode(), 0)[0], 0)
        assert split_compressed(driver.send_raw(command).data)[0][3][4:5] == b"\x00"  # OK
    actions = driver.session.receive_data(bytes.fromhex(dump["sent"]))
    (start,) = [action for action in actions if isinstance(action, StartDump)]
    assert sent_bytes(actions) == b""
    return start


@pytest.mark.parametrize("name", ["plain", "bad_position", "unknown_file"])
def test_a_non_blocking_dump_is_the_real_servers_bytes(name: str) -> None:
    """The golden binlog (a 40000-byte event, a rotation) served from a directory: buffer-sized
    compressed packets, the rest of the large event sent at once, one flush at the end; a dump
    that fails sends its ERR uncompressed, with the ROTATE and FORMAT_DESCRIPTION it had
    buffered."""
    dump = CAPTURE["dumps"][name]
    with DirectoryBinlogStore(CAPTURE_DIR) as store:
        config = ServerConfig(user="repl", password="secret")
        driver = SessionDriver(ServerSession(ServerState(config, store)))
        driver.login(capabilities=COMPRESSED_CAPABILITIES)
        start = _setup_and_dump(driver, dump)
        stream = driver.session.wrap_dump(DumpStream(store, start.request, config), start.request)
        assert isinstance(stream, CompressedDump)
        out = b""
        while (chunk := stream.next_chunk()) is not None:
            out += chunk
        assert stream.is_finished
    assert out.hex() == dump["received"]


def test_a_semi_sync_dump_flushes_and_counts_from_1_after_each_ack_request() -> None:
    """The real semi-sync dump's packets (ACKs requested for the last transaction's XID and
    the BINLOG_CHECKPOINT after it), then its heartbeat: the same compressed packets."""
    dump = CAPTURE["dumps"]["semi_sync"]
    received = bytes.fromhex(dump["received"])
    compressed = split_compressed(received)
    heartbeat = compressed[-1][3]  # the last compressed packet holds just the heartbeat
    channel = CompressedChannel(sequence=2)
    channel.expect_sequence(0)
    channel.feed(bytes.fromhex(dump["sent"]))
    assert channel.next_payload() is not None  # the COM_BINLOG_DUMP
    channel.expect_sequence(None)
    events = b"".join(plain for *_, plain in compressed[:-1])
    scripted = ScriptedDump(events, heartbeat=heartbeat)
    stream = CompressedDump(scripted, channel, semi_sync=True)
    out = b""
    while (chunk := stream.next_chunk()) is not None:
        out += chunk
    out += stream.heartbeat_packet()
    assert out == received
    seqs = [seq for seq, *_ in split_compressed(received)]
    assert seqs == [1, 2, 3, 1, 1]


def test_a_long_command_grows_the_buffer_and_the_compressed_packets_after_it() -> None:
    """After a 30000-byte query the server's buffer is 32 KiB: the next large result goes out
    in 32768-byte compressed packets (the real server's answers, replayed)."""
    (session,) = [s for s in CAPTURE["sessions"] if s["name"] == "large_results"]
    steps = session["steps"][3:5]
    channel = CompressedChannel(sequence=1)
    for step in steps:
        channel.feed(bytes.fromhex(step["sent"]))
        assert channel.next_payload() is not None
        answer = bytes.fromhex(step["received"])
        stream = inner_stream(answer)
        start = 0
        out = b""
        for end in result_ends(stream, session["capabilities"]):
            channel.write(stream[start:end])
            out += channel.flush()
            start = end
        channel.expect_sequence(0)
        assert out == answer
    assert channel.writer.buffer_size == 2 * NET_BUFFER_LENGTH


# --- malformed compressed input ---------------------------------------------------------------

_SELECT_1 = frame(b"\x03SELECT 1", 0)[0]


@st.composite
def damaged_streams(draw: st.DrawFn) -> bytes:
    """Commands in compressed packets (deflated or not), then bytes flipped, cut or added."""
    wire = bytearray()
    for seq in range(draw(st.integers(1, 3))):
        body = draw(st.sampled_from([_SELECT_1, frame(b"\x0e", 0)[0], frame(b"\x03DO 1", 0)[0]]))
        wire += compressed_packet(body, 0 if seq == 0 else seq, deflate=draw(st.booleans()))
    for _ in range(draw(st.integers(0, 4))):
        wire[draw(st.integers(0, len(wire) - 1))] ^= draw(st.integers(1, 255))
    wire = wire[: draw(st.integers(0, len(wire)))]
    return bytes(wire) + draw(st.binary(max_size=40))


@given(wire=damaged_streams(), data=st.data())
def test_damaged_compressed_input_gets_answers_or_a_close_never_an_internal_error(
    wire: bytes, data: st.DataObject
) -> None:
    driver, _ = compressed_driver(max_allowed_packet=1 << 20)
    actions: list[Any] = []
    for piece in split_at(wire, data.draw(cut_points(len(wire)))):
        actions += driver.session.receive_data(piece)
    assert driver.session.internal_errors == []
    closes = [index for index, action in enumerate(actions) if isinstance(action, Close)]
    assert closes in ([], [len(actions) - 1])
    for _, _, _, plain in split_compressed(sent_bytes(actions)):
        assert plain  # every compressed packet sent carries packets
