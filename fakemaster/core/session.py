"""The protocol and SQL state machine of one client connection, sans-IO: handshake, login, commands.

Its owner (:class:`~fakemaster.core.connection.ServerConnection`, for the socket shell) writes
:meth:`ServerSession.initial_bytes`, feeds whatever it reads to :meth:`ServerSession.receive_data`
and carries out the returned actions in order: send bytes, start streaming a binlog dump, close,
kill another connection, end another connection's dump with an error, pass a semi-sync ACK to
the running dump. The session never raises: malformed input gets the ERR packet a real
MariaDB 10.11 would send (or a clean close), and a bug inside it becomes ERR 1105 + close with
the exception kept in :attr:`ServerSession.internal_errors`.

States: HANDSHAKE -> (AUTH_SWITCH) -> COMMAND -> DUMPING -> CLOSED.

A client that asked for CLIENT_COMPRESS gets the compressed protocol from the OK of its login
on: the session reads and writes through a ``fakemaster.protocol.compression.CompressedChannel``
(flushing after each response, as MariaDB does), and :meth:`ServerSession.wrap_dump` puts the
dump the shell streams through it too.
"""

from __future__ import annotations

import struct
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from enum import Enum
from typing import TYPE_CHECKING

from decoder.packets import PacketReader, parse_semi_sync_ack
from encoder.packets import frame
from fakemaster.config.accounts import Privilege, privilege_names
from fakemaster.config.served_variables import handshake_version, server_collation_id
from fakemaster.core.net_buffer import NetBuffer
from fakemaster.protocol.charsets import client_collation
from fakemaster.protocol.handshake import (
    NATIVE_PASSWORD,
    SERVER_CAPABILITIES,
    AuthSwitchRequest,
    Capability,
    ClientProtocol,
    HandshakeResponse,
    HandshakeV10,
    check_native_password,
    new_scramble,
)
from fakemaster.sql.state import ConnectionInfo, ReplicaInfo, ServerState, SessionState
from fakemaster.vocabulary.constants import SEMI_SYNC_MAGIC, Command, DumpFlag
from fakemaster.vocabulary.errcodes import (
    ER_ACCESS_DENIED_ERROR,
    ER_CON_COUNT_ERROR,
    ER_HANDSHAKE_ERROR,
    ER_NET_PACKET_TOO_LARGE,
    ER_NET_PACKETS_OUT_OF_ORDER,
    ER_NO_DB_ERROR,
    ER_NO_SUCH_TABLE,
    ER_NOT_SUPPORTED_AUTH_MODE,
    ER_NOT_SUPPORTED_YET,
    ER_SLAVE_SAME_ID,
    ER_SPECIFIC_ACCESS_DENIED_ERROR,
    ER_UNKNOWN_COM_ERROR,
    ER_UNKNOWN_ERROR,
    ER_WRONG_TABLE_NAME,
)
from fakemaster.vocabulary.errors import DecodeError
from fakemaster.vocabulary.packets import ServerStatus

if TYPE_CHECKING:
    # Loaded where a client needs them, not to send the greeting (issue #25: start-up CPU):
    # the compressed protocol, prepared statements and COM_CHANGE_USER when asked for; the
    # responses (OK, ERR and result set packets), the typed SQL values (and decimal) and the
    # replication commands' packets at the first login, error or dump.
    from decimal import Decimal

    from fakemaster.core.prepared import PreparedStatements
    from fakemaster.protocol.change_user import ChangeUser
    from fakemaster.protocol.compression import CompressedChannel, DumpLike
    from fakemaster.protocol.resultset import SqlError
    from fakemaster.sql.sqlvalue import SqlValue
    from fakemaster.vocabulary.commands import BinlogDump, BinlogDumpGtid

__all__ = [
    "Ack",
    "Action",
    "Close",
    "DumpRequest",
    "EndDump",
    "KillConnection",
    "SendBytes",
    "ServerSession",
    "StartDump",
    "StartTls",
    "State",
]

# --- actions ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SendBytes:
    """Action: send these bytes to the client."""

    data: bytes


@dataclass(frozen=True, slots=True)
class StartDump:
    """Action: start the binlog dump this request asks for."""

    request: DumpRequest


@dataclass(frozen=True, slots=True)
class Close:
    """Action: close the connection, for this reason."""

    reason: str


@dataclass(frozen=True, slots=True)
class KillConnection:
    """Action: KILL connection ``thread_id`` (or only its query)."""

    thread_id: int
    query_only: bool = False


@dataclass(frozen=True, slots=True)
class EndDump:
    """End the binlog dump of connection ``thread_id`` with ``error`` (an ERR packet in the
    dump's own sequence, with the dump's position appended as MariaDB does), then close that
    connection: a newer dump for the same replica server id replaces it."""

    thread_id: int
    error: SqlError


@dataclass(frozen=True, slots=True)
class StartTls:
    """The client sent an SSL request: run TLS on the socket from here on and feed the
    session the decrypted bytes. ``early_data``: bytes that came after the SSL request (the
    start of the client's TLS handshake), which belong to the TLS layer."""

    early_data: bytes = b""


@dataclass(frozen=True, slots=True)
class Ack:
    """A semi-sync replica acknowledged everything up to ``position`` in ``file_name``."""

    position: int
    file_name: str


Action = SendBytes | StartDump | Close | KillConnection | EndDump | Ack | StartTls


