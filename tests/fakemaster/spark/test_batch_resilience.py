"""Issue #20 item 3 on binlogs a real MariaDB 10.11 wrote: ``pipeline batch`` never loses a run
to one table. A table it cannot write is named with what it could not do (from the binlog or
from the catalogue) and every other table is written; statement-format DML is counted per
table; every value made NULL is counted; a bulk load's statement text is carried once."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import date, datetime
from pathlib import Path
from typing import Any

import pytest

from fakemaster.cli import main
from tests.peers.fixtures import require_mariadb
from tests.peers.mariadb import MariaDBServer
from tests.support.pipeline_captures import CAPTURE_OPTIONS, Capture, capture_workload
from tests.support.spark_tables import read_tables

pytestmark = pytest.mark.mariadb

# A statement of about 1.5 MB: before, its text was repeated on each of its 20,000 rows and
# pyarrow's take overflowed ("Take operation overflowed binary array capacity").
BULK_ROWS = 20_000


@pytest.fixture(scope="module")
def capture() -> Iterator[Capture]:
    require_mariadb()
    server = MariaDBServer(CAPTURE_OPTIONS)
    try:
        yield capture_workload(server.start(), BULK_ROWS)
    finally:
        server.close()


def _bulk_rows(batches: Any) -> list[dict[str, Any]]:
    return [
        {"row": r["source"]["row"], "pos": r["source"]["pos"], "query": r["source"]["query"]}
        for batch in batches
        for r in batch.to_pylist()
        if r["table"] == "bulk" and r["op"] == "c"
    ]


def test_a_bulk_loads_statement_text_is_carried_once(capture: Capture) -> None:
    from fakemaster.spark.changes import read_changes
    from fakemaster.spark.changes_columnar import read_changes_fast

    (first, *_) = capture.files
    fast = _bulk_rows(read_changes_fast(str(first), first.name, 1))
    reference = _bulk_rows(read_changes(str(first), first.name, 1))
    assert len(fast) == BULK_ROWS
    texts = [r for r in fast if r["query"] is not None]
    # Once, on the statement's first change event (the first row of its first rows event).
    assert [t["query"] for t in texts] == [capture.bulk]
    assert (texts[0]["pos"], texts[0]["row"]) == min((r["pos"], r["row"]) for r in fast)
    assert fast == reference


def _report_line(out: str, table: str) -> str:
    (line,) = [line for line in out.splitlines() if line.startswith(f"{table}\t")]
    return line


def test_batch_writes_every_table_it_can_and_names_the_others(
    spark: Any, capture: Capture, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from scenarios.create_table import parse_create_table, parse_ddl
    from scenarios.ddl import apply_ddl

    del spark  # the session the command reuses
    broken = "CREATE TABLE shop.old (id INT PRIMARY KEY, v VARCHAR(10)"  # no closing paren
    catalogue = tmp_path / "catalogue.json"
    catalogue.write_text(json.dumps({"shop.old": {"create": broken}}))
    out = tmp_path / "out"
    status = main(
        ["pipeline", "batch", *map(str, capture.files), "--out", str(out)]
        + ["--catalog", str(catalogue)]
    )
    captured = capsys.readouterr()
    assert status == 3, captured.err
    first = capture.files[0].name
    report = json.loads((out / "report.json").read_text())["tables"]

    # The CREATE ... SELECT (statement format) has no column list: named, with where it is.
    copy = _report_line(captured.out, "shop.copy")
    assert "skipped: its columns are unknown" in copy
    assert f"its CREATE TABLE at {first}:" in copy and "SELECT is not modelled" in copy
    assert report["shop.copy"]["status"] == "skipped"
    assert report["shop.copy"]["statement_dml"] == 1
    # A table from before the files: the catalogue's create is named as the catalogue's.
    old = _report_line(captured.out, "shop.old")
    assert "the catalogue's (--catalog) create of shop.old could not be parsed" in old
    assert report["shop.old"]["status"] == "skipped"
    assert report["shop.old"]["statement_dml"] == 1
    # Statement-format DML counted, not fatal: the table of the two statements is written.
    assert report["shop.stmt"]["statement_dml"] == 2
    assert "2 statement-format DML not applied" in _report_line(captured.out, "shop.stmt")
    # Each table's line on stderr as it is written, then the summary.
    assert f"[pipeline] table {len(report)}/{len(report)}: " in captured.err
    summary = captured.err.strip().splitlines()[-1]
    assert "SKIPPED (shop.copy, shop.old)" in summary
    assert "4 statement-format DML not applied" in summary

    tables = read_tables(out)
    assert sorted(tables["shop.ok"], key=repr) == sorted(
        ({"id": i, "v": v} for i, v in capture.tables["shop.ok"]), key=repr
    )
    assert len(tables["shop.bulk"]) == BULK_ROWS
    assert sorted((r["id"], r["name"], r["note"]) for r in tables["shop.bulk"]) == sorted(
        capture.tables["shop.bulk"]
    )
    # Zero dates become NULL, each counted (the server's other values are kept).
    assert sorted(tables["shop.dates"], key=lambda r: r["id"]) == [
        {"id": 1, "d": None, "t": datetime(2020, 1, 2, 3, 4, 5)},
        {"id": 2, "d": date(2021, 2, 3), "t": None},
        {"id": 3, "d": None, "t": None},
    ]
    assert report["shop.dates"]["nulls"] == {
        "d": {"unrepresentable": 1},
        "t": {"unrepresentable": 1},
    }
    # The ALTER's column: its default in the rows before it when the DDL applier models the
    # ALTER (checked here on its own), else NULL there and counted as absent.
    later = sorted(tables["shop.later"], key=lambda r: r["id"])
    assert [r["id"] for r in later] == [1, 2, 3]
    try:
        known = {
            "shop.later": parse_create_table("CREATE TABLE later (id INT PRIMARY KEY)", "shop")
        }
        apply_ddl(parse_ddl(capture.alter, "shop"), known, {"shop.later": []})
        modelled = True
    except ValueError:
        modelled = False
    if modelled:
        assert [r["c"] for r in later] == ["x", "x", "y"]
        assert report["shop.later"]["nulls"] == {}
    else:
        assert [r["c"] for r in later] == [None, None, "y"]
        assert report["shop.later"]["nulls"] == {"c": {"absent": 2}}
        assert f"its ALTER TABLE at {first}:" in " ".join(report["shop.later"]["notes"])
        assert "2 absent c made NULL" in _report_line(captured.out, "shop.later")
