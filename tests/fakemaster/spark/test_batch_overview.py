"""The first look at a batch (fakemaster.spark.batch_overview.first_look): its one query's
groups give what the per-purpose queries give (the XA/RENAME marks, the tables' shapes and
the overview the materialiser reads), on the change events of the built-in scenarios that
carry each kind of event, with and without a state before the batch, and on hand-made
events at the edges (a statement without text, an event read twice, events of no table)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from scenarios.compiler import binlog_files, to_store
from scenarios.library import build


def has_mark(kind: str) -> Any:
    return lambda look: any(kind in (m["op"], m["ddl_kind"]) for m in look.marks)


def summarised(flag: str) -> Any:
    return lambda look: any(s[flag] for s in look.overview.summary)


def unnamed_shape(look: Any) -> bool:
    return any(s["columns"] and s["columns"][0] == "@1" for s in look.shapes)


# Each scenario with what it brings to the comparison (asserted, so that it stays so); the
# statement-format DML no scenario logs is in the hand-made test below.
SCENARIOS = {
    "xa": has_mark("xa"),
    "ddl_mid_stream": has_mark("RENAME_TABLE"),
    "noblob_image": summarised("carries"),
    "minimal_image": summarised("partial"),
    "settings_changes": unnamed_shape,
    "many_tables": lambda look: len(look.overview.summary) > 5,
}


def events_of(spark: Any, name: str, directory: Path) -> Any:
    from fakemaster.spark import FORMAT_NAME

    directory.mkdir()
    paths = []
    for file_name, data in binlog_files(to_store(build(name))).items():
        (directory / file_name).write_bytes(data)
        paths.append(str(directory / file_name))
    return spark.read.format(FORMAT_NAME).load(paths)


def plain(value: Any) -> Any:
    """Rows as nested dicts and tuples: Row equality alone ignores the field names."""
    if hasattr(value, "asDict"):
        return {k: plain(v) for k, v in value.asDict().items()}
    if isinstance(value, list | tuple):
        return tuple(plain(v) for v in value)
    return value


def by_seq(rows: list[Any]) -> list[Any]:
    return sorted((plain(r) for r in rows), key=lambda r: tuple(r["seq"].values()))


def reference(probe: Any, base: Any) -> tuple[list[Any], list[Any], Any]:
    """The marks, shapes and overview as the per-purpose queries read them."""
    from pyspark.sql import functions as F

    from fakemaster.spark.batch_overview import carries_columns, overview
    from fakemaster.spark.materialiser import _shapes

    marks = (
        probe.where((F.col("op") == "xa") | (F.col("ddl_kind") == "RENAME_TABLE"))
        .select("seq", "op", "ddl", "ddl_kind", "database", F.col("source.gtid").alias("gtid"))
        .collect()
    )
    return marks, _shapes(probe).collect(), overview(probe, carries_columns(), base, probe)


def assert_same_look(probe: Any, base: Any) -> Any:
    """The first look as the materialiser takes it (the flags stored beside the events)
    against the per-purpose queries (the flags computed from the images)."""
    from fakemaster.spark.batch_overview import carries_columns, first_look, with_flags

    look = first_look(with_flags(probe), carries_columns(), base)
    marks, shapes, seen = reference(probe, base)
    assert by_seq(look.marks) == by_seq(marks)
    assert sorted(map(plain, look.shapes), key=repr) == sorted(map(plain, shapes), key=repr)
    got, want = look.overview, seen
    assert sorted(map(plain, got.summary), key=repr) == sorted(map(plain, want.summary), key=repr)
    assert [plain(e) for e in got.events] == [plain(e) for e in want.events]
    assert got.statements == want.statements
    assert plain(got.last) == plain(want.last)
    assert got.touched == want.touched
    return look


def middle_of(events: Any) -> dict[str, int]:
    seqs = sorted(tuple(r["seq"]) for r in events.select("seq").collect())
    file_index, pos, event, row = seqs[len(seqs) // 2]
    return {"file_index": file_index, "pos": pos, "event": event, "row": row}


@pytest.mark.parametrize("name", SCENARIOS)
def test_one_query_reads_what_the_per_purpose_queries_read(
    spark: Any, tmp_path: Path, name: str
) -> None:
    events = events_of(spark, name, tmp_path / "binlogs")
    look = assert_same_look(events, None)
    assert SCENARIOS[name](look), f"{name} no longer has what it is here for"
    if name in ("xa", "ddl_mid_stream"):
        # After a state whose last event is halfway through: the tables named since are
        # touched (a RENAME among them: every table is).
        assert_same_look(events, (0, {"after": middle_of(events)}))


def test_edges_a_statement_without_text_an_event_read_twice_no_table(spark: Any) -> None:
    from fakemaster.spark import FORMAT_NAME

    schema = spark.read.format(FORMAT_NAME).load([]).schema

    def event(op: str, seq: int, **fields: Any) -> dict[str, Any]:
        row: dict[str, Any] = {f.name: None for f in schema.fields}
        row.update(op=op, seq={"file_index": 0, "pos": seq, "event": 0, "row": 0})
        row["source"] = {"file": "mysql-bin.000001", "pos": seq, "gtid": f"0-1-{seq}"}
        row.update(fields)
        return row

    table = {"database": "d", "table": "t", "columns": ["k", "v"], "primary_key": ["k"]}
    rows = [
        event("ddl", 4, database="d", table="t", ddl="CREATE TABLE t (k INT)", ddl_kind="CREATE"),
        event("c", 10, after={"k": "1", "v": "a"}, column_types=["int", "varchar"], **table),
        event("u", 11, before={"k": "1"}, after={"k": "2"}, column_types=None, **table),
        event("ddl", 12, database="d", ddl=None, ddl_kind="STATEMENT"),
        event("ddl", 13, database="d", ddl="DELETE FROM t", ddl_kind="STATEMENT"),
        event("ddl", 13, database="d", ddl="DELETE FROM t", ddl_kind="STATEMENT"),
        event("ddl", 14, database=None, ddl="FLUSH PRIVILEGES", ddl_kind=None),
        event("ddl", 14, database=None, ddl="FLUSH PRIVILEGES", ddl_kind=None),
        event("xa", 15, ddl="'x1'", ddl_kind="XA_PREPARE"),
    ]
    probe = spark.createDataFrame(rows, schema)
    look = assert_same_look(probe, None)
    assert look.overview.statements == {(None, "d"): 1, ("DELETE FROM t", "d"): 2}
    assert len(look.overview.events) == 4  # the CREATE, the XA PREPARE, FLUSH read twice
    [summary] = look.overview.summary
    assert summary["carries"] and summary["partial"]
    assert_same_look(probe, (0, {"after": {"file_index": 0, "pos": 12, "event": 0, "row": 0}}))
    # Without stored flags (a frame that is not the change log): computed from the images.
    from fakemaster.spark.batch_overview import carries_columns, first_look

    bare = first_look(probe, carries_columns(), None).overview.summary
    assert [plain(s) for s in bare] == [plain(s) for s in look.overview.summary]


def expected_flags(event: Any) -> tuple[bool, bool]:
    """(carries, partial) of one event, from its images as docs/spark.md words them: an
    update whose after image lacks columns (or whose columns are unknown) is partial; it
    carries columns when, besides, its after image gives a key column a new value."""
    if event["op"] != "u":
        return False, False
    columns, after, before = event["columns"], event["after"], event["before"] or {}
    short = columns is not None and after is not None and len(after) < len(columns)
    changed = [k for k in event["primary_key"] or [] if after.get(k) not in (None, before.get(k))]
    return short and bool(changed), columns is None or short


def test_the_stored_flags_are_each_events_own(spark: Any, tmp_path: Path) -> None:
    from fakemaster.spark.batch_overview import FLAGS, with_flags

    seen: set[tuple[bool, bool]] = set()
    for name in ("minimal_image", "noblob_image"):
        events = with_flags(events_of(spark, name, tmp_path / name)).collect()
        got = [tuple(event[flag] for flag in FLAGS) for event in events]
        assert got == [expected_flags(event) for event in events], name
        seen |= {flags for flags, event in zip(got, events, strict=True) if event["op"] == "u"}
    # Each flag both ways among the updates: a flag stored constant fails above.
    for index in range(len(FLAGS)):
        assert {flags[index] for flags in seen} == {True, False}, (FLAGS[index], seen)


# A SaaS tenant's billing as an application writes it on a real MariaDB 10.11: MINIMAL row
# images (partial updates, a key change carrying columns), an XA transaction, a RENAME and
# statement-format DML, the binlog as the server wrote it (with FULL metadata: the key's name).
SAAS = [
    "SET GLOBAL binlog_row_metadata = 'FULL'",
    "CREATE DATABASE saas",
    "USE saas",
    "CREATE TABLE saas.tenants (id INT PRIMARY KEY, name VARCHAR(40) NOT NULL,"
    " plan VARCHAR(10) NOT NULL DEFAULT 'free', created_at DATETIME DEFAULT current_timestamp())",
    "CREATE TABLE saas.invoices (id INT AUTO_INCREMENT PRIMARY KEY, tenant_id INT NOT NULL,"
    " amount DECIMAL(10,2) NOT NULL, KEY (tenant_id))",
    "INSERT INTO saas.tenants (id, name) VALUES (1, 'acme'), (2, 'globex'), (3, 'initech')",
    "INSERT INTO saas.invoices (tenant_id, amount) VALUES (1, 99.00), (2, 0.50), (3, 12.00)",
    "SET SESSION binlog_row_image = 'MINIMAL'",
    "UPDATE saas.tenants SET plan = 'pro' WHERE id = 1",
    "UPDATE saas.tenants SET id = 20 WHERE id = 2",
    "XA START 'renewal-7'",
    "INSERT INTO saas.invoices (tenant_id, amount) VALUES (1, 99.00)",
    "XA END 'renewal-7'",
    "XA PREPARE 'renewal-7'",
    "XA COMMIT 'renewal-7'",
    "RENAME TABLE saas.invoices TO saas.bills",
    "SET SESSION binlog_format = 'STATEMENT'",
    "DELETE FROM saas.bills WHERE amount < 1",
    "SET SESSION binlog_format = 'ROW'",
    "INSERT INTO saas.bills (tenant_id, amount) VALUES (3, 5.00)",
    "FLUSH BINARY LOGS",
]


@pytest.mark.mariadb
def test_a_real_primarys_binlog_reads_the_same_either_way(spark: Any, mariadb_factory: Any) -> None:
    from fakemaster.spark import FORMAT_NAME

    server = mariadb_factory()
    server.execute(["RESET MASTER", *SAAS])
    server.wait_for_binlog_checkpoint()
    events = spark.read.format(FORMAT_NAME).load([str(p) for p in server.binlog_files()])
    look = assert_same_look(events, None)
    assert_same_look(events, (0, {"after": middle_of(events)}))
    for brings in (has_mark("xa"), has_mark("RENAME_TABLE"), summarised("carries")):
        assert brings(look)
    assert look.overview.statements == {("DELETE FROM saas.bills WHERE amount < 1", "saas"): 1}
    # The hashed groups merged, against the struct query, on the binlog the server wrote.
    assert_groups_merge_to_the_exact_ones(events, None)
    assert_groups_merge_to_the_exact_ones(events, (0, {"after": middle_of(events)}))


def comparable(group: Any) -> dict[str, Any]:
    """A first-look group as both queries give it: ``newest`` as whether there is one, the
    position's source as its file, offset and GTID (what the position is made of)."""
    found = {k: plain(v) for k, v in group.items()} if isinstance(group, dict) else plain(group)
    if "newest" in found:
        found["newest"] = found["newest"] is not None
    source = found.get("position_s")
    if source is not None:
        found["position_s"] = {name: source[name] for name in ("file", "pos", "gtid")}
    return found


