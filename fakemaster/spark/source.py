"""The PySpark Python data source ``fakemaster_binlog``: binlog files as a change-event table.

``spark.read.format("fakemaster_binlog").load(paths)`` reads binlog files (paths, directories
or glob patterns; local, or any URI pyarrow's filesystems open: ``s3://``, ``gs://``,
``hdfs://``), one input partition per file, so an archive decodes in parallel. Options:

``catalog``
    a schema catalogue (JSON text or the path of a JSON file) naming the columns and keys of
    tables whose files were written with ``binlog_row_metadata`` NO_LOG or MINIMAL.
``snapshot``
    a directory of ``<database>.<table>.jsonl`` files (one JSON object per row, column -> text,
    as ``scenarios.Oracle.export`` writes them): rows that existed before the first binlog
    event, emitted as ``r`` events ordered before every binlog event.
``batchRows``
    events per Arrow record batch (default 8192).
``filesPerPartition``
    binlog files read one after another in one input partition (default 1). Each partition is
    a task with a cost of its own (about 60 ms of one CPU in local mode, measured with a reader
    of no rows: bench/bench_spark_ceiling.py), so an archive of many files reads faster with
    about as many partitions as task slots, e.g. 4 for 8 files on ``local[2]``.
``progress``
    ``host:port``: where each task sends its file's progress (bytes and events decoded, as
    decoding proceeds), as UDP datagrams (:mod:`fakemaster.spark.progress`).
``changeLog``
    a local directory: each task writes its file's change events there as Parquet, with the
    first look's flags, and gives back one row, the file written, its events and the first
    look's groups of them (:mod:`fakemaster.spark.change_log_files`; the schema is then
    :data:`~fakemaster.spark.change_log_files.WRITTEN_DDL`). ``pipeline batch`` writes its
    change log this way when its output is local.
``table``
    ``database.table``: only that table's events, with typed images (``before``/``after`` as
    structs of its columns, typed as the materialised columns; schema from the first TABLE_MAP
    of it in the files, see :func:`fakemaster.spark.changes.typed_schema_ddl`).

Reads yield ``pyarrow.RecordBatch`` of exactly the schema :data:`CHANGE_EVENT_DDL` (built by
:func:`fakemaster.spark.changes.rows_to_arrow`).
"""

from __future__ import annotations

import glob
import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition
from pyspark.sql.types import StructType

from fakemaster.spark import FORMAT_NAME
from fakemaster.spark.change_log_files import WRITTEN_DDL, part_name, write_part
from fakemaster.spark.changes import (
    CHANGE_EVENT_DDL,
    file_index,
    find_table,
    read_snapshot_file,
    typed_batch,
    typed_schema_ddl,
)
from fakemaster.spark.changes_columnar import read_changes_fast
from fakemaster.spark.columns import TableInfo, load_catalogue
from fakemaster.spark.look_groups import LookGroups
from fakemaster.spark.progress import ProgressSender
from fakemaster.spark.read_errors import BinlogReadError
from fakemaster.spark.uris import resolve_path

__all__ = [
    "BinlogBatchReader",
    "BinlogDataSource",
    "BinlogFile",
    "BinlogFileGroup",
    "expand_paths",
    "register",
]

_SKIPPED_SUFFIXES = (".index", ".state", ".jsonl", ".json")


def _is_uri(path: str) -> bool:
    return "://" in path and not path.startswith("file://")


def _local(path: str) -> str:
    return path[len("file://") :] if path.startswith("file://") else path


