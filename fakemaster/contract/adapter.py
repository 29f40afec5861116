"""The client adapter interface of the contract tests, and the JSON-lines form a client writes.

A client under test is reached through an :class:`Adapter`: given an :class:`Endpoint` (where
the fake master listens, behind the fault proxy, and what it serves) and the path of an output
file, it runs the client until the client has caught up (or gives up), and the client writes
what it reconstructed into that file. Two adapters cover every client:

* :class:`CommandAdapter`: a command line, ``"CMD {host} {port} {out}"``, in any language. The
  placeholders (see :data:`PLACEHOLDERS`) are replaced by the endpoint's values (each quoted
  for the shell's word splitting); the same values are in the command's environment as
  ``FAKEMASTER_`` and the placeholder's name in capitals (``FAKEMASTER_HOST``,
  ``FAKEMASTER_END_GTID``), with ``FAKEMASTER_RUN_ID`` (:mod:`fakemaster.contract.process`).
  The command must exit when it has caught up.
* :class:`CallableAdapter`: a Python callable ``fn(endpoint, out_path)``, run in this process.

The output file (docs/contract.md) is JSON lines: a header, then change lines and/or row lines::

    {"kind": "header", "client": "my-cdc", "guarantee": "exactly-once", "changes": true, "tables": true}
    {"kind": "change", "op": "insert", "table": "shop.orders", "gtid": "0-1-5", "row": 0,
     "after": {"id": "1", "note": "first"}}
    {"kind": "change", "op": "update", "table": "shop.orders", "gtid": "0-1-6", "row": 0,
     "before": {"id": "1", "note": "first"}, "after": {"id": "1", "note": "paid"}}
    {"kind": "change", "op": "delete", "table": "shop.orders", "gtid": "0-1-7", "row": 0,
     "before": {"id": "1"}}
    {"kind": "row", "table": "shop.orders", "values": {"id": "2", "note": "second"}}

Values are the oracle's canonical text (:mod:`scenarios.oracle`): a string as MariaDB's SELECT
prints the value, byte columns ``0x`` and upper-case hex, BIT columns their number, NULL as
``null``; a JSON integer is taken as its decimal text. An image may leave out only the columns
the binlog's image did not carry (what ``binlog_row_image`` MINIMAL or NOBLOB did not log).
``gtid`` and ``row`` (the index of the row change in its transaction, from 0, counting every row
of every rows event in binlog order) identify a change; ``file`` and ``pos`` may be given and are
not checked.

The initial tables (what a CDC client takes as its snapshot before it reads the binlog) are in a
snapshot file in the same form (``{"kind": "table", "table": ..., "create": "CREATE TABLE ..."}``
lines, then ``row`` lines, and a ``{"kind": "sql", "statements": [...]}`` line: SQL that makes a
MariaDB server hold those tables and rows), named by the ``{snapshot}`` placeholder.
"""

from __future__ import annotations

import json
import os
import shlex
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from fakemaster.contract.process import run_command
from fakemaster.vocabulary.errors import FakemasterError
from fakemaster.vocabulary.inputs import InputError, loads_json, read_text

__all__ = [
    "GUARANTEES",
    "PLACEHOLDERS",
    "Adapter",
    "AdapterRun",
    "CallableAdapter",
    "ClientChange",
    "ClientOutput",
    "CommandAdapter",
    "Endpoint",
    "OutputError",
    "OutputWriter",
    "Snapshot",
    "adapter_from_spec",
    "MAX_LINE",
    "MAX_OUTPUT",
    "parse_output",
    "parse_output_lines",
    "read_output",
    "read_snapshot",
]

EXACTLY_ONCE = "exactly-once"
AT_LEAST_ONCE = "at-least-once"
GUARANTEES = (EXACTLY_ONCE, AT_LEAST_ONCE)
OPS = ("insert", "update", "delete")
_IMAGES = {
    "insert": "an insert has an after image (no before)",
    "update": "an update has a before and an after image",
    "delete": "a delete has a before image (no after)",
}

