"""``python -m fakemaster pcap FILE``: the dissected conversation of a capture.

One line per MySQL packet (events described like ``dump``), or with ``--json`` one JSON object
per packet (events in the JSON form of docs/json-form.md). The CLI registers it with
``add_parser(subparsers)``; scapy is imported only when the command runs. (The scapy layers of
the protocol's COM_* commands are in ``commands.py``.)
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, TextIO

from fakemaster.cli.options import add_port_option

__all__ = ["add_parser", "run"]


def add_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "pcap",
        help="dissect a capture of replication traffic (needs fakemaster[scapy])",
        description=(
            "Print the MySQL packets of a capture file's replication connections, one line per "
            "packet, binlog events decoded; --json prints one JSON object per packet. Bytes "
            "missing from the capture or not dissected are reported on stderr (exit status 1)."
        ),
    )
    parser.add_argument("file", type=Path, metavar="FILE", help="a pcap file")
    parser.add_argument("--json", action="store_true", help="one JSON object per packet")
    add_port_option(
        parser,
        default=None,
        help="the server's TCP port (default: the destination port of the first SYN)",
    )
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace, out: TextIO | None = None) -> int:
    """Print the capture; exit status 1 (one ``error:`` line) when it cannot be read, or when
    some of its bytes were missing or could not be dissected (a ``warning:`` line for each)."""
    out = out if out is not None else sys.stdout
    try:
        from fakemaster.scapy.pcap import dissect_pcap
        from fakemaster.vocabulary.context import BinlogContext
    except ImportError as exc:
        print(f"error: the pcap command needs scapy 2.8 or later ({exc})", file=sys.stderr)
        return 1
    try:
        records = dissect_pcap(args.file, args.port)
    except (OSError, ValueError) as exc:  # scapy's Scapy_Exception is a plain Exception
        print(f"error: {args.file}: {exc}", file=sys.stderr)
        return 1
    except Exception as exc:  # noqa: BLE001 - a malformed capture file
        print(f"error: {args.file}: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    if records.truncated:
        print(
            f"warning: {args.file}: {records.truncated} frames were captured shorter than sent "
            "(snap length, or tcpdump on lo cutting 64 KiB segments): their connections "
            "cannot be reassembled past the cut",
            file=sys.stderr,
        )
    if not records.connections:
        where = f"port {args.port}" if args.port is not None else "a port (no SYN: give --port)"
        print(f"warning: {args.file}: no TCP connection to {where}", file=sys.stderr)
    contexts: dict[int, BinlogContext] = {}
    for record in records:
        if args.json:
            out.write(json.dumps(record.to_json()) + "\n")
            continue
        ctx = contexts.setdefault(record.connection, BinlogContext())
        if record.event is not None:
            ctx.observe(record.event)
        out.write(record.line(ctx) + "\n")
    for problem in records.problems:
        print(f"warning: {args.file}: {problem.line()}", file=sys.stderr)
    if records.problems:
        print(
            f"error: {args.file}: {len(records.problems)} byte runs of its "
            f"{records.connections} connection(s) missing or not dissected (see the warnings)",
            file=sys.stderr,
        )
        return 1
    return 0
