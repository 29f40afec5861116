"""The dump stream, sans-IO: COM_BINLOG_DUMP in, the packets a MariaDB 10.11 dump thread sends out.

:class:`DumpStream` produces exactly the bytes ``mysql_binlog_send`` (``sql/sql_repl.cc``)
sends: for every file a fake ROTATE and the file's FORMAT_DESCRIPTION (rewritten), then the
file's events, rewritten for old replicas (``@mariadb_slave_capability``; the made-up and
rewritten events are in :mod:`fakemaster.core.dump.events`), skipped up to the replica's GTID
position (with a fake GTID_LIST once it is reached), with the semi-sync header when the replica
asked for it; at the end of the binlog an EOF packet (non-blocking dumps) or nothing until new
events arrive (the shell then sends :meth:`DumpStream.heartbeat_packet`); errors as ERR packets
with MariaDB's texts.

The shell calls :meth:`DumpStream.next_chunk` whenever the socket has drained: each call returns
at most about ``chunk_size`` bytes of framed packets (more only for one event that is larger),
or None when there is nothing to send yet; :attr:`DumpStream.is_finished` tells that the dump
ended (after its EOF or ERR packet).

A dump to a semi-sync replica asks the store's :class:`~fakemaster.store.semi_sync.SemiSyncMaster`
which events request an ACK and reports the ACKs to it (:mod:`fakemaster.store.semi_sync`).

Encrypted binlog files (``encrypt_binlog=ON``) are sent as a primary with the key sends them:
their START_ENCRYPTION flagged IGNORABLE, every later event decrypted, with the config's
``binlog_keys``; without keys, START_ENCRYPTION ends the dump with the error a primary gives
when its key plugin has no key.

One thing a real 10.11.19 primary does is not imitated: with semi-sync on, a dump that ends
with EOF stalls before sending its last buffered packets (the dump thread waits for the ACK
receiver thread); here the EOF is sent.
"""

from __future__ import annotations

from collections.abc import Generator, Iterator
from typing import TYPE_CHECKING, Protocol

from decoder.encryption import FileDecryption
from encoder.packets import encode_eof, encode_err, frame_parts
from fakemaster.config.server_config import DEFAULT_SERVER_ID
from fakemaster.core.dump.events import (
    begin_event,
    checksummed,
    dummy_event,
    fake_event,
    fix_crc,
    gtid_list_body,
)
from fakemaster.core.dump.framing import FramedSpan, frame_block
from fakemaster.store import BinlogReadError, BinlogStore, UnknownBinlogFile
from fakemaster.store.base import MAGIC_LEN, fde_checksum_alg, parse_gtid_list_event
from fakemaster.store.semi_sync import SemiSyncConfig, SemiSyncMaster, semi_sync_master
from fakemaster.vocabulary.constants import (
    CHECKSUM_LEN,
    GTID_LIST_FLAG_UNTIL_REACHED,
    HEADER_LEN,
    MAX_PACKET_PAYLOAD,
    SEMI_SYNC_MAGIC,
    ChecksumAlg,
    DumpFlag,
    EventFlag,
    EventType,
    GtidFlag,
    SlaveCapability,
)
from fakemaster.vocabulary.encryption import SCHEME
from fakemaster.vocabulary.errcodes import ER_MASTER_FATAL_ERROR_READING_BINLOG
from fakemaster.vocabulary.errors import DecodeError
from fakemaster.vocabulary.events import Gtid
from fakemaster.vocabulary.groups import GROUP_PART_TYPES, is_commit_or_rollback
from fakemaster.vocabulary.gtid_state import (
    PURGED_MESSAGE,
    BinlogState,
    GtidPosition,
    GtidStateError,
    check_start_position,
    find_start_file,
    missing_start_error,
    strict_hole_message,
)
from fakemaster.vocabulary.header import EVENT_LENGTH_OFFSET as _LENGTH_OFFSET
from fakemaster.vocabulary.header import FLAGS_OFFSET as _FLAGS_OFFSET
from fakemaster.vocabulary.header import LOG_POS_OFFSET as _LOG_POS_OFFSET
from fakemaster.vocabulary.header import SERVER_ID_OFFSET, TYPE_CODE_OFFSET
from fakemaster.vocabulary.layouts import FDE_CREATE_TIMESTAMP_OFFSET, GTID_FLAGS2_OFFSET
from fakemaster.vocabulary.layouts import GTID_BODY_MIN as _GTID_BODY_LEN
from fakemaster.vocabulary.layouts import GTID_FIXED as _GTID_PEEK
from fakemaster.vocabulary.layouts import U16 as _U16
from fakemaster.vocabulary.layouts import U32 as _U32
from fakemaster.vocabulary.layouts import U64 as _U64
from fakemaster.vocabulary.packets import PACKET_HEADER as _PACKET_HEADER
from fakemaster.vocabulary.packets import (
    SERVER_STATUS_AUTOCOMMIT,
    EofPacket,
    ErrPacket,
)

