"""Tables from CREATE TABLE text and from the builder are the same objects; what cannot be a
table is refused with a SchemaError naming where."""

from __future__ import annotations

import pytest
from hypothesis import given, settings

from scenarios.builder import column, table
from scenarios.create_table import parse_create_table
from scenarios.errors import SchemaError, ValueDoesNotFit
from scenarios.schema import NO_DEFAULT
from scenarios.sql import create_table_sql
from scenarios.strategies.history import tables
from tests.budget import examples

EVERY_TYPE = """
CREATE TABLE IF NOT EXISTS `shop`.`every` (
  id BIGINT UNSIGNED NOT NULL,
  t TINYINT, s SMALLINT UNSIGNED, m MEDIUMINT, i INT(11) NOT NULL DEFAULT -5,
  d DECIMAL(12,3) DEFAULT '1.250', f FLOAT, g DOUBLE PRECISION, b BIT(10) DEFAULT 3,
  y YEAR, dt DATE DEFAULT '2024-02-29', tm TIME(3), ts TIMESTAMP(6) NULL,
  dtm DATETIME(2) DEFAULT '2024-01-02 03:04:05.67',
  c CHAR(4) CHARACTER SET latin1 COLLATE latin1_bin, v VARCHAR(20) COLLATE utf8mb4_bin,
  bn BINARY(2), vb VARBINARY(9), tt TINYTEXT, tx TEXT CHARSET utf8mb4, mt MEDIUMTEXT,
  lt LONGTEXT, j JSON, tb TINYBLOB, bl BLOB, mb MEDIUMBLOB, lb LONGBLOB,
  e ENUM('a', 'b''q', 'c\\\\d') NOT NULL DEFAULT 'b''q', st SET('x','y') DEFAULT 'x,y',
  PRIMARY KEY (id),  -- a comment
  UNIQUE KEY uq (i), KEY by_t (t) /* an index the model does not need */
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_general_ci;
"""


def every_type_built() -> object:
    return table(
        "shop.every",
        column("id", "BIGINT UNSIGNED", null=False),
        column("t", "TINYINT"),
        column("s", "SMALLINT", unsigned=True),
        column("m", "MEDIUMINT"),
        column("i", "INT", null=False, default=-5),
        column("d", "DECIMAL(12,3)", default="1.25"),
        column("f", "FLOAT"),
        column("g", "DOUBLE"),
        column("b", "BIT(10)", default=3),
        column("y", "YEAR"),
        column("dt", "DATE", default="2024-02-29"),
        column("tm", "TIME(3)"),
        column("ts", "TIMESTAMP(6)"),
        column("dtm", "DATETIME(2)", default="2024-01-02 03:04:05.67"),
        column("c", "CHAR(4)", collation="latin1_bin"),
        column("v", "VARCHAR(20)", collation="utf8mb4_bin"),
        column("bn", "BINARY(2)"),
        column("vb", "VARBINARY(9)"),
        column("tt", "TINYTEXT"),
        column("tx", "TEXT", charset="utf8mb4"),
        column("mt", "MEDIUMTEXT"),
        column("lt", "LONGTEXT"),
        column("j", "JSON"),
        column("tb", "TINYBLOB"),
        column("bl", "BLOB"),
        column("mb", "MEDIUMBLOB"),
        column("lb", "LONGBLOB"),
        column("e", "ENUM('a','b''q','c\\\\d')", null=False, default="b'q"),
        column("st", "SET('x','y')", default={"x", "y"}),
        primary_key=("id",),
        unique=[("i",)],
    )


def test_create_table_text_and_the_builder_give_equal_tables() -> None:
    parsed = parse_create_table(EVERY_TYPE)
    assert parsed == every_type_built()
    assert parsed.column("e").members == ("a", "b'q", "c\\d")
    assert parsed.column("e").default == 2  # the index of b'q
    assert parsed.column("st").default == 0b11
    assert parsed.column("c").charset == "latin1"
    assert parsed.column("tx").collation == "utf8mb4_general_ci"
    assert parsed.column("j").collation == "utf8mb4_bin"
    assert parsed.column("vb").collation == "binary"
    assert parsed.column("t").default is NO_DEFAULT
    assert parsed.key == (0,)


def test_character_set_binary_makes_byte_types() -> None:
    parsed = parse_create_table(
        "CREATE TABLE d.t (a CHAR(3) CHARACTER SET binary, b VARCHAR(4) CHARSET binary,"
        " c TEXT CHARACTER SET binary)"
    )
    assert [c.type for c in parsed.columns] == ["binary", "varbinary", "blob"]


