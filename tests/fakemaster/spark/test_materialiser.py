"""The materialiser's pure-Python helpers, without Spark (its plans are tested through Spark in
test_batch_scenarios.py and the stream tests): the Spark type of each column type as
docs/spark.md's "Types" paragraph gives it, RENAME TABLE's pairs, local paths, and the keyed
rules folded on the driver; with Spark, a keyed table's newest images against that fold, and
the shape of the plans that write the change log and the state."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fakemaster.spark.materialiser import (
    Materialiser,
    _add_problem,
    _fold,
    _is_local,
    _local,
    _unnamed,
    rename_pairs,
    spark_type_of,
    table_dir_name,
)
from scenarios.history import Scenario
from tests.budget import examples

# (column definition, Spark type): docs/spark.md, "Types".
TYPES = [
    ("TINYINT", "tinyint"),
    ("TINYINT UNSIGNED", "smallint"),
    ("SMALLINT UNSIGNED", "int"),
    ("MEDIUMINT", "int"),
    ("INT", "int"),
    ("INT UNSIGNED", "bigint"),
    ("BIGINT", "bigint"),
    ("BIGINT UNSIGNED", "decimal(20,0)"),
    ("DECIMAL(38,4)", "decimal(38,4)"),
    ("DECIMAL(39,4)", "string"),
    ("DECIMAL", "decimal(10,0)"),
    ("DECIMAL(12)", "decimal(12,0)"),
    ("BIT", "bigint"),
    ("BIT(63)", "bigint"),
    ("BIT(64)", "decimal(20,0)"),
    ("FLOAT", "float"),
    ("DOUBLE", "double"),
    ("YEAR", "int"),
    ("DATE", "date"),
    ("TIME", "string"),
    ("DATETIME", "timestamp_ntz"),
    ("TIMESTAMP NULL", "timestamp"),
    ("VARCHAR(5)", "string"),
    ("TEXT", "string"),
    ("VARBINARY(5)", "binary"),
    ("BLOB", "binary"),
    ("ENUM('a','b')", "string"),
    ("SET('a','b')", "string"),
]


def test_spark_types_as_documented() -> None:
    columns = ",\n".join(f"c{i} {sql}" for i, (sql, _) in enumerate(TYPES))
    table = Scenario().create_table(f"CREATE TABLE db.t (id INT PRIMARY KEY,\n{columns})")
    got = [spark_type_of(column) for column in table.columns[1:]]
    assert got == [spark for _, spark in TYPES]
    # A TABLE_MAP without metadata gives an ENUM/SET no members: its numbers, as bigint.
    enum, set_ = table.columns[-2], table.columns[-1]
    assert spark_type_of(replace(enum, members=())) == "bigint"
    assert spark_type_of(replace(set_, members=())) == "bigint"


def test_rename_pairs() -> None:
    assert rename_pairs("RENAME TABLE a TO b", "db") == [(("db", "a"), ("db", "b"))]
    assert rename_pairs("/* x */ rename tables `x`.a TO b, c to y.`d`", "db") == [
        (("x", "a"), ("db", "b")),
        (("db", "c"), ("y", "d")),
    ]
    assert rename_pairs("ALTER TABLE a RENAME TO b", "db") == []


@pytest.mark.parametrize(
    ("path", "local", "as_local"),
    [
        ("/data/out", True, "/data/out"),
        ("out", True, "out"),
        ("file:///data/out", True, "/data/out"),
        ("hdfs://nn/out", False, "hdfs://nn/out"),
    ],
)
def test_local_paths(path: str, local: bool, as_local: str) -> None:
    assert _is_local(path) is local
    assert _local(path) == as_local


def test_table_names_and_problems() -> None:
    assert table_dir_name("db", "t") == "db.t"
    assert _unnamed(["@1", "@2", "@3"]) and _unnamed([])
    assert not _unnamed(["@1", "b"]) and not _unnamed(["@2"]) and not _unnamed(["@0"])
    problems: dict[tuple[str, str], str] = {}
    _add_problem(problems, ("db", "t"), "one")
    _add_problem(problems, ("db", "t"), "two")
    _add_problem(problems, ("db", "u"), "three")
    assert problems == {("db", "t"): "one; two", ("db", "u"): "three"}


def row(op: str, before: dict[str, Any] | None, after: dict[str, Any] | None) -> dict[str, Any]:
    return {"op": op, "before": before, "after": after}


def test_fold_applies_the_keyed_rules_in_order() -> None:
    rows = [
        row("r", None, {"id": "1", "a": "x", "b": "y"}),  # snapshot read
        row("c", None, {"id": "2", "a": "p", "b": "q"}),
        row("c", None, {"id": "5", "a": "gone", "b": None}),
        # A partial image that changes the key: the columns it lacks are kept.
        row("u", {"id": "1"}, {"id": "3", "a": "x2"}),
        row("u", {"id": "2", "a": "p"}, {"b": "q2"}),  # the key left out of the after image
        row("d", {"id": "5"}, None),
        row("d", {"id": "9"}, None),  # deleting a row never seen changes nothing
        # An update of a row never seen (read before the snapshot): its before image is the row.
        row("u", {"id": "7", "a": "s"}, {"b": "t"}),
    ]
    assert _fold(rows, ["id"]) == [
        {"id": "3", "a": "x2", "b": "y"},
        {"id": "2", "a": "p", "b": "q2"},
        {"id": "7", "a": "s", "b": "t"},
    ]


def _encodings(root: Any) -> dict[str, set[str]]:
    """Per column path of the Parquet files under ``root``: the encodings its chunks use."""
    import pyarrow.parquet as pq  # type: ignore[import-untyped]

    found: dict[str, set[str]] = {}
    for path in root.rglob("*.parquet"):
        meta = pq.ParquetFile(path).metadata
        for group in range(meta.num_row_groups):
            for index in range(meta.num_columns):
                chunk = meta.row_group(group).column(index)
                found.setdefault(chunk.path_in_schema, set()).update(chunk.encodings)
    return found


def test_image_values_are_written_without_a_dictionary_and_their_keys_with(
    spark: Any, tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Also: the batch's first look reads the flags the change log stores beside each event,
    not its images (the Parquet scan of the change log in its physical plan)."""
    from fakemaster.spark import FORMAT_NAME, batch_overview, materialise
    from scenarios.library import build
    from tests.fakemaster.spark.test_batch_scenarios import write_files

    paths = write_files(build("primary_key_updates"), tmp_path / "binlogs")
    out = tmp_path / "out"
    plans: list[str] = []
    look_query = batch_overview.look_query

    def seen(*args: Any, **kwargs: Any) -> Any:
        query = look_query(*args, **kwargs)
        plans.append(query._jdf.queryExecution().executedPlan().toString())
        return query

    monkeypatch.setattr(batch_overview, "look_query", seen)
    materialise(spark, spark.read.format(FORMAT_NAME).load(paths), str(out))
    [plan] = plans
    change_log = [scan for scan in _scans(plan) if "batch_id" in scan]  # its partition column
    assert change_log, plan
    for scan in change_log:
        assert set(batch_overview.FLAGS) <= scan and not {"before", "after"} & scan, scan
    dictionary = {"PLAIN_DICTIONARY", "RLE_DICTIONARY"}
    changes, state = _encodings(out / "changes"), _encodings(out / "state")
    for found, image in ((changes, "before"), (changes, "after"), (state, "image")):
        assert found[f"{image}.key_value.value"].isdisjoint(dictionary), (image, found)
        assert found[f"{image}.key_value.key"] & dictionary, (image, found)
    assert changes["database"] & dictionary  # every other column as Spark writes it


