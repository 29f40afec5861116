"""The statistics of a served table, against what a real MariaDB 10.11.19 showed for the same
tables and rows after ``ANALYZE TABLE`` (SHOW INDEX, information_schema.TABLES; the module
tests/integration/test_real_tools_differential.py compares them end to end through
``mariadb-dump --xml``). The expected numbers below are the real server's."""

from __future__ import annotations

import pytest

from fakemaster.sql.tables.catalogue import CatalogueColumn, CatalogueKey, CatalogueTable
from fakemaster.sql.tables.table_statistics import (
    PAGE_SIZE,
    avg_row_length,
    cardinalities,
    clustered_key,
    frm_version,
    index_length,
)

TEAM = CatalogueKey("team", ("team", "nick"))
PEOPLE = CatalogueTable(
    "keys",
    "people",
    (
        CatalogueColumn("id", "int", nullable=False, unsigned=True),
        CatalogueColumn(
            "email", "varchar", nullable=False, length=40, collation="utf8mb4_general_ci"
        ),
        CatalogueColumn("nick", "varchar", length=10, collation="latin1_bin"),
        CatalogueColumn("team", "char", nullable=False, length=3, collation="utf8mb4_general_ci"),
    ),
    (CatalogueKey("PRIMARY", ("id",)), CatalogueKey("email", ("email",)), TEAM),
)
PEOPLE_ROWS = [(b"1", "a@x", "Al", "red"), (b"2", "B@x", "Bo", "abc"), (b"3", "c@x", "Cy", "abc")]

GRP = CatalogueKey("grp", ("grp", "id"))
MANY = CatalogueTable(
    "keys",
    "many",
    (CatalogueColumn("id", "int", nullable=False), CatalogueColumn("grp", "int", nullable=False)),
    (CatalogueKey("PRIMARY", ("id",)), GRP),
)
MANY_ROWS = [(str(i * 3).encode(), str(i % 9).encode()) for i in range(1, 61)]

PAIRS = CatalogueTable(
    "keys",
    "pairs",
    (
        CatalogueColumn("a", "int", nullable=False),
        CatalogueColumn("b", "varchar", nullable=False, length=5, collation="utf8mb4_general_ci"),
        CatalogueColumn("v", "bigint"),
    ),
    (CatalogueKey("a", ("a", "b")),),
)


def test_a_prefix_with_fewer_values_than_rows_shows_innodbs_halved_estimate() -> None:
    # 9 distinct groups among 60 rows: the real server shows 20 (60 // (60 // 9 // 2)).
    assert cardinalities(MANY, GRP, MANY_ROWS) == [20, 60]
    # 2 teams among 3 rows show as 3 (records per key rounds down to 1).
    assert cardinalities(PEOPLE, TEAM, PEOPLE_ROWS) == [3, 3]


def test_unique_keys_show_the_row_count() -> None:
    assert cardinalities(PEOPLE, PEOPLE.keys[0], PEOPLE_ROWS) == [3]
    assert cardinalities(MANY, MANY.keys[0], MANY_ROWS) == [60]


def test_an_empty_table_shows_zero() -> None:
    assert cardinalities(MANY, GRP, []) == [0, 0]


def test_nulls_are_one_value_and_case_insensitive_text_compares_folded() -> None:
    # innodb_stats_method=nulls_equal; utf8mb4_general_ci ignores case and trailing spaces.
    # (Seen on the real server with these rows under UNIQUE KEY (team, nick, id).)
    rows = [(str(i).encode(), f"E{i % 2}", None, "abc " if i % 2 else "ABC") for i in range(40)]
    # 1 distinct team among 40: 40 // 20 = 2; (team, NULL nick): still 1 value
    assert cardinalities(PEOPLE, TEAM, rows) == [2, 2]
    # A case-sensitive collation keeps case apart (latin1_bin nick): 2 values, 40 // 10
    rows = [(str(i).encode(), "x", "A" if i % 2 else "a", "abc") for i in range(40)]
    assert cardinalities(PEOPLE, TEAM, rows) == [2, 4]


def test_lengths_are_a_page_per_index() -> None:
    assert index_length(PEOPLE) == 2 * PAGE_SIZE  # two secondary indexes
    assert index_length(MANY) == PAGE_SIZE
    # Without a primary key, the UNIQUE key of NOT NULL columns is the clustered index.
    assert clustered_key(PAIRS) is PAIRS.keys[0]
    assert index_length(PAIRS) == 0
    assert avg_row_length(PAGE_SIZE, 3) == 5461
    assert avg_row_length(PAGE_SIZE, 60) == 273
    assert avg_row_length(PAGE_SIZE, 0) == 0


def test_a_nullable_unique_key_is_not_clustered() -> None:
    table = CatalogueTable("d", "t", (CatalogueColumn("a", "int"),), (CatalogueKey("a", ("a",)),))
    assert clustered_key(table) is None
    assert index_length(table) == PAGE_SIZE


# SHOW CREATE TABLE as a real 10.11.19 printed it, and the Version its SHOW TABLE STATUS showed.
_TAIL = "  PRIMARY KEY (`id`)\n) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_general_ci"
SERVER_VERSIONS = [
    ("  `t` timestamp NULL DEFAULT current_timestamp(),", 10),
    ("  `t` datetime(3) DEFAULT current_timestamp(3) ON UPDATE current_timestamp(3),", 10),
    ("  `x` int(11) DEFAULT (1 + 1),", 11),
    ("  `x` int(11) DEFAULT NULL CHECK (`x` > 0),", 11),
    ("  `x` int(11) GENERATED ALWAYS AS (`id` + 1) VIRTUAL,", 11),
    ("  `y` int(11) GENERATED ALWAYS AS (`id` * 2) STORED,", 11),
    (
        "  `x` varchar(9) DEFAULT 'it''s, ok',\n  `y` int(11) DEFAULT -1,\n"
        "  `z` double DEFAULT 1000,\n  `w` bit(2) DEFAULT b'1',\n  `u` varchar(3) DEFAULT 'x',\n"
        "  `q` datetime DEFAULT '2000-01-01 00:00:00',\n  `r` decimal(5,2) DEFAULT 1.50,\n"
        "  `k` varchar(3) DEFAULT '',",
        10,
    ),
    ("  `x` int(11) DEFAULT NULL,\n  `y` varchar(5) DEFAULT concat('a','b'),", 11),
    ("  `x` date DEFAULT curdate(),", 11),
    (
        "  `j` longtext CHARACTER SET utf8mb4 COLLATE utf8mb4_bin DEFAULT NULL CHECK (json_valid(`j`)),",
        11,
    ),
]


@pytest.mark.parametrize(("columns", "version"), SERVER_VERSIONS)
def test_a_table_holding_an_expression_is_version_11(columns: str, version: int) -> None:
    text = f"CREATE TABLE `t` (\n  `id` int(11) NOT NULL,\n{columns}\n{_TAIL}"
    assert frm_version(text) == version


def test_a_table_check_constraint_is_an_expression() -> None:
    text = "CREATE TABLE `h` (\n  `id` int(11) NOT NULL,\n  PRIMARY KEY (`id`),\n"
    text += "  CONSTRAINT `c` CHECK (`id` > 0)\n) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4"
    assert frm_version(text) == 11