# Placeholder -> what it stands for (the Endpoint field of the same name).
PLACEHOLDERS: Mapping[str, str] = {
    "host": "the host to connect to (the fault proxy in front of the fake master)",
    "port": "its port",
    "out": "the file the client writes (JSON lines, docs/contract.md)",
    "user": "a replication account's user name",
    "password": "its password",
    "snapshot": "the initial tables (DDL and rows) in the same JSON-lines form",
    "first_file": "the first binlog file served (start a file/pos dump there, at position 4)",
    "start_gtid": "the GTID position the snapshot was taken at (start a GTID dump there)",
    "end_file": "the binlog file the stream ends in",
    "end_pos": "the position the stream ends at (SHOW MASTER STATUS says the same)",
    "end_gtid": "the GTID position at the end (@@gtid_binlog_pos)",
    "server_id": "a server id for the client (one the scenario does not use)",
}


class OutputError(FakemasterError, ValueError):
    """A client's output that is not in the documented form; the message names the line."""


@dataclass(frozen=True, slots=True)
class Endpoint:
    """Where the client connects, and what the stream it gets holds."""

    host: str
    port: int
    user: str
    password: str
    snapshot: str
    first_file: str
    end_file: str
    end_pos: int
    end_gtid: str
    server_id: int = 1001
    start_gtid: str = ""

    def values(self, out: str) -> dict[str, str]:
        """Every placeholder's text, ``out`` included."""
        return {
            "host": self.host,
            "port": str(self.port),
            "out": out,
            "user": self.user,
            "password": self.password,
            "snapshot": self.snapshot,
            "first_file": self.first_file,
            "start_gtid": self.start_gtid,
            "end_file": self.end_file,
            "end_pos": str(self.end_pos),
            "end_gtid": self.end_gtid,
            "server_id": str(self.server_id),
        }


@dataclass(frozen=True, slots=True)
class ClientChange:
    """One row change as a client reported it (``line``: its line number in the output)."""

    op: str
    table: str
    gtid: str
    row: int
    before: Mapping[str, str | None] | None
    after: Mapping[str, str | None] | None
    line: int = 0
    file: str | None = None
    pos: int | None = None

    @property
    def ident(self) -> tuple[str, int]:
        return (self.gtid, self.row)


@dataclass(frozen=True, slots=True)
class ClientOutput:
    """What a client reconstructed: its change log and/or its final tables (None: not
    reported), under the delivery guarantee it declares."""

    client: str
    guarantee: str
    changes: tuple[ClientChange, ...] | None
    tables: Mapping[str, tuple[Mapping[str, str | None], ...]] | None


@dataclass(frozen=True, slots=True)
class Snapshot:
    """The initial tables: CREATE TABLE text and rows (canonical cells by column name), and
    the SQL that makes a MariaDB server hold them."""

    creates: Mapping[str, str]
    rows: Mapping[str, tuple[Mapping[str, str | None], ...]]
    sql: tuple[str, ...] = ()


def _cell(value: Any, where: str) -> str | None:
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    raise OutputError(f"{where}: a value is a string, an integer or null, not {value!r}")


def _image(value: Any, where: str) -> dict[str, str | None] | None:
    if value is None:
        return None
    if not isinstance(value, Mapping):
        raise OutputError(f"{where}: an image is an object of column -> value")
    return {str(name): _cell(item, f"{where}, column {name!r}") for name, item in value.items()}


def _lines(lines: Iterable[tuple[int, str]]) -> Iterable[tuple[int, dict[str, Any]]]:
    for number, line in lines:
        if not line.strip():
            continue
        try:
            item = loads_json(line, source=f"line {number}")
        except InputError as error:
            raise OutputError(f"line {number}: {error.reason}") from None
        if not isinstance(item, dict) or not isinstance(item.get("kind"), str):
            raise OutputError(f"line {number}: an object with a 'kind' is expected")
        yield number, item


