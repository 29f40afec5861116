"""``python -m fakemaster dump FILE...``: the events of binlog files, listed like
``mariadb-binlog -v`` or (``--json``) one JSON object per event, the input of ``build``."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from fakemaster.cli.common import (
    EXIT_OK,
    CommandError,
    Subparsers,
    add_temporal_precision_option,
    context_for,
    load_key_file,
)
from fakemaster.vocabulary.errors import FakemasterError

if TYPE_CHECKING:
    from fakemaster.vocabulary.context import BinlogContext
    from fakemaster.vocabulary.encryption import BinlogKeys
    from fakemaster.vocabulary.events import Event

__all__ = ["add_parser", "read_file_events", "run"]


def add_parser(subparsers: Subparsers) -> None:
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
    parser.add_argument(
        "--key-file",
        type=Path,
        metavar="FILE",
        help=(
            "file_key_management key file (<id>;<hex key> lines) to decrypt binlogs written "
            "with encrypt_binlog=ON (key id 1; AES_CBC or AES_CTR is found by itself)"
        ),
    )
    add_temporal_precision_option(parser)
    parser.set_defaults(handler=run)


def read_file_events(
    path: Path,
    *,
    verify_checksum: bool = True,
    allow_unknown: bool = False,
    ctx: BinlogContext | None = None,
    keys: BinlogKeys | None = None,
) -> Iterator[tuple[int, bytes, Event]]:
    """``(offset, event bytes, event)`` for each event of a binlog file.

    The same reading as ``decoder.binlog_file.read_binlog``, keeping each event's bytes for
    the CRC and the hex dump of the listing.
    """
    from decoder.binlog_file import iter_raw_events
    from decoder.core import decode_event
    from fakemaster.vocabulary.context import BinlogContext

    if ctx is None:
        ctx = BinlogContext()
    for offset, data in iter_raw_events(path, keys=keys):
        event = decode_event(
            data, ctx, offset=offset, verify_checksum=verify_checksum, allow_unknown=allow_unknown
        )
        yield offset, data, event


def json_line(obj: Any, stream: TextIO) -> str:
    """One JSON line: non-ASCII text as it is, unless the stream cannot encode it."""
    import json

    line = json.dumps(obj, ensure_ascii=False)
    try:
        line.encode(getattr(stream, "encoding", None) or "utf-8")
    except (UnicodeEncodeError, LookupError):
        line = json.dumps(obj)  # \u escapes keep lone surrogates and any text exactly
    return line


def run(args: argparse.Namespace) -> int:
    from fakemaster.forms.jsonform import event_to_json
    from fakemaster.forms.listing import Lister

    out = sys.stdout
    keys = load_key_file(args.key_file)
    for path in args.files:
        lister = Lister(hexdump=args.hexdump)
        try:
            for offset, data, event in read_file_events(
                path,
                verify_checksum=args.verify_checksum,
                allow_unknown=args.allow_unknown,
                ctx=context_for(args),
                keys=keys,
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
