"""``pipeline compare OUT REFERENCE``: each verdict seen on a table broken in exactly that way.

The output side is Parquet written here with pyarrow (typed as the materialiser types columns),
the reference a dump directory, a scenario's oracle or a database URL; no Spark."""

from __future__ import annotations

import datetime
import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from fakemaster.cli import main
from fakemaster.spark.compare import column_kind, compared, render_value
from fakemaster.spark.compare_sources import parse_dsn, read_dump
from tests.peers.policy import require_module

require_module("pyarrow", "pip install 'fakemaster[spark]'")

import pyarrow as pa  # noqa: E402
import pyarrow.parquet as pq  # noqa: E402

HEADER = b"id\tname\tprice\tratio\tseen\tday\tdata\n"
ROWS = [
    (
        1,
        "one",
        Decimal("1.50"),
        0.1,
        datetime.datetime(2024, 1, 2, 3, 4, 5, 500000),
        None,
        b"\x00\x01",
    ),
    (
        2,
        "tab\there",
        Decimal("2.00"),
        2.5,
        datetime.datetime(2024, 1, 2, 3, 4, 5),
        datetime.date(2024, 2, 29),
        b"",
    ),
    (3, None, None, None, None, None, None),
]
# The same rows as `mariadb --batch` prints them (NULL, escapes, DECIMAL(5,2), DATETIME(3)).
DUMP = HEADER + (
    b"1\tone\t1.50\t0.1\t2024-01-02 03:04:05.500\t0000-00-00\t\\0\x01\n"
    b"2\ttab\\there\t2.00\t2.5\t2024-01-02 03:04:05.000\t2024-02-29\t\n"
    b"3\tNULL\tNULL\tNULL\tNULL\tNULL\tNULL\n"
)
SCHEMA = pa.schema(
    [
        ("id", pa.int32()),
        ("name", pa.string()),
        ("price", pa.decimal128(5, 2)),
        ("ratio", pa.float64()),
        ("seen", pa.timestamp("us")),
        ("day", pa.date32()),
        ("data", pa.binary()),
    ]
)


def write_table(out: Path, name: str, rows: list[tuple[Any, ...]], schema: Any = SCHEMA) -> None:
    directory = out / "tables" / name
    directory.mkdir(parents=True)
    columns = list(zip(*rows, strict=True)) if rows else [[] for _ in schema]
    pq.write_table(pa.table(columns, schema=schema), directory / "part-0.parquet")


def write_key(out: Path, name: str, key: list[str]) -> None:
    """A change log of one event naming the table's key (as the materialiser's log does)."""
    database, _, table = name.partition(".")
    directory = out / "changes" / "batch_id=0"
    directory.mkdir(parents=True, exist_ok=True)
    seq = {"file_index": 1, "pos": 4, "event": 0, "row": 0}
    log = pa.table(
        {
            "database": [database],
            "table": [table],
            "primary_key": [key],
            "seq": [seq],
        }
    )
    pq.write_table(log, directory / f"{name}.parquet")


def run(out: Path, reference: str | Path, capsys: pytest.CaptureFixture[str], *extra: str) -> Any:
    status = main(["pipeline", "compare", str(out), str(reference), *extra])
    captured = capsys.readouterr()
    return status, captured.out.splitlines(), captured.err


@pytest.fixture
def dumps(tmp_path: Path) -> Path:
    directory = tmp_path / "dumps"
    directory.mkdir()
    (directory / "shop.items.tsv").write_bytes(DUMP)
    return directory


