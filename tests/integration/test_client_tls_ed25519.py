"""The replica client (and so ``record`` and the streaming source, which stand on it) against
a real MariaDB 10.11 that requires what managed primaries require: an account with ``REQUIRE
SSL`` (the client verifies the server's certificate against a CA and its name) and an account
identified via ``ed25519``. The changes streamed equal the primary's tables; each way of
getting it wrong is refused as the mariadb client refuses it. The compressed protocol
(``--compress``) too: the server's own ``Compression`` status of such a session (asked through
the same login), plain and inside TLS; the stream, ``record`` and the streaming source with it.
(Against the fake master: tests/integration/test_client_compress.py.)"""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from fakemaster.client import BlockingReplica, ClientConfig, Position
from fakemaster.client.protocol import AuthError, TlsError
from fakemaster.client.shell import ReconnectPolicy
from fakemaster.client.tls import tls_context
from fakemaster.record.query import QueryConnection
from fakemaster.record.recorder import RecordOptions, StopRule, record
from tests.peers.mariadb import MariaDBServer

pytestmark = pytest.mark.mariadb


def _replica(server: MariaDBServer, **config: Any) -> BlockingReplica:
    return BlockingReplica(
        server.host,
        server.port,
        ClientConfig(non_blocking=True, server_id=77, **config),
        start=Position(),
        reconnect=ReconnectPolicy(max_retries=0),
    )


def _table_from_changes(replica: BlockingReplica) -> dict[int, tuple[Any, ...]]:
    table: dict[int, tuple[Any, ...]] = {}
    with replica:
        for change in replica.changes():
            if change.qualified != "shop.orders":
                continue
            if change.before is not None:
                table.pop(change.before["id"], None)
            if change.after is not None:
                row = change.after
                who = row["who"].decode("utf-8")  # the client hands a VARCHAR's bytes
                table[row["id"]] = (row["id"], who, str(row["total"]))
    return table


def _primary_table(server: MariaDBServer) -> dict[int, tuple[Any, ...]]:
    rows = server.execute("SELECT id, who, CAST(total AS CHAR) FROM shop.orders")
    return {row[0]: tuple(row) for row in rows}


def test_a_require_ssl_account_streams_over_verified_tls(
    primary: MariaDBServer, certificates: dict[str, Path]
) -> None:
    tls = tls_context(ca=certificates["ca"])  # chain and name (IP 127.0.0.1) verified
    replica = _replica(primary, user="tls_repl", password="tls-pw", tls=tls)
    assert _table_from_changes(replica) == _primary_table(primary)
    assert replica.connections == 1


def test_an_ed25519_account_streams(primary: MariaDBServer, certificates: dict[str, Path]) -> None:
    replica = _replica(primary, user="ed_repl", password="ed-pw")
    assert _table_from_changes(replica) == _primary_table(primary)
    # and inside TLS too
    tls = tls_context(ca=certificates["ca"])
    replica = _replica(primary, user="ed_repl", password="ed-pw", tls=tls)
    assert _table_from_changes(replica) == _primary_table(primary)


@pytest.mark.parametrize(
    ("config", "error", "message"),
    [
        ({"user": "tls_repl", "password": "tls-pw"}, AuthError, "Access denied"),
        ({"user": "ed_repl", "password": "wrong"}, AuthError, "Access denied"),
        ({"user": "tls_repl", "password": "tls-pw", "tls": "other_ca"}, TlsError, "verify"),
    ],
)
def test_what_a_mariadb_client_refuses_is_refused(
    primary: MariaDBServer,
    certificates: dict[str, Path],
    config: dict[str, Any],
    error: type[Exception],
    message: str,
) -> None:
    if "tls" in config:
        config = {**config, "tls": tls_context(ca=certificates[config["tls"]])}
    with pytest.raises(error, match=message) as raised:
        _table_from_changes(_replica(primary, **config))
    assert not getattr(raised.value, "retryable", False)


def test_record_over_tls_rebuilds_the_primary_files(
    primary: MariaDBServer, certificates: dict[str, Path], tmp_path: Path
) -> None:
    options = RecordOptions(
        host=primary.host,
        port=primary.port,
        out=tmp_path / "rec",
        user="tls_repl",
        password="tls-pw",
        stop=StopRule(),
        tls=tls_context(ca=certificates["ca"]),
    )
    summary = record(options)
    for name, size in summary.files:
        recorded = (tmp_path / "rec" / name).read_bytes()
        original = (primary.binlog_dir / name).read_bytes()[:size]
        assert recorded == original, name


