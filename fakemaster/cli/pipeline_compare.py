"""``python -m fakemaster pipeline compare OUT REFERENCE``: a pipeline's materialised tables
against a live database, a directory of ``mariadb --batch`` dumps or a scenario's oracle
(``fakemaster.spark.compare_sources``). One line per table (its verdict), the row diff under
it, a summary line; exit status 0 when every table is equal, 1 when one differs, 2 on a usage
error (a reference or output that cannot be read). Needs pyarrow, not Spark.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any, TextIO

__all__ = ["EXIT_DIFFERS", "EXIT_EQUAL", "EXIT_USAGE", "add_parser", "run"]

EXIT_EQUAL, EXIT_DIFFERS, EXIT_USAGE = 0, 1, 2


def add_parser(modes: Any) -> None:
    parser = modes.add_parser(
        "compare",
        help="compare the materialised tables with a database, dumps or a scenario's oracle",
        description=(
            "Compare OUT/tables (the Parquet tables pipeline batch/stream write) with a reference:"
            " a database URL (mariadb://USER:PASSWORD@HOST:PORT/DATABASE), a directory of"
            " `mariadb --batch` dumps (DATABASE.TABLE[.tsv] files), or a scenario (a built-in"
            " name or a TOML file). Exit status 0: equal, 1: differs, 2: usage error."
        ),
    )
    parser.add_argument("out", metavar="OUT", help="the pipeline's output directory")
    parser.add_argument(
        "reference", metavar="REFERENCE", help="a database URL, a dump directory or a scenario"
    )
    parser.add_argument(
        "--table",
        action="append",
        default=None,
        metavar="DATABASE.TABLE",
        help="compare only this table (repeatable; default: every table of either side)",
    )
    parser.add_argument(
        "--limit",
        type=int,
        default=20,
        metavar="N",
        help="rows shown per kind of difference and table (default: %(default)s)",
    )


def _in_scope(name: str, database: str | None, tables: list[str] | None) -> bool:
    if tables is not None:
        return name in tables
    return database is None or name.partition(".")[0] == database


def run(args: argparse.Namespace, err: TextIO | None = None, out: TextIO | None = None) -> int:
    err = err if err is not None else sys.stderr
    out = out if out is not None else sys.stdout
    try:
        import pyarrow  # type: ignore[import-untyped]  # noqa: F401 - the Parquet reader

        from fakemaster.spark.compare import (
            CompareError,
            TableVerdict,
            compare_table,
            missing_table,
        )
        from fakemaster.spark.compare_sources import load_reference, output_keys, read_output
    except ImportError as exc:
        print(f"error: pipeline compare needs pyarrow (fakemaster[spark]) ({exc})", file=err)
        return EXIT_USAGE
    if args.limit < 0:
        print("error: --limit must be 0 or more", file=err)
        return EXIT_USAGE
    try:
        output = read_output(args.out)
        reference, database = load_reference(args.reference)
    except CompareError as exc:
        print(f"error: {exc}", file=err)
        return EXIT_USAGE
    keys = output_keys(args.out)
    names = sorted(
        n for n in output.keys() | reference.keys() if _in_scope(n, database, args.table)
    )
    verdicts: list[TableVerdict] = []
    for name in names:
        ref, mine = reference.get(name), output.get(name)
        if ref is None or mine is None:
            verdicts.append(missing_table(name, ref, len(mine.rows) if mine else 0))
            continue
        verdicts.append(
            compare_table(
                ref, mine.columns, mine.rows, output_key=keys.get(name, ()), limit=args.limit
            )
        )
    for verdict in verdicts:
        print("\n".join(verdict.render()), file=out)
    differing = sum(1 for v in verdicts if not v.equal)
    print(
        f"compare: {len(verdicts)} tables, {len(verdicts) - differing} equal, {differing} differ",
        file=out,
    )
    return EXIT_DIFFERS if differing else EXIT_EQUAL
