"""The sequence model against a real MariaDB 10.11: the rows NEXTVAL/SETVAL/RESTART log (the
golden binlog of tests/golden/table_kinds), the values NEXTVAL returns, the sequence's row after
every statement (a real server, for sequences of every direction, cache and cycle), its TABLE_MAP
and SHOW CREATE texts; broken CREATE SEQUENCE texts refused naming the clause."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from decoder.binlog_file import read_binlog
from fakemaster.vocabulary.events import TableMapEvent, WriteRowsEvent
from scenarios.compiler import table_map_event
from scenarios.errors import SchemaError
from scenarios.history import Settings
from scenarios.sequences import SequenceRunOut, SequenceState, parse_create_sequence
from tests.peers.mariadb import MariaDBServer

GOLDEN = Path(__file__).resolve().parent.parent / "golden" / "table_kinds"
EXPECTED: dict[str, Any] = json.loads((GOLDEN / "expected.json").read_text())


def _golden_events() -> list[Any]:
    return [event for _, event in read_binlog(str(GOLDEN / EXPECTED["binlog_files"][0]))]


def _logged(name: str) -> list[tuple[int, ...]]:
    maps: dict[int, str] = {}
    rows = []
    for event in _golden_events():
        if isinstance(event, TableMapEvent):
            maps[event.table_id] = event.table
        elif isinstance(event, WriteRowsEvent) and maps[event.table_id] == name:
            rows += list(event.rows)
    return rows


def _replay(name: str) -> tuple[list[int | None], list[tuple[int, ...]], SequenceState]:
    """The golden statements on the model: NEXTVAL/SETVAL answers and the rows logged."""
    state: SequenceState | None = None
    answers: list[int | None] = []
    logged: list[tuple[int, ...]] = []
    for step in EXPECTED["statements"]:
        sql: str = step["sql"]
        if sql.startswith(f"CREATE SEQUENCE {name}"):
            state = parse_create_sequence(sql, "kinds").start_state()
        elif state is None:
            continue
        elif sql == f"SELECT NEXTVAL({name})":
            value, state, row = state.nextval()
            answers.append(value)
            logged += [row] if row else []
        elif sql.startswith(f"SELECT SETVAL({name},"):
            number = int(sql.split(",")[1].strip(" )"))
            passed = state.setval(number)[0] is state
            state, row = state.setval(number)
            answers.append(None if passed else number)
            logged += [row] if row else []
        elif sql.startswith(f"ALTER SEQUENCE {name} RESTART WITH"):
            state = state.restart(int(sql.rsplit(" ", 1)[1]))
    assert state is not None
    return answers, logged, state


@pytest.mark.parametrize("name", ["s1", "s2"])
def test_the_rows_logged_and_the_values_are_the_servers(name: str) -> None:
    answers, logged, state = _replay(name)
    printed = [
        int(step["rows"][0][0])
        for step in EXPECTED["statements"]
        if step["sql"].startswith(("SELECT NEXTVAL(" + name, "SELECT SETVAL(" + name))
    ]
    assert answers == printed
    assert logged == _logged(name)
    assert [str(v) for v in state.row()] == EXPECTED["tables"][name]["rows"][0]


def test_table_map_and_show_create_are_the_servers() -> None:
    sequence = parse_create_sequence(
        next(s["sql"] for s in EXPECTED["statements"] if s["sql"].startswith("CREATE SEQUENCE s2")),
        "kinds",
    )
    assert sequence.show_create_sequence() == EXPECTED["tables"]["s2"]["create_sequence"]
    assert sequence.show_create_table() == EXPECTED["tables"]["s2"]["create"]
    golden = next(e for e in _golden_events() if isinstance(e, TableMapEvent) and e.table == "s2")
    ours = table_map_event(sequence.table(), golden.table_id, Settings(binlog_row_metadata="FULL"))
    for field in ("database", "table", "column_types", "column_meta", "nullable"):
        assert getattr(ours, field) == getattr(golden, field), field
    assert ours.optional_metadata == golden.optional_metadata


# Sequences of every direction, cache and cycle: (CREATE options, NEXTVAL/SETVAL steps).
CASES = [
    ("", ["n"] * 3),
    ("START WITH -5 INCREMENT BY -3 MINVALUE -12 MAXVALUE -5 CACHE 2 CYCLE", ["n"] * 7),
    ("NOCACHE", ["n", "n", "s:10", "n", "s:3", "n"]),
    ("MAXVALUE 3 CACHE 5", ["n", "n", "n", "n"]),
    ("INCREMENT BY 5 CACHE 3 MINVALUE 0 START 0", ["n", "s:7", "n", "n", "n", "n"]),
    ("START WITH 1 INCREMENT BY 5", ["n", "n", "s:7", "n", "s:30", "n"]),
    ("START WITH -5 INCREMENT BY -3 MINVALUE -100 MAXVALUE -5", ["n", "s:-9", "n", "s:-200", "n"]),
    ("MAXVALUE 20 INCREMENT BY 4 CACHE 2 CYCLE", ["n", "s:30", "n", "n"]),
]


@pytest.mark.mariadb
@pytest.mark.parametrize(("options", "steps"), CASES)
def test_each_statement_leaves_the_servers_row(
    server: MariaDBServer, options: str, steps: list[str]
) -> None:
    connection = server.connect()  # one session: a connection per statement costs seconds
    try:
        with connection.cursor() as cursor:

            def one(sql: str) -> tuple[Any, ...]:
                cursor.execute(sql)
                return tuple(cursor.fetchone())

            cursor.execute("CREATE DATABASE IF NOT EXISTS seqs")
            cursor.execute(f"CREATE OR REPLACE SEQUENCE seqs.q {options}")
            state = parse_create_sequence(f"CREATE SEQUENCE seqs.q {options}").start_state()
            assert state.row() == one("SELECT * FROM seqs.q")
            for step in steps:
                state = _step(one, state, step, options)
                assert state.row() == one("SELECT * FROM seqs.q"), (options, step)
    finally:
        connection.close()


def _step(one: Any, state: SequenceState, step: str, options: str) -> SequenceState:
    """One NEXTVAL ("n") or SETVAL ("s:N") on the server and the model: the same answer."""
    if step == "n":
        try:
            got = one("SELECT NEXTVAL(seqs.q)")[0]
        except Exception as error:  # noqa: BLE001 - the server's refusal
            assert "4084" in str(error)
            with pytest.raises(SequenceRunOut):
                state.nextval()
            return state
        value, state, _ = state.nextval()
        assert value == got, (options, step)
        return state
    number = int(step[2:])
    got = one(f"SELECT SETVAL(seqs.q, {number})")[0]
    after, _ = state.setval(number)
    assert (None if after is state else number) == got, (options, step)
    return after


@pytest.mark.parametrize(
    ("text", "named"),
    [
        ("CREATE SEQUENCE d.s INCREMENT BY 0", "INCREMENT BY 0"),
        ("CREATE SEQUENCE d.s START WITH 0", "ER_SEQUENCE_INVALID_DATA"),
        ("CREATE SEQUENCE d.s MINVALUE 5 MAXVALUE 5", "ER_SEQUENCE_INVALID_DATA"),
        ("CREATE SEQUENCE d.s CACHE x", "CACHE takes a number"),
        ("CREATE SEQUENCE d.s COMMENT 'x'", "COMMENT is not modelled"),
        ("CREATE TABLE d.s", "expected CREATE"),
        ("CREATE SEQUENCE d.s (a INT)", r"unexpected .\(a INT\). at 20"),
        ("CREATE SEQUENCE s", "no database"),
    ],
)
def test_a_create_sequence_the_model_cannot_take_names_the_clause(text: str, named: str) -> None:
    with pytest.raises(SchemaError, match=named):
        parse_create_sequence(text)
