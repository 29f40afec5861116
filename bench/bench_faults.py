"""What the fault engine and proxy cost. Standalone; prints medians, asserts nothing.

1. The engine alone (sans-IO, no sockets) over a synthetic dump stream of ~64 MB (events of
   200 B to 64 KiB, GTID groups, CRC32), fed in 64 KiB reads: MB/s with no plan (bytes pass
   through), with a plan for another session (the same), and with a fault that makes it follow
   every packet but never fires (a cut past the end).
2. ``mariadb-binlog --raw --to-last-log`` fetching the same binlog from the fake master directly
   and through a FaultProxy with no plan (one more TCP hop in the same process family).

The server itself has no fault hook: serving without a proxy is unchanged by this package.

    python3 bench/bench_faults.py [--size-mb 64] [--rounds 3]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import struct
import subprocess
import sys
import tempfile
import time
import zlib
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from fakemaster.config.server_config import ServerConfig  # noqa: E402
from fakemaster.faults import Fault, FaultEngine, FaultKind, Point, PointKind  # noqa: E402
from fakemaster.faults.proxy import BackgroundFaultProxy  # noqa: E402
from fakemaster.server.master import BackgroundFakeMaster  # noqa: E402
from fakemaster.store import MemoryBinlogStore  # noqa: E402
from fakemaster.vocabulary.commands import BinlogDump  # noqa: E402
from fakemaster.vocabulary.events import QueryEvent, XidEvent  # noqa: E402

__all__ = ["main"]

_HEADER = struct.Struct("<IBIIIH")


def _event(type_code: int, body: bytes) -> bytes:
    event = _HEADER.pack(0, type_code, 1, 19 + len(body) + 4, 0, 0) + body
    return event + struct.pack("<I", zlib.crc32(event))


def synthetic_stream(size: int) -> bytes:
    """Framed dump packets: GTID, ROWS events of varied sizes, XID; until ``size`` bytes."""
    out = bytearray()
    seq = 1
    number = 0
    while len(out) < size:
        number += 1
        events = [_event(162, struct.pack("<QIB", number, 0, 0) + bytes(6))]
        for k in range(1 + number % 4):
            events.append(_event(30, bytes(200 + (number * 7919 + k * 104729) % 65536)))
        events.append(_event(16, struct.pack("<Q", number)))
        for event in events:
            payload = b"\x00" + event
            out += struct.pack("<I", len(payload) | seq << 24) + payload
            seq = (seq + 1) & 0xFF
    return bytes(out)


def dump_command() -> bytes:
    response = struct.pack("<IIB23x", 0x000FA685, 1 << 24, 33) + b"repl\x00\x00"
    dump = BinlogDump(server_id=2, file_name=b"mysql-bin.000001").encode()
    return (
        struct.pack("<I", len(response) | 1 << 24) + response + struct.pack("<I", len(dump)) + dump
    )


def engine_rate(stream: bytes, plan: list[Fault], rounds: int) -> float:
    times = []
    for _ in range(rounds):
        engine = FaultEngine(plan)
        engine.from_client(dump_command())
        start = time.perf_counter()
        sent = 0
        for at in range(0, len(stream), 1 << 16):
            for output in engine.from_server(stream[at : at + (1 << 16)]):
                sent += len(output.data)
        times.append(time.perf_counter() - start)
        assert sent == len(stream)
    return len(stream) / statistics.median(times) / 1e6


def fetch(tool: str, host: str, port: int, directory: Path) -> float:
    shutil.rmtree(directory, ignore_errors=True)
    directory.mkdir()
    command = [
        tool,
        "--read-from-remote-server",
        f"--host={host}",
        f"--port={port}",
        "--user=repl",
        "--password=pw",
        "--raw",
        f"--result-file={directory}/",
        "--to-last-log",
        "mysql-bin.000001",
    ]
    start = time.perf_counter()
    subprocess.run(command, check=True, capture_output=True)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--size-mb", type=int, default=64)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    size = args.size_mb << 20

    stream = synthetic_stream(size)
    never = Fault(FaultKind.CUT, Point(PointKind.BYTE, len(stream) + 1))
    other = Fault(FaultKind.CUT, Point(PointKind.BYTE, 0), session=1)
    print(f"engine over {len(stream) / 1e6:.1f} MB, median of {args.rounds}:")
    for name, plan in (("no plan", []), ("other session", [other]), ("following", [never])):
        print(f"  {name:14} {engine_rate(stream, plan, args.rounds):10.1f} MB/s")

    tool = shutil.which("mariadb-binlog") or shutil.which("mysqlbinlog")
    if tool is None:
        print("mariadb-binlog not found: proxy figures skipped")
        return
    store = MemoryBinlogStore(server_id=100, clock=lambda: 1_700_000_000)
    total = 0
    number = 0
    while total < size:
        number += 1
        value = b"v" * (1000 + number * 7919 % 200_000)
        query = b"INSERT INTO t VALUES ('" + value + b"')"
        store.append_transaction([QueryEvent(query=query, database="d"), XidEvent(xid=number)])
        total += len(query) + 100
    config = ServerConfig(server_id=100, user="repl", password="pw")
    with tempfile.TemporaryDirectory() as scratch, BackgroundFakeMaster(config, store) as master:
        target = Path(scratch) / "out"
        direct = [fetch(tool, master.host, master.port, target) for _ in range(args.rounds)]
        fetched = {path.name: path.read_bytes() for path in target.iterdir()}
        with BackgroundFaultProxy((master.host, master.port)) as proxy:
            through = [fetch(tool, proxy.host, proxy.port, target) for _ in range(args.rounds)]
            assert proxy.sessions == args.rounds
        assert {path.name: path.read_bytes() for path in target.iterdir()} == fetched
    mb = total / 1e6
    print(f"mariadb-binlog --raw of ~{mb:.0f} MB, median of {args.rounds}:")
    print(f"  direct        {mb / statistics.median(direct):10.1f} MB/s")
    print(f"  proxy, no plan{mb / statistics.median(through):10.1f} MB/s")


if __name__ == "__main__":
    main()
