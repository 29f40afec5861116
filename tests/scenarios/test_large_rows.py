"""Rows over 16 MiB: their rows events (and the ANNOTATE_ROWS quoting them) are events over
16 MiB, as a real MariaDB 10.11 (max_allowed_packet 64M) writes them."""

from __future__ import annotations

import io

import pytest

from decoder.binlog_file import read_binlog
from fakemaster.vocabulary.events import WriteRowsEvent
from scenarios.compiler import binlog_files, to_store
from scenarios.history import Scenario, Settings
from tests.peers.mariadb import MariaDBServer
from tests.support.mariadb_run import compare_with_server

SIXTEEN_MIB = 1 << 24


def large(settings: Settings | None = None) -> Scenario:
    scenario = Scenario(settings)
    scenario.create_table("CREATE TABLE big.t (id INT PRIMARY KEY, b LONGBLOB, n INT)")
    scenario.insert("big.t", {"id": 1, "b": bytes(range(256)) * (17 * 4096 + 3)})
    scenario.update("big.t", {"id": 1}, {"n": 5})
    return scenario


def test_a_row_over_16_mib_is_an_event_over_16_mib() -> None:
    store = to_store(large())
    (data,) = binlog_files(store).values()
    sizes = {type(e).__name__: e for _, e in read_binlog(io.BytesIO(data))}
    write = sizes["WriteRowsEvent"]
    assert isinstance(write, WriteRowsEvent)
    assert len(write.rows[0][1]) == 256 * (17 * 4096 + 3) > SIXTEEN_MIB
    ends = [end - start for _, (start, end) in _spans(data)]
    assert sum(1 for size in ends if size > SIXTEEN_MIB) == 3  # annotate, write, update


def _spans(data: bytes) -> list[tuple[int, tuple[int, int]]]:
    out = []
    position = 4
    while position < len(data):
        size = int.from_bytes(data[position + 9 : position + 13], "little")
        out.append((position, (position, position + size)))
        position += size
    return out


@pytest.mark.mariadb
def test_rows_over_16_mib_on_a_real_server(server: MariaDBServer) -> None:
    assert compare_with_server(server, large(Settings(binlog_row_image="FULL"))) == []
