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

from fakemaster.spark.position import by_domain, gtid_domain, position_aggregates
from fakemaster.spark.state_store import after_seq

__all__ = [
    "FLAGS",
    "FirstLook",
    "Overview",
    "carries_columns",
    "collect_together",
    "first_look",
    "exact_look_query",
    "look_query",
    "merge_fine_groups",
    "overview",
    "with_flags",
]

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


def carries_columns() -> Any:
    """An update that changes the key with a partial after image (MINIMAL, NOBLOB): its other
    columns come from the old key's row, which only an in-order fold knows."""
    from pyspark.sql import functions as F

    def changed(k: Any) -> Any:
        after = F.try_element_at(F.col("after"), k)
        return after.isNotNull() & ~after.eqNullSafe(F.try_element_at(F.col("before"), k))

    return (
        (F.col("op") == "u")
        & (F.size(F.col("after")) < F.size(F.col("columns")))
        & F.exists(F.col("primary_key"), changed)
    )


def _partial_update() -> Any:
    """An update whose after image may lack columns (MINIMAL or NOBLOB row images)."""
    from pyspark.sql import functions as F

    return (F.col("op") == "u") & (
        F.col("columns").isNull() | (F.size(F.col("after")) < F.size(F.col("columns")))
    )


FLAGS = ("carries", "partial")
"""The per-event flags the change log stores beside each event (:func:`with_flags`), so that
the first look aggregates booleans instead of reading every event's images back."""


def with_flags(events: Any) -> Any:
    """``events`` with the :data:`FLAGS` columns computed from its images (replaced where it
    has them): ``carries`` (:func:`carries_columns`) and ``partial`` (an update whose after
    image may lack columns). Computed where the images are at hand, as the change log is
    written; a frame whose images are renamed afterwards (unnamed columns given names) has
    stale flags and is summarised from its images (:func:`overview`)."""
    from pyspark.sql import functions as F

    carries, partial = FLAGS
    return events.withColumns(
        {
            carries: F.coalesce(carries_columns(), F.lit(False)),
            partial: F.coalesce(_partial_update(), F.lit(False)),
        }
    )


def _flag_aggregates(probe: Any, carries: Any) -> list[Any]:
    """``bool_or`` of the flags: of the stored :data:`FLAGS` when ``probe`` has them (the maps
    are then not read), else computed from the images (``carries`` as in :func:`overview`)."""
    from pyspark.sql import functions as F

    stored = all(name in probe.columns for name in FLAGS)
    flags = (F.col(name) for name in FLAGS) if stored else (carries, _partial_update())
    return [
        F.coalesce(F.bool_or(flag), F.lit(False)).alias(name)
        for name, flag in zip(FLAGS, flags, strict=True)
    ]


def _kept_event() -> Any:
    """An event the rules read whole: not a row (DDL, TRUNCATE, XA...), statement DML aside."""
    from pyspark.sql import functions as F

    return (~F.col("op").isin(*_ROW_OPS) | F.col("ddl_kind").isNotNull()) & ~F.col(
        "ddl_kind"
    ).eqNullSafe(F.lit("STATEMENT"))


def _newer_than(base: tuple[int, Mapping[str, Any]] | None) -> Any:
    """The events after the state ``base`` (None: the state names no event, every table
    counts as touched)."""
    from pyspark.sql import functions as F

    if base is None or base[1].get("after") is None:
        return None
    at = after_seq(base[1]["after"])
    seq = F.struct(
        *[
            F.lit(v).cast("bigint" if k in ("file_index", "pos") else "int").alias(k)
            for k, v in at.items()
        ]
    )
    return ((F.col("seq") > seq) & ~((F.col("op") == "r") & (F.col("seq") == seq))) | (
        F.col("seq.file_index") < 0
    )


@dataclass
class FirstLook:
    """What one query over a batch's events as read tells: the XA/RENAME ``marks`` (``seq``,
    ``op``, ``ddl``, ``ddl_kind``, ``database``, ``gtid``), the tables' ``shapes`` (as
    ``materialiser._shapes`` groups them) and the :class:`Overview`, which holds for the
    resolved events as long as resolving moves nothing (no marks, no names inherited)."""

    marks: list[Any]
    shapes: list[Any]
    overview: Overview
    position: list[dict[str, Any]] | None = None  # position.position_groups, when asked


