"""The replica side of one replication connection, sans-IO: bytes in, bytes and happenings out.

:class:`ReplicaConnection` speaks to any MariaDB 10.x primary as a MariaDB replica does (the
statements a 10.11 replica sends, in its order, as a real primary's general query log shows
them; tests/fakemaster/client/test_recorded.py): the login of :mod:`fakemaster.client.login`
(TLS, mysql_native_password or ed25519 through the auth switch, the compressed protocol when
``ClientConfig.compress``), then

1. ``SELECT UNIX_TIMESTAMP()``, ``SHOW VARIABLES LIKE 'SERVER_ID'`` (a primary with the
   replica's own server id is refused, as a real replica refuses it),
2. ``SET @master_heartbeat_period=`` (ns), ``SET @master_binlog_checksum=
   @@global.binlog_checksum`` and ``SELECT @master_binlog_checksum`` (CRC32 or NONE: the
   checksum of the events to come, before their FORMAT_DESCRIPTION tells it),
3. ``SET @mariadb_slave_capability=4`` (GTID-aware), ``SELECT @@GLOBAL.gtid_domain_id``
   (in file/pos mode from a known file: ``SELECT binlog_gtid_pos('file',pos)``),
4. COM_REGISTER_SLAVE,
5. in GTID mode ``SET @slave_connect_state=``, ``@slave_gtid_strict_mode=0``,
   ``@slave_gtid_ignore_duplicates=0``; with semi-sync ``SHOW VARIABLES LIKE
   'rpl_semi_sync_master_enabled'`` and, when ON, ``SET @rpl_semi_sync_slave=1``,
6. COM_BINLOG_DUMP (GTID mode: file "" position 4; file/pos mode: the position's file and
   offset), then the events, decoded (:class:`decoder.stream.StreamDecoder`: split packets of
   16 MiB and more joined, sequence numbers checked, CRC32 verified when the primary has
   checksums), with a semi-sync ACK
   (``0xEF`` position file, sequence 0) queued after each event the primary asks one for.

Use: :meth:`ReplicaConnection.feed` the bytes read from the socket; it returns what happened
(:class:`Ready`, :class:`EventReceived`, :class:`StreamEnded`); send
:meth:`ReplicaConnection.data_to_send` after every call. Errors are raised, typed
(:class:`ClientError` and subclasses), and say whether reconnecting can help (``retryable``).
"""

from __future__ import annotations

import ssl
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import Enum
from typing import cast

from decoder.packets import parse_err
from decoder.primitives import read_packed_int
from decoder.stream import DecodedEvent, StreamDecoder
from encoder.packets import encode_semi_sync_ack
from fakemaster.client.errors import (
    AuthError,
    BinlogUnavailable,
    ClientError,
    ConnectionLost,
    ProtocolError,
    ServerRefused,
    TlsError,
    query_error,
)
from fakemaster.client.login import (
    CLIENT_CAPABILITIES,
    Login,
    auth_answer,
    login_response,
    ssl_request,
)
from fakemaster.client.position import Position
from fakemaster.protocol.handshake import HandshakeV10
from fakemaster.vocabulary.commands import BinlogDump, RegisterSlave
from fakemaster.vocabulary.constants import Command, DumpFlag
from fakemaster.vocabulary.context import BinlogContext
from fakemaster.vocabulary.errcodes import ER_SLAVE_FATAL_ERROR
from fakemaster.vocabulary.errors import DecodeError
from fakemaster.vocabulary.events import Event, HeartbeatEvent, RotateEvent
from fakemaster.vocabulary.layouts import Buffer
from fakemaster.vocabulary.packets import (
    EOF_HEADER,
    ERR_HEADER,
    OK_HEADER,
    ErrPacket,
    SemiSyncAck,
    ServerError,
)

__all__ = [
    "BINLOG_DUMP_NON_BLOCK",
    "CLIENT_CAPABILITIES",
    "AuthError",
    "BinlogUnavailable",
    "ClientConfig",
    "ClientError",
    "ConnectionLost",
    "EventReceived",
    "Happening",
    "Phase",
    "ProtocolError",
    "Ready",
    "ReplicaConnection",
    "ServerRefused",
    "StreamEnded",
    "TlsError",
    "auth_answer",
    "login_response",
    "parse_text_row",
    "query_error",
    "ssl_request",
]