def _scans(plan: str) -> list[set[str]]:
    """The columns each Parquet scan of a physical plan reads (its output attributes)."""
    import re

    return [
        {re.sub(r"#\d+L?$", "", name) for name in names.split(",")}
        for names in re.findall(r"FileScan parquet \[([^\]]*)\]", plan)
    ]


# A keyed history with full images: inserts, updates that keep or change the key (onto a key
# in use or not), deletes, of rows seen or never seen; few keys, so that they repeat. No NULL
# key: a primary key's columns are NOT NULL (and _fold tells a NULL key from an absent one,
# which the images' maps do not).
_KEYS = st.sampled_from(["1", "2", "3"])
_STEPS = st.lists(
    st.tuples(st.sampled_from(["c", "u", "d", "r"]), _KEYS, _KEYS, st.integers(0, 9)),
    max_size=12,
)


def _history_rows(histories: list[list[tuple[str, str, str, int]]]) -> list[Any]:
    """Rows of change events for ``histories`` one after the other: each history's keys are
    its own (``h:key``); values say which history and step wrote them."""

    def image(h: int, key: str, n: int) -> dict[str, str | None]:
        return {"id": f"{h}:{key}", "k2": "x", "v": f"{h}.{n}"}

    rows: list[Any] = []
    for h, steps in enumerate(histories):
        for n, (op, old, new, value) in enumerate(steps):
            before = image(h, old, value) if op in ("u", "d") else None
            after = image(h, new, n) if op != "d" else None
            rows.append((op, before, after, (0, 4 + len(rows), n, 0)))
    return rows


