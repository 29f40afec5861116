"""The first look's groups of a task's events, computed by the task that decodes them.

:func:`fakemaster.spark.batch_overview.look_query` groups a batch's change events by file,
GTID domain, GTID server, source file, table, shape, DDL kind, event kept whole and statement,
with each group's first and last sequence (as one number, the offset above the row), the
events at them, its count, its flags and its position. Every key holds the file's index, so the
groups of a file's events are all in the task that decodes the file: :class:`LookGroups` reads
them from the Arrow batches as the change log is written (``change_log_files``), and the driver
merges them as it merges Spark's (``merge_fine_groups``), without reading the change log again.

The events of a file come in sequence order (the decoder sorts them): the first and last of a
group are its first and last rows. Where that or anything else the numbers rest on does not
hold (an event out of order, a sequence one number cannot hold, a GTID that is not three
numbers, a NUL in a column name), :meth:`LookGroups.result` is None and the driver asks Spark
(tests/fakemaster/spark/test_look_groups.py compares the two on every built-in scenario).
"""

from __future__ import annotations

import json
from typing import Any

# The order of an event within its file as look_query computes it (pos << _ROW_BITS | row),
# and which events are rows: one definition, batch_overview's.
from fakemaster.spark.batch_overview import _OFFSET_LIMIT, _ROW_BITS, _ROW_OPS

__all__ = ["LookGroups", "look_rows"]

_LISTS = ("columns", "column_types", "primary_key")
_KEYS = (
    "file_index",
    "domain",
    "gtid_server",
    "source_file",
    "database",
    "table",
    *(f"{name}_{part}" for name in _LISTS for part in ("n", "text")),
    "ddl_kind",
    "kept_at",
    "statement_is",
    "statement",
)


class LookGroups:
    """The groups of the batches :meth:`add` is given, in the order they were decoded."""

    def __init__(self) -> None:
        self._groups: dict[tuple[Any, ...], dict[str, Any]] = {}
        self._last: tuple[int, int] | None = None  # the last (file_index, order) seen
        self._rows = 0
        self._valid = True

    def add(self, batch: Any) -> None:
        if not self._valid or not batch.num_rows:
            return
        try:
            self._add(batch)
        except _NotOrderly:
            self._valid = False
            self._groups.clear()

    def result(self) -> str | None:
        """The groups as JSON (:func:`look_rows` reads them back), None when they cannot be
        known this way."""
        if not self._valid:
            return None
        return json.dumps(list(self._groups.values()), separators=(",", ":"))

    def _add(self, batch: Any) -> None:
        import numpy as np
        import pyarrow as pa  # type: ignore[import-untyped]
        import pyarrow.compute as pc  # type: ignore[import-untyped]

        n = batch.num_rows
        seq = batch.column("seq")
        fields = {name: seq.field(name) for name in ("file_index", "pos", "event", "row")}
        if any(f.null_count for f in fields.values()) or seq.null_count:
            raise _NotOrderly
        file_index = fields["file_index"].to_numpy(zero_copy_only=False).astype(np.int64)
        pos = fields["pos"].to_numpy(zero_copy_only=False).astype(np.int64)
        row = fields["row"].to_numpy(zero_copy_only=False).astype(np.int64)
        event = fields["event"].to_numpy(zero_copy_only=False).astype(np.int64)
        if (pos < 0).any() or (pos >= _OFFSET_LIMIT).any() or (row < 0).any():
            raise _NotOrderly
        order = (pos << _ROW_BITS) + row
        self._check_order(file_index, order)
        source = _fields(batch.column("source"))
        gtid = source["gtid"]
        domain, server, gtid_seq = _gtid_parts(gtid)
        columns: dict[str, Any] = {
            "file_index": pa.array(file_index),
            "domain": domain,
            "gtid_server": server,
            "source_file": source["file"],
            "database": batch.column("database"),
            "table": batch.column("table"),
        }
        for name in _LISTS:
            values = batch.column(name)
            flat = pc.list_flatten(values)
            if flat.null_count or pc.any(pc.match_substring(flat, "\0")).as_py():
                raise _NotOrderly
            columns[f"{name}_n"] = pc.list_value_length(values)
            columns[f"{name}_text"] = pc.binary_join(values, "\0")
        op = batch.column("op")
        if op.null_count:
            raise _NotOrderly
        ddl_kind = batch.column("ddl_kind")
        statement = pc.fill_null(pc.equal(ddl_kind, "STATEMENT"), False)
        kept = pc.and_(
            pc.or_(pc.invert(pc.is_in(op, pa.array(_ROW_OPS))), pc.is_valid(ddl_kind)),
            pc.invert(statement),
        )
        kept = pc.fill_null(kept, False)
        at = np.arange(self._rows, self._rows + n, dtype=np.int64)
        columns["ddl_kind"] = ddl_kind
        # An event kept whole is a group of its own (Spark's groups of equal kept events are
        # merged with the rest in the driver).
        columns["kept_at"] = pa.array(at, mask=~kept.to_numpy(zero_copy_only=False))
        # Spark's key is a struct of the text: a statement without text is a group too.
        columns["statement_is"] = statement
        columns["statement"] = pc.if_else(
            statement, batch.column("ddl"), pa.scalar(None, pa.string())
        )
        columns["at"] = pa.array(at)
        columns["carries"] = pc.fill_null(batch.column("carries"), False)
        columns["partial"] = pc.fill_null(batch.column("partial"), False)
        columns["gtid_seq"] = gtid_seq
        table = pa.table(columns)
        grouped = table.group_by(list(_KEYS), use_threads=False).aggregate(
            [
                ("at", "min"),
                ("at", "max"),
                ("at", "count"),
                ("carries", "any"),
                ("partial", "any"),
                ("gtid_seq", "max"),
            ]
        )
        local = {
            "order": order,
            "event": event,
            "source": source,
            "source_pos": source["pos"],
            "gtid_seq": gtid_seq,
        }
        for group in grouped.to_pylist():
            self._merge(batch, group, local)
        self._rows += n

    def _check_order(self, file_index: Any, order: Any) -> None:
        """Raises :class:`_NotOrderly` unless (file_index, order) strictly increases."""
        same = file_index[1:] == file_index[:-1]
        if (file_index[1:] < file_index[:-1]).any() or (same & (order[1:] <= order[:-1])).any():
            raise _NotOrderly
        first = (int(file_index[0]), int(order[0]))
        if self._last is not None and first <= self._last:
            raise _NotOrderly
        self._last = (int(file_index[-1]), int(order[-1]))

    def _merge(self, batch: Any, group: dict[str, Any], local: dict[str, Any]) -> None:
        first = group["at_min"] - self._rows
        last = group["at_max"] - self._rows
        key = tuple(group[name] for name in _KEYS)
        found = self._groups.get(key)
        if found is None:
            found = self._groups[key] = _new_group(batch, group, first, local)
        found["last_order"] = int(local["order"][last])
        found["last_event"] = int(local["event"][last])
        found["n"] += int(group["at_count"])
        found["carries"] = found["carries"] or bool(group["carries_any"])
        found["partial"] = found["partial"] or bool(group["partial_any"])
        found["source_pos"] = local["source_pos"][last].as_py()
        found["source_gtid_seq"] = local["gtid_seq"][last].as_py()
        seq = group["gtid_seq_max"]
        if seq is not None and (found["gtid_seq"] is None or seq > found["gtid_seq"]):
            found["gtid_seq"] = seq


