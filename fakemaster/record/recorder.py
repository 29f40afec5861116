"""``fakemaster record``: a real primary's binlog and answers, recorded for ``serve`` to replay.

:func:`record` connects to a primary as a replica does (the project's replica client,
:class:`fakemaster.client.protocol.ReplicaConnection`, for the login and the setup statements),
dumps its binlog by file/position from the start of its first binary log, and rebuilds the
files in the output directory (:class:`fakemaster.record.rebuild.BinlogRebuilder`, as
``mariadb-binlog --raw`` does) with their index, ``<basename>.index``. Before the dump, a
second connection asks what the replay file keeps (:mod:`fakemaster.record.replay`):
``SHOW GLOBAL VARIABLES``, the GTID positions, ``SHOW BINARY LOGS``.

When it stops (:class:`StopRule`): by default at the end of the primary's binlog (a
non-blocking dump: the primary ends it with EOF); ``until_idle``: once no event came for that
many seconds (heartbeats do not count); ``stop_at``: once the group of a GTID (or every GTID of
a list) or a file position is recorded whole. A lost connection is resumed from the end of the
last whole event group (the group it cut off is truncated and sent again); an ERR 1236 (a
purged or damaged binlog) stops the recording with that error. Only a group recorded whole
counts as progress: after ``max_retries`` connections in a row that end without one (an
upstream that fails at the same point every time), the recording stops with a RecordError.

The output is written as a whole or marked as not: the directory holds
:data:`~fakemaster.store.directory.INCOMPLETE_MARKER` from the start until the replay file is
written, and keeps it, with the reason, when the recording stops with an error; ``serve``
refuses such a directory unless asked (``--allow-incomplete``).
"""

from __future__ import annotations

import socket
import ssl
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import BinaryIO

from decoder.packets import PacketReader, parse_binlog_packet, parse_err
from fakemaster.client.position import Position, parse_gtids
from fakemaster.client.protocol import (
    ClientConfig,
    ClientError,
    ConnectionLost,
    ProtocolError,
    Ready,
    ReplicaConnection,
    query_error,
)
from fakemaster.record.query import QueryConnection, QueryResult
from fakemaster.record.rebuild import (
    BinlogRebuilder,
    DamagedEvent,
    FileAction,
    RecordError,
    Truncate,
    Write,
)
from fakemaster.record.replay import REPLAY_FILE, Replay
from fakemaster.store.directory import INCOMPLETE_MARKER
from fakemaster.vocabulary.constants import DumpFlag
from fakemaster.vocabulary.errors import DecodeError
from fakemaster.vocabulary.packets import EOF_HEADER, ERR_HEADER

__all__ = [
    "BINLOG_SEND_ANNOTATE_ROWS_EVENT",
    "DEFAULT_REPLICA_SERVER_ID",
    "RecordOptions",
    "RecordSummary",
    "StopRule",
    "record",
]

# The server id the recorder registers with: a replica's must differ from the primary's.
DEFAULT_REPLICA_SERVER_ID = 4_000_000_001
_READ_SIZE = 1 << 16
_QUERIES = (
    "SHOW GLOBAL VARIABLES",
    "SELECT @@GLOBAL.gtid_binlog_pos, @@GLOBAL.gtid_current_pos, @@GLOBAL.gtid_binlog_state,"
    " @@GLOBAL.gtid_slave_pos",
    "SHOW BINARY LOGS",
)
BINLOG_SEND_ANNOTATE_ROWS_EVENT = int(DumpFlag.SEND_ANNOTATE_ROWS)
_GTID_VARIABLES = ("gtid_binlog_pos", "gtid_current_pos", "gtid_binlog_state", "gtid_slave_pos")


