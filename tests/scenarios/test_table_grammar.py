"""The table grammar of a real server: realistic schemas (tests/scenarios/realistic_schemas.py)
are created on a real MariaDB 10.11; the text its ``SHOW CREATE TABLE`` prints is accepted by
the model, and the model's own ``SHOW CREATE TABLE`` (:mod:`scenarios.show_create`, what a
served scenario answers) equals it, character for character."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from typing import Any

import pytest

from fakemaster.vocabulary.values import DateTime, Timestamp
from scenarios.catalogue import catalogue_table
from scenarios.create_table import parse_create_table
from scenarios.errors import HistoryError, SchemaError
from scenarios.history import Scenario, Settings
from scenarios.oracle import Oracle
from scenarios.schema import NO_DEFAULT, Table
from scenarios.sql import quote_name
from tests.peers.mariadb import MariaDBServer
from tests.scenarios.realistic_schemas import SCHEMAS
from tests.support.mariadb_run import compare_with_server


def _name(text: str) -> str:
    # The table's name: the first name after CREATE TABLE [IF NOT EXISTS].
    words = text.replace("`", " ").replace("(", " ( ").split()
    at = words.index("TABLE") + 1
    if words[at].upper() == "IF":
        at += 3
    return words[at]


def _server_prints(server: MariaDBServer, table: str) -> str:
    """The server's SHOW CREATE TABLE of ``table`` (database.table)."""
    connection = server.connect()
    try:
        cursor = connection.cursor()
        cursor.execute(f"SHOW CREATE TABLE {table}")
        return str(cursor.fetchone()[1])
    finally:
        connection.close()


@contextmanager
def _grammar_database(server: MariaDBServer) -> Iterator[Any]:
    """A cursor on the server, database ``grammar`` created afresh."""
    connection = server.connect()
    try:
        cursor = connection.cursor()
        cursor.execute("DROP DATABASE IF EXISTS grammar")
        cursor.execute("CREATE DATABASE grammar")
        yield cursor
    finally:
        connection.close()


@pytest.fixture(scope="module")
def server_texts(server: MariaDBServer) -> Iterator[dict[tuple[str, str], str]]:
    """Each schema's table as the server prints it, by (database, table)."""
    connection = server.connect()
    try:
        cursor = connection.cursor()
        for database in dict.fromkeys(database for database, _ in SCHEMAS):
            cursor.execute(f"DROP DATABASE IF EXISTS {quote_name(database)}")
            cursor.execute(f"CREATE DATABASE {quote_name(database)}")
        texts = {}
        for database, text in SCHEMAS:
            cursor.execute(f"USE {quote_name(database)}")
            cursor.execute(text)
            name = _name(text)
            cursor.execute(f"SHOW CREATE TABLE {quote_name(database)}.{quote_name(name)}")
            texts[database, name] = str(cursor.fetchone()[1])
        yield texts
    finally:
        connection.close()


def test_the_schemas_are_realistic_enough() -> None:
    assert len(SCHEMAS) >= 25
    assert len({database for database, _ in SCHEMAS}) >= 3
    text = " ".join(text.upper() for _, text in SCHEMAS)
    for clause in (
        "AUTO_INCREMENT",
        "CURRENT_TIMESTAMP",
        "ON UPDATE",
        " AS (",
        "GENERATED ALWAYS",
        "PERSISTENT",
        "STORED",
        "VIRTUAL",
        "INVISIBLE",
        "DEFAULT (",
        "CHECK (",
        "FOREIGN KEY",
        "FULLTEXT",
        "USING BTREE",
        "USING HASH",
        "COMMENT",
        "ROW_FORMAT",
        "KEY_BLOCK_SIZE",
        "PAGE_COMPRESSED",
        "PARTITION BY RANGE",
        "PARTITION BY HASH",
        "PARTITION BY KEY",
        "CHARSET=UTF8 ",
        "BOOLEAN",
        "INTEGER",
        "REAL",
        "SERIAL",
        "JSON",
        "IF NOT EXISTS",
    ):
        assert clause in text, clause


