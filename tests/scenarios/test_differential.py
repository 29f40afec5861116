"""THE differential: scenarios rendered as SQL and run on a real MariaDB 10.11 write the events
the compiler gives, field for field under the minimal normalisation of
:func:`tests.support.mariadb_run.normalised_differences`, and leave the tables the oracle
says (read back with SELECT)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings

from fakemaster.vocabulary.constants import RowsFlag
from fakemaster.vocabulary.events import WriteRowsEvent
from scenarios.compiler import compile_scenario
from scenarios.history import Scenario, Settings
from scenarios.strategies.history import scenarios
from tests.budget import examples
from tests.peers.mariadb import MariaDBServer
from tests.support.mariadb_run import compare_with_server

pytestmark = pytest.mark.mariadb


def shop(settings: Settings) -> Scenario:
    scenario = Scenario(settings)
    scenario.create_table(
        """CREATE TABLE shop.orders (
            id BIGINT UNSIGNED PRIMARY KEY,
            status ENUM('new','paid') NOT NULL DEFAULT 'new',
            note TEXT, amount DECIMAL(10,2), tags SET('a','b'), f FLOAT, d DOUBLE,
            b BIT(5), y YEAR, t TIME(2), dt DATETIME(6), ts TIMESTAMP(3),
            c CHAR(3) CHARACTER SET latin1, bn BINARY(3), vb VARBINARY(10))""",
        rows=[{"id": 1, "status": "paid"}],
    )
    scenario.create_table("CREATE TABLE shop.log (a INT, b VARCHAR(10))")
    scenario.insert(
        "shop.orders",
        {"id": 2, "note": "hi", "amount": "1.5"},
        {"id": 18446744073709551615, "note": "x" * 300, "amount": 3},
    )
    with scenario.transaction(domain_id=1, server_id=5) as tx:
        tx.update(
            "shop.orders",
            {"id": 2},
            {
                "status": "paid",
                "tags": "a,b",
                "f": 0.5,
                "d": 0.1,
                "b": 7,
                "y": 2024,
                "bn": b"\x01",
                "vb": b"\x00\x01",
                "t": "-01:02:03.45",
                "dt": "2024-02-29 10:11:12.123456",
                "c": "é",
            },
        )
        tx.insert("shop.log", {"a": 1, "b": "é"})
        tx.insert("shop.log", {"a": 1, "b": "é"})
        tx.delete("shop.log", {"a": 1, "b": "é"})
        tx.update("shop.orders", {"id": 1}, {"id": 5})
    scenario.update("shop.orders", {"id": 5}, {"status": "paid"})  # changes nothing
    scenario.delete("shop.orders", {"id": 18446744073709551615})
    return scenario


@pytest.mark.parametrize("image", ["FULL", "MINIMAL", "NOBLOB"])
@pytest.mark.parametrize("metadata", ["NO_LOG", "MINIMAL", "FULL"])
def test_a_hand_written_history(server: MariaDBServer, image: str, metadata: str) -> None:
    scenario = shop(Settings(binlog_row_image=image, binlog_row_metadata=metadata))
    assert compare_with_server(server, scenario) == []


@settings(max_examples=examples(0.5))
@given(scenario=scenarios())
def test_generated_histories(server: MariaDBServer, scenario: Scenario) -> None:
    assert compare_with_server(server, scenario) == []


def big_rows(settings: Settings) -> Scenario:
    """Statements whose rows take several rows events (and one row larger than an event)."""
    scenario = Scenario(settings)
    scenario.create_table(
        "CREATE TABLE big.t (id INT PRIMARY KEY, v VARCHAR(3000) CHARACTER SET latin1, b BLOB)"
    )
    scenario.create_table(
        "CREATE TABLE big.edge (id INT PRIMARY KEY, v VARCHAR(5000) CHARACTER SET latin1)"
    )
    sizes = [1000, 2500, 10, 1800, 2990, 700, 2000, 5, 2999, 1500, 1200, 2600]
    scenario.insert("big.t", *({"id": n, "v": "v" * size} for n, size in enumerate(sizes)))
    scenario.insert("big.t", {"id": 100, "v": "w" * 3000, "b": b"\xff" * 20000})
    with scenario.transaction() as tx:
        for n, size in enumerate(sizes[:6]):
            tx.update("big.t", {"id": n}, {"v": "u" * (3000 - size)})
        tx.update("big.t", {"id": 100}, {"b": b"\x01" * 9000})
    # Exactly at the limit, and one byte over it: a WRITE_ROWS event's data is 8 bytes of
    # post-header, the packed width (1) and the bitmap (1), then per row its NULL bitmap (1),
    # the INT (4), the VARCHAR's length (2) and bytes.
    fits = 8192 - (8 + 1 + 1) - (7 + 4000) - 7
    for n, second in enumerate((fits, fits + 1)):
        scenario.insert(
            "big.edge",
            {"id": 10 * n, "v": "a" * 4000},
            {"id": 10 * n + 1, "v": "b" * second},
            {"id": 10 * n + 2, "v": ""},
        )
    return scenario


def test_a_rows_event_takes_rows_up_to_binlog_row_event_max_size_exactly() -> None:
    scenario = big_rows(Settings())
    events = [e for item in compile_scenario(scenario)[-2:] for e in item.events]
    sizes = [len(e.rows) for e in events if isinstance(e, WriteRowsEvent)]
    assert sizes == [2, 1, 1, 2]  # at the limit the second row still fits; one byte more, not


@pytest.mark.parametrize("image", ["FULL", "MINIMAL", "NOBLOB"])
def test_statements_split_into_rows_events_where_the_server_splits_them(
    server: MariaDBServer, image: str
) -> None:
    scenario = big_rows(Settings(binlog_row_image=image))
    compiled = [e for item in compile_scenario(scenario) for e in item.events]
    writes = [e for e in compiled if isinstance(e, WriteRowsEvent)]
    # Four INSERT statements, in more events than that; each statement's last has STMT_END.
    assert len(writes) > 4
    assert [e.rows_flags for e in writes].count(RowsFlag.STMT_END) == 4
    assert compare_with_server(server, scenario) == []


def compressible(settings: Settings) -> Scenario:
    """Rows around log_bin_compress_min_len (rows of 7 + n bytes: NULL bitmap, INT, length)."""
    scenario = Scenario(settings)
    scenario.create_table(
        "CREATE TABLE z.t (id INT PRIMARY KEY, v VARCHAR(2000) CHARACTER SET latin1)"
    )
    least = settings.log_bin_compress_min_len - 7
    scenario.insert("z.t", {"id": 1, "v": "a" * least})
    scenario.insert("z.t", {"id": 2, "v": "b" * (least - 1)})
    scenario.insert(
        "z.t",
        *(
            {"id": 10 + n, "v": "c" * size}
            for n, size in enumerate((least, 5, least + 1, least - 1, 1500))
        ),
    )
    scenario.insert("z.t", {"id": 20, "v": "f"}, {"id": 21, "v": "g" * (least + 5)})
    with scenario.transaction() as tx:
        tx.update("z.t", {"id": 1}, {"v": "d"})
        tx.update("z.t", {"id": 2}, {"v": "e" * 300})
        tx.delete("z.t", {"id": 10})
        tx.delete("z.t", {"id": 11})
    return scenario


@pytest.mark.parametrize("min_len", [10, 256, 1024])
def test_rows_events_are_compressed_where_the_server_compresses_them(
    server: MariaDBServer, min_len: int
) -> None:
    scenario = compressible(Settings(log_bin_compress=True, log_bin_compress_min_len=min_len))
    assert compare_with_server(server, scenario) == []


def test_rotations_between_transactions(server: MariaDBServer) -> None:
    scenario = shop(Settings())
    scenario.rotate()  # right after a transaction, and twice in a row
    scenario.rotate()
    scenario.insert("shop.log", {"a": 7, "b": "x"})
    scenario.rotate()
    with scenario.transaction(domain_id=4, server_id=6) as tx:
        tx.insert("shop.log", {"a": 8, "b": "y"})
    scenario.rotate()  # from a session whose server_id is 6: the ROTATE has the server's own
    scenario.insert("shop.log", {"a": 9, "b": "z"})
    assert compare_with_server(server, scenario) == []
