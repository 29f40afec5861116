"""Connection-phase packets against bytes captured from a real MariaDB 10.11.19 and its clients.

Golden vectors (a proxy between the clients and ``mariadbd 10.11.19-MariaDB-0+deb12u1``
started with ``--character-set-server=utf8mb4``; account password ``secret``):

* the server's Handshake V10 for the ``mariadb`` CLI (connection id 14) and for pymysql (15);
* the CLI's HandshakeResponse41 (libmariadb 3.3.20: MariaDB client, extended capabilities,
  connect attributes) and pymysql 1.2.4's (CONNECT_WITH_DB ``information_schema``);
* the AuthSwitchRequest the server sent to a client that asked for ``client_ed25519``.
"""

from __future__ import annotations

import dataclasses
import hashlib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fakemaster.config.server_config import ServerConfig
from fakemaster.core.session import ServerSession
from fakemaster.protocol.handshake import (
    NATIVE_PASSWORD,
    SERVER_CAPABILITIES,
    SERVER_MARIADB_CAPABILITIES,
    AuthSwitchRequest,
    Capability,
    HandshakeResponse,
    HandshakeV10,
    MariaDBCapability,
    check_native_password,
    native_password_response,
    new_scramble,
)
from fakemaster.sql.state import ServerState
from fakemaster.vocabulary.errors import DecodeError
from tests.support.wire import packets

REAL_HANDSHAKE_CLI = bytes.fromhex(
    "0a352e352e352d31302e31312e31392d4d6172696144422d302b646562313275312d6c6f67000e0000007c77"
    "60597e32782a00fef72d0200ff81150000000000001d00000062316d52354f6b5132464979006d7973716c5f"
    "6e61746976655f70617373776f726400"
)
REAL_HANDSHAKE_PYMYSQL = bytes.fromhex(
    "0a352e352e352d31302e31312e31392d4d6172696144422d302b646562313275312d6c6f67000f0000005a74"
    "563441273f4600fef72d0200ff81150000000000001d0000002524262f5b5a363c697b505f006d7973716c5f"
    "6e61746976655f70617373776f726400"
)
CLI_RESPONSE = bytes.fromhex(
    "84a2bf000000100021000000000000000000000000000000000000001d0000007265706c0014e6457edf5cd9"
    "a88d4d4b3cff5438202ba20908226d7973716c5f6e61746976655f70617373776f7264007e035f6f73054c69"
    "6e75780c5f636c69656e745f6e616d650a6c69626d617269616462045f70696404393639360f5f636c69656e"
    "745f76657273696f6e06332e332e3230095f706c6174666f726d067838365f36340c70726f6772616d5f6e61"
    "6d65056d7973716c0c5f7365727665725f686f7374093132372e302e302e31"
)
PYMYSQL_RESPONSE = bytes.fromhex(
    "0da23a00ffffff002d00000000000000000000000000000000000000000000007265706c0014d3a6605bdc62"
    "5423406f445867e64b38701aecfc696e666f726d6174696f6e5f736368656d61006d7973716c5f6e61746976"
    "655f70617373776f726400350c5f636c69656e745f6e616d650770796d7973716c0f5f636c69656e745f7665"
    "7273696f6e05312e322e34045f7069640439363939"
)
REAL_AUTH_SWITCH = b"\xfemysql_native_password\x00NqmO#`=MLu(eFlm]l(!i\x00"


def test_real_handshake_fields() -> None:
    greeting = HandshakeV10.decode(REAL_HANDSHAKE_CLI)
    assert greeting.protocol_version == 10
    assert greeting.server_version == "5.5.5-10.11.19-MariaDB-0+deb12u1-log"
    assert greeting.thread_id == 14
    assert greeting.scramble == b"|w`Y~2x*b1mR5OkQ2FIy"
    assert greeting.capabilities == 0x81FFF7FE
    assert not greeting.capabilities & Capability.MYSQL  # "I am MariaDB"
    assert not greeting.capabilities & Capability.SSL
    assert greeting.charset == 45
    assert greeting.status == 0x0002
    assert greeting.mariadb_capabilities == 0x1D
    assert greeting.auth_plugin == NATIVE_PASSWORD
    assert greeting.encode() == REAL_HANDSHAKE_CLI


