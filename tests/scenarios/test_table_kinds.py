"""MariaDB's own table kinds in a scenario history: a sequence (CREATE SEQUENCE, NEXTVAL and
SETVAL) and a system-versioned table (WITH SYSTEM VERSIONING: INSERT, UPDATE, DELETE, history
rows), beside UUID/INET4/INET6 columns. The history compiles to the events a real MariaDB 10.11
logs for the same statements (field for field) and the oracle holds the server's tables (the
versioned table's history rows too, as ``FOR SYSTEM_TIME ALL`` shows them)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from fakemaster.vocabulary.events import GtidEvent, QueryEvent, WriteRowsEvent
from scenarios.compiler import NON_TRANSACTIONAL_FLAGS2, compile_scenario, flatten
from scenarios.errors import ScenarioError
from scenarios.history import Scenario, Settings
from scenarios.oracle import canonical_rows
from scenarios.toml_form import TomlScenarioError, load_scenario
from tests.peers.fixtures import require_mariadb
from tests.peers.mariadb import MariaDBServer
from tests.scenarios.test_served_to_replica import replicate_and_compare
from tests.support.mariadb_run import compare_with_server

pytestmark = pytest.mark.mariadb


def kinds(settings: Settings) -> Scenario:
    scenario = Scenario(settings)
    scenario.create_table(
        "CREATE TABLE tk.hosts (id UUID NOT NULL PRIMARY KEY, v4 INET4, v6 INET6 NOT NULL"
        " DEFAULT '::1', n BIGINT)",
        rows=[{"id": "6ccd780c-baba-1026-9564-5b8c656024db", "v4": "10.0.0.1", "n": 0}],
    )
    scenario.create_sequence("CREATE SEQUENCE tk.ids START WITH 100 INCREMENT BY 10 CACHE 2")
    scenario.create_sequence("CREATE SEQUENCE tk.loop MINVALUE 1 MAXVALUE 3 CACHE 2 CYCLE")
    scenario.create_table(
        "CREATE TABLE tk.prices (sku INT PRIMARY KEY, price DECIMAL(8,2), ip INET6)"
        " WITH SYSTEM VERSIONING"
    )
    scenario.create_table("CREATE TABLE tk.notes (note VARCHAR(20)) WITH SYSTEM VERSIONING")
    first = scenario.nextval("tk.ids")  # logs the row: a block of 2 reserved
    scenario.insert(
        "tk.hosts", {"id": "f47ac10b-58cc-4372-a567-0e02b2c3d479", "v4": "1.2.3.4", "n": first}
    )
    scenario.nextval("tk.ids")  # inside the block: nothing logged
    scenario.nextval("tk.ids")  # a new block
    scenario.setval("tk.ids", 1000)  # past the block: logged
    scenario.setval("tk.ids", 500)  # behind: nothing
    for _ in range(4):
        scenario.nextval("tk.loop")  # 1, 2, 3 then a new cycle
    scenario.insert(
        "tk.prices", {"sku": 1, "price": "9.99", "ip": "::1"}, {"sku": 2, "price": 5, "ip": None}
    )
    scenario.insert("tk.notes", {"note": "a"}, {"note": "a"})
    scenario.idle(1)
    scenario.update("tk.prices", {"sku": 1}, {"price": "10.50"})
    with scenario.transaction() as tx:
        tx.update("tk.prices", {"sku": 2}, {"price": "6", "ip": "fe80::1"})
        tx.update("tk.notes", {"note": "a"}, {"note": "b"})
        tx.insert("tk.prices", {"sku": 3, "price": 1})
    scenario.idle(2)
    scenario.delete("tk.prices", {"sku": 2})
    scenario.delete("tk.notes", {"note": "a"})
    scenario.update("tk.prices", {"sku": 1}, {"price": "10.50"})  # the same values: a version
    # In the second its row started: the row is updated in place, no history row.
    scenario.insert("tk.prices", {"sku": 4, "price": 4, "ip": None})
    scenario.update("tk.prices", {"sku": 4}, {"price": 5})
    scenario.update("tk.prices", {"sku": 4}, {"price": 5})
    scenario.delete("tk.prices", {"sku": 4})  # ended where it started
    scenario.idle(1)
    scenario.update("tk.prices", {"sku": 3}, {"price": 2})
    # Its history row of this second holds the key the ended row would: deleted instead.
    scenario.delete("tk.prices", {"sku": 3})
    scenario.update("tk.hosts", {"id": "f47ac10b-58cc-4372-a567-0e02b2c3d479"}, {"v6": "1::"})
    return scenario


@pytest.mark.parametrize(
    ("image", "metadata"), [("FULL", "FULL"), ("MINIMAL", "NO_LOG"), ("NOBLOB", "MINIMAL")]
)
def test_compiled_like_the_servers_binlog_and_the_oracle_holds_its_tables(
    server: MariaDBServer, image: str, metadata: str
) -> None:
    scenario = kinds(Settings(binlog_row_image=image, binlog_row_metadata=metadata))
    assert compare_with_server(server, scenario) == []


TOML = """
[[steps]]
ddl = "CREATE SEQUENCE tk.ids START WITH 100 INCREMENT BY 10 CACHE 2"