if TYPE_CHECKING:
    from fakemaster.vocabulary.encryption import BinlogKeys

__all__ = [
    "CHECKSUM_UNKNOWN",
    "CHUNK_SIZE",
    "READ_BLOCK",
    "SPAN_MIN",
    "DumpError",
    "DumpRequestLike",
    "DumpStream",
    "ServerConfigLike",
    "checksum_alg_at_connect",
]

CHUNK_SIZE = 1 << 20
# Files are read in blocks smaller than a chunk: a dump paused between chunks keeps the unsent
# rest of its last block alive, and with many replicas those blocks add up.
READ_BLOCK = 256 << 10
# A file's events are sent from the frame cache (when the shell has one) from this many bytes
# left to send on: below it framing per replica costs less than a cache entry.
SPAN_MIN = 1 << 20
# ``@master_binlog_checksum`` set to something else than NONE/CRC32: find_type() fails and the
# server's algorithm variable becomes -1, which it treats like CRC32.
CHECKSUM_UNKNOWN = -1

_FDE_CREATED_OFFSET = HEADER_LEN + FDE_CREATE_TIMESTAMP_OFFSET

MSG_NO_LOG_FILE = "Could not find first log file name in binary log index file"
MSG_IMPOSSIBLE_POSITION = "Client requested master to start replication from impossible position"
MSG_CHECKSUM = (
    "Slave can not handle replication events with the checksum that master is configured to log"
)
MSG_NO_FDE = "Failed to find format descriptor event in start of binlog"
# A closed file that ends right after its magic: the read of its first event meets the end of
# the file, which sets no message, and the server reports its default text (10.11.19 does).
MSG_UNKNOWN = "Unknown error"
MSG_DECRYPT = "Could not decrypt binlog: encryption key error"
MSG_DECRYPT_EVENT = "event decryption failure"
MSG_GTID_CORRUPT = "Failed to read Gtid_log_event: corrupt binlog"
MSG_GTID_LIST_CORRUPT = "Failed to read Gtid_list_log_event: corrupt binlog"
MSG_GTID_REPLACE = "Failed to replace GTID event with backwards-compatible event: corrupt event."
MSG_ANNOTATE_DUMMY = "Failed to replace row annotate event with dummy: too small event."
MSG_CHECKPOINT_DUMMY = (
    "Failed to replace binlog checkpoint or gtid list event with dummy: too small event."
)
MSG_NOT_OPEN = "Binary log is not open"
MSG_NO_NEXT_LOG = "could not find next log"


class DumpRequestLike(Protocol):
    """What a dump needs to know of the request (``fakemaster.core.session.DumpRequest``)."""

    @property
    def server_id(self) -> int: ...
    @property
    def position(self) -> int: ...
    @property
    def flags(self) -> int: ...
    @property
    def file_name(self) -> str: ...
    @property
    def master_binlog_checksum(self) -> str | None: ...
    @property
    def slave_capability(self) -> int: ...
    @property
    def connect_state(self) -> str | None: ...
    @property
    def gtid_strict_mode(self) -> bool: ...
    @property
    def gtid_ignore_duplicates(self) -> bool: ...
    @property
    def until_gtid(self) -> str | None: ...
    @property
    def semi_sync(self) -> bool: ...
    @property
    def skip_replication(self) -> bool: ...


class ServerConfigLike(SemiSyncConfig, Protocol):
    """What a dump needs to know of the server (``fakemaster.config.server_config.ServerConfig``)."""

    # None: the default server id (a server hands its dumps the one it reports).
    @property
    def server_id(self) -> int | None: ...


def checksum_alg_at_connect(value: str | None) -> int:
    """The algorithm the dump thread uses for its first fake ROTATE: UNDEF when the replica
    never set ``@master_binlog_checksum``, else the value read as NONE or CRC32 (case-blind;
    anything else counts as checksummed)."""
    if value is None:
        return ChecksumAlg.UNDEF
    upper = value.upper()
    if upper == "NONE":
        return ChecksumAlg.OFF
    if upper == "CRC32":
        return ChecksumAlg.CRC32
    return CHECKSUM_UNKNOWN


