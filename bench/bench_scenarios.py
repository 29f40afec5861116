"""Rows per second of the scenario layer -- a history of row changes built through the Python
API, compiled, written into a memory store and served -- next to the codec's raw encode rate for
the same rows, in one run; the result is reported as rows/s and the ratio scenario / encoder.

    python3 bench/bench_scenarios.py                  # 1,000,000 row changes
    python3 bench/bench_scenarios.py --rows 100000    # quick, well under a minute
    python3 bench/bench_scenarios.py --rows 10000000  # streamed only: bounded memory

1. Build: a :class:`scenarios.Scenario` (default settings: FULL row image, CRC32, annotations)
   with three tables of a handful of column types (INT, BIGINT UNSIGNED, SMALLINT, ENUM,
   DECIMAL, DATETIME(3), DATE, DOUBLE, VARCHAR, BLOB), then transactions of ``--per-tx`` changes
   (one row each: about 50% inserts, 30% updates, 20% deletes, keys drawn from the rows present,
   seeded random) until ``--rows`` row changes, all through ``scenario.transaction()`` and
   ``tx.insert/update/delete`` with plain Python values. Timed once (it is the scenario itself).
2. Compile: ``compile_scenario(scenario)``, the events MariaDB writes for it (GTID,
   ANNOTATE_ROWS, TABLE_MAP, rows, XID per transaction).
3. Compile + store: ``to_store(scenario)``, compiling and encoding every event into a
   ``MemoryBinlogStore`` (what fakemaster serves).
4. Encoder: ``encoder.encode_event`` of the compiled TABLE_MAP and WRITE/UPDATE/DELETE rows
   events only (the TABLE_MAPs because rows events are encoded against them), with one
   ``BinlogContext``, as bench_codec does: the codec's raw rate for the same rows. Also, for
   reference, of every compiled event (GTID, ANNOTATE_ROWS and XID too: what the store
   encodes).
5. Serve: ``BackgroundFakeMaster`` serving that store; a drain client in its own process
   (bench_serving's ``--drain-worker``: login, COM_BINLOG_DUMP non-blocking from the first
   file, ``recv_into`` until the EOF packet) takes a full dump; the first dump and the median
   of the following ones are reported (wall time from "go" to the EOF packet; every dump must
   stream the same number of bytes).

6. Stream: the same history made by a generator (``history_steps``) and written as it is made
   (``scenarios.streaming.StreamWriter`` into a ``DiskBinlogStore`` in a temporary directory),
   in a process of its own (``--stream-worker``) so that its peak RSS is its own: the time in
   the generator (build) and in the flushes (compile + store) apart, wall and CPU, the files'
   SHA-256 (checked equal to ``to_store``'s), the process's peak RSS. Histories longer than
   ``--whole-limit`` (2,000,000) run this step only (steps 1-5 hold about 1.6 KB per change).
   A table holding ``--table-rows`` (120,000) rows gets a delete where an insert is drawn, so
   long histories stay at that size (the 1,000,000-change history never reaches it): the model
   keeps the current rows, about 0.55 KB each.

Steps 2-5 are repeated ``--repeat`` times (medians). The ratios: compile+store / encoder (the
scenario layer's cost to produce the binlog, encoding included, against encoding alone) and
build+compile+store / encoder. Steps 2-4 are also reported in CPU seconds of this process
(``time.process_time``, medians, with the same ratios), which other jobs on a shared machine
disturb less than wall time. ``compile_scenario`` and ``to_store`` pause Python's cyclic
garbage collector and pay for what they leave behind (one full collection) before they return,
so their times include it; the encoder steps run with the collector as it is (pausing it does
not make them faster: 1.34 s with it, 1.49-1.53 s without, 100,000 changes). No timing is asserted anywhere; the figures are printed.
"""

from __future__ import annotations

import argparse
import decimal
import hashlib
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from datetime import date, datetime
from functools import partial
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))

