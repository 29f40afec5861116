"""Capture loopback traffic to a pcap file with tcpdump (a test helper)."""

from __future__ import annotations

import shutil
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.peers.policy import require_peer

__all__ = ["tcpdump_capture"]

_READY = b"listening on"


@contextmanager
def tcpdump_capture(path: Path, port: int) -> Iterator[Path]:
    """Write every TCP segment to or from ``port`` on ``lo`` to ``path`` while the block runs."""
    found = shutil.which("tcpdump")
    require_peer("tcpdump", found is not None, "apt-get install -y tcpdump (run as root)")
    assert found is not None
    # -B: a kernel buffer (KiB) big enough that a burst of 64 KiB loopback segments is kept.
    command = [found, "-i", "lo", "-U", "-B", "131072", "-s", "0", "-w", str(path)]
    command += ["tcp", "port", str(port)]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    assert process.stderr is not None
    # tcpdump says it listens once its filter is installed; nothing is missed after that.
    banner = process.stderr.readline()
    if _READY not in banner:
        process.kill()
        process.wait()
        require_peer("tcpdump on lo", False, f"tcpdump could not capture: {banner!r} (root?)")
    try:
        yield path
        _wait_until_closed(path)
    finally:
        process.terminate()  # SIGTERM: tcpdump flushes and closes the file
        process.wait(timeout=30)
        process.stderr.close()


def _closed_both_ways(path: Path) -> bool:
    """Whether every connection the capture saw open has ended: a FIN from each side, or a
    RST from either."""
    from scapy.layers.inet import TCP
    from scapy.utils import PcapReader

    opened: set[tuple[int, int]] = set()
    finished: set[tuple[int, int]] = set()
    reset: set[frozenset[int]] = set()
    try:
        with PcapReader(str(path)) as reader:
            for pkt in reader:
                if TCP not in pkt:
                    continue
                tcp = pkt[TCP]
                if tcp.flags.S and not tcp.flags.A:
                    opened.add((tcp.sport, tcp.dport))
                if tcp.flags.F:
                    finished.add((tcp.sport, tcp.dport))
                if tcp.flags.R:
                    reset.add(frozenset((tcp.sport, tcp.dport)))
    except (EOFError, OSError, ValueError):
        return False  # a record still being written
    return bool(opened) and all(
        frozenset(pair) in reset or {pair, pair[::-1]} <= finished for pair in opened
    )


def _wait_until_closed(path: Path, limit: float = 60.0) -> None:
    """tcpdump -U writes each segment as the kernel hands it over: wait for the closing
    segments of every connection to be in the file (a hang is a failure, not a short file)."""
    deadline = time.monotonic() + limit
    while not _closed_both_ways(path):
        if time.monotonic() > deadline:
            raise AssertionError(f"{path}: the capture never saw its connections close")
        time.sleep(0.05)
