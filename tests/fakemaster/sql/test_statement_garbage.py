"""A statement leaves nothing for the garbage collector: what it made is freed by reference
counting when it is answered. A big statement read in a worker thread runs with automatic
collection off (fakemaster.server.statement_worker); a cycle holding its tokens would be
collected later, on the event loop, walking them all with the GIL held (a second for 400,000
parentheses). Counted: gc.collect() finds nothing after each statement."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from fakemaster.sql.statements import execute
from tests.fakemaster.sql.test_statements import make_session

STATEMENTS = [
    "SELECT " + "(" * 1000 + "1" + ")" * 1000,  # ER_PARSE_ERROR from deep in the parser
    "SELECT nosuch FROM shop.t",  # ER_BAD_FIELD_ERROR from a handler
    "SELEC 1",  # no statement matched
    "SELECT 1 /* unterminated",  # a lexing error
    "SELECT id FROM shop.t WHERE id IN (1, 2, 3) OR name LIKE 'a%'",
    "SELECT id FROM shop.t WHERE " + " OR ".join(f"id = {i}" for i in range(200)),
    "SHOW VARIABLES LIKE 'server%'",
    "SET STATEMENT max_statement_time=1 FOR SELECT 1",
    "SELECT 1; SELECT 2",
]


@pytest.fixture
def collector_off() -> Iterator[None]:
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


@pytest.mark.parametrize("sql", STATEMENTS, ids=lambda sql: sql[:30])
def test_a_statement_leaves_no_cycles(sql: str, collector_off: None) -> None:
    _, session = make_session()
    execute(session, sql)  # once: first-use caches are not garbage
    gc.collect()
    execute(session, sql)
    assert gc.collect() == 0


def test_release_in_slices_frees_a_slice_at_a_time() -> None:
    from fakemaster.sql import release

    freed: list[int] = []  # how many items each del call freed

    class Recorder(list):  # type: ignore[type-arg]
        def __delitem__(self, index: object) -> None:
            before = len(self)
            super().__delitem__(index)  # type: ignore[arg-type]
            freed.append(before - len(self))

    items = Recorder(range(3 * release.SLICE + 5))
    release.release_in_slices(items)
    assert items == []
    assert freed and max(freed) <= release.SLICE
    assert freed == [release.SLICE] * 3  # then clear() the last 5


def test_deferred_releases_run_once_when_the_statement_is_done() -> None:
    from fakemaster.sql import release

    emptied: list[set[int]] = []
    keys = set(range(10_000))
    release.defer_release(lambda: (release.release_set(keys), emptied.append(keys)))
    release.release_deferred()
    release.release_deferred()  # nothing left to run
    assert emptied == [set()] and keys == set()


def test_an_in_list_is_emptied_when_its_statement_is_done(monkeypatch: pytest.MonkeyPatch) -> None:
    from fakemaster.sql.answers import in_list

    seen: list[in_list.ConstantList] = []
    real_init = in_list.ConstantList.__init__

    def recording_init(self: in_list.ConstantList, *args: object, **kw: object) -> None:
        real_init(self, *args, **kw)  # type: ignore[arg-type]
        seen.append(self)

    monkeypatch.setattr(in_list.ConstantList, "__init__", recording_init)
    _, session = make_session()
    execute(session, "SELECT id FROM shop.t WHERE id IN (1, 2, 3) AND name IN ('a', 'b')")
    assert len(seen) == 2
    assert all(not constants._numbers and not constants._plain for constants in seen)