@pytest.mark.mariadb
@pytest.mark.parametrize(("database", "text"), SCHEMAS, ids=[_name(t) for _, t in SCHEMAS])
def test_show_create_table_from_the_model_equals_the_servers(
    server_texts: dict[tuple[str, str], str], database: str, text: str
) -> None:
    printed = server_texts[database, _name(text)]
    table = parse_create_table(printed, database)
    assert catalogue_table(table).create_text == printed
    # The text as written is accepted too, and prints as the server prints it.
    written = parse_create_table(text, database)
    assert catalogue_table(written).create_text == printed


@pytest.mark.parametrize(
    ("text", "named"),
    [
        ("CREATE TABLE d.t (a VARCHAR(9), b VARCHAR(9) AS (substr(a, 2)) VIRTUAL)", "substr"),
        ("CREATE TABLE d.t (a INT, b INT AS (a + 1) VIRTUAL NOT NULL)", "NOT NULL"),
        ("CREATE TABLE d.t (a INT, b INT AS (a + 1) STORED DEFAULT 1)", "DEFAULT"),
        ("CREATE TABLE d.t (a INT, b INT AS (nope + 1) STORED)", "unknown column 'nope'"),
        ("CREATE TABLE d.t (a INT, b INT AS (c) STORED, c INT AS (a) STORED)", "later generated"),
        ("CREATE TABLE d.t (a INT, b DATE AS (a) STORED)", "DATE value"),
        ("CREATE TABLE d.t (a INT, b INT AS (a > 1) STORED)", "'>'"),
        ("CREATE TABLE d.t (a VARCHAR(36) DEFAULT rand())", "rand"),
        ("CREATE TABLE d.t (a VARCHAR(9), UNIQUE KEY (a) USING HASH)", "hashed"),
        ("CREATE TABLE d.t (a TEXT, UNIQUE KEY ua (a))", "UNIQUE KEY ua is hashed"),
        ("CREATE TABLE d.t (a VARCHAR(800), UNIQUE KEY (a))", "UNIQUE KEY a is hashed"),
        ("CREATE TABLE d.t (a INT UNSIGNED, b INT AS (100 - a) STORED)", "UNSIGNED"),
        ("CREATE TABLE d.t (a INT UNSIGNED, b INT AS (a * 2 - 1) VIRTUAL, KEY (b))", "UNSIGNED"),
        ("CREATE TABLE d.t (a INT DEFAULT (1 / 0))", "division by zero"),
        ("CREATE TABLE d.t (a INT, b INT DEFAULT (a + 1))", "naming a column"),
        ("CREATE TABLE d.t (a INT DEFAULT (1e3 + 1))", "approximate"),
        ("CREATE TABLE d.t (a INT) ENGINE=InnoDB UNION=(x)", "UNION"),
        ("CREATE TABLE d.t (a INT) FROBNICATE=1", "FROBNICATE"),
        ("CREATE TABLE d.t LIKE d.u", "LIKE: the source table is needed"),
        ("CREATE TABLE d.t (a INT, PERIOD FOR p (a, a))", "PERIOD"),
        ("CREATE TABLE d.t (a INT AUTO_INCREMENT)", "AUTO_INCREMENT"),
    ],
)
def test_a_clause_the_model_cannot_take_is_an_error_naming_it(text: str, named: str) -> None:
    with pytest.raises(SchemaError, match=named):
        parse_create_table(text)