def first_look(
    probe: Any,
    carries: Any,
    base: tuple[int, Mapping[str, Any]] | None,
    position: bool = False,
    fine: list[Any] | None = None,
) -> FirstLook:
    """:class:`FirstLook` of ``probe`` in one scan: every event falls in one group of its table,
    shape and DDL kind (an event kept whole, or a statement's text, is part of its group's key),
    so the marks, shapes, summaries, kept events, statement counts and touched tables of
    :func:`overview` and ``materialiser._resolve`` are all read from a few groups instead of
    a scan each. ``carries`` as in :func:`overview`. ``position``: the groups are of a GTID
    domain too, and give ``position.position_groups`` of ``probe`` (when ``probe`` is exactly
    the batch's own events: no state before it). The ``carries`` and ``partial`` flags are
    the stored :data:`FLAGS` when ``probe`` has them (:func:`with_flags`): no image is read.

    The groups are read by :func:`look_query` (hash aggregation) and merged here; a batch with
    a sequence it cannot order by one number (an offset of 4 GiB or more, a negative row) is
    read again by :func:`exact_look_query`. ``fine``: the groups of :func:`look_query` when
    they are known without it (the tasks that wrote the change log computed them:
    :mod:`fakemaster.spark.look_groups`)."""
    if fine is None:
        fine = look_query(probe, carries, base, position).collect()
    if any(group["unorderable"] for group in fine):
        groups = exact_look_query(probe, carries, base, position).collect()
    else:
        groups = merge_fine_groups(fine, position)
    touched = _newer_than(base) is not None
    kept_events = _kept_events(groups)
    marks = [
        _pick(_row(event, group, "gtid"), ("seq", "op", "ddl", "ddl_kind", "database", "gtid"))
        for event, group in kept_events
        if event["op"] == "xa" or group["ddl_kind"] == "RENAME_TABLE"
    ]
    return FirstLook(
        marks=marks,
        shapes=_group_shapes(groups),
        overview=_overview_of_groups(groups, kept_events, touched),
        position=by_domain(groups, "position_") if position else None,
    )


def _group_keys() -> list[Any]:
    """What every group of the first look is of: a table's shape and DDL kind, an event kept
    whole, a statement's text."""
    from pyspark.sql import functions as F

    kept = F.struct("seq", "op", "ddl", *_source_fields("file", "pos", "db", "gtid"))
    return [
        "database",
        "table",
        "columns",
        "column_types",
        "primary_key",
        "ddl_kind",
        F.when(_kept_event(), kept).alias("kept"),
        F.when(F.col("ddl_kind") == "STATEMENT", F.struct(F.col("ddl").alias("text"))).alias(
            "statement"
        ),
    ]


def exact_look_query(
    probe: Any,
    carries: Any,
    base: tuple[int, Mapping[str, Any]] | None,
    position: bool = False,
) -> Any:
    """The DataFrame of :func:`first_look`'s groups with their ``seq`` structs aggregated as
    they are (not collected). Spark aggregates a struct by sorting every event."""
    from pyspark.sql import functions as F

    newer = _newer_than(base)
    aggregates = [
        F.min("seq").alias("first"),
        F.max("seq").alias("last"),
        F.count(F.lit(1)).alias("n"),
        *_flag_aggregates(probe, carries),
    ]
    if newer is not None:
        aggregates.append(F.max(F.when(newer, F.col("seq"))).alias("newest"))
    keys = [gtid_domain().alias("domain")] if position else []
    if position:
        aggregates += position_aggregates(F.lit(True), prefix="position_")
    return probe.groupBy(*keys, *_group_keys()).agg(*aggregates)


# A sequence within one file as one number: its offset above its row. The event's number is
# not in it: one offset is one event (and a snapshot's rows all have event 0).
_ROW_BITS = 31
_OFFSET_LIMIT = 1 << 32  # a binlog offset is 32 bits; a snapshot's is its file's ordinal


