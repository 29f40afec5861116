"""The streaming side of ``fakemaster_binlog``: a primary's binlog, read as a replica with the
project's client (:mod:`fakemaster.client`), as micro-batches of change events.

``spark.readStream.format("fakemaster_binlog").option("host", H).option("port", P)``; options
``user``, ``password``, ``serverId`` (the replica's server id, default 4242; the planner's
scans use ``serverId + 1``), ``gtidMode`` (``true``: connect and resume by GTID, from ``startGtid``; default false: by
file and position, from ``startFile``/``startPos``, default the first file), ``maxRowsPerBatch``
(admission control on Spark 4.2+: a batch ends at the first group boundary at or past that many
change rows, at least one group), ``catalog``, ``columnar`` (default true: the batches are built
from the groups' event bytes by the columnar path of :mod:`fakemaster.spark.changes_columnar`, the same rows
as the reference path, which ``false`` selects and which a catalogue, a TIME column or another
of that module's fallback cases selects for the events concerned), and TLS as the mariadb
client's options: ``ssl`` (``true``: TLS, never a plain fallback), ``sslCa`` (a CA file: the
server's certificate and name verified), ``sslVerifyServerCert`` (``true``: verified against the
system's CAs without ``sslCa``), ``sslCert``/``sslKey`` (a client certificate), and
``compress`` (``true``: the compressed protocol when the primary offers it, the mariadb
client's ``--compress``; inside TLS too). Accounts identified via ed25519 log in as
mysql_native_password ones do.

A lost primary is retried as a MariaDB replica retries it: ``connectRetry`` seconds between
attempts (``MASTER_CONNECT_RETRY``, default 60; the backoff starts at 0.05 s and doubles up to
it) and ``retryCount`` attempts in a row (``master_retry_count``, default 100000), each one
reported on stderr (:func:`report_attempt`). An error a new connection cannot get past (ERR
1236: the primary came back with the position purged or rewound) ends the query with
:class:`StreamSourceError`, never a silent gap.

Offsets are JSON dicts with primitive leaves in one key order::

    {"gtid": "0-1-100,1-1-7", "file": "mysql-bin.000003", "pos": 1234, "event": 0, "row": 0}

the resume position after the last whole event group of the batch (``gtid``: the last
committed GTID per domain; ``file``/``pos``: just after the group's commit event; ``event``,
``row``: events and rows of the next group already delivered, always 0 since batches end at
group boundaries). A batch ``[start, end)`` is read again, on a new connection, from ``start``
until ``end`` is reached: a query restarted from its checkpoint re-reads exactly the batch it
had not committed. Binlog positions in the stream's change events (``source.pos``,
``seq.pos``) are the events' *end* positions (the header's ``log_pos``), which a stream gives,
not their start offsets as the batch path does; the order is the same.

``latestOffset`` finds the end of a batch by reading the primary from ``start`` with a
non-blocking dump (the rows are read twice: once to plan, once in ``read``);
``prepareForTriggerAvailableNow`` pins the end of the binlog from the initial offset (a full
scan): an ``availableNow`` query stops there.
"""

from __future__ import annotations

import os
import ssl
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from pyspark.sql.datasource import DataSourceStreamReader, InputPartition

from fakemaster.client.blocking import BlockingReplica, ReconnectPolicy
from fakemaster.client.position import CommittedGroup, Position, ReceivedEvent
from fakemaster.client.protocol import ClientConfig, ClientError
from fakemaster.client.tls import tls_context
from fakemaster.spark.changes import EventColumns, FileState, add_event, file_index, rows_to_arrow
from fakemaster.spark.changes_columnar import events_table
from fakemaster.spark.columns import Catalogue, load_catalogue
from fakemaster.vocabulary.constants import ChecksumAlg
from fakemaster.vocabulary.events import FormatDescriptionEvent, GtidEvent, RowsEvent

try:  # Spark 4.2+: admission control and availableNow
    from pyspark.sql.streaming.datasource import (
        ReadAllAvailable,
        ReadMaxRows,
        SupportsTriggerAvailableNow,
    )

    _AVAILABLE_NOW: tuple[type, ...] = (SupportsTriggerAvailableNow,)
except ImportError:  # 4.0/4.1: latestOffset() without arguments, no availableNow pinning
    ReadAllAvailable = ReadMaxRows = None  # type: ignore[assignment,misc]
    _AVAILABLE_NOW = ()

