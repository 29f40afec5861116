"""Record the bytes of one replica session (both directions, in order) driving the sans-IO core
over a plain socket, and replay a recording into a fresh core with no socket at all."""

from __future__ import annotations

import socket
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from fakemaster.client.position import CommittedGroup, GroupAssembler, Position, ReceivedEvent
from fakemaster.client.protocol import (
    ClientConfig,
    EventReceived,
    Happening,
    ReplicaConnection,
    StreamEnded,
)
from fakemaster.vocabulary.events import HeartbeatEvent

__all__ = ["Recording", "Replayed", "rechunked", "record_session", "replay_session"]


@dataclass
class Recording:
    """``exchanges``: ("server" | "client", bytes) in the order they crossed the wire."""

    config: ClientConfig
    start: Position
    exchanges: list[tuple[str, bytes]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "config": {
                "user": self.config.user,
                "password": self.config.password,
                "server_id": self.config.server_id,
                "gtid_mode": self.config.gtid_mode,
                "semi_sync": self.config.semi_sync,
                "heartbeat_period": self.config.heartbeat_period,
            },
            "start": self.start.to_dict(),
            "exchanges": [{"from": side, "hex": data.hex()} for side, data in self.exchanges],
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Recording:
        start = Position.from_gtids(data["start"]["gtids"]).at(
            data["start"]["file"], data["start"]["position"]
        )
        exchanges = [(item["from"], bytes.fromhex(item["hex"])) for item in data["exchanges"]]
        return cls(ClientConfig(**data["config"]), start, exchanges)

    def server_bytes(self) -> bytes:
        return b"".join(data for side, data in self.exchanges if side == "server")

    def client_bytes(self) -> bytes:
        return b"".join(data for side, data in self.exchanges if side == "client")


def record_session(
    host: str,
    port: int,
    config: ClientConfig,
    start: Position,
    until: Callable[[Position], bool],
    timeout: float = 30.0,
) -> Recording:
    """One connection, until ``until`` holds for the position of the committed groups."""
    recording = Recording(config, start)
    core = ReplicaConnection(config, start)
    assembler = GroupAssembler(start, gtid_mode=config.gtid_mode)
    with socket.create_connection((host, port), timeout=timeout) as sock:
        while not until(assembler.position):
            data = sock.recv(65536)
            if not data:
                raise ConnectionError("the server closed the connection")
            recording.exchanges.append(("server", data))
            happenings = core.feed(data)
            outgoing = core.data_to_send()
            if outgoing:
                recording.exchanges.append(("client", outgoing))
                sock.sendall(outgoing)
            for happening in happenings:
                if isinstance(happening, EventReceived):
                    event = happening.decoded.event
                    if not isinstance(event, HeartbeatEvent):
                        assembler.feed(event)
                if isinstance(happening, StreamEnded):
                    return recording
            core.raise_error()
    return recording


def rechunked(data: bytes, sizes: Iterable[int]) -> Iterator[bytes]:
    """``data`` cut into pieces of the given sizes in turn (cycled)."""
    pieces = list(sizes)
    pos = 0
    index = 0
    while pos < len(data):
        size = pieces[index % len(pieces)]
        yield data[pos : pos + size]
        pos += size
        index += 1


@dataclass
class Replayed:
    happenings: list[Happening]
    sent: bytes
    items: list[CommittedGroup | ReceivedEvent]
    position: Position


def replay_session(recording: Recording, chunks: Iterable[bytes]) -> Replayed:
    """Feed the server's bytes (cut as ``chunks``) into a fresh core; what it did."""
    core = ReplicaConnection(recording.config, recording.start)
    assembler = GroupAssembler(recording.start, gtid_mode=recording.config.gtid_mode)
    happenings: list[Happening] = []
    sent = bytearray()
    items: list[CommittedGroup | ReceivedEvent] = []
    for chunk in chunks:
        new = core.feed(chunk)
        sent += core.data_to_send()
        happenings += new
        for happening in new:
            if isinstance(happening, EventReceived):
                event = happening.decoded.event
                if not isinstance(event, HeartbeatEvent):
                    items += assembler.feed(event)
    return Replayed(happenings, bytes(sent), items, assembler.position)
