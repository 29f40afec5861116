"""A binlog dump, sans-IO: COM_BINLOG_DUMP in, packets out (stream, events, framing); the semi-sync state it asks is the store's (:mod:`fakemaster.store.semi_sync`)."""

__all__: list[str] = []
