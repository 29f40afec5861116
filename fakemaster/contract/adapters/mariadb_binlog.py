"""``mariadb-binlog --read-from-remote-server`` (MariaDB's own binlog reader) as a
contract-test client::

    python -m fakemaster.contract.adapters.mariadb_binlog HOST PORT OUT

It runs ``mariadb-binlog --verify-binlog-checksum -v --base64-output=DECODE-ROWS
--to-last-log`` from the first file (a non-blocking dump: the tool exits at the EOF once it
caught up; a damaged event is an error, not decoded) and decodes the row images
it prints as pseudo-SQL (``### INSERT INTO `db`.`t` ### SET ###   @1=...``): ``@N`` is the
Nth column of the snapshot's CREATE TABLE (the tool prints no names), integers take the
unsigned reading the tool gives in parentheses for an unsigned column, strings are unquoted
(``\\xNN`` escapes as bytes), byte columns become ``0x`` hex, ENUM indexes and SET bitmaps
become their members, BIT ``b'...'`` its number. Changes are taken at their group's ``Xid`` or
``COMMIT``; when the tool exits with an error (a cut connection), the adapter runs it again from
the file and position after the last committed group, the unfinished group discarded, so it
declares exactly-once. DDL is not followed (the snapshot's columns are used throughout).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from fakemaster.contract.adapter import OutputWriter, read_snapshot

__all__ = ["Decoded", "decode", "main", "value_text"]

Cells = dict[str, str | None]
MAX_RUNS = 30

_GTID = re.compile(r"\sGTID (\d+-\d+-\d+)")
_AT = re.compile(r"^# at (\d+)$")
_END = re.compile(r"end_log_pos (\d+)")
_ROTATE = re.compile(r"Rotate to (\S+)\s+pos: (\d+)")
_ROWS = re.compile(r"^### (INSERT INTO|UPDATE|DELETE FROM) `((?:[^`]|``)+)`\.`((?:[^`]|``)+)`$")
_CELL = re.compile(r"^###   @(\d+)=(.*)$")
_XA = re.compile(r"XA (PREPARE|COMMIT|ROLLBACK) (X'[0-9a-f]*',X'[0-9a-f]*',\d+)", re.I)
_OPS = {"INSERT INTO": "insert", "UPDATE": "update", "DELETE FROM": "delete"}
_INT_TYPES = frozenset({"tinyint", "smallint", "mediumint", "int", "bigint"})


def _unquote(text: str) -> bytes:
    """A string value as mariadb-binlog prints it as its bytes: between quotes, a byte below
    0x20 as ``\\xNN``, every other byte as it is (``my_b_write_quoted``: a quote or a backslash
    is not escaped, so a value holding the text ``\\x41`` cannot be told from ``A``)."""
    body = text[1:-1] if len(text) >= 2 and text[0] == text[-1] == "'" else text
    raw = body.encode("utf-8", "surrogateescape")
    return re.sub(rb"\\x([0-9a-f]{2})", lambda m: bytes([int(m.group(1), 16)]), raw)


def _timestamp(text: str, fsp: int) -> str:
    import datetime as dt

    whole, _, fraction = text.partition(".")
    moment = dt.datetime.fromtimestamp(int(whole), dt.UTC)
    shown = moment.strftime("%Y-%m-%d %H:%M:%S")
    return shown + ("." + fraction.ljust(fsp, "0")[:fsp] if fsp else "")


def value_text(text: str, column: Any) -> str | None:
    """One ``@N=`` value as the oracle's canonical text, by the snapshot's column."""
    text = re.sub(r" /\*.*\*/$", "", text.strip())
    if text == "NULL":
        return None
    kind = column.type
    if kind in _INT_TYPES:
        signed, _, unsigned = text.partition(" (")
        return unsigned.rstrip(")") if column.unsigned and unsigned else signed
    if kind == "year":  # the tool prints 1900 + the stored byte: the zero year as 1900
        return "0000" if text == "1900" else text
    if kind == "bit":
        return str(int(text[2:-1] or "0", 2)) if text.startswith("b'") else text
    if kind == "enum":
        index = int(text)
        return column.members[index - 1] if 0 < index <= len(column.members) else ""
    if kind == "set":
        bits = int(text[2:-1] or "0", 2) if text.startswith("b'") else int(text)
        return ",".join(m for i, m in enumerate(column.members) if bits >> i & 1)
    if kind in ("float", "double"):
        from scenarios.text import format_double, format_float

        return (format_float if kind == "float" else format_double)(float(text))
    if kind == "date":  # the tool prints a DATE as YYYY:MM:DD
        return text.strip("'").replace(":", "-")
    if kind == "timestamp":  # and a TIMESTAMP as seconds since the epoch
        return _timestamp(text, column.fsp)
    if text.startswith("'"):
        data = _unquote(text)
        if column.collation == "binary":
            if kind == "binary":
                data = data.ljust(column.length or 0, b"\0")
            return "0x" + data.hex().upper()
        from scenarios.values import python_codec

        return data.decode(python_codec(column.charset) or "utf-8", "replace")
    return text


def _add_cell(change: dict[str, Any], image: str, cell: re.Match[str], table: Any) -> None:
    """An ``@N=value`` line into the change's image, named by the snapshot's Nth column."""
    index = int(cell.group(1)) - 1
    if table is None or index >= len(table.columns):
        name, text = f"@{index + 1}", cell.group(2)
    else:
        column = table.columns[index]
        name, text = column.name, value_text(cell.group(2), column)
    change.setdefault(image, {})[name] = text


@dataclass
class Decoded:
    """What one run of the tool gave: the committed changes and where the last commit ended."""

    changes: list[dict[str, Any]] = field(default_factory=list)
    file: str = ""
    pos: int = 4
    # prepared XA transactions' changes by xid (as printed), kept from run to run
    prepared: dict[str, list[dict[str, Any]]] = field(default_factory=dict)


def decode(
    lines: Sequence[str],
    tables: Mapping[str, Any],
    file: str,
    pos: int,
    prepared: dict[str, list[dict[str, Any]]] | None = None,
    finished: bool = True,
) -> Decoded:
    """The committed changes in mariadb-binlog's ``-v`` output (``finished``: the tool exited
    with status 0, having read to the EOF; else the output stops at an error)."""
    got = Decoded(file=file, pos=pos, prepared={} if prepared is None else prepared)
    pending: list[dict[str, Any]] = []
    gtid, row, end, last = "", 0, pos, pos
    change: dict[str, Any] | None = None
    image = ""
    resent = False
    inside = False  # between a GTID event and its group's end
    for line in lines:
        if rotate := _ROTATE.search(line):
            if rotate.group(1) != file:
                file, end, last = rotate.group(1), int(rotate.group(2)), 0
                if not inside:
                    got.file, got.pos = file, end
            continue
        if line.startswith("#") and (found := _END.search(line)):
            end = int(found.group(1))
            # an event at or before one already read is a resend: its lines are skipped
            resent = 0 < end <= last
            last = max(last, end)
            if resent:
                continue
            if gtid_match := _GTID.search(line):
                gtid, row, pending = gtid_match.group(1), 0, []
                inside = " ddl" not in line
                if not inside:
                    got.file, got.pos = file, end
            elif "\tXid = " in line or "\tQuery\t" in line and "COMMIT" in line:
                got.changes += pending
                pending, inside = [], False
                got.file, got.pos = file, end
            continue
        if resent:
            continue
        if xa := _XA.match(line):
            what, xid = xa.group(1).upper(), xa.group(2)
            if what == "PREPARE":
                got.prepared[xid], pending = pending, []
            else:
                held = got.prepared.pop(xid, [])
                if what == "COMMIT":  # the changes take effect here, under this group's GTID
                    got.changes += [{**c, "gtid": gtid, "row": i} for i, c in enumerate(held)]
            got.file, got.pos = file, end
            inside = False
            continue
        if line.startswith("COMMIT"):
            got.changes += pending
            pending, inside = [], False
            got.file, got.pos = file, end
            continue
        if rows := _ROWS.match(line):
            name = f"{rows.group(2)}.{rows.group(3)}"
            change = {"op": _OPS[rows.group(1)], "table": name, "gtid": gtid, "row": row}
            change.update(file=file, pos=end)
            row += 1
            pending.append(change)
            image = ""
        elif line == "### SET":
            image = "after"
        elif line == "### WHERE":
            image = "before"
        elif change is not None and image and (cell := _CELL.match(line)):
            _add_cell(change, image, cell, tables.get(change["table"]))
    if finished and not inside:  # it read to the EOF, ending between transactions: here
        got.file, got.pos = file, end
    return got


def _run(args: argparse.Namespace, file: str, pos: int) -> tuple[int, list[str], str]:
    tool = shutil.which("mariadb-binlog") or "mariadb-binlog"
    words = [tool, "--no-defaults", "--read-from-remote-server", f"--host={args.host}"]
    words += [f"--port={args.port}", f"--user={args.user}", f"--password={args.password}"]
    words += ["--skip-ssl", "--verify-binlog-checksum", "-v", "--base64-output=DECODE-ROWS"]
    words += ["--to-last-log"]
    words += [f"--start-position={pos}", file]
    done = subprocess.run(words, capture_output=True, timeout=300)
    text = done.stdout.decode("utf-8", "surrogateescape")
    return done.returncode, text.splitlines(), done.stderr.decode("utf-8", "replace").strip()


def _apply(rows: list[Cells], change: Mapping[str, Any], defaults: Cells) -> None:
    before, after = change.get("before"), change.get("after")
    if before is not None:
        for i, row in enumerate(rows):
            if all(row.get(k) == v for k, v in before.items()):
                if after is None:
                    del rows[i]
                else:
                    rows[i] = {**row, **after}
                return
    if after is not None:  # an insert's columns a MINIMAL image left out took their defaults
        rows.append({**defaults, **after})


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="mariadb_binlog", description=__doc__.splitlines()[0])
    parser.add_argument("host")
    parser.add_argument("port")
    parser.add_argument("out")
    env = os.environ
    parser.add_argument("--user", default=env.get("FAKEMASTER_USER", "repl"))
    parser.add_argument("--password", default=env.get("FAKEMASTER_PASSWORD", ""))
    args = parser.parse_args(argv)
    from scenarios.create_table import parse_create_table

    snapshot = read_snapshot(env["FAKEMASTER_SNAPSHOT"])
    tables = {name: parse_create_table(sql) for name, sql in snapshot.creates.items()}
    end = (env["FAKEMASTER_END_FILE"], int(env["FAKEMASTER_END_POS"]))
    file, pos = env["FAKEMASTER_FIRST_FILE"], 4
    changes: list[dict[str, Any]] = []
    prepared: dict[str, list[dict[str, Any]]] = {}
    for run in range(1, MAX_RUNS + 1):
        status, lines, error = _run(args, file, pos)
        got = decode(lines, tables, file, pos, prepared, finished=status == 0)
        changes += got.changes
        file, pos = got.file, got.pos
        if status == 0 and (file, pos) >= end:
            break
        print(
            f"run {run}: exit status {status}: {error}; resuming at {file}:{pos}", file=sys.stderr
        )
    else:
        print(f"Error: gave up after {MAX_RUNS} runs at {file}:{pos}", file=sys.stderr)
        return 1
    from fakemaster.contract.adapters.python_mysql_replication import _defaults

    defaults = _defaults(snapshot.creates)
    final = {name: [dict(row) for row in rows] for name, rows in snapshot.rows.items()}
    with OutputWriter(args.out, client="mariadb-binlog") as out:
        for change in changes:
            out.change(
                change["op"],
                change["table"],
                change["gtid"],
                change["row"],
                before=change.get("before"),
                after=change.get("after"),
                file=change["file"],
                pos=change["pos"],
            )
            table = change["table"]
            _apply(final.setdefault(table, []), change, defaults.get(table, {}))
        for name, rows in final.items():
            for row in rows:
                out.row(name, row)
    return 0


if __name__ == "__main__":
    sys.exit(main())
