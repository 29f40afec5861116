"""The fake master under a scapy ``fuzz()`` campaign of every pre- and post-auth packet type.

Each case opens a connection, gets to the stage of the packet (right after the greeting for
the handshake response and SSL request; logged in for the commands), sends one packet scapy
randomised (every field left unset gets a random value, length fields included; the command
byte is kept so that the command's own parser is hit) and reads what comes back. What must
hold (as in test_server_robustness.py): the server answers with whole, dissectable packets and
then an ERR, an OK/EOF, an auth switch for a handshake, or a clean close (never a reset), or it
keeps a valid dump waiting; nothing raises inside the server (``errors`` stays empty); and a
witness connection opened before the campaign still answers. The budget is the Hypothesis
profile's (the random seed of each case is drawn, and reported when a case fails).
"""

from __future__ import annotations

import random
import socket
from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fakemaster.config.server_config import ServerConfig
from fakemaster.server.master import BackgroundFakeMaster
from fakemaster.store import MemoryBinlogStore
from fakemaster.vocabulary.events import QueryEvent
from tests.budget import examples
from tests.peers.policy import require_module
from tests.support.wire import RawClient

require_module("scapy.contrib.mysql", "pip install 'fakemaster[scapy]' (scapy 2.8 or later)")

from scapy.contrib.mysql import (  # noqa: E402
    MySQLCommand,
    MySQLComQuery,
    MySQLHandshakeResponse41,
    MySQLSSLRequest,
)
from scapy.packet import Packet, fuzz  # noqa: E402

from fakemaster.scapy import (  # noqa: E402
    ComBinlogDump,
    ComBinlogDumpGtid,
    ComRegisterSlave,
    ConnectionState,
    ReplicationClient,
    ReplicationClientPacket,
    ReplicationServer,
    SemiSyncAckPacket,
    dissect_stream,
)
from fakemaster.scapy.packets import complete_prefix  # noqa: E402

USER, PASSWORD = "repl", "secret"
# How long a case listens after the last byte before it calls the server idle (a dump that
# waits for events, or a handshake waiting for an auth-switch answer); not an assertion.
READ_WAIT = 1.0

PRE_AUTH: dict[str, Callable[[], Packet]] = {
    # scapy cannot randomise this layer's MultipleTypeField (auth_response): random bytes,
    # at most 255 (one of its forms has a 1-byte length).
    "handshake_response": lambda: fuzz(
        MySQLHandshakeResponse41(auth_response=random.randbytes(random.randrange(256)))
    ),
    "ssl_request": lambda: fuzz(MySQLSSLRequest()),
}
POST_AUTH: dict[str, Callable[[], Packet]] = {
    "binlog_dump": lambda: fuzz(ComBinlogDump(cmd=0x12)),
    "binlog_dump_gtid": lambda: fuzz(ComBinlogDumpGtid(cmd=0x1E)),
    "register_slave": lambda: fuzz(ComRegisterSlave(cmd=0x15)),
    "semi_sync_ack": lambda: fuzz(SemiSyncAckPacket(magic=0xEF)),
    "query": lambda: fuzz(MySQLComQuery(cmd=0x03)),
    "any_command": lambda: fuzz(MySQLCommand()),
}


DUMPS = frozenset({"binlog_dump", "binlog_dump_gtid"})


def listen(sock: socket.socket) -> tuple[bytes, str]:
    """What the server sends until it closes ("closed"), resets ("reset") or goes quiet."""
    sock.settimeout(READ_WAIT)
    data = b""
    try:
        while chunk := sock.recv(1 << 16):
            data += chunk
    except TimeoutError:
        return data, "idle"
    except ConnectionResetError:
        return data, "reset"
    return data, "closed"


def check_answer(sent: bytes, data: bytes, end: str, kind: str) -> bytes:
    """Check the invariants; returns the first byte of the last answer (b"" for none)."""
    pre_auth = kind in PRE_AUTH
    if end == "reset" and kind in DUMPS:
        # A 10.11 dump thread never reads what follows its COM_BINLOG_DUMP(_GTID): closing a
        # socket with unread input is a reset, on the real server as on the fake
        # (tests/integration/test_malformed_commands_differential.py); what it sent may be cut.
        return b""
    assert end != "reset", "the server reset the connection"
    if end == "closed":
        assert complete_prefix(data, 1 << 30) == len(data), "a packet cut short"
    state = ConnectionState()
    dissect_stream(ReplicationClient, sent, state)
    whole = data[: complete_prefix(data, 1 << 30)]
    items = dissect_stream(ReplicationServer, whole, state).contents if whole else []
    if not items:
        assert end in ("closed", "idle")
        return b""
    last = bytes(items[-1].payload)[:1]
    # Any command: some answer with their own packets (COM_STATISTICS: a line of text).
    if kind != "any_command" and (end == "closed" or not state.dump_requested):
        allowed = {b"\xff", b"\x00", b"\xfe"}  # ERR, OK, EOF / auth switch
        assert last in allowed, f"the last answer starts with {last!r}"
    if pre_auth:
        firsts = {bytes(item.payload)[:1] for item in items}
        assert firsts <= {b"\xff", b"\xfe", b"\x00", b"\x01"}, firsts
    return last


@pytest.mark.slow
def test_the_server_survives_a_scapy_fuzz_campaign() -> None:
    store = MemoryBinlogStore(server_id=1)
    store.append_transaction([QueryEvent(database="fm", query=b"CREATE DATABASE fm")])
    config = ServerConfig(user=USER, password=PASSWORD, semi_sync_enabled=True)
    with BackgroundFakeMaster(config, store) as master:
        witness = RawClient(master.host, master.port, USER, PASSWORD)
        answers: dict[str, set[bytes]] = {}

        @settings(max_examples=examples(1), deadline=None)
        @given(
            kind=st.sampled_from(sorted(PRE_AUTH) + sorted(POST_AUTH)),
            seed=st.integers(0, 2**32 - 1),
        )
        def one_case(kind: str, seed: int) -> None:
            random.seed(seed)  # scapy's random values come from the random module
            pre_auth = kind in PRE_AUTH
            if pre_auth:
                sock = socket.create_connection((master.host, master.port), timeout=30)
                listen_greeting = sock.recv(1 << 16)
                assert listen_greeting
                packet = ReplicationClientPacket(sequence_id=1) / PRE_AUTH[kind]()
            else:
                client = RawClient(master.host, master.port, USER, PASSWORD)
                sock = client.sock
                packet = ReplicationClientPacket(sequence_id=0) / POST_AUTH[kind]()
            sent = bytes(packet)
            if not pre_auth:
                # Then COM_QUIT: the server answers the fuzzed command, then closes (unless
                # the command started a dump, which keeps the connection: "idle").
                sent += bytes(ReplicationClientPacket(sequence_id=0) / MySQLCommand(cmd=1))
            try:
                sock.sendall(sent)
                data, end = listen(sock)
            finally:
                sock.close()
            answers.setdefault(kind, set()).add(check_answer(sent, data, end, kind))
            assert list(master.errors) == []
            assert witness.query("SELECT 1")[-1][:1] != b"\xff"

        try:
            one_case()
        finally:
            witness.close()
        assert list(master.errors) == []
    # The campaign reached the parsers: malformed packets were refused with ERR packets
    # before and after authentication.
    refused = {kind for kind, lasts in answers.items() if b"\xff" in lasts}
    assert refused & set(PRE_AUTH) and refused & set(POST_AUTH), answers
