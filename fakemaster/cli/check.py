"""``python -m fakemaster check``: the contract tests against any client.

Registered by :mod:`fakemaster.cli` through :func:`add_parser`; the contract machinery (servers,
scenarios) is imported only when the command runs.

    python -m fakemaster check --client "CMD {host} {port} {out}" [--list] [--only CASE]
        [--seed N] [--generated N] [--junit-xml FILE] [--timeout SECONDS] [--workdir DIR]

Exit status: 0 when every case passed, 1 when one failed (or on a usage error the command
finds, such as a pattern that matches no case), 2 for argparse's usage errors (README.md, "Exit
status").
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

__all__ = ["add_parser", "run"]

EXIT_PASSED = 0
EXIT_FAILED = 1


def add_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "check",
        help="contract tests: run a replication client against every scenario under faults",
        description=(
            "Serve each case (a built-in scenario clean and under its faults, and generated "
            "histories with generated fault plans) through a fault proxy, run the client, and "
            "judge what it wrote (JSON lines, docs/contract.md): nothing lost, duplicates only "
            "under at-least-once, per-key order, final tables equal to the oracle, caught up. "
            "Prints a table (case x verdict, with the first difference); exit status 1 when a "
            "case fails."
        ),
    )
    parser.add_argument(
        "--client",
        metavar="CMD",
        help='the client command, e.g. "python my_cdc.py {host} {port} {out}"; placeholders:'
        " {host} {port} {out} {user} {password} {snapshot} {first_file} {start_gtid} {end_file}"
        " {end_pos}"
        " {end_gtid} {server_id} (also in the environment as FAKEMASTER_HOST, ...)",
    )
    parser.add_argument("--list", action="store_true", help="print the cases, one per line")
    parser.add_argument(
        "--only",
        action="append",
        default=[],
        metavar="CASE",
        help="run only this case (a name from --list or a pattern such as 'compressed/*'); repeatable",
    )
    parser.add_argument(
        "--seed",
        type=int,
        default=0,
        metavar="N",
        help="the first seed of the generated cases (default 0)",
    )
    parser.add_argument(
        "--generated",
        type=int,
        default=None,
        metavar="N",
        help="how many generated cases (default 4)",
    )
    parser.add_argument("--junit-xml", metavar="FILE", help="write JUnit XML here")
    parser.add_argument(
        "--timeout",
        type=float,
        default=None,
        metavar="SECONDS",
        help="seconds a client may take to catch up in one case (default 60)",
    )
    parser.add_argument(
        "--workdir",
        metavar="DIR",
        help="keep each case's snapshot and the client's output here (default: a temporary"
        " directory, removed)",
    )
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from fakemaster.contract.adapter import CommandAdapter
    from fakemaster.contract.cases import (
        DEFAULT_GENERATED,
        builtin_cases,
        generated_cases,
        select_cases,
    )
    from fakemaster.contract.report import table, write_junit_xml
    from fakemaster.contract.runner import DEFAULT_TIMEOUT, CaseResult, run_case

    count = DEFAULT_GENERATED if args.generated is None else args.generated
    if count < 0:
        print("error: --generated is a number of cases >= 0", file=sys.stderr)
        return EXIT_FAILED
    cases = builtin_cases() + generated_cases(args.seed, count)
    try:
        cases = select_cases(cases, args.only)
    except ValueError as error:
        print(f"error: {error}", file=sys.stderr)
        return EXIT_FAILED
    if args.list:
        for case in cases:
            print(f"{case.name}\t{case.description}")
        return EXIT_PASSED
    if not args.client:
        print("error: --client CMD is required (or --list)", file=sys.stderr)
        return EXIT_FAILED
    try:
        adapter = CommandAdapter(args.client)
    except ValueError as error:
        print(f"error: {error}", file=sys.stderr)
        return EXIT_FAILED
    timeout = DEFAULT_TIMEOUT if args.timeout is None else args.timeout
    results: list[CaseResult] = []
    for case in cases:
        result = run_case(case, adapter, timeout=timeout, workdir=args.workdir)
        results.append(result)
        mark = "pass" if result.passed else "FAIL"
        print(f"[{len(results)}/{len(cases)}] {case.name}: {mark}", file=sys.stderr, flush=True)
    print(table(results, client=args.client))
    if args.junit_xml:
        write_junit_xml(args.junit_xml, results, client=args.client)
    return EXIT_PASSED if all(r.passed for r in results) else EXIT_FAILED
