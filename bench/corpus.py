"""Binlog corpora for the serving benchmarks, written by a real MariaDB 10.11 primary and cached.

Three shapes (``build(shape, size_mb, cache)``):

* ``large``: InnoDB transactions of 16 rows of 64 KiB each (``INSERT ... SELECT`` from the
  sequence engine), so mostly one WRITE_ROWS event of about 64 KiB per row;
* ``mixed``: a mixed corpus: tables of several column types (integers, DECIMAL, DOUBLE,
  VARCHAR, DATETIME(6), ENUM, TEXT, BLOB), single-row INSERT/UPDATE/DELETE transactions,
  multi-row INSERT ... SELECT, range UPDATEs and DELETEs, DDL (CREATE/ALTER/DROP TABLE, CREATE
  INDEX) every few cycles, a medium row (128 KiB to 1 MiB) every cycle, and once, in the
  middle, ONE row of 20 MiB (its WRITE_ROWS event is larger than 16 MiB, so the dump splits
  its packet);
* ``small``: single-row transactions: a stored procedure loop of autocommit INSERTs of a small
  row (an INT and 260 characters: about 110 bytes per event on average, 2.3 M events in 256 MB,
  the corpus issue #7 measured; every INSERT is its own transaction: GTID, ANNOTATE_ROWS, TABLE_MAP, WRITE_ROWS, XID),
  with ``innodb_flush_log_at_trx_commit=0`` and ``sync_binlog=0`` so the loop is fast.

The primary rotates at ``max_binlog_size=64M``, is stopped cleanly at the end (its last file
ends with STOP), and its binlog files are copied to ``<cache>/<shape>-<size>MB-v<N>/`` with an
index naming them relatively. A later run with the same cache, shape and size reuses them (the
directory is complete when its ``done`` file exists).
"""

from __future__ import annotations

import shutil
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parent.parent
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

from tests.peers.mariadb import MariaDBServer  # noqa: E402

__all__ = ["SHAPES", "VERSION", "build", "corpus_files", "GENERATOR_OPTIONS"]

#: Bumped whenever a generator changes what it writes (the cache key includes it).
VERSION = 2
SHAPES = ("large", "mixed", "small")
GENERATOR_OPTIONS: dict[str, Any] = {
    "max_binlog_size": "64M",
    "max_allowed_packet": "64M",
    "innodb_flush_log_at_trx_commit": 0,
    "sync_binlog": 0,
    "innodb_buffer_pool_size": "128M",
}
BIG_ROW_BYTES = 20 << 20


def corpus_files(directory: Path) -> list[Path]:
    """The binlog files of a cached corpus, in index order."""
    index = directory / "mysql-bin.index"
    return [directory / Path(line.strip()).name for line in index.read_text().splitlines() if line]


def build(shape: str, size_mb: int, cache: Path, log: Callable[[str], None] = print) -> Path:
    """The directory holding the corpus ``shape`` of about ``size_mb`` MB, written on demand."""
    if shape not in SHAPES:
        raise ValueError(f"unknown shape {shape!r} (one of {', '.join(SHAPES)})")
    target = cache / f"{shape}-{size_mb}MB-v{VERSION}"
    if (target / "done").exists():
        return target
    if target.exists():
        shutil.rmtree(target)
    started = time.perf_counter()
    with MariaDBServer(GENERATOR_OPTIONS) as primary:
        conn = primary.connect(max_allowed_packet=64 << 20, read_timeout=3600)
        try:
            with conn.cursor() as cur:
                WRITERS[shape](cur, primary, size_mb << 20)
                # After a rotation the server writes a BINLOG_CHECKPOINT into the new file once
                # InnoDB has made the old file's transactions durable, in the background.
                cur.execute("FLUSH ENGINE LOGS")
        finally:
            conn.close()
        _wait_stable(primary)
        primary.stop()  # clean: the last file ends with STOP and its IN_USE flag is cleared
        files = primary.binlog_files()
        target.mkdir(parents=True)
        for path in files:
            shutil.copyfile(path, target / path.name)
        (target / "mysql-bin.index").write_text("".join(f"./{p.name}\n" for p in files))
    total = sum(p.stat().st_size for p in corpus_files(target))
    (target / "done").write_text(f"{total}\n")
    log(
        f"  wrote corpus {target.name}: {len(files)} files, {total / 1e6:.1f} MB, "
        f"in {time.perf_counter() - started:.1f} s"
    )
    return target


def _binlog_size(server: MariaDBServer) -> int:
    return sum(path.stat().st_size for path in server.binlog_files())


def _wait_stable(server: MariaDBServer) -> None:
    sizes = [-1, _binlog_size(server)]
    while sizes[-1] != sizes[-2] or len(sizes) < 6:
        time.sleep(0.25)
        sizes.append(_binlog_size(server))


# --- large ----------------------------------------------------------------------------------

LARGE_ROW = 64 << 10
LARGE_ROWS_PER_TRANSACTION = 16