ADMISSION_CONTROL = bool(_AVAILABLE_NOW)
"""Whether this PySpark has admission control for Python streaming sources (4.2+:
``pyspark.sql.streaming.datasource``, ``latestOffset(start, limit)``, availableNow pinning).
Without it (4.0/4.1) ``maxRowsPerBatch`` is ignored: every batch reads to the end of the binlog
(an ``availableNow`` query reads it in one batch)."""

__all__ = [
    "ADMISSION_CONTROL",
    "BinlogStreamReader",
    "StreamRange",
    "StreamSourceError",
    "offset_of",
    "position_of",
    "report_attempt",
]


class StreamSourceError(Exception):
    """The primary refused the stream in a way no reconnect gets past (ERR 1236 and other
    non-retryable errors): the query ends with it. ``pipeline stream`` prints its message."""


def report_attempt(where: str, failures: int, error: BaseException, wait: float) -> None:
    """One line on stderr per failed connection the source retries after."""
    print(
        f"[fakemaster_binlog] primary {where} lost: attempt {failures} failed"
        f" ({type(error).__name__}: {error}); next attempt in {wait:.2f} s",
        file=sys.stderr,
        flush=True,
    )


_EARLY_END_RETRIES = 3


def offset_of(position: Position) -> dict[str, Any]:
    """A resume position as an offset (fixed key order, primitive leaves)."""
    return {
        "gtid": position.gtid_text,
        "file": position.file,
        "pos": position.position,
        "event": 0,
        "row": 0,
    }


def position_of(offset: dict[str, Any]) -> Position:
    position = Position.from_gtids(str(offset.get("gtid", "")))
    if offset.get("file"):
        position = position.at(str(offset["file"]), int(offset["pos"]))
    return position


def _reached(position: Position, end: Position, gtid_mode: bool) -> bool:
    if gtid_mode:
        return position.covers(end)
    return (file_index(position.file, 0), position.position) >= (
        file_index(end.file, 0),
        end.position,
    )


def stream_tls(options: dict[str, str]) -> ssl.SSLContext | None:
    """The TLS context the source's ``ssl*`` options ask for (built where the client runs:
    a context does not travel to executors); None without them."""
    ca = options.get("sslca")
    verify = ca is not None or options.get("sslverifyservercert", "false").lower() == "true"
    cert = options.get("sslcert")
    if not (verify or cert or options.get("ssl", "false").lower() == "true"):
        return None
    return tls_context(ca=ca, verify=verify, cert=cert, key=options.get("sslkey"))


@dataclass
class StreamRange(InputPartition):
    start: dict[str, Any]
    end: dict[str, Any]