from bench.bench_serving import run_drains  # noqa: E402
from encoder import encode_event  # noqa: E402
from fakemaster.config.server_config import ServerConfig  # noqa: E402
from fakemaster.server.master import BackgroundFakeMaster  # noqa: E402
from fakemaster.store import MemoryBinlogStore  # noqa: E402
from fakemaster.store.disk import DiskBinlogStore  # noqa: E402
from fakemaster.vocabulary.context import BinlogContext  # noqa: E402
from fakemaster.vocabulary.events import Event, RowsEvent, TableMapEvent  # noqa: E402
from scenarios import Scenario, compile_scenario, to_store  # noqa: E402
from scenarios.compiler import binlog_files, flatten  # noqa: E402
from scenarios.streaming import StreamWriter  # noqa: E402

__all__ = ["build_history", "main"]

TABLES = (
    "CREATE TABLE shop.orders (id INT PRIMARY KEY, customer BIGINT UNSIGNED NOT NULL,"
    " status ENUM('new','paid','shipped') NOT NULL, amount DECIMAL(10,2),"
    " created DATETIME(3), note VARCHAR(64))",
    "CREATE TABLE shop.events (id BIGINT PRIMARY KEY, kind SMALLINT NOT NULL, ratio DOUBLE,"
    " payload BLOB)",
    "CREATE TABLE shop.counters (name VARCHAR(32) PRIMARY KEY, value INT NOT NULL, day DATE)",
)
STATUSES = ("new", "paid", "shipped")
# Rows a table holds at most (then an insert drawn is a delete): the 1,000,000-change history
# ends with about 100,000 per table and never reaches it; longer ones stay at that size.
TABLE_ROWS = 120_000
# Longer histories are only streamed: the whole-history steps hold about 1.6 KB per change.
WHOLE_LIMIT = 2_000_000


def _orders(key: int, rng: random.Random) -> dict[str, Any]:
    return {
        "id": key,
        "customer": rng.randrange(1 << 40),
        "status": rng.choice(STATUSES),
        "amount": decimal.Decimal(rng.randrange(10_000_000)).scaleb(-2),
        "created": datetime(
            2024, 1 + key % 12, 1 + key % 28, key % 24, key % 60, 7, 1000 * (key % 1000)
        ),
        "note": f"order {key}" if key % 5 else None,
    }


def _events(key: int, rng: random.Random) -> dict[str, Any]:
    return {
        "id": key,
        "kind": rng.randrange(-300, 300),
        "ratio": key / 7.0,
        "payload": b"p" * (key % 48),
    }


def _counters(key: int, rng: random.Random) -> dict[str, Any]:
    return {
        "name": f"counter-{key}",
        "value": rng.randrange(-(1 << 31), 1 << 31),
        "day": date(2024, 1 + key % 12, 1 + key % 28),
    }


def _orders_change(rng: random.Random) -> dict[str, Any]:
    return {
        "status": rng.choice(STATUSES),
        "amount": decimal.Decimal(rng.randrange(100000)).scaleb(-2),
    }


def _events_change(rng: random.Random) -> dict[str, Any]:
    return {"kind": rng.randrange(-300, 300), "ratio": rng.random()}


def _counters_change(rng: random.Random) -> dict[str, Any]:
    return {"value": rng.randrange(-(1 << 31), 1 << 31)}


# table name, key column, key of the n-th row, whole row, values an update sets
KINDS: tuple[
    tuple[
        str,
        str,
        Callable[[int], Any],
        Callable[[int, random.Random], dict[str, Any]],
        Callable[[random.Random], dict[str, Any]],
    ],
    ...,
] = (
    ("shop.orders", "id", lambda n: n, _orders, _orders_change),
    ("shop.events", "id", lambda n: n * 1_000_003, _events, _events_change),
    ("shop.counters", "name", lambda n: f"counter-{n}", _counters, _counters_change),
)


def build_history(rows: int, per_tx: int, seed: int = 8, table_rows: int = TABLE_ROWS) -> Scenario:
    """A scenario of ``rows`` row changes in transactions of ``per_tx`` changes (see the module
    docstring), built through the Python API."""
    scenario = new_scenario()
    for _ in history_steps(scenario, rows, per_tx, seed, table_rows):
        pass
    return scenario


