"""Must-show 4, batch half: every built-in scenario, written as binlog files and read by the
batch data source, materialises to the tables its oracle says (initial rows fed as snapshot
``r`` events); and the same with the column names coming from a schema catalogue when the
files carry no metadata (NO_LOG)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from fakemaster.cli import main
from scenarios import Oracle
from scenarios.changes import Insert
from scenarios.compiler import binlog_files, to_store
from scenarios.history import Scenario, Settings
from scenarios.library import LIBRARY, build
from scenarios.oracle import canonical_rows, cell_text, client_row
from scenarios.schema import NO_DEFAULT
from tests.support.spark_tables import plain_row as tables_plain
from tests.support.spark_tables import read_tables


def write_files(scenario: Scenario, directory: Path) -> list[str]:
    directory.mkdir(parents=True)
    paths = []
    for name, data in binlog_files(to_store(scenario)).items():
        path = directory / name
        path.write_bytes(data)
        paths.append(str(path))
    return paths


def catalogue_of(scenario: Scenario) -> dict[str, dict[str, Any]]:
    """What a user knows of the scenario's schema, as a schema catalogue."""
    from fakemaster.spark.materialiser import spark_type_of

    out: dict[str, dict[str, Any]] = {}
    for name, table in scenario.tables.items():
        out[name] = {
            "columns": list(table.column_names),
            "primary_key": [table.columns[p].name for p in table.key],
            "charsets": {c.name: c.charset for c in table.columns if c.charset},
            "unsigned": [c.name for c in table.columns if c.unsigned],
            "members": {c.name: list(c.members) for c in table.columns if c.members},
            "types": {c.name: spark_type_of(c) for c in table.columns},
            "defaults": {
                c.name: cell_text(c, c.default)
                for c in table.columns
                if c.default is not NO_DEFAULT
            },
        }
    return out


def run_batch(
    spark: Any, scenario: Scenario, tmp: Path, options: dict[str, str] | None = None
) -> dict[str, list[dict[str, Any]]]:
    from fakemaster.spark import FORMAT_NAME
    from fakemaster.spark.materialiser import Materialiser

    files = write_files(scenario, tmp / "binlogs")
    reader = spark.read.format(FORMAT_NAME)
    if any(scenario.initial.rows.values()):
        Oracle(scenario).export(tmp / "snapshot", after=0)
        reader = reader.option("snapshot", str(tmp / "snapshot"))
    for key, value in (options or {}).items():
        reader = reader.option(key, value)
    events = reader.load(files)
    assert events.rdd.getNumPartitions() >= len(files)
    # Column defaults are not in any binlog: they fill partial (MINIMAL) insert images.
    # As `pipeline batch` does it: the data source's tasks write the change log.
    Materialiser(spark, str(tmp / "out"), catalogue_of(scenario)).apply_files(reader, files, 0)
    return read_tables(tmp / "out")


@pytest.mark.parametrize("name", sorted(LIBRARY))
def test_every_builtin_scenario_materialises_to_its_oracle(
    spark: Any, tmp_path: Path, name: str
) -> None:
    scenario = build(name)
    # A table no TABLE_MAP with FULL metadata ever describes has no column names in the files
    # (only @1, @2...; nor signedness with NO_LOG): the user gives a schema catalogue (a limit,
    # docs/spark.md). A table that had FULL metadata first keeps its names after a change of
    # binlog_row_metadata (settings_changes): no catalogue there.
    options = None
    if scenario.settings.binlog_row_metadata != "FULL":
        options = {"catalog": json.dumps(catalogue_of(scenario))}
    tables = run_batch(spark, scenario, tmp_path, options)
    Oracle(scenario).assert_matches(tables)
    # `pipeline compare` agrees, with no code: the output against the scenario's oracle.
    assert main(["pipeline", "compare", str(tmp_path / "out"), name]) == 0
    # The run read something: the last transaction's GTID is the position reached.
    position = json.loads((tmp_path / "out" / "position.json").read_text())
    assert position["events"] > 0


def test_no_log_metadata_with_a_schema_catalogue(spark: Any, tmp_path: Path) -> None:
    scenario = build("primary_key_updates")
    # The history starts with it (its settings before, during and after every step).
    changed = dataclasses.replace(scenario.initial_settings, binlog_row_metadata="NO_LOG")
    scenario.settings = scenario.initial_settings = scenario.configured_settings = changed
    catalogue = catalogue_of(scenario)
    tables = run_batch(spark, scenario, tmp_path, {"catalog": json.dumps(catalogue)})
    Oracle(scenario).assert_matches(tables)