class BinlogStreamReader(DataSourceStreamReader, *_AVAILABLE_NOW):  # type: ignore[misc]
    def __init__(self, options: dict[str, str]) -> None:
        self.options = options
        self.host = options["host"]
        self.port = int(options["port"])
        # By file/position unless asked: an empty GTID state is refused by a primary whose
        # oldest binlog lists GTIDs (ERR 1236), and file/pos works on any primary.
        self.gtid_mode = options.get("gtidmode", "false").lower() == "true"
        self.server_id = int(options.get("serverid", "4242"))
        self.max_rows = int(options["maxrowsperbatch"]) if options.get("maxrowsperbatch") else None
        self.catalogue = load_catalogue(options.get("catalog"))
        self.connect_retry = float(options.get("connectretry", "60"))
        self.retry_count = int(options.get("retrycount", "100000"))
        if self.connect_retry <= 0 or self.retry_count <= 0:
            raise ValueError(
                f"connectRetry ({self.connect_retry}) and retryCount ({self.retry_count})"
                " must be above 0"
            )
        self._pinned: dict[str, Any] | None = None
        self._last: dict[str, Any] | None = None

    # --- the client ---------------------------------------------------------------------------

    def _replica(self, start: Position, server_id: int, until: Any = None) -> BlockingReplica:
        config = ClientConfig(
            user=self.options.get("user", "root"),
            password=self.options.get("password", ""),
            server_id=server_id,
            gtid_mode=self.gtid_mode,
            non_blocking=True,
            heartbeat_period=0,
            tls=stream_tls(self.options),
            compress=self.options.get("compress", "false").lower() == "true",
        )
        return BlockingReplica(
            self.host,
            self.port,
            config,
            start=start,
            until=until,
            reconnect=ReconnectPolicy.as_replica(
                self.connect_retry, self.retry_count, self._report
            ),
        )

    def _report(self, failures: int, error: BaseException, wait: float) -> None:
        report_attempt(f"{self.host}:{self.port}", failures, error, wait)

    def _scan(self, start: dict[str, Any], max_rows: int | None) -> dict[str, Any]:
        """The offset after the groups from ``start``: up to the end of the binlog, the pinned
        end, or the first group boundary at or past ``max_rows`` change rows."""
        pinned = position_of(self._pinned) if self._pinned is not None else None
        last = position_of(start)
        if pinned is not None and _reached(last, pinned, self.gtid_mode):
            return start
        rows = 0
        with _refusals(), self._replica(last, self.server_id + 1) as replica:
            for group in replica.groups():
                last = group.position
                rows += _rows_in(group)
                if pinned is not None and _reached(last, pinned, self.gtid_mode):
                    break
                if max_rows is not None and rows >= max_rows:
                    break
        return offset_of(last)

    # --- the engine's calls ------------------------------------------------------------------

    def initialOffset(self) -> dict[str, Any]:
        start = Position.from_gtids(self.options.get("startgtid", ""))
        if self.options.get("startfile"):
            start = start.at(self.options["startfile"], int(self.options.get("startpos", "4")))
        return offset_of(start)

    def getDefaultReadLimit(self) -> Any:
        if self.max_rows is not None and ReadMaxRows is not None:
            return ReadMaxRows(self.max_rows)
        return ReadAllAvailable() if ReadAllAvailable is not None else None

    def latestOffset(
        self, start: dict[str, Any] | None = None, limit: Any = None
    ) -> dict[str, Any]:
        if start is None:
            # Spark 4.0/4.1 (no arguments): no admission control, so the end of the binlog.
            # A limit here would be wrong: the engine's availableNow wrapper calls this once
            # and stops at what it returns, and it does not say where the query's last batch
            # ended (after a restart the scan starts again from the initial offset).
            start = self._last if self._last is not None else self.initialOffset()
            max_rows = None
        else:
            max_rows = getattr(limit, "max_rows", None)
        end = self._scan(start, max_rows)
        self._last = end
        return end

    def prepareForTriggerAvailableNow(self) -> None:
        self._pinned = None
        self._pinned = self._scan(self.initialOffset(), None)

    def partitions(self, start: dict[str, Any], end: dict[str, Any]) -> list[StreamRange]:
        if start == end:
            return []
        return [StreamRange(start, end)]

    def read(self, partition: InputPartition) -> Iterator[Any]:
        assert isinstance(partition, StreamRange)
        end = position_of(partition.end)
        batch_rows = int(self.options.get("batchrows", "8192"))
        columnar = self.options.get("columnar", "true").lower() != "false"
        out = _Batches(self.catalogue, batch_rows, columnar)
        start = position_of(partition.start)
        attempts = 0
        # The range's end was seen by a scan, so the primary has every group up to it: a dump
        # that ends before it (an EOF in a non-blocking dump, after a fault) is resumed from
        # the last group read, never taken as the end of the batch.
        while True:
            reached = False
            with (
                _refusals(),
                self._replica(
                    start, self.server_id, until=lambda p: _reached(p, end, self.gtid_mode)
                ) as replica,
            ):
                checksum = True
                for group in replica.items():
                    if not isinstance(group, CommittedGroup):
                        # A file's FORMAT_DESCRIPTION (sent after each ROTATE) says whether its
                        # events end with a CRC (binlog_checksum may change at a rotation).
                        if isinstance(group.event, FormatDescriptionEvent):
                            checksum = group.event.checksum_alg == ChecksumAlg.CRC32
                        continue
                    yield from out.add(group, checksum)
                    if _reached(group.position, end, self.gtid_mode):
                        reached = True
                        break
                resumed = replica.position
            if reached:
                break
            attempts = 0 if resumed != start else attempts + 1
            if attempts > _EARLY_END_RETRIES:
                raise ConnectionError(
                    f"the primary's dump ended at {resumed} before the batch's end {end}"
                    f" ({attempts} times without progress)"
                )
            start = resumed
        yield from out.finish()

    def commit(self, end: dict[str, Any]) -> None:
        """Advisory only (late, may repeat): the materialiser's batch ids make the sink
        idempotent."""

    def stop(self) -> None:
        """Nothing held between calls: every scan and read opens its own connection.

        Spark's source runner calls this as it ends. When it ends because the JVM closed its
        socket (the query was stopped: EOF on the socket), the runner then tries to report that
        EOF on the closed socket and its interpreter prints the resulting traceback on the
        driver's stderr, after the stop's own line; there is nobody left to tell, so the
        runner's stderr goes to /dev/null. Any other ending keeps its stderr."""
        if isinstance(sys.exc_info()[1], EOFError):
            _silence_stderr()