# --- replication requests ----------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class DumpRequest:
    """A replica asked for the binlog: the command's fields and the session settings that
    decide what a MariaDB primary streams (its user variables and skip_replication)."""

    command: int  # Command.BINLOG_DUMP, or Command.BINLOG_DUMP_GTID (MySQL)
    thread_id: int
    server_id: int
    position: int
    flags: int
    file_name: str  # up to the first NUL, as the server reads it
    raw_file_name: bytes = b""
    # MySQL COM_BINLOG_DUMP_GTID: the encoded GTID set (None for COM_BINLOG_DUMP).
    mysql_gtid_set: bytes | None = None
    # @master_binlog_checksum as the primary reads it: None when the replica never set it.
    master_binlog_checksum: str | None = None
    slave_capability: int = 0  # @mariadb_slave_capability
    connect_state: str | None = None  # @slave_connect_state: GTID mode when set
    gtid_strict_mode: bool = False  # @slave_gtid_strict_mode
    gtid_ignore_duplicates: bool = False  # @slave_gtid_ignore_duplicates
    until_gtid: str | None = None  # @slave_until_gtid
    heartbeat_period_ns: int = 0  # @master_heartbeat_period (0: no heartbeats)
    semi_sync: bool = False  # @rpl_semi_sync_slave set to a true value
    skip_replication: bool = False  # the session's skip_replication
    client_capabilities: int = 0
    # The session's status flags (autocommit) when the dump started: an EOF at the end of a
    # non-blocking dump carries them.
    server_status: int = 0x0002
    replica: ReplicaInfo | None = None
    user_variables: Mapping[str, SqlValue] = field(default_factory=dict)

    @property
    def gtid_mode(self) -> bool:
        return self.connect_state is not None

    @property
    def non_blocking(self) -> bool:
        """MariaDB ends the dump with EOF at the end of the binlog for BINLOG_DUMP_NON_BLOCK
        and for a replica that says it is server 0."""
        return bool(self.flags & DumpFlag.NON_BLOCK) or self.server_id == 0


# --- the state machine --------------------------------------------------------------------


class State(Enum):
    HANDSHAKE = "handshake"
    AUTH_SWITCH = "auth switch"
    CHANGE_USER = "change user"  # waiting for the reply to COM_CHANGE_USER's auth switch
    COMMAND = "command"
    DUMPING = "dumping"
    CLOSED = "closed"