BINLOG_DUMP_NON_BLOCK = int(DumpFlag.NON_BLOCK)
_SLAVE_CAPABILITY_GTID = 4  # MARIA_SLAVE_CAPABILITY_GTID
_ANY_ERROR = None


# --- settings and happenings ------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ClientConfig:
    """How the replica presents itself and what it asks for.

    ``tls``: an SSL context to require TLS with (see :mod:`fakemaster.client.tls`).
    ``heartbeat_period``: seconds between the primary's heartbeats when idle (0: none);
    ``net_timeout``: seconds without a byte after which the shells call the connection dead
    (a replica's ``slave_net_timeout``). ``gtid_mode``: dump by GTID (``@slave_connect_state``)
    rather than by file/position. ``non_blocking``: BINLOG_DUMP_NON_BLOCK, the primary ends
    the dump with EOF at the end of its binlog. ``checksum``: take the primary's
    binlog_checksum (True) or ask for events without checksums (False: ``'NONE'``).
    """

    user: str = "root"
    password: str = ""
    server_id: int = 2
    report_host: str = ""
    report_port: int = 0
    gtid_mode: bool = True
    semi_sync: bool = False
    heartbeat_period: float = 1.0
    net_timeout: float = 10.0
    checksum: bool = True
    non_blocking: bool = False
    verify_checksum: bool = True
    connect_attributes: tuple[tuple[bytes, bytes], ...] = ()
    #: Flags OR'ed into COM_BINLOG_DUMP's (e.g. BINLOG_SEND_ANNOTATE_ROWS_EVENT, as a
    #: MariaDB replica with replicate_annotate_row_events=ON asks).
    dump_flags: int = 0
    #: TLS (:func:`fakemaster.client.tls.tls_context`); None: a plain connection.
    tls: ssl.SSLContext | None = field(default=None, compare=False)
    #: The compressed protocol when the primary offers it (:mod:`fakemaster.client.login`).
    compress: bool = False


class Phase(Enum):
    GREETING = "greeting"
    TLS = "TLS handshake"
    AUTH = "auth"
    SETUP = "setup"
    DUMP = "dump"
    ENDED = "ended"


@dataclass(frozen=True, slots=True)
class Ready:
    """The setup is done and COM_BINLOG_DUMP is sent: what the primary told."""

    server_version: str
    thread_id: int
    master_server_id: int | None
    checksum: bool
    semi_sync: bool
    gtid_domain_id: int | None
    #: The connection speaks the compressed protocol (asked for and offered).
    compressed: bool = False


