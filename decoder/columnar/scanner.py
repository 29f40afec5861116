"""The walk over a rows event's row images done when it is fed: where each row starts, without
reading the values (the row decoder's walk, compiled per table shape and column-present bitmaps).
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Sequence
from typing import Any

from decoder.values import ColumnReader

__all__ = [
    "Scanner",
    "compile_scanner",
]


_from_bytes = int.from_bytes
# The row starts of a one-row event (read only, shared by those events' runs).
_ONE_ROW = (0,)


Scanner = Callable[[bytes, int, int], Sequence[int] | None]


def _scan_image(lines: list[str], readers: Sequence[ColumnReader], present: Sequence[int]) -> None:
    """Statements moving ``pos`` over one row image (its values are not read)."""
    null_bytes = (len(present) + 7) >> 3
    if not present:
        return
    if null_bytes <= 4:  # (indexing costs less than a slice and int.from_bytes)
        flags = " | ".join(
            f"data[pos + {k}] << {8 * k}" if k else "data[pos]" for k in range(null_bytes)
        )
        lines.append(f"        nulls = {flags}")
    else:
        lines.append(f"        nulls = _fb(data[pos:pos + {null_bytes}], 'little')")
    lines.append(f"        pos += {null_bytes}")

    def skip(indent: str, reader: ColumnReader, fixed: int = 0) -> list[str]:
        """``pos`` moved over ``fixed`` bytes then the column's value."""
        if reader.fmt:
            step = fixed + reader.size
            return [f"{indent}pos += {step}"] if step else []
        prefix = reader.size
        at = f"pos + {fixed}" if fixed else "pos"
        length = {
            1: f"data[{at}]",
            2: f"(data[{at}] | data[{at} + 1] << 8)",
            3: f"(data[{at}] | data[{at} + 1] << 8 | data[{at} + 2] << 16)",
        }.get(prefix, f"_u32(data, {at})[0]")
        return [f"{indent}pos += {fixed + prefix} + {length}"]

    lines.append(f"        if not nulls & {(1 << len(present)) - 1}:")
    fixed = 0
    body: list[str] = []
    for column in present:
        reader = readers[column]
        if reader.fmt:
            fixed += reader.size
            continue
        body += skip("            ", reader, fixed)  # (the fixed-size values before it too)
        fixed = 0
    if fixed:
        body.append(f"            pos += {fixed}")
    lines += body or ["            pass"]
    lines.append("        else:")
    for bit, column in enumerate(present):
        step = skip("                ", readers[column])
        if step:
            lines.append(f"            if not nulls & {1 << bit}:")
            lines += step
    lines.append("            pass")


def compile_scanner(
    readers: Sequence[ColumnReader], width: int, present: int, present_after: int | None
) -> Scanner:
    """A function ``(data, pos, end) -> image start positions`` in ``data`` (None if the rows
    do not end at ``end``): the row decoder's walk over the images without reading the
    values. One start per row; for an UPDATE (``present_after`` given) two, the before and
    the after image's. The first row is walked before the loop: an event of one row (not an
    UPDATE) gives the shared ``_ONE_ROW`` tuple, its start relative to ``pos``."""
    walk: list[str] = []
    columns = [c for c in range(width) if present >> c & 1]
    any_column = bool(columns)
    _scan_image(walk, readers, columns)
    first_walk = list(walk)
    if present_after is not None:
        columns = [c for c in range(width) if present_after >> c & 1]
        any_column = any_column or bool(columns)
        first_walk.append("        middle = pos")
        walk.append("        append(pos)")
        _scan_image(first_walk, readers, columns)
        _scan_image(walk, readers, columns)
    if not any_column:
        walk.append("        return None")
        first_walk.append("        return None")
    one, begun = ("_one", "[first]") if present_after is None else (
        "(first, middle)", "[first, middle]"
    )  # fmt: skip
    lines = [
        "def scan(data, pos, end):",
        "    if pos >= end:",
        "        return () if pos == end else None",
        "    first = pos",
        "    while True:  # the first row",
        *first_walk,
        "        break",
        "    if pos == end:",
        f"        return {one}",
        f"    starts = {begun}",
        "    append = starts.append",
        "    while pos < end:",
        "        append(pos)",
        *walk,
        "    return starts if pos == end else None",
    ]
    namespace: dict[str, Any] = {
        "_fb": _from_bytes,
        "_u32": struct.Struct("<I").unpack_from,
        "_one": _ONE_ROW,
    }
    exec(compile("\n".join(lines) + "\n", f"<rows scanner {width} columns>", "exec"), namespace)
    scanner: Scanner = namespace["scan"]
    return scanner
