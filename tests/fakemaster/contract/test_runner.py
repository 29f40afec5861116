"""run_case with in-process clients (CallableAdapter): the project's replica client run as a
function passes a case with a cut; a client that raises fails "caught up" with its exception;
the snapshot and endpoint it gets describe the served scenario."""

from __future__ import annotations

import json
from pathlib import Path

from fakemaster.contract.adapter import CallableAdapter, Endpoint, OutputWriter, read_snapshot
from fakemaster.contract.adapters.fakemaster_client import main as fakemaster_client
from fakemaster.contract.cases import builtin_cases, select_cases
from fakemaster.contract.runner import run_case


def case(name: str):  # type: ignore[no-untyped-def]
    (found,) = select_cases(builtin_cases(), [name])
    return found


def test_the_project_client_in_process_passes_a_case_with_a_cut(tmp_path: Path) -> None:
    def client(endpoint: Endpoint, out: Path) -> None:
        fakemaster_client(
            [
                endpoint.host,
                str(endpoint.port),
                str(out),
                "--snapshot",
                endpoint.snapshot,
                "--user",
                endpoint.user,
                "--password",
                endpoint.password,
                "--first-file",
                endpoint.first_file,
                "--end-file",
                endpoint.end_file,
                "--end-pos",
                str(endpoint.end_pos),
                "--end-gtid",
                endpoint.end_gtid,
            ]
        )

    result = run_case(
        case("primary_key_updates/cut-in-swap"), CallableAdapter(client), workdir=tmp_path
    )
    assert [(v.check, v.ok) for v in result.verdicts] == [
        ("caught up", True),
        ("no loss", True),
        ("no duplicates", True),
        ("changes as served", True),
        ("per-key order", True),
        ("final tables", True),
    ]
    assert result.sessions == 2 and len(result.applied) == 1


def test_what_a_client_gets(tmp_path: Path) -> None:
    seen: list[Endpoint] = []

    def client(endpoint: Endpoint, out: Path) -> None:
        seen.append(endpoint)
        with OutputWriter(out, client="empty", changes=False):
            pass

    result = run_case(case("multi_domain/clean"), CallableAdapter(client), workdir=tmp_path)
    (endpoint,) = seen
    assert (endpoint.user, endpoint.first_file) == ("repl", "mysql-bin.000001")
    assert endpoint.start_gtid == "0-1-100,2-9-7"  # the scenario's GTID state before it starts
    assert set(endpoint.end_gtid.split(",")) == {
        "0-1-104",
        "1-6-5",
        "2-9-11",
    }  # 4, 5 and 4 transactions
    snapshot = read_snapshot(endpoint.snapshot)
    assert list(snapshot.creates) == ["md.a", "md.b"]
    assert snapshot.rows == {"md.a": (), "md.b": ()}
    assert "CREATE DATABASE IF NOT EXISTS `md`" in snapshot.sql
    failed = {v.check: v.detail for v in result.verdicts if v.failed}
    assert failed == {"final tables": "md.a: missing {id='0', v='-1'}"}


def test_a_client_that_raises(tmp_path: Path) -> None:
    def client(endpoint: Endpoint, out: Path) -> None:
        raise ConnectionRefusedError("nobody there")

    result = run_case(case("compressed/clean"), CallableAdapter(client), workdir=tmp_path)
    verdicts = {v.check: v.detail for v in result.verdicts if v.failed}
    assert verdicts["caught up"] == "exit status 1: ConnectionRefusedError: nobody there"
    assert verdicts["no loss"] == "the client wrote no output"
    assert (
        json.loads((tmp_path / "compressed--clean.snapshot.jsonl").read_text().splitlines()[0])[
            "table"
        ]
        == "zip.t"
    )
