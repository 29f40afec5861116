"""A raw binlog dump over a socket, for tests of what a connection delivers byte for byte."""

from __future__ import annotations

from collections.abc import Callable

import pymysql

__all__ = ["packet_starts", "raw_dump"]


def packet_starts(data: bytes) -> list[int]:
    """Where each whole or partial packet of ``data`` starts."""
    starts = []
    at = 0
    while at + 4 <= len(data):
        starts.append(at)
        at += 4 + int.from_bytes(data[at : at + 3], "little")
    return starts


def _ends_with_eof(data: bytes) -> bool:
    starts = packet_starts(data)
    if not starts:
        return False
    last = starts[-1]
    size = int.from_bytes(data[last : last + 3], "little")
    return data[last + 4 : last + 5] == b"\xfe" and size < 9 and len(data) == last + 4 + size


def raw_dump(
    host: str,
    port: int,
    user: str,
    password: str,
    *,
    non_blocking: bool = True,
    progress: Callable[[int], None] | None = None,
) -> tuple[bytes, str]:
    """The bytes a dump from the start of mysql-bin.000001 receives, and how it ended: "eof"
    (the EOF packet that ends a non-blocking dump), "fin" (the peer closed) or "rst" (reset).
    A blocking dump reads until the peer closes. ``progress`` is told the number of bytes
    received so far after every read (a test waits on it, never on the server's state)."""
    conn = pymysql.connect(host=host, port=port, user=user, password=password)
    try:
        with conn.cursor() as cursor:
            cursor.execute("SET @master_binlog_checksum = 'CRC32'")
            cursor.execute("SET @mariadb_slave_capability = 4")
        flags = 1 if non_blocking else 0
        payload = b"\x12" + (4).to_bytes(4, "little") + flags.to_bytes(2, "little")
        # A replica server id of 0 makes a dump non-blocking too: 77.
        payload += (77).to_bytes(4, "little") + b"mysql-bin.000001"
        sock = conn._sock
        assert sock is not None
        sock.sendall(len(payload).to_bytes(3, "little") + b"\x00" + payload)
        sock.settimeout(60)
        data = bytearray()
        while True:
            try:
                chunk = sock.recv(1 << 16)
            except ConnectionResetError:
                return bytes(data), "rst"
            if not chunk:
                return bytes(data), "fin"
            data += chunk
            if progress is not None:
                progress(len(data))
            if _ends_with_eof(bytes(data)):
                return bytes(data), "eof"
    finally:
        try:
            conn.close()
        except (pymysql.err.Error, OSError):
            pass  # the connection was cut: nothing to close cleanly
