"""The position a batch leaves (fakemaster.spark.position): computed from per-domain groups,
whether one query reads them or the batch's first look reads them with the rest; the GTID
position it reports is the one the binlog's own store reports."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from fakemaster.spark.position import by_domain, position_after
from scenarios.compiler import binlog_files, to_store
from scenarios.library import build


def seq(pos: int, row: int = 0) -> Any:
    from pyspark.sql import Row

    return Row(file_index=0, pos=pos, event=0, row=row)


def source(pos: int, gtid: str | None) -> Any:
    from pyspark.sql import Row

    return Row(file="mysql-bin.000001", pos=pos, gtid=gtid)


def gtid(seq: int, server: int) -> Any:
    """A GTID's value as the aggregates give it (compared as a struct: seq, then server)."""
    from pyspark.sql import Row

    return Row(seq=seq, server=server)


def test_the_position_after_groups_continues_the_one_before() -> None:
    groups = [
        {"domain": 0, "s": source(900, "0-1-7"), "at": seq(900), "n": 5, "v": gtid(7, 1)},
        {"domain": 2, "s": source(400, "2-3-9"), "at": seq(400), "n": 2, "v": gtid(9, 3)},
        {"domain": None, "s": source(950, None), "at": seq(950), "n": 1, "v": None},
    ]
    base = {"events": 10, "gtid_binlog_pos": "0-1-3,1-1-4", "file": "f", "pos": 4, "gtid": "g"}
    assert position_after(groups, base, 3) == {
        "batch_id": 3,
        "events": 18,
        "file": "mysql-bin.000001",
        "pos": 950,
        "gtid": None,
        "gtid_binlog_pos": "0-1-7,1-1-4,2-3-9",
    }
    # No event: the position before, as it was.
    assert position_after([], base, 4) == {
        "batch_id": 4,
        "events": 10,
        "file": "f",
        "pos": 4,
        "gtid": "g",
        "gtid_binlog_pos": "0-1-3,1-1-4",
    }


def test_finer_groups_merge_into_one_per_domain() -> None:
    def group(domain: int | None, at: int | None, n: int, v: Any) -> Any:
        return {
            "domain": domain,
            "p_s": None if at is None else source(at, None),
            "p_at": None if at is None else seq(at),
            "p_n": n,
            "p_v": v,
        }

    merged = by_domain(
        [
            group(0, 500, 3, gtid(5, 1)),
            group(0, 700, 1, None),  # a later event of a group without GTID values
            group(0, 600, 2, gtid(6, 1)),
            group(0, None, 0, None),  # a group none of whose events counts
            group(None, 100, 4, None),
        ],
        "p_",
    )
    assert sorted(merged, key=repr) == sorted(
        [
            {"domain": 0, "n": 6, "v": gtid(6, 1), "at": seq(700), "s": source(700, None)},
            {"domain": None, "n": 4, "v": None, "at": seq(100), "s": source(100, None)},
        ],
        key=repr,
    )


@pytest.mark.parametrize("name", ["multi_domain", "restart_new_server_id", "rotation_storm"])
def test_the_first_look_gives_the_position_one_query_gives(
    spark: Any, tmp_path: Path, name: str
) -> None:
    from fakemaster.spark import FORMAT_NAME
    from fakemaster.spark.batch_overview import carries_columns, first_look
    from fakemaster.spark.position import position_groups

    store = to_store(build(name))
    paths = []
    for file_name, data in binlog_files(store).items():
        (tmp_path / file_name).write_bytes(data)
        paths.append(str(tmp_path / file_name))
    events = spark.read.format(FORMAT_NAME).load(paths)
    look = first_look(events, carries_columns(), None, position=True)
    assert look.position is not None
    found = position_after(look.position, None, 0)
    assert found == position_after(position_groups(events), None, 0)
    assert found["gtid_binlog_pos"] == store.gtid_binlog_pos()
    assert found["events"] == events.count()
