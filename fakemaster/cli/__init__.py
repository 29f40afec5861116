"""Command line: ``python -m fakemaster <command> ...`` (also the ``fakemaster`` script).

Each command is a module of its own with the same shape: ``add_parser(subparsers)`` adds the
command's parser and sets its ``handler``, ``run(args)``, which returns the exit status.
``COMMANDS`` names the modules; a command's module is imported only to build its parser, so
``serve`` loads none of the others'. Bad input (a corrupt binlog, a bad JSON line, an event that
cannot be encoded) gives one ``error: ...`` line on stderr and exit status 1, never a traceback;
a usage error exit status 2. Every parser is a :class:`~fakemaster.cli.options.CommandParser`
(no abbreviations, ``-V``/``--version``); options more than one command takes come from
fakemaster.cli.options.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence

from fakemaster.cli.collection_hold import hold_collection, resume_collection
from fakemaster.cli.common import EXIT_ERROR, EXIT_OK, CommandError, Handler
from fakemaster.cli.options import CommandParser

__all__ = ["COMMANDS", "build_parser", "main"]

# Each command's name and the module that adds its parser, in the order of the help. The
# commands of an optional extra (pcap, pipeline) load it only when they run.
COMMANDS: dict[str, str] = {
    "dump": "fakemaster.cli.dump",
    "build": "fakemaster.cli.build",
    "serve": "fakemaster.cli.serve",
    "scenarios": "fakemaster.cli.scenarios",
    "pcap": "fakemaster.cli.pcap",
    "check": "fakemaster.cli.check",
    "record": "fakemaster.cli.record",
    "pipeline": "fakemaster.cli.pipeline",
}


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The command line's parser. Given the arguments (``argv``) and a command name as the first
    one, only that command's parser is built: ``serve`` does not import and build the other
    commands' (issue #7, readiness); otherwise (no command, ``--help``, a wrong name) all of them."""
    parser = CommandParser(
        prog="fakemaster",
        description="A fake MariaDB primary and byte-exact binlog codec.",
        epilog="Exit status: 0 done, 1 an error (one 'error:' line; for check, a case "
        "failed), 2 a usage error; check also 3 (internal error), 4 (its own usage error) "
        "and 5 (no case selected), as pytest's.",
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    names = [argv[0]] if argv and argv[0] in COMMANDS else list(COMMANDS)
    for name in names:
        importlib.import_module(COMMANDS[name]).add_parser(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status (argparse exits 2 on bad usage)."""
    arguments = sys.argv[1:] if argv is None else list(argv)
    hold_collection()
    try:
        args = build_parser(arguments).parse_args(arguments)
        # serve resumes the collector itself once it listens (fakemaster.cli.collection_hold).
        if not getattr(args, "resumes_collection", False):
            resume_collection()
        return _run(args.handler, args)
    finally:
        resume_collection()


def _run(handler: Handler, args: argparse.Namespace) -> int:
    try:
        return handler(args)
    except CommandError as exc:
        sys.stdout.flush()
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_ERROR
    except BrokenPipeError:
        # The reader went away (dump | head): stop quietly, and keep Python from
        # complaining again when it flushes stdout at exit.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_OK
