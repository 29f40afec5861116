"""Large events a real MariaDB 10.11 primary wrote (a shop's product images, rows of 60-400 kB,
between small orders), dumped from the primary itself and from the fake master serving its
binlog directory: the same bytes, on a first dump and on one from the frame cache, with and
without annotations (each INSERT's ANNOTATE_ROWS carries the image's text: large too). The
frame cache sends those events from the binlog files: its runs hold their packet headers only.
"""

from __future__ import annotations

import random

import pytest

from fakemaster.config.server_config import ServerConfig
from fakemaster.core.dump.framing import LARGE_EVENT
from fakemaster.server.frame_cache import FramedRun
from fakemaster.server.master import BackgroundFakeMaster
from fakemaster.store import DirectoryBinlogStore
from fakemaster.vocabulary.constants import DumpFlag
from tests.fakemaster.server.test_server_frame_cache import PASSWORD, USER, dump_bytes
from tests.peers.fixtures import MariaDBFactory
from tests.peers.mariadb import MariaDBServer

SCHEMA = (
    "CREATE DATABASE shop",
    """CREATE TABLE shop.products (
        id INT NOT NULL AUTO_INCREMENT PRIMARY KEY,
        sku CHAR(12) NOT NULL,
        name VARCHAR(200) NOT NULL,
        image MEDIUMBLOB NULL,
        price DECIMAL(10,2) NOT NULL,
        updated_at TIMESTAMP NOT NULL DEFAULT current_timestamp() ON UPDATE current_timestamp(),
        UNIQUE KEY (sku)
    ) ENGINE=InnoDB""",
    """CREATE TABLE shop.orders (
        id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
        product_id INT NOT NULL,
        quantity SMALLINT NOT NULL,
        placed_at DATETIME(6) NOT NULL DEFAULT current_timestamp(6),
        KEY (product_id)
    ) ENGINE=InnoDB""",
)


def run_shop(primary: MariaDBServer, seed: int = 5) -> None:
    """Products with images, orders between them, image updates, cancelled orders, a
    rotation: as a shop's back office writes them."""
    rng = random.Random(seed)
    conn = primary.connect()
    try:
        with conn.cursor() as cur:
            for statement in SCHEMA:
                cur.execute(statement)
            for number in range(36):
                image = rng.randbytes(rng.randrange(60_000, 400_000))
                cur.execute(
                    "INSERT INTO shop.products (sku, name, image, price) VALUES (%s, %s, %s, %s)",
                    (
                        f"SKU-{number:06d}",
                        f"Product {number}",
                        image,
                        rng.randrange(100, 99_999) / 100,
                    ),
                )
                product = cur.lastrowid
                for _ in range(rng.randrange(1, 6)):
                    cur.execute(
                        "INSERT INTO shop.orders (product_id, quantity) VALUES (%s, %s)",
                        (product, rng.randrange(1, 5)),
                    )
                if number % 7 == 6:
                    cur.execute(
                        "UPDATE shop.products SET image = %s, price = price * 0.9 WHERE id = %s",
                        (rng.randbytes(rng.randrange(60_000, 200_000)), product - 3),
                    )
                if number % 11 == 10:
                    cur.execute("DELETE FROM shop.orders WHERE product_id = %s", (product - 5,))
                if number == 18:
                    cur.execute("FLUSH BINARY LOGS")
    finally:
        conn.close()


@pytest.mark.mariadb
def test_large_events_are_sent_as_the_primary_sends_them(mariadb_factory: MariaDBFactory) -> None:
    primary = mariadb_factory({"max_binlog_size": "4M"})
    primary.create_replication_user(USER, PASSWORD)
    run_shop(primary)
    primary.wait_for_binlog_checkpoint()
    with_annotations = DumpFlag.NON_BLOCK | DumpFlag.SEND_ANNOTATE_ROWS
    expected = {
        flags: dump_bytes(primary.port, 101, flags)
        for flags in (DumpFlag.NON_BLOCK, with_annotations)
    }
    assert len(expected[DumpFlag.NON_BLOCK]) > 8 << 20  # several files of the cache's size
    config = ServerConfig(
        server_id=primary.server_id, user=USER, password=PASSWORD, binlog_checksum="CRC32"
    )
    with (
        DirectoryBinlogStore(primary.binlog_dir) as store,
        BackgroundFakeMaster(config, store) as fake,
    ):
        for flags in (DumpFlag.NON_BLOCK, with_annotations):
            # The first dump frames the files, the second sends them from the cache.
            for replica in (102, 103):
                assert dump_bytes(fake.port, replica, flags) == expected[flags]
        assert fake.master is not None
        cache = fake.master.frame_cache
        runs = list(cache._runs.values())
        from_files = [
            size
            for run in runs
            for size, (from_file, _) in zip(_piece_sizes(run), run.pieces, strict=False)
            if from_file
        ]
        # Every product image of every kind of dump (rows and, asked for, annotations).
        assert len(from_files) >= 36 * 3
        assert min(from_files) >= LARGE_EVENT
        assert sum(run.stored for run in runs) < sum(run.tip.framed for run in runs) // 10
        assert fake.errors == []


def _piece_sizes(run: FramedRun) -> list[int]:
    starts = run.piece_starts
    ends = [*starts[1:], run.tip.framed]
    return [end - start for start, end in zip(starts, ends, strict=True)]