@dataclass(frozen=True, slots=True)
class EventReceived:
    """An event of the dump; ``file`` is the binlog file it is in (from the ROTATEs)."""

    decoded: DecodedEvent
    file: str
    acknowledged: bool = False
    #: The event's bytes as received (header to CRC; a view of the packet's payload, no copy).
    raw: Buffer = field(default=b"", compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class StreamEnded:
    """The primary ended the dump with EOF (a non-blocking dump at the end of the binlog)."""


Happening = Ready | EventReceived | StreamEnded


@dataclass
class _Query:
    sql: str
    on_rows: Callable[[list[tuple[bytes | None, ...]]], None] | None = None
    # Errors a real replica tolerates for this statement (None: any).
    tolerate: frozenset[int] | None = frozenset()


@dataclass
class _ResultReader:
    """One text result set (or OK) in progress."""

    columns: int | None = None
    columns_left: int = 0
    eof_seen: bool = False
    rows: list[tuple[bytes | None, ...]] = field(default_factory=list)


class ReplicaConnection:
    """One replica connection's protocol state (see the module docstring)."""

    def __init__(
        self,
        config: ClientConfig,
        start: Position | None = None,
        *,
        server_hostname: str | None = None,
    ) -> None:
        self.config = config
        self._login = Login(
            config.user,
            config.password,
            attributes=config.connect_attributes,
            tls=config.tls,
            server_hostname=server_hostname,
            compress=config.compress,
        )
        self.start = start if start is not None else Position()
        self.phase = Phase.GREETING
        self.master_server_id: int | None = None
        self.gtid_domain_id: int | None = None
        # File/pos mode: the primary's binlog_gtid_pos() of the start position.
        self.binlog_gtid_pos: str | None = None
        self.checksum = config.checksum
        self.semi_sync = False
        self.file = self.start.file
        self._queries: list[_Query | str] = []
        self._result: _ResultReader | None = None
        self._current: _Query | str | None = None
        self._decoder: _RawKeepingDecoder | None = None
        self._ready: Ready | None = None
        self.error: ClientError | None = None

    @property
    def handshake(self) -> HandshakeV10 | None:
        """The server's greeting, once read."""
        return self._login.handshake

    @property
    def compressed(self) -> bool:
        """Whether the connection speaks the compressed protocol (known after the login):
        then the dump's inner packets are not numbered one after the other."""
        return self._login.compressed

    # --- the outside ------------------------------------------------------------------------

    def data_to_send(self) -> bytes:
        return self._login.data_to_send()

    def feed(self, data: bytes) -> list[Happening]:
        """Take bytes read from the connection; what happened, in order. When the bytes end
        the connection with an error after some events, those are returned and the error is
        raised by :meth:`raise_error` (and by the next call)."""
        self.raise_error()
        if self.phase is Phase.ENDED:
            return []
        if self.phase is Phase.DUMP:
            return self._feed_dump(self._login.plaintext(data))
        login = self._login
        login.feed(data)
        out: list[Happening] = []
        while self.phase in (Phase.GREETING, Phase.TLS, Phase.AUTH, Phase.SETUP):
            payload = login.next_payload()
            if self.phase is not Phase.SETUP:
                if login.done:
                    self.phase = Phase.SETUP
                    self._plan_setup()
                    self._next_query()
                    continue
                self.phase = Phase(login.phase.value)
            if payload is None:
                return out
            try:
                self._setup_reply(payload)
            except DecodeError as error:
                raise ProtocolError(
                    f"malformed {self.phase.value} packet: {error}", error
                ) from None
        if cast(Phase, self.phase) is Phase.DUMP:  # (mypy keeps the loop's narrowing)
            assert self._ready is not None
            out.append(self._ready)
            rest = login.detach()
            if rest:
                out += self._feed_dump(rest)
        return out

    def plaintext(self, data: bytes) -> bytes:
        """``data`` read from the connection as the protocol sees it (decrypted under TLS),
        for a caller that reads the dump's packets itself after :class:`Ready`."""
        return self._login.plaintext(data)

    def connection_lost(self) -> ClientError:
        """The error to raise when the peer closed the connection now (the error that ended
        it, if bytes before the close did)."""
        self.phase = Phase.ENDED
        if self.error is not None:
            error, self.error = self.error, None
            return error
        return ConnectionLost(f"connection closed by the server during {self._doing()}")

    def _doing(self) -> str:
        if self.phase is Phase.SETUP and self._current is not None:
            return repr(self._current.sql if isinstance(self._current, _Query) else self._current)
        return f"the {self.phase.value}"

    def _send(self, payload: bytes, *, new_command: bool = False) -> None:
        self._login.send(payload, new_command=new_command)

    # --- the setup statements -------------------------------------------------------------

    def _plan_setup(self) -> None:
        config = self.config
        heartbeat_ns = round(config.heartbeat_period * 1_000_000_000)
        checksum = "@@global.binlog_checksum" if config.checksum else "'NONE'"
        queries: list[_Query | str] = [
            _Query("SELECT UNIX_TIMESTAMP()"),
            _Query("SHOW VARIABLES LIKE 'SERVER_ID'", self._server_id),
            _Query(f"SET @master_heartbeat_period= {heartbeat_ns}"),
            _Query(f"SET @master_binlog_checksum= {checksum}"),
            _Query("SELECT @master_binlog_checksum", self._checksum),
            _Query(f"SET @mariadb_slave_capability={_SLAVE_CAPABILITY_GTID}"),
        ]
        if config.gtid_mode or not self.start.file:
            queries.append(_Query("SELECT @@GLOBAL.gtid_domain_id", self._domain, _ANY_ERROR))
        else:
            # What a replica asks in file/pos mode: the GTID position of its start.
            file_name = self.start.file.replace("\\", "").replace("'", "")
            queries.append(
                _Query(
                    f"SELECT binlog_gtid_pos('{file_name}',{self.start.position})",
                    self._binlog_gtid_pos,
                    _ANY_ERROR,
                )
            )
        queries.append("register")
        if config.gtid_mode:
            state = self.start.gtid_text.replace("'", "")
            queries += [
                _Query(f"SET @slave_connect_state='{state}'"),
                _Query("SET @slave_gtid_strict_mode=0"),
                _Query("SET @slave_gtid_ignore_duplicates=0"),
            ]
        if config.semi_sync:
            queries.append(
                _Query("SHOW VARIABLES LIKE 'rpl_semi_sync_master_enabled'", self._semi_sync)
            )
        queries.append("dump")
        self._queries = queries

    def _server_id(self, rows: list[tuple[bytes | None, ...]]) -> None:
        if rows and rows[0][1] is not None:
            self.master_server_id = int(rows[0][1])
            if self.master_server_id == self.config.server_id:
                raise ServerRefused(
                    ErrPacket(
                        ER_SLAVE_FATAL_ERROR,
                        "HY000",
                        "Fatal error: The slave I/O thread stops because master and slave have "
                        "equal MariaDB server ids",
                    ),
                    "the setup",
                )

    def _checksum(self, rows: list[tuple[bytes | None, ...]]) -> None:
        value = rows[0][0] if rows else None
        self.checksum = value is not None and value.upper() == b"CRC32"

    def _domain(self, rows: list[tuple[bytes | None, ...]]) -> None:
        if rows and rows[0][0] is not None:
            self.gtid_domain_id = int(rows[0][0])

    def _binlog_gtid_pos(self, rows: list[tuple[bytes | None, ...]]) -> None:
        if rows and rows[0][0] is not None:
            self.binlog_gtid_pos = rows[0][0].decode()

    def _semi_sync(self, rows: list[tuple[bytes | None, ...]]) -> None:
        if rows and rows[0][1] is not None and rows[0][1].upper() in (b"ON", b"1"):
            self._queries.insert(0, _Query("SET @rpl_semi_sync_slave= 1", self._semi_sync_on))

    def _semi_sync_on(self, _rows: list[tuple[bytes | None, ...]]) -> None:
        self.semi_sync = True

    def _next_query(self) -> None:
        step = self._queries.pop(0)
        self._current = step
        if step == "register":
            self._send(self._register_slave(), new_command=True)
        elif step == "dump":
            self._start_dump()
        else:
            assert isinstance(step, _Query)
            self._result = _ResultReader()
            self._send(bytes((Command.QUERY,)) + step.sql.encode(), new_command=True)

    def _register_slave(self) -> bytes:
        config = self.config
        return RegisterSlave(
            server_id=config.server_id,
            host=config.report_host.encode(),
            port=config.report_port,
        ).encode()

    def _setup_reply(self, payload: bytes) -> None:
        if not payload:
            raise DecodeError("an empty packet where an answer was expected")
        step = self._current
        if step == "register":
            if payload[0] == ERR_HEADER:
                raise ServerRefused(parse_err(payload), "COM_REGISTER_SLAVE")
            self._next_query()
            return
        assert isinstance(step, _Query) and self._result is not None
        result = self._result
        head = payload[0]
        if result.columns is None:
            if head == ERR_HEADER:
                packet = parse_err(payload)
                if step.tolerate is not None and packet.errno not in step.tolerate:
                    raise query_error(packet, repr(step.sql))
                return self._query_done(step, [])
            if head == OK_HEADER:
                return self._query_done(step, [])
            count, _ = read_packed_int(payload, 0)
            result.columns = result.columns_left = count
            return None
        if result.columns_left:
            result.columns_left -= 1
            return None
        if not result.eof_seen:
            if head != EOF_HEADER:
                raise DecodeError("no EOF after the column definitions")
            result.eof_seen = True
            return None
        if head == EOF_HEADER and len(payload) < 9:
            return self._query_done(step, result.rows)
        if head == ERR_HEADER:
            raise query_error(parse_err(payload), repr(step.sql))
        result.rows.append(parse_text_row(payload, result.columns))
        return None

    def _query_done(self, step: _Query, rows: list[tuple[bytes | None, ...]]) -> None:
        self._result = None
        if step.on_rows is not None:
            step.on_rows(rows)
        self._next_query()

    # --- the dump -------------------------------------------------------------------------

    def _start_dump(self) -> None:
        config = self.config
        if config.gtid_mode:
            file_name, position = b"", 4
        else:
            file_name, position = self.start.file.encode(), self.start.position
        flags = (BINLOG_DUMP_NON_BLOCK if config.non_blocking else 0) | config.dump_flags
        dump = BinlogDump(
            position=position, flags=flags, server_id=config.server_id, file_name=file_name
        )
        self._login.send(dump.encode(), new_command=True, check_answer=not self.semi_sync)
        self._decoder = _RawKeepingDecoder(
            network=True,
            semi_sync=self.semi_sync,
            # Without checksums nothing is verified, the FORMAT_DESCRIPTION's CRC included: a
            # primary that sets its log_pos to 0 at the start of a dump leaves that CRC stale
            # when binlog_checksum is NONE (sql_repl.cc fixes it only when checksums are on),
            # and a replica does not check it (event_checksum_test with the OFF algorithm).
            verify_checksum=config.verify_checksum and self.checksum,
            ctx=BinlogContext(checksum=self.checksum),
            first_sequence=1,
            # Compressed: the inner packets take the numbers of the compressed ones at each
            # flush, and MariaDB checks only those (the Login does).
            check_sequence=not self.compressed,
        )
        handshake = self.handshake
        assert handshake is not None
        self._ready = Ready(
            server_version=handshake.server_version,
            thread_id=handshake.thread_id,
            master_server_id=self.master_server_id,
            checksum=self.checksum,
            semi_sync=self.semi_sync,
            gtid_domain_id=self.gtid_domain_id,
            compressed=self.compressed,
        )
        self._current = None
        self.phase = Phase.DUMP

    def _failed(self, out: list[Happening], error: ClientError) -> list[Happening]:
        """End the connection with ``error``: raised now if nothing came before it in this
        chunk, else after the events before it are handed over (the next call raises it)."""
        self.phase = Phase.ENDED
        if not out:
            raise error
        self.error = error
        return out

    def raise_error(self) -> None:
        """Raise the error that ended the connection after the last events :meth:`feed`
        returned (an ERR or malformed bytes right after them), if there is one."""
        if self.error is not None:
            error, self.error = self.error, None
            raise error

    def _feed_dump(self, data: bytes) -> list[Happening]:
        decoder = self._decoder
        assert decoder is not None
        decoder.feed(data)
        out: list[Happening] = []
        while True:
            try:
                decoded = decoder.next_decoded()
            except ServerError as error:
                return self._failed(out, query_error(error.packet, "the binlog dump"))
            except DecodeError as error:
                return self._failed(
                    out, ProtocolError(f"malformed binlog dump data: {error}", error)
                )
            if decoded is None:
                if decoder.ended:
                    self.phase = Phase.ENDED
                    out.append(StreamEnded())
                return out
            event = decoded.event
            if isinstance(event, RotateEvent):
                self.file = event.next_file
            acknowledged = False
            if decoded.ack_requested and not isinstance(event, HeartbeatEvent):
                ack = SemiSyncAck(position=event.log_pos, file_name=self.file)
                self._login.send(encode_semi_sync_ack(ack), new_command=True, check_answer=False)
                acknowledged = True
            out.append(EventReceived(decoded, self.file, acknowledged, decoder.last_raw))


class _RawKeepingDecoder(StreamDecoder):
    """A network :class:`StreamDecoder` that keeps the bytes of the event it decoded last
    (``last_raw``: the view of the packet payload it decoded from)."""

    last_raw: Buffer = b""

    def _decode(self, data: Buffer, offset: int) -> Event:
        self.last_raw = data
        return super()._decode(data, offset)


def parse_text_row(payload: bytes, count: int) -> tuple[bytes | None, ...]:
    """The ``count`` cells of a text result-set row (None for NULL)."""
    cells: list[bytes | None] = []
    pos = 0
    for _ in range(count):
        if pos < len(payload) and payload[pos] == 0xFB:
            cells.append(None)
            pos += 1
            continue
        length, pos = read_packed_int(payload, pos)
        if pos + length > len(payload):
            raise DecodeError("a row's cell runs past the packet", offset=pos)
        cells.append(payload[pos : pos + length])
        pos += length
    return tuple(cells)