# What the fake master does not advertise of what the real server does: NO_SCHEMA (MariaDB
# then ignores database names in table references), LOCAL_FILES (no LOAD DATA LOCAL),
# PS_MULTI_RESULTS and STMT_BULK_OPERATIONS (no prepared statements).
CLEARED = Capability.NO_SCHEMA | Capability.LOCAL_FILES | Capability.PS_MULTI_RESULTS
CLEARED_MARIADB = MariaDBCapability.STMT_BULK_OPERATIONS


@pytest.mark.parametrize("real", [REAL_HANDSHAKE_CLI, REAL_HANDSHAKE_PYMYSQL])
def test_fake_handshake_is_the_real_one_but_for_id_scramble_and_unimplemented_bits(
    real: bytes,
) -> None:
    """Field by field: build the fake master's greeting with the real server's version, thread
    id and scramble, and get the real bytes, less the capabilities it does not implement."""
    greeting = HandshakeV10.decode(real)
    config = ServerConfig(
        version="10.11.19-MariaDB-0+deb12u1-log", first_thread_id=greeting.thread_id
    )
    session = ServerSession(ServerState(config), scramble=greeting.scramble)
    [(seq, payload)] = packets(session.initial_bytes())
    assert seq == 0
    expected = dataclasses.replace(
        greeting,
        capabilities=greeting.capabilities & ~int(CLEARED),
        mariadb_capabilities=greeting.mariadb_capabilities & ~int(CLEARED_MARIADB),
    )
    assert payload == expected.encode()


def test_default_handshake_constants() -> None:
    assert SERVER_CAPABILITIES == 0x81FFF7FE & ~int(CLEARED) == 0x81FBF76E
    assert SERVER_MARIADB_CAPABILITIES == 0x1D & ~int(CLEARED_MARIADB) == 0x19
    assert SERVER_CAPABILITIES & Capability.COMPRESS
    session = ServerSession(ServerState(ServerConfig()))
    greeting = HandshakeV10.decode(packets(session.initial_bytes())[0][1])
    assert greeting.server_version == "5.5.5-10.11.19-MariaDB-log"
    assert len(greeting.scramble) == 20


def test_cli_response_fields() -> None:
    response = HandshakeResponse.decode(CLI_RESPONSE)
    assert response.is_mariadb_client
    assert response.mariadb_capabilities == 0x1D
    assert response.effective_mariadb_capabilities & MariaDBCapability.EXTENDED_METADATA
    assert response.user == b"repl"
    assert response.charset == 33
    assert response.max_packet_size == 1024 * 1024
    assert response.database is None
    assert response.auth_plugin == NATIVE_PASSWORD
    assert dict(response.attributes)[b"_client_name"] == b"libmariadb"
    assert dict(response.attributes)[b"program_name"] == b"mysql"
    greeting = HandshakeV10.decode(REAL_HANDSHAKE_CLI)
    assert check_native_password("secret", greeting.scramble, response.auth_response)
    assert not check_native_password("secrets", greeting.scramble, response.auth_response)
    assert response.encode() == CLI_RESPONSE


def test_pymysql_response_fields() -> None:
    response = HandshakeResponse.decode(PYMYSQL_RESPONSE)
    assert not response.is_mariadb_client  # CLIENT_MYSQL set: extended bits do not count
    assert response.effective_mariadb_capabilities == 0
    assert response.capabilities & Capability.CONNECT_WITH_DB
    assert response.database == b"information_schema"
    assert response.charset == 45
    greeting = HandshakeV10.decode(REAL_HANDSHAKE_PYMYSQL)
    assert native_password_response("secret", greeting.scramble) == response.auth_response
    assert response.encode() == PYMYSQL_RESPONSE


