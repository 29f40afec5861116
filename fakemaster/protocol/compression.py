"""The compressed protocol (CLIENT_COMPRESS) on one server connection, sans-IO.

MariaDB keeps one ``NET`` per connection for reads and writes; once a client asked for
compression it switches it on after sending the OK of the login, and from then on:

* it reads compressed packets; the first of a command must carry sequence number 0, each next
  one the next number, and after a read both its counters (``pkt_nr`` for inner packets,
  ``compress_pkt_nr`` for compressed ones) are that number + 1 (the inner packets' own numbers
  are not checked);
* it writes through its write buffer (``encoder.packets.CompressedWriter``), flushing after
  each response (each result of a multi-statement query), and a flush makes the next inner
  packet take the next compressed packet's number;
* reading a packet larger than its buffer grows the buffer, and with it the compressed packets
  it writes afterwards.

:class:`CompressedChannel` is that NET: the session reads payloads from it instead of from a
``PacketReader`` and hands it the packets it would have sent. :class:`CompressedDump` puts a
binlog dump's packets through it the way a dump thread flushes them: when it has caught up
with the binlog (before it waits), after every heartbeat, at the end of the dump, and after an
event for which a semi-sync replica must send an ACK (then both counters start again at 1).
"""

from __future__ import annotations

from typing import Protocol

from decoder.packets import CompressedPacketReader
from encoder.packets import CompressedWriter
from fakemaster.vocabulary.constants import (
    MAX_PACKET_PAYLOAD,
    NET_BUFFER_LENGTH,
    NET_BUFFER_STEP,
    PACKET_HEADER_LEN,
    SEMI_SYNC_MAGIC,
)
from fakemaster.vocabulary.packets import OK_HEADER, SEMI_SYNC_ACK_REQUESTED

__all__ = ["CompressedChannel", "CompressedDump", "DumpLike"]