def _write_large(cur: Any, server: MariaDBServer, size: int) -> None:
    cur.execute("CREATE DATABASE bench")
    cur.execute("USE bench")  # where the sequence engine's seq_1_to_N tables appear
    cur.execute("CREATE TABLE t (id INT AUTO_INCREMENT PRIMARY KEY, v LONGBLOB)")
    batch = 0
    while True:
        cur.execute(
            "INSERT INTO t (v) SELECT REPEAT(MD5(seq + %s), %s) FROM seq_1_to_%s",
            (batch * LARGE_ROWS_PER_TRANSACTION, LARGE_ROW // 32, LARGE_ROWS_PER_TRANSACTION),
        )
        batch += 1
        if batch % 16 == 0 and _binlog_size(server) >= size:
            return


# --- mixed ----------------------------------------------------------------------------------

MIXED_TABLE = """CREATE TABLE {name} (
    id INT AUTO_INCREMENT PRIMARY KEY,
    k BIGINT NOT NULL,
    small TINYINT UNSIGNED,
    price DECIMAL(12, 4),
    ratio DOUBLE,
    label VARCHAR(64) CHARACTER SET utf8mb4,
    seen DATETIME(6),
    state ENUM('new', 'paid', 'shipped', 'gone'),
    note TEXT,
    payload BLOB,
    KEY (k)
) ENGINE=InnoDB"""

MIXED_PROCEDURE = """CREATE PROCEDURE small_dml(cycle INT, n INT)
BEGIN
  DECLARE i INT DEFAULT 0;
  WHILE i < n DO
    INSERT INTO orders (k, small, price, ratio, label, seen, state, note, payload)
      VALUES (cycle * 1000 + i, i % 256, (cycle * 7 + i) / 100, i / 7,
              CONCAT('order ', cycle, '-', i, ' é'), '2024-01-02 03:04:05.678901'
              + INTERVAL (cycle * 100 + i) SECOND,
              ELT(1 + i % 4, 'new', 'paid', 'shipped', 'gone'),
              IF(i % 3 = 0, NULL, REPEAT('n', 20 + i % 50)), UNHEX(MD5(i)));
    UPDATE orders SET state = 'paid', ratio = ratio * 2 WHERE k = cycle * 1000 + i;
    IF i % 4 = 0 THEN
      DELETE FROM orders WHERE k = cycle * 1000 + i - 2;
    END IF;
    SET i = i + 1;
  END WHILE;
END"""


def _write_mixed(cur: Any, server: MariaDBServer, size: int) -> None:
    cur.execute("CREATE DATABASE bench")
    cur.execute("USE bench")
    cur.execute(MIXED_TABLE.format(name="orders"))
    cur.execute(MIXED_TABLE.format(name="archive"))
    cur.execute("CREATE TABLE blobs (id INT AUTO_INCREMENT PRIMARY KEY, b LONGBLOB)")
    cur.execute(MIXED_PROCEDURE)
    big_written = False
    cycle = 0
    while True:
        cur.execute("CALL small_dml(%s, 40)", (cycle,))
        cur.execute(  # a multi-row transaction
            "INSERT INTO archive (k, small, price, ratio, label, seen, state, note, payload) "
            "SELECT k, small, price, ratio, label, seen, state, note, payload FROM orders "
            "WHERE k >= %s",
            (cycle * 1000,),
        )
        cur.execute(
            "UPDATE archive SET note = CONCAT('archived ', id) WHERE k >= %s", (cycle * 1000,)
        )
        if cycle % 3 == 2:
            cur.execute("DELETE FROM archive WHERE k < %s", ((cycle - 1) * 1000,))
        medium = (128 << 10) << (cycle % 4)  # 128 KiB .. 1 MiB
        cur.execute("INSERT INTO blobs (b) SELECT REPEAT(MD5(%s), %s)", (cycle, medium // 32))
        if cycle % 8 == 0:  # some DDL
            name = f"extra{cycle}"
            cur.execute(f"CREATE TABLE {name} (a INT PRIMARY KEY, b VARCHAR(20), c DATE)")
            cur.execute(f"INSERT INTO {name} VALUES (1, 'one', '2024-05-06'), (2, 'two', NULL)")
            cur.execute(f"ALTER TABLE {name} ADD COLUMN d DOUBLE DEFAULT 1.5, ADD INDEX (b)")
            cur.execute(f"UPDATE {name} SET d = a * 3.25")
            cur.execute(f"CREATE INDEX c_idx ON {name} (c)")
            cur.execute(f"DROP TABLE {name}")
        if cycle % 4 == 3:
            cur.execute("ALTER TABLE blobs COMMENT %s", (f"cycle {cycle}",))
        cycle += 1
        written = _binlog_size(server)
        if not big_written and written >= size // 2:
            # ONE row of 20 MiB: a WRITE_ROWS event larger than 16 MiB.
            cur.execute(
                "INSERT INTO blobs (b) SELECT REPEAT(MD5('big'), %s)", (BIG_ROW_BYTES // 32,)
            )
            big_written = True
            written = _binlog_size(server)
        if big_written and written >= size:
            return


# --- small ----------------------------------------------------------------------------------

SMALL_PROCEDURE = """CREATE PROCEDURE fill(start INT, n INT)
BEGIN
  DECLARE i INT DEFAULT 0;
  WHILE i < n DO
    INSERT INTO t (a, b) VALUES (start + i, REPEAT('s', 260));
    SET i = i + 1;
  END WHILE;
END"""
SMALL_BATCH = 20000


def _write_small(cur: Any, server: MariaDBServer, size: int) -> None:
    cur.execute("CREATE DATABASE bench")
    cur.execute("USE bench")
    cur.execute("CREATE TABLE t (id INT AUTO_INCREMENT PRIMARY KEY, a INT, b VARCHAR(300))")
    cur.execute(SMALL_PROCEDURE)
    # autocommit is on (MariaDBServer.connect): each INSERT of the loop commits on its own.
    start = 0
    while (written := _binlog_size(server)) < size:
        # about 540 bytes of binlog per transaction: do not overshoot small sizes by much
        batch = max(1000, min(SMALL_BATCH, (size - written) // 540))
        cur.execute("CALL fill(%s, %s)", (start, batch))
        start += batch


WRITERS: dict[str, Callable[[Any, MariaDBServer, int], None]] = {
    "large": _write_large,
    "mixed": _write_mixed,
    "small": _write_small,
}