def _text_lines(text: str) -> Iterable[tuple[int, str]]:
    return enumerate(text.split("\n"), 1)


def _file_lines(path: str | Path, limit: int, line_limit: int) -> Iterator[tuple[int, str]]:
    """The lines of a file, read one at a time: at most ``limit`` bytes in all (a bigger file
    is an OutputError before it is read) and ``line_limit`` a line, each UTF-8."""
    with open(path, "rb") as handle:
        size = os.fstat(handle.fileno()).st_size
        if size > limit:
            raise OutputError(f"the output is {size} bytes, more than the {limit} check reads")
        seen = 0
        for number, raw in enumerate(iter(lambda: handle.readline(line_limit + 1), b""), 1):
            seen += len(raw)
            if seen > limit:
                raise OutputError(f"the output is more than the {limit} bytes check reads")
            if len(raw) > line_limit:
                raise OutputError(f"line {number}: longer than the {line_limit} bytes check reads")
            try:
                yield number, raw.decode("utf-8")
            except UnicodeDecodeError as error:
                raise OutputError(
                    f"line {number}: not UTF-8 (byte 0x{raw[error.start]:02x} at column"
                    f" {error.start + 1})"
                ) from None


def parse_output(text: str) -> ClientOutput:
    """A client's output file (see the module docstring); OutputError names a bad line."""
    return parse_output_lines(_text_lines(text))


def parse_output_lines(lines: Iterable[tuple[int, str]]) -> ClientOutput:
    """:func:`parse_output` of numbered lines (read as they come)."""
    header: dict[str, Any] | None = None
    changes: list[ClientChange] = []
    tables: dict[str, list[Mapping[str, str | None]]] = {}
    for number, item in _lines(lines):
        where = f"line {number}"
        kind = item["kind"]
        if kind == "header":
            if header is not None:
                raise OutputError(f"{where}: a second header")
            header = item
            guarantee = item.get("guarantee", EXACTLY_ONCE)
            if guarantee not in GUARANTEES:
                raise OutputError(f"{where}: guarantee is one of {list(GUARANTEES)}")
        elif header is None:
            raise OutputError(f"{where}: the first line is the header")
        elif kind == "change":
            op = item.get("op")
            if op not in OPS:
                raise OutputError(f"{where}: op is one of {list(OPS)}, not {op!r}")
            table, gtid, row = item.get("table"), item.get("gtid"), item.get("row")
            if not isinstance(table, str) or not isinstance(gtid, str):
                raise OutputError(f"{where}: a change names its table and gtid")
            if not isinstance(row, int) or isinstance(row, bool) or row < 0:
                raise OutputError(f"{where}: row is the change's index in its transaction")
            before, after = _image(item.get("before"), where), _image(item.get("after"), where)
            if (op != "insert") != (before is not None) or (op != "delete") != (after is not None):
                raise OutputError(f"{where}: {_IMAGES[op]}")
            pos = item.get("pos")
            changes.append(
                ClientChange(
                    op,
                    table,
                    gtid,
                    row,
                    before,
                    after,
                    number,
                    item.get("file"),
                    pos if isinstance(pos, int) else None,
                )
            )
        elif kind == "row":
            table, values = item.get("table"), _image(item.get("values"), where)
            if not isinstance(table, str) or values is None:
                raise OutputError(f"{where}: a row names its table and its values")
            tables.setdefault(table, []).append(values)
        elif kind in ("table", "sql"):
            continue
        else:
            raise OutputError(f"{where}: unknown kind {kind!r}")
    if header is None:
        raise OutputError("the output is empty (no header line)")
    reports_changes = bool(header.get("changes", bool(changes)))
    reports_tables = bool(header.get("tables", bool(tables)))
    if not (reports_changes or reports_tables):
        raise OutputError("the header declares neither changes nor tables")
    return ClientOutput(
        str(header.get("client", "client")),
        str(header.get("guarantee", EXACTLY_ONCE)),
        tuple(changes) if reports_changes else None,
        {name: tuple(rows) for name, rows in tables.items()} if reports_tables else None,
    )