def look_query(
    probe: Any,
    carries: Any,
    base: tuple[int, Mapping[str, Any]] | None,
    position: bool = False,
) -> Any:
    """The DataFrame of :func:`first_look`'s groups, finer (not collected): of each file too
    (and with ``position``, of each GTID domain, GTID server and source file), with the first
    and last sequence as numbers (``pos`` above ``row``) and the event at each. Every aggregate
    is of fixed width, so Spark aggregates by hashing, not by sorting every event
    (:func:`exact_look_query`); :func:`merge_fine_groups` gives its groups.
    ``unorderable``: a sequence outside what one number holds."""
    from pyspark.sql import functions as F

    orderable = (
        F.col("seq.pos").between(0, _OFFSET_LIMIT - 1)
        & (F.col("seq.row") >= 0)
        & F.col("seq.event").isNotNull()
    )
    order = F.when(orderable, F.col("seq.pos") * (1 << _ROW_BITS) + F.col("seq.row").cast("bigint"))
    newer = _newer_than(base)
    aggregates = [
        F.min(order).alias("first_order"),
        F.max(order).alias("last_order"),
        F.min_by("seq.event", order).alias("first_event"),
        F.max_by("seq.event", order).alias("last_event"),
        F.count(F.lit(1)).alias("n"),
        F.coalesce(F.bool_or(~orderable), F.lit(True)).alias("unorderable"),
        *_flag_aggregates(probe, carries),
    ]
    if newer is not None:
        aggregates.append(F.bool_or(newer).alias("newer"))
    keys = [F.col("seq.file_index").alias("file_index")]
    if position:
        gtid = F.split(F.col("source.gtid"), "-")
        keys += [
            gtid_domain().alias("domain"),
            gtid[1].cast("bigint").alias("gtid_server"),
            F.col("source.file").alias("source_file"),
        ]
        aggregates += [
            F.max_by("source.pos", order).alias("source_pos"),
            F.max_by(gtid[2].cast("bigint"), order).alias("source_gtid_seq"),
            F.max(gtid[2].cast("bigint")).alias("gtid_seq"),
        ]
    return probe.groupBy(*keys, *_group_keys()).agg(*aggregates)


def _seq_of(file_index: int, order: int, event: int) -> Any:
    from pyspark.sql import Row

    return Row(
        file_index=file_index,
        pos=order >> _ROW_BITS,
        event=event,
        row=order & ((1 << _ROW_BITS) - 1),
    )


def merge_fine_groups(fine: list[Any], position: bool) -> list[dict[str, Any]]:
    """The groups of :func:`exact_look_query` from those of :func:`look_query`: the groups of
    one table shape, DDL kind, kept event and statement (and GTID domain) merged across files
    (and GTID servers and source files), their first and last sequences as structs again."""
    merged: dict[tuple[Any, ...], dict[str, Any]] = {}
    touched = bool(fine) and "newer" in fine[0].__fields__  # a state before the batch
    names = ("database", "table", "columns", "column_types", "primary_key", "ddl_kind")
    for group in fine:
        key = tuple(
            tuple(group[name]) if isinstance(group[name], list) else group[name]
            for name in ("domain", *names, "kept", "statement")
            if name != "domain" or position
        )
        first = _seq_of(group["file_index"], group["first_order"], group["first_event"])
        last = _seq_of(group["file_index"], group["last_order"], group["last_event"])
        found = merged.get(key)
        if found is None:
            found = merged[key] = {name: group[name] for name in (*names, "kept", "statement")}
            found.update(first=first, last=last, n=0, carries=False, partial=False)
            if touched:
                found["newest"] = None
            if position:
                found.update(
                    domain=group["domain"],
                    position_at=None,
                    position_s=None,
                    position_n=0,
                    position_v=None,
                )
        found["first"] = min(found["first"], first, key=_seq_key)
        found["last"] = max(found["last"], last, key=_seq_key)
        found["n"] += int(group["n"])
        found["carries"] = found["carries"] or bool(group["carries"])
        found["partial"] = found["partial"] or bool(group["partial"])
        if touched and group["newer"]:
            found["newest"] = True
        if position and group["file_index"] >= 0:  # a snapshot's rows have no position
            _merge_position(found, group, last)
    return list(merged.values())


def _merge_position(found: dict[str, Any], group: Any, last: Any) -> None:
    """A fine group's part of the ``position_`` aggregates (``position.position_aggregates``)."""
    from pyspark.sql import Row

    found["position_n"] += int(group["n"])
    if found["position_at"] is None or _seq_key(last) > _seq_key(found["position_at"]):
        seq = group["source_gtid_seq"]
        gtid = None if seq is None else f"{group['domain']}-{group['gtid_server']}-{seq}"
        found["position_at"] = last
        found["position_s"] = Row(file=group["source_file"], pos=group["source_pos"], gtid=gtid)
    if group["gtid_seq"] is not None:
        latest = Row(seq=group["gtid_seq"], server=group["gtid_server"])
        if found["position_v"] is None or tuple(latest) > tuple(found["position_v"]):
            found["position_v"] = latest


def _source_fields(*names: str) -> list[Any]:
    """Fields of an event's ``source``, named as themselves."""
    from pyspark.sql import functions as F

    return [F.col(f"source.{name}").alias(name) for name in names]


def _seq_key(seq: Any) -> tuple[int, ...]:
    return tuple(seq)