def new_scenario() -> Scenario:
    """The scenario with the history's tables declared (no step yet)."""
    scenario = Scenario()
    for sql in TABLES:
        scenario.create_table(sql)
    return scenario


def history_steps(
    scenario: Scenario, rows: int, per_tx: int, seed: int = 8, table_rows: int = TABLE_ROWS
) -> Iterator[None]:
    """Add the history of :func:`build_history` to ``scenario``, yielding after each
    transaction (what :func:`scenarios.streaming.stream_history` takes). A table holding
    ``table_rows`` rows gets a delete where an insert was drawn."""
    rng = random.Random(seed)
    present: list[list[Any]] = [[] for _ in KINDS]  # keys of the rows present, per table
    counter = 0
    done = 0
    while done < rows:
        with scenario.transaction() as tx:
            for _ in range(min(per_tx, rows - done)):
                which = rng.randrange(len(KINDS))
                name, key_column, key_of, whole, change = KINDS[which]
                keys = present[which]
                roll = rng.random()
                if (roll < 0.5 or len(keys) < 8) and len(keys) < table_rows:
                    counter += 1
                    row = whole(counter, rng)
                    row[key_column] = key_of(counter)
                    tx.insert(name, row)
                    keys.append(row[key_column])
                else:
                    index = rng.randrange(len(keys))
                    if 0.5 <= roll < 0.8:
                        tx.update(name, {key_column: keys[index]}, change(rng))
                    else:
                        tx.delete(name, {key_column: keys[index]})
                        keys[index] = keys[-1]
                        keys.pop()
                done += 1
        yield


def encode_rows(events: Sequence[Event]) -> int:
    ctx = BinlogContext()
    rows = 0
    for event in events:
        encode_event(event, ctx)
        if isinstance(event, RowsEvent):
            rows += len(event.rows)
    return rows


def timed(work: Callable[[], Any], cpu: list[float] | None = None) -> tuple[float, Any]:
    """Wall seconds of ``work()`` and its result; its CPU seconds (this process) appended to
    ``cpu``."""
    start, start_cpu = time.perf_counter(), time.process_time()
    result = work()
    seconds = time.perf_counter() - start
    if cpu is not None:
        cpu.append(time.process_time() - start_cpu)
    return seconds, result


