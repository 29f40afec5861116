"""A toy CDC client on python-mysql-replication: every row change it reads applied to plain
dicts, as the README's tutorial writes it. Tests use it as the client under test."""

from __future__ import annotations

from typing import Any

from pymysqlreplication import BinLogStreamReader
from pymysqlreplication.row_event import DeleteRowsEvent, UpdateRowsEvent, WriteRowsEvent

__all__ = ["apply_row_events"]

Tables = dict[str, list[dict[str, Any]]]


def apply_row_events(
    tables: Tables, host: str, port: int, user: str, password: str, **stream_options: Any
) -> Tables:
    """Apply the row events of a non-blocking dump to ``tables`` (``table -> rows``); the
    stream's other options (``log_file``...) as given."""
    stream = BinLogStreamReader(
        connection_settings={"host": host, "port": port, "user": user, "passwd": password},
        server_id=99,
        blocking=False,
        only_events=[WriteRowsEvent, UpdateRowsEvent, DeleteRowsEvent],
        **stream_options,
    )
    try:
        for event in stream:
            rows = tables.setdefault(f"{event.schema}.{event.table}", [])
            for row in event.rows:
                if isinstance(event, WriteRowsEvent):
                    rows.append(row["values"])
                elif isinstance(event, UpdateRowsEvent):
                    rows[rows.index(row["before_values"])] = row["after_values"]
                else:
                    rows.remove(row["values"])
    finally:
        stream.close()
    return tables
