"""pytest plugin: fixtures that start real MariaDB servers.

Wired from ``tests/conftest.py`` with ``pytest_plugins = ["tests.peers.fixtures"]``.

* ``mariadb_factory`` (function scope): ``mariadb_factory({"binlog_row_image":
  "MINIMAL"}, server_id=2)`` returns a started :class:`MariaDBServer`; every
  server it made is stopped and its directory deleted at teardown.
* ``mariadb_server`` (module scope): one server with the default options.
* :func:`module_mariadb` makes a module-scoped fixture of one server with given options
  (``real = module_mariadb(server_id=7)`` in a test module).

If MariaDB is not installed the fixtures FAIL, unless
``FAKEMASTER_ALLOW_MISSING_PEERS=1`` is set, in which case they skip (see
:func:`tests.peers.policy.require_peer`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any

import pytest

from tests.peers.mariadb import HOW_TO_INSTALL, MariaDBServer, mariadb_available
from tests.peers.policy import require_peer

MariaDBFactory = Callable[..., MariaDBServer]


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "mariadb: needs a real MariaDB 10.11 server (installed by scripts/install-deps.sh)",
    )


def require_mariadb() -> None:
    """Fail (or skip, if allowed) the current test when MariaDB is missing."""
    require_peer(
        "MariaDB server (mariadbd, mariadb-install-db, pymysql)",
        mariadb_available(),
        HOW_TO_INSTALL,
    )


def _close_all(servers: list[MariaDBServer]) -> None:
    errors = []
    for server in reversed(servers):
        try:
            server.close()
        except Exception as e:  # keep closing the others
            errors.append(e)
    if errors:
        raise errors[0]


@pytest.fixture
def mariadb_factory() -> Iterator[MariaDBFactory]:
    require_mariadb()
    servers: list[MariaDBServer] = []

    def factory(options: Mapping[str, Any] | None = None, **kw: Any) -> MariaDBServer:
        server = MariaDBServer(options, **kw)
        servers.append(server)
        return server.start()

    try:
        yield factory
    finally:
        _close_all(servers)


@pytest.fixture(scope="module")
def mariadb_server() -> Iterator[MariaDBServer]:
    require_mariadb()
    server = MariaDBServer()
    try:
        yield server.start()
    finally:
        server.close()


def module_mariadb(
    options: Mapping[str, Any] | None = None, **kw: Any
) -> Callable[[], Iterator[MariaDBServer]]:
    """A module-scoped fixture of one started server, ``MariaDBServer(options, **kw)``; the
    name the test module binds it to is the fixture's name."""

    @pytest.fixture(scope="module")
    def server() -> Iterator[MariaDBServer]:
        require_mariadb()
        instance = MariaDBServer(options, **kw)
        try:
            yield instance.start()
        finally:
            instance.close()

    return server
