"""Client-side replication commands as scapy layers (the payload after the packet header).

The layouts are the vocabulary's (``fakemaster.vocabulary.commands``: ``RegisterSlave``,
``BinlogDump``, ``BinlogDumpGtid``) and the decoder's (``decoder.packets.parse_semi_sync_ack``);
the tests check each layer against them.

* COM_REGISTER_SLAVE (0x15): server_id(4) host user password (1-byte lengths) port(2)
  rank(4) master_id(4)
* COM_BINLOG_DUMP (0x12): position(4) flags(2) server_id(4) file name (rest of the packet)
* COM_BINLOG_DUMP_GTID (0x1e, MySQL): flags(2) server_id(4) name_len(4) name position(8)
  [data_len(4) GTID set, when flags has 0x04]
* semi-sync ACK (0xef): position(8) file name

MariaDB's GTID dump is a COM_QUERY ``SET @slave_connect_state='...'`` (scapy's
``MySQLComQuery``) followed by an ordinary COM_BINLOG_DUMP.
"""

from __future__ import annotations

from typing import Any

from scapy.fields import (
    ByteEnumField,
    ConditionalField,
    FieldLenField,
    FlagsField,
    LEIntField,
    LELongField,
    LEShortField,
    StrField,
    StrLenField,
    XByteField,
)
from scapy.packet import Packet

from fakemaster.vocabulary.commands import GTID_DUMP_THROUGH_GTID
from fakemaster.vocabulary.constants import SEMI_SYNC_MAGIC, Command, DumpFlag

__all__ = [
    "COMMAND_NAMES",
    "DUMP_FLAG_NAMES",
    "GTID_DUMP_THROUGH_GTID",
    "ComBinlogDump",
    "ComBinlogDumpGtid",
    "ComRegisterSlave",
    "SemiSyncAckPacket",
]

COMMAND_NAMES = {int(command): f"COM_{command.name}" for command in Command}
# Bit i of the dump flags, by name (FlagsField takes a list indexed by bit).
DUMP_FLAG_NAMES = [flag.name or "" for flag in DumpFlag]


def _gtid_set_present(pkt: Any) -> bool:
    return bool(int(pkt.flags) & GTID_DUMP_THROUGH_GTID)


class ComRegisterSlave(Packet):
    name = "MySQL COM_REGISTER_SLAVE"
    fields_desc = [
        ByteEnumField("cmd", int(Command.REGISTER_SLAVE), COMMAND_NAMES),
        LEIntField("server_id", 0),
        FieldLenField("host_length", None, length_of="host", fmt="B"),
        StrLenField("host", b"", length_from=lambda pkt: pkt.host_length, max_length=255),
        FieldLenField("user_length", None, length_of="user", fmt="B"),
        StrLenField("user", b"", length_from=lambda pkt: pkt.user_length, max_length=255),
        FieldLenField("password_length", None, length_of="password", fmt="B"),
        StrLenField("password", b"", length_from=lambda pkt: pkt.password_length, max_length=255),
        LEShortField("port", 0),
        LEIntField("rank", 0),
        LEIntField("master_id", 0),
    ]

    def mysummary(self) -> str:
        return self.sprintf("COM_REGISTER_SLAVE server_id=%server_id% host=%host%")


class ComBinlogDump(Packet):
    name = "MySQL COM_BINLOG_DUMP"
    fields_desc = [
        ByteEnumField("cmd", int(Command.BINLOG_DUMP), COMMAND_NAMES),
        LEIntField("position", 4),
        FlagsField("flags", 0, -16, DUMP_FLAG_NAMES),
        LEIntField("server_id", 0),
        StrField("file_name", b""),
    ]

    def mysummary(self) -> str:
        return self.sprintf(
            "COM_BINLOG_DUMP %file_name%:%position% server_id=%server_id% flags=%flags%"
        )


class ComBinlogDumpGtid(Packet):
    name = "MySQL COM_BINLOG_DUMP_GTID"
    fields_desc = [
        ByteEnumField("cmd", int(Command.BINLOG_DUMP_GTID), COMMAND_NAMES),
        FlagsField("flags", 0, -16, ["NON_BLOCK", "THROUGH_POSITION", "THROUGH_GTID"]),
        LEIntField("server_id", 0),
        FieldLenField("name_length", None, length_of="file_name", fmt="<I"),
        StrLenField("file_name", b"", length_from=lambda pkt: pkt.name_length),
        LELongField("position", 4),
        ConditionalField(
            FieldLenField("data_length", None, length_of="gtid_set", fmt="<I"),
            _gtid_set_present,
        ),
        ConditionalField(
            StrLenField("gtid_set", b"", length_from=lambda pkt: pkt.data_length),
            _gtid_set_present,
        ),
    ]

    def mysummary(self) -> str:
        return self.sprintf(
            "COM_BINLOG_DUMP_GTID %file_name%:%position% server_id=%server_id% flags=%flags%"
        )


class SemiSyncAckPacket(Packet):
    name = "MySQL semi-sync ACK"
    fields_desc = [
        XByteField("magic", SEMI_SYNC_MAGIC),
        LELongField("position", 0),
        StrField("file_name", b""),
    ]

    def mysummary(self) -> str:
        return self.sprintf("semi-sync ACK %file_name%:%position%")
