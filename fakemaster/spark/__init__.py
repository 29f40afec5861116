"""The CDC pipeline on Spark (the optional extra ``fakemaster[spark]``: PySpark 4.x, pyarrow).

Binlog files become a change-event table through a PySpark Python data source
(``spark.read.format("fakemaster_binlog").load(paths)``), and change events become the current
state of each table as Parquet (:class:`~fakemaster.spark.materialiser.Materialiser`). docs/spark.md
has the schema, the materialisation rules and how to run it on a cluster.

Names are imported on first use: ``import fakemaster`` never imports this package, and
``import fakemaster.spark`` imports neither PySpark nor pyarrow until a name needs them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from fakemaster import _lazy_attributes

if TYPE_CHECKING:
    from fakemaster.spark.changes import CHANGE_EVENT_DDL, arrow_schema, read_changes
    from fakemaster.spark.materialiser import Materialiser, materialise
    from fakemaster.spark.source import BinlogDataSource, register

FORMAT_NAME = "fakemaster_binlog"
"""The name the data source is registered under."""

_LAZY = {
    "BinlogDataSource": "fakemaster.spark.source",
    "CHANGE_EVENT_DDL": "fakemaster.spark.changes",
    "Materialiser": "fakemaster.spark.materialiser",
    "arrow_schema": "fakemaster.spark.changes",
    "materialise": "fakemaster.spark.materialiser",
    "read_changes": "fakemaster.spark.changes",
    "register": "fakemaster.spark.source",
}

__all__ = [
    "CHANGE_EVENT_DDL",
    "FORMAT_NAME",
    "BinlogDataSource",
    "Materialiser",
    "arrow_schema",
    "materialise",
    "read_changes",
    "register",
]

__getattr__, __dir__ = _lazy_attributes(__name__, globals(), _LAZY)
