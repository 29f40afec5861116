"""``python -m fakemaster build EVENTS.jsonl -o FILE``: a binlog file written from the JSON lines
``dump --json`` prints; a value its column cannot hold is an error and leaves no file behind."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from fakemaster.cli.common import (
    EXIT_OK,
    CommandError,
    Subparsers,
    add_temporal_precision_option,
    context_for,
)
from fakemaster.vocabulary.errors import FakemasterError

__all__ = ["add_parser", "run"]


def add_parser(subparsers: Subparsers) -> None:
    parser = subparsers.add_parser(
        "build",
        help="write a binlog file from JSON lines",
        description=(
            "Write a binlog file from JSON lines as dump --json prints them (one event per "
            "line; the offset key is ignored). Without --fix-positions the events are encoded "
            "exactly as given, so dump --json then build gives back the same bytes. A value "
            "its column cannot hold exactly is an error naming the event, column and value: "
            "nothing is rounded, truncated or wrapped, and no file is left behind."
        ),
    )
    parser.add_argument(
        "events", metavar="EVENTS", help="JSON lines file (dump --json's output), or - for stdin"
    )
    parser.add_argument(
        "-o", "--output", required=True, type=Path, metavar="FILE", help="the binlog file to write"
    )
    parser.add_argument(
        "--fix-positions",
        action="store_true",
        help="set each event's end_log_pos to its real end offset in the file",
    )
    add_temporal_precision_option(parser)
    parser.set_defaults(handler=run)


def _json_lines(source: str) -> Iterator[tuple[int, Any]]:
    from fakemaster.vocabulary.inputs import InputError, decode_text, loads_json

    stream = sys.stdin.buffer if source == "-" else open(source, "rb")
    try:
        for number, raw in enumerate(stream, 1):
            where = f"{source}:{number}"
            try:
                line = decode_text(raw, source=where)
                if not line.strip():
                    continue
                yield number, loads_json(line, source=where)
            except InputError as exc:  # the file's line first, the place within it after
                place = f" ({exc.where})" if exc.where else ""
                raise CommandError(f"{where}: {exc.reason}{place}") from None
    finally:
        if stream is not sys.stdin.buffer:
            stream.close()


def run(args: argparse.Namespace) -> int:
    from encoder.binlog_file import BinlogWriter
    from fakemaster.forms.jsonform import TYPE_KEY, event_from_json

    output: Path = args.output
    try:
        with BinlogWriter(
            output, fix_positions=args.fix_positions, ctx=context_for(args)
        ) as writer:
            for index, (number, obj) in enumerate(_json_lines(args.events), 1):
                where = f"{args.events}:{number}"
                if isinstance(obj, dict) and isinstance(obj.get(TYPE_KEY), str):
                    where += f" ({obj[TYPE_KEY]})"
                try:
                    event = event_from_json(obj)
                except FakemasterError as exc:
                    raise CommandError(f"{where}: {exc}") from None
                # The event's number and offset in the file it would have been written to.
                where += f", event {index} at offset {writer.offset}"
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
