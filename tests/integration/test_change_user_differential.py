"""COM_CHANGE_USER and COM_RESET_CONNECTION answered by fakemaster and by a real MariaDB 10.11
(issue #21): the same packets over the same raw connection, every response compared byte for
byte, but for the scramble of the authentication switch (each server draws its own; the test
answers each with the password hashed against the scramble it got).

What is compared: the switch MariaDB answers every well-formed request with, the OK after it,
what the new session then reports (user, database, character set, user variables gone, prepared
statements closed), refusals (wrong password, unknown database, a request cut short) and that
the connection and its old session go on after them.
"""

from __future__ import annotations

import struct

import pytest

from fakemaster.config.accounts import Account, Privilege
from fakemaster.config.server_config import ServerConfig
from fakemaster.protocol.handshake import native_password_response
from fakemaster.server.master import BackgroundFakeMaster
from scenarios.live import ScenarioStore
from tests.peers.mariadb import MariaDBServer
from tests.support.snapshot_statements import describe_payload, keyed, load_scenario
from tests.support.wire import RawClient

pytestmark = pytest.mark.mariadb

USER, PASSWORD = "changer", "s3cret"
# (The root account's host part is the server's own: only the other account's is compared.)
PROBE = "SELECT @x, DATABASE(), @@character_set_client, @@collation_connection"
WHO = "SELECT CURRENT_USER()"
SCRAMBLE_AT = slice(len(b"\xfemysql_native_password\0"), -1)


def _change_user(
    client: RawClient, user: str, password: str, database: str = "", collation: int | None = 45
) -> bytes:
    """A COM_CHANGE_USER body hashed against the login's scramble, as clients send it."""
    auth = native_password_response(password, client.greeting.scramble) if password else b""
    body = user.encode() + b"\0" + bytes((len(auth),)) + auth + database.encode() + b"\0"
    if collation is not None:
        body += struct.pack("<H", collation)
    return b"\x11" + body + b"mysql_native_password\0"


def _round(client: RawClient, payload: bytes, password: str) -> list[bytes]:
    """Send a COM_CHANGE_USER; answer an auth switch; the answers, the scramble blanked."""
    client.write(payload, 0)
    first = client.read()
    if first[:1] != b"\xfe":
        return [first]
    scramble = first[SCRAMBLE_AT]
    assert len(scramble) == 20
    blanked = first[: SCRAMBLE_AT.start] + b"<scramble>" + first[SCRAMBLE_AT.stop :]
    client.write(native_password_response(password, scramble) if password else b"", 2)
    return [blanked, client.read()]


def _script(client: RawClient) -> list[tuple[str, list[bytes]]]:
    steps: list[tuple[str, list[bytes]]] = []

    def probe(label: str) -> None:
        steps.append((label, client.query(PROBE)))

    steps.append(("set a variable", client.query("SET @x = 5")))
    change = _change_user(client, USER, PASSWORD)
    steps.append(("change to another account", _round(client, change, PASSWORD)))
    probe("after the change")
    steps.append(("who after the change", client.query(WHO)))
    steps.append(("set a variable again", client.query("SET @x = 6")))
    change = _change_user(client, "root", "", "keys", 8)
    steps.append(("back to root, with a database and latin1", _round(client, change, "")))
    probe("after the change back")
    client.write(b"\x16SELECT 1", 0)
    prepared = client.read()
    statement = prepared[1:5]
    for _ in range(2):  # its column, its EOF
        client.read()
    steps.append(("reset connection", _send(client, b"\x1f")))
    probe("after the reset")
    execute = b"\x17" + statement + b"\x00\x01\x00\x00\x00"
    steps.append(("statement closed by the reset", _send(client, execute)))
    wrong = _change_user(client, USER, "wrong")
    steps.append(("wrong password", _round(client, wrong, "wrong")))
    probe("after the wrong password")
    nowhere = _change_user(client, "root", "", "nowhere")
    steps.append(("unknown database", _round(client, nowhere, "")))
    probe("after the unknown database")
    unknown = _change_user(client, "nobody", "")
    steps.append(("unknown user", _round(client, unknown, "")))
    steps.append(("cut before the plugin", _send(client, b"\x11root\0\0keys\0")))
    steps.append(("only a user", _send(client, b"\x11root\0")))
    steps.append(("no user terminator", _send(client, b"\x11root")))
    probe("after the malformed ones")
    steps.append(("SET NAMES", client.query("SET NAMES latin1")))
    steps.append(("reset after SET NAMES", _send(client, b"\x1f")))
    probe("after the reset: the login's character set again")
    return steps


def _send(client: RawClient, payload: bytes) -> list[bytes]:
    client.write(payload, 0)
    return [client.read()]


def test_change_user_and_reset_connection_answer_as_a_real_server(
    mariadb_server: MariaDBServer,
) -> None:
    load_scenario(mariadb_server, keyed(), "keys")
    mariadb_server.execute(
        [
            f"DROP USER IF EXISTS '{USER}'@'%'",
            f"CREATE USER '{USER}'@'%' IDENTIFIED BY '{PASSWORD}'",
            f"GRANT SELECT ON *.* TO '{USER}'@'%'",
        ]
    )
    config = ServerConfig(
        accounts=(Account(user=USER, password=PASSWORD, privileges=Privilege.SELECT),)
    )
    answers = []
    with BackgroundFakeMaster(config, ScenarioStore(keyed())) as master:
        for host, port in ((mariadb_server.host, mariadb_server.port), (master.host, master.port)):
            with RawClient(host, port, "root", "", database="keys") as client:
                answers.append(_script(client))
        assert master.errors == []
    want, got = answers
    problems = []
    for (label, a), (_, b) in zip(want, got, strict=True):
        if a != b:
            lines = [f"{label}:"]
            for index in range(max(len(a), len(b))):
                x = a[index] if index < len(a) else b"<none>"
                y = b[index] if index < len(b) else b"<none>"
                if x != y:
                    lines += [
                        f"  [{index}] real {describe_payload(x)}",
                        f"  [{index}] fake {describe_payload(y)}",
                    ]
            problems.append("\n".join(lines[:9]))
    assert not problems, f"{len(problems)} of {len(want)} differ:\n" + "\n".join(problems)
