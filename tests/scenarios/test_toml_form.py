"""The TOML form builds the same scenario as the Python API, and says where a file is wrong."""

from __future__ import annotations

import datetime as dt

import pytest

from fakemaster.config.accounts import Account, Privilege
from fakemaster.vocabulary.events import Gtid, XaXid
from fakemaster.vocabulary.values import Timestamp
from scenarios import Scenario, Settings, compile_scenario
from scenarios.compiler import binlog_files, to_store
from scenarios.errors import ScenarioError
from scenarios.toml_form import TomlScenarioError, load_scenario, read_scenario

SHOP_TOML = """
gtid_state = ["0-1-10", "1-7-3"]

[settings]
binlog_row_metadata = "FULL"
binlog_row_image = "minimal"
binlog_checksum = "NONE"
server_id = 3

[[tables]]
create = '''CREATE TABLE shop.orders (id INT PRIMARY KEY,
    status ENUM('new','paid') NOT NULL DEFAULT 'new', note VARCHAR(20), tags SET('a','b'),
    raw VARBINARY(4), day DATE, t TIME(2), at DATETIME(3))'''
rows = [{ id = 1, note = "first" }, { id = 2, note = { null = true } }]

[[tables]]
create = "CREATE TABLE shop.log (a INT, b VARCHAR(10))"

[[steps]]
changes = [{ insert = "shop.orders", rows = [{ id = 3, tags = ["a", "b"], raw = { hex = "00ff" } }] }]

[[steps]]
domain_id = 1
server_id = 7
changes = [
    { update = "shop.orders", where = { id = 1 }, set = { status = "paid", day = 2024-02-29 } },
    { insert = "shop.log", rows = [{ a = 1, b = "x" }, { a = 1, b = "x" }] },
    { delete = "shop.log", where = { a = 1, b = "x" } },
    { update = "shop.orders", where = { id = 2 }, set = { id = 20, t = 01:02:03.45 } },
]

[[steps]]
rotate = true

[[steps]]
changes = [
    { update = "shop.orders", where = { id = 3 }, set = { at = 2024-01-02T03:04:05.678 } },
    { delete = "shop.orders", where = { id = 20 } },
]
"""


def shop_python() -> Scenario:
    scenario = Scenario(
        Settings(
            binlog_row_metadata="FULL",
            binlog_row_image="MINIMAL",
            binlog_checksum=False,
            server_id=3,
        ),
        gtid_state=[Gtid(0, 1, 10), Gtid(1, 7, 3)],
    )
    scenario.create_table(
        "CREATE TABLE shop.orders (id INT PRIMARY KEY,"
        " status ENUM('new','paid') NOT NULL DEFAULT 'new', note VARCHAR(20), tags SET('a','b'),"
        " raw VARBINARY(4), day DATE, t TIME(2), at DATETIME(3))",
        rows=[{"id": 1, "note": "first"}, {"id": 2, "note": None}],
    )
    scenario.create_table("CREATE TABLE shop.log (a INT, b VARCHAR(10))")
    scenario.insert("shop.orders", {"id": 3, "tags": "a,b", "raw": b"\x00\xff"})
    with scenario.transaction(domain_id=1, server_id=7) as tx:
        tx.update("shop.orders", {"id": 1}, {"status": "paid", "day": dt.date(2024, 2, 29)})
        tx.insert("shop.log", {"a": 1, "b": "x"}, {"a": 1, "b": "x"})
        tx.delete("shop.log", {"a": 1, "b": "x"})
        tx.update("shop.orders", {"id": 2}, {"id": 20, "t": "01:02:03.45"})
    scenario.rotate()
    with scenario.transaction() as tx:
        tx.update("shop.orders", {"id": 3}, {"at": dt.datetime(2024, 1, 2, 3, 4, 5, 678000)})
        tx.delete("shop.orders", {"id": 20})
    return scenario


def test_the_toml_form_and_the_python_api_give_equal_scenarios_and_binlogs() -> None:
    from_toml, from_python = load_scenario(SHOP_TOML), shop_python()
    assert from_toml.settings == from_python.settings
    assert from_toml.gtid_state == from_python.gtid_state
    assert from_toml.tables == from_python.tables
    assert from_toml.initial == from_python.initial
    assert from_toml.steps == from_python.steps
    assert from_toml.describe() == from_python.describe()
    assert compile_scenario(from_toml) == compile_scenario(from_python)
    assert binlog_files(to_store(from_toml)) == binlog_files(to_store(from_python))
    assert len(binlog_files(to_store(from_toml))) == 2  # the rotation


