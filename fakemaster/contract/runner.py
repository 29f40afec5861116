"""Serve one case and judge the client: the case's scenario (its binlog, and its tables over
SQL as a primary has them) served by a fake master in a thread, a fault proxy (the case's plan)
in front of it, the client run through its adapter against the proxy, its output read and
judged (:mod:`fakemaster.contract.checks`).
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from fakemaster.config.accounts import REPLICATION_PRIVILEGES, Account, Privilege
from fakemaster.contract.adapter import (
    Adapter,
    AdapterRun,
    ClientOutput,
    Endpoint,
    OutputError,
    read_output,
)
from fakemaster.contract.cases import Case
from fakemaster.contract.checks import Verdict, judge
from scenarios.history import Scenario

if TYPE_CHECKING:
    from fakemaster.config.server_config import ServerConfig

__all__ = [
    "DEFAULT_TIMEOUT",
    "AppliedFault",
    "CDC_PRIVILEGES",
    "PASSWORD",
    "USER",
    "CaseResult",
    "run_case",
    "run_cases",
    "scenario_config",
    "write_snapshot",
]

USER, PASSWORD = "repl", "repl-pw"
# The grants CDC tools document for their account (Debezium, Maxwell, ZongJi's forks:
# SELECT, RELOAD, SHOW DATABASES, REPLICATION SLAVE, REPLICATION CLIENT, which 10.11 reads as
# BINLOG MONITOR): a client may read the tables and their INFORMATION_SCHEMA.COLUMNS as it does
# on a real primary.
CDC_PRIVILEGES = (
    REPLICATION_PRIVILEGES | Privilege.SELECT | Privilege.RELOAD | Privilege.SHOW_DATABASES
)
DEFAULT_TIMEOUT = 60.0  # seconds a client may take to catch up (the "caught up" bound)


@dataclass(frozen=True, slots=True)
class AppliedFault:
    """A fault the proxy applied: in which dump session (0 first), which of the plan's faults
    (its index in ``case.plan.faults``; -1 if it is not one of them), at which byte of that
    session's output, and the engine's note."""

    session: int
    kind: str
    offset: int
    plan_index: int = -1
    note: str = ""


@dataclass(frozen=True)
class CaseResult:
    """A case's verdicts, the client's run, and what the fault proxy did."""

    case: Case
    verdicts: tuple[Verdict, ...]
    run: AdapterRun
    applied: tuple[str, ...] = ()
    sessions: int = 0
    server_errors: tuple[str, ...] = ()
    output: ClientOutput | None = field(default=None, compare=False, repr=False)
    # What ``applied`` says, as data (for the HTML report's timeline): one per fault applied.
    faults_applied: tuple[AppliedFault, ...] = field(default=(), compare=False, repr=False)

    @property
    def passed(self) -> bool:
        return not any(verdict.failed for verdict in self.verdicts)

    @property
    def first_failure(self) -> Verdict | None:
        return next((verdict for verdict in self.verdicts if verdict.failed), None)


def scenario_config(
    scenario: Scenario, *, user: str = USER, password: str = PASSWORD
) -> ServerConfig:
    """The ServerConfig of a fake master serving ``scenario``: the variables its settings
    describe (the binlog tells server id, version and checksum), its GTID domain, and one
    account, ``user``, with :data:`CDC_PRIVILEGES`."""
    from fakemaster.config.server_config import ServerConfig
    from scenarios.serving import scenario_variables

    variables = {
        name: value
        for name, value in scenario_variables(scenario.settings).items()
        if name not in ("server_id", "version", "binlog_checksum")
    }
    return ServerConfig(
        port=0,
        user=user,
        password=password,
        accounts=(Account(user=user, password=password, privileges=CDC_PRIVILEGES),),
        gtid_domain_id=scenario.settings.gtid_domain_id,
        variables=variables,
    )


def write_snapshot(scenario: Scenario, path: Path) -> Path:
    """The snapshot file of ``scenario``'s initial tables (see
    :mod:`fakemaster.contract.adapter`)."""
    from scenarios.oracle import canonical_rows
    from scenarios.script import setup_sql
    from scenarios.sql import SESSION_SETUP, create_table_sql

    lines: list[dict[str, object]] = []
    for name, table in scenario.initial_tables.items():  # the tables before the first step
        lines.append({"kind": "table", "table": name, "create": create_table_sql(table)})
        for cells in canonical_rows(table, scenario.initial.rows[name]):
            lines.append(
                {
                    "kind": "row",
                    "table": name,
                    "values": dict(zip(table.column_names, cells, strict=True)),
                }
            )
    lines.append({"kind": "sql", "statements": [*SESSION_SETUP, *setup_sql(scenario)]})
    path.write_text(
        "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines), encoding="utf-8"
    )
    return path


def run_case(
    case: Case,
    adapter: Adapter,
    *,
    timeout: float = DEFAULT_TIMEOUT,
    workdir: str | Path | None = None,
    pcap: bool = False,
) -> CaseResult:
    """Serve ``case`` and judge what ``adapter``'s client made of it. The client's files (its
    output, the snapshot) go to ``workdir`` (a temporary directory, removed, when None); with
    ``pcap``, also ``NAME.pcap``: every connection of the client as it received it (after the
    faults), recorded by a :class:`~fakemaster.scapy.capture.CaptureProxy` in front of the
    fault proxy."""
    if workdir is None:
        with tempfile.TemporaryDirectory(prefix="fakemaster-check-") as temporary:
            return run_case(case, adapter, timeout=timeout, workdir=temporary, pcap=pcap)
    from fakemaster.faults.proxy import BackgroundFaultProxy
    from fakemaster.server.master import BackgroundFakeMaster
    from scenarios.compiler import compile_scenario
    from scenarios.live import ScenarioStore

    directory = Path(workdir)
    directory.mkdir(parents=True, exist_ok=True)
    stem = case.name.replace("/", "--")
    scenario = case.build()
    compiled = compile_scenario(scenario)
    # Served whole, with the scenario's tables over SQL as a primary has them: clients that read
    # INFORMATION_SCHEMA.COLUMNS for a TABLE_MAP's columns (ZongJi's forks) find them.
    store = ScenarioStore(scenario)
    snapshot = write_snapshot(scenario, directory / f"{stem}.snapshot.jsonl")
    out = directory / f"{stem}.out.jsonl"
    out.unlink(missing_ok=True)
    first = store.first_file()
    assert first is not None
    end_file, end_pos = store.master_status()
    with (
        BackgroundFakeMaster(scenario_config(scenario), store) as master,
        BackgroundFaultProxy((master.host, master.port), case.plan) as proxy,
        _capture(proxy.host, proxy.port, directory / f"{stem}.pcap" if pcap else None) as front,
    ):
        endpoint = Endpoint(
            front[0],
            front[1],
            USER,
            PASSWORD,
            str(snapshot),
            first,
            end_file,
            end_pos,
            store.gtid_binlog_pos(),
            start_gtid=",".join(str(gtid) for gtid in scenario.gtid_state),
        )
        run = adapter.run(endpoint, out, timeout)
        applied = tuple(
            f"dump session {engine.session}: {item.fault.kind.value} at byte {item.offset}"
            + (f" ({item.note})" if item.note else "")
            for engine in proxy.engines
            for item in engine.applied
        )
        faults_applied = tuple(
            AppliedFault(
                engine.session or 0,
                item.fault.kind.value,
                item.offset,
                case.plan.faults.index(item.fault) if item.fault in case.plan.faults else -1,
                item.note,
            )
            for engine in proxy.engines
            for item in engine.applied
        )
        sessions = proxy.sessions
        errors = tuple(f"{type(e).__name__}: {e}" for e in (*master.errors, *proxy.errors))
    output: ClientOutput | None = None
    problem = ""
    if not out.exists():
        problem = "the client wrote no output"
    else:
        try:
            output = read_output(out)
        except OutputError as error:
            problem = f"unreadable output: {error}"
        except OSError as error:  # a directory, no permission: what the client left there
            problem = f"unreadable output: {error.strerror or error}"
    verdicts = judge(scenario, output, run, timeout, output_problem=problem, compiled=compiled)
    return CaseResult(case, tuple(verdicts), run, applied, sessions, errors, output, faults_applied)


@contextmanager
def _capture(host: str, port: int, path: Path | None) -> Iterator[tuple[str, int]]:
    """Where the client connects: a capture proxy recording to ``path`` in front of
    ``host``:``port``, or that address itself (``path`` None)."""
    if path is None:
        yield host, port
        return
    from fakemaster.scapy.capture import CaptureProxy

    capture = CaptureProxy(host, port, path)
    try:
        yield capture.host, capture.port
    finally:
        capture.close(timeout=5.0)


def run_cases(
    cases: Iterable[Case],
    adapter: Adapter,
    *,
    timeout: float = DEFAULT_TIMEOUT,
    workdir: str | Path | None = None,
    progress: Callable[[CaseResult], object] | None = None,
) -> list[CaseResult]:
    """:func:`run_case` for each case in turn (``progress`` called after each)."""
    results: list[CaseResult] = []
    for case in cases:
        result = run_case(case, adapter, timeout=timeout, workdir=workdir)
        results.append(result)
        if progress is not None:
            progress(result)
    return results
