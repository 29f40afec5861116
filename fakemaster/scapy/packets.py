"""MySQL packets of a replication connection: scapy's framing, split packets joined, and the
replication payloads recognised in each direction.

A logical payload of 16 MiB - 1 bytes or more travels as 0xFFFFFF-byte packets ended by a
shorter (possibly empty) one. ``ReplicationClientPacket`` and ``ReplicationServerPacket`` dissect
the whole chain as one packet (the payload joined by ``decoder.PacketReader``; ``chunks`` says
how many packets carried it) and build it back through ``encoder.frame``.

Which layer a payload is: in the client direction, the replication commands by their command
byte (sequence 0) and semi-sync ACKs once a semi-sync dump was requested; in the server
direction, once the client asked for a dump (``state.current_state()``), ``0x00`` payloads are
binlog event packets (with the semi-sync header when the replica enabled it) and short ``0xfe``
payloads EOF. Without that knowledge (a capture that starts mid-dump), a ``0x00`` payload is an
event when the event length in its header equals the rest of the payload.
"""

from __future__ import annotations

from typing import Any

from scapy.contrib.mysql import (
    MySQLClientPacket,
    MySQLColumnDefinition41,
    MySQLCommand,
    MySQLComQuery,
    MySQLEOFPacket,
    MySQLErrPacket,
    MySQLHandshakeResponse41,
    MySQLLenEncStrField,
    MySQLOKPacket,
    MySQLResultSetColumnCount,
    MySQLServerPacket,
    MySQLTextResultSetRow,
    _read_lenenc_int,
)
from scapy.fields import ByteField
from scapy.packet import Packet

from decoder import PacketReader
from encoder import frame
from fakemaster.protocol.handshake import Capability, MariaDBCapability
from fakemaster.scapy.commands import (
    ComBinlogDump,
    ComBinlogDumpGtid,
    ComRegisterSlave,
    SemiSyncAckPacket,
)
from fakemaster.scapy.events import BinlogEventPacket, SemiSyncBinlogEventPacket
from fakemaster.scapy.state import ConnectionState, current_state
from fakemaster.vocabulary.constants import HEADER_LEN, MAX_PACKET_PAYLOAD, SEMI_SYNC_MAGIC, Command
from fakemaster.vocabulary.header import EVENT_LENGTH_OFFSET
from fakemaster.vocabulary.packets import (
    EOF_HEADER,
    EOF_PACKET,
    ERR_HEADER,
    OK_HEADER,
    SEMI_SYNC_HEADER_LEN,
)

__all__ = [
    "MariaDBColumnCount",
    "MariaDBColumnDefinition",
    "ReplicationClientPacket",
    "ReplicationServerPacket",
    "complete_prefix",
    "looks_like_event_packet",
]

_COMMANDS: dict[int, type[Packet]] = {
    Command.BINLOG_DUMP: ComBinlogDump,
    Command.REGISTER_SLAVE: ComRegisterSlave,
    Command.BINLOG_DUMP_GTID: ComBinlogDumpGtid,
}
_PLAIN_PREFIX = 1  # the 0x00 before the event
_SEMI_SYNC_PREFIX = 1 + SEMI_SYNC_HEADER_LEN


def looks_like_event_packet(payload: bytes, prefix: int) -> bool:
    """Whether ``payload`` is ``prefix`` bytes then one whole event, by its length field."""
    start = prefix + EVENT_LENGTH_OFFSET
    if len(payload) < prefix + HEADER_LEN:
        return False
    return int.from_bytes(payload[start : start + 4], "little") == len(payload) - prefix


def complete_prefix(data: bytes, max_packets: int) -> int:
    """How many leading bytes of ``data`` are whole logical packets (at most ``max_packets``)."""
    offset = end = count = 0
    while count < max_packets and len(data) - offset >= 4:
        size = int.from_bytes(data[offset : offset + 3], "little")
        offset += 4 + size
        if offset > len(data):
            break
        if size < MAX_PACKET_PAYLOAD:
            end = offset
            count += 1
    return end


# MariaDB's extended capabilities: the last 4 bytes of the handshake response's 23-byte filler.
_EXTENDED_CAPABILITIES = slice(19, 23)
_CLIENT_MYSQL = 0x01  # clear: the client speaks MariaDB's extensions
_CLIENT_COMPRESS = int(Capability.COMPRESS)


class MariaDBColumnDefinition(MySQLColumnDefinition41):
    """A column definition with MariaDB's extended type info (MARIADB_CLIENT_EXTENDED_METADATA:
    a length-encoded string after ``org_column_name``)."""

    name = "MariaDB ColumnDefinition41"
    fields_desc = [
        *MySQLColumnDefinition41.fields_desc[:6],
        MySQLLenEncStrField("extended_metadata", b""),
        *MySQLColumnDefinition41.fields_desc[6:],
    ]


class MariaDBColumnCount(MySQLResultSetColumnCount):
    """A result set's column count with MariaDB's metadata flag (MARIADB_CLIENT_CACHE_METADATA:
    0 when the column definitions are left out because the client has them cached)."""

    name = "MariaDB ResultSet Column Count"
    fields_desc = [*MySQLResultSetColumnCount.fields_desc, ByteField("metadata_follows", 1)]