def test_native_password_matches_its_definition() -> None:
    """SHA1(pw) XOR SHA1(scramble + SHA1(SHA1(pw))), computed here step by step."""
    scramble = b"abcdefghijklmnopqrst"
    stage1 = hashlib.sha1(b"pw").digest()
    mask = hashlib.sha1(scramble + hashlib.sha1(stage1).digest()).digest()
    expected = bytes(x ^ y for x, y in zip(stage1, mask, strict=True))
    assert native_password_response("pw", scramble) == expected
    assert native_password_response("", scramble) == b""
    assert check_native_password("", scramble, b"")
    assert not check_native_password("", scramble, b"x")


def test_real_auth_switch_request() -> None:
    request = AuthSwitchRequest.decode(REAL_AUTH_SWITCH)
    assert request.plugin == NATIVE_PASSWORD
    assert len(request.data) == 20
    assert request.encode() == REAL_AUTH_SWITCH


def test_scrambles_are_printable_and_fresh() -> None:
    scrambles = {new_scramble() for _ in range(50)}
    assert len(scrambles) == 50
    assert all(len(s) == 20 and all(33 <= b <= 126 for b in s) for s in scrambles)


@st.composite
def responses(draw: st.DrawFn) -> HandshakeResponse:
    """Responses holding exactly what their capability flags put on the wire."""
    caps = (draw(st.integers(0, 0xFFFFFFFF)) | Capability.PROTOCOL_41) & ~Capability.SSL
    no_nul = st.binary(max_size=40).map(lambda b: b.replace(b"\0", b"x"))
    if caps & Capability.PLUGIN_AUTH_LENENC_CLIENT_DATA:
        auth = draw(st.binary(max_size=300))
    elif caps & Capability.SECURE_CONNECTION:
        auth = draw(st.binary(max_size=255))
    else:
        auth = draw(no_nul)
    mariadb_client = not caps & Capability.MYSQL
    return HandshakeResponse(
        capabilities=caps,
        user=draw(no_nul),
        auth_response=auth,
        max_packet_size=draw(st.integers(0, 0xFFFFFFFF)),
        charset=draw(st.integers(0, 255)),
        database=draw(no_nul) if caps & Capability.CONNECT_WITH_DB else None,
        auth_plugin=draw(st.sampled_from([NATIVE_PASSWORD, "client_ed25519", ""]))
        if caps & Capability.PLUGIN_AUTH
        else None,
        attributes=tuple(
            draw(st.lists(st.tuples(st.binary(max_size=20), st.binary(max_size=300)), max_size=4))
        )
        if caps & Capability.CONNECT_ATTRS
        else (),
        mariadb_capabilities=draw(st.integers(0, 0xFFFFFFFF)) if mariadb_client else 0,
    )


@given(response=responses())
def test_response_round_trip(response: HandshakeResponse) -> None:
    assert HandshakeResponse.decode(response.encode()) == response


@given(data=st.binary(max_size=200))
def test_response_parser_raises_only_decode_error(data: bytes) -> None:
    try:
        HandshakeResponse.decode(data)
    except DecodeError:
        pass


@pytest.mark.parametrize("cut", range(1, len(PYMYSQL_RESPONSE)))
def test_truncated_real_response_is_rejected_or_shorter(cut: int) -> None:
    """Every prefix of a real response either fails cleanly or parses as a response that
    simply lacks the optional tail fields."""
    try:
        response = HandshakeResponse.decode(PYMYSQL_RESPONSE[:cut])
    except DecodeError:
        return
    full = HandshakeResponse.decode(PYMYSQL_RESPONSE)
    assert response.user == full.user and response.auth_response == full.auth_response


@given(
    greeting=st.builds(
        HandshakeV10,
        server_version=st.text(st.characters(min_codepoint=32, max_codepoint=126), max_size=40),
        thread_id=st.integers(0, 0xFFFFFFFF),
        scramble=st.binary(min_size=20, max_size=20).map(lambda b: bytes(1 + x % 255 for x in b)),
        capabilities=st.integers(0, 0xFFFFFFFF),
        charset=st.integers(0, 255),
        status=st.integers(0, 0xFFFF),
        mariadb_capabilities=st.integers(0, 0xFFFFFFFF),
    )
)
def test_handshake_round_trip(greeting: HandshakeV10) -> None:
    assert HandshakeV10.decode(greeting.encode()) == greeting
