"""The statistics InnoDB reports about a served table once they are up to date (persistent
statistics recomputed, as after ``ANALYZE TABLE``): index cardinalities, data and index lengths,
the average row length.

The served tables are small (a page each for the clustered index and every secondary index,
as a real 10.11 shows for tables of a few hundred short rows), and the statistics of a small
table are exact: InnoDB reads every leaf page.

* Cardinality of a key's first ``n`` columns: InnoDB counts the distinct prefixes
  (``n_diff``, NULLs equal: innodb_stats_method=nulls_equal), makes it records per key,
  ``max(1, rows // n_diff)``, then halves that ("MySQL seems to favor table scans too much over
  index searches", ha_innobase::info_low) and the server shows ``rows // rec_per_key``: so 9
  distinct values among 60 rows show as 20, 2 among 3 as 3, as a real 10.11 shows them.
* Data_length: the clustered index's page; Index_length: a page per secondary index (every key
  but the clustered one: the PRIMARY KEY, or without one the first UNIQUE key of NOT NULL
  columns); Avg_row_length: Data_length / rows. (Values stored off-page, long BLOBs and
  TEXTs, take more pages on the server: not modelled.)
* Version: the table's .frm format, 11 when it holds an expression (a CHECK constraint, JSON's
  ``json_valid`` CHECK among them, a generated column, a DEFAULT that is neither a literal nor
  ``current_timestamp()``), else 10.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from fakemaster.protocol.charsets import collation_by_name
from fakemaster.sql.tables.catalogue import CatalogueKey, CatalogueTable, CellValue

__all__ = [
    "PAGE_SIZE",
    "avg_row_length",
    "cardinalities",
    "clustered_key",
    "frm_version",
    "index_length",
]

# innodb_page_size's default: what one page of a small table's index takes.
PAGE_SIZE = 16384


def clustered_key(table: CatalogueTable) -> CatalogueKey | None:
    """The key InnoDB clusters the rows by (None: a hidden row id)."""
    if table.primary_key is not None:
        return table.primary_key
    for key in table.keys:
        positions = [table.position(name) for name in key.columns]
        if key.unique and all(p is not None and not table.columns[p].nullable for p in positions):
            return key
    return None


def index_length(table: CatalogueTable) -> int:
    clustered = clustered_key(table)
    return PAGE_SIZE * sum(1 for key in table.keys if key is not clustered)


def avg_row_length(data_length: int, rows: int) -> int:
    return data_length // rows if rows else 0


def _folded(cell: CellValue, case_blind: bool) -> object:
    """A cell as the index compares it: a case-insensitive collation ignores case and trailing
    spaces (PAD SPACE)."""
    if isinstance(cell, str) and case_blind:
        return cell.rstrip(" ").casefold()
    if isinstance(cell, bytes) and case_blind:
        return cell.rstrip(b" ").decode("utf-8", "replace").casefold()
    return cell


def _case_blind(table: CatalogueTable, position: int) -> bool:
    collation = table.columns[position].collation
    found = collation_by_name(collation) if collation else None
    return found is not None and found.name.endswith("_ci")


def cardinalities(
    table: CatalogueTable, key: CatalogueKey, rows: Sequence[Sequence[CellValue]]
) -> list[int]:
    """The Cardinality SHOW INDEX shows for each of ``key``'s columns (its prefixes)."""
    positions = [table.position(name) for name in key.columns]
    count = len(rows)
    out: list[int] = []
    for width in range(1, len(positions) + 1):
        prefix = [p for p in positions[:width] if p is not None]
        blind = [_case_blind(table, p) for p in prefix]
        distinct = {
            tuple(_folded(row[p], b) for p, b in zip(prefix, blind, strict=True)) for row in rows
        }
        per_key = max(1, max(1, count // len(distinct)) // 2) if distinct else 1
        out.append(count // per_key)
    return out


# What SHOW CREATE TABLE prints after DEFAULT when the frm stores a value, not an expression:
# NULL, a number, a string (with an introducer), a bit or hex literal, current_timestamp(N).
_LITERAL_DEFAULT = re.compile(
    r" DEFAULT (?:NULL|-?[0-9.]+(?:e[+-]?[0-9]+)?|(?:_\w+)?'(?:[^'\\]|\\.|'')*'"
    r"|[bx]'[0-9a-f]*'|current_timestamp\(\d?\))(?=[ ,]|$)",
    re.I,
)
_EXPRESSION_MARKS = re.compile(
    r" CHECK \(| GENERATED ALWAYS AS \(| AS \(.*\) (?:VIRTUAL|STORED|PERSISTENT)\b"
)


def frm_version(create_text: str) -> int:
    """SHOW TABLE STATUS's Version of the table SHOW CREATE TABLE prints as ``create_text``."""
    for line in create_text.splitlines():
        if _EXPRESSION_MARKS.search(line):
            return 11
        column = line.startswith("  `")  # not the table options' DEFAULT CHARSET
        if column and " DEFAULT " in line and not _LITERAL_DEFAULT.search(line):
            return 11
    return 10
