"""``python -m fakemaster scenarios [show NAME|FILE]``: the built-in scenarios listed, or one
scenario printed (settings, tables and their rows, each transaction's statements)."""

from __future__ import annotations

import argparse

from fakemaster.cli.common import EXIT_OK, CommandError, Subparsers

__all__ = ["add_parser", "run"]


def add_parser(subparsers: Subparsers) -> None:
    parser = subparsers.add_parser(
        "scenarios",
        # argparse would print "{show} ...", as if the action were required.
        usage="%(prog)s [-h] [-V] [show NAME|FILE]",
        help="list the built-in scenarios, or show one",
        description=(
            "List the built-in scenarios (serve --scenario NAME serves one), one per line: "
            "its name and what it holds. 'scenarios show NAME|FILE' prints a scenario: its "
            "settings, tables with their initial rows, and each transaction's statements."
        ),
    )
    actions = parser.add_subparsers(
        dest="scenarios_action", metavar="show", help="print one scenario (optional)"
    )
    show = actions.add_parser("show", help="print one scenario")
    show.add_argument("scenario", metavar="NAME|FILE", help="a built-in scenario or a TOML file")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from scenarios.errors import ScenarioError
    from scenarios.library import describe_library
    from scenarios.serving import find_scenario

    if args.scenarios_action is None:
        print(describe_library())
        return EXIT_OK
    try:
        print(find_scenario(args.scenario).describe())
    except ScenarioError as exc:
        raise CommandError(str(exc)) from None
    return EXIT_OK
