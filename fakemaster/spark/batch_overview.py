"""What the materialiser learns about a batch before writing its tables, in one Spark query.

A micro-batch's fixed cost is mostly its number of Spark jobs (each a few hundred ms on an idle
machine, seconds on a loaded one), so the per-table summary, the tables the batch names, the
statement-format DML counts and the events the rules read as events (DDL, TRUNCATE, XA) are
computed by one query whose branches are unioned and collected together, instead of one query
each. Row events are only aggregated (their number per batch is unbounded); the events kept
whole are the ones that are not rows, of which a batch has few.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from fakemaster.spark.state_store import after_seq

__all__ = ["Overview", "collect_together", "overview"]

_ROW_OPS = ("c", "u", "d", "r")


@dataclass
class Overview:
    """``summary``: per (database, table) a row of ``s`` (the latest TABLE_MAP shape:
    ``columns``, ``column_types``, ``primary_key``), ``carries`` (an update with a partial image
    changes the key), ``partial`` (an update's after image lacks columns, or its columns are
    unknown: its row is the merge of its images, not its last one) and ``mapped`` (the seq of
    the latest TABLE_MAP). ``events``: the events
    that are not rows (``seq``, ``op``, ``ddl``, ``ddl_kind``, ``database``, ``table``, ``file``,
    ``pos``, ``db``), statement DML aside, in ``seq`` order. ``statements``: (statement text,
    database) -> count of statement-format DML. ``touched``: the (database, table) pairs named
    after the state's rows, None when every table counts as touched. ``last``: the greatest
    ``seq`` of ``raw`` (None: no event)."""

    summary: list[Any] = field(default_factory=list)
    events: list[Any] = field(default_factory=list)
    statements: dict[tuple[str | None, str | None], int] = field(default_factory=dict)
    touched: set[tuple[str, str]] | None = None
    last: Any = None


def collect_together(branches: Mapping[str, Any]) -> list[tuple[str, Any]]:
    """The rows of several DataFrames in one Spark query (their union, each row packed in a
    struct column named after its branch): ``(branch name, row)`` pairs, in no set order."""
    from pyspark.sql import functions as F

    packed = {name: frame.select(F.struct("*").alias(name)) for name, frame in branches.items()}
    types = {name: frame.schema[name].dataType for name, frame in packed.items()}
    union = None
    for name, frame in packed.items():
        row = frame.select(
            F.lit(name).alias("kind"),
            *[
                (F.col(other) if other == name else F.lit(None).cast(types[other])).alias(other)
                for other in packed
            ],
        )
        union = row if union is None else union.unionByName(row)
    assert union is not None
    return [(row["kind"], row[row["kind"]]) for row in union.collect()]


def _partial_update() -> Any:
    """An update whose after image may lack columns (MINIMAL or NOBLOB row images)."""
    from pyspark.sql import functions as F

    return (F.col("op") == "u") & (
        F.col("columns").isNull() | (F.size(F.col("after")) < F.size(F.col("columns")))
    )


def overview(
    probe: Any, carries: Any, base: tuple[int, Mapping[str, Any]] | None, raw: Any
) -> Overview:
    """The :class:`Overview` of ``probe`` (the batch's events resolved, with one row per table
    of the state ``base`` in place of its images) and ``raw`` (``probe`` as read, before it was
    resolved); ``carries`` is the Column telling a row event that carries columns from the old
    key's row."""
    from pyspark.sql import functions as F

    named = probe.where(F.col("table").isNotNull())
    branches: dict[str, Any] = {
        "summary": named.groupBy("database", "table").agg(
            F.max_by(
                F.struct("columns", "column_types", "primary_key"),
                F.when(F.col("columns").isNotNull(), F.col("seq")),
            ).alias("s"),
            F.coalesce(F.bool_or(carries), F.lit(False)).alias("carries"),
            F.coalesce(F.bool_or(_partial_update()), F.lit(False)).alias("partial"),
            F.max(F.when(F.col("columns").isNotNull(), F.col("seq"))).alias("mapped"),
        ),
        "event": probe.where(
            (~F.col("op").isin(*_ROW_OPS) | F.col("ddl_kind").isNotNull())
            & ~F.col("ddl_kind").eqNullSafe(F.lit("STATEMENT"))
        ).select(
            "seq",
            "op",
            "ddl",
            "ddl_kind",
            "database",
            "table",
            F.col("source.file").alias("file"),
            F.col("source.pos").alias("pos"),
            F.col("source.db").alias("db"),
        ),
        "statement": probe.where(F.col("ddl_kind") == "STATEMENT")
        .groupBy("ddl", "database")
        .agg(F.count("*").alias("n")),
        "last": raw.agg(F.max("seq").alias("seq")),
    }
    touched = base is not None and base[1].get("after") is not None
    if touched:
        assert base is not None
        at = after_seq(base[1]["after"])
        seq = F.struct(
            *[
                F.lit(v).cast("bigint" if k in ("file_index", "pos") else "int").alias(k)
                for k, v in at.items()
            ]
        )
        new = probe.where(
            ((F.col("seq") > seq) & ~((F.col("op") == "r") & (F.col("seq") == seq)))
            | (F.col("seq.file_index") < 0)
        )
        branches["touched"] = new.groupBy("database", "table").agg(
            F.bool_or(F.col("ddl_kind").isin("RENAME_TABLE", "DROP_DATABASE")).alias("renames")
        )
    found = Overview(touched=set() if touched else None)
    renames = False
    for kind, value in collect_together(branches):
        if kind == "summary":
            found.summary.append(value)
        elif kind == "event":
            found.events.append(value)
        elif kind == "last":
            found.last = value["seq"]
        elif kind == "statement":
            found.statements[(value["ddl"], value["database"])] = int(value["n"])
        else:
            assert found.touched is not None
            renames = renames or bool(value["renames"])
            found.touched.add((value["database"], value["table"]))
    if renames:
        found.touched = None
    found.events.sort(key=lambda e: tuple(e["seq"]))
    return found