class ServerSession:
    def __init__(
        self,
        server: ServerState,
        *,
        peer_host: str = "127.0.0.1",
        scramble: bytes | None = None,
    ) -> None:
        self.server = server
        self.config = server.config
        self.info: ConnectionInfo = server.open_connection(peer_host)
        self.thread_id = self.info.thread_id
        self.peer_host = peer_host
        self.state = State.HANDSHAKE
        self.scramble = scramble if scramble is not None else new_scramble()
        self.protocol = ClientProtocol(0)
        self.sql: SessionState | None = None
        self.internal_errors: list[BaseException] = []
        self.close_reason: str | None = None
        self._response: HandshakeResponse | None = None
        # Packets larger than max_allowed_packet are refused (ER_NET_PACKET_TOO_LARGE); before
        # the login a much smaller bound holds, so clients that never log in hold little memory.
        self._max_payload = int(server.globals["max_allowed_packet"] or 0)
        self._login_limit = min(self.config.max_login_packet, self._max_payload)
        self._reader: PacketReader | CompressedChannel = PacketReader(
            expected_seq=1, max_payload=self._login_limit
        )
        # MariaDB counts every open connection against max_connections and keeps one more for
        # an administrator: beyond that a connection gets ERR 1040 instead of the greeting.
        self._refused = len(server.connections) > _max_connections(server) + 1
        # Once the client asked for compression and logged in, reads and writes go through it.
        self._compression: CompressedChannel | None = None
        self._unregistered = False
        # Whether the client logged in with a password (access-denied texts say so).
        self._used_password = False
        self.tls_offered = self.config.ssl_context is not None
        self.tls_active = False
        # Sequence number of the client's handshake response: 1, or 2 after an SSL request.
        self._response_seq = 1
        self._early = bytearray()
        # COM_STMT_* statements of this connection (made at the first one).
        self._prepared_statements: PreparedStatements | None = None
        self._change_request: ChangeUser | None = None  # a COM_CHANGE_USER awaiting its auth
        # The collation the client logged in with (or last named in COM_CHANGE_USER): what
        # COM_RESET_CONNECTION's fresh session starts with.
        self._login_collation = 0

        # A MariaDB dump thread reads nothing from its replica but semi-sync ACKs: whether
        # this dump reads (semi-sync, or through the compression, which reads for it), and
        # the bytes the client sent that were never read (see :attr:`unread_input`).
        self._dump_reads = True
        self._unread = 0
        self._net_buffer = NetBuffer()

    # -- API -------------------------------------------------------------------------------

    def initial_bytes(self) -> bytes:
        """The greeting, or the ERR 1040 (then a close) when max_connections+1 are open."""
        if self._refused:
            # MariaDB sends it before knowing the client's protocol: no SQLSTATE, sequence 0.
            self.state = State.CLOSED
            self.close_reason = "too many connections"
            self._unregister()
            return frame(sql_error(ER_CON_COUNT_ERROR).payload(protocol_41=False), 0)[0]
        capabilities = SERVER_CAPABILITIES | (Capability.SSL if self.tls_offered else 0)
        greeting = HandshakeV10(
            server_version=handshake_version(self.server.globals),
            thread_id=self.thread_id,
            scramble=self.scramble,
            capabilities=capabilities,
            charset=server_collation_id(self.server.globals),
        )
        return frame(greeting.encode(), 0)[0]

    @property
    def closed(self) -> bool:
        """The session ended (refused, closed, or the socket went away): nothing more to read."""
        return self.state is State.CLOSED

    def receive_data(self, data: bytes) -> list[Action]:
        """Feed bytes read from the client; the actions to carry out, in order."""
        actions: list[Action] = []
        if self.state is State.CLOSED:
            return actions
        try:
            if self._awaiting_first_packet():
                data = self._first_packet(data, actions)
            if self.state is State.DUMPING and not self._dump_reads:
                self._unread += len(data)
                return actions
            self._reader.feed(data)
            while not self.closed:  # (the property: each step may close the session)
                if self.state is State.DUMPING:
                    if not self._dump_reads:
                        break  # what follows the dump command stays unread
                    self._reader.expect_sequence(None)
                try:
                    payload = self._reader.next_payload()
                except DecodeError as error:
                    self._framing_error(error, actions)
                    break
                if payload is None:
                    break
                self._dispatch(payload, actions)
                self._flush(actions)
            self._flush(actions)
        except Exception as error:  # a bug here must not take the server down
            self.internal_errors.append(error)
            self._send(
                actions, sql_error(ER_UNKNOWN_ERROR, f"internal error: {error}").payload(), 1
            )
            self._flush(actions)
            self._close(actions, f"internal error: {error!r}")
        return actions

    @property
    def pending_input(self) -> int:
        """Bytes received and not yet answered (a statement still arriving): how much work
        the next :meth:`receive_data` may have to do."""
        return len(self._early) + self._reader.buffered

    @property
    def unread_input(self) -> int:
        """Bytes the client sent that a real server would never have read: what followed a
        dump command (a replica's stray byte, commands sent during the dump) or a COM_QUIT,
        or a packet cut short. Closing a socket with unread input makes the kernel answer
        with a reset (RST), not a FIN, and drop what it had not sent yet: the shell does the
        same (python-mysql-replication's 15-byte dump declared as 14 loses the end of the
        stream that way on a real primary)."""
        return self._unread + self.pending_input

    def _awaiting_first_packet(self) -> bool:
        return (
            self.tls_offered
            and not self.tls_active
            and self._response is None
            and (self.state is State.HANDSHAKE)
        )

    def _first_packet(self, data: bytes, actions: list[Action]) -> bytes:
        """Before the first packet, TLS may start: cut the first packet out, and if it is an
        SSL request hand what follows it to the TLS layer instead of parsing it."""
        self._early += data
        if len(self._early) < 4:
            return b""
        size = int.from_bytes(self._early[:3], "little")
        if size > self._login_limit:
            # Refused from its header, before its bytes are kept (the reader says so).
            early = bytes(self._early)
            self._early.clear()
            return early
        end = 4 + size
        if len(self._early) < end:
            return b""
        first, rest = bytes(self._early[:end]), bytes(self._early[end:])
        self._early.clear()
        self._reader.feed(first)
        payload = None
        try:
            payload = self._reader.next_payload()
        except DecodeError as error:
            self._framing_error(error, actions)
        if payload is not None:
            self._dispatch(payload, actions)
        if self.tls_active and actions and isinstance(actions[-1], StartTls):
            actions[-1] = StartTls(rest)
            return b""
        return rest

    @property
    def compressed(self) -> bool:
        """The connection speaks the compressed protocol (from the OK of the login on)."""
        return self._compression is not None

    def wrap_dump(self, dump: DumpLike, request: DumpRequest) -> DumpLike:
        """What the shell should stream for ``request``: ``dump`` itself, or on a compressed
        connection ``dump`` through the connection's compression."""
        if self._compression is None:
            return dump
        from fakemaster.protocol.compression import CompressedDump

        return CompressedDump(dump, self._compression, semi_sync=request.semi_sync)

    def connection_lost(self) -> None:
        """The shell saw the socket close: forget the connection (SHOW SLAVE HOSTS, KILL)."""
        self.state = State.CLOSED
        self._unregister()

    # -- framing ---------------------------------------------------------------------------

    def _framing_error(self, error: DecodeError, actions: list[Action]) -> None:
        expected = self._reader.next_sequence or 0
        if self.state is State.DUMPING:
            # Nothing may be sent between the dump's packets: just hang up.
            self._close(actions, f"malformed packet during a dump: {error}")
        elif error.reason.startswith("packet sequence number"):
            self._send_error(actions, sql_error(ER_NET_PACKETS_OUT_OF_ORDER), seq=expected)
            self._close(actions, "packets out of order")
        elif error.reason.startswith("packet payload exceeds"):
            # MariaDB counted the oversized packet's header: its ERR carries the next number.
            self._send_error(actions, sql_error(ER_NET_PACKET_TOO_LARGE), seq=expected + 1)
            self._close(actions, "packet too large")
        else:
            self._close(actions, f"malformed packet: {error}")

    def _dispatch(self, payload: bytes, actions: list[Action]) -> None:
        self._net_buffer.read(payload)
        if self.state is State.HANDSHAKE:
            self._handshake_response(payload, actions)
        elif self.state is State.AUTH_SWITCH:
            assert self._response is not None
            self._authenticate(self._response, payload, actions, next_seq=self._response_seq + 3)
        elif self.state is State.COMMAND:
            self._command(payload, actions)
            if self.state is State.COMMAND:
                self._reader.expect_sequence(0)
        elif self.state is State.CHANGE_USER:
            self._change_user_reply(payload, actions)  # back to the command phase
            self._reader.expect_sequence(0)
        elif self.state is State.DUMPING:
            self._during_dump(payload, actions)

    # -- connection phase ------------------------------------------------------------------

    def _handshake_response(self, payload: bytes, actions: list[Action]) -> None:
        try:
            response = HandshakeResponse.decode(payload)
        except DecodeError:
            # MariaDB reads the capabilities of packets of 6 bytes or more; it leaves the
            # SQLSTATE out only for a client that did not announce protocol 4.1.
            protocol_41 = len(payload) < 6 or bool(
                (payload[0] | payload[1] << 8) & Capability.PROTOCOL_41
            )
            reply_seq = self._response_seq + 1
            self._send(
                actions, sql_error(ER_HANDSHAKE_ERROR).payload(protocol_41=protocol_41), reply_seq
            )
            self._close(actions, "bad handshake")
            return
        reply_seq = self._response_seq + 1
        if response.ssl_request:
            if not self.tls_offered or self.tls_active:
                # CLIENT_SSL not advertised (or a second request): what MariaDB says then.
                self._send(actions, sql_error(ER_HANDSHAKE_ERROR).payload(), reply_seq)
                self._close(actions, "TLS requested but not offered")
                return
            self.tls_active = True
            self._response_seq = 2
            self._reader.expect_sequence(2)
            actions.append(StartTls())
            return
        self._response = response
        self.protocol = ClientProtocol(
            response.capabilities, response.effective_mariadb_capabilities
        )
        plugin = response.auth_plugin
        if plugin is None:
            plugin = (
                NATIVE_PASSWORD
                if response.capabilities & Capability.SECURE_CONNECTION
                else ("mysql_old_password")
            )
        if plugin != NATIVE_PASSWORD:
            if not response.capabilities & Capability.PLUGIN_AUTH:
                self._send(actions, sql_error(ER_NOT_SUPPORTED_AUTH_MODE).payload(), reply_seq)
                self._close(actions, "client cannot switch authentication plugin")
                return
            # Like MariaDB, switch to the account's plugin with a fresh scramble.
            self.scramble = new_scramble()
            switch = AuthSwitchRequest(NATIVE_PASSWORD, self.scramble)
            self._send(actions, switch.encode(), reply_seq)
            self.state = State.AUTH_SWITCH
            self._reader.expect_sequence(reply_seq + 1)
            return
        self._authenticate(response, response.auth_response, actions, next_seq=reply_seq)

    def _authenticate(
        self, response: HandshakeResponse, auth: bytes, actions: list[Action], *, next_seq: int
    ) -> None:
        user = response.user.decode("utf-8", "surrogateescape")
        account = self.server.accounts.get(user)
        if account is None or not check_native_password(account.password, self.scramble, auth):
            using = "YES" if auth else "NO"
            self._send(
                actions,
                sql_error(ER_ACCESS_DENIED_ERROR, user, self.peer_host, using).payload(),
                next_seq,
            )
            self._close(actions, "access denied")
            return
        self._used_password = bool(auth)
        if (
            len(self.server.connections) > _max_connections(self.server)
            and not account.privileges & _IGNORES_MAX_CONNECTIONS
        ):
            self._send(actions, sql_error(ER_CON_COUNT_ERROR).payload(), next_seq)
            self._close(actions, "too many connections")
            return
        # The SQL layer (its lexer, parser and statement table) is loaded at the first login,
        # not at startup: a server answers its first handshake without it.
        from fakemaster.protocol.resultset import SqlError, ok_payload
        from fakemaster.sql.answers.connection_statements import (
            apply_client_capabilities,
            change_database,
        )

        collation = client_collation(response.charset)
        collation_id = (
            collation.id if collation is not None else server_collation_id(self.server.globals)
        )
        self.sql = SessionState.create(
            self.server, self.thread_id, user, self.peer_host, collation_id, account
        )
        self.sql.capabilities = response.capabilities
        self._login_collation = response.charset
        apply_client_capabilities(self.sql, response.capabilities)
        self.info.user = user
        state: list[bytes] = []
        # MariaDB ignores an empty name: clients such as mysql-connector-python always set
        # CONNECT_WITH_DB and send "" when no database was asked for.
        if response.database and response.capabilities & Capability.CONNECT_WITH_DB:
            try:
                state = change_database(
                    self.sql, response.database.decode("utf-8", "surrogateescape")
                ).session_state
            except SqlError as error:
                self._send(actions, error.payload(), next_seq)
                self._close(actions, "database refused")
                return
        self._send(
            actions,
            ok_payload(self.protocol, status=self.sql.status(), session_state=state),
            next_seq,
        )
        self.state = State.COMMAND
        self._reader.expect_sequence(0)
        if isinstance(self._reader, PacketReader):
            self._reader.limit_payload(self._max_payload)
        if response.capabilities & Capability.COMPRESS and isinstance(self._reader, PacketReader):
            # MariaDB counted the client's last packet (next_seq - 1) on its compressed
            # counter too: the first compressed packet it writes carries next_seq.
            from fakemaster.protocol.compression import CompressedChannel

            self._compression = CompressedChannel(
                sequence=next_seq,
                max_payload=int(self.server.globals["max_allowed_packet"] or 0),
                pending=self._reader.detach(),
            )
            self._reader = self._compression

    # -- command phase ---------------------------------------------------------------------

    def _command(self, payload: bytes, actions: list[Action]) -> None:
        sql = self.sql
        assert sql is not None
        command = payload[0] if payload else -1
        body = payload[1:]
        if command == Command.QUERY:
            self._query(sql, body, actions)
        elif command == Command.QUIT:
            self._close(actions, "COM_QUIT")
        elif command == Command.PING:
            self._ok(actions)
        elif command == Command.INIT_DB:
            self._init_db(sql, body, actions)
        elif command == Command.FIELD_LIST:
            self._field_list(sql, body, actions)
        elif command == _COM_STATISTICS:
            self._send(actions, self._statistics().encode(), 1)
        elif command == _COM_REFRESH:
            self._refresh(sql, body, actions)
        elif command == _COM_PROCESS_KILL:
            thread_id = struct.unpack("<I", body[:4].ljust(4, b"\0"))[0]
            self._query(sql, f"KILL {thread_id}".encode(), actions)
        elif command == _COM_DEBUG:
            self._debug(sql, actions)
        elif command == _COM_SET_OPTION:
            self._set_option(sql, body, actions)
        elif command == Command.RESET_CONNECTION:
            self._reset_connection(sql)
            self._ok(actions)
        elif command == Command.CHANGE_USER:
            self._change_user(body, actions)
        elif Command.STMT_PREPARE <= command <= Command.STMT_FETCH:  # (0x1B handled above)
            self._prepared_command(sql, command, body, actions)
        elif command == Command.REGISTER_SLAVE:
            self._register_slave(sql, body, actions)
        elif command in self._dump_commands() and not sql.account.has_any(DUMP_PRIVILEGE):
            # Refused before the packet is read; the connection stays usable.
            self._send_error(
                actions, sql_error(ER_SPECIFIC_ACCESS_DENIED_ERROR, privilege_names(DUMP_PRIVILEGE))
            )
        elif command == Command.BINLOG_DUMP:
            self._binlog_dump(sql, body, actions)
        elif command == Command.BINLOG_DUMP_GTID and self.config.mysql_gtid_dump:
            from fakemaster.vocabulary.commands import BinlogDumpGtid

            try:
                dump = BinlogDumpGtid.parse(body)
            except DecodeError:
                self._send_error(actions, sql_error(ER_HANDSHAKE_ERROR))
                self._close(actions, "malformed COM_BINLOG_DUMP_GTID")
                return
            self._start_dump(sql, actions, dump)
        else:
            self._send_error(actions, sql_error(ER_UNKNOWN_COM_ERROR))

    def _init_db(self, sql: SessionState, body: bytes, actions: list[Action]) -> None:
        if not body:
            self._send_error(actions, sql_error(ER_NO_DB_ERROR))
            return
        from fakemaster.protocol.resultset import SqlError
        from fakemaster.sql.answers.connection_statements import change_database

        try:
            result = change_database(sql, body.decode("utf-8", "surrogateescape"))
        except SqlError as error:
            self._send_error(actions, error)
            return
        self._ok(actions, result.session_state)

    def _dump_commands(self) -> tuple[int, ...]:
        if self.config.mysql_gtid_dump:
            return (Command.BINLOG_DUMP, Command.BINLOG_DUMP_GTID)
        return (Command.BINLOG_DUMP,)

    def _query(self, sql: SessionState, body: bytes, actions: list[Action]) -> None:
        from fakemaster.protocol.conversion import client_text
        from fakemaster.protocol.resultset import (
            ResultSet,
            SqlError,
            ok_payload,
            result_set_payloads,
        )
        from fakemaster.sql.outcome import OkResult
        from fakemaster.sql.statements import execute

        # Read in character_set_client, as the server reads it (UTF-8 unless told otherwise).
        outcome = execute(sql, client_text(body, sql.variables.get("character_set_client")))
        seq = 1
        responses = outcome.responses
        for index, response in enumerate(responses):
            more = ServerStatus.MORE_RESULTS_EXISTS if index + 1 < len(responses) else 0
            status = outcome.statuses[index] | more
            results, connection = outcome.collations[index]
            if isinstance(response, SqlError):
                target = None if results is None or results.is_binary_charset else results.charset
                payloads = [response.payload(protocol_41=self.protocol.protocol_41, results=target)]
            elif isinstance(response, ResultSet):
                payloads = result_set_payloads(
                    response,
                    self.protocol,
                    status=status,
                    results=results,
                    connection=connection,
                )
            else:
                assert isinstance(response, OkResult)
                payloads = [
                    ok_payload(
                        self.protocol,
                        status=status,
                        warnings=response.warnings,
                        affected_rows=response.affected_rows,
                        session_state=response.session_state,
                    )
                ]
            for payload in payloads:
                seq = self._send(actions, payload, seq)
            self._flush(actions)  # MariaDB flushes each result of a multi-statement query
        for request in outcome.kills:
            actions.append(KillConnection(request.thread_id, request.query_only))
        if outcome.close_connection:
            self._close(actions, "killed by its own KILL")

    def _refresh(self, sql: SessionState, body: bytes, actions: list[Action]) -> None:
        """COM_REFRESH (``mysql_refresh()``, ``mariadb-dump --flush-logs``): RELOAD first, as
        on the server, whatever the options; REFRESH_LOG is FLUSH LOGS (the binlog rotates);
        REFRESH_MASTER would be RESET MASTER, which a fake master does not carry out; the other
        options (tables, status, hosts ...) have nothing to reset here and are OK. The options
        are one byte; none at all is options 0 (10.11.19: OK)."""
        options = body[0] if body else 0
        if not sql.account.has_any(Privilege.RELOAD):
            error = sql_error(ER_SPECIFIC_ACCESS_DENIED_ERROR, privilege_names(Privilege.RELOAD))
            self._send_error(actions, error)
        elif options & _REFRESH_MASTER:
            self._send_error(actions, sql_error(ER_NOT_SUPPORTED_YET, "RESET"))
        elif options & _REFRESH_LOG:
            self._query(sql, b"FLUSH LOGS", actions)
        else:
            self._ok(actions)

    def _set_option(self, sql: SessionState, body: bytes, actions: list[Action]) -> None:
        option = struct.unpack("<H", body[:2].ljust(2, b"\0"))[0]
        if option == 0:
            sql.capabilities |= Capability.MULTI_STATEMENTS
        elif option == 1:
            sql.capabilities &= ~Capability.MULTI_STATEMENTS
        else:
            self._send_error(actions, sql_error(ER_UNKNOWN_COM_ERROR))
            return
        self._ok_or_eof(sql, actions)

    def _prepared_command(
        self, sql: SessionState, command: int, body: bytes, actions: list[Action]
    ) -> None:
        if self._prepared_statements is None:
            from fakemaster.core.prepared import PreparedStatements

            self._prepared_statements = PreparedStatements()
        reply = self._prepared_statements.handle(command, body, sql, self.protocol)
        if reply.error is not None:
            self._send_error(actions, reply.error)
        seq = 1
        for payload in reply.payloads:
            seq = self._send(actions, payload, seq)
        if reply.outcome is not None:
            for request in reply.outcome.kills:
                actions.append(KillConnection(request.thread_id, request.query_only))
            if reply.outcome.close_connection:
                self._close(actions, "killed by its own KILL")

    def _change_user(self, body: bytes, actions: list[Action]) -> None:
        """COM_CHANGE_USER: MariaDB answers a well-formed one with a switch to the account's
        plugin and a new scramble; the client's reply (sequence 2) is then checked."""
        from fakemaster.protocol.change_user import ChangeUser

        try:
            request = ChangeUser.parse(body, self.protocol.capabilities)
        except DecodeError:
            self._send_error(actions, sql_error(ER_UNKNOWN_COM_ERROR))
            return
        self._change_request = request
        if request.collation is not None:
            # MariaDB takes the character set while reading the request: it holds even when
            # the request is then refused.
            self._login_collation = request.collation
            _use_collation(self.sql, request.collation)
        self.scramble = new_scramble()
        self._send(actions, AuthSwitchRequest(NATIVE_PASSWORD, self.scramble).encode(), 1)
        self.state = State.CHANGE_USER
        self._reader.expect_sequence(2)

    def _change_user_reply(self, auth: bytes, actions: list[Action]) -> None:
        """Log in again as the requested account: a fresh session (user variables, prepared
        statements and temporary state gone) with the requested database and character set.
        A refused request (password, database) leaves the old session as it was."""
        from fakemaster.protocol.resultset import SqlError, ok_payload
        from fakemaster.sql.answers.connection_statements import (
            apply_client_capabilities,
            change_database,
        )

        request, old = self._change_request, self.sql
        assert request is not None and old is not None
        self._change_request = None
        self.state = State.COMMAND
        user = request.user.decode("utf-8", "surrogateescape")
        account = self.server.accounts.get(user)
        if account is None or not check_native_password(account.password, self.scramble, auth):
            using = "YES" if auth else "NO"
            error = sql_error(ER_ACCESS_DENIED_ERROR, user, self.peer_host, using)
            self._send_error(actions, error, seq=3)
            return
        collation = client_collation(request.collation) if request.collation is not None else None
        fresh = SessionState.create(
            self.server,
            self.thread_id,
            user,
            self.peer_host,
            collation.id if collation is not None else old.connection_collation().id,
            account,
        )
        fresh.capabilities = old.capabilities
        apply_client_capabilities(fresh, old.capabilities)
        state: list[bytes] = []
        if request.database:
            try:
                name = request.database.decode("utf-8", "surrogateescape")
                state = change_database(fresh, name).session_state
            except SqlError as error:
                self._send_error(actions, error, seq=3)
                return
        if self._prepared_statements is not None:
            self._prepared_statements.close_all()
        self.sql = fresh
        self.info.user = user
        self._used_password = bool(auth)
        self._send(
            actions, ok_payload(self.protocol, status=fresh.status(), session_state=state), 3
        )

    def _field_list(self, sql: SessionState, body: bytes, actions: list[Action]) -> None:
        table = body.split(b"\0", 1)[0].decode("utf-8", "surrogateescape")
        if sql.database is None:  # checked first (10.11.19, differential)
            self._send_error(actions, sql_error(ER_NO_DB_ERROR))
        elif not table:
            self._send_error(actions, sql_error(ER_WRONG_TABLE_NAME, ""))
        else:
            self._send_error(actions, sql_error(ER_NO_SUCH_TABLE, sql.database, table))

    def _debug(self, sql: SessionState, actions: list[Action]) -> None:
        """COM_DEBUG (``mysql_dump_debug_info``): SUPER, then the server writes its status to
        its error log and answers EOF (OK to a client that deprecated EOF)."""
        if not sql.account.has_any(Privilege.SUPER):
            error = sql_error(ER_SPECIFIC_ACCESS_DENIED_ERROR, privilege_names(Privilege.SUPER))
            self._send_error(actions, error)
        else:
            self._ok_or_eof(sql, actions)

    def _binlog_dump(self, sql: SessionState, body: bytes, actions: list[Action]) -> None:
        """COM_BINLOG_DUMP as sql_parse.cc reads it: the fixed fields without a length check,
        from the connection's packet buffer (a short packet's missing fields are its NUL
        terminator and what earlier, longer packets left there), the name up to its first NUL
        (the packet's terminator at the latest). A name of FN_REFLEN bytes or more starts no
        dump: OK, then the connection closes. Bytes after the declared length are not part of
        the packet: they stay unread (:attr:`unread_input`)."""
        from fakemaster.vocabulary.commands import BINLOG_DUMP_HEAD, BinlogDump

        dump = BinlogDump.parse(body)
        if len(body) < BINLOG_DUMP_HEAD.size:
            dump = BinlogDump.parse(self._net_buffer.packet())
            dump = replace(dump, file_name=dump.file_name.split(b"\0", 1)[0])
        if len(dump.file_name.split(b"\0", 1)[0]) >= FN_REFLEN:
            self._ok(actions)
            self._close(actions, "COM_BINLOG_DUMP with a file name of FN_REFLEN bytes or more")
            return
        self._start_dump(sql, actions, dump)

    def _reset_connection(self, sql: SessionState) -> None:
        if self._prepared_statements is not None:
            self._prepared_statements.close_all()
        fresh = SessionState.create(
            self.server,
            self.thread_id,
            sql.user,
            sql.host,
            self._login_collation,
            sql.account,
        )
        fresh.capabilities = sql.capabilities
        fresh.database = sql.database
        self.sql = fresh

    def _statistics(self) -> str:
        # A real server answers "Uptime: 0" in its first second.
        uptime = max(int(self.server.clock() - self.server.started_at), 0)
        return (
            f"Uptime: {uptime}  Threads: {len(self.server.connections)}  Questions: 0  "
            "Slow queries: 0  Opens: 0  Open tables: 0  Queries per second avg: 0.000"
        )

    def _register_slave(self, sql: SessionState, body: bytes, actions: list[Action]) -> None:
        if not sql.account.has_any(DUMP_PRIVILEGE):
            # MariaDB's check_access() here answers with ER_ACCESS_DENIED_ERROR, naming the
            # account, before it reads the packet.
            account = sql.account
            using = "YES" if self._used_password else "NO"
            self._send_error(
                actions, sql_error(ER_ACCESS_DENIED_ERROR, account.user, account.host, using)
            )
            return
        from fakemaster.vocabulary.commands import RegisterSlave

        try:
            request = RegisterSlave.parse(body)
        except DecodeError as error:
            self._send_error(actions, sql_error(ER_UNKNOWN_ERROR, error.reason))
            return
        host = request.host.decode("utf-8", "surrogateescape") or self.peer_host
        master_id = request.master_id or int(self.server.globals["server_id"] or 0)
        self.info.replica = ReplicaInfo(
            server_id=request.server_id,
            host=host,
            user=request.user.decode("utf-8", "surrogateescape"),
            password=request.password.decode("utf-8", "surrogateescape"),
            port=request.port,
            rank=request.rank,
            master_id=master_id,
        )
        # MariaDB takes the replica's id as the session's server_id.
        sql.variables["server_id"] = request.server_id
        self._ok(actions)

    def _start_dump(
        self, sql: SessionState, actions: list[Action], dump: BinlogDump | BinlogDumpGtid
    ) -> None:
        from fakemaster.vocabulary.commands import BinlogDumpGtid

        variables = sql.user_variables
        heartbeat = _number(variables.get("master_heartbeat_period"))
        server_id = dump.server_id
        raw_name = dump.file_name
        request = DumpRequest(
            command=dump.COMMAND,
            thread_id=self.thread_id,
            server_id=server_id,
            position=dump.position,
            flags=dump.flags,
            file_name=raw_name.split(b"\0", 1)[0].decode("utf-8", "surrogateescape"),
            raw_file_name=raw_name,
            mysql_gtid_set=dump.gtid_set if isinstance(dump, BinlogDumpGtid) else None,
            master_binlog_checksum=_text(variables.get("master_binlog_checksum")),
            slave_capability=int(_number(variables.get("mariadb_slave_capability")) or 0),
            connect_state=_text(variables.get("slave_connect_state")),
            gtid_strict_mode=bool(_number(variables.get("slave_gtid_strict_mode"))),
            gtid_ignore_duplicates=bool(_number(variables.get("slave_gtid_ignore_duplicates"))),
            until_gtid=_text(variables.get("slave_until_gtid")),
            heartbeat_period_ns=int(heartbeat)
            if heartbeat is not None
            else self.config.default_heartbeat_period_ns,
            semi_sync=bool(_number(variables.get("rpl_semi_sync_slave"))),
            skip_replication=bool(sql.variables.get("skip_replication")),
            client_capabilities=self.protocol.capabilities,
            server_status=sql.status(),
            replica=self.info.replica,
            user_variables=dict(variables),
        )
        self.state = State.DUMPING
        self.info.dumping = True
        self._dump_reads = request.semi_sync or self._compression is not None
        if dump.COMMAND == Command.BINLOG_DUMP:
            older = self.server.claim_dump(self.thread_id, server_id)
            if older is not None:
                actions.append(EndDump(older, sql_error(ER_SLAVE_SAME_ID)))
        actions.append(StartDump(request))

    def _during_dump(self, payload: bytes, actions: list[Action]) -> None:
        # A dumping primary reads nothing but semi-sync ACKs; anything else is ignored, as the
        # real one never reads it.
        if payload[:1] == bytes((SEMI_SYNC_MAGIC,)):
            try:
                ack = parse_semi_sync_ack(payload)
            except DecodeError:
                return
            actions.append(Ack(ack.position, ack.file_name))

    # -- output helpers --------------------------------------------------------------------

    def _send(self, actions: list[Action], payload: bytes, seq: int) -> int:
        data, next_seq = frame(payload, seq & 0xFF)
        if self._compression is not None:
            self._compression.write(data)  # sent at the next flush (ERR packets at once)
        else:
            actions.append(SendBytes(data))
        return next_seq

    def _flush(self, actions: list[Action]) -> None:
        """Send what the compression buffered: after each response, as MariaDB flushes. Never
        while a dump runs: the dump owns the buffer then."""
        if self._compression is None or self.state is State.DUMPING:
            return
        data = self._compression.flush()
        if data:
            actions.append(SendBytes(data))

    def _send_error(self, actions: list[Action], error: SqlError, *, seq: int = 1) -> None:
        self._send(actions, error.payload(), seq)
        if self.sql is not None:
            self.sql.diagnostics = [("Error", error.errno, error.message)]

    def _ok(self, actions: list[Action], session_state: list[bytes] | None = None) -> None:
        from fakemaster.protocol.resultset import ok_payload

        assert self.sql is not None
        self._send(
            actions,
            ok_payload(self.protocol, status=self.sql.status(), session_state=session_state or []),
            1,
        )

    def _ok_or_eof(self, sql: SessionState, actions: list[Action]) -> None:
        """The end of a command answered with EOF, OK to a client that deprecated EOF."""
        if self.protocol.deprecate_eof:
            self._ok(actions)
        else:
            from fakemaster.protocol.resultset import eof_payload

            self._send(actions, eof_payload(status=sql.status()), 1)

    def _close(self, actions: list[Action], reason: str) -> None:
        if self.state is State.CLOSED:
            return
        self._flush(actions)  # e.g. the ERR that explains the close
        self.state = State.CLOSED
        self.close_reason = reason
        self._unregister()
        actions.append(Close(reason))

    def _unregister(self) -> None:
        if not self._unregistered:
            self._unregistered = True
            self.server.close_connection(self.thread_id)


