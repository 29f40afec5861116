"""``pipeline compare``: the materialised tables of a pipeline's output against a reference, per
table a verdict and a row diff.

Both sides become *cells* per column before they are compared, by the kind of the materialised
column (its Parquet type, :func:`column_kind`):

- integers, DECIMAL: compared as numbers (``1.50`` equals ``1.5``);
- FLOAT (``float`` columns): at 6 significant digits, what MariaDB's ``SELECT`` shows of one;
  DOUBLE: as the number the text reads as;
- DATE, DATETIME/TIMESTAMP: the text without trailing fraction zeros (a column's fraction
  digits are a display width); a zero date of the reference (``0000-00-00...``) counts as NULL,
  which is what a typed Parquet column holds for it;
- byte columns (``binary``): the bytes, shown as ``0x`` and upper-case hex;
- everything else (text, TIME, ENUM, SET): the text.

A reference gives its cells as MariaDB's ``SELECT`` text (``str``), raw bytes, or ``None``
(:class:`ReferenceTable`); the Parquet side is read with pyarrow (no Spark). Rows are matched
by the table's primary key when one is known (the reference's, else the key the change log
last gave the table), as a multiset of rows otherwise. A diff shows values as
:func:`scenarios.oracle.sql_literal` renders them (NULL, numbers bare, bytes ``0x``-hex,
everything else quoted), ``-`` a row only in the reference, ``+`` one only in the output and
``~`` a key whose values differ (reference -> output).
"""

from __future__ import annotations

import datetime
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from typing import Any

from scenarios.oracle import sql_literal
from scenarios.schema import Column
from scenarios.text import format_double, format_float

__all__ = [
    "ColumnKind",
    "CompareError",
    "ReferenceTable",
    "TableVerdict",
    "column_kind",
    "compare_table",
    "missing_table",
    "output_cell",
    "render_value",
]

# What a cell is compared as (a column of the materialised table, by its Parquet type).
ColumnKind = str  # "int", "decimal", "float", "double", "date", "datetime", "bytes", "text"

# The SQL type whose literal rendering (scenarios.oracle.sql_literal) each kind takes.
_LITERAL_TYPES = {
    "int": "bigint",
    "decimal": "decimal",
    "float": "float",
    "double": "double",
    "bytes": "varbinary",
}

Raw = str | bytes | None


class CompareError(Exception):
    """A reference or an output that cannot be read (a usage error: exit status 2)."""


@dataclass
class ReferenceTable:
    """A table of the reference: its column names, key (column names; empty: none known) and
    rows (one cell per column, in ``columns`` order)."""

    name: str
    columns: list[str]
    rows: list[tuple[Raw, ...]]
    key: list[str] = field(default_factory=list)


@dataclass
class TableVerdict:
    """How one table compares: ``verdict`` is ``equal``, ``differs``, ``only in the reference``
    or ``only in the output``; ``lines`` the diff to show under the verdict line."""

    name: str
    verdict: str
    summary: str
    lines: list[str] = field(default_factory=list)

    @property
    def equal(self) -> bool:
        return self.verdict == "equal"

    def render(self) -> list[str]:
        return [f"{self.name}: {self.summary}", *self.lines]


def column_kind(arrow_type: Any) -> ColumnKind:
    """The kind of a materialised column by its pyarrow type."""
    import pyarrow as pa  # type: ignore[import-untyped]

    checks = (
        (pa.types.is_integer, "int"),
        (pa.types.is_decimal, "decimal"),
        (pa.types.is_float32, "float"),
        (pa.types.is_floating, "double"),
        (pa.types.is_date, "date"),
        (pa.types.is_timestamp, "datetime"),
        (lambda t: pa.types.is_binary(t) or pa.types.is_large_binary(t), "bytes"),
    )
    for check, kind in checks:
        if check(arrow_type):
            return kind
    return "text"


def _text(raw: str | bytes) -> str:
    return raw.decode("utf-8", "replace") if isinstance(raw, bytes) else raw


def _hex(raw: bytes) -> str:
    return "0x" + raw.hex().upper()


def _datetime_text(value: datetime.datetime) -> str:
    if value.tzinfo is not None:
        value = value.astimezone(datetime.UTC).replace(tzinfo=None)
    text = f"{value:%Y-%m-%d %H:%M:%S}"
    return text + (f".{value.microsecond:06d}".rstrip("0") if value.microsecond else "")


