"""What a materialisation did to each table, for the user: the rows written, a table it could
not write and why, the statement-format DML it could not apply, and every value that became
NULL without being NULL in the binlog (docs/spark.md, "The run's report").

Pure Python (no PySpark): the materialiser fills :class:`TableResult` objects, the command
prints :func:`summary_line` and :func:`table_line`, and ``OUT/report.json`` is
:func:`report_json`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "NULL_KINDS",
    "TableResult",
    "TableSkipped",
    "one_line",
    "report_json",
    "statement_target",
    "summary_line",
    "table_line",
]

NULL_KINDS = ("absent", "unrepresentable")
"""Why a value became NULL: ``absent``, the column is in no image of the row (an ALTER the DDL
applier could not model added it after the row was written, or a partial image without a
default); ``unrepresentable``, the binlog's value has no Spark value of the column's type
(MariaDB's zero dates ``0000-00-00``, a date outside Spark's range)."""


class TableSkipped(Exception):
    """A table cannot be materialised; the message says what could not be done."""


@dataclass(frozen=True)
class TableResult:
    """One table's outcome: ``path`` None and ``reason`` None when the binlog dropped it,
    ``reason`` set when it could not be written (skipped)."""

    name: str  # database.table
    rows: int
    path: str | None
    reason: str | None = None
    statement_dml: int = 0  # statement-format INSERT/UPDATE/DELETE... not applied
    nulls: Mapping[str, Mapping[str, int]] = field(default_factory=dict)  # column -> kind -> n
    notes: tuple[str, ...] = ()  # what was used in place of what failed (table written)

    @property
    def status(self) -> str:
        if self.reason is not None:
            return "skipped"
        return "dropped" if self.path is None else "written"


def one_line(exc: BaseException, limit: int = 400) -> str:
    """``exc`` as one line: its type and the first line of its message (Spark's and Py4J's
    messages carry a JVM stack trace after it)."""
    text = next((line.strip() for line in str(exc).splitlines() if line.strip()), "")
    line = f"{type(exc).__name__}: {text}" if text else type(exc).__name__
    return line if len(line) <= limit else line[: limit - 3] + "..."


_NAME = r"(?:`(?:[^`]|``)+`|[\w$]+)"
_QUALIFIED = rf"{_NAME}(?:\s*\.\s*{_NAME})?"
_COMMENTS = re.compile(r"/\*.*?\*/|--[^\n]*|#[^\n]*", re.S)
_TARGETS = (
    re.compile(
        r"^(?:INSERT|REPLACE)\s+(?:(?:LOW_PRIORITY|DELAYED|HIGH_PRIORITY|IGNORE)\s+)*"
        rf"(?:INTO\s+)?({_QUALIFIED})",
        re.I,
    ),
    re.compile(rf"^UPDATE\s+(?:(?:LOW_PRIORITY|IGNORE)\s+)*({_QUALIFIED})", re.I),
    re.compile(rf"^DELETE\s+(?:(?:LOW_PRIORITY|QUICK|IGNORE)\s+)*FROM\s+({_QUALIFIED})", re.I),
    # Multi-table DELETE t1[, t2] FROM ...: the first table deleted from.
    re.compile(rf"^DELETE\s+(?:(?:LOW_PRIORITY|QUICK|IGNORE)\s+)*({_QUALIFIED})", re.I),
    re.compile(rf"^LOAD\s+(?:DATA|XML)\b.*?\bINTO\s+TABLE\s+({_QUALIFIED})", re.I | re.S),
)


def _unquote(name: str) -> str:
    return name[1:-1].replace("``", "`") if name.startswith("`") else name


def statement_target(text: str, database: str | None) -> tuple[str | None, str | None]:
    """The (database, table) a statement-format DML statement writes (the first named, for
    a multi-table one); the table is None where the statement names none this can read."""
    statement = _COMMENTS.sub(" ", text).strip()
    for pattern in _TARGETS:
        found = pattern.match(statement)
        if found:
            parts = re.findall(_NAME, found.group(1))
            if len(parts) == 2:
                return _unquote(parts[0]), _unquote(parts[1])
            return database or None, _unquote(parts[0])
    return database or None, None


def summary_line(results: Sequence[TableResult]) -> str:
    """The run's last line: tables written, dropped and skipped, statements and NULLs."""
    written = sum(r.status == "written" for r in results)
    dropped = sum(r.status == "dropped" for r in results)
    skipped = [r.name for r in results if r.status == "skipped"]
    statements = sum(r.statement_dml for r in results)
    nulls = sum(n for r in results for kinds in r.nulls.values() for n in kinds.values())
    parts = [f"{written} tables written", f"{dropped} dropped"]
    if skipped:
        parts.append(f"{len(skipped)} SKIPPED ({', '.join(skipped)})")
    if statements:
        parts.append(f"{statements} statement-format DML not applied")
    if nulls:
        parts.append(f"{nulls} values made NULL")
    return "[pipeline] " + ", ".join(parts) + ("; see report.json" if len(parts) > 2 else "")


def table_line(result: TableResult) -> str:
    """A table's line on stdout: ``name<TAB>state`` and what the report counts for it."""
    if result.status == "skipped":
        state = f"skipped: {result.reason}"
    elif result.status == "dropped":
        state = "dropped"
    else:
        state = f"{result.rows} rows"
    extra = []
    if result.statement_dml:
        extra.append(f"{result.statement_dml} statement-format DML not applied")
    for column, kinds in sorted(result.nulls.items()):
        extra += [f"{n} {kind} {column} made NULL" for kind, n in sorted(kinds.items()) if n]
    extra += result.notes
    return f"{result.name}\t{state}" + (f" ({'; '.join(extra)})" if extra else "")


def report_json(batch_id: int, results: Iterable[TableResult]) -> dict[str, Any]:
    """``OUT/report.json``: per table its status, rows, reason, statement DML and NULLs."""
    return {
        "batch_id": batch_id,
        "tables": {
            r.name: {
                "status": r.status,
                "rows": r.rows,
                "reason": r.reason,
                "statement_dml": r.statement_dml,
                "nulls": {c: dict(k) for c, k in sorted(r.nulls.items())},
                "notes": list(r.notes),
            }
            for r in results
        },
    }