def by_fields(group: dict[str, Any]) -> str:
    return repr(sorted(group.items()))


def assert_groups_merge_to_the_exact_ones(probe: Any, base: Any) -> bool:
    """The hashed query's groups (of each file, GTID server and source file too), merged,
    against the query that aggregates the ``seq`` structs as they are."""
    from fakemaster.spark.batch_overview import (
        carries_columns,
        exact_look_query,
        look_query,
        merge_fine_groups,
        with_flags,
    )

    probe = with_flags(probe)
    for position in (False, True):
        fine = look_query(probe, carries_columns(), base, position).collect()
        assert not any(group["unorderable"] for group in fine)
        exact = exact_look_query(probe, carries_columns(), base, position).collect()
        want = sorted(map(comparable, exact), key=by_fields)
        merges = len(fine) > len(exact)  # groups of several files, servers or source files
        for order in (fine, fine[::-1]):  # in whatever order Spark gives them
            got = sorted(map(comparable, merge_fine_groups(order, position)), key=by_fields)
            assert got == want, position
    return merges


@pytest.mark.parametrize(
    "name", ["xa", "ddl_mid_stream", "multi_domain", "restart_new_server_id", "rotation_storm"]
)
def test_the_hashed_groups_merge_to_the_exact_ones(spark: Any, tmp_path: Path, name: str) -> None:
    events = events_of(spark, name, tmp_path / "binlogs")
    # What the merge is tested across: files (a rotation storm), GTID domains, GTID servers.
    spans = {"rotation_storm": "seq.file_index", "multi_domain": "source.gtid"}
    if name in spans:
        column = spans[name]
        seen = {str(r[0]).split("-")[0] for r in events.select(column).collect()}
        assert len(seen) > 1, f"{name} no longer spans more than one {column}"
    merges = assert_groups_merge_to_the_exact_ones(events, None)
    assert merges or name in ("xa", "ddl_mid_stream"), f"{name} no longer has groups to merge"
    assert_groups_merge_to_the_exact_ones(events, (0, {"after": middle_of(events)}))


