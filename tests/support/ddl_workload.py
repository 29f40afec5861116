"""The DDL workload the Spark real-MariaDB tests (batch and stream) run on the primary after
the every-type scenario."""

from __future__ import annotations

__all__ = ["DDL_WORKLOAD"]

# Row-format changes after the scenario: an ALTER between rows, a TRUNCATE, a dropped table.
DDL_WORKLOAD = (
    "CREATE DATABASE ddl",
    "CREATE TABLE ddl.t (id INT PRIMARY KEY, v VARCHAR(20))",
    "INSERT INTO ddl.t VALUES (1, 'one'), (2, 'two'), (3, 'three')",
    "ALTER TABLE ddl.t ADD COLUMN w INT NULL",
    "UPDATE ddl.t SET w = id * 10 WHERE id >= 2",
    "UPDATE ddl.t SET id = 30 WHERE id = 3",
    "DELETE FROM ddl.t WHERE id = 1",
    "CREATE TABLE ddl.emptied (id INT PRIMARY KEY)",
    "INSERT INTO ddl.emptied VALUES (1), (2)",
    "TRUNCATE TABLE ddl.emptied",
    "INSERT INTO ddl.emptied VALUES (3)",
    "CREATE TABLE ddl.gone (id INT PRIMARY KEY)",
    "INSERT INTO ddl.gone VALUES (1)",
    "DROP TABLE ddl.gone",
    "CREATE TABLE ddl.nokey (a INT, b VARCHAR(5))",
    "INSERT INTO ddl.nokey VALUES (1, 'x'), (1, 'x'), (2, 'y')",
    "DELETE FROM ddl.nokey WHERE a = 2",
    "UPDATE ddl.nokey SET b = 'z' LIMIT 1",
)
