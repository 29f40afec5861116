"""What every table holds after every transaction, computed from the model; its canonical
export (JSON lines and TSV, one file per table) and a readable diff against what a client
produced.

Canonical cells are the text MariaDB's ``SELECT`` returns for the value (``time_zone =
'+00:00'``; numbers as the server prints them, :mod:`scenarios.text`), except where text would
be ambiguous: byte columns (BINARY, VARBINARY, BLOB) are ``0x`` and upper-case hex, as
``mariadb-dump --hex-blob`` writes them, and BIT columns their number (``SELECT b + 0``). NULL is
JSON ``null`` / TSV ``\\N``. Rows are sorted by the table's key (its values compared as the
model's values), or by their canonical cells for a table without a key. In TSV, ``\\``, tab,
newline, carriage return and NUL are escaped as ``mariadb --batch`` does.

A system-versioned table holds every version of its rows, the history rows too, with their
``row_start``/``row_end`` (what ``SELECT ... FOR SYSTEM_TIME ALL`` returns; a binlog reader that
keys rows as the TABLE_MAP says, ``row_end`` included, materialises the same); the SQL snapshot
(:mod:`scenarios.catalogue`) shows its current rows without them, as ``SELECT *`` does. A
sequence's table holds its one row.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fakemaster.vocabulary.values import Date, DateTime, Time, Timestamp
from scenarios.errors import ScenarioError
from scenarios.history import Ddl, Scenario, Transaction, XaEnd, apply_change, apply_ddl
from scenarios.schema import Column, Table
from scenarios.state import Contents, LiveTables, Row
from scenarios.text import format_double, format_float
from scenarios.values import convert, python_codec

__all__ = [
    "Oracle",
    "TableDiff",
    "canonical_rows",
    "cell_text",
    "diff_tables",
    "export_jsonl",
    "export_tsv",
    "file_stem",
    "sql_literal",
]

Cell = str | None


def cell_text(column: Column, value: Any) -> Cell:
    """The canonical text of a model value of ``column`` (see the module docstring)."""
    if value is None:
        return None
    kind = column.type
    if kind == "float":
        return format_float(value)
    if kind == "double":
        return format_double(value)
    if kind == "decimal":
        return format(value, "f")
    if kind == "year":
        return f"{value:04d}"
    if kind == "enum":
        return column.members[int(value) - 1]
    if kind == "set":
        return ",".join(m for i, m in enumerate(column.members) if value >> i & 1)
    if isinstance(value, Date):
        return str(value)
    if isinstance(value, DateTime | Time):
        return value.format(column.fsp)
    if isinstance(value, Timestamp):
        if value == Timestamp(0, 0):
            text = "0000-00-00 00:00:00"
        else:
            text = f"{value.to_datetime():%Y-%m-%d %H:%M:%S}"
        return text + (f".{value.microsecond:06d}"[: column.fsp + 1] if column.fsp else "")
    if isinstance(value, bytes):
        codec = python_codec(column.charset)
        if codec is None:
            return "0x" + value.hex().upper()
        return value.decode(codec)
    return str(value)


# Column types whose canonical text is a number: a diff shows it bare (``k0=0``), as ``mariadb``
# prints it. BIT's canonical text is its number too (``SELECT b + 0``).
_NUMERIC = frozenset(
    {
        "tinyint",
        "smallint",
        "mediumint",
        "int",
        "bigint",
        "decimal",
        "float",
        "double",
        "year",
        "bit",
    }
)
_BYTES = frozenset({"binary", "varbinary", "tinyblob", "blob", "mediumblob", "longblob"})


def sql_literal(column: Column, cell: Cell) -> str:
    """``cell`` (canonical text of a value of ``column``) as a diff shows it: an SQL literal
    by the column's type. NULL; numbers bare; byte strings (BINARY, VARBINARY, BLOB) as
    ``0x`` hex (``''`` when empty); every other value (strings, ENUM, SET, temporal, JSON) quoted with ``'``,
    a quote doubled and a backslash escaped (``'it''s'``)."""
    if cell is None:
        return "NULL"
    if column.type in _BYTES and cell == "0x":
        return "''"  # empty: 0x alone is no literal
    if column.type in _NUMERIC or (column.type in _BYTES and cell.startswith("0x")):
        return cell
    return "'" + cell.replace("\\", "\\\\").replace("'", "''") + "'"


def _sort_key(table: Table, row: Row, cells: Sequence[Cell]) -> tuple[Any, ...]:
    if table.key:
        return tuple((row[p] is not None, row[p]) for p in table.key)
    return tuple((cell is not None, cell or "") for cell in cells)


def canonical_rows(table: Table, rows: Iterable[Row]) -> list[tuple[Cell, ...]]:
    """``rows`` (model values) as canonical cells, in canonical order."""
    rendered = [
        (row, tuple(cell_text(c, v) for c, v in zip(table.columns, row, strict=True)))
        for row in rows
    ]
    rendered.sort(key=lambda pair: _sort_key(table, pair[0], pair[1]))
    return [cells for _, cells in rendered]


def file_stem(table: Table) -> str:
    """``database.table`` (the name of the table's export files, without suffix)."""
    return f"{table.database}.{table.name}"


def export_jsonl(table: Table, rows: Iterable[Row]) -> str:
    """One JSON object per row, column names in table order."""
    names = table.column_names
    return "".join(
        json.dumps(dict(zip(names, cells, strict=True)), ensure_ascii=False) + "\n"
        for cells in canonical_rows(table, rows)
    )


_TSV_ESCAPES = str.maketrans({"\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r", "\0": "\\0"})


def export_tsv(table: Table, rows: Iterable[Row]) -> str:
    """A header line of column names, then one line per row (``mariadb --batch`` style)."""
    lines = ["\t".join(table.column_names)]
    for cells in canonical_rows(table, rows):
        lines.append(
            "\t".join("\\N" if cell is None else cell.translate(_TSV_ESCAPES) for cell in cells)
        )
    return "\n".join(lines) + "\n"


@dataclass(frozen=True)
class TableDiff:
    """How a table a client produced differs from the oracle's."""

    table: str
    missing: tuple[tuple[Cell, ...], ...]  # expected rows the client lacks
    unexpected: tuple[tuple[Cell, ...], ...]  # rows the client has that were not expected
    column_names: tuple[str, ...]
    # Rows the client has that lack columns or name unknown ones: (what is wrong, the row as
    # "name=literal" parts); they match no expected row.
    malformed: tuple[tuple[str, tuple[str, ...]], ...] = ()
    columns: tuple[Column, ...] = ()  # for rendering by type (none: every value quoted)

    def __bool__(self) -> bool:
        return bool(self.missing or self.unexpected or self.malformed)

    def _shown(self, cells: Sequence[Cell]) -> str:
        if self.columns:
            return ", ".join(
                f"{c.name}={sql_literal(c, cell)}"
                for c, cell in zip(self.columns, cells, strict=True)
            )
        return ", ".join(
            f"{n}={'NULL' if c is None else repr(c)}"
            for n, c in zip(self.column_names, cells, strict=True)
        )

    def lines(self, limit: int = 20) -> list[str]:
        head = (
            f"{self.table}: {len(self.missing)} row(s) missing, {len(self.unexpected)} unexpected"
        )
        if self.malformed:
            head += f", {len(self.malformed)} malformed"
        out = [head]
        for problem, parts in self.malformed[:limit]:
            out.append(f"  ! {problem}: {', '.join(parts)}")
        if len(self.malformed) > limit:
            out.append(f"  ! ... {len(self.malformed) - limit} more")
        for sign, rows in (("-", self.missing), ("+", self.unexpected)):
            for cells in rows[:limit]:
                out.append(f"  {sign} {self._shown(cells)}")
            if len(rows) > limit:
                out.append(f"  {sign} ... {len(rows) - limit} more")
        return out


def _multiset_diff(
    expected: list[tuple[Cell, ...]], actual: list[tuple[Cell, ...]]
) -> tuple[list[tuple[Cell, ...]], list[tuple[Cell, ...]]]:
    remaining: dict[tuple[Cell, ...], int] = {}
    for cells in actual:
        remaining[cells] = remaining.get(cells, 0) + 1
    missing = []
    for cells in expected:
        if remaining.get(cells, 0):
            remaining[cells] -= 1
        else:
            missing.append(cells)
    unexpected = []
    for cells in actual:
        if remaining.get(cells, 0):
            remaining[cells] -= 1
            unexpected.append(cells)
    return missing, unexpected


def client_row(table: Table, row: Mapping[str, Any] | Sequence[Any]) -> Row:
    """A row a client produced (a column -> value mapping, or values in table order), as model
    values (plain Python values converted per column)."""
    if isinstance(row, Mapping):
        by_position = {table.position(name): value for name, value in row.items()}
        if len(by_position) != table.width:
            raise ScenarioError(f"{table.qualified}: a row of {sorted(row)} lacks columns")
        values = [by_position[p] for p in range(table.width)]
    else:
        values = list(row)
        if len(values) != table.width:
            raise ScenarioError(f"{table.qualified}: a row of {len(values)} values")
    return tuple(
        convert(c, v, table=table.qualified) for c, v in zip(table.columns, values, strict=True)
    )


def _malformed(table: Table, row: Mapping[str, Any]) -> tuple[str, tuple[str, ...]] | None:
    """What is wrong with a client's row given as a mapping (columns it lacks, names the table
    has not), and the row as it can be shown; None for a row with exactly the table's columns."""
    names = table.column_names
    lacking = [name for name in names if name not in row]
    unknown = [str(name) for name in row if name not in names]
    if not lacking and not unknown:
        return None
    problems = []
    if lacking:
        problems.append("lacks column(s) " + ", ".join(lacking))
    if unknown:
        problems.append("has unknown column(s) " + ", ".join(unknown))
    parts = []
    for column in table.columns:
        if column.name not in row:
            parts.append(f"{column.name}=<missing>")
            continue
        try:
            cell = cell_text(column, convert(column, row[column.name], table=table.qualified))
        except ScenarioError:
            parts.append(f"{column.name}={row[column.name]!r}")
        else:
            parts.append(f"{column.name}={sql_literal(column, cell)}")
    parts += [f"{name}={row[name]!r}" for name in unknown]
    return "a row " + " and ".join(problems), tuple(parts)


def diff_tables(
    tables: Mapping[str, Table],
    expected: Contents,
    actual: Mapping[str, Iterable[Mapping[str, Any] | Sequence[Any]]],
) -> list[TableDiff]:
    """Per table that differs, what is missing and what is unexpected; ``actual`` maps
    ``database.table`` to the rows a client ended with (a table it lacks counts as empty). A
    row (a mapping) lacking columns or naming unknown ones is reported as malformed, with the
    columns named, and matches no expected row."""
    diffs = []
    for name, table in tables.items():
        want = canonical_rows(table, expected.rows.get(name, []))
        whole: list[Row] = []
        malformed = []
        for row in actual.get(name, []):
            wrong = _malformed(table, row) if isinstance(row, Mapping) else None
            if wrong is None:
                whole.append(client_row(table, row))
            else:
                malformed.append(wrong)
        got = canonical_rows(table, whole)
        missing, unexpected = _multiset_diff(want, got)
        if missing or unexpected or malformed:
            diffs.append(
                TableDiff(
                    name,
                    tuple(missing),
                    tuple(unexpected),
                    table.column_names,
                    tuple(malformed),
                    table.columns,
                )
            )
    return diffs


class Oracle:
    """The content of every table of ``scenario`` before the first step (``after=0``) and
    after each transaction, DDL statement or XA COMMIT/ROLLBACK (``after=n``: after the n-th of
    them; rotations and settings do not count; a prepared XA transaction's changes count from
    its XA COMMIT); the default is after the last. The final state is the model's current
    tables (nothing replayed); of a streamed history (:mod:`scenarios.streaming`, its steps
    dropped as they were written) it is the only state known: it takes the tables' rows, not
    the history's length, in memory."""

    def __init__(self, scenario: Scenario) -> None:
        self.scenario = scenario

    @property
    def final(self) -> Contents:
        return self.scenario.contents

    @property
    def points(self) -> int:
        """How many transactions and DDL statements the scenario has."""
        held = sum(1 for step in self.scenario.steps if isinstance(step, Transaction | Ddl | XaEnd))
        return self.scenario.points_taken + held

    def _live(self, after: int | None) -> LiveTables | None:
        """The tables after ``after`` steps, None for the end (replayed through the model's own
        bookkeeping from the initial rows)."""
        if after is None or after == self.points:
            return None
        if not 0 <= after <= self.points:
            raise ScenarioError(f"the scenario has {self.points} transactions and DDL statements")
        if self.scenario.steps_taken:
            # A streamed history keeps its current tables only: replaying to an earlier point
            # would need the steps it dropped.
            raise ScenarioError(
                f"the state after {after} of {self.points} points: this history was streamed"
                " (its steps were not kept), only its final state is known"
            )
        live = LiveTables()
        for name, table in self.scenario.initial_tables.items():
            live.add_table(table)
            for row in self.scenario.initial.rows[name]:
                live[name].insert(row)
        done = 0
        for step in self.scenario.steps:
            if done == after:
                break
            if not isinstance(step, Transaction | Ddl | XaEnd):
                continue
            done += 1
            if isinstance(step, Ddl):
                apply_ddl(live, step)
                continue
            if isinstance(step, XaEnd):
                if not step.commit:
                    continue
                changes = step.transaction.changes
            elif step.prepared:
                continue  # its changes count from its XA COMMIT
            else:
                changes = step.changes
            for change in changes:
                apply_change(live, change)
        return live

    def state(self, after: int | None = None) -> Contents:
        """The tables' rows after ``after`` steps (see the class docstring)."""
        live = self._live(after)
        return self.final if live is None else live.snapshot()

    def tables(self, after: int | None = None) -> dict[str, Table]:
        """The tables (their schemas) after ``after`` steps."""
        live = self._live(after)
        if live is None:
            return dict(self.scenario.tables)
        return {name: state.table for name, state in live.tables.items()}

    def rows(self, table: str, after: int | None = None) -> list[Row]:
        """The rows of ``table`` after ``after`` steps (default: all)."""
        return list(self.state(after).rows[table])

    def export(self, directory: str | Path, after: int | None = None) -> list[Path]:
        """Write ``<database.table>.jsonl`` and ``.tsv`` for every table; returns the paths."""
        state = self.state(after)
        root = Path(directory)
        root.mkdir(parents=True, exist_ok=True)
        written = []
        for name, table in self.tables(after).items():
            rows = state.rows[name]
            for suffix, text in (
                ("jsonl", export_jsonl(table, rows)),
                ("tsv", export_tsv(table, rows)),
            ):
                path = root / f"{file_stem(table)}.{suffix}"
                path.write_text(text, encoding="utf-8")
                written.append(path)
        return written

    def diff(
        self,
        actual: Mapping[str, Iterable[Mapping[str, Any] | Sequence[Any]]],
        after: int | None = None,
    ) -> list[TableDiff]:
        state = self.state(after)
        return diff_tables(self.tables(after), state, actual)

    def assert_matches(
        self,
        actual: Mapping[str, Iterable[Mapping[str, Any] | Sequence[Any]]],
        after: int | None = None,
    ) -> None:
        """AssertionError with a readable diff unless ``actual`` holds what the oracle says."""
        diffs = self.diff(actual, after)
        if diffs:
            raise AssertionError("\n".join(line for d in diffs for line in d.lines()))