def _kept_events(groups: list[Any]) -> list[tuple[Any, Any]]:
    """(event, its group) for each event kept whole, as often as it was read, in seq order."""
    found = [
        (group["kept"], group)
        for group in groups
        if group["kept"] is not None
        for _ in range(int(group["n"]))
    ]
    found.sort(key=lambda pair: _seq_key(pair[0]["seq"]))
    return found


def _row(event: Any, group: Any, *extra: str) -> Any:
    """An event kept whole as :func:`overview` lists it (plus ``extra`` fields of it)."""
    from pyspark.sql import Row

    fields = {
        "seq": event["seq"],
        "op": event["op"],
        "ddl": event["ddl"],
        "ddl_kind": group["ddl_kind"],
        "database": group["database"],
        "table": group["table"],
        "file": event["file"],
        "pos": event["pos"],
        "db": event["db"],
    }
    return Row(**fields, **{name: event[name] for name in extra})


def _pick(row: Any, names: tuple[str, ...]) -> Any:
    from pyspark.sql import Row

    return Row(**{name: row[name] for name in names})


def _group_shapes(groups: list[Any]) -> list[Any]:
    """Each table's TABLE_MAP shapes and DDL kinds with their first and last ``seq``."""
    from pyspark.sql import Row

    spans: dict[tuple[Any, ...], list[Any]] = {}
    for group in groups:
        if group["table"] is None or (group["columns"] is None and group["ddl_kind"] is None):
            continue
        columns, key = group["columns"], group["primary_key"]
        name = (
            group["database"],
            group["table"],
            None if columns is None else tuple(columns),
            None if key is None else tuple(key),
            group["ddl_kind"],
        )
        span = spans.setdefault(name, [group["first"], group["last"], columns, key])
        if _seq_key(group["first"]) < _seq_key(span[0]):
            span[0] = group["first"]
        if _seq_key(group["last"]) > _seq_key(span[1]):
            span[1] = group["last"]
    return [
        Row(
            database=name[0],
            table=name[1],
            columns=columns,
            primary_key=key,
            ddl_kind=name[4],
            first=first,
            last=last,
        )
        for name, (first, last, columns, key) in spans.items()
    ]


def _overview_of_groups(
    groups: list[Any], kept_events: list[tuple[Any, Any]], touched: bool
) -> Overview:
    from pyspark.sql import Row

    found = Overview(
        touched=set() if touched else None,
        events=[_row(event, group) for event, group in kept_events],
    )
    tables: dict[tuple[str, str], dict[str, Any]] = {}
    renames = False
    for group in groups:
        seq = group["last"]
        if found.last is None or _seq_key(seq) > _seq_key(found.last):
            found.last = seq
        if group["statement"] is not None:
            name = (group["statement"]["text"], group["database"])
            found.statements[name] = found.statements.get(name, 0) + int(group["n"])
        if touched and group["newest"] is not None:
            assert found.touched is not None
            found.touched.add((group["database"], group["table"]))
            renames = renames or group["ddl_kind"] in ("RENAME_TABLE", "DROP_DATABASE")
        if group["table"] is None:
            continue
        table = tables.setdefault(
            (group["database"], group["table"]),
            {"s": None, "carries": False, "partial": False, "mapped": None},
        )
        table["carries"] = table["carries"] or bool(group["carries"])
        table["partial"] = table["partial"] or bool(group["partial"])
        if group["columns"] is not None and (
            table["mapped"] is None or _seq_key(seq) > _seq_key(table["mapped"])
        ):
            table["mapped"] = seq
            table["s"] = Row(
                columns=group["columns"],
                column_types=group["column_types"],
                primary_key=group["primary_key"],
            )
    if renames:
        found.touched = None
    found.summary = [
        Row(database=database, table=table, **facts) for (database, table), facts in tables.items()
    ]
    return found


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
        "event": probe.where(_kept_event()).select(
            "seq",
            "op",
            "ddl",
            "ddl_kind",
            "database",
            "table",
            *_source_fields("file", "pos", "db"),
        ),
        "statement": probe.where(F.col("ddl_kind") == "STATEMENT")
        .groupBy("ddl", "database")
        .agg(F.count("*").alias("n")),
        "last": raw.agg(F.max("seq").alias("seq")),
    }
    newer = _newer_than(base)
    touched = newer is not None
    if touched:
        branches["touched"] = (
            probe.where(newer)
            .groupBy("database", "table")
            .agg(
                F.bool_or(F.col("ddl_kind").isin("RENAME_TABLE", "DROP_DATABASE")).alias("renames")
            )
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
