"""The resume position and the assembly of whole committed groups."""

from __future__ import annotations

import pytest

from fakemaster.client.position import (
    CommittedGroup,
    GroupAssembler,
    Position,
    PositionError,
    ReceivedEvent,
    format_gtids,
    parse_gtids,
)
from fakemaster.vocabulary.constants import GtidFlag
from fakemaster.vocabulary.events import (
    Event,
    FormatDescriptionEvent,
    GtidEvent,
    QueryEvent,
    RotateEvent,
    TableMapEvent,
    WriteRowsEvent,
    XidEvent,
)


def transaction(seq: int, start: int, domain: int = 0) -> list[Event]:
    """A GTID group of four 100-byte events starting at ``start``."""
    return [
        GtidEvent(seq_no=seq, domain_id=domain, log_pos=start + 100),
        TableMapEvent(table_id=1, database="d", table="t", log_pos=start + 200),
        WriteRowsEvent(table_id=1, rows=((seq,),), log_pos=start + 300),
        XidEvent(xid=seq, log_pos=start + 400),
    ]


def start_of_file(name: str = "mysql-bin.000001") -> list[Event]:
    return [RotateEvent(next_file=name, position=4), FormatDescriptionEvent(log_pos=256)]


def groups(items: list[CommittedGroup | ReceivedEvent]) -> list[CommittedGroup]:
    return [item for item in items if isinstance(item, CommittedGroup)]


def test_gtid_text_round_trips_and_refuses_two_of_a_domain() -> None:
    assert parse_gtids("1-2-3, 0-1-10") == {1: (2, 3), 0: (1, 10)}
    assert format_gtids({1: (2, 3), 0: (1, 10)}) == "0-1-10,1-2-3"
    assert parse_gtids("") == {}
    with pytest.raises(ValueError):
        parse_gtids("0-1-1,0-1-2")
    with pytest.raises(ValueError):
        parse_gtids("0-1")


def test_each_group_is_handed_over_at_its_commit_with_the_position_after_it() -> None:
    assembler = GroupAssembler()
    out = assembler.feed_all(start_of_file() + transaction(1, 256) + transaction(2, 656))
    found = groups(out)
    assert [g.gtid for g in found] == [(0, 1, 1), (0, 1, 2)]
    assert [len(g.events) for g in found] == [4, 4]
    assert found[0].position == Position(((0, 1, 1),), "mysql-bin.000001", 656)
    assert found[1].position == Position(((0, 1, 2),), "mysql-bin.000001", 1056)
    assert assembler.position == found[1].position
    # Events outside groups come at once.
    assert isinstance(out[0], ReceivedEvent) and isinstance(out[0].event, RotateEvent)


def test_an_unfinished_group_is_dropped_at_a_reset_and_taken_again_after_it() -> None:
    assembler = GroupAssembler()
    assert groups(assembler.feed_all(start_of_file() + transaction(1, 256)[:3])) == []
    # The position moved past the FORMAT_DESCRIPTION (outside any group), not into the group.
    assert assembler.in_group and assembler.position == Position((), "mysql-bin.000001", 256)
    assembler.reset()
    found = groups(assembler.feed_all(start_of_file() + transaction(1, 256)))
    assert [g.gtid for g in found] == [(0, 1, 1)]


def test_a_copy_of_an_event_is_dropped() -> None:
    assembler = GroupAssembler()
    events = transaction(1, 256)
    doubled = [*events[:3], events[2], events[3], events[3]]
    found = groups(assembler.feed_all(start_of_file() + doubled))
    assert len(found) == 1 and len(found[0].events) == 4
    assert assembler.copies_dropped == 2


def test_a_group_the_position_has_already_is_skipped_in_gtid_mode() -> None:
    assembler = GroupAssembler(Position.from_gtids("0-1-1"))
    found = groups(assembler.feed_all(start_of_file() + transaction(1, 256) + transaction(2, 656)))
    assert [g.gtid for g in found] == [(0, 1, 2)]
    assert assembler.groups_skipped == 1
    file_mode = GroupAssembler(Position.from_gtids("0-1-1"), gtid_mode=False)
    assert len(groups(file_mode.feed_all(start_of_file() + transaction(1, 256)))) == 1


def test_within_a_connection_a_lower_sequence_number_is_a_new_group() -> None:
    assembler = GroupAssembler()
    events = start_of_file() + transaction(254, 256) + transaction(2, 656)
    assert [g.gtid for g in groups(assembler.feed_all(events))] == [(0, 1, 254), (0, 1, 2)]
    assert assembler.position.gtids == ((0, 1, 2),)
    # The next connection starts from there: what it has is skipped.
    assembler.reset()
    again = start_of_file() + transaction(1, 256) + transaction(3, 656)
    assert [g.gtid for g in groups(assembler.feed_all(again))] == [(0, 1, 3)]


def test_a_standalone_group_ends_with_its_statement() -> None:
    assembler = GroupAssembler()
    ddl = [
        GtidEvent(seq_no=1, flags2=GtidFlag.STANDALONE, log_pos=356),
        QueryEvent(query=b"CREATE TABLE d.t (id INT)", log_pos=456),
    ]
    found = groups(assembler.feed_all(start_of_file() + ddl + transaction(2, 456)))
    assert [(g.gtid, len(g.events)) for g in found] == [((0, 1, 1), 2), ((0, 1, 2), 4)]


def test_a_rotate_between_groups_moves_the_position_to_the_next_file() -> None:
    assembler = GroupAssembler()
    assembler.feed_all(start_of_file() + transaction(1, 256))
    assembler.feed(RotateEvent(next_file="mysql-bin.000002", position=4, log_pos=700))
    assert assembler.position == Position(((0, 1, 1),), "mysql-bin.000002", 4)
    # In the new file positions start again: not copies.
    found = groups(assembler.feed_all(start_of_file("mysql-bin.000002")[1:] + transaction(2, 256)))
    assert found[0].position == Position(((0, 1, 2),), "mysql-bin.000002", 656)


def test_a_commit_outside_a_group_is_an_error() -> None:
    assembler = GroupAssembler()
    assembler.feed_all(start_of_file())
    with pytest.raises(PositionError):
        assembler.feed(XidEvent(xid=1, log_pos=300))


def test_covers_and_has() -> None:
    position = Position.from_gtids("0-1-5,2-1-7")
    assert position.has(0, 5) and not position.has(0, 6) and not position.has(1, 1)
    assert position.covers(Position.from_gtids("0-1-3,2-9-7"))
    assert not position.covers(Position.from_gtids("1-1-1"))