# What COM_BINLOG_DUMP and COM_REGISTER_SLAVE need.
DUMP_PRIVILEGE = Privilege.REPLICATION_SLAVE


_COM_REFRESH = 0x07
_REFRESH_LOG = 0x02  # mysql_com.h REFRESH_LOG
_REFRESH_MASTER = 0x80  # RESET MASTER
_COM_STATISTICS = 0x09
_COM_PROCESS_KILL = 0x0C
_COM_SET_OPTION = 0x1B

_COM_DEBUG = 0x0D
# MariaDB's FN_REFLEN: a binlog name this long or longer is not looked for.
FN_REFLEN = 512


# Who may take the connection MariaDB keeps beyond max_connections (10.11: SUPER implies it).
_IGNORES_MAX_CONNECTIONS = Privilege.SUPER | Privilege.CONNECTION_ADMIN


def sql_error(errno: int, *args: object) -> SqlError:
    """:func:`fakemaster.protocol.resultset.sql_error`, from the module loaded at the first
    error or login: the greeting is sent without it (issue #25: start-up CPU)."""
    from fakemaster.protocol.resultset import sql_error as make

    return make(errno, *args)


def _max_connections(server: ServerState) -> int:
    return int(server.globals["max_connections"] or 0)


def _use_collation(sql: SessionState | None, collation_id: int) -> None:
    """The client's character set, as a login sets it: client, connection and results."""
    collation = client_collation(collation_id)
    if sql is None or collation is None:
        return
    sql.variables["character_set_client"] = collation.charset
    sql.variables["character_set_connection"] = collation.charset
    sql.variables["collation_connection"] = collation.name
    sql.set_results_charset(collation.charset, collation)


def _text(value: SqlValue | None) -> str | None:
    if value is None:
        return None
    raw = value.text()
    return None if raw is None else raw.decode("utf-8", "surrogateescape")


def _number(value: SqlValue | None) -> int | float | Decimal | None:
    if value is None or value.value is None:
        return None
    return value.as_number()
