"""A real MariaDB 10.11 primary as managed databases configure one: TLS with a certificate
from a CA made for the test (named for 127.0.0.1), an account ``tls_repl`` that must use TLS
(``REQUIRE SSL``), an account ``ed_repl`` identified via ed25519, one that is both
(``ed_tls_repl``), and a small ``shop.orders`` history. Module-scoped fixtures ``certificates``
and ``primary``, registered for every test by tests/conftest.py."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.peers.mariadb import MariaDBServer
from tests.peers.policy import require_peer

__all__ = ["ROWS", "certificates", "primary"]

ROWS = [(1, "Zoë", "12.50"), (2, "Ōkubo", "7.25"), (3, "plain", "0.99")]


def _openssl(*args: str | Path) -> None:
    openssl = shutil.which("openssl")
    require_peer("openssl command", openssl is not None, "apt-get install openssl")
    assert openssl is not None
    subprocess.run([openssl, *map(str, args)], check=True, capture_output=True, timeout=60)


@pytest.fixture(scope="module")
def certificates(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A CA, a server certificate it signed for 127.0.0.1, and an unrelated CA."""
    d = tmp_path_factory.mktemp("tls")
    for ca in ("ca", "other_ca"):
        _openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
                 "-subj", f"/CN=fakemaster test {ca}", "-keyout", d / f"{ca}.key",
                 "-out", d / f"{ca}.pem")  # fmt: skip
    _openssl("req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=127.0.0.1",
             "-keyout", d / "server.key", "-out", d / "server.csr")  # fmt: skip
    (d / "san.ext").write_text("subjectAltName=IP:127.0.0.1\n")
    _openssl("x509", "-req", "-in", d / "server.csr", "-CA", d / "ca.pem", "-CAkey",
             d / "ca.key", "-CAcreateserial", "-days", "2", "-extfile", d / "san.ext",
             "-out", d / "server.pem")  # fmt: skip
    return {name: d / f"{name}.pem" for name in ("ca", "other_ca", "server")} | {
        "key": d / "server.key"
    }


@pytest.fixture(scope="module")
def primary(certificates: dict[str, Path]) -> Iterator[MariaDBServer]:
    from tests.peers.fixtures import require_mariadb

    require_mariadb()
    server = MariaDBServer(
        {
            "ssl_cert": certificates["server"],
            "ssl_key": certificates["key"],
            "ssl_ca": certificates["ca"],
            "plugin_load_add": "auth_ed25519",
            "binlog_format": "ROW",
            "binlog_row_metadata": "FULL",
        }
    )
    server.start()
    try:
        server.execute(
            [
                "CREATE USER tls_repl@'%' IDENTIFIED BY 'tls-pw' REQUIRE SSL",
                "GRANT REPLICATION SLAVE, REPLICATION CLIENT ON *.* TO tls_repl@'%'",
                "CREATE USER ed_repl@'%' IDENTIFIED VIA ed25519 USING PASSWORD('ed-pw')",
                "GRANT REPLICATION SLAVE, REPLICATION CLIENT ON *.* TO ed_repl@'%'",
                "CREATE USER ed_tls_repl@'%' IDENTIFIED VIA ed25519 USING PASSWORD('both-pw')"
                " REQUIRE SSL",
                "GRANT REPLICATION SLAVE, REPLICATION CLIENT, SELECT ON *.* TO ed_tls_repl@'%'",
                "CREATE DATABASE shop",
                "CREATE TABLE shop.orders (id INT PRIMARY KEY, who VARCHAR(20),"
                " total DECIMAL(8,2)) DEFAULT CHARSET=utf8mb4",
                *(f"INSERT INTO shop.orders VALUES ({i}, '{w}', {t})" for i, w, t in ROWS),
                "UPDATE shop.orders SET total = total + 1 WHERE id = 2",
                "DELETE FROM shop.orders WHERE id = 3",
            ]
        )
        yield server
    finally:
        server.close()