def auto_increments(settings: Settings) -> Scenario:
    """Inserts that leave the AUTO_INCREMENT column out (one row, several, NULL, 0), that give
    a value past the counter, deletes (the counter does not go back), DDL on the way."""
    scenario = Scenario(settings)
    scenario.create_table(
        """CREATE TABLE shop.products (
            id INTEGER NOT NULL AUTO_INCREMENT PRIMARY KEY, sku CHAR(12) NOT NULL,
            price DECIMAL(10,2) NOT NULL CHECK (price >= 0), UNIQUE INDEX (sku)
        ) ENGINE=InnoDB AUTO_INCREMENT=1000""",
        rows=[{"id": 5, "sku": "first", "price": 1}],
    )
    scenario.create_table(
        """CREATE TABLE shop.payments (id SERIAL, order_id BIGINT UNSIGNED NOT NULL,
            amount DECIMAL(12,2) NOT NULL, KEY (order_id)) ENGINE=InnoDB DEFAULT CHARSET=utf8"""
    )
    scenario.create_table(
        """CREATE TABLE shop.log (tenant INT NOT NULL, id BIGINT NOT NULL AUTO_INCREMENT,
            what VARCHAR(20), PRIMARY KEY (tenant, id), KEY (id))"""
    )
    scenario.insert("shop.products", {"sku": "a", "price": "2.50"})
    scenario.insert("shop.products", {"sku": "b", "price": 3}, {"sku": "c", "price": 4})
    scenario.insert("shop.products", {"id": None, "sku": "d", "price": 5})
    scenario.insert("shop.products", {"id": 0, "sku": "e", "price": 5})
    scenario.insert("shop.products", {"id": 2000, "sku": "f", "price": 6})
    scenario.insert("shop.products", {"sku": "g", "price": 7})
    scenario.delete("shop.products", {"id": 2001})
    scenario.insert("shop.products", {"sku": "h", "price": 8})
    with scenario.transaction() as tx:
        tx.insert("shop.payments", {"order_id": 1, "amount": 1})
        tx.insert("shop.payments", {"order_id": 1, "amount": 2})
        tx.insert("shop.log", {"tenant": 1, "what": "x"}, {"tenant": 2, "what": "y"})
    scenario.alter_table("shop.products", "ADD COLUMN note VARCHAR(10) NULL")
    scenario.insert("shop.products", {"sku": "i", "price": 9})
    scenario.rename_table("shop.products", "shop.items")
    scenario.insert("shop.items", {"sku": "j", "price": 9})
    scenario.truncate_table("shop.payments")
    scenario.insert("shop.payments", {"order_id": 3, "amount": 3})
    scenario.update("shop.items", {"id": 1000}, {"note": "kept"})
    scenario.truncate_table("shop.items")  # back to 1, not to its AUTO_INCREMENT=1000
    scenario.insert("shop.items", {"sku": "k", "price": 1})
    return scenario


@pytest.mark.mariadb
@pytest.mark.parametrize("image", ["FULL", "MINIMAL", "NOBLOB"])
@pytest.mark.parametrize("metadata", ["MINIMAL", "FULL"])
def test_auto_increment_values_are_the_servers(
    server: MariaDBServer, image: str, metadata: str
) -> None:
    scenario = auto_increments(Settings(binlog_row_image=image, binlog_row_metadata=metadata))
    assert compare_with_server(server, scenario) == []


def clocked(settings: Settings) -> Scenario:
    """DEFAULT current_timestamp(fsp)/now() and ON UPDATE current_timestamp() at the
    history's clock: inserts that leave them out, updates that change the row (and one that
    changes nothing: no ON UPDATE), idle periods moving the clock on."""
    scenario = Scenario(settings, clock=1_234_567_890)
    scenario.create_table(
        """CREATE TABLE rental.actor (
            actor_id SMALLINT UNSIGNED NOT NULL AUTO_INCREMENT,
            first_name VARCHAR(45) NOT NULL,
            created DATETIME(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
            last_update TIMESTAMP NOT NULL DEFAULT now() ON UPDATE now(),
            touched DATETIME NULL ON UPDATE CURRENT_TIMESTAMP,
            PRIMARY KEY (actor_id)
        ) ENGINE=InnoDB""",
        rows=[{"first_name": "initial"}],
    )
    scenario.insert("rental.actor", {"first_name": "a"}, {"first_name": "b"})
    scenario.idle(3600)
    scenario.update("rental.actor", {"actor_id": 1}, {"first_name": "A"})
    scenario.update("rental.actor", {"actor_id": 3}, {"first_name": "b"})  # changes nothing
    with scenario.transaction() as tx:
        tx.insert("rental.actor", {"first_name": "c", "created": "2001-02-03 04:05:06.789"})
        tx.update("rental.actor", {"actor_id": 3}, {"first_name": "B", "last_update": "2010-01-01"})
    scenario.idle(1)
    scenario.update("rental.actor", {"actor_id": 3}, {"first_name": "BB"})
    return scenario