def test_a_file_is_read(tmp_path: pytest.TempPathFactory) -> None:
    path = tmp_path / "shop.toml"  # type: ignore[operator]
    path.write_text(SHOP_TOML, encoding="utf-8")
    assert read_scenario(path).describe() == shop_python().describe()


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[settings\n", "line 1"),
        (
            "[[tables]]\ncreate = 'CREATE TABLE a.t (id INT)'\n\n[[tables]]\nrows = 3\n",
            "bad.toml:4:1: table 2",
        ),
        ("[settings]\nbinlog_row_image = 'HALF'\n", "binlog_row_image"),
        ("[settings]\nbinlog_rows = 1\n", "unknown key binlog_rows"),
        (
            "[[tables]]\ncreate = 'CREATE TABLE a.t (id TINYINT PRIMARY KEY)'\n"
            "rows = [{ id = 300 }]\n",
            "bad.toml:1:1: table 1: a.t.id",
        ),
        (
            "[[tables]]\ncreate = 'CREATE TABLE a.t (id INT PRIMARY KEY, v VARCHAR(2))'\n"
            "[[steps]]\nchanges = [{ insert = 'a.t', rows = [{ id = 1 }] }]\n"
            "[[steps]]\nchanges = [{ insert = 'a.t', rows = [{ id = 2, v = 'toolong' }] }]\n",
            "bad.toml:6:12: step 2, change 1 (insert a.t)",
        ),
        (
            "[[tables]]\ncreate = 'CREATE TABLE a.t (id INT PRIMARY KEY)'\n"
            "[[steps]]\nchanges = [{ delete = 'a.t', where = { id = 9 } }]\n",
            "bad.toml:4:12: step 1, change 1 (delete a.t): a.t: no row where",
        ),
        ("[[steps]]\nchanges = [{ insert = 'a.nope', rows = [{ id = 1 }] }]\n", "a.nope"),
        ("[[steps]]\nchanges = [{ upsert = 'a.t' }]\n", "exactly one of insert"),
        ("[[steps]]\nrotate = false\n", "rotate = true"),
        ("clock = 'noon'\n", "clock is the history's start"),
        (
            "[[tables]]\ncreate = 'CREATE TABLE a.t (b BLOB)'\nrows = [{ b = { hex = 'zz' } }]\n",
            "column b",
        ),
    ],
)
def test_errors_say_where(text: str, message: str) -> None:
    with pytest.raises(TomlScenarioError) as caught:
        load_scenario(text, source="bad.toml")
    assert caught.value.args[0].startswith("bad.toml")
    assert message in caught.value.args[0]
    assert isinstance(caught.value, ScenarioError)


def test_a_failed_transaction_leaves_nothing_behind() -> None:
    text = (
        "[[tables]]\ncreate = 'CREATE TABLE a.t (id INT PRIMARY KEY)'\n"
        "[[steps]]\nchanges = [{ insert = 'a.t', rows = [{ id = 1 }] },"
        " { insert = 'a.t', rows = [{ id = 1 }] }]\n"
    )
    with pytest.raises(TomlScenarioError, match="<toml>:4:53: step 1, change 2"):
        load_scenario(text)


def test_the_documented_example_builds_what_it_says() -> None:
    import scenarios.toml_form as module

    doc = module.__doc__ or ""
    example = doc.split("::\n\n", 1)[1].split("\n\nValues are", 1)[0]
    text = "\n".join(line[4:] for line in example.splitlines())
    scenario = load_scenario(text)
    assert scenario.initial_settings.binlog_row_image == "MINIMAL"
    assert [type(step).__name__ for step in scenario.steps] == [
        "Transaction",
        "Rotate",
        "SetSettings",
        "Ddl",
        "Transaction",
        "Idle",
        "Restart",
        "XaEnd",
    ]
    assert scenario.settings.server_id == 2
    assert scenario.transactions[1].xa == XaXid(1, b"gtrid", b"bqual")
    assert scenario.settings.binlog_row_image == "MINIMAL"  # the restart: as configured
    assert not scenario.settings.binlog_checksum
    assert scenario.gtid_state == (Gtid(0, 1, 10),)
    transaction = scenario.transactions[0]
    assert (transaction.domain_id, transaction.server_id, len(transaction.changes)) == (1, 7, 3)
    assert [list(row) for row in scenario.contents.rows["shop.orders"]] == [
        [1, 0, b"changed"],
        [3, 0, None],
    ]


@pytest.mark.parametrize(
    ("step", "message"),
    [
        ('xa_commit = "nope"', "no prepared XA transaction"),
        ("restart = 5", "restart = true, or an inline table"),
        ("restart = { server_version = 'x' }", "keeps the server version"),
        ("idle = 0", "whole number of seconds"),
        ("one_phase = true\nchanges = [{ insert = 'a.t', rows = [{ id = 1 }] }]", "goes with xa"),
        ("xa = 5\nchanges = [{ insert = 'a.t', rows = [{ id = 1 }] }]", "an xid is"),
        (
            'xa = "g"\nchanges = [{ update = "a.t", where = { id = 0 }, set = { id = 0 } }]',
            "no row",
        ),
    ],
)
def test_the_new_step_kinds_say_what_is_wrong(step: str, message: str) -> None:
    text = (
        '[[tables]]\ncreate = "CREATE TABLE a.t (id INT PRIMARY KEY)"\nrows = [{ id = 0 }]\n\n'
        f"[[steps]]\n{step}\n"
    )
    with pytest.raises(TomlScenarioError, match=rf"<toml>:5:1: step 1: .*{message}"):
        load_scenario(text)


