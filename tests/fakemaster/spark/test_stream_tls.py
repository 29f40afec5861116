"""The streaming source against a real MariaDB 10.11 that requires TLS of an account
identified via ed25519 (tests/support/tls_primary.py): the materialised table equals the
primary's. (Without TLS the account is refused: tests/integration/test_client_tls_ed25519.py.)"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from fakemaster.cli import build_parser
from fakemaster.cli.pipeline import _tls_options
from tests.peers.mariadb import MariaDBServer
from tests.support.spark_tables import read_tables

pytestmark = pytest.mark.mariadb


def _stream(spark: Any, server: MariaDBServer, out: Path, **tls: str) -> Any:
    from fakemaster.spark import FORMAT_NAME, Materialiser

    materialiser = Materialiser(spark, str(out))
    reader = (
        spark.readStream.format(FORMAT_NAME)
        .option("host", server.host)
        .option("port", str(server.port))
        .option("user", "ed_tls_repl")
        .option("password", "both-pw")
    )
    for name, value in tls.items():
        reader = reader.option(name, value)
    query = (
        reader.load()
        .writeStream.foreachBatch(lambda frame, n: materialiser.apply(frame, n))
        .option("checkpointLocation", str(out / "_checkpoint"))
        .trigger(availableNow=True)
        .start()
    )
    query.awaitTermination(300)
    return query


def test_an_ed25519_account_that_requires_tls_streams(
    spark: Any, primary: MariaDBServer, certificates: dict[str, Path], tmp_path: Path
) -> None:
    query = _stream(spark, primary, tmp_path / "out", sslCa=str(certificates["ca"]))
    assert query.exception() is None
    rows = read_tables(tmp_path / "out")["shop.orders"]
    got = sorted((r["id"], r["who"], str(r["total"])) for r in rows)
    expected = primary.execute("SELECT id, who, CAST(total AS CHAR) FROM shop.orders ORDER BY id")
    assert got == [tuple(row) for row in expected]


def test_the_commands_tls_options_become_the_sources(tmp_path: Path) -> None:
    args = build_parser().parse_args(
        ["pipeline", "stream", "--out", "o", "--checkpoint", "c", "--ssl-ca", "ca.pem", "--ssl"]
    )
    options = _tls_options(args)
    assert options == {"ssl": "true", "sslCa": str(Path("ca.pem").resolve())}
    plain = build_parser().parse_args(["pipeline", "stream", "--out", "o", "--checkpoint", "c"])
    assert _tls_options(plain) == {}