def test_one_table_with_typed_images(spark: Any, tmp_path: Path) -> None:
    from fakemaster.spark import FORMAT_NAME

    scenario = build("every_type")
    files = write_files(scenario, tmp_path / "binlogs")
    events = spark.read.format(FORMAT_NAME).option("table", "types.every").load(files)
    fields = {f.name: f.dataType.simpleString() for f in events.schema["after"].dataType.fields}
    assert fields["biu"] == "decimal(20,0)" and fields["ts6"] == "timestamp"
    assert fields["dt6"] == "timestamp_ntz" and fields["bl"] == "binary"
    # Through Arrow: collect() would give TIMESTAMPs as naive local times.
    ordered = events.where("op = 'c'").orderBy("seq").select("after").toArrow()
    rows = [r["after"] for r in ordered.to_pylist()]
    table = scenario.tables["types.every"]
    inserted = [
        row
        for t in scenario.transactions
        for c in t.changes
        if isinstance(c, Insert)
        for row in c.rows
    ]
    expected = canonical_rows(table, inserted)
    got = canonical_rows(table, [client_row(table, tables_plain(r)) for r in rows])
    assert got == expected


def test_rows_from_before_the_binlog_without_a_snapshot(spark: Any, tmp_path: Path) -> None:
    """Rows the binlog never inserted (no snapshot given) appear once updated, with their
    full after image; the others are unknown, and absent."""
    from fakemaster.spark import FORMAT_NAME, materialise

    scenario = Scenario(Settings(binlog_row_metadata="FULL"))
    scenario.create_table(
        "CREATE TABLE s.t (id INT PRIMARY KEY, v VARCHAR(10))",
        [{"id": 1, "v": "one"}, {"id": 2, "v": "two"}, {"id": 3, "v": "three"}],
    )
    scenario.update("s.t", {"id": 2}, {"v": "TWO"})
    scenario.update("s.t", {"id": 3}, {"v": "THREE"})
    scenario.delete("s.t", {"id": 3})
    files = write_files(scenario, tmp_path / "binlogs")
    materialise(spark, spark.read.format(FORMAT_NAME).load(files), str(tmp_path / "out"))
    assert read_tables(tmp_path / "out")["s.t"] == [{"id": 2, "v": "TWO"}]


def test_columns_named_as_the_materialisers_own_work_columns(spark: Any, tmp_path: Path) -> None:
    """A table may name its columns anything, the names the materialiser gives its work columns
    while it types a table included (``image``, ``__fm_text_0``, ...): its rows and NULL counts
    are the oracle's, one value unrepresentable counted in the column that holds it."""
    scenario = Scenario(Settings(binlog_row_metadata="FULL"))
    scenario.create_table(
        "CREATE TABLE w.t (image INT PRIMARY KEY, __fm_text_0 VARCHAR(10),"
        " __fm_value_1 DATE, __fm_absent_0 INT, __fm_text_1 DATE)"
    )
    scenario.insert("w.t", {"image": 1, "__fm_text_0": "a", "__fm_value_1": "2024-02-29"})
    scenario.insert(
        "w.t", {"image": 2, "__fm_text_0": None, "__fm_absent_0": 7, "__fm_text_1": "0000-00-00"}
    )
    scenario.update("w.t", {"image": 1}, {"__fm_absent_0": 3})
    tables = run_batch(spark, scenario, tmp_path)
    out = tmp_path / "out"
    rows = sorted(tables["w.t"], key=lambda r: r["image"])
    assert [r["image"] for r in rows] == [1, 2]
    assert rows[0]["__fm_text_0"] == "a" and rows[0]["__fm_absent_0"] == 3
    assert str(rows[0]["__fm_value_1"]) == "2024-02-29"
    assert rows[1]["__fm_text_0"] is None and rows[1]["__fm_absent_0"] == 7
    assert rows[1]["__fm_text_1"] is None  # a zero date Spark's DATE cannot hold
    report = json.loads((out / "report.json").read_text())["tables"]["w.t"]
    assert report["nulls"] == {"__fm_text_1": {"unrepresentable": 1}}


def test_no_log_metadata_without_a_catalogue_names_columns_by_position(
    spark: Any, tmp_path: Path
) -> None:
    """The limit the catalogue lifts: with NO_LOG metadata throughout, the files name no column
    (``@1``... as mariadb-binlog -v does) and give no key."""
    scenario = build("no_log_metadata")
    tables = run_batch(spark, scenario, tmp_path)
    assert list(tables) == ["nolog.t"]
    assert all(sorted(row) == ["@1", "@2", "@3", "@4"] for row in tables["nolog.t"])
    # No key: a multiset of images; the update's before image is deleted, the after inserted.
    assert len(tables["nolog.t"]) == 1


