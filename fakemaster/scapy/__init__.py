"""scapy layers for MariaDB's replication protocol (the optional extra ``fakemaster[scapy]``).

Built on ``scapy.contrib.mysql`` (scapy 2.8 or later) and on the project's codec: commands
(``COM_REGISTER_SLAVE``, ``COM_BINLOG_DUMP``, ``COM_BINLOG_DUMP_GTID``, semi-sync ACK), binlog
event packets whose events are decoded by ``decoder``, split packets, and stream classes that
follow both directions of a connection in a capture; ``dissect_pcap`` reads a capture file
(each TCP connection apart, every byte it could not dissect reported).

Names are imported on first use: ``import fakemaster`` never imports this package, and
``import fakemaster.scapy`` (or its ``command``, the ``pcap`` command the CLI registers) imports
scapy only when a layer is asked for.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from fakemaster import _lazy_attributes

if TYPE_CHECKING:
    from fakemaster.scapy.commands import (
        ComBinlogDump,
        ComBinlogDumpGtid,
        ComRegisterSlave,
        SemiSyncAckPacket,
    )
    from fakemaster.scapy.events import (
        BinlogEvent,
        BinlogEventPacket,
        SemiSyncBinlogEventPacket,
        decoding_with,
        event_layer,
    )
    from fakemaster.scapy.packets import ReplicationClientPacket, ReplicationServerPacket
    from fakemaster.scapy.pcap import Dissection, PacketRecord, StreamProblem, dissect_pcap
    from fakemaster.scapy.state import ConnectionState
    from fakemaster.scapy.stream import (
        ReplicationClient,
        ReplicationServer,
        dissect_stream,
        install,
        uninstall,
    )

_LAZY = {
    "BinlogEvent": "fakemaster.scapy.events",
    "BinlogEventPacket": "fakemaster.scapy.events",
    "ComBinlogDump": "fakemaster.scapy.commands",
    "ComBinlogDumpGtid": "fakemaster.scapy.commands",
    "ComRegisterSlave": "fakemaster.scapy.commands",
    "ConnectionState": "fakemaster.scapy.state",
    "Dissection": "fakemaster.scapy.pcap",
    "PacketRecord": "fakemaster.scapy.pcap",
    "ReplicationClient": "fakemaster.scapy.stream",
    "ReplicationClientPacket": "fakemaster.scapy.packets",
    "ReplicationServer": "fakemaster.scapy.stream",
    "ReplicationServerPacket": "fakemaster.scapy.packets",
    "SemiSyncAckPacket": "fakemaster.scapy.commands",
    "SemiSyncBinlogEventPacket": "fakemaster.scapy.events",
    "StreamProblem": "fakemaster.scapy.pcap",
    "decoding_with": "fakemaster.scapy.events",
    "dissect_pcap": "fakemaster.scapy.pcap",
    "dissect_stream": "fakemaster.scapy.stream",
    "event_layer": "fakemaster.scapy.events",
    "install": "fakemaster.scapy.stream",
    "uninstall": "fakemaster.scapy.stream",
}

__all__ = [
    "BinlogEvent",
    "BinlogEventPacket",
    "ComBinlogDump",
    "ComBinlogDumpGtid",
    "ComRegisterSlave",
    "ConnectionState",
    "Dissection",
    "PacketRecord",
    "ReplicationClient",
    "ReplicationClientPacket",
    "ReplicationServer",
    "ReplicationServerPacket",
    "SemiSyncAckPacket",
    "SemiSyncBinlogEventPacket",
    "StreamProblem",
    "decoding_with",
    "dissect_pcap",
    "dissect_stream",
    "event_layer",
    "install",
    "uninstall",
]
assert sorted(__all__) == sorted(_LAZY)

__getattr__, __dir__ = _lazy_attributes(__name__, globals(), _LAZY)