def test_current_timestamp_is_the_historys_clock() -> None:
    scenario = clocked(Settings())
    rows = {row[0]: row for row in Oracle(scenario).final.rows["rental.actor"]}
    assert rows[2][2:] == (DateTime(2009, 2, 13, 23, 31, 30), Timestamp(1_234_567_890), None)
    assert rows[1][3:] == (Timestamp(1_234_567_890 + 3600), DateTime(2009, 2, 14, 0, 31, 30))
    assert rows[3][3:] == (Timestamp(1_234_567_890 + 3601), DateTime(2009, 2, 14, 0, 31, 31))
    assert rows[4][1:3] == (b"c", DateTime(2001, 2, 3, 4, 5, 6, 789000))


@pytest.mark.mariadb
@pytest.mark.parametrize("image", ["FULL", "MINIMAL", "NOBLOB"])
def test_current_timestamp_defaults_and_on_update_are_the_servers(
    server: MariaDBServer, image: str
) -> None:
    scenario = clocked(Settings(binlog_row_image=image, binlog_row_metadata="FULL"))
    assert compare_with_server(server, scenario) == []


def test_adding_a_clocked_column_to_rows_is_refused_saying_so() -> None:
    scenario = Scenario()
    scenario.create_table("CREATE TABLE d.t (id INT PRIMARY KEY)", rows=[{"id": 1}])
    scenario.create_table("CREATE TABLE d.u (id INT PRIMARY KEY)")
    with pytest.raises(HistoryError, match="current_timestamp.*not modelled"):
        scenario.alter_table("d.t", "ADD COLUMN at TIMESTAMP NOT NULL DEFAULT now()")
    scenario.alter_table("d.u", "ADD COLUMN at TIMESTAMP NOT NULL DEFAULT now()")


def keys_altered(settings: Settings) -> Scenario:
    """The issue's ALTER (ADD COLUMN ... NOT NULL DEFAULT with ADD INDEX in one statement),
    then keys added and dropped, a column dropped out of a key."""
    scenario = Scenario(settings)
    scenario.create_table(
        """CREATE TABLE saas.users (id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
            email VARCHAR(100) NOT NULL, tenant INT NOT NULL, role VARCHAR(10),
            KEY idx_tenant (tenant, role))""",
        rows=[{"email": "a@x", "tenant": 1}],
    )
    scenario.alter_table(
        "saas.users", "ADD COLUMN plan VARCHAR(8) NOT NULL DEFAULT 'free', ADD INDEX (plan)"
    )
    scenario.insert("saas.users", {"email": "b@x", "tenant": 2})
    scenario.ddl("ALTER TABLE saas.users ADD UNIQUE KEY uq_email (email), DROP INDEX plan")
    scenario.ddl("ALTER TABLE saas.users ADD KEY (email(10)) USING BTREE, DROP COLUMN role")
    scenario.insert("saas.users", {"email": "c@x", "tenant": 3, "plan": "pro"})
    return scenario


@pytest.mark.mariadb
@pytest.mark.parametrize("image", ["FULL", "MINIMAL"])
def test_keys_added_and_dropped_by_alter_are_the_servers(server: MariaDBServer, image: str) -> None:
    scenario = keys_altered(Settings(binlog_row_image=image))
    assert compare_with_server(server, scenario) == []
    printed = _server_prints(server, "saas.users")
    table = scenario.tables["saas.users"]
    # (the server's counter after three inserts; the model prints the table option)
    assert catalogue_table(table).create_text == printed.replace(" AUTO_INCREMENT=4", "")
    assert replace(parse_create_table(printed, "saas"), auto_increment=None, _index={}) == table


