"""What a client's capability flags change in its session, as a real MariaDB 10.11.19 showed
(raw-socket clients with and without the flag; ``interactive_timeout=100`` on the server):

* CLIENT_IGNORE_SPACE: ``@@sql_mode`` gains IGNORE_SPACE;
* CLIENT_INTERACTIVE: ``@@wait_timeout`` is ``@@interactive_timeout``;
* COM_RESET_CONNECTION gives a session without either;
* CLIENT_COMPRESS: ``SHOW STATUS LIKE 'Compression'`` (session or global) says ON.
"""

from __future__ import annotations

import pytest

from decoder.packets import CompressedPacketReader
from encoder.packets import frame
from fakemaster.config.server_config import ServerConfig
from fakemaster.core.session import ServerSession
from fakemaster.protocol.handshake import Capability
from fakemaster.protocol.resultset import ClientProtocol, read_result_set
from fakemaster.sql.state import ServerState
from tests.support.compressed_wire import compressed_packet
from tests.support.wire import BASE_CAPABILITIES, SessionDriver

DEFAULT_MODE = (
    b"STRICT_TRANS_TABLES,ERROR_FOR_DIVISION_BY_ZERO,NO_AUTO_CREATE_USER,NO_ENGINE_SUBSTITUTION"
)


def logged_in(capabilities: int) -> SessionDriver:
    config = ServerConfig(user="repl", password="secret", variables={"interactive_timeout": 100})
    driver = SessionDriver(ServerSession(ServerState(config)))
    driver.login(capabilities=capabilities)
    return driver


def rows(driver: SessionDriver, sql: str) -> list[tuple[bytes | None, ...]]:
    if driver.session.compressed:
        command = compressed_packet(frame(b"\x03" + sql.encode(), 0)[0], 0)
        reader = CompressedPacketReader()
        reader.feed(driver.send_raw(command).data)
        payloads = list(reader)
    else:
        payloads = driver.query(sql).payloads
    protocol = ClientProtocol(driver.session.protocol.capabilities)
    return list(read_result_set(iter(payloads), protocol).rows)


@pytest.mark.parametrize(
    ("flags", "expected"),
    [
        (0, [(b"28800", b"100", DEFAULT_MODE)]),
        (Capability.INTERACTIVE, [(b"100", b"100", DEFAULT_MODE)]),
        (
            Capability.IGNORE_SPACE | Capability.INTERACTIVE,
            [(b"100", b"100", b"IGNORE_SPACE," + DEFAULT_MODE)],
        ),
    ],
)
def test_login_flags_change_the_session_as_in_mariadb(flags: int, expected: list[object]) -> None:
    driver = logged_in(BASE_CAPABILITIES | flags)
    sql = "SELECT @@wait_timeout, @@interactive_timeout, @@sql_mode"
    assert rows(driver, sql) == expected
    assert driver.send(b"\x1f").payloads == [bytes.fromhex("00000002000000")]  # reset
    assert rows(driver, "SELECT @@wait_timeout, @@sql_mode") == [(b"28800", DEFAULT_MODE)]


@pytest.mark.parametrize("compress", [False, True])
def test_show_status_compression(compress: bool) -> None:
    driver = logged_in(BASE_CAPABILITIES | (Capability.COMPRESS if compress else 0))
    value = b"ON" if compress else b"OFF"
    for sql in ("SHOW STATUS LIKE 'Compression'", "SHOW GLOBAL STATUS LIKE 'Compression'"):
        assert rows(driver, sql) == [(b"Compression", value)]
