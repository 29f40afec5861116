"""The table options the model keeps and prints (not simulated), in the order MariaDB 10.11's
``SHOW CREATE TABLE`` prints them."""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["ENGINE_TABLE_OPTIONS", "PLAIN_TABLE_OPTIONS", "in_server_order"]

# Table options kept and printed as NAME=VALUE, in the order SHOW CREATE TABLE prints them;
# the engine-defined ones (InnoDB's) printed as `NAME`='value' after the COMMENT.
PLAIN_TABLE_OPTIONS = (
    "MIN_ROWS",
    "MAX_ROWS",
    "AVG_ROW_LENGTH",
    "PACK_KEYS",
    "STATS_PERSISTENT",
    "STATS_AUTO_RECALC",
    "STATS_SAMPLE_PAGES",
    "CHECKSUM",
    "PAGE_CHECKSUM",
    "DELAY_KEY_WRITE",
    "ROW_FORMAT",
    "TRANSACTIONAL",
    "KEY_BLOCK_SIZE",
)
ENGINE_TABLE_OPTIONS = (
    "PAGE_COMPRESSED",
    "PAGE_COMPRESSION_LEVEL",
    "ENCRYPTED",
    "ENCRYPTION_KEY_ID",
)


def in_server_order(options: Iterable[tuple[str, str]]) -> tuple[tuple[str, str], ...]:
    order = [*PLAIN_TABLE_OPTIONS, *(f"`{name}`" for name in ENGINE_TABLE_OPTIONS)]
    last = {name: value for name, value in options}  # a repeated option: the last one
    return tuple((name, last[name]) for name in order if name in last)
