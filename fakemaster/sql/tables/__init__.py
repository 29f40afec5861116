"""The tables SQL reads: the served schemas' catalogue, the binlog catalogue, information_schema and system tables."""

__all__: list[str] = []