def test_rename_table_moves_rows_and_leaves_no_old_dataset(spark: Any, tmp_path: Path) -> None:
    scenario = Scenario(Settings(binlog_row_metadata="FULL"))
    scenario.create_table("CREATE TABLE r.a (k INT PRIMARY KEY, v INT)")
    scenario.insert("r.a", {"k": 1, "v": 1})
    scenario.rename_table("r.a", "r.b")
    scenario.update("r.b", {"k": 1}, {"v": 2})
    scenario.create_table("CREATE TABLE r.a (k INT PRIMARY KEY, v INT)")
    scenario.insert("r.a", {"k": 5, "v": 5})
    tables = run_batch(spark, scenario, tmp_path)
    Oracle(scenario).assert_matches(tables)
    assert tables["r.b"] == [{"k": 1, "v": 2}] and tables["r.a"] == [{"k": 5, "v": 5}]


@pytest.mark.parametrize("per_partition", [3, 100])
def test_files_per_partition_reads_the_same_events(
    spark: Any, tmp_path: Path, per_partition: int
) -> None:
    """``filesPerPartition`` groups the files into fewer partitions (tasks): the same change
    events as one file per partition, and the same tables materialised (the oracle's)."""
    from fakemaster.spark import FORMAT_NAME

    scenario = build("rotation_storm")
    files = write_files(scenario, tmp_path / "binlogs")
    assert len(files) > per_partition or per_partition == 100
    default = spark.read.format(FORMAT_NAME).load(files)
    grouped = spark.read.format(FORMAT_NAME).option("filesPerPartition", per_partition).load(files)
    assert default.rdd.getNumPartitions() == len(files)
    assert grouped.rdd.getNumPartitions() == -(-len(files) // per_partition)
    expected = sorted(map(str, default.collect()))
    assert sorted(map(str, grouped.collect())) == expected
    assert len(expected) > 0


def test_files_per_partition_must_be_positive(spark: Any, tmp_path: Path) -> None:
    from fakemaster.spark import FORMAT_NAME

    files = write_files(build("rotation_storm"), tmp_path / "binlogs")
    with pytest.raises(Exception, match="filesPerPartition"):
        spark.read.format(FORMAT_NAME).option("filesPerPartition", 0).load(files).count()


def test_character_columns_in_every_set_materialise_to_their_text(
    spark: Any, tmp_path: Path
) -> None:
    from tests.scenarios.test_charsets import charset_table

    # utf8mb3, ucs2, utf16, utf16le, utf32, cp1251, gbk and sjis, the history checked against
    # a real server in tests/scenarios/test_charsets.py.
    scenario = charset_table(Settings(binlog_row_metadata="FULL"))
    Oracle(scenario).assert_matches(run_batch(spark, scenario, tmp_path))


@pytest.mark.parametrize("row_image", ["FULL", "MINIMAL", "NOBLOB"])
def test_a_keyed_tables_updates_merge_into_its_rows(
    spark: Any, tmp_path: Path, row_image: str
) -> None:
    """A shop's orders updated a column or two at a time, keys unchanged: with MINIMAL and
    NOBLOB images an update's after image lacks the columns it did not assign, which the
    row keeps from its insert (a merge of the images); with FULL ones the last image is the
    row. Both against the oracle."""
    scenario = Scenario(Settings(binlog_row_image=row_image, binlog_row_metadata="FULL"))
    scenario.create_table(
        "CREATE TABLE shop.orders (id INT PRIMARY KEY, customer VARCHAR(40) NOT NULL,"
        " status VARCHAR(16) NOT NULL DEFAULT 'new', total DECIMAL(10,2), note TEXT)"
    )
    for n in range(1, 4):
        scenario.insert(
            "shop.orders",
            {"id": n, "customer": f"c{n}", "status": "new", "total": n * 10, "note": f"n{n}"},
        )
    with scenario.transaction() as tx:
        tx.update("shop.orders", {"id": 1}, {"status": "paid"})
        tx.update("shop.orders", {"id": 2}, {"status": "paid"})
    scenario.update("shop.orders", {"id": 3}, {"note": "gift wrap"})
    scenario.update("shop.orders", {"id": 1}, {"total": 12})
    scenario.delete("shop.orders", {"id": 2})
    tables = run_batch(spark, scenario, tmp_path, {"catalog": json.dumps(catalogue_of(scenario))})
    Oracle(scenario).assert_matches(tables)
    assert len(tables["shop.orders"]) == 2
