"""The ways a dump thread can write a binlog file to local replicas, timed side by side: what
the frame cache's choice of views of the mapped file for a local replica
(fakemaster.server.frame_cache.send_span) rests on, for one replica and for many.

    python3 bench/bench_send_paths.py --corpus ~/.cache/fm-bench/large-250MB-v2
    python3 bench/bench_send_paths.py --corpus DIR --replicas 1,2,20 --rounds 3 \\
        --ways views,views-nonblocking,sendfile,sendfile-per-event,buffer

Each round sends every binlog file of ``--corpus`` (``mysql-bin.0*``, in order) to each of N
receivers, one sender thread per receiver in this process, over loopback TCP; each receiver is a
process of this script reading into a 1 MiB buffer until the end (as the serving benchmark's
drain clients do). Timed: wall time from the first send to the last receiver's exit, and this
process's CPU time (every sender thread; the receivers' is not counted). The ways:

* ``views``: memoryviews of the files mapped in memory, 4 MiB per ``send`` on a blocking socket
  (the mapping made in the round: its pages are faulted in by the first sender that reaches
  them, as a dump after ``serve`` starts finds them);
* ``views-warm``: the same with the mappings read once before the round (pages already mapped,
  as for every dump after the first);
* ``views-nonblocking``: ``views-warm`` on a non-blocking socket, ``poll`` for room after
  ``EAGAIN`` (how fakemaster.server.sender writes: the transport's descriptor stays
  non-blocking);
* ``sendfile``: ``os.sendfile`` of each whole file;
* ``sendfile-per-event``: ``os.sendfile`` of 65,600 bytes at a time, each after a 5-byte
  ``sendfile`` from another file (a dump's packet header and OK byte before each large event);
* ``buffer``: ``os.preadv`` into one reused buffer of ``--buffer`` bytes, then ``sendall``
  (a copy through a small buffer, as MariaDB's dump thread reads an event and writes it).

Prints one line per round and way, then the medians per way and replica count. Ratios are
meaningful only within one run: run nothing else meanwhile.
"""

from __future__ import annotations

import argparse
import mmap
import os
import select
import socket
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

__all__ = ["main"]

WAYS = (
    "views",
    "views-warm",
    "views-nonblocking",
    "sendfile",
    "sendfile-per-event",
    "buffer",
)
_CHUNK = 4 << 20
_EVENT = 65_600
_HEAD = 5


def _receive(port: int) -> None:
    connection = socket.create_connection(("127.0.0.1", port))
    buffer = bytearray(1 << 20)
    while connection.recv_into(buffer):
        pass


class _Files:
    """The corpus's files, opened (and mapped, for the ways that send views)."""

    def __init__(self, paths: list[Path], *, mapped: bool, warm: bool) -> None:
        self.descriptors = [os.open(path, os.O_RDONLY) for path in paths]
        self.sizes = [os.fstat(fd).st_size for fd in self.descriptors]
        self.views: list[memoryview] = []
        if mapped:
            for fd, size in zip(self.descriptors, self.sizes, strict=True):
                view = memoryview(mmap.mmap(fd, size, prot=mmap.PROT_READ))
                if warm:
                    bytes(view)  # every page mapped before the round
                self.views.append(view)

    def close(self) -> None:
        for view in self.views:
            view.release()
        for fd in self.descriptors:
            os.close(fd)


def _send_views(connection: socket.socket, files: _Files) -> None:
    for view in files.views:
        sent = 0
        while sent < len(view):
            sent += connection.send(view[sent : sent + _CHUNK])


def _send_views_nonblocking(connection: socket.socket, files: _Files) -> None:
    connection.setblocking(False)
    poller = select.poll()
    poller.register(connection.fileno(), select.POLLOUT)
    for view in files.views:
        sent = 0
        while sent < len(view):
            try:
                sent += connection.send(view[sent : sent + _CHUNK])
            except BlockingIOError:
                poller.poll(250)
    connection.setblocking(True)


def _sendfile(connection: socket.socket, files: _Files) -> None:
    for fd, size in zip(files.descriptors, files.sizes, strict=True):
        sent = 0
        while sent < size:
            sent += os.sendfile(connection.fileno(), fd, sent, size - sent)


