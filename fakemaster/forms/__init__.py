"""Readable and lossless forms of events: the ``mariadb-binlog -v`` style listing and the JSON form."""

__all__: list[str] = []
