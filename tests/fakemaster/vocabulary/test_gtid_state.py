"""GTID positions: text form, hash order, binlog state and the dump-by-GTID checks.

Expected texts, orders and parse verdicts are what MariaDB 10.11.19 answered to the same input
(a replica setting ``@slave_connect_state`` and sending COM_BINLOG_DUMP).
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fakemaster.vocabulary.errcodes import ER_DUPLICATE_GTID_DOMAIN, ER_INCORRECT_GTID_STATE
from fakemaster.vocabulary.events import Gtid
from fakemaster.vocabulary.gtid_state import (
    PURGED_MESSAGE,
    BinlogState,
    GtidPosition,
    GtidStateError,
    HashOrder,
    check_start_position,
    contains_all,
    find_start_file,
    format_gtid_list,
    missing_start_error,
    parse_gtid_list,
    strict_hole_message,
)

U32 = st.integers(0, 0xFFFFFFFF)
U64 = st.integers(0, 0xFFFFFFFFFFFFFFFF)
gtids = st.builds(Gtid, U32, U32, U64)


# --- text form -------------------------------------------------------------------------


@given(st.lists(gtids, max_size=20))
def test_gtid_list_round_trip(values: list[Gtid]) -> None:
    text = format_gtid_list(values)
    assert parse_gtid_list(text) == values
    assert parse_gtid_list(text.encode()) == values


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", []),
        ("0-1-5", [Gtid(0, 1, 5)]),
        (" 0-1-5", [Gtid(0, 1, 5)]),
        ("\t0-1-5", [Gtid(0, 1, 5)]),
        ("+0-+1-+5", [Gtid(0, 1, 5)]),
        ("00-01-05", [Gtid(0, 1, 5)]),
        ("0- 1-5", [Gtid(0, 1, 5)]),
        ("0-1-5,  2-1-1", [Gtid(0, 1, 5), Gtid(2, 1, 1)]),
        ("4294967295-4294967295-18446744073709551615", [Gtid(2**32 - 1, 2**32 - 1, 2**64 - 1)]),
        ("0-1-5,0-1-6", [Gtid(0, 1, 5), Gtid(0, 1, 6)]),  # a list may repeat a domain
    ],
)
def test_parse_accepts_what_the_server_accepts(text: str, expected: list[Gtid]) -> None:
    assert parse_gtid_list(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "bogus",
        "0-1-5 ",
        "0 -1-5",
        "-0-1-5",
        "0-1-",
        "0-1-5,",
        ",0-1-5",
        "0-1-5;",
        "0-1",
        "4294967296-1-5",
        "0-4294967296-5",
        "0-1-18446744073709551616",
        "0x1-1-5",
    ],
)
def test_parse_rejects_what_the_server_rejects(text: str) -> None:
    with pytest.raises(GtidStateError) as caught:
        GtidPosition.parse(text)
    assert caught.value.errno == ER_INCORRECT_GTID_STATE == 1941
    assert caught.value.message == "Could not parse GTID list"


def test_duplicate_domain_text() -> None:
    with pytest.raises(GtidStateError) as caught:
        GtidPosition.parse("0-1-5,0-2-5")
    assert caught.value.errno == ER_DUPLICATE_GTID_DOMAIN == 1943
    assert caught.value.message == "GTID 0-2-5 and 0-1-5 conflict (duplicate domain id 0)"


# --- hash order ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("inserted", "walked"),
    [
        ([0, 2], [0, 2]),  # GTID_LIST of a 10.11 binlog: domains 0 then 2
        ([0, 5], [5, 0]),  # fake GTID_LIST a 10.11 dump thread sent
        ([0, 2, 5], [5, 2, 0]),  # GTID_LIST of a 10.11 binlog
        ([1, 9], [9, 1]),  # server ids within domain 0 of that GTID_LIST
    ],
)
def test_hash_order_matches_the_server(inserted: list[int], walked: list[int]) -> None:
    order = HashOrder()
    for key in inserted:
        order.insert(key)
    assert order.keys() == walked


@given(st.lists(U32, unique=True, max_size=80))
def test_hash_order_is_a_permutation(keys: list[int]) -> None:
    order = HashOrder()
    for key in keys:
        order.insert(key)
    assert sorted(order.keys()) == sorted(keys)
    copied = order.copy()
    copied.insert(max(keys, default=0) + 1 if (max(keys, default=0) + 1) < 2**32 else 0)
    assert sorted(order.keys()) == sorted(keys)  # the copy is independent


@given(st.lists(U32, unique=True, min_size=1, max_size=40), st.data())
def test_hash_order_removal(keys: list[int], data: st.DataObject) -> None:
    order = HashOrder()
    for key in keys:
        order.insert(key)
    gone = data.draw(st.sampled_from(keys))
    order.remove(gone)
    assert sorted(order.keys()) == sorted(set(keys) - {gone})


# --- positions and binlog states -------------------------------------------------------


def test_position_is_one_gtid_per_domain() -> None:
    position = GtidPosition([Gtid(0, 1, 5), Gtid(5, 1, 1), Gtid(0, 2, 7)])
    assert len(position) == 2
    assert position.find(0) == Gtid(0, 2, 7)
    assert 5 in position and 3 not in position
    assert str(position) == "5-1-1,0-2-7"  # hash order, as BINLOG_GTID_POS() prints it
    copied = position.copy()
    position.remove(5)
    assert position.domains() == [0]
    assert copied.domains() == [5, 0]
    assert copied != position
    assert GtidPosition.parse(str(copied)) == copied


def test_binlog_state_of_a_real_binlog() -> None:
    # The state a 10.11 server wrote into the GTID_LIST of its fourth binlog file.
    state = BinlogState()
    for gtid in [Gtid(0, 1, 1), Gtid(2, 1, 1), Gtid(0, 1, 23), Gtid(5, 1, 1), Gtid(0, 9, 24)]:
        state.update(gtid)
    state.update(Gtid(0, 1, 28))
    assert state.gtid_list() == (
        Gtid(5, 1, 1),
        Gtid(2, 1, 1),
        Gtid(0, 9, 24),
        Gtid(0, 1, 28),
    )
    # @@gtid_binlog_state and @@gtid_binlog_pos as the server printed them.
    assert state.state_string() == "0-9-24,0-1-28,2-1-1,5-1-1"
    assert state.pos_string() == "0-1-28,2-1-1,5-1-1"
    assert state.find(0, 9) == Gtid(0, 9, 24)
    assert state.find(0, 7) is None and state.find(3, 1) is None
    assert state.most_recent(0) == Gtid(0, 1, 28)
    assert state.most_recent(3) is None
    assert state.next_seq_no(0) == 29 and state.next_seq_no(3) == 1
    assert len(state) == 4
    assert BinlogState(state.gtid_list()) == state
    assert BinlogState.parse(format_gtid_list(state.gtid_list())) == state


def test_binlog_state_counter_keeps_the_highest_seq_no() -> None:
    state = BinlogState([Gtid(0, 1, 10), Gtid(0, 2, 4)])
    assert state.most_recent(0) == Gtid(0, 2, 4)
    assert state.next_seq_no(0) == 11
    copied = state.copy()
    state.load([Gtid(1, 1, 1)])
    assert state.domains() == [1]
    assert copied.domains() == [0]


# --- the checks of a dump by GTID ------------------------------------------------------

END = BinlogState([Gtid(0, 1, 20), Gtid(2, 1, 1)])


def test_start_inside_the_binlog_is_fine() -> None:
    assert check_start_position(GtidPosition.parse("0-1-5,2-1-1"), END) == (None, frozenset())


def test_start_beyond_the_binlog() -> None:
    error, _ = check_start_position(GtidPosition.parse("0-1-21"), END)
    assert error is not None and not error.diverged
    assert error.message == (
        "Error: connecting slave requested to start from GTID 0-1-21, which is not in the "
        "master's binlog"
    )


def test_start_from_another_server_has_diverged() -> None:
    error, _ = check_start_position(GtidPosition.parse("0-2-5"), END)
    assert error is not None and error.diverged
    assert error.message == (
        "Error: connecting slave requested to start from GTID 0-2-5, which is not in the "
        "master's binlog. Since the master's binlog contains GTIDs with higher sequence "
        "numbers, it probably means that the slave has diverged due to executing extra "
        "erroneous transactions"
    )
    assert missing_start_error(Gtid(0, 2, 5), END) == error


def test_unknown_domain_is_tolerated() -> None:
    assert check_start_position(GtidPosition.parse("7-1-5,0-1-3"), END) == (None, frozenset({7}))


def test_ignore_duplicates_accepts_a_start_beyond_the_end() -> None:
    position = GtidPosition.parse("0-1-100")
    assert check_start_position(position, END, ignore_duplicates=True) == (None, frozenset())
    # ... but not a GTID of another server below the end.
    error, _ = check_start_position(GtidPosition.parse("0-2-5"), END, ignore_duplicates=True)
    assert error is not None


def test_until_position_already_reached_accepts_a_missing_start() -> None:
    until = GtidPosition.parse("0-1-10")
    assert check_start_position(GtidPosition.parse("0-1-30"), END, until=until)[0] is None
    assert len(until) == 0
    other = GtidPosition.parse("2-1-1")  # no stop position for domain 0: nothing to send
    assert check_start_position(GtidPosition.parse("0-1-30"), END, until=other)[0] is None
    beyond = GtidPosition.parse("0-1-40")
    assert check_start_position(GtidPosition.parse("0-1-30"), END, until=beyond)[0] is not None


FILES: list[tuple[str, tuple[Gtid, ...] | None]] = [
    ("mysql-bin.000001", ()),
    ("mysql-bin.000002", (Gtid(0, 1, 10), Gtid(2, 1, 1))),
    ("mysql-bin.000003", (Gtid(0, 1, 20), Gtid(2, 1, 1))),
]


@pytest.mark.parametrize(
    ("state", "file_name", "remaining"),
    [
        ("", "mysql-bin.000001", ""),
        ("0-1-5", "mysql-bin.000001", "0-1-5"),  # domain 2 from its start: file 1
        ("0-1-5,2-1-1", "mysql-bin.000001", "0-1-5,2-1-1"),
        ("0-1-11,2-1-1", "mysql-bin.000002", "0-1-11"),  # 2-1-1 is where file 2 starts
        ("0-1-10,2-1-1", "mysql-bin.000002", ""),
        ("0-1-12,2-1-1", "mysql-bin.000002", "0-1-12"),
        ("0-1-20,2-1-1", "mysql-bin.000003", ""),
        ("0-1-25,2-1-1", "mysql-bin.000003", "0-1-25"),
    ],
)
def test_find_start_file(state: str, file_name: str, remaining: str) -> None:
    position = GtidPosition.parse(state)
    assert find_start_file(position, FILES) == file_name
    assert position == GtidPosition.parse(remaining)


def test_find_start_file_after_purge() -> None:
    purged = FILES[1:]
    assert find_start_file(GtidPosition.parse(""), purged) is None
    assert find_start_file(GtidPosition.parse("0-1-5,2-1-1"), purged) is None
    assert find_start_file(GtidPosition.parse("0-1-10"), purged) is None
    assert find_start_file(GtidPosition.parse("0-1-10,2-1-1"), purged) == "mysql-bin.000002"
    assert PURGED_MESSAGE == (
        "Could not find GTID state requested by slave in any binlog files. Probably the "
        "slave state is too old and required binlog files have been purged."
    )


def test_find_start_file_without_gtid_list_and_until() -> None:
    files: list[tuple[str, tuple[Gtid, ...] | None]] = [("old.000001", None), *FILES[1:]]
    assert find_start_file(GtidPosition.parse("0-1-3"), files) == "old.000001"
    until = GtidPosition.parse("0-1-15,2-1-1")
    assert find_start_file(GtidPosition.parse("0-1-12,2-1-1"), files, until) == ("mysql-bin.000002")
    assert until == GtidPosition.parse("0-1-15")  # 2-1-1 was reached before that file


def test_contains_all_needs_the_last_gtid_of_a_domain() -> None:
    listed = (Gtid(0, 1, 10), Gtid(0, 2, 12))
    assert not contains_all(GtidPosition.parse("0-1-10"), listed)  # 0-2-12 came after it
    assert contains_all(GtidPosition.parse("0-2-12"), listed)
    assert contains_all(GtidPosition.parse("0-2-13"), listed)
    assert not contains_all(GtidPosition.parse("0-1-9"), listed)
    assert contains_all(GtidPosition.parse("0-3-1"), listed)


def test_strict_hole_text() -> None:
    assert strict_hole_message(Gtid(0, 1, 18)) == (
        "The binlog on the master is missing the GTID 0-1-18 requested by the slave (even "
        "though both a prior and a subsequent sequence number does exist), and GTID strict "
        "mode is enabled"
    )
