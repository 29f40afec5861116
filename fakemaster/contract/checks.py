"""Jepsen/Elle-style verdicts on what a client reconstructed from a served history.

The history is known (a :class:`scenarios.Scenario` and its compilation), so each row change the
binlog carries has an identity: its transaction's GTID and its index in the transaction (``row``:
every row of every rows event, in binlog order). A client's change log (see
:mod:`fakemaster.contract.adapter`) is checked for

* **no loss**: every change served appears;
* **no duplicates**: no change appears twice, unless the client declares at-least-once delivery
  (then redeliveries are counted, not failed);
* **changes as served**: nothing that was not served, each change's operation, table and images
  as served: every column the binlog's image carried (``binlog_row_image``), with its value;
* **per-key order**: for every row key, the changes touching it come in commit order (first
  deliveries; an update that changes the key counts for both keys);

and its final tables for

* **final tables**: equal to the oracle's, as multisets of canonical rows;

and its run for

* **caught up**: the client exited on its own, successfully, within the time bound, after the
  faults (all in the stream's first part) were over.

Each check gives a :class:`Verdict`: passed, failed (with the first difference and a few more
lines), or not applicable (the client does not report that part).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field

from fakemaster.contract.adapter import AT_LEAST_ONCE, AdapterRun, ClientChange, ClientOutput
from fakemaster.contract.process import printable
from fakemaster.vocabulary.events import QueryEvent, XaPrepareEvent
from scenarios.changes import Change, Insert, Update
from scenarios.compiler import CompiledTransaction, compile_scenario, image_columns
from scenarios.history import Restart, Scenario, SetSettings, Settings, Transaction, XaEnd
from scenarios.oracle import Cell, canonical_rows, cell_text
from scenarios.schema import Table
from scenarios.state import Row

__all__ = [
    "CHECKS",
    "ExpectedChange",
    "Verdict",
    "check_changes",
    "check_run",
    "check_tables",
    "expected_changes",
    "judge",
]

CHECKS = (
    "caught up",
    "no loss",
    "no duplicates",
    "changes as served",
    "per-key order",
    "final tables",
)
_SHOWN = 8  # difference lines kept per verdict
_ABSENT = "<absent>"


@dataclass(frozen=True)
class Verdict:
    """One check's outcome: ``ok`` True (passed), False (failed) or None (not applicable)."""

    check: str
    ok: bool | None
    detail: str = ""
    lines: tuple[str, ...] = ()

    @property
    def failed(self) -> bool:
        return self.ok is False


@dataclass(frozen=True)
class ExpectedChange:
    """A row change as served: identity, operation, table, full images (canonical cells by
    column name), the keys it touches and its place in commit order."""

    gtid: str
    row: int
    op: str
    table: str
    before: Mapping[str, Cell] | None
    after: Mapping[str, Cell] | None
    keys: tuple[tuple[Cell, ...], ...]
    order: int
    # The columns the binlog's before and after images carry (binlog_row_image): a client may
    # leave out only the others.
    logged: tuple[frozenset[str], frozenset[str]] = (frozenset(), frozenset())

    @property
    def ident(self) -> tuple[str, int]:
        return (self.gtid, self.row)

    def describe(self) -> str:
        image = self.after if self.after is not None else self.before
        return f"{self.op} {self.table} {_show(image)} (gtid {self.gtid} row {self.row})"


def _show(image: Mapping[str, Cell] | None) -> str:
    if image is None:
        return "-"
    text = ", ".join(f"{k}={'NULL' if v is None else repr(v)}" for k, v in image.items())
    return "{" + (text if len(text) <= 160 else text[:157] + "...") + "}"


def _cells(table: Table, row: Row) -> dict[str, Cell]:
    return {c.name: cell_text(c, v) for c, v in zip(table.columns, row, strict=True)}


