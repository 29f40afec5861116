"""How many bytes a loopback TCP connection can hold between a writer that writes and a reader
that stopped reading: the reader's receive buffer and the writer's send buffer, each at most the
maximum of its kernel autotuning (``net.ipv4.tcp_rmem`` and ``tcp_wmem``, third field). A test
that needs a dump to stay in a file while its reader does not read (a purge of that file)
makes the file's rest larger than this, so the premise holds by construction, not by luck."""

from __future__ import annotations

from pathlib import Path

__all__ = ["kernel_socket_buffers"]


def kernel_socket_buffers() -> int:
    """The most payload the kernel buffers on one loopback TCP connection (Linux)."""
    return sum(
        int(Path("/proc/sys/net/ipv4", name).read_text().split()[2])
        for name in ("tcp_rmem", "tcp_wmem")
    )