def test_an_alter_of_keys_the_model_cannot_take_is_an_error_naming_it() -> None:
    scenario = Scenario()
    scenario.create_table(
        "CREATE TABLE d.t (id INT PRIMARY KEY, a INT, KEY ka (a), g INT, x INT AS (g) VIRTUAL,"
        " c INT, CHECK (c > 0))"
    )
    for clause, named in [
        ("DROP PRIMARY KEY", "PRIMARY"),
        ("ADD PRIMARY KEY (a)", "PRIMARY"),
        ("ENGINE=MyISAM", "changing the engine"),
        ("RENAME TO d.u", "RENAME TO"),
        ("ADD CONSTRAINT pk PRIMARY KEY (a)", "ADD PRIMARY KEY"),
        ("DROP FOREIGN KEY nope", "DROP FOREIGN KEY nope"),
        ("DROP CONSTRAINT nope", "DROP CONSTRAINT nope"),
        ("ALTER COLUMN a SET DEFAULT (1 + 1)", "SET DEFAULT of an expression"),
        ("ALTER COLUMN id SET DEFAULT NULL", "NOT NULL"),
        ("CHANGE a id INT", "the column exists"),
        ("RENAME COLUMN g TO h", "a CHECK or a generated column names it"),
        ("RENAME COLUMN c TO h", "a CHECK or a generated column names it"),
        ("CONVERT TO CHARACTER SET latin1", "a table option"),
        ("ADD UNIQUE KEY (a) USING HASH", "hashed"),
        ("DROP INDEX nope", "no such key"),
        ("ADD KEY ka (a)", "the key exists"),
        ("ADD KEY (b)", "no column"),
    ]:
        with pytest.raises((SchemaError, HistoryError), match=named):
            scenario.alter_table("d.t", clause)


_FILLERS: dict[str, object] = {
    "decimal": "1.5",
    "char": "x",
    "varchar": "x",
    "binary": b"x",
    "varbinary": b"x",
    "date": "2020-01-02",
    "datetime": "2020-01-02 03:04:05",
    "timestamp": "2020-01-02 03:04:05",
    "enum": 1,
    "set": 1,
    "year": 2020,
    "double": 0.5,
    "float": 0.5,
    "text": "x",
    "tinytext": "x",
    "mediumtext": "x",
    "longtext": "x",
    "json": "{}",
    "blob": b"x",
}


def _required(table: Table) -> dict[str, object]:
    """A value for each column an insert must name (NOT NULL, no default of any kind)."""
    return {
        column.name: _FILLERS.get(column.type, 1)
        for column in table.columns
        if not column.nullable
        and column.default is NO_DEFAULT
        and column.default_expression is None
        and not column.auto_increment
    }


def every_schema(settings: Settings, texts: dict[tuple[str, str], str]) -> Scenario:
    """Every realistic table, declared from the server's own text; in each an insert that
    names only what it must (AUTO_INCREMENT, current_timestamp and constant expression
    defaults filled, generated columns computed), then an update of a column outside the key
    (ON UPDATE fires; generated columns follow), an hour later; then :func:`mid_stream`."""
    scenario = Scenario(settings, clock=1_600_000_000)
    for (database, _), printed in texts.items():
        scenario.create_table(parse_create_table(printed, database))
    for name, table in list(scenario.tables.items()):
        scenario.insert(name, _required(table))
    scenario.idle(3600)
    for name, table in list(scenario.tables.items()):
        row = Oracle(scenario).final.rows[name][0]
        others = [
            c
            for p, c in enumerate(table.columns)
            if p not in table.key and c.type != "timestamp" and c.generated is None
        ]
        if table.key and others:
            where = {table.columns[p].name: row[p] for p in table.key}
            scenario.update(name, where, {others[-1].name: _FILLERS.get(others[-1].type, 2)})
    mid_stream(scenario)
    return scenario


