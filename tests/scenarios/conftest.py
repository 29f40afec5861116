"""A real MariaDB 10.11 server per test module, for the differentials of tests/scenarios."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.peers.fixtures import require_mariadb
from tests.peers.mariadb import MariaDBServer


@pytest.fixture(scope="module")
def server() -> Iterator[MariaDBServer]:
    require_mariadb()
    instance = MariaDBServer()
    try:
        yield instance.start()
    finally:
        instance.close()
