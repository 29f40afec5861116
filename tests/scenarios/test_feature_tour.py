"""The README text proposed for DDL, settings, XA, non-transactional tables, restarts and idle
periods, run (the snippet of the report, as it is)."""

from __future__ import annotations


def test_the_feature_tour_runs() -> None:
    from scenarios import Oracle, Scenario, Settings, to_store

    scenario = Scenario(Settings(binlog_row_metadata="FULL"))
    scenario.create_table("CREATE TABLE shop.orders (id INT PRIMARY KEY, note VARCHAR(20))")
    scenario.create_table("CREATE TABLE shop.audit (id INT PRIMARY KEY, what TEXT) ENGINE=MyISAM")
    scenario.insert("shop.orders", {"id": 1, "note": "first"})

    # DDL mid-history: rows before and after it have the schema of their point.
    scenario.alter_table("shop.orders", "ADD COLUMN paid BOOL NOT NULL DEFAULT 0 AFTER id")
    scenario.alter_table("shop.orders", "MODIFY COLUMN note VARCHAR(40) NULL FIRST")
    scenario.insert("shop.orders", {"id": 2, "paid": 1})
    scenario.ddl("CREATE TABLE shop.tmp (k INT PRIMARY KEY)")  # or scenario.create_table(...)
    scenario.rename_table("shop.tmp", "shop.kept")
    scenario.truncate_table("shop.kept")
    scenario.drop_table("shop.kept")

    # Settings changed as SET SESSION / SET GLOBAL would (binlog_checksum rotates).
    scenario.set(binlog_row_image="MINIMAL", binlog_annotate_row_events=False)

    # XA: prepared, other transactions in between, then committed (or xa_rollback).
    with scenario.xa_transaction(("gtrid", "bqual", 1)) as tx:
        tx.update("shop.orders", {"id": 1}, {"paid": 1})
    scenario.insert("shop.audit", {"id": 1, "what": "while prepared"})  # MyISAM: its own group
    scenario.xa_commit(("gtrid", "bqual", 1))

    # A restart with another server id, an idle hour.
    scenario.restart(server_id=2)
    scenario.idle(3600)
    scenario.insert("shop.orders", {"id": 3})

    oracle = Oracle(scenario)
    assert oracle.tables(1)["shop.orders"].column_names == ("id", "note")  # before the ALTERs
    assert oracle.final.rows["shop.orders"] == [(b"first", 1, 1), (None, 2, 1), (None, 3, 0)]
    store = to_store(scenario)  # two files: the first ends with STOP
    assert len(store.file_names()) == 2
