"""The project's own replica client (:mod:`fakemaster.client`) as a contract-test client::

    python -m fakemaster.contract.adapters.fakemaster_client HOST PORT OUT

A :class:`~fakemaster.client.BlockingReplica` (blocking dump, heartbeats every second, a
connection silent for 3 s counts as dead) starts from the first file (or, with ``--gtid``, by
GTID from the snapshot's GTID position, ``FAKEMASTER_START_GTID``) and runs until its position reaches the end the check names
(``FAKEMASTER_END_FILE``/``FAKEMASTER_END_POS``, or a GTID position covering
``FAKEMASTER_END_GTID``). It hands over whole committed groups only and resumes after a fault
from the position after the last one, so it declares exactly-once. Its change events (their
``(gtid, row_index)``) are written as the change log; the tables are the snapshot's with every
change applied. Values become the oracle's canonical text through the snapshot's CREATE TABLEs,
changed by the client's "ddl" change events as they come (CREATE/ALTER/RENAME/TRUNCATE/DROP
TABLE parsed by :func:`scenarios.create_table.parse_ddl`, rows carried over by column name); a
"ddl" change is not a row change and is not written to the change log. XA transactions' rows come
at their XA COMMIT (the client holds an XA PREPARE group's changes until then).

:class:`Flaw` is what the deliberately broken variants (``fakemaster.contract.adapters.broken``)
change, one thing each; this client has none.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from fakemaster.contract.adapter import OutputWriter, read_snapshot

if TYPE_CHECKING:
    from fakemaster.client import ChangeStream

__all__ = ["Flaw", "Reported", "main"]

Cells = dict[str, str | None]


@dataclass(frozen=True)
class Reported:
    """One change-log line as the client writes it."""

    op: str
    table: str
    gtid: str
    row: int
    before: Cells | None
    after: Cells | None
    file: str
    pos: int


Write = Callable[[Reported], None]


class Flaw:
    """What a deliberately broken variant of this client does differently; this base class is
    the correct client (every hook leaves things as they are)."""

    follows_ddl = True  # False: DDL change events are skipped (the tables stay as they were)

    def stream(self, stream: ChangeStream) -> ChangeStream:
        """The change stream the client reads (XA handling)."""
        return stream

    def images(
        self, op: str, before: Cells | None, after: Cells | None
    ) -> tuple[Cells | None, Cells | None]:
        """A change's images, as reported and as applied to the tables."""
        return before, after

    def deliver(self, change: Reported, write: Write) -> None:
        """Write ``change`` to the change log (or hold it, drop it, write it twice)."""
        write(change)

    def finish(self, write: Write) -> None:
        """The stream is over: write what is held."""


def _texts(tables: Mapping[str, Any], name: str, image: Mapping[str, Any] | None) -> Cells | None:
    from scenarios.oracle import cell_text
    from scenarios.values import convert

    if image is None:
        return None
    table = tables.get(name)
    if table is None:  # a table only a DDL the client did not follow made: values as they came
        return {k: None if v is None else str(v) for k, v in image.items()}
    out: Cells = {}
    for column_name, value in image.items():
        if column_name.startswith("@") and column_name not in table.column_names:
            # A TABLE_MAP without names (binlog_row_metadata NO_LOG or MINIMAL) says "@N": the
            # snapshot's N-th column, its unsigned integers read as their signed bits.
            column = table.columns[int(column_name[1:]) - 1]
            if column.unsigned and isinstance(value, int) and value < 0:
                value += 1 << column.bits_wide()
        elif column_name not in table.column_names:
            continue  # a column only a DDL the client did not follow added
        else:
            column = table.columns[table.position(column_name)]
        try:
            model = convert(column, value, table=name)
        except Exception:  # a value the model would refuse: shown as it came
            model = value
        out[column.name] = cell_text(column, model)
    return out


def _covers(gtids: Mapping[int, tuple[int, int]], wanted: Mapping[int, int]) -> bool:
    return bool(wanted) and all(gtids.get(d, (0, -1))[1] >= seq for d, seq in wanted.items())


def _arguments(argv: Sequence[str] | None) -> argparse.Namespace:
    env = os.environ.get
    parser = argparse.ArgumentParser(prog="fakemaster_client", description=__doc__.split("\n\n")[0])
    parser.add_argument("host")
    parser.add_argument("port", type=int)
    parser.add_argument("out")
    parser.add_argument("--snapshot", default=env("FAKEMASTER_SNAPSHOT"))
    parser.add_argument("--user", default=env("FAKEMASTER_USER", "root"))
    parser.add_argument("--password", default=env("FAKEMASTER_PASSWORD", ""))
    parser.add_argument("--first-file", default=env("FAKEMASTER_FIRST_FILE", ""))
    parser.add_argument("--end-file", default=env("FAKEMASTER_END_FILE", ""))
    parser.add_argument("--end-pos", type=int, default=int(env("FAKEMASTER_END_POS", "0")))
    parser.add_argument("--start-gtid", default=env("FAKEMASTER_START_GTID", ""))
    parser.add_argument("--end-gtid", default=env("FAKEMASTER_END_GTID", ""))
    parser.add_argument("--server-id", type=int, default=int(env("FAKEMASTER_SERVER_ID", "1001")))
    parser.add_argument("--gtid", action="store_true", help="dump by GTID (default: file/pos)")
    args = parser.parse_args(argv)
    if not args.snapshot:
        parser.error("--snapshot (or FAKEMASTER_SNAPSHOT) names the initial tables")
    return args


