"""The compressed protocol (the mariadb client's ``--compress``) in the replica client, and so
in ``record`` and the streaming source, against a real MariaDB 10.11 primary
(tests/support/tls_primary.py): the server says the session is compressed (its own
``Compression`` status, asked through the same login), the changes streamed equal the
primary's table, plain and inside verified TLS, and ``record --compress`` rebuilds the
primary's binlog files byte for byte."""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from fakemaster.client import BlockingReplica, ClientConfig, Position
from fakemaster.client.shell import ReconnectPolicy
from fakemaster.client.tls import tls_context
from fakemaster.record.query import QueryConnection
from tests.peers.mariadb import MariaDBServer

pytestmark = pytest.mark.mariadb


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


def _table_from_changes(server: MariaDBServer, **config: Any) -> dict[int, tuple[Any, ...]]:
    replica = BlockingReplica(
        server.host,
        server.port,
        ClientConfig(non_blocking=True, server_id=78, compress=True, **config),
        start=Position(),
        reconnect=ReconnectPolicy(max_retries=0),
    )
    table: dict[int, tuple[Any, ...]] = {}
    with replica:
        for change in replica.changes():
            if change.qualified != "shop.orders":
                continue
            if change.before is not None:
                table.pop(change.before["id"], None)
            if change.after is not None:
                row = change.after
                table[row["id"]] = (row["id"], row["who"].decode("utf-8"), str(row["total"]))
    return table


def _primary_table(server: MariaDBServer) -> dict[int, tuple[Any, ...]]:
    rows = server.execute("SELECT id, who, CAST(total AS CHAR) FROM shop.orders")
    return {row[0]: tuple(row) for row in rows}


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
    assert _table_from_changes(primary, user="ed_repl", password="ed-pw") == expected
    tls = tls_context(ca=certificates["ca"])
    assert _table_from_changes(primary, user="tls_repl", password="tls-pw", tls=tls) == expected


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


# --- the fake master (fakemaster serve speaks the compressed protocol too) ------------------


@pytest.mark.parametrize("semi_sync", [False, True])
def test_a_compressed_stream_from_the_fake_master_equals_the_oracle(
    fake_master_factory: Any, semi_sync: bool
) -> None:
    """Semi-sync: the primary restarts its compressed packets' numbers after each event it
    wants acknowledged, and reads the client's ACKs compressed."""
    from scenarios.compiler import compile_scenario
    from scenarios.library import build
    from scenarios.oracle import Oracle
    from tests.integration.test_client_semi_sync import EXTRA, SCENARIO, Background, grown
    from tests.support.client_apply import Tables, catalogue, initial, target

    master = fake_master_factory(
        scenario=SCENARIO, semi_sync=semi_sync, semi_sync_timeout_ms=60_000
    )
    base, full = build(SCENARIO), grown()
    config = ClientConfig(
        user=master.user, password=master.password, server_id=77, semi_sync=semi_sync,
        compress=True,
    )  # fmt: skip
    goal = target(full)
    client = BlockingReplica(
        master.host,
        master.port,
        config,
        start=initial(full),
        until=lambda p: p.covers(goal),
        catalogue=catalogue(full),
    )
    consumer = Background(client, Tables(full))
    consumer.wait_for(target(base))
    acknowledged = []
    for item in compile_scenario(full)[-EXTRA:]:
        assert item.gtid is not None
        master.append_transaction(item.events[1:], server_id=item.gtid.server_id)
        if semi_sync:
            acknowledged.append(master.wait_for_ack())
    consumer.join()
    Oracle(full).assert_matches(consumer.tables.rows)
    assert client.connections == 1 and client.errors == []
    assert acknowledged == [True] * EXTRA if semi_sync else acknowledged == []