def _read(path: str | Path) -> str:
    try:
        return read_text(path)
    except InputError as error:
        raise OutputError(str(error)) from None


MAX_OUTPUT = 256 << 20  # bytes of a client's output check reads at most
MAX_LINE = 128 << 20  # bytes of one line (large_rows: an update of a 17 MiB row is 71 MB in hex)


def read_output(
    path: str | Path, *, limit: int = MAX_OUTPUT, line_limit: int = MAX_LINE
) -> ClientOutput:
    """A client's output file, read a line at a time; OutputError for a file of more than
    ``limit`` bytes, a line of more than ``line_limit``, one not UTF-8 or not in the form."""
    return parse_output_lines(_file_lines(path, limit, line_limit))


def read_snapshot(path: str | Path) -> Snapshot:
    """The snapshot file a case gives its client (``{snapshot}``)."""
    creates: dict[str, str] = {}
    rows: dict[str, list[Mapping[str, str | None]]] = {}
    sql: list[str] = []
    for number, item in _lines(_text_lines(_read(path))):
        if item["kind"] == "sql":
            sql += [str(statement) for statement in item.get("statements", [])]
        elif item["kind"] == "table":
            creates[str(item["table"])] = str(item["create"])
            rows.setdefault(str(item["table"]), [])
        elif item["kind"] == "row":
            values = _image(item.get("values"), f"line {number}")
            rows.setdefault(str(item["table"]), []).append(values or {})
    return Snapshot(creates, {name: tuple(found) for name, found in rows.items()}, tuple(sql))


class OutputWriter:
    """Writes the JSON-lines form (for adapters written in Python)::

    with OutputWriter(path, client="mine", guarantee="exactly-once") as out:
        out.change("insert", "db.t", "0-1-1", 0, after={"id": "1"})
        out.row("db.t", {"id": "1"})
    """

    def __init__(
        self,
        path: str | Path,
        *,
        client: str,
        guarantee: str = EXACTLY_ONCE,
        changes: bool = True,
        tables: bool = True,
    ) -> None:
        if guarantee not in GUARANTEES:
            raise ValueError(f"guarantee is one of {GUARANTEES}")
        self._handle = open(path, "w", encoding="utf-8")  # noqa: SIM115 - closed in close()
        self._write(
            {
                "kind": "header",
                "client": client,
                "guarantee": guarantee,
                "changes": changes,
                "tables": tables,
            }
        )

    def _write(self, item: Mapping[str, Any]) -> None:
        self._handle.write(json.dumps(item, ensure_ascii=False) + "\n")

    def change(
        self,
        op: str,
        table: str,
        gtid: str,
        row: int,
        *,
        before: Mapping[str, str | None] | None = None,
        after: Mapping[str, str | None] | None = None,
        file: str | None = None,
        pos: int | None = None,
    ) -> None:
        item: dict[str, Any] = {
            "kind": "change",
            "op": op,
            "table": table,
            "gtid": gtid,
            "row": row,
        }
        if before is not None:
            item["before"] = dict(before)
        if after is not None:
            item["after"] = dict(after)
        if file is not None:
            item["file"], item["pos"] = file, pos
        self._write(item)

    def row(self, table: str, values: Mapping[str, str | None]) -> None:
        self._write({"kind": "row", "table": table, "values": dict(values)})

    def close(self) -> None:
        self._handle.close()

    def __enter__(self) -> OutputWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


# --- adapters ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class AdapterRun:
    """How a client's run went: its exit status (None: it was stopped at the time limit),
    seconds from start to exit, the tail of what it printed on stderr, the line of it to show
    (the first error line, :func:`fakemaster.contract.process.error_line`), and why it did not
    start at all (``start_error``: a missing command, not executable)."""

    returncode: int | None
    seconds: float
    stderr: str = ""
    error_line: str = ""
    start_error: str = ""

    @property
    def timed_out(self) -> bool:
        return self.returncode is None


