"""The change log written by the data source's own tasks (pyarrow), not by Spark's writer.

``pipeline batch`` with a local output directory reads its files with the data source's
``changeLog`` option: each task writes its file's change events, with the first look's flags
(:data:`fakemaster.spark.batch_overview.FLAGS`), as one Parquet file in the batch's directory
of the change log, from the Arrow batches it decodes, and gives Spark one row saying what it
wrote. Spark's writer converts every event to a JVM row and writes the nested images row by
row: on the 1 GB pipeline archive that was about half of the change log's time
(bench/README.md).

A task writes to a hidden name (Spark's reader skips names starting with ``.``) and renames
the file when it is whole, so a failed task leaves nothing the reader takes; a retried task
writes the same name with the same events (the name is made from the partition's files).

The flags are the same as :func:`fakemaster.spark.batch_overview.with_flags` computes in Spark
(tests/fakemaster/spark/test_change_log_files.py compares them), with Spark's default ANSI
mode: an image that is NULL has no size, and its comparisons are false.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Iterable, Sequence
from typing import Any

__all__ = ["WRITTEN_DDL", "flag_arrays", "part_name", "write_part"]

WRITTEN_DDL = "file STRING, events BIGINT, look STRING"
"""The rows of a read with ``changeLog``: one per input partition, the Parquet file it wrote
(its name in the batch's directory, NULL when it had no events), its events, and the first
look's groups of them (:class:`fakemaster.spark.look_groups.LookGroups`, JSON; NULL when
Spark must compute them)."""


def part_name(paths: Sequence[str], index: int) -> str:
    """The Parquet file of the partition reading ``paths`` (``index``: its first file's
    number): the same for every attempt of its task, different for every partition."""
    digest = hashlib.sha1("\0".join(paths).encode("utf-8")).hexdigest()[:16]
    return f"part-{index:08d}-{digest}.parquet"


def _sizes(images: Any) -> tuple[Any, Any]:
    """Each row's entry count of a map or list array, and whether it is not NULL."""
    import numpy as np
    import pyarrow.compute as pc  # type: ignore[import-untyped]

    offsets = images.offsets.to_numpy(zero_copy_only=False)
    valid = pc.is_valid(images).to_numpy(zero_copy_only=False)
    return np.diff(offsets), valid


def _first_values(entries: Any) -> dict[str, Any]:
    """A map's entries as a dict; of a repeated key the first, as Spark's ``element_at``."""
    found: dict[str, Any] = {}
    for key, value in entries or ():
        found.setdefault(key, value)
    return found


def _changes_key(before: Any, after: Any, key: Iterable[str]) -> bool:
    after_values = _first_values(after)
    before_values = _first_values(before)
    return any(
        after_values.get(k) is not None and after_values.get(k) != before_values.get(k) for k in key
    )


def flag_arrays(batch: Any) -> tuple[Any, Any]:
    """``carries`` and ``partial`` of every event of ``batch`` (an Arrow batch of change
    events), as Arrow booleans without NULLs."""
    import numpy as np
    import pyarrow as pa

    op = batch.column("op").to_numpy(zero_copy_only=False)
    update = op == "u"
    after_sizes, after_valid = _sizes(batch.column("after"))
    column_sizes, columns_valid = _sizes(batch.column("columns"))
    shorter = after_valid & columns_valid & (after_sizes < column_sizes)
    partial = update & (~columns_valid | shorter)
    carries = np.zeros(len(op), dtype=bool)
    candidates = np.flatnonzero(update & shorter)
    if len(candidates):
        # Updates with a partial after image: few, each looked at in Python.
        keys = batch.column("primary_key").take(candidates).to_pylist()
        befores = batch.column("before").take(candidates).to_pylist()
        afters = batch.column("after").take(candidates).to_pylist()
        for at, key, before, after in zip(candidates, keys, befores, afters, strict=True):
            carries[at] = key is not None and _changes_key(before, after, key)
    return pa.array(carries, pa.bool_()), pa.array(partial, pa.bool_())