def test_the_clock_of_a_toml_scenario_is_current_timestamp() -> None:
    scenario = load_scenario(
        "clock = 1234567890\n[[tables]]\n"
        "create = 'CREATE TABLE a.t (id INT AUTO_INCREMENT PRIMARY KEY,"
        " at TIMESTAMP NOT NULL DEFAULT current_timestamp())'\n"
        "[[steps]]\nchanges = [{ insert = 'a.t', rows = [{ }] }]\n"
    )
    assert scenario.clock == 1234567890
    assert scenario.transactions[0].changes[0].rows == ((1, Timestamp(1234567890)),)


def test_an_error_inside_a_create_names_the_file_line_and_column_of_the_word() -> None:
    text = (
        "# a shop\n[[tables]]\ncreate = '''\nCREATE TABLE shop.orders (\n"
        "  id INT PRIMARY KEY,\n  price DECIMAL(10,2) UNSIGNED ZEROFILL BOGUS\n)'''\n"
    )
    with pytest.raises(TomlScenarioError) as caught:
        load_scenario(text, source="shop.toml")
    message = caught.value.args[0]
    line, column = (int(part) for part in message.split(":")[1:3])
    assert text.splitlines()[line - 1][column - 1 :].startswith(("ZEROFILL", "BOGUS")), message
    assert ": table 1: CREATE TABLE" in message


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[[steps]]\nchnages = []\n", "bad.toml:1:1: step 1: unknown key chnages (did you mean"),
        ("[setings]\n", "unknown key setings (did you mean 'settings'?)"),
        (
            "[[tables]]\ncreate = 'CREATE TABLE a.orders (id INT)'\n"
            "[[steps]]\nchanges = [{ insert = 'a.order', rows = [{ id = 1 }] }]\n",
            "bad.toml:4:12: step 1, change 1 (insert a.order): no table 'a.order' (did you mean"
            " 'a.orders'?)",
        ),
        (
            "[[tables]]\ncreate = 'CREATE TABLE a.t (id INT, note TEXT)'\n"
            "[[steps]]\nchanges = [{ insert = 'a.t', rows = [{ id = 1, nte = 'x' }] }]\n",
            "has no column 'nte' (did you mean 'note'?)",
        ),
        (
            "[[tables]]\ncreate = 'CREATE TABLE a.t (id INTEGR)'\n",
            "bad.toml:2:32: table 1: CREATE TABLE: type 'INTEGR' is not supported by the model"
            " (did you mean 'integer'?)",
        ),
    ],
)
def test_misspelt_names_get_a_suggestion(text: str, message: str) -> None:
    with pytest.raises(TomlScenarioError) as caught:
        load_scenario(text, source="bad.toml")
    assert message in caught.value.args[0]


# --- [[accounts]] ---------------------------------------------------------------------------


def test_accounts_are_read_with_their_grants() -> None:
    scenario = load_scenario(
        """
        [[accounts]]
        user = "cdc"
        password = "a:b"
        grants = "SELECT, REPLICATION SLAVE"
        [[accounts]]
        user = "dump"
        host = "localhost"
        grants = ["RELOAD", "SELECT ON shop.*"]
        [[accounts]]
        user = "repl"
        password = "pw"
        """
    )
    assert scenario.accounts == (
        Account(
            user="cdc", password="a:b", privileges=Privilege.SELECT | Privilege.REPLICATION_SLAVE
        ),
        Account(
            user="dump",
            host="localhost",
            privileges=Privilege.RELOAD,
            database_privileges=(("shop", Privilege.SELECT),),
        ),
        Account.replication("repl", "pw"),
    )


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ('accounts = ["cdc"]', "account 1: an account is a table"),
        ('[[accounts]]\nuser = "u"\nrole = "x"', "account 1: unknown key(s) role"),
        ("[[accounts]]\npassword = 'x'", "account 1: user is the account's name"),
        ('[[accounts]]\nuser = "u"\npassword = 1', "account 1: password is a text"),
        ('[[accounts]]\nuser = "u"\nhost = ""', "account 1: host is a text"),
        ('[[accounts]]\nuser = "u"\ngrants = 5', "account 1: grants is a text or a list"),
        ('[[accounts]]\nuser = "u"\ngrants = []', "account 1: grants is a text or a list"),
        ('[[accounts]]\nuser = "u"\ngrants = "FLY"', "account 1: grants: unknown privilege"),
        ("accounts = 3", "accounts"),
    ],
)
def test_a_bad_account_names_its_entry(entry: str, message: str) -> None:
    with pytest.raises(TomlScenarioError) as caught:
        load_scenario(entry, source="s.toml")
    assert message in str(caught.value)