class _JoinedPacket(Packet):
    """Split-packet handling shared by both directions (fields come from scapy's framing)."""

    chunks = 1

    def do_dissect(self, s: bytes) -> bytes:
        rest: bytes = super().do_dissect(s)
        self._logical_length = int(self.payload_length or 0)
        if self.payload_length == MAX_PACKET_PAYLOAD:
            reader = PacketReader(check_sequence=False)
            reader.feed(s)
            got = reader.next_packet()
            if got is not None:
                payload = got[1]
                self._logical_length = len(payload)
                self.chunks = len(payload) // MAX_PACKET_PAYLOAD + 1
                return payload + s[reader.offset :]
        return rest

    def copy(self) -> Any:
        clone = super().copy()
        clone.chunks = self.chunks
        if hasattr(self, "_logical_length"):
            clone._logical_length = self._logical_length
        return clone

    def extract_padding(self, s: bytes) -> tuple[bytes, bytes]:
        length = getattr(self, "_logical_length", int(self.payload_length or 0))
        return s[:length], s[length:]

    def post_build(self, pkt: bytes, pay: bytes) -> bytes:
        if self.payload_length is None or (
            self.payload_length == MAX_PACKET_PAYLOAD and len(pay) >= MAX_PACKET_PAYLOAD
        ):
            return frame(pay, int(self.sequence_id))[0]
        return pkt + pay


class ReplicationClientPacket(_JoinedPacket, MySQLClientPacket):
    name = "MySQL Client Packet"

    def guess_payload_class(self, payload: bytes) -> Any:
        state = current_state()
        if payload and self.sequence_id == 0:
            command = _COMMANDS.get(payload[0])
            if command is not None:
                return command
            if (
                payload[0] == SEMI_SYNC_MAGIC
                and state is not None
                and state.dump_requested
                and state.semi_sync
            ):
                return SemiSyncAckPacket
        return MySQLClientPacket.guess_payload_class(self, payload)

    def post_dissection(self, pkt: Packet) -> None:
        state = current_state()
        if state is None:
            return
        if isinstance(self.payload, MySQLHandshakeResponse41):
            extended = int.from_bytes(bytes(self.payload.filler)[_EXTENDED_CAPABILITIES], "little")
            mariadb = not int(self.payload.client_flags) & _CLIENT_MYSQL
            state.extended_metadata = mariadb and bool(
                extended & MariaDBCapability.EXTENDED_METADATA
            )
            state.cache_metadata = mariadb and bool(extended & MariaDBCapability.CACHE_METADATA)
            state.compress_requested = bool(int(self.payload.client_flags) & _CLIENT_COMPRESS)
        elif isinstance(self.payload, MySQLComQuery):
            state.observe_query(bytes(self.payload.query))
        elif isinstance(self.payload, (ComBinlogDump, ComBinlogDumpGtid)):
            state.start_dump()
        elif isinstance(self.payload, (ComRegisterSlave, MySQLCommand)):
            state.observe_command()


class ReplicationServerPacket(_JoinedPacket, MySQLServerPacket):
    name = "MySQL Server Packet"

    def guess_payload_class(self, payload: bytes) -> Any:
        state = current_state()
        if (
            state is not None
            and state.compress_requested
            and not state.login_answered
            and payload[:1] in (bytes((OK_HEADER,)), bytes((ERR_HEADER,)))
        ):
            # The answer to the login: after an OK everything is compressed.
            state.login_answered = True
            state.compressed = payload[0] == OK_HEADER
        if payload and payload[0] == OK_HEADER:
            if state is not None and state.dump_requested:
                if state.semi_sync and len(payload) >= 2 and payload[1] == SEMI_SYNC_MAGIC:
                    return SemiSyncBinlogEventPacket
                if len(payload) >= _PLAIN_PREFIX + HEADER_LEN:
                    return BinlogEventPacket
                return MySQLOKPacket  # too short for an event (e.g. the OK of a command)
            elif looks_like_event_packet(payload, _PLAIN_PREFIX):
                return BinlogEventPacket
            elif payload[1:2] == bytes((SEMI_SYNC_MAGIC,)) and looks_like_event_packet(
                payload, _SEMI_SYNC_PREFIX
            ):
                return SemiSyncBinlogEventPacket
        if state is not None and state.dump_requested:
            if payload and payload[0] == EOF_HEADER and len(payload) == EOF_PACKET.size:
                return MySQLEOFPacket
        elif state is not None and state.result_set is not None and payload:
            return _result_set_part(state, payload)
        return MySQLServerPacket.guess_payload_class(self, payload)


def _result_set_part(state: ConnectionState, payload: bytes) -> Any:
    """The layer of the next packet of a COM_QUERY's answer, advancing ``state``."""
    head = payload[0]
    if head == ERR_HEADER:
        state.result_set = None
        return MySQLErrPacket
    stage = state.result_set
    if stage == "first":
        if head == OK_HEADER:
            state.result_set = None
            return MySQLOKPacket
        state.columns_left, size = _read_lenenc_int(payload)
        with_definitions = not state.cache_metadata or payload[size : size + 1] != b"\0"
        if not state.columns_left:
            state.result_set = None
        else:
            state.result_set = "columns" if with_definitions else "after_columns"
        return MariaDBColumnCount if state.cache_metadata else MySQLResultSetColumnCount
    if stage == "columns":
        state.columns_left -= 1
        if state.columns_left <= 0:
            state.result_set = "after_columns"
        return MariaDBColumnDefinition if state.extended_metadata else MySQLColumnDefinition41
    is_end = head == EOF_HEADER and len(payload) < MAX_PACKET_PAYLOAD
    if stage == "after_columns":
        state.result_set = "rows"
        if is_end and len(payload) == EOF_PACKET.size:
            return MySQLEOFPacket
    if is_end:  # the end of the rows: EOF, or an OK with 0xfe for CLIENT_DEPRECATE_EOF
        state.result_set = None
        return MySQLEOFPacket if len(payload) == EOF_PACKET.size else MySQLOKPacket
    return MySQLTextResultSetRow