def test_equal_tables(tmp_path: Path, dumps: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_table(tmp_path / "out", "shop.items", ROWS)
    status, lines, err = run(tmp_path / "out", dumps, capsys)
    assert (status, err) == (0, "")
    assert lines == ["shop.items: equal (3 rows)", "compare: 1 tables, 1 equal, 0 differ"]


def test_changed_values_by_key(
    tmp_path: Path, dumps: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    changed = [ROWS[0][:1] + ("uno",) + ROWS[0][2:], ROWS[1][:3] + (2.25,) + ROWS[1][4:], ROWS[2]]
    write_table(tmp_path / "out", "shop.items", changed)
    write_key(tmp_path / "out", "shop.items", ["id"])
    status, lines, _ = run(tmp_path / "out", dumps, capsys)
    assert status == 1
    assert lines == [
        "shop.items: differs: 2 row(s) changed",
        "  ~ id=1: name: 'one' -> 'uno'",
        "  ~ id=2: ratio: 2.5 -> 2.25",
        "compare: 1 tables, 0 equal, 1 differ",
    ]


def test_rows_on_one_side_by_key(
    tmp_path: Path, dumps: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    extra = (4, "it's", Decimal("0.01"), 1e300, None, None, b"\xff")
    write_table(tmp_path / "out", "shop.items", [ROWS[0], ROWS[2], extra])
    write_key(tmp_path / "out", "shop.items", ["id"])
    status, lines, _ = run(tmp_path / "out", dumps, capsys)
    assert status == 1
    assert lines[:3] == [
        "shop.items: differs: 1 row(s) only in the reference, 1 row(s) only in the output",
        "  - id=2, name='tab\there', price=2.00, ratio=2.5, seen='2024-01-02 03:04:05.000',"
        " day='2024-02-29', data=''",
        "  + id=4, name='it''s', price=0.01, ratio=1e300, seen=NULL, day=NULL, data=0xFF",
    ]


def test_keyless_tables_compare_as_multisets(
    tmp_path: Path, dumps: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # No change log, so no key: a changed name is a row on each side; a repeated row counts.
    write_table(tmp_path / "out", "shop.items", [ROWS[0], ROWS[0], ROWS[1], ROWS[2]])
    status, lines, _ = run(tmp_path / "out", dumps, capsys)
    assert status == 1
    assert lines[0] == "shop.items: differs: 1 row(s) only in the output"
    assert lines[1].startswith("  + id=1, name='one'")


def test_tables_and_columns_on_one_side(
    tmp_path: Path, dumps: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (dumps / "shop.gone").write_bytes(b"id\n1\n2\n")
    write_table(
        tmp_path / "out", "shop.items", [r[:-1] for r in ROWS], pa.schema(list(SCHEMA)[:-1])
    )
    write_table(tmp_path / "out", "shop.new", [(7,)], pa.schema([("id", pa.int64())]))
    status, lines, _ = run(tmp_path / "out", dumps, capsys)
    assert status == 1
    assert lines == [
        "shop.gone: only in the reference (2 rows)",
        "shop.items: differs: column(s) only in the reference: data",
        "shop.new: only in the output (1 rows)",
        "compare: 3 tables, 0 equal, 3 differ",
    ]
    # --table limits the comparison.
    status, lines, _ = run(tmp_path / "out", dumps, capsys, "--table", "shop.new")
    assert (status, lines[-1]) == (1, "compare: 1 tables, 0 equal, 1 differ")


def test_limit_shows_the_first_rows(
    tmp_path: Path, dumps: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_table(tmp_path / "out", "shop.items", [])
    status, lines, _ = run(tmp_path / "out", dumps, capsys, "--limit", "1")
    assert status == 1
    assert lines[0] == "shop.items: differs: 3 row(s) only in the reference"
    assert lines[1].startswith("  - id=1,") and lines[2] == "  - ... 2 more"


def test_float_columns_compare_at_six_digits(tmp_path: Path) -> None:
    kind = column_kind(pa.float32())
    stored = float(pa.array([3.14159274], pa.float32())[0].as_py())
    assert compared(kind, "3.14159") == compared(kind, repr(stored))
    assert compared(kind, "3.14158") != compared(kind, repr(stored))
    assert render_value(kind, "3.14159") == "3.14159"


def test_the_oracle_as_reference(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from scenarios.library import build
    from scenarios.oracle import canonical_rows

    scenario = build("multi_domain")
    out = tmp_path / "out"
    for name, table in scenario.tables.items():
        rows = canonical_rows(table, scenario.contents.rows.get(name, []))
        schema = pa.schema([(c, pa.string()) for c in table.column_names])
        write_table(out, name, [tuple(r) for r in rows], schema)
    status, lines, _ = run(out, "multi_domain", capsys)
    assert status == 0, lines
    first = sorted(scenario.tables)[0]
    (out / "tables" / first / "part-0.parquet").unlink()
    write_table(
        out / "again",
        first,
        [],
        pa.schema([(c, pa.string()) for c in scenario.tables[first].column_names]),
    )
    (out / "again" / "tables" / first / "part-0.parquet").rename(
        out / "tables" / first / "part-0.parquet"
    )
    status, lines, _ = run(out, "multi_domain", capsys)
    assert status == 1 and lines[0].startswith(f"{first}: differs:"), lines


def test_a_scenario_file_as_reference(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    scenario = tmp_path / "s.toml"
    scenario.write_text(
        '[[tables]]\ncreate = "CREATE TABLE d.t (id INT PRIMARY KEY, v VARCHAR(5))"\n'
        'rows = [{ id = 1, v = "a" }, { id = 2, v = "b" }]\n'
        '[[steps]]\nchanges = [{ insert = "d.t", rows = [{ id = 3, v = "c" }] }]\n'
    )
    schema = pa.schema([("id", pa.int32()), ("v", pa.string())])
    write_table(tmp_path / "out", "d.t", [(1, "a"), (2, "b"), (3, "c")], schema)
    status, lines, err = run(tmp_path / "out", scenario, capsys)
    assert (status, lines[0], err) == (0, "d.t: equal (3 rows)", "")
    write_table(tmp_path / "other", "d.t", [(1, "a"), (2, "x"), (3, "c")], schema)
    status, lines, err = run(tmp_path / "other", scenario, capsys)
    assert (status, lines[:2]) == (1, ["d.t: differs: 1 row(s) changed", "  ~ id=2: v: 'b' -> 'x'"])
    scenario.write_text("[[tables]]\ncreate = 1\n")
    status, lines, err = run(tmp_path / "out", scenario, capsys)
    assert status == 2 and str(scenario) in err and len(err.splitlines()) == 1


@pytest.mark.parametrize(
    ("reference", "message"),
    [
        ("no-such-thing", "not a database URL"),
        ("postgres://h/db", "starts with mariadb://"),
        ("mariadb://root@127.0.0.1:99999/db", "port"),
        ("mariadb://root@127.0.0.1:1/db", "127.0.0.1:1"),
    ],
)
def test_usage_errors(
    tmp_path: Path, reference: str, message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    write_table(tmp_path / "out", "shop.items", ROWS)
    status, lines, err = run(tmp_path / "out", reference, capsys)
    assert status == 2 and lines == []
    assert err.startswith("error: ") and message in err and len(err.splitlines()) == 1


def test_not_an_output(tmp_path: Path, dumps: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, _, err = run(tmp_path / "nothing", dumps, capsys)
    assert status == 2 and "no tables/ directory" in err


def test_bad_dumps_name_the_file_and_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    directory = tmp_path / "dumps"
    directory.mkdir()
    (directory / "d.t.tsv").write_bytes(b"a\tb\n1\t2\n3\n")
    write_table(tmp_path / "out", "d.t", [(1,)], pa.schema([("a", pa.int32())]))
    status, _, err = run(tmp_path / "out", directory, capsys)
    assert status == 2 and f"{directory / 'd.t.tsv'}, line 3: 1 fields, the header has 2" in err
    (directory / "d.t.tsv").write_bytes(b"a\n\\x\n")
    status, _, err = run(tmp_path / "out", directory, capsys)
    assert status == 2 and "line 2: a backslash" in err


def test_dump_reading(tmp_path: Path) -> None:
    path = tmp_path / "db.t"
    path.write_bytes(b"a\tb\n\\\\\\n\\t\\r\\0\t\\N\n")
    table = read_dump(path)
    assert (table.name, table.columns, table.rows) == ("db.t", ["a", "b"], [(b"\\\n\t\r\0", None)])


def test_dsn_parsing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKEMASTER_PASSWORD", "from-env")
    dsn = parse_dsn("mariadb://repl:p%40ss@db1:3307/shop?socket=/run/m.sock")
    assert (dsn.host, dsn.port, dsn.user, dsn.password, dsn.database, dsn.socket) == (
        "db1",
        3307,
        "repl",
        "p@ss",
        "shop",
        "/run/m.sock",
    )
    dsn = parse_dsn("mysql://db2")
    assert (dsn.port, dsn.user, dsn.password, dsn.database) == (3306, "root", "from-env", None)


def test_the_change_logs_latest_key_wins(tmp_path: Path) -> None:
    from fakemaster.spark.compare_sources import output_keys

    write_key(tmp_path, "d.t", ["id"])
    later = tmp_path / "changes" / "batch_id=1"
    later.mkdir()
    pq.write_table(
        pa.table(
            {
                "database": ["d"],
                "table": ["t"],
                "primary_key": [["a", "b"]],
                "seq": [{"file_index": 0, "pos": 0, "event": 0, "row": 0}],
            }
        ),
        later / "x.parquet",
    )
    assert output_keys(str(tmp_path)) == {"d.t": ["a", "b"]}
    assert json.dumps(output_keys(str(tmp_path / "none"))) == "{}"


def test_rendering_follows_the_project_s_sql_literals() -> None:
    assert render_value("int", "12") == "12"
    assert render_value("int", "\x05") == "'\x05'"  # a BIT dumped as bytes: no number
    assert render_value("bytes", "0x") == "''"
    assert render_value("text", "a'b\\c") == "'a''b\\\\c'"
    assert render_value("datetime", None) == "NULL"


# What `mariadb --batch --default-character-set=utf8mb4 -e 'SELECT * FROM e.t'` (client 15.1,
# MariaDB 10.11.19) printed for
#   CREATE TABLE e.t (id INT PRIMARY KEY, v VARCHAR(20), b VARBINARY(8), bit8 BIT(8), n VARCHAR(5))
#   INSERT INTO e.t VALUES (1, CONCAT('a\tb\nc\\d', CHAR(0), 'e\rf', CHAR(8), CHAR(26)),
#                           0x00090A5C0D, b'00110001', NULL), (2, 'NULL', '', b'1', 'x')
# (docs/verified-facts.md: only tab, newline, backslash and NUL are escaped; NULL and 'NULL'
# print alike; BIT as raw bytes).
REAL_CLIENT_DUMP = (
    b"id\tv\tb\tbit8\tn\n1\ta\\tb\\nc\\\\d\\0e\rf\x08\x1a\t\\0\\t\\n\\\\\r\t1\tNULL\n"
    b"2\tNULL\t\t\x01\tx\n"
)


def test_a_dump_the_real_client_printed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    dumps = tmp_path / "dumps"
    dumps.mkdir()
    (dumps / "e.t.tsv").write_bytes(REAL_CLIENT_DUMP)
    schema = pa.schema(
        [("id", pa.int32()), ("v", pa.string()), ("b", pa.binary()), ("n", pa.string())]
    )
    # Row 2's v is the string 'NULL' on the server; the dump cannot tell it from NULL.
    rows = [(1, "a\tb\nc\\d\0e\rf\b\x1a", b"\x00\t\n\\\r", None), (2, None, b"", "x")]
    write_table(tmp_path / "out", "e.t", rows, schema)
    write_key(tmp_path / "out", "e.t", ["id"])
    status, lines, _ = run(tmp_path / "out", dumps, capsys)
    # Every value reads back but the BIT column, which the materialised table has as a number
    # and the dump as its raw byte: a column only in the reference here.
    assert (status, lines[0]) == (1, "e.t: differs: column(s) only in the reference: bit8")
    assert lines[1:] == ["compare: 1 tables, 0 equal, 1 differ"]