@dataclass(frozen=True, slots=True)
class StopRule:
    """When a recording ends (see the module docstring)."""

    until_idle: float | None = None
    gtids: Position | None = None
    file: str | None = None
    position: int = 0

    @classmethod
    def parse_stop_at(cls, text: str) -> StopRule:
        """``D-S-N[,D-S-N...]`` (GTIDs) or ``FILE:POS``; ValueError for anything else."""
        file, sep, pos = text.rpartition(":")
        if sep:
            if not file or not pos.isdigit():
                raise ValueError(f"expected FILE:POS, got {text!r}")
            return cls(file=file, position=int(pos))
        try:
            gtids = parse_gtids(text)
        except ValueError:
            gtids = {}
        if not gtids:
            raise ValueError(f"expected GTIDs (D-S-N) or FILE:POS, got {text!r}")
        return cls(gtids=Position.from_gtids(text))

    @property
    def to_end(self) -> bool:
        """Stop at the primary's end of binlog (a non-blocking dump)."""
        return self.until_idle is None and self.gtids is None and self.file is None

    def reached(self, rebuilder: BinlogRebuilder) -> bool:
        current = rebuilder.current
        if current is None or current.committed != current.size:
            return False
        if self.gtids is not None:
            return rebuilder.gtids.covers(self.gtids)
        if self.file is not None:
            return (current.name, current.size) >= (self.file, self.position)
        return False

    def describe(self) -> str:
        if self.gtids is not None:
            return f"stop-at {self.gtids.gtid_text}"
        if self.file is not None:
            return f"stop-at {self.file}:{self.position}"
        if self.until_idle is not None:
            return f"idle for {self.until_idle} s"
        return "end of binlog"


@dataclass(frozen=True, slots=True)
class RecordOptions:
    host: str
    port: int
    out: Path
    user: str = "root"
    password: str = ""
    stop: StopRule = field(default_factory=StopRule)
    server_id: int = DEFAULT_REPLICA_SERVER_ID
    heartbeat_period: float = 1.0
    net_timeout: float = 30.0
    max_retries: int = 10
    #: TLS to the upstream (fakemaster.client.tls.tls_context); None: plain.
    tls: ssl.SSLContext | None = None
    #: The compressed protocol when the upstream offers it.
    compress: bool = False


@dataclass
class RecordSummary:
    files: list[tuple[str, int]]
    events: int
    connections: int
    gtids: str
    stopped_by: str
    replay: Path
    notes: list[str] = field(default_factory=list)


class _Stop(Exception):
    """The stop rule is met."""


class _Files:
    """The output directory: the rebuilt files and their index."""

    def __init__(self, out: Path) -> None:
        self.out = out
        self.names: list[str] = []
        self._handles: dict[str, BinaryIO] = {}

    def apply(self, actions: list[FileAction]) -> None:
        for action in actions:
            if isinstance(action, Write):
                handle = self._handles.get(action.file)
                if action.offset == 0:
                    if handle is not None or action.file in self.names:
                        raise RecordError(f"{action.file} is written twice")
                    handle = open(self.out / action.file, "w+b")  # noqa: SIM115 - kept open
                    self._handles[action.file] = handle
                    self.names.append(action.file)
                    self._write_index()
                elif handle is None:
                    handle = open(self.out / action.file, "r+b")  # noqa: SIM115 - kept open
                    self._handles[action.file] = handle
                handle.seek(action.offset)
                handle.write(action.data)
            else:
                assert isinstance(action, Truncate)
                handle = self._handles.get(action.file)
                if handle is None:
                    handle = open(self.out / action.file, "r+b")  # noqa: SIM115 - kept open
                    self._handles[action.file] = handle
                handle.flush()
                handle.truncate(action.size)
        # Keep only the newest file open: the older ones are complete.
        for name in list(self._handles)[:-1]:
            self._handles.pop(name).close()

    @property
    def basename(self) -> str:
        first = self.names[0] if self.names else "mysql-bin.000001"
        stem, dot, number = first.rpartition(".")
        return stem if dot and number.isdigit() else first

    def _write_index(self) -> None:
        index = self.out / f"{self.basename}.index"
        partial = index.with_name(index.name + ".partial")
        partial.write_text("".join(f"./{name}\n" for name in self.names))
        partial.replace(index)

    def close(self) -> None:
        for handle in self._handles.values():
            handle.close()
        self._handles.clear()