def test_the_key_is_the_primary_key_else_the_first_unique_not_null_key() -> None:
    no_pk = parse_create_table(
        "CREATE TABLE d.t (a INT, b INT NOT NULL, c INT NOT NULL, UNIQUE (a), UNIQUE (c, b))"
    )
    assert no_pk.key == (2, 1)
    assert parse_create_table("CREATE TABLE d.t (a INT, UNIQUE (a))").key == ()
    inline = parse_create_table("CREATE TABLE d.t (a INT, b INT PRIMARY KEY)")
    assert inline.key == (1,) and not inline.column("b").nullable


@settings(max_examples=examples(1))
@given(tables())
def test_the_ddl_of_a_table_parses_back_to_it(generated: object) -> None:
    assert parse_create_table(create_table_sql(generated)) == generated  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("CREATE TABLE t (a INT)", "no database"),
        ("CREATE TABLE d.t (a GEOMETRY)", "not supported by the model"),
        ("CREATE TABLE d.t (a VARCHAR)", "needs a length"),
        ("CREATE TABLE d.t (a DECIMAL(66,2))", "invalid"),
        ("CREATE TABLE d.t (a DECIMAL(5,6))", "invalid"),
        ("CREATE TABLE d.t (a TIME(7))", "precision"),
        ("CREATE TABLE d.t (a BIT(65))", "out of range"),
        ("CREATE TABLE d.t (a INT ZEROFILL)", "ZEROFILL"),
        ("CREATE TABLE d.t (a INT, a INT)", "duplicate column"),
        ("CREATE TABLE d.t (a INT, PRIMARY KEY (b))", "not a column"),
        ("CREATE TABLE d.t (a INT PRIMARY KEY, b INT, PRIMARY KEY (b))", "multiple primary"),
        ("CREATE TABLE d.t (a VARCHAR(3) COLLATE nope)", "unknown collation"),
        ("CREATE TABLE d.t (a VARCHAR(3) CHARACTER SET latin1 COLLATE utf8mb4_bin)", "not of"),
        ("CREATE TABLE d.t (a INT DEFAULT (rand()))", "function rand\\(\\) at 33 is not modelled"),
        ("CREATE TABLE d.t (a INT NOT NULL DEFAULT NULL)", "NOT NULL with DEFAULT NULL"),
        ("CREATE TABLE d.t (a INT DEFAULT rand())", "function rand\\(\\) at 32 is not modelled"),
        ("CREATE TABLE d.t (a INT) garbage", "table option"),
        ("CREATE TABLE d.t (a INT, 'x')", "a name"),
        ("CREATE TABLE d.t (a VARCHAR(3) DEFAULT 'x", "unterminated string"),
        ("CREATE TABLE d.t (a INT /* x", "unterminated comment"),
        ("CREATE TABLE d.t (a INT) ;;", "the end"),
    ],
)
def test_what_is_not_a_table_is_refused_saying_why(text: str, message: str) -> None:
    with pytest.raises(SchemaError, match=message):
        parse_create_table(text)


def test_a_default_that_does_not_fit_its_column_is_refused() -> None:
    with pytest.raises(ValueDoesNotFit, match="d.t.a: 300 does not fit"):
        parse_create_table("CREATE TABLE d.t (a TINYINT DEFAULT 300)", "d")


def test_the_parser_takes_long_and_hostile_text_in_one_pass() -> None:
    """Twenty thousand columns parse; a megabyte of unterminated string or of nested
    parentheses is refused with a SchemaError (no recursion, no backtracking)."""
    wide = "CREATE TABLE d.t (" + ", ".join(f"c{n} INT" for n in range(20000)) + ")"
    assert parse_create_table(wide).width == 20000
    with pytest.raises(SchemaError, match="unterminated string"):
        parse_create_table("CREATE TABLE d.t (a VARCHAR(3) DEFAULT '" + "\\'" * 500_000)
    with pytest.raises(SchemaError):
        parse_create_table("CREATE TABLE d.t " + "(" * 1_000_000)


def test_deeply_nested_expressions_are_refused_or_kept_not_crashed() -> None:
    """Generated columns, DEFAULT and CHECK expressions are read by recursion: nesting beyond
    a bound is a SchemaError (or, for a CHECK, the condition kept as written)."""
    deep = "(" * 5000 + "a" + ")" * 5000
    with pytest.raises(SchemaError, match="parentheses"):
        parse_create_table(f"CREATE TABLE d.t (a INT, b INT AS ({deep}) VIRTUAL)")
    with pytest.raises(SchemaError, match="nested too deeply"):
        parse_create_table(f"CREATE TABLE d.t (a INT, b INT AS ({'-' * 5000}a) VIRTUAL)")
    kept = parse_create_table(f"CREATE TABLE d.t (a INT CHECK ({deep} > 0))")
    assert kept.columns[0].check == f"{deep} > 0"
    chained = parse_create_table(f"CREATE TABLE d.t (a INT CHECK ({'NOT ' * 5000}a > 0))")
    assert chained.columns[0].check == f"{'NOT ' * 5000}a > 0"