def line(label: str, rows: int, seconds: float, note: str = "") -> None:
    print(
        f"{label:34s} {rows:10,d} rows in {seconds:8.3f} s = {rows / seconds:12,.0f} rows/s {note}"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=1_000_000, help="row changes in the history")
    parser.add_argument("--per-tx", type=int, default=4, help="changes per transaction")
    parser.add_argument("--repeat", type=int, default=3, help="repetitions of the timed steps")
    parser.add_argument(
        "--table-rows", type=int, default=TABLE_ROWS, help="rows a table holds at most"
    )
    parser.add_argument(
        "--whole-limit",
        type=int,
        default=WHOLE_LIMIT,
        help="longest history also built whole (longer ones are only streamed)",
    )
    parser.add_argument("--stream-repeat", type=int, default=1, help="streamed runs")
    parser.add_argument("--stream-worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.stream_worker:
        print(json.dumps(stream_worker(args.rows, args.per_tx, args.table_rows)))
        return 0
    print(
        f"load average: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f}, cpus: {os.cpu_count()}"
    )
    whole: dict[str, Any] = {}
    if args.rows <= args.whole_limit:
        status = whole_history(args, whole)
        if status:
            return status
    else:
        print(f"{args.rows:,} changes: only streamed (the whole history would need ~1.6 KB each)")
    return streamed(args, whole)


def stream_worker(rows: int, per_tx: int, table_rows: int) -> dict[str, Any]:
    """The history streamed into a directory (:class:`scenarios.streaming.StreamWriter`, a
    :class:`~fakemaster.store.disk.DiskBinlogStore`), in this process alone: wall and CPU
    seconds building it (the generator) and compiling and writing it (the flushes), the files'
    size and SHA-256 (as written, magic included, in order), and the process's peak RSS."""
    scenario = new_scenario()
    build = [0.0, 0.0]
    write = [0.0, 0.0]
    clocks = (time.perf_counter, time.process_time)
    with tempfile.TemporaryDirectory(prefix="bench-stream-") as where:
        writer = StreamWriter(scenario, directory=where)
        steps = history_steps(scenario, rows, per_tx, table_rows=table_rows)
        marks = [clock() for clock in clocks]
        for _ in steps:
            now = [clock() for clock in clocks]
            build[0] += now[0] - marks[0]
            build[1] += now[1] - marks[1]
            writer.flush()
            marks = [clock() for clock in clocks]
            write[0] += marks[0] - now[0]
            write[1] += marks[1] - now[1]
        store = writer.store
        assert isinstance(store, DiskBinlogStore)
        store.close()
        digest = hashlib.sha256()
        size = 0
        for name in store.file_names():
            with open(os.path.join(where, name), "rb") as handle:
                while chunk := handle.read(1 << 20):
                    digest.update(chunk)
                    size += len(chunk)
        files = len(store.file_names())
    return {
        "build": build,
        "write": write,
        "sha256": digest.hexdigest(),
        "bytes": size,
        "files": files,
        "live_rows": sum(scenario.row_counts.values()),
        "points": scenario.points_taken,
        "peak_rss_mb": peak_rss_mb(),
    }


def peak_rss_mb() -> float:
    """This process's peak RSS: VmHWM where /proc has it (ru_maxrss keeps, across the exec of
    a process its parent spawned, the parent's peak when that was larger)."""
    try:
        with open("/proc/self/status") as status:
            for text in status:
                if text.startswith("VmHWM:"):
                    return int(text.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def streamed(args: argparse.Namespace, whole: dict[str, Any]) -> int:
    """Run :func:`stream_worker` in a process of its own ``--stream-repeat`` times; print its
    figures (medians) and the ratio of its compile+store to the whole run's encoder."""
    runs = []
    for _ in range(args.stream_repeat):
        command = [sys.executable, __file__, "--stream-worker", "--rows", str(args.rows)]
        command += ["--per-tx", str(args.per_tx), "--table-rows", str(args.table_rows)]
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        if done.returncode:
            print(f"the streamed run failed: {done.stderr.strip().splitlines()[-1:]}")
            return 1
        runs.append(json.loads(done.stdout))
    first = runs[0]
    if any(run["sha256"] != first["sha256"] for run in runs):
        print("the streamed runs wrote different files")
        return 1
    build = [statistics.median(run["build"][i] for run in runs) for i in (0, 1)]
    write = [statistics.median(run["write"][i] for run in runs) for i in (0, 1)]
    peak = max(run["peak_rss_mb"] for run in runs)
    print(
        f"streamed ({len(runs)} run(s), medians; a process of its own, into a directory):"
        f" {first['points']:,} transactions, {first['files']} file(s), {first['bytes']:,} bytes,"
        f" {first['live_rows']:,} rows in the tables at the end"
    )
    line("stream: build (the generator)", args.rows, build[0], f"(CPU {build[1]:.3f} s)")
    line("stream: compile + store (flushes)", args.rows, write[0], f"(CPU {write[1]:.3f} s)")
    print(f"stream: peak RSS of its process:      {peak:,.0f} MB")
    if "sha256" in whole:
        same = "the same as" if whole["sha256"] == first["sha256"] else "DIFFERENT from"
        print(f"stream: its files are {same} to_store's (SHA-256 {first['sha256'][:16]})")
        if whole["sha256"] != first["sha256"]:
            return 1
    if "encode" in whole:
        print(f"ratio stream compile+store / encoder: {write[0] / whole['encode'][0]:.2f}x")
        print(f"CPU ratio stream compile+store / encoder: {write[1] / whole['encode'][1]:.2f}x")
    return 0


def whole_history(args: argparse.Namespace, whole: dict[str, Any]) -> int:
    """Steps 1-5 on the history built whole; the encoder's medians (wall, CPU) and the files'
    SHA-256 go into ``whole``."""
    build_s, scenario = timed(
        lambda: build_history(args.rows, args.per_tx, table_rows=args.table_rows)
    )
    changes = sum(len(t.changes) for t in scenario.transactions)
    print(f"history: {len(scenario.transactions):,} transactions, {changes:,} row changes")

    compile_times: list[float] = []
    store_times: list[float] = []
    encode_times: list[float] = []
    encode_all_times: list[float] = []
    cpu: dict[str, list[float]] = {"compile": [], "store": [], "encode": [], "encode_all": []}
    store: MemoryBinlogStore | None = None
    rows = 0
    for _ in range(args.repeat):
        seconds, compiled = timed(lambda: compile_scenario(scenario), cpu["compile"])
        compile_times.append(seconds)
        every_event = flatten(compiled)
        del compiled
        codec_events = [e for e in every_event if isinstance(e, (TableMapEvent, RowsEvent))]
        seconds, rows = timed(partial(encode_rows, codec_events), cpu["encode"])
        encode_times.append(seconds)
        del codec_events
        seconds, _ = timed(partial(encode_rows, every_event), cpu["encode_all"])
        encode_all_times.append(seconds)
        del every_event
        store = None
        seconds, store = timed(lambda: to_store(scenario), cpu["store"])
        store_times.append(seconds)
    assert store is not None
    digest = hashlib.sha256()
    for data in binlog_files(store).values():
        digest.update(data)
    whole["sha256"] = digest.hexdigest()
    if rows != changes:
        print(f"rows in the rows events {rows:,} differ from the history's {changes:,} changes")
        return 1

    serve_times: list[float] = []
    streamed_sizes: set[int] = set()
    with BackgroundFakeMaster(ServerConfig(), store) as master:
        first_file = store.file_names()[0]
        for _ in range(args.repeat + 1):
            result = run_drains(master.port, first_file, 1)
            serve_times.append(result.seconds)
            streamed_sizes.add(result.bytes_per_replica[0])
    if len(streamed_sizes) != 1:
        print(f"the dumps streamed different sizes: {sorted(streamed_sizes)}")
        return 1
    streamed = streamed_sizes.pop()

    build, comp, stored, enc = (
        build_s,
        statistics.median(compile_times),
        statistics.median(store_times),
        statistics.median(encode_times),
    )
    enc_all = statistics.median(encode_all_times)
    serve_first, serve = serve_times[0], statistics.median(serve_times[1:])
    print(f"binlog: {len(store.file_names())} file(s), dump stream {streamed:,} bytes")
    print(
        f"medians of {args.repeat} (build: once; serve: first dump, then median of {args.repeat}):"
    )
    line("build the model (Python API)", changes, build)
    line("compile_scenario", changes, comp)
    line("compile + store (to_store)", changes, stored)
    line("encoder.encode_event (codec)", changes, enc, "(TABLE_MAP + rows events)")
    line("encode_event, every event", changes, enc_all, "(also GTID, ANNOTATE_ROWS, XID)")
    line(
        "serve: first full dump",
        changes,
        serve_first,
        f"({streamed / serve_first / 1e6:,.0f} MB/s)",
    )
    line("serve: full dump", changes, serve, f"({streamed / serve / 1e6:,.0f} MB/s)")
    print(f"ratio compile+store / encoder:        {stored / enc:.2f}x")
    print(f"ratio compile+store / every event:    {stored / enc_all:.2f}x")
    print(f"ratio compile / encoder:              {comp / enc:.2f}x")
    print(f"ratio build+compile+store / encoder:  {(build + stored) / enc:.2f}x")
    print(f"ratio build+compile+store+serve / encoder: {(build + stored + serve) / enc:.2f}x")
    medians = {step: statistics.median(times) for step, times in cpu.items()}
    whole["encode"] = (enc, medians["encode"])
    print(
        "CPU seconds of this process, medians (steadier than wall time on a shared machine):"
        f" compile {medians['compile']:.3f}, compile+store {medians['store']:.3f},"
        f" encoder {medians['encode']:.3f}, every event {medians['encode_all']:.3f}"
    )
    print(f"CPU ratio compile+store / encoder:    {medians['store'] / medians['encode']:.2f}x")
    print(f"CPU ratio compile / encoder:          {medians['compile'] / medians['encode']:.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