def _key(table: Table, row: Row) -> tuple[Cell, ...]:
    positions = table.key or tuple(range(table.width))
    return tuple(cell_text(table.columns[p], row[p]) for p in positions)


def _settings_by_transaction(scenario: Scenario) -> dict[int, Settings]:
    """The settings each transaction was written under, by ``id`` (SET and restarts change
    them between steps)."""
    settings = scenario.initial_settings
    found: dict[int, Settings] = {}
    for step in scenario.steps:
        if isinstance(step, SetSettings | Restart):
            settings = step.settings
        elif isinstance(step, Transaction):
            found[id(step)] = settings
    return found


def _logged(change: Change, settings: Settings | None) -> tuple[frozenset[str], frozenset[str]]:
    if settings is None:
        return (frozenset(), frozenset())
    names = [column.name for column in change.table.columns]
    before, after = image_columns(change, settings)
    return (frozenset(names[p] for p in before), frozenset(names[p] for p in after))


def expected_changes(
    scenario: Scenario, compiled: Sequence[CompiledTransaction] | None = None
) -> list[ExpectedChange]:
    """Every row change the compiled ``scenario`` serves, in the order in which its groups
    take effect: an XA transaction's rows at its XA COMMIT group (identified by that group's
    GTID, ``row`` from 0 in it), as a consumer receives them (:mod:`fakemaster.client.changes`);
    one rolled back, or still prepared at the end, changes nothing.

    A transaction's groups: one per statement that changes a non-transactional table (ending
    with a COMMIT query), then its own (ending with XID or XA_PREPARE) with the changes of its
    transactional tables; DDL statements change no row."""
    out: list[ExpectedChange] = []
    written_under = _settings_by_transaction(scenario)
    statements: dict[int, Iterator[Change]] = {}  # a transaction's non-transactional changes
    for item in compiled if compiled is not None else compile_scenario(scenario):
        transaction = item.transaction
        if item.gtid is None:
            continue
        if isinstance(transaction, XaEnd):
            if not transaction.commit:
                continue
            changes: Sequence[Change] = [
                change for change in transaction.transaction.changes if change.table.transactional
            ]
        elif not isinstance(transaction, Transaction) or isinstance(
            item.events[-1], XaPrepareEvent
        ):
            continue
        elif isinstance(item.events[-1], QueryEvent):
            later = statements.setdefault(
                id(transaction),
                iter(
                    [
                        change
                        for change in transaction.changes
                        if not change.table.transactional and change.writes_rows
                    ]
                ),
            )
            changes = [next(later)]
        else:
            changes = [change for change in transaction.changes if change.table.transactional]
        gtid = str(item.gtid)
        row = 0
        source = transaction.transaction if isinstance(transaction, XaEnd) else transaction
        settings = written_under.get(id(source))
        for change in changes:
            table = change.table
            name = table.qualified
            logged = _logged(change, settings)
            if isinstance(change, Insert):
                for values in change.rows:
                    out.append(
                        ExpectedChange(
                            gtid,
                            row,
                            "insert",
                            name,
                            None,
                            _cells(table, values),
                            (_key(table, values),),
                            len(out),
                            logged,
                        )
                    )
                    row += 1
            elif isinstance(change, Update):
                if change.changes_nothing:
                    continue
                keys = tuple(dict.fromkeys((_key(table, change.before), _key(table, change.after))))
                out.append(
                    ExpectedChange(
                        gtid,
                        row,
                        "update",
                        name,
                        _cells(table, change.before),
                        _cells(table, change.after),
                        keys,
                        len(out),
                        logged,
                    )
                )
                row += 1
            else:
                out.append(
                    ExpectedChange(
                        gtid,
                        row,
                        "delete",
                        name,
                        _cells(table, change.before),
                        None,
                        (_key(table, change.before),),
                        len(out),
                        logged,
                    )
                )
                row += 1
    return out