def mid_stream(scenario: Scenario) -> None:
    """A bulk load (multi-row INSERTs of a few hundred rows, keys left to AUTO_INCREMENT,
    generated columns computed, partitioned tables), DDL between the rows (ADD COLUMN ... NOT
    NULL DEFAULT with ADD INDEX, CREATE TABLE ... LIKE, ADD COLUMN ... AFTER in a table with
    generated columns), updates of generated columns' sources and deletes."""
    scenario.insert(
        "rental.payment",
        *(
            {
                "customer_id": 1 + n % 7,
                "staff_id": 1,
                "amount": f"{n % 13}.{n % 100:02d}",
                "payment_date": f"2005-0{1 + n % 9}-{10 + n % 18} 1{n % 10}:00:00",
            }
            for n in range(300)
        ),
    )
    scenario.insert(
        "shop.cart_items",
        *(
            {
                "cart_id": 100 + n // 4,
                "line": n % 4,
                "sku": f"SKU{n:05d}",
                "quantity": 1 + n % 5,
                "unit_price": f"{n % 50}.{n % 7}5",
                "discount_pct": n % 30,
            }
            for n in range(200)
        ),
    )
    scenario.insert(
        "saas.invoices",
        *(
            {
                "tenant_id": 1 + n % 5,
                "number": f"INV-{n:06d}",
                "amount_cents": n * 101,
                "tax_cents": n * 19,
            }
            for n in range(120)
        ),
    )
    scenario.insert(
        "shop.sales_by_month",
        *(
            {"month_no": 202300 + (n // 12) * 100 + 1 + n % 12, "revenue": n * 3, "orders": n}
            for n in range(36)
        ),
    )
    scenario.ddl(
        "ALTER TABLE rental.payment ADD COLUMN source VARCHAR(10) NOT NULL DEFAULT 'store',"
        " ADD INDEX idx_source (source)"
    )
    scenario.insert(
        "rental.payment",
        *(
            {
                "customer_id": 2,
                "staff_id": 1,
                "amount": "1.99",
                "payment_date": "2006-01-01",
                "source": "web" if n % 2 else "app",
            }
            for n in range(20)
        ),
    )
    scenario.ddl("CREATE TABLE saas.events_archive LIKE saas.events")
    scenario.insert(
        "saas.events_archive",
        *({"tenant_id": n % 3, "kind": "login", "body": f"user {n} logged in"} for n in range(50)),
    )
    scenario.ddl("ALTER TABLE shop.cart_items ADD COLUMN note VARCHAR(20) NULL AFTER sku")
    scenario.idle(60)
    with scenario.transaction() as tx:
        tx.update("shop.cart_items", {"cart_id": 100, "line": 1}, {"quantity": 9})
        tx.update("shop.cart_items", {"cart_id": 101, "line": 2}, {"note": "gift"})
        tx.update("rental.customer", {"customer_id": 1}, {"last_name": "Jones"})
        tx.update("saas.invoices", {"id": 3, "tenant_id": 2}, {"tax_cents": 0})
        tx.delete("shop.cart_items", {"cart_id": 102, "line": 0})
    scenario.insert("rental.customer", {"store_id": 2, "first_name": "Mary", "last_name": "Smith"})


@pytest.mark.mariadb
@pytest.mark.parametrize(
    ("image", "annotate"), [("FULL", True), ("MINIMAL", False), ("NOBLOB", True)]
)
def test_a_history_over_every_realistic_table_is_the_servers(
    server: MariaDBServer, server_texts: dict[tuple[str, str], str], image: str, annotate: bool
) -> None:
    settings = Settings(
        binlog_row_image=image, binlog_row_metadata="FULL", binlog_annotate_row_events=annotate
    )
    assert compare_with_server(server, every_schema(settings, server_texts)) == []


_PARTITIONED = "CREATE TABLE grammar.{name} (id INT NOT NULL, d DATE NOT NULL, PRIMARY KEY (id, d))"
PARTITION_CLAUSES = [
    "partition by hash(id) partitions 4",
    "PARTITION BY LINEAR HASH (id + 1) PARTITIONS 2",
    "partition by key(id) partitions 3",
    "partition by key() partitions 3",
    "PARTITION BY LINEAR KEY ALGORITHM=2 (id)",
    "partition by hash(id)",
    "partition by range(id) (partition p0 values less than (10), partition p1 values less than"
    " maxvalue)",
    "partition by range(id) partitions 2 (partition p0 values less than (-5) engine=InnoDB,"
    " partition p1 values less than maxvalue STORAGE ENGINE = InnoDB)",
    "partition by list(id) (partition a values in (3,2,1), partition b values in (4, null))",
    "partition by list columns(id) (partition a values in (1,2,3), partition b default)",
    "partition by range columns(id, d) (partition p0 values less than (10, '2020-01-01'),"
    " partition p1 values less than (maxvalue, maxvalue))",
    "partition by range (year(d)) (partition p0 values less than (2020), partition p1 values"
    " less than (2030))",  # year() is not read: kept as written, so only the server's reads back
    "partition by range(id) subpartition by hash(id) subpartitions 2 (partition p0 values less"
    " than (10), partition p1 values less than maxvalue)",
]


@pytest.mark.mariadb
def test_partition_clauses_as_written_are_printed_as_the_server_prints_them(
    server: MariaDBServer,
) -> None:
    with _grammar_database(server) as cursor:
        for number, clause in enumerate(PARTITION_CLAUSES):
            text = _PARTITIONED.format(name=f"p{number}") + " " + clause
            cursor.execute(text)
            cursor.execute(f"SHOW CREATE TABLE grammar.p{number}")
            printed = str(cursor.fetchone()[1])
            model = parse_create_table(printed, "grammar")
            assert catalogue_table(model).create_text == printed, clause
            if "year(" not in clause:
                assert catalogue_table(parse_create_table(text)).create_text == printed, clause


CHECKED = """CREATE TABLE grammar.checked (
    a INT CHECK (a>=0), b INT CHECK (b BETWEEN 1 AND 5), c VARCHAR(5) CHECK (c IN ('x','y')),
    d INT CHECK (d IS NOT NULL AND d <> 3 OR d != 4), e INT CHECK (NOT (e < 0)),
    f INT CHECK (e IS NULL), g JSON, h INT CHECK (h = 1 || h > 2 && h < 9),
    i INT CHECK (i NOT IN (1, 2)), j VARCHAR(9) CHECK (j LIKE 'a%'),
    k INT CHECK (k NOT BETWEEN 1 AND 2), l INT CHECK (-l <= 5 XOR l >= 0),
    m INT CHECK ((m > 0 OR m < -10) AND m <> 5), n INT CHECK (n > 0 AND (n < 9 OR n = 20)),
    o INT CHECK (NOT o <= 0), p INT CHECK (o + p * 2 > (o - 1) * 3),
    CONSTRAINT x CHECK (a + b > c), CHECK (length(c) > 1),
    CHECK (char_length(c) >= 1 and a is not null), CHECK (a > 0 OR b > 0 OR c = 'y'),
    CHECK (a IS NULL XOR (b IS NULL XOR c IS NULL))
)"""

REFERENCED = "CREATE TABLE grammar.referenced (id INT PRIMARY KEY)"
# RESTRICT (InnoDB's default) is not printed, NO ACTION is.
REFERRING = """CREATE TABLE grammar.referring (a INT, b INT,
    FOREIGN KEY (a) REFERENCES referenced (id) ON UPDATE RESTRICT ON DELETE NO ACTION,
    FOREIGN KEY (b) REFERENCES referenced (id) ON DELETE SET NULL ON UPDATE NO ACTION)"""


@pytest.mark.mariadb
def test_check_conditions_as_written_are_printed_as_the_server_prints_them(
    server: MariaDBServer,
) -> None:
    with _grammar_database(server) as cursor:
        cursor.execute("USE grammar")
        printed = {}
        for text in (CHECKED, REFERENCED, REFERRING):
            cursor.execute(text)
            name = _name(text).split(".")[-1]
            cursor.execute(f"SHOW CREATE TABLE grammar.{name}")
            printed[text] = str(cursor.fetchone()[1])
    for text, shown in printed.items():
        assert catalogue_table(parse_create_table(shown, "grammar")).create_text == shown
        assert catalogue_table(parse_create_table(text)).create_text == shown


def migrations(settings: Settings) -> Scenario:
    """ALTER TABLE as migration tools write it: CHANGE and RENAME COLUMN (keys and foreign
    keys follow), ALTER COLUMN SET/DROP DEFAULT, constraints added and dropped, table options
    with ALGORITHM/LOCK, AUTO_INCREMENT=N moving the counter (up, and down to the largest
    value plus one); rows between each."""
    scenario = Scenario(settings)
    scenario.create_table("CREATE TABLE app.teams (id INT PRIMARY KEY)", rows=[{"id": 1}])
    scenario.create_table(
        """CREATE TABLE app.members (id INT NOT NULL AUTO_INCREMENT PRIMARY KEY,
            team INT NOT NULL, handle VARCHAR(20) NOT NULL DEFAULT 'anon', score INT,
            UNIQUE KEY uq_handle (handle), KEY (team, score))""",
        rows=[{"team": 1}],
    )
    scenario.ddl("ALTER TABLE app.members CHANGE COLUMN handle nick VARCHAR(30) NOT NULL")
    scenario.insert("app.members", {"team": 1, "nick": "b"})
    scenario.ddl("ALTER TABLE app.members RENAME COLUMN score TO points, ALGORITHM=INPLACE")
    scenario.ddl("ALTER TABLE app.members ALTER COLUMN points SET DEFAULT 10, LOCK=NONE")
    scenario.insert("app.members", {"team": 1, "nick": "c"})
    scenario.ddl("ALTER TABLE app.members ALTER points DROP DEFAULT")
    scenario.insert("app.members", {"team": 1, "nick": "d"})
    scenario.ddl(
        "ALTER TABLE app.members ADD CONSTRAINT fk_team FOREIGN KEY (team) REFERENCES"
        " app.teams (id) ON DELETE CASCADE, ADD CHECK (points >= 0),"
        " ADD CONSTRAINT nick_len CHECK (char_length(nick) > 0)"
    )
    scenario.ddl("ALTER TABLE app.members COMMENT='people' ROW_FORMAT=DYNAMIC, AUTO_INCREMENT=50")
    scenario.insert("app.members", {"team": 1, "nick": "e"})
    scenario.delete("app.members", {"id": 50})
    scenario.ddl("ALTER TABLE app.members DROP FOREIGN KEY fk_team, DROP CONSTRAINT nick_len")
    scenario.ddl("ALTER TABLE app.members AUTO_INCREMENT=3")  # below the largest (4): 5 next
    scenario.insert("app.members", {"team": 1, "nick": "f"})
    scenario.ddl("ALTER TABLE app.members ADD FOREIGN KEY (team) REFERENCES app.teams (id)")
    return scenario


@pytest.mark.mariadb
@pytest.mark.parametrize("image", ["FULL", "MINIMAL"])
def test_migration_alters_are_the_servers(server: MariaDBServer, image: str) -> None:
    scenario = migrations(Settings(binlog_row_image=image, binlog_row_metadata="FULL"))
    assert compare_with_server(server, scenario) == []
    printed = _server_prints(server, "app.members")
    table = scenario.tables["app.members"]
    # (the model prints AUTO_INCREMENT=N as declared, the server its counter)
    shown = catalogue_table(table).create_text
    assert shown.replace(" AUTO_INCREMENT=3", "") == printed.replace(" AUTO_INCREMENT=6", "")


# DEFAULT uuid() and its kin, as an application writes them: kept and printed, never drawn
# by the model (the server's values cannot be known before it logs them).
DRAWN = """CREATE TABLE saas.sessions (
    id UUID NOT NULL DEFAULT UUID(),
    token CHAR(36) DEFAULT uuid  ( ),
    n BIGINT UNSIGNED DEFAULT uuid_short(),
    guid VARCHAR(40) DEFAULT SYS_GUID(),
    PRIMARY KEY (id)
)"""


def drawn(settings: Settings) -> Scenario:
    scenario = Scenario(settings)
    scenario.create_table(DRAWN)
    scenario.insert(
        "saas.sessions",
        {
            "id": "6ccd780c-baba-1026-9564-5b8c656024db",
            "token": "t",
            "n": 99,
            "guid": "g",
        },
    )
    return scenario


def test_a_drawn_default_is_kept_and_an_insert_relying_on_it_is_refused_naming_it() -> None:
    table = parse_create_table(DRAWN)
    assert [c.default_expression for c in table.columns] == [
        "uuid()",
        "uuid()",
        "uuid_short()",
        "sys_guid()",
    ]
    assert all(c.default is NO_DEFAULT for c in table.columns)
    scenario = drawn(Settings())
    with pytest.raises(HistoryError, match=r"token: .*DEFAULT uuid\(\).*give its value"):
        scenario.insert(
            "saas.sessions", {"id": "00000000-0000-0000-0000-000000000001", "n": 1, "guid": "h"}
        )


@pytest.mark.mariadb
def test_drawn_defaults_print_and_log_as_the_servers(server: MariaDBServer) -> None:
    scenario = drawn(Settings(binlog_row_metadata="FULL"))
    assert compare_with_server(server, scenario) == []
    printed = _server_prints(server, "saas.sessions")
    assert catalogue_table(scenario.tables["saas.sessions"]).create_text == printed
    assert catalogue_table(parse_create_table(printed, "saas")).create_text == printed