class CompressedChannel:
    """MariaDB's NET of one connection once compression is on.

    ``sequence``: the compressed packet number the connection is at when compression starts,
    the number of the client's last packet + 1 (MariaDB counts it even before compression).
    ``pending``: bytes the client sent after its last uncompressed packet. Reads accept what
    MariaDB accepts (a body that inflates to fewer bytes than stated, bytes after its zlib
    stream); ``max_payload`` is max_allowed_packet, which MariaDB only checks when a packet
    does not fit its buffer: the limit is the larger of the two.
    """

    def __init__(
        self,
        *,
        sequence: int,
        max_payload: int | None = None,
        buffer_size: int = NET_BUFFER_LENGTH,
        pending: bytes = b"",
    ) -> None:
        self.reader = CompressedPacketReader(expected_seq=0, exact_length=False)
        self.writer = CompressedWriter(sequence=sequence, buffer_size=buffer_size)
        self._max_allowed = max_payload
        self._set_limit()
        self._reads_counted = 0
        self._reads_move_counters = True
        self._new_command = False
        self.expect_sequence(0)  # the first command
        if pending:
            self.reader.feed(pending)

    # -- reading (the interface of decoder.packets.PacketReader the session uses) ---------

    def feed(self, data: bytes) -> None:
        self.reader.feed(data)

    def expect_sequence(self, seq: int | None) -> None:
        """0: the next command is awaited (net_new_transaction: the inner counter goes back to
        0, after the last flush). None: a dump runs; what the client sends now are semi-sync
        ACKs, which MariaDB reads with a NET of their own: no check, and this connection's
        counters stay."""
        self.reader.expect_sequence(seq)
        self._reads_move_counters = seq is not None
        self._new_command = seq == 0
        if self._new_command:
            self.writer.packet_number = 0

    @property
    def next_sequence(self) -> int | None:
        return self.reader.next_sequence

    @property
    def buffered(self) -> int:
        """Bytes received and not yet returned in a payload."""
        return self.reader.buffered

    def next_payload(self) -> bytes | None:
        try:
            return self.reader.next_payload()
        finally:
            self._after_read()

    def _after_read(self) -> None:
        reader = self.reader
        if reader.sequences_read == self._reads_counted or not self._reads_move_counters:
            self._reads_counted = reader.sequences_read
            return
        self._reads_counted = reader.sequences_read
        self._new_command = False
        assert reader.last_sequence is not None
        self.writer.reset_sequences(reader.last_sequence + 1)
        need = reader.largest_need
        if need >= self.writer.buffer_size:
            # net_realloc: the buffer becomes the need rounded up to IO_SIZE.
            self.writer.buffer_size = -(-need // NET_BUFFER_STEP) * NET_BUFFER_STEP
            self._set_limit()

    def _set_limit(self) -> None:
        # my_real_read reallocates (and checks max_allowed_packet) only for a packet that
        # does not fit the buffer.
        limit = self._max_allowed
        self.reader.max_payload = None if limit is None else max(limit, self.writer.buffer_size)

    # -- writing ---------------------------------------------------------------------------

    def write(self, packets: bytes) -> None:
        """Framed packets the session would have sent (their sequence numbers are replaced)."""
        self.writer.write_packets(packets)

    def flush(self) -> bytes:
        """net_flush: the compressed packets to send now (maybe none)."""
        self.writer.flush()
        if self._new_command:
            self.writer.packet_number = 0
        return self.writer.take()


class DumpLike(Protocol):
    """What :class:`CompressedDump` needs of ``fakemaster.core.dump.stream.DumpStream``."""

    @property
    def is_finished(self) -> bool: ...

    def next_chunk(self) -> bytes | None: ...

    def heartbeat_packet(self) -> bytes: ...

    def on_semi_sync_ack(self, position: int, file_name: str) -> None: ...


_ACK_REQUEST = bytes((OK_HEADER, SEMI_SYNC_MAGIC))


class CompressedDump:
    """A binlog dump whose packets go through a :class:`CompressedChannel`: the same interface
    as the dump it wraps, compressed packets out. ``semi_sync``: the dump sends the semi-sync
    header, so an event that requests an ACK ends a flush."""

    def __init__(self, dump: DumpLike, channel: CompressedChannel, *, semi_sync: bool) -> None:
        self.dump = dump
        self._writer = channel.writer
        self._semi_sync = semi_sync
        # Walking the packets of a chunk for ACK requests: the packet continues a longer one
        # (its first bytes are not a header), the event being written requested an ACK.
        self._continues = False
        self._ack_requested = False

    @property
    def is_finished(self) -> bool:
        return self.dump.is_finished

    def next_chunk(self) -> bytes | None:
        writer = self._writer
        while True:
            chunk = self.dump.next_chunk()
            if chunk is None:
                # Caught up (or done): what a dump thread flushes before it waits.
                writer.flush()
                return writer.take() or None
            self._write(chunk)
            out = writer.take()
            if out:
                return out

    def heartbeat_packet(self) -> bytes:
        self._write(self.dump.heartbeat_packet())
        self._writer.flush()
        return self._writer.take()

    def on_semi_sync_ack(self, position: int, file_name: str) -> None:
        self.dump.on_semi_sync_ack(position, file_name)

    def close(self) -> None:
        close = getattr(self.dump, "close", None)
        if callable(close):
            close()

    def __getattr__(self, name: str) -> object:
        # Everything else (position, events_sent...) is the wrapped dump's.
        return getattr(self.dump, name)

    def _write(self, chunk: bytes) -> None:
        writer = self._writer
        if not self._semi_sync:
            writer.write_packets(chunk)
            return
        view = memoryview(chunk)
        pos = 0
        while pos < len(view):
            size = int.from_bytes(view[pos : pos + 3], "little")
            end = pos + PACKET_HEADER_LEN + size
            payload = view[pos + PACKET_HEADER_LEN : end]
            if not self._continues:
                self._ack_requested = (
                    payload[:2] == _ACK_REQUEST
                    and len(payload) > 2
                    and bool(payload[2] & SEMI_SYNC_ACK_REQUESTED)
                )
            writer.write_packets(view[pos:end])
            self._continues = size == MAX_PACKET_PAYLOAD
            if not self._continues and self._ack_requested:
                # Repl_semi_sync_master::flush_net: flush, net_clear, count this packet.
                writer.flush()
                writer.reset_sequences(1)
                self._ack_requested = False
            pos = end