def _prepare(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    taken = sorted(
        p.name
        for p in out.iterdir()
        if p.suffix == ".index" or p.name in (REPLAY_FILE, INCOMPLETE_MARKER)
    )
    if taken:
        raise RecordError(f"{out} holds a recording or binlog already ({', '.join(taken)})")


def _mark_incomplete(out: Path, reason: str) -> None:
    """Write (or rewrite) the marker of an unfinished recording, atomically."""
    marker = out / INCOMPLETE_MARKER
    partial = marker.with_name(marker.name + ".partial")
    partial.write_text(reason.replace("\n", " ") + "\n")
    partial.replace(marker)


def _connect(options: RecordOptions, timeout: float) -> socket.socket:
    sock = socket.create_connection((options.host, options.port), timeout=timeout)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return sock


def ask_primary(options: RecordOptions) -> tuple[str, list[QueryResult]]:
    """The handshake version and the answers to the replay file's statements."""
    session = QueryConnection(
        options.user,
        options.password,
        _QUERIES,
        tolerate_errors=True,
        tls=options.tls,
        server_hostname=options.host,
        compress=options.compress,
    )
    with _connect(options, options.net_timeout) as sock:
        while not session.done:
            try:
                data = sock.recv(_READ_SIZE)
            except TimeoutError:
                raise ConnectionLost(f"nothing received for {options.net_timeout} s") from None
            if not data:
                raise ConnectionLost("the primary closed the connection during the queries")
            session.feed(data)
            outgoing = session.data_to_send()
            if outgoing:
                sock.sendall(outgoing)
    assert session.handshake is not None
    return session.handshake.server_version, session.results


def _replay_of(options: RecordOptions, version: str, results: list[QueryResult]) -> Replay:
    replay = Replay(
        upstream=f"{options.host}:{options.port}",
        recorded_at=datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        handshake_version=version,
    )
    variables, gtids, logs = results
    replay.variables = {
        str(name): str(value or "") for name, value, *_ in variables.text_rows() if name is not None
    }
    if gtids.error is None and gtids.rows:
        row = gtids.text_rows()[0]
        replay.gtid = {name: value or "" for name, value in zip(_GTID_VARIABLES, row, strict=False)}
    if logs.error is None:
        replay.binary_logs = [
            (str(row[0]), int(row[1] or 0)) for row in logs.text_rows() if row[0] is not None
        ]
    return replay


def record(
    options: RecordOptions, *, progress: Callable[[str], None] | None = None
) -> RecordSummary:
    """Record the primary at ``options.host:port`` into ``options.out`` (module docstring)."""
    say = progress or (lambda _text: None)
    _prepare(options.out)
    _mark_incomplete(options.out, "recording in progress (or its process died)")
    try:
        summary = _record(options, say)
    except BaseException as error:
        _mark_incomplete(options.out, f"record stopped without finishing: {error}")
        raise
    (options.out / INCOMPLETE_MARKER).unlink()
    return summary


def _record(options: RecordOptions, say: Callable[[str], None]) -> RecordSummary:
    version, results = ask_primary(options)
    replay = _replay_of(options, version, results)
    say(
        f"recording {options.host}:{options.port} (MariaDB {replay.variables.get('version', '?')},"
        f" server_id {replay.variables.get('server_id', '?')}) into {options.out}"
    )
    strict = replay.variables.get("gtid_strict_mode", "").upper() in ("ON", "1")
    rebuilder = BinlogRebuilder(strict_gtids=strict)
    files = _Files(options.out)
    recorder = _Dump(options, rebuilder, files)
    stopped_by = options.stop.describe()
    try:
        recorder.run()
    except KeyboardInterrupt:
        stopped_by = "interrupted"
    finally:
        try:
            files.apply(rebuilder.finish())
        finally:
            files.close()
    if not files.names:
        raise RecordError("the primary sent no binlog file")
    replay.basename = files.basename
    replay.files = [(f.name, f.size) for f in rebuilder.files]
    last = rebuilder.files[-1]
    replay.end = {
        "file": last.name,
        "position": last.size,
        "gtids": rebuilder.gtids.gtid_text,
        "stopped_by": stopped_by,
    }
    path = options.out / REPLAY_FILE
    replay.save(path)
    return RecordSummary(
        files=replay.files,
        events=rebuilder.events_written,
        connections=recorder.connections,
        gtids=rebuilder.gtids.gtid_text,
        stopped_by=stopped_by,
        replay=path,
    )


class _Dump:
    """The dump connections of one recording, resumed after losses."""

    def __init__(self, options: RecordOptions, rebuilder: BinlogRebuilder, files: _Files) -> None:
        self.options = options
        self.rebuilder = rebuilder
        self.files = files
        self.connections = 0
        self.last_event = time.monotonic()

    def _committed(self) -> tuple[int, int]:
        """How far whole groups are recorded: (files begun, end of the last whole group). The
        events of a group cut off and sent again are not progress: only this point moving is."""
        current = self.rebuilder.current
        return (len(self.rebuilder.files), 0 if current is None else current.committed)

    def _stuck_at(self) -> str:
        resume = self.rebuilder.resume_position
        return f"{resume.file or 'the first file'}:{resume.position}"

    def run(self) -> None:
        failures = 0
        best = self._committed()
        while True:
            try:
                if self._session():
                    return
                raise ConnectionLost("the primary ended the dump")
            except _Stop:
                return
            except (ClientError, OSError, DamagedEvent) as error:
                retryable = not isinstance(error, ClientError) or error.retryable
                reached = self._committed()
                failures = 0 if reached > best else failures + 1
                best = max(best, reached)
                if not retryable:
                    raise
                if failures > self.options.max_retries:
                    raise RecordError(
                        f"gave up after {failures} connections in a row that recorded no new"
                        f" whole group (stuck at {self._stuck_at()}): {error}"
                    ) from None
                self.files.apply(self.rebuilder.reconnected())
                time.sleep(min(0.05 * 2 ** (failures - 1), 2.0))

    def _session(self) -> bool:
        """One connection: True once the stop rule or the end of the binlog is reached."""
        options = self.options
        stop = options.stop
        config = ClientConfig(
            user=options.user,
            password=options.password,
            server_id=options.server_id,
            gtid_mode=False,
            heartbeat_period=options.heartbeat_period,
            net_timeout=options.net_timeout,
            non_blocking=stop.to_end,
            dump_flags=BINLOG_SEND_ANNOTATE_ROWS_EVENT,
            tls=options.tls,
            compress=options.compress,
        )
        connection = ReplicaConnection(
            config, self.rebuilder.resume_position, server_hostname=options.host
        )
        reader: PacketReader | None = None
        with _connect(options, options.net_timeout) as sock:
            self.connections += 1
            last_byte = time.monotonic()
            while True:
                timeout = options.net_timeout - (time.monotonic() - last_byte)
                if stop.until_idle is not None and reader is not None:
                    timeout = min(timeout, stop.until_idle - (time.monotonic() - self.last_event))
                if timeout <= 0:
                    if stop.until_idle is not None and reader is not None and self._idle():
                        return True
                    raise ConnectionLost(f"nothing received for {options.net_timeout} s")
                sock.settimeout(timeout)
                try:
                    data = sock.recv(_READ_SIZE)
                except TimeoutError:
                    continue
                if not data:
                    raise (
                        connection.connection_lost()
                        if reader is None
                        else ConnectionLost("the primary closed the connection during the dump")
                    )
                last_byte = time.monotonic()
                if reader is None:
                    happenings = connection.feed(data)
                    outgoing = connection.data_to_send()
                    ready = any(isinstance(h, Ready) for h in happenings)
                    if outgoing:
                        sock.sendall(outgoing)
                    if ready:
                        if len(happenings) != 1:
                            raise ProtocolError("binlog events before the dump was asked for")
                        self.rebuilder.set_checksum(connection.checksum)
                        # Compressed, the inner numbers jump at each flush (see client.login).
                        reader = PacketReader(
                            expected_seq=1, check_sequence=not connection.compressed
                        )
                        self.last_event = time.monotonic()
                    continue
                reader.feed(connection.plaintext(data))
                if self._packets(reader):
                    return True

    def _idle(self) -> bool:
        idle = self.options.stop.until_idle
        return idle is not None and time.monotonic() - self.last_event >= idle

    def _packets(self, reader: PacketReader) -> bool:
        """Take the whole packets read; True at the EOF of a non-blocking dump."""
        while True:
            try:
                payload = reader.next_payload()
                if payload is None:
                    return False
                head = payload[0] if payload else None
                if head == ERR_HEADER:
                    raise query_error(parse_err(payload), "the binlog dump")
                if head == EOF_HEADER and len(payload) < 9:
                    return True
                event, _ack = parse_binlog_packet(payload)
            except DecodeError as error:
                raise ProtocolError(f"malformed binlog dump data: {error}", error) from None
            before = self.rebuilder.skipped
            self.files.apply(self.rebuilder.feed(bytes(event)))
            if self.rebuilder.skipped == before or self.rebuilder.current is None:
                self.last_event = time.monotonic()
            if self.options.stop.reached(self.rebuilder):
                raise _Stop