def _image_differences(
    what: str,
    served: Mapping[str, Cell] | None,
    got: Mapping[str, str | None] | None,
    logged: frozenset[str] = frozenset(),
) -> list[str]:
    """The differences of a client's image from the served one: values (NULL included), columns
    the table lacks, and columns the binlog image carried that the client left out."""
    if served is None or got is None:
        return (
            []
            if served is None and got is None
            else [f"{what} image {_show(got)}, served {_show(served)}"]
        )
    out = [
        f"{what} image lacks column {name!r}, served {served[name]!r}"
        for name in served
        if name in logged and name not in got
    ]
    for name, value in got.items():
        if name not in served:
            out.append(f"{what} image has column {name!r}, which the table lacks")
        elif served[name] != value:
            out.append(f"{what} {name}={value!r}, served {served[name]!r}")
    return out


def check_changes(expected: Sequence[ExpectedChange], output: ClientOutput) -> list[Verdict]:
    """The verdicts on a change log: no loss, no duplicates, changes as served, per-key order."""
    names = ("no loss", "no duplicates", "changes as served", "per-key order")
    if output.changes is None:
        return [Verdict(name, None, "the client reports no change log") for name in names]
    served = {change.ident: change for change in expected}
    got: list[ClientChange] = list(output.changes)
    counts = Counter(change.ident for change in got)
    verdicts = []

    lost = [change for change in expected if change.ident not in counts]
    if lost:
        verdicts.append(
            Verdict(
                "no loss",
                False,
                f"{len(lost)} of {len(expected)} changes never delivered, first: {lost[0].describe()}",
                tuple(change.describe() for change in lost[:_SHOWN]),
            )
        )
    else:
        verdicts.append(Verdict("no loss", True, f"{len(expected)} changes delivered"))

    repeated = [(ident, n) for ident, n in counts.items() if n > 1 and ident in served]
    if not repeated:
        verdicts.append(Verdict("no duplicates", True))
    else:
        lines = tuple(f"{served[i].describe()} delivered {n} times" for i, n in repeated[:_SHOWN])
        extra = sum(n - 1 for _, n in repeated)
        if output.guarantee == AT_LEAST_ONCE:
            verdicts.append(
                Verdict(
                    "no duplicates", True, f"{extra} redelivered (at-least-once declared)", lines
                )
            )
        else:
            verdicts.append(
                Verdict(
                    "no duplicates",
                    False,
                    f"{extra} duplicate deliveries under exactly-once, first: {lines[0]}",
                    lines,
                )
            )

    problems: list[str] = []
    for change in got:
        want = served.get(change.ident)
        where = f"line {change.line}"
        if want is None:
            problems.append(
                f"{where}: {change.op} {change.table} gtid {change.gtid} row"
                f" {change.row} was never served"
            )
            continue
        if (change.op, change.table) != (want.op, want.table):
            problems.append(f"{where}: {change.op} {change.table}, served {want.describe()}")
            continue
        problems += [
            f"{where}: {want.op} {want.table} (gtid {want.gtid} row {want.row}): {text}"
            for text in _image_differences("before", want.before, change.before, want.logged[0])
            + _image_differences("after", want.after, change.after, want.logged[1])
        ]
    if problems:
        verdicts.append(
            Verdict(
                "changes as served",
                False,
                f"{len(problems)} difference(s), first: {problems[0]}",
                tuple(problems[:_SHOWN]),
            )
        )
    else:
        verdicts.append(Verdict("changes as served", True))

    # Per key: the first deliveries, in the client's order, must be in commit order.
    last: dict[tuple[str, tuple[Cell, ...]], ExpectedChange] = {}
    seen: set[tuple[str, int]] = set()
    disorder: list[str] = []
    for change in got:
        want = served.get(change.ident)
        if want is None or change.ident in seen:
            continue
        seen.add(change.ident)
        for key in want.keys:
            before = last.get((want.table, key))
            if before is not None and before.order > want.order:
                disorder.append(
                    f"line {change.line}: {want.describe()} delivered after"
                    f" {before.describe()}, which commits later"
                )
            if before is None or before.order < want.order:
                last[(want.table, key)] = want
    if disorder:
        verdicts.append(
            Verdict(
                "per-key order",
                False,
                f"{len(disorder)} out of order, first: {disorder[0]}",
                tuple(disorder[:_SHOWN]),
            )
        )
    else:
        verdicts.append(Verdict("per-key order", True))
    return verdicts