def _as_set(images: list[dict[str, str | None]]) -> list[str]:
    return sorted(repr(sorted(image.items())) for image in images)


@settings(max_examples=examples(0.15), deadline=None)
@given(st.lists(_STEPS, min_size=1, max_size=8))
def test_a_keyed_tables_newest_images_are_the_keyed_rules_folded_in_order(
    spark: Any, histories: list[list[tuple[str, str, str, int]]]
) -> None:
    """With full images a key's row is its newest image (``merge_images`` False: a window over
    each key's steps), equal to the rules folded on the driver (``_fold``), for a key of one
    column (its text the key) and of two (a JSON array of them). Many histories in one frame,
    each with keys of its own."""
    schema = (
        "op string, before map<string,string>, after map<string,string>,"
        " seq struct<file_index:bigint,pos:bigint,event:int,row:int>"
    )
    rows = _history_rows(histories)
    events = spark.createDataFrame(rows, schema)
    for key in (["id"], ["id", "k2"]):
        expected = _fold(
            [{"op": op, "before": before, "after": after} for op, before, after, _ in rows], key
        )
        images = Materialiser._keyed(events, key, merge_images=False).collect()
        found = [dict(row["image"]) for row in images]
        assert _as_set(found) == _as_set(expected), key


def test_a_keyed_table_with_full_images_sorts_its_steps_once(
    spark: Any, tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The state's keyed images, as the batch writes them: each key's newest step by one sort
    after the shuffle; no sort-based aggregation (which sorted every image before the shuffle
    too) and no group limit before the shuffle (Materialiser.apply turns it off)."""
    from fakemaster.spark import FORMAT_NAME, materialise
    from scenarios.library import build
    from tests.fakemaster.spark.test_batch_scenarios import write_files

    paths = write_files(build("primary_key_updates"), tmp_path / "binlogs")
    made: list[Any] = []
    keyed = Materialiser._keyed

    def seen(events: Any, key: Any, merge_images: bool = True) -> Any:
        made.append(keyed(events, key, merge_images))
        return made[-1]

    monkeypatch.setattr(Materialiser, "_keyed", staticmethod(seen))
    materialise(spark, spark.read.format(FORMAT_NAME).load(paths), str(tmp_path / "out"))
    assert made
    for images in made:
        plan = images._jdf.queryExecution().executedPlan().toString()
        assert "SortAggregate" not in plan and "WindowGroupLimit" not in plan, plan
        assert plan.count("Sort [") == 1, plan


def test_tables_written_at_once_are_the_tables_written_one_by_one(
    spark: Any, tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The 61 tables of many_tables written by several threads' jobs (materialiser.TABLE_JOBS)
    are those written one at a time, reported in the same order, progress counted 1..n."""
    from fakemaster.spark import FORMAT_NAME
    from fakemaster.spark import materialiser as module
    from scenarios import Oracle
    from scenarios.library import build
    from tests.fakemaster.spark.test_batch_scenarios import catalogue_of, write_files
    from tests.support.spark_tables import read_tables

    scenario = build("many_tables")
    files = write_files(scenario, tmp_path / "binlogs")
    found = {}
    several = module.TABLE_JOBS
    assert several > 1
    for jobs in (1, several):
        monkeypatch.setattr(module, "TABLE_JOBS", jobs)
        progress: list[tuple[str, int, int]] = []
        out = tmp_path / f"out-{jobs}"
        materialiser = module.Materialiser(
            spark,
            str(out),
            catalogue_of(scenario),
            on_table=lambda result, n, total, seen=progress: seen.append((result.name, n, total)),
        )
        results = materialiser.apply_files(spark.read.format(FORMAT_NAME), files, 0)
        tables = read_tables(out)
        Oracle(scenario).assert_matches(tables)
        assert [(r.name, n + 1, len(results)) for n, r in enumerate(results)] == progress
        found[jobs] = ([replace(r, path=None) for r in results], tables)
    assert len(found[1][0]) == 61
    assert found[1] == found[several]
