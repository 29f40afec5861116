"""What the commands share: the one-line error, the exit statuses, and the options and argument
types more than one command takes (``--temporal-precision``, ``--key-file``, ranges of numbers).

Kept light: importing it loads no codec; each helper imports what it needs when it runs.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fakemaster.vocabulary.errors import FakemasterError

if TYPE_CHECKING:
    from fakemaster.vocabulary.context import BinlogContext
    from fakemaster.vocabulary.encryption import BinlogKeys

__all__ = [
    "EXIT_ERROR",
    "EXIT_OK",
    "EXIT_USAGE",
    "CommandError",
    "Handler",
    "Subparsers",
    "add_temporal_precision_option",
    "context_for",
    "int_range",
    "load_key_file",
    "seconds",
]

Subparsers = Any  # argparse._SubParsersAction, which typeshed keeps private
Handler = Callable[[argparse.Namespace], int]

EXIT_OK = 0
EXIT_ERROR = 1
EXIT_USAGE = 2  # argparse's, for a command line it cannot parse


class CommandError(Exception):
    """An error to report as one line and exit status 1."""


def temporal_precision(text: str) -> tuple[tuple[str, str], tuple[int, ...]]:
    """``DB.TABLE=P1,P2,...``: one fractional-second precision per column of the table."""
    name, sep, values = text.partition("=")
    database, dot, table = name.partition(".")
    try:
        if not (sep and dot and database and table):
            raise ValueError
        precisions = tuple(int(value) for value in values.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected DB.TABLE=P1,P2,... (one precision per column), got {text!r}"
        ) from None
    return (database, table), precisions


def add_temporal_precision_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--temporal-precision",
        dest="temporal_precisions",
        action="append",
        type=temporal_precision,
        default=[],
        metavar="DB.TABLE=P1,P2,...",
        help=(
            "fractional-second precision of each column of a table whose TIME/DATETIME/"
            "TIMESTAMP columns use MariaDB 5.3's format (mysql56_temporal_format=OFF): the "
            "binlog does not record it; repeat for several tables"
        ),
    )


def context_for(args: argparse.Namespace) -> BinlogContext:
    """The decoding context ``--temporal-precision`` describes."""
    from fakemaster.vocabulary.context import BinlogContext

    return BinlogContext(temporal_precisions=dict(args.temporal_precisions))


def load_key_file(key_file: Path | None) -> BinlogKeys | None:
    """The keys of ``--key-file`` (None without one); CommandError naming the file if it cannot
    be read or holds no usable key."""
    if key_file is None:
        return None
    from fakemaster.vocabulary.encryption import BinlogKeys

    try:
        return BinlogKeys.from_key_file(key_file)
    except (FakemasterError, OSError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
        raise CommandError(f"{key_file}: {reason}") from None


def int_range(low: int, high: int) -> Callable[[str], int]:
    """An argument type: an integer from ``low`` to ``high``, both included."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"{value} is not in {low}..{high}")
        return value

    return parse


def seconds(text: str) -> float:
    """An argument type: a positive number of seconds."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"expected a positive number of seconds, got {text}")
    return value
