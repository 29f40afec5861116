"""Reading input files that may be hostile or broken: bounded size, bounded nesting, UTF-8,
integers Python can convert, finite numbers; every failure an :class:`InputError` naming the
file and the place (never a ``RecursionError``, ``UnicodeDecodeError`` or ``ValueError``
traceback).

Every loader of a JSON or TOML file the project reads (TOML scenarios, fault plans, the JSON
form of events) goes through :func:`loads_json` / :func:`loads_toml` (or :func:`read_text`
then them), and checks numbers with :func:`finite_number`.
"""

from __future__ import annotations

import json
import math
import re
import sys
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from fakemaster.vocabulary.errors import InputError

__all__ = [
    "MAX_DEPTH",
    "MAX_INPUT_BYTES",
    "InputError",
    "decode_text",
    "finite_number",
    "loads_json",
    "loads_toml",
    "read_text",
]

# Deeper than any file the project writes or documents (an event's JSON form is < 8 deep), far
# below the interpreter's recursion limit, so that the code walking a loaded value cannot
# overflow the stack either.
MAX_DEPTH = 64
# 256 MiB: larger than any scenario, plan or JSON listing a test uses; bounds the memory a
# mistaken argument (a binlog, a disk image) can take before it is refused.
MAX_INPUT_BYTES = 256 * 1024 * 1024

_LONG_INTEGER = re.compile(r"\d{" + str((sys.get_int_max_str_digits() or 4300) + 1) + ",}")


def _line_column(text: str, index: int) -> str:
    line = text.count("\n", 0, index) + 1
    column = index - (text.rfind("\n", 0, index) + 1) + 1
    return f"line {line}, column {column}"


def decode_text(data: bytes, *, source: str) -> str:
    """``data`` as UTF-8 text; an InputError naming the first byte that is not."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise InputError(
            f"not UTF-8 text (byte 0x{data[exc.start]:02x})",
            source=source,
            where=f"line {line}, byte {exc.start}",
        ) from None


def read_text(path: str | Path, *, max_bytes: int = MAX_INPUT_BYTES) -> str:
    """The UTF-8 text of the file ``path``, refused past ``max_bytes``. OSError passes through
    (the caller names the file with its strerror)."""
    source = str(path)
    with open(path, "rb") as handle:
        data = handle.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise InputError(f"larger than {max_bytes} bytes: not an input file", source=source)
    return decode_text(data, source=source)


def _too_deep_at(text: str, max_depth: int) -> str:
    """Where brackets first nest past ``max_depth`` (quoted strings skipped, roughly)."""
    depth = 0
    quote = ""
    escaped = False
    for index, char in enumerate(text):
        if quote:
            if escaped:
                escaped = False
            elif char == "\\" and quote == '"':
                escaped = True
            elif char == quote:
                quote = ""
        elif char in "\"'":
            quote = char
        elif char in "[{":
            depth += 1
            if depth > max_depth:
                return _line_column(text, index)
        elif char in "]}":
            depth -= 1
    return ""


def _parse_failure(text: str, exc: BaseException, *, source: str, max_depth: int) -> InputError:
    """The InputError of a parser's RecursionError or ValueError that is not a syntax error."""
    if isinstance(exc, RecursionError):
        return InputError(
            f"nested more than {max_depth} deep", source=source, where=_too_deep_at(text, max_depth)
        )
    match = _LONG_INTEGER.search(text)
    if match is not None:
        digits = match.end() - match.start()
        return InputError(
            f"an integer of {digits} digits (at most {sys.get_int_max_str_digits()})",
            source=source,
            where=_line_column(text, match.start()),
        )
    return InputError(str(exc).splitlines()[0] if str(exc) else type(exc).__name__, source=source)


def _path_text(path: tuple[str | int, ...]) -> str:
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else part)
    if len(out) > 60:  # a hostile path is as long as its nesting: its start says enough
        out = f"{out[:40]}... ({len(path)} deep)"
    return out or "top level"


def _check_tree(data: Any, *, source: str, max_depth: int, allow_nonfinite: bool) -> None:
    """Walk ``data`` without recursion: nesting within ``max_depth``, floats finite."""
    pending: list[tuple[Any, tuple[str | int, ...]]] = [(data, ())]
    while pending:
        value, path = pending.pop()
        if len(path) > max_depth:
            raise InputError(
                f"nested more than {max_depth} deep", source=source, where=_path_text(path)
            )
        if isinstance(value, Mapping):
            pending.extend((item, (*path, str(key))) for key, item in value.items())
        elif isinstance(value, list):
            pending.extend((item, (*path, index)) for index, item in enumerate(value))
        elif isinstance(value, float) and not allow_nonfinite and not math.isfinite(value):
            raise InputError(
                f"{value!r} is not a finite number", source=source, where=_path_text(path)
            )


def _reject_constant(name: str) -> float:
    raise ValueError(f"{name} is not JSON")


def loads_json(
    text: str, *, source: str, max_depth: int = MAX_DEPTH, allow_nonfinite: bool = False
) -> Any:
    """The value of JSON ``text``: syntax errors with their line and column, nesting within
    ``max_depth``, NaN/Infinity refused unless ``allow_nonfinite``."""
    try:
        data = json.loads(text, parse_constant=None if allow_nonfinite else _reject_constant)
    except json.JSONDecodeError as exc:
        raise InputError(
            f"not JSON: {exc.msg}", source=source, where=f"line {exc.lineno}, column {exc.colno}"
        ) from None
    except (RecursionError, ValueError) as exc:
        if isinstance(exc, ValueError) and str(exc).endswith("is not JSON"):
            raise InputError(f"not JSON: {exc}", source=source) from None
        raise _parse_failure(text, exc, source=source, max_depth=max_depth) from None
    _check_tree(data, source=source, max_depth=max_depth, allow_nonfinite=allow_nonfinite)
    return data


def loads_toml(
    text: str, *, source: str, max_depth: int = MAX_DEPTH, allow_nonfinite: bool = False
) -> dict[str, Any]:
    """The table of TOML ``text``, with the checks of :func:`loads_json` (nan and inf refused
    unless ``allow_nonfinite``)."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:  # its message ends "(at line L, column C)"
        raise InputError(f"not TOML: {exc}", source=source) from None
    except (RecursionError, ValueError) as exc:
        raise _parse_failure(text, exc, source=source, max_depth=max_depth) from None
    _check_tree(data, source=source, max_depth=max_depth, allow_nonfinite=allow_nonfinite)
    return data


def finite_number(
    value: object, *, name: str, minimum: float | None = None, maximum: float | None = None
) -> float:
    """``value`` as a float if it is a finite int or float (not a bool) within the bounds;
    a ValueError naming ``name`` otherwise (callers re-raise it as their own typed error)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"{name} must be a number, not {value!r}")
    try:
        number = float(value)
    except OverflowError:
        raise ValueError(f"{name} = {value} is out of range") from None
    if not math.isfinite(number):
        raise ValueError(f"{name} must be a finite number, not {value!r}")
    if minimum is not None and number < minimum:
        raise ValueError(f"{name} must be at least {minimum:g}, not {value!r}")
    if maximum is not None and number > maximum:
        raise ValueError(f"{name} must be at most {maximum:g}, not {value!r}")
    return number