def test_the_record_command_takes_the_mariadb_clients_tls_options(
    primary: MariaDBServer, certificates: dict[str, Path], tmp_path: Path
) -> None:
    base = [sys.executable, "-m", "fakemaster", "record", "--host", primary.host, "--port",
            str(primary.port), "--user", "tls_repl", "--password=tls-pw"]  # fmt: skip
    done = subprocess.run(
        [*base, "--ssl-ca", str(certificates["ca"]), "--out", str(tmp_path / "ok")],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    plain = subprocess.run(
        [*base, "--out", str(tmp_path / "plain")], capture_output=True, text=True, timeout=120
    )
    assert plain.returncode == 1 and "Access denied" in plain.stderr
    assert len(plain.stderr.strip().splitlines()) == 1, plain.stderr
    wrong = subprocess.run(
        [*base, "--ssl-ca", str(certificates["other_ca"]), "--out", str(tmp_path / "wrong")],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert wrong.returncode == 1 and "certificate verify failed" in wrong.stderr
    assert len(wrong.stderr.strip().splitlines()) == 1, wrong.stderr


# --- the compressed protocol ----------------------------------------------------------------


def _session_status(server: MariaDBServer, **login: Any) -> dict[str, str]:
    """The server's own view of a session logged in with ``login`` (record's SQL session)."""
    session = QueryConnection(
        statements=["SHOW SESSION STATUS WHERE Variable_name IN ('Compression', 'Ssl_cipher')"],
        server_hostname=server.host,
        **login,
    )
    with socket.create_connection((server.host, server.port), timeout=30) as sock:
        while not session.done:
            data = sock.recv(1 << 16)
            assert data, "the server closed the connection"
            session.feed(data)
            sock.sendall(session.data_to_send())
    return {str(name): str(value) for name, value in session.results[0].text_rows()}


def test_the_server_sees_a_compressed_session_plain_and_inside_tls(
    primary: MariaDBServer, certificates: dict[str, Path]
) -> None:
    plain = _session_status(primary, user="ed_repl", password="ed-pw", compress=True)
    assert plain == {"Compression": "ON", "Ssl_cipher": ""}
    tls = tls_context(ca=certificates["ca"])
    both = _session_status(primary, user="tls_repl", password="tls-pw", tls=tls, compress=True)
    assert both["Compression"] == "ON" and both["Ssl_cipher"]
    off = _session_status(primary, user="ed_repl", password="ed-pw")
    assert off["Compression"] == "OFF"


def test_a_compressed_stream_equals_the_primary_plain_and_inside_tls(
    primary: MariaDBServer, certificates: dict[str, Path]
) -> None:
    expected = _primary_table(primary)
    replica = _replica(primary, user="ed_repl", password="ed-pw", compress=True)
    assert _table_from_changes(replica) == expected
    assert replica.ready is not None and replica.ready.compressed
    tls = tls_context(ca=certificates["ca"])
    replica = _replica(primary, user="tls_repl", password="tls-pw", tls=tls, compress=True)
    assert _table_from_changes(replica) == expected
    assert replica.ready is not None and replica.ready.compressed
    plain = _replica(primary, user="ed_repl", password="ed-pw")
    assert _table_from_changes(plain) == expected
    assert plain.ready is not None and not plain.ready.compressed


def test_record_compress_rebuilds_the_primary_files(
    primary: MariaDBServer, certificates: dict[str, Path], tmp_path: Path
) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "fakemaster", "record", "--host", primary.host, "--port",
         str(primary.port), "--user", "tls_repl", "--password=tls-pw", "--ssl-ca",
         str(certificates["ca"]), "--compress", "--out", str(tmp_path / "rec")],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    names = (tmp_path / "rec" / "mysql-bin.index").read_text().split()
    assert names
    for name in names:
        recorded = (tmp_path / "rec" / Path(name).name).read_bytes()
        original = (primary.binlog_dir / Path(name).name).read_bytes()[: len(recorded)]
        assert recorded == original, name


def test_the_streaming_source_reads_a_compressed_stream_inside_tls(
    primary: MariaDBServer, certificates: dict[str, Path]
) -> None:
    """The source's ``compress`` option (``pipeline stream --compress`` sets it), driven as
    Spark drives it (the planner's scan, then the range read) without a Spark session: the
    change rows, applied, give the primary's table."""
    from tests.peers.policy import require_module

    require_module("pyarrow", "pip install 'fakemaster[spark]'")
    from fakemaster.cli import build_parser
    from fakemaster.cli.pipeline import _tls_options
    from fakemaster.spark.stream import BinlogStreamReader

    base = ["pipeline", "stream", "--out", "o", "--checkpoint", "c"]
    assert "compress" not in _tls_options(build_parser().parse_args(base))
    assert _tls_options(build_parser().parse_args([*base, "-C"]))["compress"] == "true"
    reader = BinlogStreamReader(
        {"host": primary.host, "port": str(primary.port), "user": "ed_tls_repl",
         "password": "both-pw", "sslca": str(certificates["ca"]), "compress": "true"}
    )  # fmt: skip
    start = reader.initialOffset()
    end = reader.latestOffset(start, None)
    table: dict[str, tuple[str | None, ...]] = {}
    for partition in reader.partitions(start, end):
        for batch in reader.read(partition):
            for change in batch.to_pylist():
                if (change["database"], change["table"]) != ("shop", "orders"):
                    continue
                if change["before"] is not None:
                    table.pop(dict(change["before"])["id"], None)
                if change["after"] is not None:
                    row = dict(change["after"])
                    table[row["id"]] = (row["id"], row["who"], row["total"])
    expected = primary.execute("SELECT id, who, CAST(total AS CHAR) FROM shop.orders")
    assert sorted(table.values()) == sorted(tuple(str(v) for v in row) for row in expected)
