"""The start of a MariaDB connection's packet buffer, for commands that read past their packet.

MariaDB reads each packet of a connection into the same buffer (``NET::buff``), from its start,
and puts a NUL after the payload; the bytes beyond stay what earlier, longer packets left there.
A command that reads fixed fields without checking the packet's length (COM_BINLOG_DUMP) reads
those: a 5-byte COM_BINLOG_DUMP sent after ``SET @mariadb_slave_capability=4`` asks for the file
``db_slave_capability=4`` (10.11.19: ERR 1236 "Could not find first log file name"), not for the
first file. Only the first :data:`KEPT` bytes are kept: no such read goes further (a binlog name
of FN_REFLEN = 512 bytes or more is not looked for).
"""

from __future__ import annotations

__all__ = ["KEPT", "NetBuffer"]

KEPT = 1024


class NetBuffer:
    """What a connection's packet buffer holds at its start. A new connection's buffer is
    taken as zeros (MariaDB's is fresh memory: whatever it held is not knowable)."""

    def __init__(self) -> None:
        self._bytes = bytearray()

    def read(self, payload: bytes) -> None:
        """A packet was read: its payload and the NUL after it now start the buffer."""
        head = payload[:KEPT] + b"\0"
        self._bytes[: len(head)] = head
        del self._bytes[KEPT:]

    def packet(self) -> bytes:
        """What a command reads as its packet after the command byte: the payload, its NUL,
        then what earlier packets left, as far as it is kept."""
        return bytes(self._bytes[1:]).ljust(KEPT - 1, b"\0")