def expand_paths(paths: list[str]) -> list[str]:
    """Every binlog file the given paths name: a directory stands for the files in it (not
    ``*.index`` or other non-binlog names), a pattern for its matches; sorted by file number
    within each argument. Remote URIs are listed with pyarrow's filesystems; local paths are
    made absolute (:func:`fakemaster.spark.uris.resolve_path`: the executors open them)."""
    files: list[str] = []
    for raw in map(resolve_path, paths):
        if _is_uri(raw):
            files += _expand_remote(raw)
            continue
        path = _local(raw)
        if os.path.isdir(path):
            found = [
                os.path.join(path, name)
                for name in os.listdir(path)
                if os.path.isfile(os.path.join(path, name)) and not name.endswith(_SKIPPED_SUFFIXES)
            ]
        elif any(ch in path for ch in "*?["):
            found = [p for p in glob.glob(path) if os.path.isfile(p)]
        else:
            found = [path]
        files += sorted(found, key=lambda p: (file_index(p, -1), p))
    return files


def _expand_remote(uri: str) -> list[str]:
    from pyarrow import fs  # type: ignore[import-untyped]

    filesystem, path = fs.FileSystem.from_uri(uri)
    info = filesystem.get_file_info(path)
    if info.type != fs.FileType.Directory:
        return [uri]
    infos = filesystem.get_file_info(fs.FileSelector(path))
    base = uri.rstrip("/")
    names = sorted(
        (i.base_name for i in infos if i.type == fs.FileType.File),
        key=lambda n: (file_index(n, -1), n),
    )
    return [f"{base}/{n}" for n in names if not n.endswith(_SKIPPED_SUFFIXES)]


@dataclass
class BinlogFile(InputPartition):
    """One input partition: one binlog file (or one snapshot file)."""

    path: str
    index: int
    snapshot: bool = False


@dataclass
class BinlogFileGroup(InputPartition):
    """One input partition of several binlog files, read in turn (``filesPerPartition``)."""

    files: tuple[BinlogFile, ...]


def _options(options: Any) -> dict[str, str]:
    """The data source's options with lower-case names (Spark's option names are
    case-insensitive: ``maxRowsPerBatch`` arrives as ``maxrowsperbatch``)."""
    return {str(k).lower(): str(v) for k, v in dict(options).items()}


def _paths_option(options: dict[str, str]) -> list[str]:
    paths: list[str] = []
    if options.get("paths"):
        value = json.loads(options["paths"])
        paths += [value] if isinstance(value, str) else list(value)
    if options.get("path"):
        paths.append(options["path"])
    return paths


def _typed_table(options: dict[str, str]) -> TableInfo | None:
    qualified = options.get("table")
    if not qualified:
        return None
    files = [p for p in expand_paths(_paths_option(options)) if not _is_uri(p)]
    return find_table([_local(p) for p in files], qualified, load_catalogue(options.get("catalog")))