class _NotOrderly(Exception):
    """The batches break what the groups' numbers rest on: Spark reads the look instead."""


def _fields(struct: Any) -> dict[str, Any]:
    """A struct column's fields, NULL where the struct is (as Spark reads ``source.gtid``)."""
    return dict(zip([field.name for field in struct.type], struct.flatten(), strict=True))


def _gtid_parts(gtid: Any) -> tuple[Any, Any, Any]:
    """Domain, server and sequence number of each GTID (NULL without one)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    valid = pc.is_valid(gtid)
    well_formed = pc.match_substring_regex(gtid, r"^[0-9]{1,18}-[0-9]{1,18}-[0-9]{1,18}$")
    if not pc.all(pc.or_(pc.invert(valid), pc.fill_null(well_formed, False))).as_py():
        raise _NotOrderly
    parts = pc.split_pattern(gtid, "-")
    return tuple(pc.cast(pc.list_element(parts, i), pa.int64()) for i in range(3))


def _new_group(
    batch: Any, group: dict[str, Any], first: int, local: dict[str, Any]
) -> dict[str, Any]:
    """A group as look_query names its fields, from its first row in ``batch``."""
    found: dict[str, Any] = {
        "file_index": group["file_index"],
        "domain": group["domain"],
        "gtid_server": group["gtid_server"],
        "source_file": group["source_file"],
        "database": group["database"],
        "table": group["table"],
    }
    for name in _LISTS:
        found[name] = batch.column(name)[first].as_py()
    found["ddl_kind"] = group["ddl_kind"]
    found["kept"] = None
    if group["kept_at"] is not None:
        source = local["source"]
        found["kept"] = {
            "seq": batch.column("seq")[first].as_py(),
            "op": batch.column("op")[first].as_py(),
            "ddl": batch.column("ddl")[first].as_py(),
            **{name: source[name][first].as_py() for name in ("file", "pos", "db", "gtid")},
        }
    found["statement"] = {"text": group["statement"]} if group["statement_is"] else None
    found.update(
        first_order=int(local["order"][first]),
        last_order=None,
        first_event=int(local["event"][first]),
        last_event=None,
        n=0,
        unorderable=False,
        carries=False,
        partial=False,
        source_pos=None,
        source_gtid_seq=None,
        gtid_seq=None,
    )
    return found


_SEQ_FIELDS = ("file_index", "pos", "event", "row")
_KEPT_FIELDS = ("seq", "op", "ddl", "file", "pos", "db", "gtid")


def look_rows(texts: list[str]) -> list[Any]:
    """The tasks' groups (:meth:`LookGroups.result` of each) as the rows of ``look_query``
    with a position (``Row`` objects with its fields, in its order)."""
    from pyspark.sql import Row

    rows = []
    for text in texts:
        for group in json.loads(text):
            kept = group["kept"]
            if kept is not None:
                seq = Row(**{name: kept["seq"][name] for name in _SEQ_FIELDS})
                kept = Row(**{name: seq if name == "seq" else kept[name] for name in _KEPT_FIELDS})
            statement = group["statement"]
            if statement is not None:
                statement = Row(text=statement["text"])
            rows.append(Row(**{**group, "kept": kept, "statement": statement}))
    return rows
