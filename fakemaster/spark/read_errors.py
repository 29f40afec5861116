"""A binlog file that cannot be read, named with where, as one line the driver can find in the
error Spark raises (the task's Python traceback is inside it, as text)."""

from __future__ import annotations

import re

__all__ = ["BinlogReadError", "error_line"]

_PREFIX = "cannot read binlog file "
_FOUND = re.compile(re.escape(_PREFIX) + r"[^\n]*")


class BinlogReadError(Exception):
    """``cannot read binlog file PATH: ChecksumError: ... at offset N``."""

    def __init__(self, path: str, error: BaseException) -> None:
        text = next((line.strip() for line in str(error).splitlines() if line.strip()), "")
        offset = getattr(error, "offset", None)
        if isinstance(offset, int) and "offset" not in text:
            text += f" at offset {offset}"
        super().__init__(f"{_PREFIX}{path}: {type(error).__name__}: {text}")


def error_line(error: BaseException, limit: int = 400) -> str:
    """One line for ``error``: a :class:`BinlogReadError`'s, wherever in the (Spark) message
    it is, else the error's type and the first line of its message."""
    found = _FOUND.search(str(error))
    if found:
        return found.group(0).strip()
    text = next((line.strip() for line in str(error).splitlines() if line.strip()), "")
    line = f"{type(error).__name__}: {text}" if text else type(error).__name__
    return line if len(line) <= limit else line[: limit - 3] + "..."
