"""Typed SQL values: what expressions evaluate to and user variables keep."""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal
from enum import Enum

from fakemaster.protocol.charsets import BINARY_COLLATION_ID

__all__ = ["SqlValue", "UKind", "format_double"]


class UKind(Enum):
    INT = "int"
    DECIMAL = "decimal"
    DOUBLE = "double"
    STRING = "string"


@dataclass(frozen=True, slots=True)
class SqlValue:
    """A typed SQL value (user variables keep these). ``value`` None is NULL; a STRING in the
    binary collation holds bytes."""

    kind: UKind
    value: int | Decimal | float | str | bytes | None
    unsigned: bool = False
    collation: int = BINARY_COLLATION_ID
    # DOUBLE shown with a fixed number of decimals (system variables: 6).
    decimals: int | None = None

    def text(self) -> bytes | None:
        value = self.value
        if value is None:
            return None
        if isinstance(value, bytes):
            return value
        if isinstance(value, float):
            if self.decimals is not None:
                return f"{value:.{self.decimals}f}".encode()
            return format_double(value).encode()
        return str(value).encode("utf-8", "surrogateescape")

    def as_number(self) -> int | Decimal | float | None:
        value = self.value
        if value is None or isinstance(value, int | Decimal | float):
            return value
        text = value.decode("latin-1") if isinstance(value, bytes) else value
        match = re.match(r"\s*[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?", text)
        return float(match.group(0)) if match else 0


def format_double(value: float) -> str:
    if value == int(value) and abs(value) < 1e15:
        return str(int(value))
    return f"{value:.15g}".replace("e+", "e")