class BinlogBatchReader(DataSourceReader):
    def __init__(self, options: dict[str, str], table: TableInfo | None = None) -> None:
        self.options = options
        self.catalogue = load_catalogue(options.get("catalog"))
        self.batch_rows = int(options.get("batchrows", "8192"))
        self.files_per_partition = int(options.get("filesperpartition", "1"))
        if self.files_per_partition < 1:
            raise ValueError(f"{FORMAT_NAME}: filesPerPartition must be at least 1")
        self.table = table

    def read(self, partition: InputPartition) -> Iterator[Any]:
        directory = self.options.get("changelog")
        if directory is None:
            yield from self._events(partition)
            return
        if isinstance(partition, BinlogFileGroup):
            files = partition.files
        elif isinstance(partition, BinlogFile):
            files = (partition,)
        else:
            raise TypeError(f"not a binlog file partition: {partition!r}")
        name = part_name([f.path for f in files], files[0].index)
        look = LookGroups()
        events = write_part(self._events(partition), _local(directory), name, look.add)
        yield (name if events else None, events, look.result())

    def _events(self, partition: InputPartition) -> Iterator[Any]:
        if isinstance(partition, BinlogFileGroup):
            for one in partition.files:
                yield from self._read_binlog(one)
            return
        if not isinstance(partition, BinlogFile):
            raise TypeError(f"not a binlog file partition: {partition!r}")
        if not partition.snapshot:
            yield from self._read_binlog(partition)
            return
        batches = read_snapshot_file(
            partition.path, partition.index, batch_rows=self.batch_rows, catalogue=self.catalogue
        )
        if self.table is None:
            yield from batches
            return
        for batch in batches:
            typed = typed_batch(batch, self.table)
            if typed.num_rows:
                yield typed

    def partitions(self) -> list[BinlogFile | BinlogFileGroup]:
        parts: list[BinlogFile | BinlogFileGroup] = []
        snapshot = self.options.get("snapshot")
        snapshot = resolve_path(snapshot) if snapshot else None
        if snapshot:
            names = sorted(n for n in os.listdir(_local(snapshot)) if n.endswith(".jsonl"))
            parts += [
                BinlogFile(os.path.join(_local(snapshot), n), ordinal, True)
                for ordinal, n in enumerate(names)
            ]
        files = expand_paths(_paths_option(self.options))
        binlogs = [BinlogFile(p, file_index(p, ordinal), False) for ordinal, p in enumerate(files)]
        k = self.files_per_partition
        if k == 1:
            parts += binlogs
        else:
            parts += [BinlogFileGroup(tuple(binlogs[i : i + k])) for i in range(0, len(binlogs), k)]
        if not parts:
            raise ValueError(f"{FORMAT_NAME}: no binlog files in {_paths_option(self.options)}")
        return parts

    def _read_binlog(self, partition: BinlogFile) -> Iterator[Any]:
        """The file's change events; an error names the file (and the offset, where the
        decoder gives one) in one line (:class:`BinlogReadError`)."""
        address = self.options.get("progress")
        sender = None
        try:
            if address:
                sender = ProgressSender(address, partition.path, _size_of(partition.path))
            yield from self._decode(partition, sender)
            if sender is not None:
                sender.send(done=True)
        except Exception as exc:  # noqa: BLE001 - any decoding error, named with its file
            raise BinlogReadError(partition.path, exc) from exc
        finally:
            if sender is not None:
                sender.close()

    def _decode(self, partition: BinlogFile, sender: ProgressSender | None) -> Iterator[Any]:
        if _is_uri(partition.path):
            from pyarrow import fs

            filesystem, path = fs.FileSystem.from_uri(partition.path)
            with filesystem.open_input_stream(path) as stream:
                yield from read_changes_fast(
                    stream,
                    partition.path,
                    partition.index,
                    catalogue=self.catalogue,
                    batch_rows=self.batch_rows,
                    table=self.table,
                    progress=sender,
                )
            return
        yield from read_changes_fast(
            _local(partition.path),
            partition.path,
            partition.index,
            catalogue=self.catalogue,
            batch_rows=self.batch_rows,
            table=self.table,
            progress=sender,
        )


def _size_of(path: str) -> int:
    if _is_uri(path):
        from pyarrow import fs

        filesystem, inner = fs.FileSystem.from_uri(path)
        return int(filesystem.get_file_info(inner).size or 0)
    return os.path.getsize(_local(path))


class BinlogDataSource(DataSource):
    """``spark.read.format("fakemaster_binlog")``: see the module docstring."""

    @classmethod
    def name(cls) -> str:
        return FORMAT_NAME

    def schema(self) -> str:
        if "changelog" in _options(self.options):
            if "table" in _options(self.options):
                # The change log holds change events, not one table's typed images.
                raise ValueError(
                    f"{FORMAT_NAME}: the options changeLog and table exclude each other"
                )
            return WRITTEN_DDL
        table = _typed_table(_options(self.options))
        return CHANGE_EVENT_DDL if table is None else typed_schema_ddl(table)

    def streamReader(self, schema: StructType) -> Any:
        from fakemaster.spark.stream import BinlogStreamReader

        return BinlogStreamReader(_options(self.options))

    def reader(self, schema: StructType) -> BinlogBatchReader:
        options = _options(self.options)
        return BinlogBatchReader(options, _typed_table(options))


def register(spark: Any) -> None:
    """Register the data source with a SparkSession (once per session is enough)."""
    spark.dataSource.register(BinlogDataSource)
