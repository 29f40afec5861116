"""Run a real MariaDB server (``mariadbd``) from tests.

The machinery moved to :mod:`fakemaster.contract.mariadb_server` (the contract tests' real
replica uses it too); it is re-exported here for the tests.
"""

from __future__ import annotations

from fakemaster.contract.mariadb_server import (
    BINLOG_BASENAME,
    DEFAULT_OPTIONS,
    HOW_TO_INSTALL,
    INSTALL_SCRIPT,
    MariaDBServer,
    MariaDBStartError,
    PeerMissing,
    find_install_db,
    find_mariadbd,
    mariadb_available,
)

__all__ = [
    "BINLOG_BASENAME",
    "DEFAULT_OPTIONS",
    "HOW_TO_INSTALL",
    "INSTALL_SCRIPT",
    "MariaDBServer",
    "MariaDBStartError",
    "PeerMissing",
    "find_install_db",
    "find_mariadbd",
    "mariadb_available",
]