def main(argv: Sequence[str] | None = None, *, flaw: Flaw | None = None) -> int:
    from fakemaster.client import BlockingReplica, ClientConfig, Position
    from scenarios.create_table import parse_create_table, parse_ddl
    from scenarios.ddl import (
        AlterTable,
        CreateTable,
        DropTable,
        RenameTable,
        TruncateTable,
        altered,
        renamed,
    )
    from scenarios.oracle import cell_text
    from scenarios.schema import NO_DEFAULT, Table

    args = _arguments(argv)
    snapshot = read_snapshot(args.snapshot)
    tables = {name: parse_create_table(text) for name, text in snapshot.creates.items()}

    def column_defaults(table: Table) -> dict[str, str | None]:
        return {
            c.name: None if c.default is NO_DEFAULT else cell_text(c, c.default)
            for c in table.columns
        }

    defaults = {name: column_defaults(table) for name, table in tables.items()}
    rows = {name: [dict(row) for row in found] for name, found in snapshot.rows.items()}
    wanted: dict[int, int] = {}
    for part in args.end_gtid.split(","):
        if part.strip():
            domain, _, seq = part.strip().split("-")
            wanted[int(domain)] = int(seq)
    end = (args.end_file, args.end_pos)

    def done(position: Position) -> bool:
        return (position.file, position.position) == end or _covers(position.gtid_state, wanted)

    config = ClientConfig(
        user=args.user,
        password=args.password,
        server_id=args.server_id,
        gtid_mode=args.gtid,
        net_timeout=3.0,
        heartbeat_period=1.0,
    )
    if args.gtid:
        start = Position.from_gtids(args.start_gtid)
    else:
        start = Position(file=args.first_file, position=4)
    replica = BlockingReplica(args.host, args.port, config, start=start, until=done)
    flaw = flaw or Flaw()
    replica.change_stream = flaw.stream(replica.change_stream)

    def follow(statement_text: str, schema: str) -> None:
        """A DDL statement changes the tables, their defaults and rows (by column name)."""
        statement = parse_ddl(statement_text, schema or None, tables)  # LIKE: a known table
        if isinstance(statement, CreateTable):
            new = statement.table
            found: list[dict[str, str | None]] = []
        else:
            name = f"{statement.database}.{statement.name}"
            old = tables.pop(name)
            found = rows.pop(name, [])
            defaults.pop(name, None)
            if isinstance(statement, DropTable):
                return
            if isinstance(statement, TruncateTable):
                new, found = old, []
            elif isinstance(statement, RenameTable):
                new = renamed(old, statement.new_database, statement.new_name)
            else:
                assert isinstance(statement, AlterTable)
                new, _ = altered(old, statement.alterations)
                fresh = column_defaults(new)
                found = [
                    {
                        c.name: next(
                            (v for k, v in row.items() if k.lower() == c.name.lower()),
                            fresh[c.name],
                        )
                        for c in new.columns
                    }
                    for row in found
                ]
        tables[new.qualified] = new
        defaults[new.qualified] = column_defaults(new)
        rows[new.qualified] = found

    with OutputWriter(args.out, client="fakemaster.client") as out, replica:

        def write(item: Reported) -> None:
            out.change(
                item.op,
                item.table,
                item.gtid,
                item.row,
                before=item.before,
                after=item.after,
                file=item.file,
                pos=item.pos,
            )

        for change in replica.changes():
            if change.operation == "ddl":
                if flaw.follows_ddl:
                    follow(change.statement or "", change.schema)
                continue
            name = change.qualified
            before, after = flaw.images(
                change.operation,
                _texts(tables, name, change.before),
                _texts(tables, name, change.after),
            )
            flaw.deliver(
                Reported(
                    change.operation,
                    name,
                    change.gtid_text or "",
                    change.row_index,
                    before,
                    after,
                    change.file,
                    change.position,
                ),
                write,
            )
            found = rows.setdefault(name, [])
            if change.operation == "insert":
                found.append({**defaults.get(name, {}), **(after or {})})
                continue
            match = next(
                (r for r in found if all(r.get(k) == v for k, v in (before or {}).items())), None
            )
            if match is None:
                print(f"no row {before} in {name}", file=sys.stderr)
            elif change.operation == "update":
                match.update(after or {})
            else:
                found.remove(match)
        flaw.finish(write)
        for name, found in rows.items():
            for row in found:
                out.row(name, row)
    return 0


if __name__ == "__main__":
    sys.exit(main())