@dataclass(frozen=True)
class _TableDifference:
    table: str
    missing: list[tuple[Cell, ...]] = field(default_factory=list)
    unexpected: list[tuple[Cell, ...]] = field(default_factory=list)


def check_tables(scenario: Scenario, output: ClientOutput) -> Verdict:
    """The final tables against the oracle's (multisets of canonical rows)."""
    if output.tables is None:
        return Verdict("final tables", None, "the client reports no tables")
    final = scenario.contents
    lines: list[str] = []
    first = ""
    for name, rows in sorted(output.tables.items()):
        if name not in scenario.tables:
            lines.append(f"{name}: a table the scenario does not have ({len(rows)} rows)")
    for name, table in scenario.tables.items():
        want = Counter(canonical_rows(table, final.rows.get(name, [])))
        got = Counter(
            tuple(values.get(column, _ABSENT) for column in table.column_names)
            for values in (output.tables or {}).get(name, ())
        )
        missing, unexpected = want - got, got - want
        if not (missing or unexpected):
            continue
        lines.append(
            f"{name}: {sum(missing.values())} row(s) missing, {sum(unexpected.values())} unexpected"
        )
        for sign, rows_found in (("-", missing), ("+", unexpected)):
            for cells in list(rows_found.elements())[:_SHOWN]:
                shown = _show(dict(zip(table.column_names, cells, strict=True)))
                lines.append(f"  {sign} {shown}")
                if not first:
                    first = f"{name}: {'missing' if sign == '-' else 'unexpected'} {shown}"
    if lines:
        return Verdict("final tables", False, first or lines[0], tuple(lines[: _SHOWN * 3]))
    count = sum(len(found) for found in final.rows.values())
    return Verdict("final tables", True, f"{len(scenario.tables)} tables, {count} rows")


def check_run(run: AdapterRun, timeout: float) -> Verdict:
    """Caught up: the client exited by itself with status 0 within ``timeout`` seconds. A
    failure shows the client's error line (the first line of its stderr naming an error, else
    its last line: :func:`fakemaster.contract.process.error_line`) and its last lines."""
    tail = tuple(printable(line) for line in run.stderr.splitlines() if line.strip())[-_SHOWN:]
    shown = run.error_line or (tail[-1] if tail else "")
    if run.start_error:
        return Verdict("caught up", False, run.start_error)
    if run.timed_out:
        return Verdict(
            "caught up",
            False,
            f"timeout: still running after {timeout:g}s (stopped)"
            + (f"; {shown}" if shown else ""),
            tail,
        )
    if run.returncode != 0:
        return Verdict(
            "caught up",
            False,
            f"exit status {run.returncode}" + (f": {shown}" if shown else ""),
            tail,
        )
    return Verdict("caught up", True, f"{run.seconds:.1f}s")


def judge(
    scenario: Scenario,
    output: ClientOutput | None,
    run: AdapterRun,
    timeout: float,
    *,
    output_problem: str = "",
    compiled: Sequence[CompiledTransaction] | None = None,
) -> list[Verdict]:
    """Every verdict of :data:`CHECKS` for one case."""
    verdicts = [check_run(run, timeout)]
    if output is None:
        reason = output_problem or "no output"
        return verdicts + [Verdict(name, False, reason) for name in CHECKS[1:]]
    verdicts += check_changes(expected_changes(scenario, compiled), output)
    verdicts.append(check_tables(scenario, output))
    return verdicts