def _silence_stderr() -> None:
    """The process's stderr (fd 2, and ``sys.stderr`` on it) to /dev/null from now on."""
    sys.stderr.flush()
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, 2)
    finally:
        os.close(devnull)


@contextmanager
def _refusals() -> Iterator[None]:
    """A primary's refusal no reconnect gets past, as the source's error (one line)."""
    try:
        yield
    except ClientError as error:
        if error.retryable:
            raise
        raise StreamSourceError(f"the primary refused the stream: {error}") from error


def _rows_in(group: CommittedGroup) -> int:
    return sum(len(r.event.rows) for r in group.events if isinstance(r.event, RowsEvent))


class _Batches:
    """The change-event batches of a stream's groups, as :meth:`BinlogStreamReader.read` gives
    them: a batch once ``batch_rows`` change rows are held, at a group boundary.

    ``columnar``: the groups of each file are held as event bytes and converted together by
    the columnar path (:func:`fakemaster.spark.changes_columnar.events_table`: the same rows as the
    reference), read the reference way (:func:`~fakemaster.spark.changes.add_event` per event,
    :func:`~fakemaster.spark.changes.rows_to_arrow`) where that path cannot give the reference
    form (a catalogue, a group without a GTID, an event received without its bytes, the
    fallback cases of :mod:`fakemaster.spark.changes_columnar`). Otherwise every event the reference way.
    The columnar path counts the rows events' rows towards ``batch_rows`` (the reference
    counts DDL and XA rows too), so its batches may end at other group boundaries; the rows,
    their order and their values are the same."""

    def __init__(self, catalogue: Catalogue | None, batch_rows: int, columnar: bool) -> None:
        self.catalogue = catalogue
        self.batch_rows = batch_rows
        self.columnar = columnar
        self.state: FileState | None = None
        self.out = EventColumns()  # the reference path's rows
        self.held: list[ReceivedEvent] = []  # the columnar path's events (whole groups)
        self.held_rows = 0
        self.checksum = True
        self.tables: list[Any] = []  # converted, not given out yet
        self.table_rows = 0

    def add(self, group: CommittedGroup, checksum: bool) -> Iterator[Any]:
        if not self.columnar:
            for received in group.events:
                if self.state is None or self.state.name != received.file:
                    self.state = self._state(received.file)
                add_event(self.state, self.out, received.end_position, received.event)
            if len(self.out) >= self.batch_rows:
                yield rows_to_arrow(self.out)
                self.out = EventColumns()
            return
        file = group.events[0].file
        if self.state is None or self.state.name != file or checksum != self.checksum:
            self._convert()
            if self.state is None or self.state.name != file:
                self.state = self._state(file)
            self.checksum = checksum
        self.held.extend(group.events)
        self.held_rows += _rows_in(group)
        if self.held_rows + self.table_rows >= self.batch_rows:
            self._convert()
            yield from self._give()

    def finish(self) -> Iterator[Any]:
        if not self.columnar:
            if len(self.out):
                yield rows_to_arrow(self.out)
            return
        self._convert()
        yield from self._give()

    def _state(self, file: str) -> FileState:
        return FileState(file, file_index(file, 0), self.catalogue)

    def _convert(self) -> None:
        """The held events (of ``self.state``'s file) into a table."""
        events, self.held, self.held_rows = self.held, [], 0
        if not events:
            return
        state = self.state
        assert state is not None
        found = None
        if all(r.raw for r in events) and all(r.gtid is not None for r in events):
            found = events_table(
                [(r.end_position, r.raw) for r in events], state, checksum=self.checksum
            )
        if found is not None:
            table, after = found
            # The columnar path gives the rows events to no add_event: count them as it does.
            after.event = len(events) - 1 - _last_gtid(events)
            self.state = after
        else:
            out = EventColumns()
            for received in events:
                add_event(state, out, received.end_position, received.event)
            table = rows_to_arrow(out)  # a RecordBatch (concat_tables takes Tables)
            if table.num_rows:
                import pyarrow as pa  # type: ignore[import-untyped]

                table = pa.Table.from_batches([table])
        if table.num_rows:
            self.tables.append(table)
            self.table_rows += table.num_rows

    def _give(self) -> Iterator[Any]:
        import pyarrow as pa

        tables, self.tables, self.table_rows = self.tables, [], 0
        if not tables:
            return
        table = tables[0] if len(tables) == 1 else pa.concat_tables(tables)
        yield from table.combine_chunks().to_batches()


def _last_gtid(events: list[ReceivedEvent]) -> int:
    for i in range(len(events) - 1, -1, -1):
        if isinstance(events[i].event, GtidEvent):
            return i
    return -1
