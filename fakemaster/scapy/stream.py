"""Both directions of a replication connection as scapy stream layers.

``ReplicationClient`` and ``ReplicationServer`` hold the list of packets one reassembled chunk
of a direction carries. Their ``tcp_reassemble`` waits for whole logical packets (split
packets included) and dissects them with the ``ConnectionState`` in the connection's session
dict (``connections.Connection``'s, or scapy's ``TCPSession``'s), so the server direction
knows that a dump was requested, whether it is semi-sync, and decodes each event with the
connection's ``BinlogContext`` in order.

``install(port)`` binds them to a TCP port in place of scapy's own MySQL streams; nothing is
bound when this module is imported.
"""

from __future__ import annotations

from typing import Any

from scapy.config import conf
from scapy.contrib.mysql import MySQLClient, MySQLServer
from scapy.fields import PacketListField
from scapy.layers.inet import TCP
from scapy.packet import Packet, bind_layers, split_layers

from decoder.packets import inflate_packets
from fakemaster.scapy.packets import (
    ReplicationClientPacket,
    ReplicationServerPacket,
    complete_prefix,
)
from fakemaster.scapy.state import ConnectionState, following, state_of
from fakemaster.vocabulary.errors import DecodeError

__all__ = ["ReplicationClient", "ReplicationServer", "dissect_stream", "install", "uninstall"]


def _reassemble(cls: Any, data: bytes, session: dict[str, Any] | None) -> Packet | None:
    state = state_of(session)
    if state.compressed:
        return _reassemble_compressed(cls, data, state)
    end = complete_prefix(data, conf.max_list_count)
    if end == 0:
        return None
    return _dissected(cls, data[:end], state, data[end:], conf.max_list_count)


def _reassemble_compressed(cls: Any, data: bytes, state: ConnectionState) -> Packet | None:
    """The inner packets of the whole compressed packets in ``data`` (the compressed protocol:
    one compressed packet may hold several inner packets, or part of one)."""
    side = int(cls is ReplicationServer)
    try:
        inner, used = inflate_packets(data)
    except DecodeError:
        return conf.raw_layer(data)  # not a compressed stream after all: shown raw
    waiting = state.inner_left[side] + inner
    # Every whole inner packet now: the ones left would wait for more compressed bytes, which
    # may never come (the end of a capture).
    most = max(conf.max_list_count, len(waiting) // 4 + 1)
    end = complete_prefix(waiting, most)
    if end == 0:
        return None  # nothing consumed: the same bytes come again with more
    state.inner_left[side] = waiting[end:]
    return _dissected(cls, waiting[:end], state, data[used:], most)


def _dissected(cls: Any, packets: bytes, state: ConnectionState, rest: bytes, most: int) -> Packet:
    """``packets`` (whole ones, at most ``most``) dissected with ``state``; ``rest`` (bytes of
    the stream not consumed yet) handed back to the session as padding."""
    limit = conf.max_list_count
    conf.max_list_count = most
    try:
        with following(state):
            pkt: Packet = cls(packets)
    finally:
        conf.max_list_count = limit
    return pkt / conf.padding_layer(rest) if rest else pkt


def _contents(packet_class: type[Packet]) -> list[Any]:
    """The fields of a stream layer: a list of ``packet_class`` packets."""
    return [
        PacketListField(
            "contents",
            [],
            next_cls_cb=lambda pkt, lst, cur, remain: packet_class if len(remain) >= 4 else None,
        ),
    ]


class ReplicationClient(MySQLClient):
    name = "MySQL Client Stream (replication)"
    fields_desc = _contents(ReplicationClientPacket)

    @classmethod
    def tcp_reassemble(cls, data: bytes, metadata: Any, session: Any = None) -> Packet | None:
        return _reassemble(cls, data, session)


class ReplicationServer(MySQLServer):
    name = "MySQL Server Stream (replication)"
    fields_desc = _contents(ReplicationServerPacket)

    @classmethod
    def tcp_reassemble(cls, data: bytes, metadata: Any, session: Any = None) -> Packet | None:
        return _reassemble(cls, data, session)


def dissect_stream(
    cls: type[ReplicationClient] | type[ReplicationServer], data: bytes, state: ConnectionState
) -> Packet:
    """One direction's bytes (whole packets) dissected with ``state``, without a capture."""
    with following(state):
        return cls(data)


def install(port: int = 3306) -> None:
    """Dissect TCP traffic to and from ``port`` with the replication streams."""
    split_layers(TCP, MySQLClient, dport=port)
    split_layers(TCP, MySQLServer, sport=port)
    bind_layers(TCP, ReplicationClient, dport=port)
    bind_layers(TCP, ReplicationServer, sport=port)


def uninstall(port: int = 3306) -> None:
    """Undo ``install(port)``."""
    split_layers(TCP, ReplicationClient, dport=port)
    split_layers(TCP, ReplicationServer, sport=port)
