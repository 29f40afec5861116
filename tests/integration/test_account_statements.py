"""CREATE USER, DROP USER, GRANT and REVOKE, differentially: the same statements, in the same
order, as root and as an account without the privileges they need, against a real MariaDB 10.11
and the fake master; every answer (OK with its warning count, the ERR's code, SQLSTATE and
text, SHOW GRANTS and SHOW WARNINGS payloads) and who may log in afterwards must be the same."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from decoder.packets import parse_err, parse_ok
from fakemaster.config.server_config import ServerConfig
from fakemaster.server.master import BackgroundFakeMaster
from fakemaster.store import MemoryBinlogStore
from tests.peers.fixtures import require_mariadb
from tests.peers.mariadb import MariaDBServer
from tests.support.wire import RawClient

pytestmark = pytest.mark.mariadb

AS_ROOT = [
    "CREATE USER u1@'%' IDENTIFIED BY 'p1'",
    "CREATE USER u1@'%'",
    "CREATE USER IF NOT EXISTS u1@'%'",
    "SHOW WARNINGS",
    "CREATE USER u2@localhost, u1@'%', u3",
    "SHOW GRANTS FOR u2@localhost",
    "SHOW GRANTS FOR u3",
    "GRANT SELECT, RELOAD, SHOW DATABASES, REPLICATION SLAVE, REPLICATION CLIENT ON *.* TO u1@'%'",
    "SHOW GRANTS FOR u1@'%'",
    "GRANT SELECT, LOCK TABLES ON shop.* TO u1@'%'",
    "GRANT ALL ON `shop`.* TO u2@localhost WITH GRANT OPTION",
    "GRANT SHOW VIEW ON shop.* TO u1@'%', u3@'%'",
    "GRANT RELOAD ON shop.* TO u1@'%'",
    "GRANT SELECT ON *.* TO nobody@'%'",
    "GRANT FLY ON *.* TO u1@'%'",
    "GRANT SELECT ON * TO u1@'%'",
    "SHOW GRANTS FOR u1@'%'",
    "SHOW GRANTS FOR u2@localhost",
    "SHOW GRANTS FOR u3@'%'",
    "REVOKE RELOAD ON *.* FROM u1@'%'",
    "REVOKE SELECT ON hr.* FROM u1@'%'",
    "REVOKE LOCK TABLES ON shop.* FROM u1@'%'",
    "SHOW GRANTS FOR u1@'%'",
    "REVOKE SELECT ON *.* FROM nobody@'%'",
    "REVOKE ALL PRIVILEGES, GRANT OPTION FROM u2@localhost",
    "SHOW GRANTS FOR u2@localhost",
    "REVOKE ALL ON shop.* FROM u3",
    "SHOW GRANTS FOR u3",
    "GRANT SELECT ON *.* TO u1@'%' IDENTIFIED BY 'p2'",
    "SHOW GRANTS FOR u1@'%'",
    "DROP USER nobody",
    "DROP USER IF EXISTS nobody, u3",
    "SHOW WARNINGS",
    "DROP USER u2@localhost",
    "SHOW GRANTS FOR u2@localhost",
]
# As u1 (SELECT, SHOW DATABASES, REPLICATION SLAVE, BINLOG MONITOR; SELECT, SHOW VIEW on shop):
# no CREATE USER, no GRANT OPTION.
AS_U1 = [
    "SHOW GRANTS",
    "CREATE USER x@'%'",
    "DROP USER u1@'%'",
    "GRANT SELECT ON *.* TO u1@'%'",
    "GRANT SELECT ON shop.* TO u1@'%'",
    "REVOKE SELECT ON *.* FROM u1@'%'",
    "SHOW GRANTS FOR u1@'%'",
    "SHOW GRANTS FOR nobody@'%'",
]


def shown(payloads: list[bytes]) -> object:
    first = payloads[0]
    if first[:1] == b"\xff":
        error = parse_err(first)
        return error.errno, error.sqlstate, error.message
    if first[:1] == b"\x00":
        return "OK", parse_ok(first).warnings
    return payloads


@pytest.fixture(scope="module")
def servers() -> Iterator[tuple[MariaDBServer, BackgroundFakeMaster]]:
    require_mariadb()
    real = MariaDBServer(server_id=7)
    try:
        real.start()
        with BackgroundFakeMaster(ServerConfig(), MemoryBinlogStore(server_id=1)) as fake:
            yield real, fake
            assert fake.errors == []
    finally:
        real.close()


def run(
    server: MariaDBServer | BackgroundFakeMaster, user: str, password: str, sqls: list[str]
) -> list[object]:
    with RawClient(server.host, server.port, user, password) as client:
        return [shown(client.query(sql)) for sql in sqls]


def logs_in(server: MariaDBServer | BackgroundFakeMaster, user: str, password: str) -> object:
    with RawClient(server.host, server.port, user, password) as client:
        return shown([client.login_reply])


def test_accounts_change_as_on_a_real_server(
    servers: tuple[MariaDBServer, BackgroundFakeMaster],
) -> None:
    real, fake = servers
    answers = [run(server, "root", "", AS_ROOT) for server in servers]
    differences = [
        f"{sql}\n  real {want!r}\n  fake {got!r}"
        for sql, want, got in zip(AS_ROOT, *answers, strict=True)
        if want != got
    ]
    assert differences == []
    # Who may log in now: u1 with its new password only; u2, u3 are gone.
    for user, password in [("u1", "p2"), ("u1", "p1"), ("u2", ""), ("u3", "")]:
        assert logs_in(fake, user, password) == logs_in(real, user, password), (user, password)
    answers = [run(server, "u1", "p2", AS_U1) for server in servers]
    differences = [
        f"{sql}\n  real {want!r}\n  fake {got!r}"
        for sql, want, got in zip(AS_U1, *answers, strict=True)
        if want != got
    ]
    assert differences == []
