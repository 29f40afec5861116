"""The materialiser's compact state: what batches 0..N leave for batch N+1 (docs/spark.md,
"Materialisation").

Layout, under ``OUT/state/batch_id=N/``::

    meta.json          after (the seq the state's rows take), position, per table its carried
                       shape, statement-format DML counts, primary keys
    tables/<db.table>/ the table's rows as images (``image map<string,string>``, the text
                       forms the rules produce, before typing)
    events/            the change events the rules still need as events: the DDL that shapes
                       or renames tables (CREATE, ALTER, RENAME, DROP, DROP DATABASE), the
                       rows and XA PREPARE of transactions still prepared, the rows of tables
                       that could not be written

Batch N+1 is computed from state N and its own events, never from the batches before it: the
state's rows are change events ``r`` at a sequence after every event folded into it (and
before every later one), so the rules applied to state + batch give what they give on the
whole log. ``meta.json`` is written last: a state without it is incomplete and never read.
Two states are kept, the last one and the one before it, so a replayed last batch is computed
again from the same state.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from collections.abc import Mapping
from typing import Any

__all__ = ["StateStore", "after_seq"]

_STATE = re.compile(r"^batch_id=(-?\d+)$")


def after_seq(seq: Mapping[str, Any], extra: int = 1) -> dict[str, int]:
    """The sequence ``extra`` rows after ``seq``: no later binlog event can have it (an event's
    rows all arrive in one batch) and it sorts after every event up to ``seq``."""
    return {
        "file_index": int(seq["file_index"]),
        "pos": int(seq["pos"]),
        "event": int(seq["event"]),
        "row": int(seq["row"]) + extra,
    }


class StateStore:
    """The states of ``out`` (a local directory: states are listed and removed with ``os``)."""

    def __init__(self, out: str) -> None:
        self.root = f"{out}/state"

    def path(self, batch_id: int) -> str:
        return f"{self.root}/batch_id={batch_id}"

    def table_path(self, batch_id: int, name: str) -> str:
        return f"{self.path(batch_id)}/tables/{name}"

    def events_path(self, batch_id: int) -> str:
        return f"{self.path(batch_id)}/events"

    def _local(self, path: str) -> str:
        return path[len("file://") :] if path.startswith("file://") else path

    def complete(self) -> list[int]:
        """Ids of the states whose ``meta.json`` was written, ascending."""
        root = self._local(self.root)
        if not os.path.isdir(root):
            return []
        found = []
        for name in os.listdir(root):
            match = _STATE.match(name)
            if match and os.path.exists(os.path.join(root, name, "meta.json")):
                found.append(int(match.group(1)))
        return sorted(found)

    def base(self, batch_id: int) -> tuple[int, dict[str, Any]] | None:
        """The state batch ``batch_id`` starts from: the latest complete one before it."""
        earlier = [b for b in self.complete() if b < batch_id]
        if not earlier:
            return None
        with open(self._local(self.meta_path(earlier[-1])), encoding="utf-8") as handle:
            return earlier[-1], json.load(handle)

    def meta_path(self, batch_id: int) -> str:
        return f"{self.path(batch_id)}/meta.json"

    def begin(self, batch_id: int) -> None:
        """Clears what an earlier (interrupted or replayed) run left as state ``batch_id``."""
        shutil.rmtree(self._local(self.path(batch_id)), ignore_errors=True)

    def finish(self, batch_id: int, meta: Mapping[str, Any]) -> None:
        path = self._local(self.meta_path(batch_id))
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path + ".tmp", "w", encoding="utf-8") as handle:
            json.dump(meta, handle, indent=1, sort_keys=True)
        os.replace(path + ".tmp", path)

    def write_no_events(self, batch_id: int) -> None:
        """State ``batch_id`` keeps no event: its events dataset empty, written without Spark
        (a directory with only ``_SUCCESS``; read with the change log's schema, as
        :meth:`carried` reads it, it has no row)."""
        path = self._local(self.events_path(batch_id))
        shutil.rmtree(path, ignore_errors=True)
        os.makedirs(path)
        with open(os.path.join(path, "_SUCCESS"), "wb"):
            pass

    def prune(self, keep: set[int]) -> None:
        """Removes every state but ``keep``."""
        root = self._local(self.root)
        if not os.path.isdir(root):
            return
        for name in os.listdir(root):
            match = _STATE.match(name)
            if match and int(match.group(1)) not in keep:
                shutil.rmtree(os.path.join(root, name), ignore_errors=True)

    def reuse(self, source: int, target: int, name: str) -> None:
        """Table ``name``'s images of state ``source`` as those of state ``target`` (hard
        links: a table the batch does not touch costs no copy)."""
        src = self._local(self.table_path(source, name))
        dst = self._local(self.table_path(target, name))
        os.makedirs(dst, exist_ok=True)
        for entry in os.listdir(src):
            try:
                os.link(os.path.join(src, entry), os.path.join(dst, entry))
            except OSError:  # another filesystem: a copy
                shutil.copy2(os.path.join(src, entry), os.path.join(dst, entry))

    def carried(self, spark: Any, base: tuple[int, Mapping[str, Any]] | None, schema: Any) -> Any:
        """(full, probe): state ``base`` as change events of ``schema``. ``full`` has every
        row image of every table; ``probe`` one row per table (an empty image: what the
        per-log summaries need, without reading the tables) and the kept events of both."""
        from pyspark.sql import functions as F

        empty = spark.createDataFrame([], schema)
        if base is None:
            return empty, empty
        batch_id, meta = base
        events = spark.read.schema(schema).parquet(self.events_path(batch_id))
        if meta.get("after") is None:  # nothing applied yet (empty batches): no table
            return events, events
        seq = after_seq(meta["after"])
        typed = {f.name: f.dataType for f in schema.fields}

        def row_of(table: Mapping[str, Any], image: Any) -> list[Any]:
            shape = table.get("shape") or {}

            def strings(values: Any) -> Any:
                if values is None:
                    return F.lit(None).cast("array<string>")
                return F.array(*[F.lit(v) for v in values]).cast("array<string>")

            given = {
                "op": F.lit("r"),
                "database": F.lit(table["database"]),
                "table": F.lit(table["table"]),
                "after": image,
                "seq": F.struct(
                    *[F.lit(v).cast(typed["seq"][k].dataType).alias(k) for k, v in seq.items()]
                ),
                "columns": strings(shape.get("columns")),
                "column_types": strings(shape.get("column_types")),
                "primary_key": strings(shape.get("primary_key")),
            }
            return [
                given.get(f.name, F.lit(None)).cast(f.dataType).alias(f.name) for f in schema.fields
            ]

        tables = meta.get("tables", [])
        if not tables:
            return events, events
        probe = spark.createDataFrame(
            [
                {
                    **{f.name: None for f in schema.fields},
                    "op": "r",
                    "database": t["database"],
                    "table": t["table"],
                    "after": {},
                    "seq": seq,
                    **{k: (t.get("shape") or {}).get(k) for k in _SHAPE},
                }
                for t in tables
            ],
            schema,
        )
        full = events
        for table in tables:
            images = spark.read.schema("image map<string,string>").parquet(
                self.table_path(batch_id, f"{table['database']}.{table['table']}")
            )
            full = full.unionByName(images.select(*row_of(table, F.col("image"))))
        return full, events.unionByName(probe)


_SHAPE = ("columns", "column_types", "primary_key")
