"""``python -m fakemaster check``: the contract tests against any client.

Registered by :mod:`fakemaster.cli` through :func:`add_parser`; the contract machinery (servers,
scenarios) is imported only when the command runs.

    python -m fakemaster check --client "CMD {host} {port} {out}" [--list] [--only CASE]
        [--seed N] [--generated N] [--junit-xml FILE] [--timeout SECONDS] [--workdir DIR]
        [--html DIR] [--pcap]
    python -m fakemaster check report RESULTS --html DIR

Exit status, as pytest's: 0 every case passed, 1 a case failed, 2 interrupted (Ctrl-C: the
cases run so far are reported), 3 an internal error (a bug of check's, with its traceback), 4 a
usage error (a missing --client, an unknown placeholder, a --workdir or --junit-xml that cannot
be written; argparse's own errors exit 2, as for
every fakemaster command), 5 no case selected (a pattern matching no case, --generated 0 and
only generated patterns).
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
import traceback
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from fakemaster.contract.adapter import CommandAdapter
    from fakemaster.contract.cases import Case

__all__ = ["add_parser", "run"]

EXIT_PASSED = 0
EXIT_FAILED = 1
EXIT_INTERRUPTED = 2
EXIT_INTERNAL = 3
EXIT_USAGE = 4
EXIT_NO_CASES = 5


def add_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "check",
        help="contract tests: run a replication client against every scenario under faults",
        description=(
            "Serve each case (a built-in scenario clean and under its faults, and generated "
            "histories with generated fault plans) through a fault proxy, run the client, and "
            "judge what it wrote (JSON lines, docs/contract.md): nothing lost, duplicates only "
            "under at-least-once, per-key order, final tables equal to the oracle, caught up. "
            "Prints a table (case x verdict, with the first difference); exit status as pytest's: 0 passed, 1 a "
            "case failed, 2 interrupted, 3 internal error, 4 usage error, 5 no case selected."
        ),
    )
    parser.add_argument(
        "--client",
        metavar="CMD",
        help='the client command, e.g. "python my_cdc.py {host} {port} {out}"; placeholders:'
        " {host} {port} {out} {user} {password} {snapshot} {first_file} {start_gtid} {end_file}"
        " {end_pos}"
        " {end_gtid} {server_id} (also in the environment as FAKEMASTER_ and the name in"
        " capitals: FAKEMASTER_HOST, FAKEMASTER_END_GTID; docs/contract.md lists them)",
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
        help="seconds a client may take to catch up in one case (default 60); then it is"
        " stopped, with whatever it started",
    )
    parser.add_argument(
        "--workdir",
        metavar="DIR",
        help="keep each case's snapshot, the client's output and its stdout and stderr here"
        " (default: a temporary directory, removed)",
    )
    parser.add_argument(
        "--html",
        metavar="DIR",
        help="write a report: DIR/index.html (the case matrix, each case's evidence and"
        " timeline) and DIR/results.json; the cases' files go to DIR/files unless --workdir",
    )
    parser.add_argument(
        "--pcap",
        action="store_true",
        help="keep a capture of each case's connections as the client received them"
        " (NAME.pcap in --workdir or DIR/files of --html; read it with fakemaster pcap)",
    )
    parser.set_defaults(handler=run)
    from fakemaster.cli.check_report import add_report_parser

    add_report_parser(parser)


def run(args: argparse.Namespace) -> int:
    from fakemaster.contract.adapter import CommandAdapter
    from fakemaster.contract.cases import DEFAULT_GENERATED, builtin_cases, generated_cases
    from fakemaster.contract.runner import DEFAULT_TIMEOUT

    count = DEFAULT_GENERATED if args.generated is None else args.generated
    if count < 0:
        print("error: --generated is a number of cases >= 0", file=sys.stderr)
        return EXIT_USAGE
    cases = builtin_cases() + generated_cases(args.seed, count)
    try:
        cases = _select(cases, args.only)
    except LookupError as error:
        print(f"error: {error.args[0]}", file=sys.stderr)
        return EXIT_NO_CASES
    if args.list:
        for case in cases:
            print(f"{case.name}\t{case.description}")
        return EXIT_PASSED
    if not args.client:
        print("error: --client CMD is required (or --list)", file=sys.stderr)
        return EXIT_USAGE
    try:
        adapter = CommandAdapter(args.client)
    except ValueError as error:
        print(f"error: {error}", file=sys.stderr)
        return EXIT_USAGE
    timeout = DEFAULT_TIMEOUT if args.timeout is None else args.timeout
    if not timeout > 0:
        print("error: --timeout is a number of seconds > 0", file=sys.stderr)
        return EXIT_USAGE
    from fakemaster.cli.check_report import html_workdir

    args.workdir = html_workdir(args)
    if args.pcap and not args.workdir:
        print("error: --pcap keeps its files in --workdir DIR or --html DIR", file=sys.stderr)
        return EXIT_USAGE
    for option, directory in (("--html", args.html), ("--workdir", args.workdir)):
        if directory:
            try:
                Path(directory).mkdir(parents=True, exist_ok=True)
            except OSError as error:
                print(f"error: {option} {directory}: {error.strerror or error}", file=sys.stderr)
                return EXIT_USAGE
    return _run_cases(cases, adapter, args, timeout)


def _select(cases: list[Case], patterns: list[str]) -> list[Case]:
    """The cases ``patterns`` select; LookupError (with the message) when none is left."""
    from fakemaster.contract.cases import select_cases

    try:
        selected = select_cases(cases, patterns)
    except ValueError as error:
        raise LookupError(str(error)) from None
    if not selected:
        raise LookupError("no case selected (see --list)")
    return selected


@contextmanager
def _interruptible() -> Iterator[None]:
    """SIGINT raises KeyboardInterrupt while the cases run, even in a process started with
    SIGINT ignored (a shell without job control starts background jobs so, and Python then
    installs no handler): ``kill -INT`` stops check as it stops ``serve`` and ``pipeline``."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def _run_cases(
    cases: list[Case], adapter: CommandAdapter, args: argparse.Namespace, timeout: float
) -> int:
    from fakemaster.contract.report import table, write_junit_xml
    from fakemaster.contract.runner import CaseResult, run_case

    results: list[CaseResult] = []
    status = EXIT_PASSED
    try:
        with _interruptible():
            for case in cases:
                result = run_case(
                    case, adapter, timeout=timeout, workdir=args.workdir, pcap=args.pcap
                )
                results.append(result)
                mark = "pass" if result.passed else "FAIL"
                print(
                    f"[{len(results)}/{len(cases)}] {case.name}: {mark}",
                    file=sys.stderr,
                    flush=True,
                )
    except KeyboardInterrupt:
        print(f"interrupted after {len(results)} of {len(cases)} cases", file=sys.stderr)
        status = EXIT_INTERRUPTED
    except Exception:  # a bug of check's own, not the client's: say so, as pytest does
        traceback.print_exc()
        print(f"internal error in case {len(results) + 1} of {len(cases)}", file=sys.stderr)
        status = EXIT_INTERNAL
    print(table(results, client=args.client))
    if args.junit_xml:
        try:  # its directory made, as pytest's --junit-xml does
            Path(args.junit_xml).parent.mkdir(parents=True, exist_ok=True)
            write_junit_xml(args.junit_xml, results, client=args.client)
        except OSError as error:
            print(
                f"error: --junit-xml {args.junit_xml}: {error.strerror or error}", file=sys.stderr
            )
            return EXIT_USAGE
    if args.html:
        from fakemaster.cli.check_report import write_html

        try:
            page = write_html(args.html, results, client=args.client, workdir=args.workdir)
        except OSError as error:
            print(f"error: --html {args.html}: {error.strerror or error}", file=sys.stderr)
            return EXIT_USAGE
        print(f"report: {page}", file=sys.stderr)
    if status == EXIT_PASSED and not all(r.passed for r in results):
        status = EXIT_FAILED
    return status