def _sendfile_per_event(connection: socket.socket, files: _Files, heads: int) -> None:
    out = connection.fileno()
    for fd, size in zip(files.descriptors, files.sizes, strict=True):
        at = 0
        while at < size:
            os.sendfile(out, heads, 0, _HEAD)
            end = min(at + _EVENT, size)
            while at < end:
                at += os.sendfile(out, fd, at, end - at)


def _through_buffer(connection: socket.socket, files: _Files, size: int) -> None:
    buffer = memoryview(bytearray(size))
    for fd, file_size in zip(files.descriptors, files.sizes, strict=True):
        at = 0
        while at < file_size:
            read = os.preadv(fd, [buffer], at)
            connection.sendall(buffer[:read])
            at += read


def one_round(way: str, paths: list[Path], replicas: int, buffer: int) -> tuple[float, float]:
    """(wall seconds, sender CPU seconds) of sending every file to ``replicas`` receivers."""
    listener = socket.create_server(("127.0.0.1", 0), backlog=replicas)
    port = listener.getsockname()[1]
    command = [sys.executable, str(Path(__file__).resolve()), "--receiver", str(port)]
    receivers = [subprocess.Popen(command) for _ in range(replicas)]
    connections = [listener.accept()[0] for _ in range(replicas)]
    listener.close()
    files = _Files(paths, mapped=way.startswith("views"), warm=way != "views")
    heads = os.open(__file__, os.O_RDONLY)
    send: Callable[[socket.socket], None] = {
        "views": lambda c: _send_views(c, files),
        "views-warm": lambda c: _send_views(c, files),
        "views-nonblocking": lambda c: _send_views_nonblocking(c, files),
        "sendfile": lambda c: _sendfile(c, files),
        "sendfile-per-event": lambda c: _sendfile_per_event(c, files, heads),
        "buffer": lambda c: _through_buffer(c, files, buffer),
    }[way]

    def sender(connection: socket.socket) -> None:
        try:
            send(connection)
        finally:
            connection.close()

    threads = [threading.Thread(target=sender, args=(c,)) for c in connections]
    cpu = time.process_time()
    wall = time.monotonic()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for receiver in receivers:
        receiver.wait()
    result = time.monotonic() - wall, time.process_time() - cpu
    files.close()
    os.close(heads)
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, help="a directory of binlog files (mysql-bin.0*)")
    parser.add_argument("--replicas", default="1,20", help="receiver counts (default 1,20)")
    parser.add_argument("--ways", default=",".join(WAYS), help=f"of {', '.join(WAYS)}")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--buffer", type=int, default=128 << 10, help="for buffer (128 KiB)")
    parser.add_argument("--receiver", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.receiver is not None:
        _receive(args.receiver)
        return 0
    if args.corpus is None:
        parser.error("--corpus DIR is required")
    paths = sorted(args.corpus.glob("mysql-bin.0*"))
    ways = [w for w in args.ways.split(",") if w]
    unknown = sorted(set(ways) - set(WAYS))
    if not paths or unknown:
        parser.error(f"no mysql-bin.0* in {args.corpus}" if not paths else f"unknown {unknown}")
    megabytes = sum(p.stat().st_size for p in paths) / 1e6
    print(f"{len(paths)} files, {megabytes:.1f} MB; load average {os.getloadavg()[0]:.1f}")
    results: dict[tuple[str, int], list[tuple[float, float]]] = {}
    for replicas in (int(n) for n in args.replicas.split(",")):
        for index in range(args.rounds):
            for way in ways:  # interleaved: each way sees the same load
                wall, cpu = one_round(way, paths, replicas, args.buffer)
                results.setdefault((way, replicas), []).append((wall, cpu))
                print(
                    f"  round {index + 1} x{replicas:<3d} {way:20s} {wall:.3f} s  CPU {cpu:.3f} s"
                )
    print("\nmedians (sender CPU: every sender thread, not the receivers):")
    for (way, replicas), runs in results.items():
        wall = statistics.median(w for w, _ in runs)
        cpu = statistics.median(c for _, c in runs)
        print(f"  x{replicas:<3d} {way:20s} {wall:.3f} s  CPU {cpu:.3f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
