"""The run's report: the table a statement-format DML statement writes, one-line errors, the
summary line and a table's line."""

from __future__ import annotations

import pytest

from fakemaster.spark.table_report import (
    TableResult,
    one_line,
    report_json,
    statement_target,
    summary_line,
    table_line,
)


@pytest.mark.parametrize(
    ("text", "target"),
    [
        ("INSERT INTO t (v) VALUES (1)", ("db", "t")),
        ("insert low_priority ignore into `s`.`t w` values (1)", ("s", "t w")),
        ("INSERT t VALUES (1)", ("db", "t")),
        ("REPLACE INTO other.t SELECT * FROM x", ("other", "t")),
        ("/* app */ UPDATE IGNORE t SET v = 1", ("db", "t")),
        ("UPDATE a JOIN b ON a.id = b.id SET a.v = b.v", ("db", "a")),
        ("DELETE QUICK FROM s.t WHERE id = 1", ("s", "t")),
        ("DELETE a, b FROM a JOIN b USING (id)", ("db", "a")),
        (
            "LOAD DATA INFILE '/tmp/x' IGNORE INTO TABLE `t``q` FIELDS TERMINATED BY ','",
            ("db", "t`q"),
        ),
        ("LOAD INDEX INTO CACHE t", ("db", None)),
    ],
)
def test_statement_target(text: str, target: tuple[str, str | None]) -> None:
    assert statement_target(text, "db") == target


def test_one_line_keeps_the_first_line_of_a_long_message() -> None:
    error = RuntimeError("\n  [EMPTY_SCHEMA] no columns\n\tat org.apache.spark.Foo\n" + "x" * 9000)
    assert one_line(error) == "RuntimeError: [EMPTY_SCHEMA] no columns"
    assert len(one_line(ValueError("y" * 1000))) == 400
    assert one_line(KeyError()) == "KeyError"


RESULTS = [
    TableResult("a.kept", 3, "/out/tables/a.kept", statement_dml=2),
    TableResult("a.gone", 0, None),
    TableResult("a.bad", 0, None, "its columns are unknown", statement_dml=1),
    TableResult("a.dates", 2, "/out/tables/a.dates", nulls={"d": {"unrepresentable": 1}}),
]


def test_summary_and_table_lines() -> None:
    assert summary_line(RESULTS) == (
        "[pipeline] 2 tables written, 1 dropped, 1 SKIPPED (a.bad),"
        " 3 statement-format DML not applied, 1 values made NULL; see report.json"
    )
    assert summary_line(RESULTS[1:2]) == "[pipeline] 0 tables written, 1 dropped"
    assert [table_line(r) for r in RESULTS] == [
        "a.kept\t3 rows (2 statement-format DML not applied)",
        "a.gone\tdropped",
        "a.bad\tskipped: its columns are unknown (1 statement-format DML not applied)",
        "a.dates\t2 rows (1 unrepresentable d made NULL)",
    ]
    tables = report_json(4, RESULTS)["tables"]
    assert [t["status"] for t in tables.values()] == ["written", "dropped", "skipped", "written"]
