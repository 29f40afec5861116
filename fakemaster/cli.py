"""Command line: ``python -m fakemaster <command> ...`` (also the ``fakemaster`` script).

Commands are registered by small ``add_*_command(subparsers)`` functions listed in
``COMMAND_REGISTRARS``; each sets ``handler`` (a function of the parsed arguments returning the
exit status). Bad input (a corrupt binlog, a bad JSON line, an event that cannot be encoded)
gives one ``error: ...`` line on stderr and exit status 1, never a traceback.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, TextIO

from fakemaster.context import BinlogContext
from fakemaster.errors import FakemasterError
from fakemaster.events import Event

Subparsers = Any  # argparse._SubParsersAction, which typeshed keeps private
Handler = Callable[[argparse.Namespace], int]

EXIT_OK = 0
EXIT_ERROR = 1


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
    return BinlogContext(temporal_precisions=dict(args.temporal_precisions))


# --- dump ---------------------------------------------------------------------------------


def add_dump_command(subparsers: Subparsers) -> None:
    parser = subparsers.add_parser(
        "dump",
        help="list the events of binlog files",
        description=(
            "List the events of binlog files, like mariadb-binlog -v, or (--json) print one "
            "JSON object per event, the input of the build command."
        ),
    )
    parser.add_argument("files", nargs="+", metavar="FILE", type=Path, help="binlog file")
    parser.add_argument(
        "--json", action="store_true", help="one JSON object per line per event (see docs)"
    )
    parser.add_argument(
        "--start-position",
        type=int,
        default=0,
        metavar="N",
        help="list only events at file offsets >= N (earlier ones are still read)",
    )
    parser.add_argument(
        "--stop-position",
        type=int,
        default=None,
        metavar="N",
        help="stop at the first event at a file offset >= N",
    )
    parser.add_argument(
        "--no-verify-checksum",
        dest="verify_checksum",
        action="store_false",
        help="do not check the events' CRC32",
    )
    parser.add_argument(
        "--allow-unknown",
        action="store_true",
        help="keep event types outside the protocol's list as raw events instead of failing",
    )
    parser.add_argument("--hexdump", action="store_true", help="add each event's bytes in hex")
    add_temporal_precision_option(parser)
    parser.set_defaults(handler=run_dump)


def read_file_events(
    path: Path,
    *,
    verify_checksum: bool = True,
    allow_unknown: bool = False,
    ctx: BinlogContext | None = None,
) -> Iterator[tuple[int, bytes, Event]]:
    """``(offset, event bytes, event)`` for each event of a binlog file.

    The same reading as ``decoder.binlog_file.read_binlog``, keeping each event's bytes for
    the CRC and the hex dump of the listing.
    """
    from decoder.binlog_file import iter_raw_events
    from decoder.core import decode_event

    if ctx is None:
        ctx = BinlogContext()
    for offset, data in iter_raw_events(path):
        event = decode_event(
            data, ctx, offset=offset, verify_checksum=verify_checksum, allow_unknown=allow_unknown
        )
        yield offset, data, event


def json_line(obj: Any, stream: TextIO) -> str:
    """One JSON line: non-ASCII text as it is, unless the stream cannot encode it."""
    line = json.dumps(obj, ensure_ascii=False)
    try:
        line.encode(getattr(stream, "encoding", None) or "utf-8")
    except (UnicodeEncodeError, LookupError):
        line = json.dumps(obj)  # \u escapes keep lone surrogates and any text exactly
    return line


def run_dump(args: argparse.Namespace) -> int:
    from fakemaster.jsonform import event_to_json
    from fakemaster.listing import Lister

    out = sys.stdout
    for path in args.files:
        lister = Lister(hexdump=args.hexdump)
        try:
            for offset, data, event in read_file_events(
                path,
                verify_checksum=args.verify_checksum,
                allow_unknown=args.allow_unknown,
                ctx=context_for(args),
            ):
                if args.stop_position is not None and offset >= args.stop_position:
                    break
                if offset < args.start_position:
                    lister.observe(event)
                    continue
                if args.json:
                    out.write(json_line({"offset": offset, **event_to_json(event)}, out) + "\n")
                else:
                    out.write("\n".join(lister.lines(offset, event, data)) + "\n")
        except FakemasterError as exc:  # DecodeError, or JsonFormError for a value
            raise CommandError(f"{path}: {exc}") from None
        except BrokenPipeError:
            raise
        except OSError as exc:
            raise CommandError(f"{path}: {exc.strerror or exc}") from None
    return EXIT_OK


# --- build --------------------------------------------------------------------------------


def add_build_command(subparsers: Subparsers) -> None:
    parser = subparsers.add_parser(
        "build",
        help="write a binlog file from JSON lines",
        description=(
            "Write a binlog file from JSON lines as dump --json prints them (one event per "
            "line; the offset key is ignored). Without --fix-positions the events are encoded "
            "exactly as given, so dump --json then build gives back the same bytes."
        ),
    )
    parser.add_argument("events", metavar="EVENTS.jsonl", help="JSON lines file, or - for stdin")
    parser.add_argument("-o", "--output", required=True, type=Path, metavar="FILE")
    parser.add_argument(
        "--fix-positions",
        action="store_true",
        help="set each event's end_log_pos to its real end offset in the file",
    )
    add_temporal_precision_option(parser)
    parser.set_defaults(handler=run_build)


def _json_lines(source: str) -> Iterator[tuple[int, Any]]:
    stream = sys.stdin if source == "-" else open(source, encoding="utf-8")
    try:
        for number, line in enumerate(stream, 1):
            if not line.strip():
                continue
            try:
                yield number, json.loads(line)
            except json.JSONDecodeError as exc:
                raise CommandError(f"{source}:{number}: not JSON: {exc}") from None
    finally:
        if stream is not sys.stdin:
            stream.close()


def run_build(args: argparse.Namespace) -> int:
    from encoder.binlog_file import BinlogWriter
    from fakemaster.jsonform import TYPE_KEY, event_from_json

    output: Path = args.output
    try:
        with BinlogWriter(
            output, fix_positions=args.fix_positions, ctx=context_for(args)
        ) as writer:
            for number, obj in _json_lines(args.events):
                where = f"{args.events}:{number}"
                if isinstance(obj, dict) and isinstance(obj.get(TYPE_KEY), str):
                    where += f" ({obj[TYPE_KEY]})"
                try:
                    event = event_from_json(obj)
                except FakemasterError as exc:
                    raise CommandError(f"{where}: {exc}") from None
                try:
                    writer.write(event)
                except FakemasterError as exc:
                    raise CommandError(f"{where}: {exc}") from None
                except Exception as exc:  # noqa: BLE001 - a value the encoder could not pack
                    raise CommandError(f"{where}: cannot encode: {exc!r}") from None
    except CommandError:
        _remove_partial(output)
        raise
    except OSError as exc:
        _remove_partial(output)
        raise CommandError(f"{exc.filename or output}: {exc.strerror or exc}") from None
    return EXIT_OK


def _remove_partial(path: Path) -> None:
    try:
        path.unlink()
    except OSError:
        pass


# --- entry point --------------------------------------------------------------------------

COMMAND_REGISTRARS: list[Callable[[Subparsers], None]] = [add_dump_command, add_build_command]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="fakemaster", description="A fake MariaDB primary and byte-exact binlog codec."
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for register in COMMAND_REGISTRARS:
        register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status (argparse exits 2 on bad usage)."""
    args = build_parser().parse_args(argv)
    handler: Handler = args.handler
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