[[steps]]
ddl = "CREATE TABLE tk.prices (sku INT PRIMARY KEY, price DECIMAL(8,2)) WITH SYSTEM VERSIONING"

[[steps]]
nextval = "tk.ids"

[[steps]]
changes = [{ insert = "tk.prices", rows = [{ sku = 1, price = "9.50" }] }]

[[steps]]
idle = 1

[[steps]]
changes = [{ update = "tk.prices", where = { sku = 1 }, set = { price = 10 } }]

[[steps]]
setval = "tk.ids"
value = 1000
domain_id = 3
"""


def test_the_toml_form_builds_what_the_python_api_does() -> None:
    scenario = Scenario()
    scenario.create_sequence("CREATE SEQUENCE tk.ids START WITH 100 INCREMENT BY 10 CACHE 2")
    scenario.ddl(
        "CREATE TABLE tk.prices (sku INT PRIMARY KEY, price DECIMAL(8,2)) WITH SYSTEM VERSIONING"
    )
    assert scenario.nextval("tk.ids") == 100
    scenario.insert("tk.prices", {"sku": 1, "price": "9.50"})
    scenario.idle(1)
    scenario.update("tk.prices", {"sku": 1}, {"price": 10})
    assert scenario.setval("tk.ids", 1000, domain_id=3) == 1000
    assert flatten(compile_scenario(load_scenario(TOML))) == flatten(compile_scenario(scenario))
    # Independent of the model: the rows as the server printed them for these statements.
    cells = [canonical_rows(t, scenario.contents.rows[n]) for n, t in scenario.tables.items()]
    assert cells == [
        [("1010", "1", "9223372036854775806", "100", "10", "2", "0", "0")],
        [
            ("1", "9.50", "2023-11-14 22:13:20.000000", "2023-11-14 22:13:21.000000"),
            ("1", "10.00", "2023-11-14 22:13:21.000000", "2038-01-19 03:14:07.999999"),
        ],
    ]


def _kinds_start() -> Scenario:
    scenario = Scenario()
    scenario.create_sequence("CREATE SEQUENCE tk.s MAXVALUE 2 CACHE 2")
    scenario.ddl("CREATE TABLE tk.v (k INT PRIMARY KEY, x INT) WITH SYSTEM VERSIONING")
    scenario.insert("tk.v", {"k": 1, "x": 1})
    return scenario


@pytest.mark.parametrize(
    ("broken", "message"),
    [
        (lambda s: s.nextval("tk.v"), r"no sequence 'tk\.v'"),
        (lambda s: s.nextval("tk.t"), r"no sequence 'tk\.t'.*did you mean 'tk\.s'"),
        (lambda s: s.setval("tk.s", "7"), r"SETVAL\(tk\.s, '7'\): a whole number"),
        (lambda s: [s.nextval("tk.s") for _ in range(3)], r"tk\.s' has run out"),
        (lambda s: s.insert("tk.s", {"cache_size": 1}), r"tk\.s is a sequence: nextval"),
        (lambda s: s.delete("tk.s", {}), r"tk\.s is a sequence: nextval"),
        (lambda s: s.alter_table("tk.s", "ADD COLUMN c INT"), r"ALTER TABLE of a sequence"),
        (lambda s: s.insert("tk.v", {"k": 2, "row_start": 0}), r"cannot set row_start"),
        (lambda s: s.update("tk.v", {"k": 1}, {"row_end": 0}), r"cannot set row_end"),
        (
            lambda s: s.update("tk.v", {"k": 1, "row_end": 0}, {"x": 2}),
            r"named by its key: \['k'\]",
        ),
        (lambda s: s.delete("tk.v", {"k": 2}), r"no current row where \{'k': 2\}"),
        (lambda s: s.truncate_table("tk.v"), r"TRUNCATE TABLE of a system-versioned table"),
        (
            lambda s: Scenario().create_table(
                "CREATE TABLE tk.w (k INT) WITH SYSTEM VERSIONING", [{"k": 1}]
            ),
            r"tk\.w: a system-versioned table takes its rows in steps",
        ),
    ],
)
def test_a_broken_step_is_refused_naming_what(broken: Any, message: str) -> None:
    scenario = _kinds_start()
    with pytest.raises(ScenarioError, match=message):
        broken(scenario)


def test_a_deleted_row_is_not_found_again() -> None:
    scenario = _kinds_start()
    scenario.idle(1)
    scenario.delete("tk.v", {"k": 1})
    with pytest.raises(ScenarioError, match=r"no current row where \{'k': 1\}"):
        scenario.update("tk.v", {"k": 1}, {"x": 3})


@pytest.mark.parametrize(
    ("step", "message"),
    [
        ('setval = "tk.s"', "setval takes value = n"),
        ("nextval = 5", "nextval names the sequence"),
        ('nextval = "tk.s"\nvalue = 3', r"unknown key\(s\) value"),
        ('setval = "tk.s"\nvalue = 1\nwhat = 2', r"unknown key\(s\) what"),
    ],
)
def test_a_broken_toml_sequence_step_is_refused(step: str, message: str) -> None:
    text = f'[[steps]]\nddl = "CREATE SEQUENCE tk.s"\n\n[[steps]]\n{step}\n'
    with pytest.raises(TomlScenarioError, match=message):
        load_scenario(text)


@pytest.fixture(scope="module")
def replica() -> Iterator[MariaDBServer]:
    require_mariadb()
    instance = MariaDBServer(server_id=52)
    try:
        yield instance.start()
    finally:
        instance.close()


def test_a_replica_of_the_served_scenario_holds_the_oracles_tables(replica: MariaDBServer) -> None:
    """Served by fakemaster, a real replica ends with the oracle's tables: the sequences' rows,
    every version of the versioned tables (``FOR SYSTEM_TIME ALL``), the UUID/INET columns."""
    replicate_and_compare(replica, kinds(Settings(binlog_row_image="MINIMAL")))


def test_a_sequences_steps_log_the_golden_rows() -> None:
    """The NEXTVALs of tests/golden/table_kinds' ``s2`` (a real 10.11's binlog) as history
    steps: the same values, the same rows logged, in groups of their own."""
    from tests.scenarios.test_sequences import EXPECTED, _logged

    scenario = Scenario(Settings(binlog_row_metadata="FULL"))
    create = next(s["sql"] for s in EXPECTED["statements"] if "SEQUENCE s2" in s["sql"])
    scenario.create_sequence(create.replace("s2", "kinds.s2"))
    values = [scenario.nextval("kinds.s2") for _ in range(5)]
    assert values == [100, 110, 120, 130, 100]
    compiled = flatten(compile_scenario(scenario))
    writes = [e for e in compiled if isinstance(e, WriteRowsEvent)]
    assert [row for e in writes for row in e.rows] == _logged("s2")
    groups = [e for e in compiled if isinstance(e, GtidEvent)][1:]
    assert {g.flags2 for g in groups} == {NON_TRANSACTIONAL_FLAGS2}
    assert [e.query for e in compiled if isinstance(e, QueryEvent)][1:] == [b"COMMIT"] * 3


def test_a_versioned_tables_show_create_table_is_the_servers() -> None:
    """tests/golden/table_kinds: what a real 10.11 printed for ``v``; read back, the same
    table; a broken clause is named."""
    from scenarios.catalogue import catalogue_table
    from scenarios.create_table import parse_create_table
    from tests.scenarios.test_sequences import EXPECTED

    model = parse_create_table(
        "CREATE TABLE v (pk INT PRIMARY KEY, x INT) WITH SYSTEM VERSIONING", "kinds"
    )
    printed = EXPECTED["tables"]["v"]["create"]
    assert catalogue_table(model).create_text == printed
    assert parse_create_table(printed, "kinds") == model
    assert model.column_names == ("pk", "x", "row_start", "row_end")
    assert model.primary_key == ("pk", "row_end")
    with pytest.raises(ScenarioError, match="table option WITH at 36 is not modelled"):
        parse_create_table("CREATE TABLE v (pk INT PRIMARY KEY) WITH SYSTEM", "kinds")