class Adapter(Protocol):
    """Runs one client against ``endpoint``; the client writes its output to ``out``."""

    name: str

    def run(self, endpoint: Endpoint, out: Path, timeout: float) -> AdapterRun: ...


_STDERR_TAIL = 4000


@dataclass
class CommandAdapter:
    """A client run as a command (``"CMD {host} {port} {out}"``, placeholders of
    :data:`PLACEHOLDERS`); stopped (SIGTERM, then SIGKILL) after ``timeout`` seconds."""

    command: str
    name: str = ""
    cwd: str | None = None
    env: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.words = shlex.split(self.command)
        if not self.words:
            raise ValueError("an empty client command")
        for word in self.words:
            try:
                word.format(**{name: "" for name in PLACEHOLDERS})
            except (KeyError, IndexError, ValueError) as error:
                raise ValueError(
                    f"client command {self.command!r}: unknown placeholder {error}"
                    f" (there are: {', '.join('{' + n + '}' for n in PLACEHOLDERS)})"
                ) from None
        if not self.name:
            self.name = Path(self.words[0]).name

    def argv(self, endpoint: Endpoint, out: Path) -> list[str]:
        values = endpoint.values(str(out))
        return [word.format(**values) for word in self.words]

    def run(self, endpoint: Endpoint, out: Path, timeout: float) -> AdapterRun:
        """Run the command (:func:`fakemaster.contract.process.run_command`: its own session,
        stopped at ``timeout`` with what it left behind); its stdout and stderr are kept beside
        ``out`` (``NAME.stdout``, ``NAME.stderr`` for ``NAME.out.jsonl``)."""
        environment = dict(os.environ)
        environment.update(self.env)
        environment.update(
            {
                f"FAKEMASTER_{name.upper()}": value
                for name, value in endpoint.values(str(out)).items()
            }
        )
        stem = out.name.removesuffix(".jsonl").removesuffix(".out")
        finished = run_command(
            self.argv(endpoint, out),
            timeout=timeout,
            env=environment,
            cwd=self.cwd,
            stdout_path=out.with_name(f"{stem}.stdout"),
            stderr_path=out.with_name(f"{stem}.stderr"),
            tail=_STDERR_TAIL,
        )
        return AdapterRun(
            finished.returncode,
            finished.seconds,
            finished.stderr,
            finished.error_line,
            finished.start_error,
        )


ClientFunction = Callable[[Endpoint, Path], object]


@dataclass
class CallableAdapter:
    """A client that is a Python callable ``fn(endpoint, out)``, run in this thread (it must
    return by itself: ``timeout`` is only compared with how long it took). An exception is
    the client's failure (exit status 1, the exception as its stderr)."""

    function: ClientFunction
    name: str = ""

    def __post_init__(self) -> None:
        if not self.name:
            self.name = getattr(self.function, "__name__", "client")

    def run(self, endpoint: Endpoint, out: Path, timeout: float) -> AdapterRun:
        start = time.monotonic()
        try:
            self.function(endpoint, out)
        except Exception as error:  # the client's failure, reported as its exit status
            text = f"{type(error).__name__}: {error}"
            return AdapterRun(1, time.monotonic() - start, text, text)
        seconds = time.monotonic() - start
        return AdapterRun(0 if seconds <= timeout else None, seconds)


def adapter_from_spec(spec: str | Sequence[str] | Adapter | ClientFunction) -> Adapter:
    """An adapter from a command line (a string or argv words), an adapter, or a callable."""
    if isinstance(spec, str):
        return CommandAdapter(spec)
    if isinstance(spec, Sequence):
        return CommandAdapter(shlex.join(spec))
    if hasattr(spec, "run") and hasattr(spec, "name"):
        return spec
    if callable(spec):
        return CallableAdapter(spec)
    raise TypeError(f"not a client: {spec!r}")
