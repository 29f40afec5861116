"""The JSON-lines form a client writes: read back what OutputWriter wrote, and each kind of
mistake named by its line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fakemaster.contract.adapter import (
    CommandAdapter,
    Endpoint,
    OutputError,
    OutputWriter,
    parse_output,
    read_output,
)


def test_what_the_writer_writes_reads_back(tmp_path: Path) -> None:
    path = tmp_path / "out.jsonl"
    with OutputWriter(path, client="mine", guarantee="at-least-once") as out:
        out.change("insert", "db.t", "0-1-1", 0, after={"id": "1", "v": None})
        out.change(
            "update",
            "db.t",
            "0-1-2",
            0,
            before={"id": "1"},
            after={"v": "x"},
            file="mysql-bin.000001",
            pos=900,
        )
        out.change("delete", "db.t", "0-1-3", 0, before={"id": "1"})
        out.row("db.t", {"id": "2", "v": "0xFF"})
    output = read_output(path)
    assert output.client == "mine"
    assert output.guarantee == "at-least-once"
    assert output.changes is not None and output.tables is not None
    assert [(c.op, c.gtid, c.row, c.line) for c in output.changes] == [
        ("insert", "0-1-1", 0, 2),
        ("update", "0-1-2", 0, 3),
        ("delete", "0-1-3", 0, 4),
    ]
    assert output.changes[0].after == {"id": "1", "v": None}
    assert output.changes[1].before == {"id": "1"}
    assert (output.changes[1].file, output.changes[1].pos) == ("mysql-bin.000001", 900)
    assert output.tables == {"db.t": ({"id": "2", "v": "0xFF"},)}


def test_integers_are_their_decimal_text_and_tables_alone_are_enough() -> None:
    text = (
        json.dumps({"kind": "header", "changes": False})
        + "\n\n"
        + json.dumps({"kind": "row", "table": "db.t", "values": {"id": 7, "n": None}})
        + "\n"
    )
    output = parse_output(text)
    assert output.changes is None
    assert output.guarantee == "exactly-once"
    assert output.tables == {"db.t": ({"id": "7", "n": None},)}


def test_a_header_that_declares_tables_reports_empty_tables() -> None:
    output = parse_output('{"kind": "header", "tables": true, "changes": false}\n')
    assert output.tables == {}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "no header"),
        ('{"kind": "row", "table": "a.b", "values": {}}', "line 1: the first line is the header"),
        ('{"kind": "header"}\nnot json', "line 2: not JSON"),
        ('{"kind": "header", "guarantee": "at-most-once"}', "line 1: guarantee is one of"),
        ('{"kind": "header"}\n{"kind": "header"}', "line 2: a second header"),
        ('{"kind": "header"}\n{"kind": "nope"}', "line 2: unknown kind 'nope'"),
        ('{"kind": "header"}\n[1]', "line 2: an object with a 'kind'"),
        (
            '{"kind": "header"}\n{"kind": "change", "op": "upsert", "table": "a.b", "gtid":'
            ' "0-1-1", "row": 0}',
            "line 2: op is one of",
        ),
        (
            '{"kind": "header"}\n{"kind": "change", "op": "insert", "table": "a.b", "gtid":'
            ' "0-1-1", "row": -1, "after": {}}',
            "line 2: row is the change's index",
        ),
        (
            '{"kind": "header"}\n{"kind": "change", "op": "delete", "table": "a.b", "gtid":'
            ' "0-1-1", "row": 0, "after": {"id": "1"}}',
            "line 2: a delete has a before image (no after)",
        ),
        (
            '{"kind": "header"}\n{"kind": "row", "table": "a.b", "values": {"f": 1.5}}',
            "line 2, column 'f': a value is a string, an integer or null",
        ),
        ('{"kind": "header", "changes": false, "tables": false}', "declares neither"),
    ],
)
def test_mistakes_are_named(text: str, message: str) -> None:
    with pytest.raises(OutputError) as caught:
        parse_output(text)
    assert message in str(caught.value)


ENDPOINT = Endpoint(
    "127.0.0.1",
    3307,
    "repl",
    "pw",
    "/s.jsonl",
    "mysql-bin.000001",
    "mysql-bin.000002",
    900,
    "0-1-5",
    start_gtid="0-1-2,1-3-4",
)


def test_a_command_gets_every_placeholder() -> None:
    adapter = CommandAdapter(
        "client --at {host}:{port} --out {out} -u {user} -p {password} --snapshot {snapshot}"
        " --from {first_file} --to {end_file}:{end_pos} --gtid {end_gtid} --id {server_id}"
        " --start {start_gtid}"
    )
    assert adapter.name == "client"
    assert adapter.argv(ENDPOINT, Path("o.jsonl")) == [
        "client",
        "--at",
        "127.0.0.1:3307",
        "--out",
        "o.jsonl",
        "-u",
        "repl",
        "-p",
        "pw",
        "--snapshot",
        "/s.jsonl",
        "--from",
        "mysql-bin.000001",
        "--to",
        "mysql-bin.000002:900",
        "--gtid",
        "0-1-5",
        "--id",
        "1001",
        "--start",
        "0-1-2,1-3-4",
    ]


def test_an_unknown_placeholder_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown placeholder 'hots'"):
        CommandAdapter("client {hots} {port} {out}")
