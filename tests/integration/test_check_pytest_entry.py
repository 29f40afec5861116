"""The pytest entry point of the contract tests (fakemaster.contract.pytest): the same cases as
``fakemaster check``, parametrised, a known limit marked xfail (strict), and a broken client's
case failing the test with the report."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.peers.policy import require_module

require_module("pymysqlreplication", "pip install 'mysql-replication==1.0.17'")

from fakemaster.contract.cases import builtin_cases, select_cases  # noqa: E402
from fakemaster.contract.pytest import check_client, contract_cases  # noqa: E402

REPO = Path(__file__).resolve().parents[2]


def command(adapter: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        f"fakemaster.contract.adapters.{adapter}",
        "{host}",
        "{port}",
        "{out}",
    ]


@pytest.mark.parametrize(
    "case",
    contract_cases(
        only=["multi_domain/*", "compressed/clean", "generated/*"],
        seed=30,
        generated=2,
        xfail={"compressed/*": "python-mysql-replication cannot read compressed rows events"},
    ),
)
def test_python_mysql_replication_keeps_the_contract(case: object, tmp_path: Path) -> None:
    check_client(case, command("python_mysql_replication"), workdir=tmp_path)  # type: ignore[arg-type]


def test_the_parameters_are_the_cases_by_name() -> None:
    params = contract_cases(
        only=["compressed/*"], generated=0, xfail={"*/corrupt-crc": "a client that ignores CRCs"}
    )
    assert [p.id for p in params] == [
        "compressed/clean",
        "compressed/cut-in-compressed",
        "compressed/corrupt-crc",
    ]
    assert [[m.name for m in p.marks] for p in params] == [[], [], ["xfail"]]
    assert params[2].marks[0].kwargs == {"reason": "a client that ignores CRCs", "strict": True}


def test_a_broken_client_fails_the_test_with_the_report(tmp_path: Path) -> None:
    (case,) = select_cases(builtin_cases(), ["multi_domain/cut-before-tx"])
    with pytest.raises(pytest.fail.Exception) as caught:
        check_client(case, command("drops_after_reconnect"), workdir=tmp_path)
    text = str(caught.value)
    assert "multi_domain/cut-before-tx  FAIL     no loss: 1 of 26 changes never delivered" in text
    assert "--- multi_domain/cut-before-tx: " in text