def _basename(name: str) -> str:
    return name.rsplit("/", 1)[-1]


# --- the dump ---------------------------------------------------------------------------------


class DumpError(Exception):
    """Ends a dump with an ERR packet. With ``coordinates`` the message gets the suffix naming
    the start position and the last event and byte read."""

    def __init__(
        self,
        message: str,
        errno: int = ER_MASTER_FATAL_ERROR_READING_BINLOG,
        *,
        coordinates: bool = False,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.errno = errno
        self.coordinates = coordinates


class _Wait:
    """Yielded by the dump generator when it has caught up with the binlog."""


_WAIT = _Wait()
_SKIP_NOT, _SKIP_STANDALONE, _SKIP_TRANSACTION = 0, 1, 2
_UNTIL_NOT_DONE, _UNTIL_AFTER_STANDALONE, _UNTIL_AFTER_TRANSACTION = 0, 1, 2


class DumpStream:
    """The packets of one binlog dump (see the module docstring).

    ``semi_sync`` defaults to the store's shared :class:`SemiSyncMaster` when the replica set
    ``@rpl_semi_sync_slave``. ``chunk_size`` bounds what :meth:`next_chunk` returns.
    """

    def __init__(
        self,
        store: BinlogStore | None,
        request: DumpRequestLike,
        config: ServerConfigLike | None = None,
        *,
        semi_sync: SemiSyncMaster | None = None,
        chunk_size: int = CHUNK_SIZE,
    ) -> None:
        self.store = store
        self.request = request
        server_id = config.server_id if config is not None else None
        self.server_id = server_id if server_id is not None else DEFAULT_SERVER_ID
        # Not part of ServerConfigLike: configs without keys need not name the attribute.
        self._keys: BinlogKeys | None = getattr(config, "binlog_keys", None)
        # The decryption of the file being sent, from its START_ENCRYPTION on.
        self._decryption: FileDecryption | None = None
        self.chunk_size = chunk_size
        self.semi_sync = request.semi_sync
        if self.semi_sync and semi_sync is None and store is not None:
            semi_sync = semi_sync_master(store, config)
        self._semi = semi_sync if self.semi_sync else None
        self._prefixes = (
            (bytes((0, SEMI_SYNC_MAGIC, 0)), bytes((0, SEMI_SYNC_MAGIC, 1)))
            if self.semi_sync
            else (b"\x00", b"\x00")
        )
        self.capability = request.slave_capability
        self.flags = request.flags
        self.non_blocking = bool(request.flags & DumpFlag.NON_BLOCK) or request.server_id == 0
        self._status = int(getattr(request, "server_status", SERVER_STATUS_AUTOCOMMIT))
        self._seq = 1
        self._finished = False
        self._started_semi_sync = False
        # Where the dump is: file, next offset; what the error texts report.
        self.file_name = ""
        self.position = 0
        self._start_file = _basename(request.file_name)
        self._start_pos = request.position
        self._last_event = request.position
        self._last_byte = request.position
        self._binlog_open = False
        self._alg = checksum_alg_at_connect(request.master_binlog_checksum)
        # GTID mode.
        self._gtid_state: GtidPosition | None = None
        self._empty_domains: set[int] = set()
        self._until: GtidPosition | None = None
        self._until_state = BinlogState()
        self._skip = _SKIP_NOT
        self._until_group = _UNTIL_NOT_DONE
        self._send_fake_gtid_list = False
        self.events_sent = 0
        self._send_annotate = bool(request.flags & DumpFlag.SEND_ANNOTATE_ROWS)
        self._spans_allowed = False
        self._run = self._dump()

    # --- the shell's interface ------------------------------------------------------------

    @property
    def is_finished(self) -> bool:
        return self._finished

    @property
    def next_sequence(self) -> int:
        """The sequence number of the next packet."""
        return self._seq

    def next_chunk(self) -> bytes | None:
        """Framed packets to send (at most about ``chunk_size`` bytes), or None when there is
        nothing to send now (caught up, or finished)."""
        parts = self.next_parts()
        return b"".join(parts) if parts else None  # type: ignore[arg-type]

    def next_parts(self) -> list[bytes | bytearray | memoryview | FramedSpan]:
        """What :meth:`next_chunk` returns, as buffers to write in order without joining them
        (a large event is a memoryview of what the store read, not a copy); empty when there is
        nothing to send now. Once :meth:`allow_framed_spans` was called, the last item may be a
        :class:`~fakemaster.core.dump.framing.FramedSpan`: the shell sends those packets of the
        file from its frame cache and sets :attr:`FramedSpan.reached` before the next call."""
        if self._finished:
            return []
        if self._semi is not None:
            self._semi.check_timeouts()
        parts: list[bytes | bytearray | memoryview | FramedSpan] = []
        size = 0
        run = self._run
        while size < self.chunk_size:
            try:
                item = next(run)
            except StopIteration:
                self._finish()
                break
            except DumpError as error:
                parts.append(self._err_packet(error))
                self._finish()
                break
            if item is _WAIT:
                break
            if isinstance(item, list):
                parts.extend(item)
                size += sum(len(part) for part in item)
                continue
            parts.append(item)  # type: ignore[arg-type]
            if isinstance(item, FramedSpan):
                break
            size += len(item)  # type: ignore[arg-type]
        return parts

    def allow_framed_spans(self) -> None:
        """The shell can send spans of a file framed once for every replica (a plain TCP
        connection with a frame cache): :meth:`next_parts` may now ask for them."""
        self._spans_allowed = True

    def heartbeat_packet(self) -> bytes:
        """A HEARTBEAT naming the current file and position (timestamp 0, flags 0)."""
        name = self.file_name.encode("utf-8", "surrogateescape")
        if self.position <= 0xFFFFFFFF:
            body, log_pos = name, self.position
        else:
            body, log_pos = _U64.pack(self.position) + name, 0
        event = fake_event(
            EventType.HEARTBEAT, self.server_id, body, log_pos=log_pos, flags=0, alg=self._alg
        )
        return self._frame(event)

    def on_semi_sync_ack(self, position: int, file_name: str) -> None:
        """The replica's semi-sync ACK packet (what the session parsed)."""
        self.on_ack(file_name, position)

    def on_ack(self, file_name: str, position: int) -> None:
        """The replica acknowledged everything up to (file, position)."""
        if self._semi is not None:
            self._semi.report_reply(file_name, position)

    def end_with_error(self, errno: int, message: str) -> bytes:
        """End the dump now with an ERR packet (e.g. a newer dump for the same replica server
        id replaced it): framed in the dump's sequence, the start position and the last event
        and byte read appended as to MariaDB's other dump errors. b"" if already finished."""
        if self._finished:
            return b""
        packet = self._err_packet(DumpError(message, errno, coordinates=True))
        self._finish()
        return packet

    def close(self) -> None:
        """The connection is gone: stop counting it as a semi-sync replica."""
        if not self._finished:
            self._finish()

    # --- framing --------------------------------------------------------------------------

    def _frame(self, event: bytes | bytearray | memoryview, ack: bool = False) -> bytes:
        prefix = self._prefixes[ack]
        size = len(prefix) + len(event)
        seq = self._seq
        if size < MAX_PACKET_PAYLOAD:
            self._seq = (seq + 1) & 0xFF
            return _PACKET_HEADER.pack(size | seq << 24) + prefix + event
        parts, self._seq = frame_parts((prefix, event), seq)
        return b"".join(parts)

    def _event_packet(self, event: bytes | bytearray | memoryview, end: int) -> bytes:
        ack = self._semi is not None and self._semi.need_ack(self.file_name, end)
        packet = self._frame(event, ack)
        self.events_sent += 1
        if ack:
            # After an event that wants an ACK the master flushes and clears its packet
            # counter (net_clear), then counts this packet: the next one is seq 1 again.
            self._seq = 1
        return packet

    def _err_packet(self, error: DumpError) -> bytes:
        message = error.message
        if error.coordinates and self._binlog_open:
            message += (
                f"; the first event '{self._start_file}' at {self._start_pos}, "
                f"the last event read from '{self.file_name}' at {self._last_event}, "
                f"the last byte read from '{self.file_name}' at {self._last_byte}."
            )
        packet = encode_err(ErrPacket(error.errno, "HY000", message))
        return self._frame_control(packet)

    def _frame_control(self, payload: bytes) -> bytes:
        seq = self._seq
        self._seq = (seq + 1) & 0xFF
        return _PACKET_HEADER.pack(len(payload) | seq << 24) + payload

    def _finish(self) -> None:
        self._finished = True
        if self._semi is not None and self._started_semi_sync:
            self._started_semi_sync = False
            self._semi.dump_ended()

    # --- the dump thread ------------------------------------------------------------------

    def _plain(self) -> bool:
        """Every event of the file is sent as it is, one packet each (but ANNOTATE_ROWS unless
        asked for): the block can take :func:`~fakemaster.core.dump.framing.frame_block`."""
        state = self._gtid_state
        return (
            self._semi is None
            and self._decryption is None
            and self._skip == _SKIP_NOT
            and self._until is None
            and not self._send_fake_gtid_list
            and (state is None or len(state) == 0)
            and self.capability >= SlaveCapability.GTID
            and not self.request.skip_replication
        )

    def _dump(self) -> Iterator[bytes | list[bytes | bytearray | memoryview] | FramedSpan | _Wait]:
        store = self.store
        if store is None or not store.file_names():
            raise DumpError(MSG_NOT_OPEN)
        name, pos = self._start_point(store)
        if self._semi is not None:
            self._started_semi_sync = True
            self._semi.dump_started(name, pos)
        clear_initial_log_pos = pos > MAGIC_LEN
        while True:
            self.file_name, self.position = name, pos
            yield self._frame(self._fake_rotate(name, pos))
            self._binlog_open = True
            if not (yield from self._header_written(store, name)):
                yield self._frame_control(encode_eof(EofPacket(0, self._status)))
                return
            yield from self._format_description(store, name, pos, clear_initial_log_pos)
            clear_initial_log_pos = False
            if pos == MAGIC_LEN:
                pos = self._last_byte
            self.position = pos
            if self._until is not None and len(self._until) == 0:
                self._until_group = _UNTIL_AFTER_STANDALONE
            finished = yield from self._send_file(store, name)
            if finished:
                yield self._frame_control(encode_eof(EofPacket(0, self._status)))
                return
            following = store.next_file(name)
            if following is None:
                raise DumpError(MSG_NO_NEXT_LOG, coordinates=True)
            name, pos = following, MAGIC_LEN

    def _start_point(self, store: BinlogStore) -> tuple[str, int]:
        request = self.request
        if request.connect_state is None:
            # The server looks the name up as given (a directory part makes it unknown).
            requested = request.file_name
            name = requested if requested else store.first_file()
            if name is None or not store.has_file(name):
                raise DumpError(MSG_NO_LOG_FILE)
            pos = request.position
        else:
            name = self._gtid_start_file(store, request)
            pos = MAGIC_LEN
        if pos < MAGIC_LEN or pos > store.file_size(name):
            start = self._start_file
            raise DumpError(
                f"{MSG_IMPOSSIBLE_POSITION}; the first event '{start}' at {pos}, "
                f"the last event read from '{start}' at {MAGIC_LEN}, "
                f"the last byte read from '{start}' at {MAGIC_LEN}."
            )
        return name, pos

    def _gtid_start_file(self, store: BinlogStore, request: DumpRequestLike) -> str:
        assert request.connect_state is not None
        try:
            state = GtidPosition.parse(request.connect_state)
            until = (
                GtidPosition.parse(request.until_gtid) if request.until_gtid is not None else None
            )
        except GtidStateError as error:
            raise DumpError(error.message, error.errno) from None
        problem, empty = check_start_position(
            state,
            store.end_state(),
            ignore_duplicates=request.gtid_ignore_duplicates,
            until=until,
        )
        if problem is not None:
            raise DumpError(problem.message)
        files = [(name, store.gtid_list(name)) for name in store.settled_files()]
        name = find_start_file(state, files, until)
        if name is None:
            raise DumpError(PURGED_MESSAGE)
        self._gtid_state = state
        self._empty_domains = set(empty)
        self._until = until
        return name

    def _pos_reached(self) -> bool:
        state = self._gtid_state
        return state is None or all(gtid.domain_id in self._empty_domains for gtid in state)

    def _fake_rotate(self, name: str, position: int) -> bytes:
        body = _U64.pack(position) + name.encode("utf-8", "surrogateescape")
        return fake_event(
            EventType.ROTATE,
            self.server_id,
            body,
            log_pos=0,
            flags=EventFlag.ARTIFICIAL,
            alg=self._alg,
        )

    def _read_one(self, store: BinlogStore, name: str, offset: int) -> bytes:
        """The event at ``offset`` (b'' at the readable end)."""
        try:
            data = store.read(name, offset, HEADER_LEN)
        except BinlogReadError as error:
            self._last_byte = error.last_byte
            raise DumpError(error.message, coordinates=True) from None
        except UnknownBinlogFile:
            raise DumpError(MSG_NO_NEXT_LOG, coordinates=True) from None
        if not data:
            return b""
        length = _U32.unpack_from(data, _LENGTH_OFFSET)[0]
        return data[:length]

    def _header_written(
        self, store: BinlogStore, name: str
    ) -> Generator[bytes | _Wait, None, bool]:
        """Wait while ``name`` is the last file and holds no whole event yet (its header is
        being written: a primary creating the file); False when a non-blocking dump ends
        there instead. A file that is not the last one is closed: whatever it holds is read
        (a header-less closed file is the error :meth:`_format_description` gives)."""
        while True:
            # Asked before reading: once the file is not the last, its bytes are final.
            last = store.is_last(name)
            try:
                readable = store.file_size(name) > MAGIC_LEN
            except UnknownBinlogFile:
                raise DumpError(MSG_NO_NEXT_LOG, coordinates=True) from None
            if readable or not last:
                return True
            if store.poll():
                continue
            if self.non_blocking:
                return False
            yield _WAIT

    def _format_description(
        self, store: BinlogStore, name: str, start: int, clear_initial_log_pos: bool
    ) -> Iterator[bytes]:
        self._last_event = MAGIC_LEN
        fde = self._read_one(store, name, MAGIC_LEN)
        self._last_byte = MAGIC_LEN + len(fde)
        if not fde:
            raise DumpError(MSG_UNKNOWN, coordinates=True)
        if len(fde) < HEADER_LEN or fde[TYPE_CODE_OFFSET] != EventType.FORMAT_DESCRIPTION:
            raise DumpError(MSG_NO_FDE, coordinates=True)
        self._alg = fde_checksum_alg(fde)
        if self.request.master_binlog_checksum is None and checksummed(self._alg):
            raise DumpError(MSG_CHECKSUM, coordinates=True)
        event = bytearray(fde)
        event[_FLAGS_OFFSET] &= ~EventFlag.BINLOG_IN_USE & 0xFF
        if clear_initial_log_pos:
            # The replica must not take the FDE's end for its position, nor think the master
            # restarted (which would drop its temporary tables).
            _U32.pack_into(event, _LOG_POS_OFFSET, 0)
            _U32.pack_into(event, _FDE_CREATED_OFFSET, 0)
            fix_crc(event, self._alg)
        elif self._gtid_state is not None and not self._pos_reached():
            _U32.pack_into(event, _FDE_CREATED_OFFSET, 0)
            fix_crc(event, self._alg)
        yield self._frame(event)
        self._decryption = None
        self._last_event = self._last_byte
        following = self._read_one(store, name, self._last_byte)
        if (
            len(following) >= HEADER_LEN
            and following[TYPE_CODE_OFFSET] == EventType.START_ENCRYPTION
        ):
            offset = self._last_byte
            self._last_byte += len(following)
            yield self._frame(self._start_decryption(following, offset, clear_initial_log_pos))
        if start != MAGIC_LEN:
            self._last_byte = start

    def _start_decryption(self, event: bytes, offset: int, clear_initial_log_pos: bool) -> bytes:
        """Set up the decryption of the rest of the file from its START_ENCRYPTION ``event``
        (at ``offset``), and return that event as the replica gets it: IGNORABLE, so that it
        does not try to decrypt what follows."""
        keys = self._keys
        try:
            decryption = FileDecryption(keys, event, offset)
        except DecodeError:
            raise DumpError(MSG_DECRYPT, coordinates=True) from None
        crypto = decryption.crypto
        if keys is None or keys.key(crypto.key_version) is None or crypto.scheme != SCHEME:
            raise DumpError(MSG_DECRYPT, coordinates=True)
        self._decryption = decryption
        sent = bytearray(event)
        sent[_FLAGS_OFFSET] |= EventFlag.IGNORABLE
        if clear_initial_log_pos:
            _U32.pack_into(sent, _LOG_POS_OFFSET, 0)
        fix_crc(sent, self._alg)
        return bytes(sent)

    def _send_file(
        self, store: BinlogStore, name: str
    ) -> Generator[bytes | list[bytes | bytearray | memoryview] | FramedSpan | _Wait, None, bool]:
        """The events of one file; returns True when the dump ends (non-blocking end of the
        binlog, or an UNTIL position reached)."""
        while True:
            # A file that is not the last one is closed and its size final. Asked the other
            # way round, an append and a rotation between the two questions would make the
            # dump leave the file before the events written just before the rotation.
            last = store.is_last(name)
            try:
                end = store.file_size(name)
            except UnknownBinlogFile:
                raise DumpError(MSG_NO_NEXT_LOG, coordinates=True) from None
            if self.position >= end:
                if not last:
                    return False
                store.poll()
                if store.is_last(name) and self.position >= store.file_size(name):
                    if self.non_blocking:
                        return True
                    yield _WAIT
                continue
            if self._spans_allowed and end - self.position >= SPAN_MIN and self._plain():
                span = FramedSpan(name, self.position, self._seq, self._send_annotate, end)
                yield span
                reached = span.reached
                if reached is not None and reached.offset > self.position:
                    self._seq = reached.seq
                    self.events_sent += reached.events
                    self._last_event = reached.last_event
                    self.position = self._last_byte = reached.offset
                    continue
            try:
                data = store.read(name, self.position, min(self.chunk_size, READ_BLOCK))
            except BinlogReadError as error:
                self._last_event = self.position
                self._last_byte = error.last_byte
                raise DumpError(error.message, coordinates=True) from None
            except UnknownBinlogFile:
                # Purged (forced) since its size was asked for above: as at the next read.
                raise DumpError(MSG_NO_NEXT_LOG, coordinates=True) from None
            base = self.position
            if self._plain():
                # Not kept in a local: a paused dump holds its read block, not its packets too.
                yield self._frame_block(data, base)
                continue
            view = memoryview(data)
            index = 0
            size = len(data)
            while index < size:
                length = _U32.unpack_from(data, index + _LENGTH_OFFSET)[0]
                start = base + index
                end_of_event = start + length
                self._last_event = start
                self._last_byte = end_of_event
                self.position = end_of_event
                event = view[index : index + length]
                index += length
                decryption = self._decryption
                if decryption is not None and start > decryption.start_offset:
                    try:
                        event = memoryview(decryption.decrypt(start, bytes(event)))
                    except DecodeError:
                        raise DumpError(MSG_DECRYPT_EVENT, coordinates=True) from None
                type_code = event[TYPE_CODE_OFFSET]
                if type_code != EventType.START_ENCRYPTION:
                    packet = self._send_event(event, type_code, end_of_event)
                    if packet is not None:
                        yield packet
                last_packet: bytes | memoryview = event
                if self._send_fake_gtid_list and self._skip == _SKIP_NOT:
                    self._send_fake_gtid_list = False
                    last_packet = self._fake_gtid_list(end_of_event, 0)
                    yield self._frame(last_packet)
                # The server checks for COMMIT in its packet buffer, which holds the fake
                # GTID_LIST if one was just sent: then only an XID ends the UNTIL transaction.
                if self._until is not None and self._until_reached(last_packet, type_code):
                    yield self._frame(
                        self._fake_gtid_list(end_of_event, GTID_LIST_FLAG_UNTIL_REACHED)
                    )
                    return True

    def _frame_block(self, data: bytes, base: int) -> list[bytes | bytearray | memoryview]:
        """The packets of a block of whole events read at ``base``, for a plain replica."""
        framed = frame_block(data, self._seq, send_annotate=self._send_annotate)
        self._seq = framed.seq
        self.events_sent += framed.events
        self._last_event = base + framed.last_event
        self.position = self._last_byte = base + len(data)
        return framed.parts

    def _fake_gtid_list(self, log_pos: int, list_flags: int) -> bytes:
        body = gtid_list_body(self._until_state.gtid_list(), list_flags)
        return fake_event(
            EventType.GTID_LIST,
            self.server_id,
            body,
            log_pos=log_pos & 0xFFFFFFFF,
            flags=EventFlag.ARTIFICIAL,
            alg=self._alg,
        )

    def _until_reached(self, packet: bytes | memoryview, type_code: int) -> bool:
        if self._until_group == _UNTIL_NOT_DONE:
            return False
        if self._until_group == _UNTIL_AFTER_STANDALONE:
            return type_code not in GROUP_PART_TYPES
        if type_code == EventType.XID:
            return True
        return type_code == EventType.QUERY and is_commit_or_rollback(
            packet, checksummed(self._alg)
        )

    def _send_event(self, event: memoryview, type_code: int, end: int) -> bytes | None:
        """``send_event_to_slave``: the packet for one event of the file, or None if it is not
        sent (skipped group, hole, filtered)."""
        checksum = checksummed(self._alg)
        gtid_mode = self._gtid_state is not None
        if gtid_mode and type_code == EventType.GTID_LIST and self._until is not None:
            try:
                self._until_state.load(parse_gtid_list_event(event, checksum))
            except DecodeError:
                raise DumpError(MSG_GTID_LIST_CORRUPT) from None
        if gtid_mode and type_code == EventType.GTID:
            self._track_gtid(event, checksum)
        if self._skip == _SKIP_STANDALONE:
            if type_code not in GROUP_PART_TYPES:
                self._skip = _SKIP_NOT
            return None
        if self._skip == _SKIP_TRANSACTION:
            if type_code in (EventType.XID, EventType.XA_PREPARE) or (
                type_code == EventType.QUERY and is_commit_or_rollback(event, checksum)
            ):
                self._skip = _SKIP_NOT
            return None
        capability = self.capability
        out: bytes | memoryview = event
        if type_code == EventType.ANNOTATE_ROWS and not self.flags & DumpFlag.SEND_ANNOTATE_ROWS:
            kept = self._unasked_annotate(event, capability)
            if kept is None:
                return None
            out = kept
        if type_code == EventType.GTID and capability < SlaveCapability.GTID:
            # make_compatible_event measures the event with its CRC.
            if len(event) < HEADER_LEN + _GTID_BODY_LEN:
                raise DumpError(MSG_GTID_REPLACE, coordinates=True)
            if event[HEADER_LEN + GTID_FLAGS2_OFFSET] & GtidFlag.STANDALONE:
                if capability >= SlaveCapability.TOLERATE_HOLES:
                    return None
                replaced = dummy_event(event, self._alg)
            else:
                replaced = begin_event(event, self._alg)
            if replaced is None:
                raise DumpError(MSG_GTID_REPLACE, coordinates=True)
            out = replaced
        elif (type_code == EventType.BINLOG_CHECKPOINT and capability < 3) or (
            type_code == EventType.GTID_LIST and capability < SlaveCapability.GTID
        ):
            if capability >= SlaveCapability.TOLERATE_HOLES:
                return None
            replaced = dummy_event(event, self._alg)
            if replaced is None:
                raise DumpError(MSG_CHECKPOINT_DUMMY, coordinates=True)
            out = replaced
        if self.request.skip_replication and (
            _U16.unpack_from(event, _FLAGS_OFFSET)[0] & EventFlag.SKIP_REPLICATION
        ):
            return None
        return self._event_packet(out, end)

    def _unasked_annotate(self, event: memoryview, capability: int) -> bytes | memoryview | None:
        """An ANNOTATE_ROWS the replica did not ask for: left out (None) for a replica that
        tolerates holes, a dummy event for one that knows no ANNOTATE_ROWS, else as it is."""
        if capability >= SlaveCapability.TOLERATE_HOLES:
            return None
        if capability >= SlaveCapability.ANNOTATE:
            return event
        replaced = dummy_event(event, self._alg)
        if replaced is None:
            raise DumpError(MSG_ANNOTATE_DUMMY, coordinates=True)
        return replaced

    def _track_gtid(self, event: memoryview, checksum: bool) -> None:
        """The GTID bookkeeping of a dump by GTID: skip groups before the start position,
        notice when it is reached, stop at the UNTIL position."""
        state = self._gtid_state
        assert state is not None
        until = self._until
        if not (len(state) or until is not None):
            return
        if len(event) - (CHECKSUM_LEN if checksum else 0) < HEADER_LEN + _GTID_BODY_LEN:
            raise DumpError(MSG_GTID_CORRUPT)
        seq_no, domain_id, flags2 = _GTID_PEEK.unpack_from(event, HEADER_LEN)
        server_id = _U32.unpack_from(event, SERVER_ID_OFFSET)[0]
        gtid = Gtid(domain_id, server_id, seq_no)
        self._until_state.update(gtid)
        skip = _SKIP_STANDALONE if flags2 & 1 else _SKIP_TRANSACTION
        wanted = state.find(domain_id) if len(state) else None
        if wanted is not None:
            if domain_id in self._empty_domains:
                store = self.store
                assert store is not None
                end_state = store.end_state()
                logged = end_state.find(domain_id, wanted.server_id)
                if logged is None or logged.seq_no < wanted.seq_no:
                    raise DumpError(missing_start_error(wanted, end_state).message)
                self._empty_domains.discard(domain_id)
            if server_id != wanted.server_id or seq_no <= wanted.seq_no:
                self._skip = skip
            if server_id == wanted.server_id and seq_no >= wanted.seq_no:
                if self.request.gtid_strict_mode and seq_no > wanted.seq_no:
                    raise DumpError(strict_hole_message(wanted))
                self._send_fake_gtid_list = True
                state.remove(domain_id)
        if until is not None:
            stop = until.find(domain_id)
            if stop is None:
                self._skip = skip
            elif server_id == stop.server_id and seq_no >= stop.seq_no:
                until.remove(domain_id)
                if len(until) == 0:
                    self._until_group = (
                        _UNTIL_AFTER_STANDALONE if flags2 & 1 else _UNTIL_AFTER_TRANSACTION
                    )
                if seq_no > stop.seq_no:
                    self._skip = skip
