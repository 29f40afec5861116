"""Capture loopback traffic to a pcap file with tcpdump (a test helper)."""

from __future__ import annotations

import io
import shutil
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from decoder import read_binlog
from fakemaster.vocabulary.constants import DumpFlag, EventFlag
from fakemaster.vocabulary.events import AnnotateRowsEvent, Event, HeartbeatEvent, RotateEvent
from tests.peers.policy import require_peer
from tests.support.streams import as_sent

if TYPE_CHECKING:
    from fakemaster.scapy.pcap import PacketRecord

__all__ = ["check_capture", "events_by_end", "tcpdump_capture"]

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


def events_by_end(files: dict[str, bytes]) -> dict[tuple[str, int], Event]:
    """Every event of the served files by (file, end position), decoded from the files as a
    primary sends them (the in-use flag of an FDE cleared)."""
    out: dict[tuple[str, int], Event] = {}
    for name, data in files.items():
        for _, event in read_binlog(io.BytesIO(as_sent(data))):
            out[(name, event.log_pos)] = event
    return out


def check_capture(
    records: list[PacketRecord], files: dict[str, bytes], *, dumps: int = 1
) -> list[Event]:
    """Every packet dissected into layers that know all its bytes, no event the decoder
    refused, every binlog event equal to the served file's at the position its header names
    (artificial events and heartbeats aside: they are in no file), all the files' events seen,
    and ``dumps`` dump requests before which no event came. Returns the events not in files."""
    from scapy.packet import Raw

    assert records, "nothing dissected"
    # Nothing missing from the capture or left undissected (dissect_pcap's Dissection).
    assert [problem.line() for problem in getattr(records, "problems", [])] == []
    assert [r.line() for r in records if r.layer == "empty" or Raw in r.packet] == []
    assert [r.line() for r in records if r.decode_error is not None] == []
    served = events_by_end(files)
    current = sorted(files)[0]
    seen: set[tuple[str, int]] = set()
    extra: list[Event] = []
    for record in records:
        event = record.event
        if event is None:
            continue
        if isinstance(event, RotateEvent) and event.flags & EventFlag.ARTIFICIAL:
            current = event.next_file
            extra.append(event)
            continue
        if isinstance(event, HeartbeatEvent) or event.flags & EventFlag.ARTIFICIAL:
            extra.append(event)
            continue
        key = (current, event.log_pos)
        assert served.get(key) == event, f"{record.line()}: not the served event at {key}"
        seen.add(key)
        if isinstance(event, RotateEvent):
            current = event.next_file
    # A primary leaves ANNOTATE_ROWS out for a replica that did not ask for them.
    requests = [r for r in records if r.layer == "MySQL COM_BINLOG_DUMP"]
    if requests and not int(requests[0].packet.payload.flags) & DumpFlag.SEND_ANNOTATE_ROWS:
        served = {k: e for k, e in served.items() if not isinstance(e, AnnotateRowsEvent)}
    missing = sorted(set(served) - seen)
    assert missing == [], f"the capture misses served events: {missing}"
    # Both directions were followed: the client's dump request made the server's 0x00
    # payloads binlog event packets.
    first = [i for i, r in enumerate(records) if r.layer == "MySQL COM_BINLOG_DUMP"]
    assert len(first) == dumps
    assert all(r.event is None for r in records[: first[0]])
    return extra
