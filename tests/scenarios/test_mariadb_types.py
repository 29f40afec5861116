"""UUID, INET4 and INET6 in a scenario: its CREATE TABLE text is the server's SHOW CREATE TABLE,
its history compiles to the events a real MariaDB 10.11 logs for the same statements (field for
field, under every row image and metadata setting) and the oracle holds the server's tables; served
by fakemaster, a real replica ends with the oracle's tables."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from fakemaster.vocabulary.mariadb_types import Inet4, Inet6, Uuid
from scenarios.catalogue import catalogue_table
from scenarios.create_table import parse_create_table
from scenarios.errors import ScenarioError
from scenarios.history import Scenario, Settings
from scenarios.oracle import Oracle, canonical_rows, client_row
from scenarios.toml_form import load_scenario
from tests.peers.fixtures import require_mariadb
from tests.peers.mariadb import MariaDBServer
from tests.scenarios.test_served_to_replica import replicate_and_compare
from tests.support.mariadb_run import compare_with_server

pytestmark = pytest.mark.mariadb

UUIDS = [
    "6ccd780c-baba-1026-9564-5b8c656024db",  # version 1: the record format swaps it
    "f47ac10b-58cc-4372-a567-0e02b2c3d479",  # version 4
    "01890a5d-ac96-774b-bcce-b302099a8057",  # version 7: not swapped
    "12345678-9abc-0ef0-0123-456789abcdef",  # version 0, variant 0: not swapped
    "00000000-0000-0000-0000-000000000000",
    "ffffffff-ffff-ffff-ffff-ffffffffffff",
]


def network(settings: Settings) -> Scenario:
    scenario = Scenario(settings)
    scenario.create_table(
        """CREATE TABLE net.hosts (
            id UUID NOT NULL PRIMARY KEY, v4 INET4, v6 INET6 NOT NULL DEFAULT '::1',
            note VARCHAR(10))""",
        rows=[
            {"id": UUIDS[0], "v4": "0.0.0.0", "v6": "::", "note": "zeros"},
            {
                "id": UUIDS[1],
                "v4": "255.255.255.255",
                "v6": "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff",
            },
        ],
    )
    scenario.create_table(
        "CREATE TABLE net.links (a INET6 NOT NULL, b INET4 NOT NULL, u UUID, PRIMARY KEY (a, b))"
    )
    scenario.insert(
        "net.hosts",
        {"id": UUIDS[2], "v4": "10.0.0.0", "v6": "::ffff:192.0.2.1"},
        {"id": UUIDS[3], "v4": None, "v6": "1::"},  # trailing zero bytes: not logged
    )
    # v6 from its DEFAULT
    scenario.insert("net.hosts", {"id": Uuid.parse(UUIDS[4]), "v4": Inet4.parse("127.0.0.1")})
    with scenario.transaction() as tx:
        tx.insert("net.links", {"a": "fe80::1", "b": "1.2.3.4", "u": UUIDS[5]})
        tx.insert("net.links", {"a": "::", "b": "0.0.0.0", "u": None})
        tx.insert("net.links", {"a": "fe80::1", "b": "9.255.0.1", "u": UUIDS[0]})
        tx.insert("net.links", {"a": "10::1", "b": "10.0.0.0", "u": UUIDS[2]})
        tx.insert("net.links", {"a": "9::1", "b": "10.0.0.0", "u": UUIDS[3]})
        tx.update("net.hosts", {"id": UUIDS[0]}, {"id": UUIDS[5], "v6": Inet6.parse("2001:db8::")})
        tx.update("net.links", {"a": "::", "b": "0.0.0.0"}, {"a": "::1:0:0"})
    scenario.delete("net.hosts", {"id": UUIDS[2]})
    scenario.update("net.hosts", {"id": UUIDS[3]}, {"v4": None, "note": "edited"})
    return scenario


@pytest.mark.parametrize(
    ("image", "metadata"), [("FULL", "FULL"), ("MINIMAL", "NO_LOG"), ("NOBLOB", "MINIMAL")]
)
def test_compiled_like_the_servers_binlog_and_the_oracle_holds_its_tables(
    server: MariaDBServer, image: str, metadata: str
) -> None:
    scenario = network(Settings(binlog_row_image=image, binlog_row_metadata=metadata))
    assert compare_with_server(server, scenario) == []


def test_show_create_table_is_the_servers(server: MariaDBServer) -> None:
    scenario = network(Settings())
    server.execute("CREATE DATABASE IF NOT EXISTS types_show")
    for name, model in scenario.tables.items():
        text = catalogue_table(model).create_text
        assert text is not None
        server.execute(["USE types_show", f"DROP TABLE IF EXISTS {model.name}", text])
        printed = server.execute(f"SHOW CREATE TABLE types_show.{model.name}")[0][1]
        assert catalogue_table(model).create_text == printed, name
        assert parse_create_table(printed, "net") == model, name


def test_a_value_that_is_not_of_the_type_is_refused_naming_the_column() -> None:
    scenario = network(Settings())
    with pytest.raises(ScenarioError, match=r"v4.*INET4"):
        scenario.insert("net.hosts", {"id": UUIDS[4][:-1] + "1", "v4": "1.2.3.256"})
    with pytest.raises(ScenarioError, match=r"id.*UUID"):
        scenario.insert("net.hosts", {"id": "not-a-uuid"})
    with pytest.raises(ScenarioError, match=r"v6.*Inet6"):
        scenario.insert("net.hosts", {"id": UUIDS[4][:-1] + "2", "v6": Inet4.parse("1.2.3.4")})


def test_values_from_a_toml_file_and_from_decoded_binlog_bytes() -> None:
    scenario = load_scenario(
        """
[[tables]]
create = "CREATE TABLE net.t (id INT PRIMARY KEY, u UUID, ip INET6)"
rows = [{ id = 1, u = "6CCD780C-BABA-1026-9564-5B8C656024DB", ip = "::FFFF:10.0.0.1" }]
"""
    )
    table = scenario.tables["net.t"]
    row = scenario.initial.rows["net.t"][0]
    assert (str(row[1]), str(row[2])) == (UUIDS[0], "::ffff:10.0.0.1")
    # A client's decoded rows carry the logged bytes (trailing zero bytes dropped).
    assert client_row(table, {"id": 1, "u": b"", "ip": b"\x00\x01"}) == (
        1,
        Uuid(b"\x00" * 16),
        Inet6.parse("1::"),
    )
    with pytest.raises(ScenarioError, match="up to 16 bytes, not bytes of 17"):
        client_row(table, {"id": 1, "u": b"x" * 17, "ip": None})


def test_the_oracle_prints_the_servers_text() -> None:
    scenario = network(Settings())
    rows = canonical_rows(scenario.tables["net.links"], Oracle(scenario).final.rows["net.links"])
    assert ("::1:0:0", "0.0.0.0", None) in rows


@pytest.fixture(scope="module")
def replica() -> Iterator[MariaDBServer]:
    require_mariadb()
    instance = MariaDBServer(server_id=51)
    try:
        yield instance.start()
    finally:
        instance.close()


@pytest.mark.parametrize("metadata", ["FULL", "NO_LOG"])
def test_a_replica_of_the_served_scenario_holds_the_oracles_tables(
    replica: MariaDBServer, metadata: str
) -> None:
    replicate_and_compare(replica, network(Settings(binlog_row_metadata=metadata)))