def output_cell(kind: ColumnKind, value: Any) -> str | None:
    """A Parquet value as its shown text (MariaDB's ``SELECT`` text, bytes as ``0x`` hex)."""
    if value is None:
        return None
    if kind == "bytes":
        return _hex(bytes(value))
    if kind == "float":
        return format_float(float(value))
    if kind == "double":
        return format_double(float(value))
    if kind == "decimal":
        return format(value, "f")
    if kind == "datetime":
        return _datetime_text(value)
    if kind == "date":
        return value.isoformat() if isinstance(value, datetime.date) else str(value)
    return str(value)


def reference_cell(kind: ColumnKind, raw: Raw) -> str | None:
    """A reference's cell as its shown text: bytes of a byte column as ``0x`` hex (text given
    for one is already that form, as the oracle writes it), other bytes decoded as UTF-8."""
    if raw is None:
        return None
    if kind == "bytes":
        return _hex(raw) if isinstance(raw, bytes) else raw
    return _text(raw)


def _fraction_trimmed(text: str) -> str:
    head, dot, fraction = text.partition(".")
    fraction = fraction.rstrip("0")
    return head + ("." + fraction if dot and fraction else "")


def compared(kind: ColumnKind, text: str | None) -> Any:
    """The value a shown text is compared as (see the module docstring); a text that is not
    a number of a numeric kind is compared as text (and so differs)."""
    if text is None:
        return None
    try:
        if kind == "int":
            return int(text)
        if kind == "decimal":
            return Decimal(text).normalize()
        if kind == "float":
            return f"{float(text):.6g}"
        if kind == "double":
            return float(text)
    except (ValueError, InvalidOperation):
        return ("text", text)
    if kind in ("date", "datetime"):
        if text.startswith("0000-00-00"):
            return None  # a zero date: NULL in a typed column
        return _fraction_trimmed(text.replace("T", " "))
    return text


def render_value(kind: ColumnKind, text: str | None) -> str:
    """A shown text as a diff writes it: :func:`scenarios.oracle.sql_literal` of its kind (a
    text that is no number in a numeric column quoted, as a string)."""
    if kind in ("int", "decimal", "float", "double") and isinstance(compared(kind, text), tuple):
        kind = "text"
    return sql_literal(Column("v", _LITERAL_TYPES.get(kind, "varchar")), text)


def _sort_key(values: Sequence[Any]) -> tuple[Any, ...]:
    return tuple((v is None, type(v).__name__, "" if v is None else v) for v in values)


@dataclass
class _Side:
    """One side's rows of a table over the compared columns: shown texts and compared values."""

    shown: list[tuple[str | None, ...]]
    values: list[tuple[Any, ...]]


def _row_text(names: Sequence[str], kinds: Sequence[ColumnKind], shown: Sequence[Any]) -> str:
    return ", ".join(
        f"{n}={render_value(k, s)}" for n, k, s in zip(names, kinds, shown, strict=True)
    )


def _limited(sign: str, rows: list[str], limit: int) -> list[str]:
    out = [f"  {sign} {row}" for row in rows[:limit]]
    if len(rows) > limit:
        out.append(f"  {sign} ... {len(rows) - limit} more")
    return out


def _multiset_diff(names: list[str], kinds: list[ColumnKind], ref: _Side, out: _Side) -> Any:
    counts = Counter(out.values)
    only_ref = []
    for shown, values in zip(ref.shown, ref.values, strict=True):
        if counts[values]:
            counts[values] -= 1
        else:
            only_ref.append((values, shown))
    only_out = []
    for shown, values in zip(out.shown, out.values, strict=True):
        if counts[values]:
            counts[values] -= 1
            only_out.append((values, shown))
    only_ref.sort(key=lambda pair: _sort_key(pair[0]))
    only_out.sort(key=lambda pair: _sort_key(pair[0]))
    return (
        [_row_text(names, kinds, s) for _, s in only_ref],
        [_row_text(names, kinds, s) for _, s in only_out],
        [],
    )