def test_a_sequence_one_number_cannot_hold_is_read_by_the_exact_query(
    spark: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Offsets at and past 32 bits, a negative row: the hashed query orders a file's events
    by one number (``pos`` above ``row``); what does not fit is read again, exactly."""
    from fakemaster.spark import FORMAT_NAME, batch_overview

    schema = spark.read.format(FORMAT_NAME).load([]).schema
    table = {"database": "d", "table": "t", "columns": ["k"], "primary_key": ["k"]}

    def events(*seqs: tuple[int, int, int, int]) -> Any:
        rows = []
        for file_index, pos, event, row in seqs:
            rows.append(
                {f.name: None for f in schema.fields}
                | table
                | {
                    "op": "c",
                    "after": {"k": str(pos)},
                    "seq": {"file_index": file_index, "pos": pos, "event": event, "row": row},
                    "source": {"file": f"b.{file_index:06}", "pos": pos, "gtid": f"0-1-{pos}"},
                }
            )
        return spark.createDataFrame(rows, schema)

    exact_calls: list[bool] = []
    exact = batch_overview.exact_look_query

    def counted(*args: Any, **kwargs: Any) -> Any:
        exact_calls.append(True)
        return exact(*args, **kwargs)

    monkeypatch.setattr(batch_overview, "exact_look_query", counted)
    top = (1 << 32) - 1
    cases = {
        # The largest offset one number holds, the largest row: hashed, and right.
        (events((1, top, 3, (1 << 31) - 1), (1, top - 1, 9, 0), (2, 4, 0, 5)), False),
        # Past 32 bits: ordered by the offset's low bits it would come first, not last.
        (events((1, 1 << 32, 2, 0), (1, 5, 1, 7)), True),
        (events((1, 5, 0, -1), (1, 5, 0, 0)), True),  # a negative row
    }
    for probe, by_exact in cases:
        exact_calls.clear()
        look = assert_same_look(probe, None)
        assert bool(exact_calls) == by_exact, [r["seq"] for r in probe.collect()]
        from fakemaster.spark.batch_overview import carries_columns, first_look

        with_position = first_look(probe, carries_columns(), None, position=True)
        assert with_position.position is not None
        [domain] = with_position.position
        last = max(tuple(r["seq"]) for r in probe.collect())
        assert tuple(domain["at"]) == last and look.overview.last is not None
