"""Change events to the current state of each table, as Parquet (PySpark only, no jars).

Layout of the output directory ``OUT``::

    OUT/changes/batch_id=N/      the change events of micro-batch N (Parquet; the last only)
    OUT/state/batch_id=N/        what batch N leaves for batch N+1 (state_store)
    OUT/tables/<db>.<table>/     the current state of each table (Parquet, typed columns)
    OUT/position.json            the batch and binlog position the tables reflect
    OUT/report.json              per table: written, dropped or skipped (why), statement DML, NULLs

Incremental (docs/spark.md): batch N's events are applied to the state of batch N-1 (each
table's rows as ``r`` events after every event folded into them, the DDL and prepared XA
transactions still needed as events), never to the batches before; the state of N replaces
them on disk. Idempotence (pattern (a) of the notes): batch N's change events are written with
dynamic partition overwrite into ``batch_id=N``, and the state N-1 stays until batch N+1, so a
replayed batch N is computed again from it. Applying batch N twice, or N again after N, gives
the same tables.

Rules (docs/spark.md):

* Events are ordered by ``seq`` (binlog file number, position, event and row index), never by
  time.
* A table with a primary key (the TABLE_MAP's with FULL metadata, else the catalogue's): the
  row of a key is its latest insert (``c``/``r``), then every later update's after image sets
  the columns it carries (partial MINIMAL/NOBLOB images); a delete removes it; an update that
  changes the key is a delete of the old key and an insert of the new one (the columns its
  after image does not carry are NULL: MariaDB's FULL image carries them all).
* A table without a key is a multiset: each image counts +1 when inserted, -1 when deleted (an
  update deletes its before image and inserts its after image); rows are the images with a
  positive count, repeated that many times. Images are one row when their typed values are
  equal (not their texts).
* DDL: ``TRUNCATE``, ``CREATE TABLE`` and ``DROP TABLE`` of a table (and ``DROP DATABASE`` of its
  database) discard every earlier event of it; a table whose last such event is a drop is not
  written (its dataset is removed). The columns are those of the table's latest TABLE_MAP,
  or, when a CREATE/ALTER/RENAME of it comes later, those of the DDL statements applied
  (``scenarios.ddl.apply_ddl``) to the catalogue's ``create`` statements and the tables the log
  creates; a column an ALTER adds has its DEFAULT in the rows written before it. ``RENAME
  TABLE`` moves a table's events to its new name. Statement-based DML (``ddl_kind``
  STATEMENT) is not applied (the binlog must be written with ``binlog_format=ROW``): it is
  counted per table in the report.
* A table that cannot be written is skipped with its reason; every other table is written
  (``table_report``; ``OUT/report.json``).
* Values: each column is cast from its text form to the column type the TABLE_MAP gives
  (``column_types``); DATE/DATETIME/TIMESTAMP values Spark cannot hold (MariaDB's zero dates)
  become NULL, counted in the report as every value made NULL is.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from typing import Any

from fakemaster.spark.batch_overview import carries_columns, first_look, overview, with_flags
from fakemaster.spark.changes import _COMMENTS, _QUALIFIED, SEQ_DDL, _split
from fakemaster.spark.declared_types import declared_kinds, declared_text, with_declared_types
from fakemaster.spark.look_groups import look_rows
from fakemaster.spark.position import position_after, position_groups
from fakemaster.spark.state_store import StateStore, after_seq
from fakemaster.spark.table_report import (
    TableResult,
    TableSkipped,
    one_line,
    report_json,
    statement_target,
)
from fakemaster.spark.uris import resolve_path

__all__ = ["Materialiser", "TableResult", "materialise", "spark_type_of", "table_dir_name"]

_SEQ_FIELDS = SEQ_DDL.replace(" BIGINT", ": BIGINT").replace(" INT", ": INT")
_RESET_KINDS = ("CREATE_TABLE", "DROP_TABLE", "TRUNCATE")
_DROP_KINDS = ("DROP_TABLE", "DROP_DATABASE")
# DDL a state keeps as events: it shapes, renames or drops tables (a reset that only discards
# earlier rows, TRUNCATE, is already in the state's rows).
# Tables written at once (Spark jobs submitted from as many driver threads).
TABLE_JOBS = 3

_KEPT_DDL = ("CREATE_TABLE", "ALTER_TABLE", "RENAME_TABLE", "DROP_TABLE", "DROP_DATABASE")


def _plain_values(*maps: str) -> dict[str, str]:
    """Parquet writer options: the values of these image maps without a dictionary. A row's
    values hardly repeat, so Parquet's attempt at a dictionary for every page is lost work
    (about a fifth of the change log's write, bench/README.md); the keys (column names)
    repeat in every row and keep theirs."""
    return {f"parquet.enable.dictionary#{name}.key_value.value": "false" for name in maps}


def table_dir_name(database: str, table: str) -> str:
    return f"{database}.{table}"


def _is_local(path: str) -> bool:
    return "://" not in path or path.startswith("file://")


def _local(path: str) -> str:
    return path[len("file://") :] if path.startswith("file://") else path


def _typed(value: Any, spark_type: str) -> Any:
    """A Column: the text ``value`` cast to ``spark_type``."""
    from pyspark.sql import functions as F

    if spark_type == "binary":
        return F.unhex(F.substring(value, 3, 1 << 30))
    if spark_type == "timestamp":  # the text is UTC
        return F.concat(value, F.lit("+00:00")).try_cast("timestamp")
    if spark_type in ("date", "timestamp_ntz"):
        return value.try_cast(spark_type)
    return value.cast(spark_type)


class Materialiser:
    """Applies micro-batches of change events to ``out`` (see the module docstring)."""

    def __init__(
        self,
        spark: Any,
        out: str,
        catalogue: Mapping[str, Any] | None = None,
        on_table: Callable[[TableResult, int, int], None] | None = None,
    ) -> None:
        self.spark = spark
        self.out = resolve_path(out).rstrip("/")  # the executors write there: made absolute
        # Told each table's result as it is written, with its number and the tables' count.
        self.on_table = on_table
        # Column defaults (text forms) fill the columns a partial insert image lacks.
        self.catalogue = dict(catalogue or {})

    @property
    def changes_path(self) -> str:
        return f"{self.out}/changes"

    @property
    def position_path(self) -> str:
        return f"{self.out}/position.json"

    @property
    def report_path(self) -> str:
        return f"{self.out}/report.json"

    def current_batch(self) -> int | None:
        """The last batch applied (from ``position.json``), None before the first."""
        path = _local(self.position_path)
        if not _is_local(self.position_path) or not os.path.exists(path):
            return None
        with open(path, encoding="utf-8") as handle:
            batch = json.load(handle).get("batch_id")
        return None if batch is None else int(batch)

    def apply(self, events: Any, batch_id: int) -> list[TableResult]:
        """Write ``events`` (a DataFrame of change events) as batch ``batch_id`` and bring every
        table up to date; a replayed batch (same id) rewrites the same files, and a batch older
        than the last one applied is skipped (returns [])."""
        from pyspark.sql import functions as F

        if self._outdated(batch_id):
            return []
        self._configure()
        # The first look's flags computed here, where the images are in memory: it then reads
        # booleans, not every event's images back from Parquet.
        batch = with_flags(events).withColumn("batch_id", F.lit(batch_id))
        (
            batch.write.mode("overwrite")
            .options(**_plain_values("before", "after"))
            .option("partitionOverwriteMode", "dynamic")
            .partitionBy("batch_id")
            .parquet(self.changes_path)
        )
        return self._apply_written(batch_id, batch.schema, None)

    def apply_files(self, reader: Any, files: Sequence[str], batch_id: int) -> list[TableResult]:
        """:meth:`apply` of the change events of ``files`` as ``reader`` (the data source's
        ``DataFrameReader``, its options set) reads them. With a local output the data source's
        tasks write the change log themselves (:mod:`fakemaster.spark.change_log_files`), which
        costs about half of Spark's writer; elsewhere Spark writes it. ``reader`` keeps the
        ``changeLog`` option set here (a ``DataFrameReader``'s options are set in place)."""
        if not _is_local(self.out):
            return self.apply(reader.load(list(files)), batch_id)
        if self._outdated(batch_id):
            return []
        self._configure()
        # A replayed batch's earlier files go first (what Spark's dynamic overwrite does): a
        # file of the earlier run that this one does not write would be read with it.
        target = f"{self.changes_path}/batch_id={batch_id}"
        shutil.rmtree(_local(target), ignore_errors=True)
        written = reader.option("changeLog", _local(target)).load(list(files)).collect()
        looks = [row["look"] for row in written]
        # The tasks' groups of the first look stand for Spark's (one query fewer) when every
        # task could give them.
        fine = look_rows(looks) if all(look is not None for look in looks) else None
        return self._apply_written(batch_id, self._change_log_schema(batch_id), fine)

    def _outdated(self, batch_id: int) -> bool:
        current = self.current_batch()
        return current is not None and batch_id < current

    def _configure(self) -> None:
        # TIMESTAMP columns as Parquet TIMESTAMP_MICROS adjusted to UTC (Spark's default INT96
        # is deprecated and read back by other tools as a naive time).
        self.spark.conf.set("spark.sql.parquet.outputTimestampType", "TIMESTAMP_MICROS")
        # A keyed table's newest step per key (_keyed) is a row_number window filtered to 1:
        # the group limit Spark adds for it sorts every step before the shuffle too, which
        # only pays when keys repeat within a task; in a change log they mostly do not.
        self.spark.conf.set("spark.sql.optimizer.windowGroupLimitThreshold", "-1")

    def _change_log_schema(self, batch_id: int) -> Any:
        """The change log's schema: the change events, their flags and ``batch_id``, as
        :meth:`apply` writes it."""
        from pyspark.sql import functions as F

        from fakemaster.spark.changes import CHANGE_EVENT_DDL

        empty = self.spark.createDataFrame([], CHANGE_EVENT_DDL)
        return with_flags(empty).withColumn("batch_id", F.lit(batch_id)).schema

    def _apply_written(
        self, batch_id: int, schema: Any, fine: list[Any] | None
    ) -> list[TableResult]:
        """Every table brought up to date from the change log (``schema``), batch ``batch_id``
        written; ``fine``: the first look's groups of batch ``batch_id``'s events, when known
        (``first_look``)."""
        from pyspark.sql import functions as F

        # With the schema given: an empty batch (a stream's first batch when the binlog has
        # nothing yet) writes no file, and Spark cannot infer a schema from none.
        changes = self.spark.read.schema(schema).parquet(self.changes_path)
        if not _is_local(self.out):
            # No state store off the local filesystem (it lists and removes directories):
            # every batch up to this one, merge on read.
            # Batches written before the change log stored its flags read them as NULL: the
            # flags computed again from the images (this merge on read reads them anyway).
            log = with_flags(changes.where(F.col("batch_id") <= batch_id).drop("batch_id"))
            results, _, groups = self._tables(log, log, batch_id, None, None)
            self._write_json(self.position_path, self._position(log, None, batch_id, groups))
            self._write_json(self.report_path, report_json(batch_id, results))
            return results
        own = changes.where(F.col("batch_id") == batch_id).drop("batch_id")
        store = StateStore(self.out)
        base = store.base(batch_id)
        store.begin(batch_id)
        full, probe = store.carried(self.spark, base, own.schema)
        # A state's events (few) may come from before the change log stored its flags (a
        # resumed stream): their flags computed again, from their images.
        probe = with_flags(probe)
        results, meta, groups = self._tables(
            own.unionByName(full),
            own.unionByName(probe),
            batch_id,
            base,
            store,
            fine if base is None else None,  # with a state, its events are in the look too
        )
        meta["position"] = self._position(
            own, None if base is None else base[1].get("position"), batch_id, groups
        )
        # The state whole before the position names its batch: a kill between the two leaves
        # the position at N-1 and a complete state N, which batch N (replayed) or N+1 starts
        # from as it would without the kill; a kill before leaves no state N at all.
        store.finish(batch_id, meta)
        self._write_json(self.position_path, meta["position"])
        self._write_json(self.report_path, report_json(batch_id, results))
        # Compaction: batch N's state replaces every earlier batch; the state it started
        # from stays for a replay of N.
        store.prune({batch_id} | (set() if base is None else {base[0]}))
        self._prune_changes(batch_id)
        return results

    def _prune_changes(self, batch_id: int) -> None:
        """Removes the change events of the batches before ``batch_id`` (folded into the
        state); batch ``batch_id``'s stay, what the run read."""
        root = _local(self.changes_path)
        if not os.path.isdir(root):
            return
        for name in os.listdir(root):
            match = re.match(r"^batch_id=(-?\d+)$", name)
            if match and int(match.group(1)) < batch_id:
                shutil.rmtree(os.path.join(root, name), ignore_errors=True)

    # --- tables ----------------------------------------------------------------------------

    def _tables(
        self,
        log: Any,
        probe: Any,
        batch_id: int,
        base: tuple[int, Mapping[str, Any]] | None,
        store: StateStore | None,
        fine: list[Any] | None = None,
    ) -> tuple[list[TableResult], dict[str, Any], list[dict[str, Any]] | None]:
        """The tables of ``log`` (change events) written, and the state they leave (the meta
        of :mod:`fakemaster.spark.state_store`; its images and events written into ``store``
        when one is given). ``probe`` is ``log`` with one row per table of the state in place
        of its images: what the summaries below read. Also, when there is no state
        (``base`` None: ``probe`` is the batch's events), their position groups. ``fine``:
        the first look's groups of ``probe``, when known (``first_look``)."""
        from pyspark.sql import functions as F

        carries = carries_columns()
        raw = probe
        # Without a state the probe is the batch's own events: their position is read too.
        look = first_look(probe, carries, base, position=base is None, fine=fine)
        log, probe, renamed, pending = _resolve(log, probe, look.marks, look.shapes)
        # Not cached: a cached relation holds whole column batches of images (a 17 MiB row's
        # images as hex text, several per batch) on the heap. The small aggregations below read
        # only the columns they need from the Parquet change log.
        row_ops = log.where(F.col("op").isin("c", "u", "d", "r"))
        # The first look holds as long as resolving moved no event and renamed no column.
        moved = probe is not raw
        seen = overview(probe, carries, base, raw) if moved else look.overview
        summary = seen.summary
        names = {(r["database"], r["table"]) for r in summary}
        schemas: dict[tuple[str, str], Any] = {
            (r["database"], r["table"]): r["s"]
            if r["s"] is not None and r["s"]["columns"] is not None
            else None
            for r in summary
        }
        # The shapes a TABLE_MAP gave (carried by the state's rows, as a TABLE_MAP would).
        mapped_shapes = {n: s.asDict() for n, s in schemas.items() if s is not None}
        # A table whose last CREATE/ALTER/RENAME comes after its last TABLE_MAP (or that has
        # none): its columns are those the DDL gives, applied to what is known of it.
        mapped = {(r["database"], r["table"]): r["mapped"] for r in summary}
        added: dict[tuple[str, str], dict[str, Any]] = {}
        problems: dict[tuple[str, str], str] = {}
        for shaped, (at, shape) in self._ddl_shapes(seen.events, problems).items():
            if shape is not None:
                added[shaped] = shape["defaults"]
                if mapped.get(shaped) is None or tuple(mapped[shaped]) < tuple(at):
                    schemas[shaped] = shape
                    mapped_shapes.pop(shaped, None)
                if shape["mariadb_types"]:  # UUID/INET: the DDL says what BINARY(n) is
                    schemas[shaped] = with_declared_types(
                        schemas.get(shaped), shape["mariadb_types"]
                    )
        folded = {(r["database"], r["table"]) for r in summary if r["carries"]}
        partial = {(r["database"], r["table"]) for r in summary if r["partial"]}
        resets = _resets(seen.events)
        for name, seq in renamed.items():  # a table renamed away: gone from its old name
            if name not in resets or tuple(resets[name][0]) < tuple(seq):
                resets[name] = (seq, True)
        names |= set(renamed)
        statements = _statement_dml(seen.statements)
        for database, table, count in base[1].get("statement_dml", []) if base else []:
            statements[(database, table)] = statements.get((database, table), 0) + count
        names |= {n for n in statements if n[1] is not None}
        sequences = _sequences(seen.events)
        results = []
        kept_tables: list[dict[str, Any]] = []
        skipped: list[tuple[str, str]] = []
        touched = seen.touched
        before = {
            table_dir_name(t["database"], t["table"]): t
            for t in (base[1]["tables"] if base else [])
        }

        def written(database: str, table: str) -> TableResult:
            dir_name = table_dir_name(database, table)
            earlier = before.get(dir_name)
            if (
                store is not None
                and base is not None
                and touched is not None
                and (database, table) not in touched
                and earlier is not None
                and "rows" in earlier
                # A dataset a killed batch left half-written has no _SUCCESS: rewritten.
                and os.path.exists(_local(f"{self.out}/tables/{dir_name}/_SUCCESS"))
            ):
                # No event of the batch names the table: its state and dataset stay.
                store.reuse(base[0], batch_id, dir_name)
                return TableResult(
                    dir_name,
                    int(earlier["rows"]),
                    f"{self.out}/tables/{dir_name}",
                    nulls=earlier.get("nulls", {}),
                )
            return self._table(
                row_ops,
                database,
                table,
                schemas.get((database, table)),
                resets,
                (database, table) in folded,
                added.get((database, table), {}),
                state=None if store is None else store.table_path(batch_id, dir_name),
                sequence=(database, table) in sequences,
                merge_images=(database, table) in partial,
            )

        ordered = sorted(names)
        # A few tables' jobs at once: each job's driver work and its stages of one task leave
        # cores idle, which another table's job fills. Results are taken in table order.
        with ThreadPoolExecutor(
            max(1, min(TABLE_JOBS, len(ordered))), thread_name_prefix="fakemaster-table"
        ) as pool:
            pending_tables = [pool.submit(written, *name) for name in ordered]
            for (database, table), future in zip(ordered, pending_tables, strict=True):
                problem = problems.get((database, table))
                dir_name = table_dir_name(database, table)
                try:
                    result = future.result()
                except Exception as exc:  # noqa: BLE001 - one table never loses the run
                    reason = str(exc) if isinstance(exc, TableSkipped) else one_line(exc)
                    if problem is not None and problem not in reason:
                        reason = f"{reason}; {problem}"
                    result = TableResult(dir_name, 0, None, reason)
                    skipped.append((database, table))
                else:
                    notes = (problem,) if problem is not None and result.path is not None else ()
                    result = replace(result, notes=notes)
                    if result.path is not None:
                        kept_tables.append(
                            {
                                "database": database,
                                "table": table,
                                "shape": _jsonable(mapped_shapes.get((database, table))),
                                "rows": result.rows,
                                "nulls": {c: dict(k) for c, k in result.nulls.items()},
                            }
                        )
                results.append(replace(result, statement_dml=statements.get((database, table), 0)))
                if self.on_table is not None:
                    self.on_table(results[-1], len(results), len(names))
        meta: dict[str, Any] = {"batch_id": batch_id}
        if store is not None:
            meta.update(
                self._keep(
                    raw,
                    seen.last,
                    row_ops,
                    pending,
                    skipped,
                    resets,
                    store,
                    batch_id,
                    # What the look listed is what the change log holds as read, unless
                    # resolving moved events (XA marks, inherited names).
                    None if moved else seen.events,
                )
            )
        meta["tables"] = kept_tables
        meta["statement_dml"] = [[d, t, n] for (d, t), n in sorted(statements.items(), key=str)]
        keys = dict(base[1].get("keys", {})) if base else {}
        for (database, table), shape in mapped_shapes.items():
            if shape.get("primary_key"):
                keys[table_dir_name(database, table)] = list(shape["primary_key"])
        meta["keys"] = keys
        return results, meta, look.position

    def _keep(
        self,
        raw: Any,
        last: Any,
        row_ops: Any,
        pending: tuple[set[str], set[str]],
        skipped: Sequence[tuple[str, str]],
        resets: dict[tuple[str, str | None], tuple[Any, bool]],
        store: StateStore,
        batch_id: int,
        listed: list[Any] | None,
    ) -> dict[str, Any]:
        """Writes the events the next batch still needs as events into ``store``'s batch
        ``batch_id``: the shaping DDL and the transactions still prepared (as read: the next
        batch resolves them again), and the rows of the tables that could not be written (as
        resolved, after every other event); returns ``after``, the sequence the next batch's
        state rows take. ``listed``: every event of ``raw`` that is not a row (the first
        look's), when known; none of them kept and nothing else to keep, the store writes its
        empty dataset instead of a scan of the change log."""
        from pyspark.sql import Window
        from pyspark.sql import functions as F

        after = None if last is None else last.asDict()
        xids, gtids = pending
        if (
            listed is not None
            and not xids
            and not gtids
            and not (skipped and after is not None)
            and not any(e["op"] == "ddl" and e["ddl_kind"] in _KEPT_DDL for e in listed)
        ):
            # Most batches (rows only): no scan of the whole batch, no job (an empty
            # DataFrame's write is one, 0.25 s on an idle machine).
            store.write_no_events(batch_id)
            return {"after": after}
        kept = (F.col("op") == "ddl") & F.col("ddl_kind").isin(*_KEPT_DDL)
        if xids:
            kept |= (
                (F.col("op") == "xa")
                & (F.col("ddl_kind") == "XA_PREPARE")
                & F.col("ddl").isin(*xids)
            )
        if gtids:
            kept |= F.col("op").isin("c", "u", "d") & F.coalesce(
                F.col("source.gtid").isin(*gtids), F.lit(False)
            )
        events = raw.where(kept)
        if skipped and after is not None:
            rows = None
            for database, table in skipped:
                found = self._events(row_ops, database, table, resets)
                if found is not None:
                    rows = found if rows is None else rows.unionByName(found)
            if rows is not None:
                order = F.row_number().over(Window.orderBy("seq")) + 1
                moved = after_seq(after, 0)
                rows = rows.withColumn(
                    "seq",
                    F.struct(
                        F.lit(moved["file_index"]).cast("bigint").alias("file_index"),
                        F.lit(moved["pos"]).cast("bigint").alias("pos"),
                        F.lit(moved["event"]).cast("int").alias("event"),
                        (F.lit(moved["row"]) + order).cast("int").alias("row"),
                    ),
                ).select(*raw.columns)
                events = events.unionByName(rows)
                # Past the moved rows: the state's rows of the next batch come after them.
                top = rows.agg(F.max("seq").alias("m")).first()
                if top is not None and top["m"] is not None:
                    after = top["m"].asDict()
        events.write.mode("overwrite").parquet(store.events_path(batch_id))
        return {"after": after}

    @staticmethod
    def _events(
        row_ops: Any,
        database: str,
        table: str,
        resets: dict[tuple[str, str | None], tuple[Any, bool]],
    ) -> Any:
        """The row events of a table after its last reset, None when that reset drops it."""
        from pyspark.sql import functions as F

        candidates = [r for r in (resets.get((database, table)), resets.get((database, None))) if r]
        reset = max(candidates, key=lambda r: tuple(r[0])) if candidates else None
        if reset is not None and reset[1]:
            return None
        events = row_ops.where((F.col("database") == database) & (F.col("table") == table))
        if reset is not None:
            events = events.where(F.col("seq") > _seq_literal(reset[0]))
        return events

    def _ddl_shapes(
        self, events: Sequence[Any], problems: dict[tuple[str, str], str]
    ) -> dict[tuple[str, str], tuple[Any, dict[str, Any] | None]]:
        """Per table, the sequence of the last DDL statement that shaped it (CREATE, ALTER,
        RENAME into it) and its shape then: ``columns``, ``column_types``, ``primary_key`` and
        the ``defaults`` (text forms) of its columns, or None where the table is not known
        (an ALTER of a table that no CREATE in the log and no ``create`` of the catalogue
        describes). The statements are applied in ``seq`` order with the project's DDL
        applier (``scenarios.ddl.apply_ddl``) to the catalogue's tables (their ``create``
        statements) and those the log creates. What cannot be parsed or applied goes into
        ``problems`` (by table, one line naming the statement's file and offset, or the
        catalogue)."""

        kinds = ("CREATE_TABLE", "ALTER_TABLE", "RENAME_TABLE", "DROP_TABLE", "DROP_DATABASE")
        statements = [e for e in events if e["op"] == "ddl" and e["ddl_kind"] in kinds]
        if not statements:
            return {}
        from scenarios.create_table import parse_create_table, parse_ddl
        from scenarios.ddl import CreateTable, RenameTable, apply_ddl

        tables: dict[str, Any] = {}
        for name, entry in self.catalogue.items():
            if isinstance(entry, Mapping) and entry.get("create"):
                database, _, table = name.partition(".")
                try:
                    tables[name] = parse_create_table(str(entry["create"]), database)
                except (ValueError, KeyError) as exc:
                    _add_problem(
                        problems,
                        (database, table),
                        f"the catalogue's (--catalog) create of {name} could not be parsed:"
                        f" {one_line(exc)}",
                    )
        found: dict[tuple[str, str], tuple[Any, Any]] = {}
        for row in statements:
            if row["ddl_kind"] == "DROP_DATABASE":
                for name in [n for n, t in tables.items() if t.database == row["database"]]:
                    del tables[name]
                continue
            try:
                statement = parse_ddl(row["ddl"] or "", row["database"] or None)
                touched = (
                    statement.table.qualified
                    if isinstance(statement, CreateTable)
                    else f"{statement.new_database}.{statement.new_name}"
                    if isinstance(statement, RenameTable)
                    else f"{statement.database}.{statement.name}"
                )
                apply_ddl(statement, tables, {name: [] for name in tables})
            except (ValueError, KeyError) as exc:  # ScenarioError, UnicodeError: ValueErrors
                # Not a statement the applier models, or a table it does not know: what
                # the statement names is unknown from here on.
                if row["table"] is not None:
                    tables.pop(f"{row['database']}.{row['table']}", None)
                    found[(row["database"], row["table"])] = (row["seq"], None)
                    _add_problem(
                        problems,
                        (row["database"], row["table"]),
                        f"its {row['ddl_kind'].replace('_', ' ')} at {row['file']}:{row['pos']}"
                        f" could not be modelled: {one_line(exc)}",
                    )
                continue
            if row["ddl_kind"] != "DROP_TABLE":
                database, _, table = touched.partition(".")
                found[(database, table)] = (row["seq"], tables.get(touched))
        return {name: (seq, _shape(table)) for name, (seq, table) in found.items()}

    def _table(
        self,
        row_ops: Any,
        database: str,
        table: str,
        schema: Any,
        resets: dict[tuple[str, str | None], tuple[Any, bool]],
        fold: bool,
        added: Mapping[str, Any],
        state: str | None = None,
        sequence: bool = False,
        merge_images: bool = True,
    ) -> TableResult:
        """Writes one table (and its images to ``state``, when given: the state's rows).
        ``merge_images``: an update's image may lack columns, so a row is the merge of its
        images (else each key's last image is its row)."""
        from pyspark.sql import functions as F

        name = table_dir_name(database, table)
        path = f"{self.out}/tables/{name}"
        events = self._events(row_ops, database, table, resets)
        if events is None:
            if _is_local(path) and os.path.isdir(_local(path)):
                shutil.rmtree(_local(path))
            return TableResult(name, 0, None)
        if schema is None:
            columns: Sequence[str] = self._snapshot_columns(events)
            types: Sequence[str] = ["string"] * len(columns)
            key: Sequence[str] = []
            if not columns:
                raise TableSkipped(
                    "its columns are unknown: no TABLE_MAP, CREATE TABLE or catalogue entry"
                    " gives them"
                )
        else:
            columns = schema["columns"]
            # Snapshot rows know their columns (from the catalogue), not their types: the
            # catalogue's "types" (Spark types by column) or strings, until a TABLE_MAP.
            given = self.catalogue.get(name, {}).get("types", {})
            types = schema["column_types"] or [given.get(c, "string") for c in columns]
            key = schema["primary_key"] or []
        # Columns an image lacks: a partial insert image's (the catalogue's defaults), and
        # those an ALTER added after the image was written (the DDL's defaults).
        defaults: Mapping[str, Any] = {
            **added,
            **self.catalogue.get(name, {}).get("defaults", {}),
        }
        declared: Mapping[str, str] = (
            schema["mariadb_types"]
            if isinstance(schema, dict) and "mariadb_types" in schema
            else {}
        )

        def cell(column: str, image: Any = None) -> Any:
            image = F.col("image") if image is None else image
            value = F.try_element_at(image, F.lit(column))
            if column in declared:
                value = declared_text(value, declared[column])
            if column in defaults:
                absent = ~F.map_contains_key(image, F.lit(column))
                value = F.when(absent, F.lit(defaults[column])).otherwise(value)
            return value

        def value(column: str, spark_type: str, image: Any) -> Any:
            typed = _typed(cell(column, image), spark_type)
            # A FLOAT's text in a snapshot (MariaDB's SELECT) has 6 significant digits.
            return F.format_string("%.5e", typed) if spark_type == "float" else typed

        def values(image: Any) -> Any:
            """The typed values of an image's columns: one row's identity in a multiset (a
            snapshot's text of a value, e.g. a DOUBLE's, need not be the binlog's)."""
            return F.to_json(
                F.struct(
                    *[value(c, t, image).alias(c) for c, t in zip(columns, types, strict=True)]
                )
            )

        from scenarios.sequences import SEQUENCE_COLUMNS

        if sequence or tuple(columns) == SEQUENCE_COLUMNS:
            # A sequence's table holds one row: each logged image replaces it (one key).
            images = self._keyed(events, [], merge_images)
        elif not key:
            images = self._multiset(events, values)
        elif fold:
            images = self.spark.createDataFrame(
                [(image,) for image in _fold(events.orderBy("seq").toLocalIterator(), key)],
                "image map<string,string>",
            )
        else:
            images = self._keyed(events, key, merge_images)
        if state is not None:
            # The images are the state's rows: computed once, then typed from what was written.
            images.write.mode("overwrite").options(**_plain_values("image")).parquet(state)
            images = self.spark.read.schema("image map<string,string>").parquet(state)
        from pyspark.sql import Observation

        # Each cell's text taken once (a lookup in the image, and for a declared type a Python
        # UDF), typed once: the counts below read those columns (the typed write of 1.2 M rows
        # 2.7 s against 3.5-3.8 s when they computed every cell again, bench/README.md).
        # Positional names: a table's own column may be named anything.
        texts = [f"__fm_text_{i}" for i in range(len(columns))]
        typed_names = [f"__fm_value_{i}" for i in range(len(columns))]
        absents = [f"__fm_absent_{i}" for i in range(len(columns))]
        staged = images.select(
            F.col("image"), *[cell(c).alias(text) for c, text in zip(columns, texts, strict=True)]
        ).select(
            *[
                _typed(F.col(text), t).alias(value)
                for text, t, value in zip(texts, types, typed_names, strict=True)
            ],
            *texts,
            *[
                # Absent from the image: its text is NULL (no default fills it), so the map is
                # searched again only for a NULL text.
                (F.col(text).isNull() & ~F.map_contains_key(F.col("image"), F.lit(c))).alias(absent)
                for c, text, absent in zip(columns, texts, absents, strict=True)
                if c not in defaults
            ],
        )
        # Each value that becomes NULL though the binlog has one (or has none: the column is
        # in no image) is counted while the table is written: no job of its own.
        nulls = Observation()
        counted = [
            F.sum(flag.cast("int")).alias(f"{kind}\0{c}")
            for c, text, value, absent in zip(columns, texts, typed_names, absents, strict=True)
            for kind, flag in _null_flags(
                F.col(text), F.col(value), None if c in defaults else F.col(absent)
            )
        ]
        typed = staged.observe(nulls, *counted).select(
            *[F.col(value).alias(c) for c, value in zip(columns, typed_names, strict=True)]
        )
        typed.write.mode("overwrite").parquet(path)
        found: dict[str, dict[str, int]] = {}
        for label, n in nulls.get.items():
            if n:
                kind, _, column = label.partition("\0")
                found.setdefault(column, {})[kind] = int(n)
        return TableResult(name, self._count(path), path, nulls=found)

    def _count(self, path: str) -> int:
        """Rows of a written dataset: from the Parquet footers when local, else by Spark."""
        if _is_local(path):
            import pyarrow.parquet as pq  # type: ignore[import-untyped]

            return sum(
                pq.ParquetFile(os.path.join(_local(path), name)).metadata.num_rows
                for name in os.listdir(_local(path))
                if name.endswith(".parquet")
            )
        return int(self.spark.read.parquet(path).count())

    @staticmethod
    def _snapshot_columns(events: Any) -> list[str]:
        from pyspark.sql import functions as F

        keys = events.select(F.explode(F.map_keys(F.col("after"))).alias("k")).distinct().collect()
        return sorted(r["k"] for r in keys)

    @staticmethod
    def _keyed(events: Any, key: Sequence[str], merge_images: bool = True) -> Any:
        """A keyed table's rows (``image``) from its row events: per key, the images since its
        last insert or delete, merged column by column in order (an update's image may lack
        columns), or, when no update's image lacks any (``merge_images`` False), the last
        image alone: the same row, by a window over each key's steps instead of a join and
        two more aggregations."""
        from pyspark.sql import Window
        from pyspark.sql import functions as F

        def key_of(image: Any, fallback: Any = None) -> Any:
            parts = []
            for k in key:
                value = F.try_element_at(image, F.lit(k))
                if fallback is not None:
                    value = F.coalesce(value, F.try_element_at(fallback, F.lit(k)))
                parts.append(value)
            if len(parts) == 1 and not merge_images:
                # One column: its text is the key as it is (only compared and partitioned
                # on, never joined on, so NULL keys are one key as "[null]" was).
                return parts[0]
            return F.to_json(F.array(*parts))

        before_key = key_of(F.col("before"))
        after_key = key_of(F.col("after"), F.col("before"))
        entry = F.struct  # (key, kind, image): kind 0 delete, 1 insert, 2 update
        empty = F.create_map().cast("map<string,string>")
        steps = (
            F.when(
                F.col("op").isin("c", "r"),
                F.array(
                    entry(
                        after_key.alias("k"), F.lit(1).alias("kind"), F.col("after").alias("image")
                    )
                ),
            )
            .when(
                F.col("op") == "d",
                F.array(entry(before_key.alias("k"), F.lit(0).alias("kind"), empty.alias("image"))),
            )
            .otherwise(
                F.when(
                    before_key.eqNullSafe(after_key),
                    F.array(
                        entry(
                            before_key.alias("k"),
                            F.lit(2).alias("kind"),
                            F.col("after").alias("image"),
                        )
                    ),
                ).otherwise(
                    F.array(
                        entry(before_key.alias("k"), F.lit(0).alias("kind"), empty.alias("image")),
                        entry(
                            after_key.alias("k"),
                            F.lit(1).alias("kind"),
                            F.col("after").alias("image"),
                        ),
                    )
                )
            )
        )
        # Two entries of one update share its seq: the insert sorts after the delete.
        steps_df = events.select(F.col("seq"), F.posexplode(steps).alias("n", "s")).select(
            F.col("s.k").alias("k"),
            F.struct(F.col("seq"), F.col("n")).alias("order"),
            F.col("s.kind").alias("kind"),
            F.col("s.image").alias("image"),
        )
        if not merge_images:
            # Each key's newest step, by sorting the steps once, after the shuffle (Materialiser
            # .apply turns off the window group limit, which sorts them before it too).
            # max_by over (kind, image) is not aggregated by hashing (Spark's hash aggregation
            # holds fixed-width buffers only): it sorted every image twice (bench/README.md).
            newest = F.row_number().over(Window.partitionBy("k").orderBy(F.col("order").desc()))
            last = steps_df.select("kind", "image", newest.alias("newest"))
            return last.where((F.col("newest") == 1) & (F.col("kind") != 0)).select("image")
        per_key = steps_df.groupBy("k").agg(
            F.max_by(F.col("kind"), F.col("order")).alias("last_kind"),
            F.max(F.when(F.col("kind") != 2, F.col("order"))).alias("base"),
        )
        live = per_key.where(F.col("last_kind") != 0)
        cells = (
            steps_df.join(live, "k")
            # No insert or delete of the key (a row from before the binlog, without a snapshot):
            # every update's after image counts.
            .where(
                (F.col("kind") != 0) & (F.col("base").isNull() | (F.col("order") >= F.col("base")))
            )
            .select("k", "order", F.explode(F.col("image")).alias("column", "value"))
            .groupBy("k", "column")
            .agg(F.max_by(F.col("value"), F.col("order")).alias("value"))
        )
        return cells.groupBy("k").agg(
            F.map_from_entries(F.collect_list(F.struct("column", "value"))).alias("image")
        )

    @staticmethod
    def _multiset(events: Any, identity: Callable[[Any], Any]) -> Any:
        from pyspark.sql import functions as F

        def counted(image: Any, weight: int) -> Any:
            return F.struct(
                identity(image).alias("k"), image.alias("image"), F.lit(weight).alias("w")
            )

        steps = (
            F.when(F.col("op").isin("c", "r"), F.array(counted(F.col("after"), 1)))
            .when(F.col("op") == "d", F.array(counted(F.col("before"), -1)))
            .otherwise(F.array(counted(F.col("before"), -1), counted(F.col("after"), 1)))
        )
        counts = (
            events.select(F.explode(steps).alias("s"))
            .groupBy(F.col("s.k").alias("k"))
            .agg(F.first(F.col("s.image")).alias("image"), F.sum(F.col("s.w")).alias("n"))
            .where(F.col("n") > 0)
        )
        return counts.select(
            F.explode(F.array_repeat(F.col("image"), F.col("n").cast("int"))).alias("image")
        )

    # --- position --------------------------------------------------------------------------

    def _write_json(self, target: str, value: Mapping[str, Any]) -> None:
        if _is_local(target):
            path = _local(target)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            tmp = path + ".tmp"
            with open(tmp, "w", encoding="utf-8") as handle:
                json.dump(value, handle, indent=1, sort_keys=True)
            os.replace(tmp, path)
        else:
            self.spark.createDataFrame(
                [(json.dumps(value, sort_keys=True),)], "value string"
            ).coalesce(1).write.mode("overwrite").text(target)

    def _position(
        self,
        log: Any,
        base: Mapping[str, Any] | None,
        batch_id: int,
        groups: Sequence[Any] | None = None,
    ) -> dict[str, Any]:
        """The position after ``log``'s events, which follow those of the position ``base``
        (the state's, None: none before). ``groups``: :func:`position_groups` of ``log``,
        when the caller has them."""
        return position_after(position_groups(log) if groups is None else groups, base, batch_id)


_INTEGER_TYPES = {  # SQL type: (signed, unsigned) Spark type
    "tinyint": ("tinyint", "smallint"),
    "smallint": ("smallint", "int"),
    "mediumint": ("int", "int"),
    "int": ("int", "bigint"),
    "bigint": ("bigint", "decimal(20,0)"),
}
_OTHER_TYPES = {
    "float": "float",
    "double": "double",
    "year": "int",
    "date": "date",
    "time": "string",
    "datetime": "timestamp_ntz",
    "timestamp": "timestamp",
}


def spark_type_of(column: Any) -> str:
    """The Spark type of a materialised column of a ``scenarios.schema.Column`` (the types
    docs/spark.md gives, as a TABLE_MAP's column would have)."""
    if column.type in _INTEGER_TYPES:
        return _INTEGER_TYPES[column.type][column.unsigned]
    if column.type == "decimal":
        precision, scale = column.precision or 10, column.scale or 0
        return f"decimal({precision},{scale})" if precision <= 38 else "string"
    if column.type == "bit":
        return "bigint" if (column.length or 1) < 64 else "decimal(20,0)"
    if column.type in _OTHER_TYPES:
        return _OTHER_TYPES[column.type]
    if column.type in ("enum", "set") and not column.members:
        return "bigint"
    if column.is_bytes and column.charset in (None, "binary"):
        return "binary"
    return "string"


def _shape(table: Any) -> dict[str, Any] | None:
    """A ``scenarios.schema.Table`` as the materialiser's schema of a table."""
    if table is None:
        return None
    from scenarios.oracle import cell_text
    from scenarios.schema import NO_DEFAULT

    return {
        "columns": [c.name for c in table.columns],
        "column_types": [spark_type_of(c) for c in table.columns],
        "primary_key": list(table.primary_key),
        "mariadb_types": declared_kinds(table),
        "defaults": {
            c.name: cell_text(c, c.default)
            for c in table.columns
            if c.default is not NO_DEFAULT and c.default is not None
        },
    }


def _jsonable(shape: Mapping[str, Any] | None) -> dict[str, Any] | None:
    if shape is None:
        return None
    return {
        k: None if shape.get(k) is None else list(shape[k])
        for k in ("columns", "column_types", "primary_key")
    }


def _add_problem(problems: dict[tuple[str, str], str], name: tuple[str, str], text: str) -> None:
    problems[name] = f"{problems[name]}; {text}" if name in problems else text


def _null_flags(text: Any, typed: Any, absent: Any) -> list[tuple[str, Any]]:
    """(kind, Column) of the ways a cell becomes NULL (table_report.NULL_KINDS): a value the
    Spark type cannot hold, or in no image (``absent``: whether the image lacks the column;
    None where a default fills a missing one)."""
    flags = [("unrepresentable", text.isNotNull() & typed.isNull())]
    if absent is not None:
        flags.append(("absent", absent))
    return flags


def _resets(events: Iterable[Any]) -> dict[tuple[str, str | None], tuple[Any, bool]]:
    """Per (database, table) (table None: the whole database), the sequence of the latest of
    ``events`` (in seq order) that discards earlier ones, and whether it drops the table."""
    found: dict[tuple[str, str | None], tuple[Any, bool]] = {}
    for e in events:
        kind = e["ddl_kind"]
        if e["op"] == "t" or kind in _RESET_KINDS or kind == "DROP_DATABASE":
            found[(e["database"], e["table"])] = (e["seq"], kind in _DROP_KINDS)
    return found


def _statement_dml(
    groups: Mapping[tuple[str | None, str | None], int],
) -> dict[tuple[str | None, str | None], int]:
    """Statement-format DML (``ddl_kind`` STATEMENT: not applied) counted per (database,
    table) it writes (table None: a statement whose table could not be read from it), from
    the counts per (statement, database)."""
    counts: dict[tuple[str | None, str | None], int] = {}
    for (text, database), n in groups.items():
        target = statement_target(text or "", database)
        counts[target] = counts.get(target, 0) + n
    return counts


def _sequences(events: Iterable[Any]) -> set[tuple[str, str]]:
    """The tables the CREATE SEQUENCE statements among ``events`` make (database, name)."""
    create = re.compile(r"(?i)^\s*CREATE\b.*\bSEQUENCE")
    return sequence_tables(
        (e["ddl"], e["db"]) for e in events if e["op"] == "ddl" and create.search(e["ddl"] or "")
    )


def sequence_tables(statements: Iterable[tuple[str, str | None]]) -> set[tuple[str, str]]:
    """The (database, name) of the sequences the ``(statement, session database)`` pairs
    create; a statement that is not a CREATE SEQUENCE the model reads is left out (its
    table's rows are then kept as a table without a key's)."""
    from scenarios.errors import ScenarioError
    from scenarios.sequences import is_create_sequence, parse_create_sequence

    found = set()
    for text, database in statements:
        if not is_create_sequence(text):
            continue
        try:
            sequence = parse_create_sequence(text, database or None)
        except ScenarioError:
            continue
        found.add((sequence.database, sequence.name))
    return found


def _seq_literal(seq: Any) -> Any:
    from pyspark.sql import functions as F

    return F.struct(
        F.lit(seq["file_index"]).cast("bigint").alias("file_index"),
        F.lit(seq["pos"]).cast("bigint").alias("pos"),
        F.lit(seq["event"]).cast("int").alias("event"),
        F.lit(seq["row"]).cast("int").alias("row"),
    )


_RENAME = re.compile(r"^\s*RENAME\s+TABLES?\s+(.*)$", re.I | re.S)
_PAIR = re.compile(rf"\s*{_QUALIFIED}\s+TO\s+{_QUALIFIED}\s*(?:,|$)", re.I)


def rename_pairs(text: str, database: str) -> list[tuple[tuple[str, str], tuple[str, str]]]:
    """The (old, new) names of ``RENAME TABLE a TO b[, c TO d ...]`` (unqualified names in
    ``database``)."""
    found = _RENAME.match(_COMMENTS.sub(" ", text))
    if found is None:
        return []
    return [
        (_split(m.group(1), database), _split(m.group(2), database))
        for m in _PAIR.finditer(found.group(1).strip())
    ]


def _resolve(
    log: Any, probe: Any, marks: Sequence[Any], shapes: Sequence[Any]
) -> tuple[Any, Any, dict[tuple[str, str | None], Any], tuple[set[str], set[str]]]:
    """The change events as the rules see them: rows of a prepared XA transaction moved to its
    XA COMMIT (dropped at XA ROLLBACK, absent while still prepared), and events of a renamed
    table under its new name; ``log`` and ``probe`` (the same events but a state's images,
    what the marks are read from) alike. Also the tables renamed away, with the rename's
    sequence, and the XA transactions still prepared (their xids and gtids). ``marks`` and
    ``shapes``: the XA/RENAME events and :func:`_shapes` of ``probe``, as
    :func:`~fakemaster.spark.batch_overview.first_look` reads them. ``log`` and ``probe`` come
    back as they were (the same objects) when nothing moves."""
    marks = list(marks)
    marks.sort(key=lambda mark: tuple(mark["seq"]))  # few rows: no Spark sort (two jobs)
    prepared: dict[str, str] = {}  # xid -> gtid of its XA PREPARE group
    held: set[str] = set()  # gtids of every prepared group
    committed: dict[str, Any] = {}  # gtid -> the XA COMMIT's seq
    active: dict[tuple[str, str], list[tuple[tuple[str, str], Any, Any]]] = {}
    dead: list[tuple[tuple[str, str], Any, Any]] = []
    renamed: dict[tuple[str, str | None], Any] = {}
    for mark in marks:
        if mark["op"] == "xa":
            xid = mark["ddl"]
            if mark["ddl_kind"] == "XA_PREPARE":
                prepared[xid] = mark["gtid"]
                held.add(mark["gtid"])
            elif xid in prepared:
                gtid = prepared.pop(xid)
                if mark["ddl_kind"] == "XA_COMMIT":
                    committed[gtid] = mark["seq"]
            continue
        for old, new in rename_pairs(mark["ddl"] or "", mark["database"] or ""):
            seq = mark["seq"]
            moved = [
                (orig, lo, seq if hi is None else hi)
                for orig, lo, hi in active.pop(old, [(old, None, None)])
            ]
            dead += [
                (orig, lo, seq if hi is None else hi)
                for orig, lo, hi in active.get(new, [(new, None, None)])
            ]
            active[new] = moved
            active[old] = [(old, seq, None)]
            renamed[old] = seq
            renamed.pop(new, None)
    pending = (set(prepared), set(prepared.values()))
    if marks:
        log = _moved(log, held, committed, active, dead)
        probe = _moved(probe, held, committed, active, dead)
    # Without marks nothing moved: the shapes given are the moved events' own.
    log, probe = _inherit_names(log, probe, None if marks else shapes)
    return log, probe, renamed, pending


def _moved(
    log: Any,
    held: set[str],
    committed: Mapping[str, Any],
    active: Mapping[tuple[str, str], list[tuple[tuple[str, str], Any, Any]]],
    dead: list[tuple[tuple[str, str], Any, Any]],
) -> Any:
    """``log`` with the XA rows and renamed tables of :func:`_resolve`'s marks moved."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    if held:
        group = F.col("source.gtid")
        waiting = F.coalesce(group.isin(*held), F.lit(False)) & F.col("op").isin("c", "u", "d")
        moved_rows = log.where(waiting & group.isin(*committed) if committed else F.lit(False))
        if committed:
            at = log.sparkSession.createDataFrame(
                [(g, s) for g, s in committed.items()],
                f"g string, at struct<{_SEQ_FIELDS}>",
            )
            order = Window.partitionBy(group).orderBy("seq")
            moved_rows = (
                moved_rows.join(at, group == F.col("g"))
                .withColumn(
                    "seq",
                    F.struct(
                        F.col("at.file_index").alias("file_index"),
                        F.col("at.pos").alias("pos"),
                        F.col("at.event").alias("event"),
                        (F.row_number().over(order) - 1).cast("int").alias("row"),
                    ),
                )
                .select(*log.columns)
            )
        log = log.where(~waiting).unionByName(moved_rows)
    rules = [
        (orig, lo, hi, name)
        for name, segments in active.items()
        for orig, lo, hi in segments
        if not (orig == name and hi is None)
    ] + [(orig, lo, hi, None) for orig, lo, hi in dead]
    if rules:

        def inside(orig: tuple[str, str], lo: Any, hi: Any) -> Any:
            cond = (F.col("database") == orig[0]) & (F.col("table") == orig[1])
            if lo is not None:
                cond &= F.col("seq") > _seq_literal(lo)
            if hi is not None:
                cond &= F.col("seq") < _seq_literal(hi)
            return cond

        target: Any = F
        for orig, lo, hi, name in rules:
            value = F.lit(None if name is None else f"{name[0]}\0{name[1]}")
            target = target.when(inside(orig, lo, hi), value)
        moved_to = target.otherwise(F.lit("="))
        log = (
            log.withColumn("_to", moved_to)
            .where(F.col("_to").isNotNull())
            .withColumn(
                "database",
                F.when(F.col("_to") == "=", F.col("database")).otherwise(
                    F.split_part(F.col("_to"), F.lit("\0"), F.lit(1))
                ),
            )
            .withColumn(
                "table",
                F.when(F.col("_to") == "=", F.col("table")).otherwise(
                    F.split_part(F.col("_to"), F.lit("\0"), F.lit(2))
                ),
            )
            .drop("_to")
        )
    return log


def _unnamed(columns: Sequence[str]) -> bool:
    return all(c == f"@{i + 1}" for i, c in enumerate(columns))


def _shapes(probe: Any) -> Any:
    """Each table's TABLE_MAP shapes and DDL kinds, with the first and last ``seq`` of each."""
    from pyspark.sql import functions as F

    return (
        probe.where(F.col("columns").isNotNull() | F.col("ddl_kind").isNotNull())
        .where(F.col("table").isNotNull())
        .groupBy("database", "table", "columns", "primary_key", "ddl_kind")
        .agg(F.min("seq").alias("first"), F.max("seq").alias("last"))
    )


def _inherit_names(log: Any, probe: Any, shapes: Sequence[Any] | None = None) -> tuple[Any, Any]:
    """Rows events whose TABLE_MAP carries no column names (``binlog_row_metadata`` changed to
    MINIMAL or NO_LOG, and no catalogue) take the names and key of the table's latest earlier
    TABLE_MAP that had them, if it has the same number of columns and no CREATE, ALTER, RENAME
    or DROP of the table came in between. ``shapes``: :func:`_shapes` of ``probe`` collected,
    when the caller has them."""
    from pyspark.sql import functions as F

    if shapes is None:
        shapes = _shapes(probe).collect()
    steps: list[tuple[Any, int, Any]] = []
    for shape in shapes:
        if shape["columns"] is None:  # a DDL statement of the table
            if shape["ddl_kind"] != "TRUNCATE":
                steps += [(tuple(shape["first"]), 0, shape), (tuple(shape["last"]), 0, shape)]
        else:
            steps.append((tuple(shape["first"]), 1, shape))
    named: dict[tuple[str, str], Any] = {}
    renames: list[tuple[Any, Any]] = []
    for _, _, shape in sorted(steps, key=lambda s: s[:2]):
        name = (shape["database"], shape["table"])
        if shape["columns"] is None:
            named.pop(name, None)
        elif not _unnamed(shape["columns"]):
            named[name] = shape
        elif name in named and len(named[name]["columns"]) == len(shape["columns"]):
            renames.append((shape, named[name]))
    if not renames:
        return log, probe
    columns, key, before, after = (F.col(c) for c in ("columns", "primary_key", "before", "after"))
    for shape, source in renames:
        match = (
            (F.col("database") == shape["database"])
            & (F.col("table") == shape["table"])
            & (F.col("columns") == F.array(*[F.lit(c) for c in shape["columns"]]))
        )
        names = F.array(*[F.lit(c) for c in source["columns"]])

        def renamed(image: Any, names: Any = names) -> Any:
            return F.transform_keys(
                image, lambda k, _: F.element_at(names, F.substring(k, 2, 9).cast("int"))
            )

        columns = F.when(match, names).otherwise(columns)
        given_key = source["primary_key"]
        key = F.when(
            match,
            F.lit(None).cast("array<string>")
            if given_key is None
            else F.array(*[F.lit(c) for c in given_key]),
        ).otherwise(key)
        before = F.when(match, renamed(F.col("before"))).otherwise(before)
        after = F.when(match, renamed(F.col("after"))).otherwise(after)
    return tuple(
        frame.withColumn("before", before)
        .withColumn("after", after)
        .withColumn("primary_key", key)
        .withColumn("columns", columns)
        for frame in (log, probe)
    )


def _fold(rows: Iterable[Any], key: Sequence[str]) -> list[dict[str, str | None]]:
    """The keyed rules applied in ``seq`` order on the driver (for tables whose key changes
    with partial images): key -> the row's columns so far."""
    state: dict[tuple[Any, ...], dict[str, str | None]] = {}
    for row in rows:
        op, before, after = row["op"], dict(row["before"] or {}), dict(row["after"] or {})
        if op in ("c", "r"):
            state[tuple(after.get(k) for k in key)] = after
        elif op == "d":
            state.pop(tuple(before.get(k) for k in key), None)
        else:
            old = tuple(before.get(k) for k in key)
            new = tuple(after.get(k, before.get(k)) for k in key)
            current = state.pop(old, {})
            current.update(before)
            current.update(after)
            state[new] = current
    return list(state.values())


def materialise(
    spark: Any,
    events: Any,
    out: str,
    batch_id: int = 0,
    catalogue: Mapping[str, Any] | None = None,
) -> list[TableResult]:
    """:meth:`Materialiser.apply` of ``events`` as batch ``batch_id`` into ``out``."""
    return Materialiser(spark, out, catalogue).apply(events, batch_id)