def _keyed(side: _Side, positions: list[int]) -> dict[tuple[Any, ...], int] | None:
    """Row index by key value; None when a key value repeats (compared as a multiset)."""
    index: dict[tuple[Any, ...], int] = {}
    for i, values in enumerate(side.values):
        key = tuple(values[p] for p in positions)
        if key in index:
            return None
        index[key] = i
    return index


def _keyed_diff(
    names: list[str], kinds: list[ColumnKind], ref: _Side, out: _Side, positions: list[int]
) -> Any:
    ref_index, out_index = _keyed(ref, positions), _keyed(out, positions)
    if ref_index is None or out_index is None:
        return _multiset_diff(names, kinds, ref, out)
    only_ref, only_out, changed = [], [], []
    for key in sorted(ref_index.keys() | out_index.keys(), key=_sort_key):
        r, o = ref_index.get(key), out_index.get(key)
        if o is None:
            assert r is not None
            only_ref.append(_row_text(names, kinds, ref.shown[r]))
        elif r is None:
            only_out.append(_row_text(names, kinds, out.shown[o]))
        elif ref.values[r] != out.values[o]:
            key_text = ", ".join(
                f"{names[p]}={render_value(kinds[p], out.shown[o][p])}" for p in positions
            )
            changes = [
                f"{names[c]}: {render_value(kinds[c], ref.shown[r][c])} -> "
                f"{render_value(kinds[c], out.shown[o][c])}"
                for c in range(len(names))
                if ref.values[r][c] != out.values[o][c]
            ]
            changed.append(f"{key_text}: {'; '.join(changes)}")
    return only_ref, only_out, changed


def missing_table(name: str, reference: ReferenceTable | None, output_rows: int) -> TableVerdict:
    """The verdict of a table one side lacks."""
    if reference is None:
        return TableVerdict(name, "only in the output", f"only in the output ({output_rows} rows)")
    rows = len(reference.rows)
    return TableVerdict(name, "only in the reference", f"only in the reference ({rows} rows)")


def compare_table(
    reference: ReferenceTable,
    output_columns: Mapping[str, ColumnKind],
    output_rows: Iterable[Mapping[str, Any]],
    *,
    output_key: Sequence[str] = (),
    limit: int = 20,
) -> TableVerdict:
    """The verdict and diff of one table present on both sides: the columns both have are
    compared (columns on one side only are named and make the table differ)."""
    names = [n for n in reference.columns if n in output_columns]
    kinds = [output_columns[n] for n in names]
    positions_ref = [reference.columns.index(n) for n in names]
    ref_shown = [
        tuple(reference_cell(k, row[p]) for k, p in zip(kinds, positions_ref, strict=True))
        for row in reference.rows
    ]
    out_shown = [
        tuple(output_cell(k, row.get(n)) for n, k in zip(names, kinds, strict=True))
        for row in output_rows
    ]
    ref = _Side(ref_shown, [tuple(map(compared, kinds, s)) for s in ref_shown])
    out = _Side(out_shown, [tuple(map(compared, kinds, s)) for s in out_shown])
    key = [n for n in (reference.key or list(output_key)) if n in names]
    if key and len(key) == len(reference.key or output_key):
        only_ref, only_out, changed = _keyed_diff(
            names, kinds, ref, out, [names.index(n) for n in key]
        )
    else:
        only_ref, only_out, changed = _multiset_diff(names, kinds, ref, out)
    lines = []
    parts = []
    ref_only_columns = [n for n in reference.columns if n not in output_columns]
    out_only_columns = [n for n in output_columns if n not in reference.columns]
    if ref_only_columns:
        parts.append(f"column(s) only in the reference: {', '.join(ref_only_columns)}")
    if out_only_columns:
        parts.append(f"column(s) only in the output: {', '.join(out_only_columns)}")
    if only_ref:
        parts.append(f"{len(only_ref)} row(s) only in the reference")
    if only_out:
        parts.append(f"{len(only_out)} row(s) only in the output")
    if changed:
        parts.append(f"{len(changed)} row(s) changed")
    if not parts:
        return TableVerdict(reference.name, "equal", f"equal ({len(ref.values)} rows)")
    lines += _limited("-", only_ref, limit) + _limited("+", only_out, limit)
    lines += _limited("~", changed, limit)
    return TableVerdict(reference.name, "differs", "differs: " + ", ".join(parts), lines)