def write_part(
    batches: Iterable[Any],
    directory: str,
    name: str,
    observe: Callable[[Any], None] | None = None,
) -> int:
    """Writes ``batches`` (Arrow batches of change events) with their flags as
    ``directory/name``, whole or not at all; returns the events written (0: no file).
    ``observe`` is given each batch written, with its flags."""
    import pyarrow as pa
    import pyarrow.parquet as pq  # type: ignore[import-untyped]

    from fakemaster.spark.batch_overview import FLAGS

    os.makedirs(directory, exist_ok=True)
    hidden = os.path.join(directory, f".{name}.{os.getpid()}.tmp")
    writer = None
    grouped: _TableRowGroups | None = None
    events = 0
    try:
        for batch in batches:
            if not batch.num_rows:
                continue
            flagged = pa.RecordBatch.from_arrays(
                [*batch.columns, *flag_arrays(batch)],
                names=[*batch.schema.names, *FLAGS],
            )
            if writer is None:
                writer = pq.ParquetWriter(
                    hidden,
                    flagged.schema,
                    compression="snappy",
                    # A row's image values hardly repeat: no dictionary for them (as the
                    # Spark writer's options in materialiser._plain_values).
                    use_dictionary=_dictionary_columns(flagged.schema),
                )
                grouped = _TableRowGroups(writer.write_table)
            assert grouped is not None
            grouped.add(flagged)
            if observe is not None:
                observe(flagged)  # in the order decoded, whatever the row groups' order
            events += batch.num_rows
        if writer is not None:
            assert grouped is not None
            grouped.flush()
            writer.close()
            writer = None
            os.replace(hidden, os.path.join(directory, name))
    finally:
        if writer is not None:
            writer.close()
        if os.path.exists(hidden):
            os.remove(hidden)
    return events


# A table's rows are held until this many (one row group), and all tables' until this many
# rows or bytes in all (then every table's are written).
_GROUP_ROWS = 1 << 16
_HELD_ROWS = 1 << 18
_HELD_BYTES = 64 << 20


class _TableRowGroups:
    """Writes a part's events in row groups of one table each (with ``write``), in sequence
    order within each table. The materialiser reads the change log one table at a time
    (``database = d AND table = t``): Parquet's statistics of a row group of one table let
    Spark skip the others' images, which it decodes whole in row groups of mixed tables."""

    def __init__(self, write: Callable[[Any], None]) -> None:
        self._write = write
        self._held: dict[Any, list[Any]] = {}
        self._held_rows: dict[Any, int] = {}
        self._held_bytes: dict[Any, int] = {}
        self._rows = 0
        self._bytes = 0

    def add(self, batch: Any) -> None:
        import pyarrow as pa
        import pyarrow.compute as pc

        names = pc.binary_join_element_wise(
            pc.fill_null(batch.column("database"), ""),
            pc.fill_null(batch.column("table"), ""),
            "\0",
        )
        tables = pc.unique(names)
        if len(tables) == 1:  # one table in the batch: written as it is, after its held rows
            self._flush(tables[0].as_py())
            self._write(pa.Table.from_batches([batch]))
            return
        for table in tables.to_pylist():
            rows = batch.filter(pc.equal(names, table))
            self._held.setdefault(table, []).append(rows)
            size = rows.nbytes
            self._held_rows[table] = self._held_rows.get(table, 0) + rows.num_rows
            self._held_bytes[table] = self._held_bytes.get(table, 0) + size
            self._rows += rows.num_rows
            self._bytes += size
            if self._held_rows[table] >= _GROUP_ROWS:
                self._flush(table)
        if self._rows >= _HELD_ROWS or self._bytes >= _HELD_BYTES:
            self.flush()

    def flush(self) -> None:
        for table in list(self._held):
            self._flush(table)

    def _flush(self, table: Any) -> None:
        import pyarrow as pa

        held = self._held.pop(table, None)
        if not held:
            return
        self._write(pa.Table.from_batches(held))
        self._rows -= self._held_rows.pop(table)
        self._bytes -= self._held_bytes.pop(table)


def _dictionary_columns(schema: Any) -> list[str]:
    """The leaf columns written with a dictionary: all but the images' values."""
    plain = {"before.key_value.value", "after.key_value.value"}
    leaves: list[str] = []

    def walk(prefix: str, field_type: Any) -> None:
        import pyarrow as pa

        if pa.types.is_map(field_type):
            walk(f"{prefix}.key_value.key", field_type.key_type)
            walk(f"{prefix}.key_value.value", field_type.item_type)
        elif pa.types.is_list(field_type):
            walk(f"{prefix}.list.element", field_type.value_type)
        elif pa.types.is_struct(field_type):
            for child in field_type:
                walk(f"{prefix}.{child.name}", child.type)
        elif prefix not in plain:
            leaves.append(prefix)

    for field in schema:
        walk(field.name, field.type)
    return leaves
