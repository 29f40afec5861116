"""MariaDB GTID positions: text form, binlog state, and the checks of a dump by GTID.

Three kinds of GTID sets, as in the server (``sql/rpl_gtid.cc``):

* a *GTID list* (``0-1-5,1-2-9``): any GTIDs, in order (GTID_LIST events, ``@@gtid_binlog_state``);
* a :class:`GtidPosition`: one GTID per domain (``@slave_connect_state``, ``@slave_until_gtid``,
  ``BINLOG_GTID_POS()``); a domain given twice is an error;
* a :class:`BinlogState`: the last sequence number of every (domain, server id) pair, and which
  pair logged last in each domain (what a primary's binlog contains).

Orders follow the server's: entries come out in the order they were first inserted, and in a
binlog state the most recent GTID of a domain comes after the domain's other GTIDs.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

from fakemaster.vocabulary.errcodes import ER_DUPLICATE_GTID_DOMAIN, ER_INCORRECT_GTID_STATE
from fakemaster.vocabulary.errors import FakemasterError
from fakemaster.vocabulary.events import Gtid

__all__ = [
    "PURGED_MESSAGE",
    "BinlogState",
    "GtidPosition",
    "GtidStateError",
    "HashOrder",
    "StartPositionError",
    "check_start_position",
    "contains_all",
    "find_start_file",
    "format_gtid_list",
    "missing_start_error",
    "parse_gtid_list",
    "strict_hole_message",
]


MAX_UINT32 = 0xFFFFFFFF
MAX_UINT64 = 0xFFFFFFFFFFFFFFFF
_LEADING_BLANKS = " \t"
_DIGITS = frozenset("0123456789")


class GtidStateError(FakemasterError):
    """A GTID text a MariaDB primary rejects; ``errno`` and ``message`` are what it answers."""

    def __init__(self, errno: int, message: str) -> None:
        self.errno = errno
        self.message = message
        super().__init__(f"{errno}: {message}")


def _parse_number(text: str, pos: int, limit: int) -> tuple[int, int] | None:
    """An unsigned number at ``pos`` as ``my_strtoll10`` reads it (leading blanks and a '+'
    allowed, no '-'); None when there are no digits or the value exceeds ``limit``."""
    end = len(text)
    while pos < end and text[pos] in _LEADING_BLANKS:
        pos += 1
    if pos < end and text[pos] == "+":
        pos += 1
    start = pos
    while pos < end and text[pos] in _DIGITS:
        pos += 1
    if pos == start:
        return None
    value = int(text[start:pos])
    if value > limit:
        return None
    return value, pos


def _parse_gtid_at(text: str, pos: int) -> tuple[Gtid, int] | None:
    domain = _parse_number(text, pos, MAX_UINT32)
    if domain is None or domain[1] >= len(text) or text[domain[1]] != "-":
        return None
    server = _parse_number(text, domain[1] + 1, MAX_UINT32)
    if server is None or server[1] >= len(text) or text[server[1]] != "-":
        return None
    seq = _parse_number(text, server[1] + 1, MAX_UINT64)
    if seq is None:
        return None
    return Gtid(domain[0], server[0], seq[0]), seq[1]


def _as_text(text: str | bytes) -> str:
    return text.decode("utf-8", "surrogateescape") if isinstance(text, bytes) else text


def parse_gtid_list(text: str | bytes) -> list[Gtid]:
    """``D-S-N,D-S-N,...`` as the server parses it; the empty string is the empty list.

    Blanks may precede each number; nothing may follow the last one. GtidStateError 1941
    ("Could not parse GTID list") otherwise.
    """
    source = _as_text(text)
    gtids: list[Gtid] = []
    if source == "":
        return gtids
    pos = 0
    while True:
        parsed = _parse_gtid_at(source, pos)
        if parsed is None:
            raise GtidStateError(ER_INCORRECT_GTID_STATE, "Could not parse GTID list")
        gtid, pos = parsed
        gtids.append(gtid)
        if pos == len(source):
            return gtids
        if source[pos] != ",":
            raise GtidStateError(ER_INCORRECT_GTID_STATE, "Could not parse GTID list")
        pos += 1


def format_gtid_list(gtids: Iterable[Gtid]) -> str:
    return ",".join(str(gtid) for gtid in gtids)


_NO_RECORD = 0xFFFFFFFF
_LOWFIND, _LOWUSED, _HIGHFIND, _HIGHUSED = 1, 2, 4, 8
_MASK64 = (1 << 64) - 1


def _hash_uint32(key: int) -> int:
    """``my_hash_sort`` of a 4-byte little-endian key with the binary collation."""
    nr1, nr2 = 1, 4
    for byte in key.to_bytes(4, "little"):
        nr1 = (nr1 ^ ((((nr1 & 63) + nr2) * byte) + (nr1 << 8))) & _MASK64
        nr2 += 3
    return nr1 & 0xFFFFFFFF


def _hash_mask(hash_nr: int, buffmax: int, maxlength: int) -> int:
    if (hash_nr & (buffmax - 1)) < maxlength:
        return hash_nr & (buffmax - 1)
    return hash_nr & ((buffmax >> 1) - 1)


class HashOrder:
    """The iteration order of a MariaDB ``HASH`` (mysys/hash.c) keyed by a uint32.

    The server walks its GTID hashes in record-array order, which the linear-hashing insert
    reshuffles: domains 0 and 5 inserted in that order come out as 5, 0. Emulating
    ``my_hash_insert`` gives the same order, so the GTID lists the fake master writes match
    a real primary's byte for byte. A removal just drops the key (MariaDB moves the last
    record into the hole; nothing the fake master sends depends on the order after one).
    """

    __slots__ = ("_hashes", "_keys", "_next", "_blength")

    def __init__(self) -> None:
        self._hashes: list[int] = []
        self._keys: list[int] = []
        self._next: list[int] = []
        self._blength = 1

    def keys(self) -> list[int]:
        return list(self._keys)

    def copy(self) -> HashOrder:
        other = HashOrder()
        other._hashes = list(self._hashes)
        other._keys = list(self._keys)
        other._next = list(self._next)
        other._blength = self._blength
        return other

    def remove(self, key: int) -> None:
        keys = list(self._keys)
        keys.remove(key)
        self._hashes, self._keys, self._next, self._blength = [], [], [], 1
        for remaining in keys:
            self.insert(remaining)

    def insert(self, key: int) -> None:
        """``my_hash_insert`` of a new key (the caller makes sure it is not present)."""
        hashes, keys, links = self._hashes, self._keys, self._next
        records = len(keys)
        hashes.append(0)
        keys.append(0)
        links.append(_NO_RECORD)
        empty = records
        blength = self._blength
        halfbuff = blength >> 1
        first_index = records - halfbuff
        flag = 0
        gpos = gpos2 = -1
        low_rec = high_rec = (0, 0)
        idx = first_index
        if idx != records:
            while True:
                pos = idx
                hash_nr = hashes[pos]
                if flag == 0 and _hash_mask(hash_nr, blength, records) != first_index:
                    break
                if not hash_nr & halfbuff:  # the record stays in the lower half
                    if not flag & _LOWFIND:
                        if flag & _HIGHFIND:
                            flag = _LOWFIND | _HIGHFIND
                            gpos, low_rec, empty = empty, (hashes[pos], keys[pos]), pos
                        else:
                            flag = _LOWFIND | _LOWUSED
                            gpos, low_rec = pos, (hashes[pos], keys[pos])
                    else:
                        if not flag & _LOWUSED:
                            hashes[gpos], keys[gpos] = low_rec
                            links[gpos] = pos
                            flag = (flag & _HIGHFIND) | _LOWFIND | _LOWUSED
                        gpos, low_rec = pos, (hashes[pos], keys[pos])
                else:  # the record moves to the upper half
                    if not flag & _HIGHFIND:
                        flag = (flag & _LOWFIND) | _HIGHFIND
                        gpos2, empty, high_rec = empty, pos, (hashes[pos], keys[pos])
                    else:
                        if not flag & _HIGHUSED:
                            hashes[gpos2], keys[gpos2] = high_rec
                            links[gpos2] = pos
                            flag = (flag & _LOWFIND) | _HIGHFIND | _HIGHUSED
                        gpos2, high_rec = pos, (hashes[pos], keys[pos])
                idx = links[pos]
                if idx == _NO_RECORD:
                    break
            if flag & (_LOWFIND | _LOWUSED) == _LOWFIND:
                hashes[gpos], keys[gpos] = low_rec
                links[gpos] = _NO_RECORD
            if flag & (_HIGHFIND | _HIGHUSED) == _HIGHFIND:
                hashes[gpos2], keys[gpos2] = high_rec
                links[gpos2] = _NO_RECORD
        hash_nr = _hash_uint32(key)
        pos = _hash_mask(hash_nr, blength, records + 1)
        if pos == empty:
            links[pos] = _NO_RECORD
        else:
            hashes[empty], keys[empty], links[empty] = hashes[pos], keys[pos], links[pos]
            home = _hash_mask(hashes[pos], blength, records + 1)
            if pos == home:
                links[pos] = empty
            else:
                links[pos] = _NO_RECORD
                link = home
                while links[link] != pos:
                    link = links[link]
                links[link] = empty
        hashes[pos], keys[pos] = hash_nr, key
        if records + 1 == blength:
            self._blength = blength + blength


class GtidPosition:
    """One GTID per replication domain, in insertion order (``slave_connection_state``)."""

    __slots__ = ("_by_domain", "_order")

    def __init__(self, gtids: Iterable[Gtid] = ()) -> None:
        self._by_domain: dict[int, Gtid] = {}
        self._order = HashOrder()
        for gtid in gtids:
            self.update(gtid)

    @classmethod
    def parse(cls, text: str | bytes) -> GtidPosition:
        """Parse a replica's ``@slave_connect_state``: like :func:`parse_gtid_list`, and a domain
        given twice is GtidStateError 1943."""
        position = cls()
        for gtid in parse_gtid_list(text):
            existing = position._by_domain.get(gtid.domain_id)
            if existing is not None:
                raise GtidStateError(
                    ER_DUPLICATE_GTID_DOMAIN,
                    f"GTID {gtid} and {existing} conflict (duplicate domain id {gtid.domain_id})",
                )
            position.update(gtid)
        return position

    def update(self, gtid: Gtid) -> None:
        """Set the domain's GTID (the last one given for a domain wins)."""
        if gtid.domain_id not in self._by_domain:
            self._order.insert(gtid.domain_id)
        self._by_domain[gtid.domain_id] = gtid

    def find(self, domain_id: int) -> Gtid | None:
        return self._by_domain.get(domain_id)

    def remove(self, domain_id: int) -> None:
        if self._by_domain.pop(domain_id, None) is not None:
            self._order.remove(domain_id)

    def domains(self) -> list[int]:
        """The domains, in the server's hash order."""
        return self._order.keys()

    def copy(self) -> GtidPosition:
        position = GtidPosition()
        position._by_domain = dict(self._by_domain)
        position._order = self._order.copy()
        return position

    def __len__(self) -> int:
        return len(self._by_domain)

    def __iter__(self) -> Iterator[Gtid]:
        by_domain = self._by_domain
        return iter([by_domain[domain] for domain in self._order.keys()])

    def __contains__(self, domain_id: object) -> bool:
        return domain_id in self._by_domain

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, GtidPosition):
            return NotImplemented
        return self._by_domain == other._by_domain

    def __str__(self) -> str:
        return format_gtid_list(self)

    def __repr__(self) -> str:
        return f"GtidPosition({str(self)!r})"


class BinlogState:
    """The GTIDs a binlog holds (``rpl_binlog_state``): per domain, the last sequence number of
    each server id, which server logged the domain's most recent GTID, and the highest
    sequence number seen. Domains and server ids iterate in the server's hash order."""

    __slots__ = ("_domains", "_last", "_counter", "_domain_order", "_server_orders")

    def __init__(self, gtids: Iterable[Gtid] = ()) -> None:
        self._domains: dict[int, dict[int, int]] = {}
        self._last: dict[int, int] = {}
        self._counter: dict[int, int] = {}
        self._domain_order = HashOrder()
        self._server_orders: dict[int, HashOrder] = {}
        for gtid in gtids:
            self.update(gtid)

    @classmethod
    def parse(cls, text: str | bytes) -> BinlogState:
        return cls(parse_gtid_list(text))

    def update(self, gtid: Gtid) -> None:
        domain_id = gtid.domain_id
        servers = self._domains.get(domain_id)
        if servers is None:
            servers = self._domains[domain_id] = {}
            self._domain_order.insert(domain_id)
            self._server_orders[domain_id] = HashOrder()
        if gtid.server_id not in servers:
            self._server_orders[domain_id].insert(gtid.server_id)
        servers[gtid.server_id] = gtid.seq_no
        self._last[domain_id] = gtid.server_id
        if gtid.seq_no > self._counter.get(domain_id, -1):
            self._counter[domain_id] = gtid.seq_no

    def load(self, gtids: Iterable[Gtid]) -> None:
        """Replace the state by ``gtids`` applied in order."""
        self._domains.clear()
        self._last.clear()
        self._counter.clear()
        self._domain_order = HashOrder()
        self._server_orders.clear()
        for gtid in gtids:
            self.update(gtid)

    def find(self, domain_id: int, server_id: int) -> Gtid | None:
        """The last GTID of ``server_id`` in the domain."""
        servers = self._domains.get(domain_id)
        if servers is None or server_id not in servers:
            return None
        return Gtid(domain_id, server_id, servers[server_id])

    def most_recent(self, domain_id: int) -> Gtid | None:
        """The GTID logged last in the domain."""
        server_id = self._last.get(domain_id)
        if server_id is None:
            return None
        return Gtid(domain_id, server_id, self._domains[domain_id][server_id])

    def next_seq_no(self, domain_id: int) -> int:
        """The sequence number the primary would give the domain's next GTID."""
        return self._counter.get(domain_id, 0) + 1

    def domains(self) -> list[int]:
        return self._domain_order.keys()

    def gtid_list(self) -> tuple[Gtid, ...]:
        """All GTIDs, as the server lists them in a GTID_LIST event: domains in hash order,
        each domain's most recent GTID after its other ones."""
        out: list[Gtid] = []
        for domain_id in self._domain_order.keys():
            servers = self._domains[domain_id]
            last = self._last[domain_id]
            for server_id in self._server_orders[domain_id].keys():
                if server_id != last:
                    out.append(Gtid(domain_id, server_id, servers[server_id]))
            out.append(Gtid(domain_id, last, servers[last]))
        return tuple(out)

    def pos_string(self) -> str:
        """``@@gtid_binlog_pos``: each domain's most recent GTID, by domain id."""
        recent = [self.most_recent(domain) for domain in sorted(self._domains)]
        return format_gtid_list(gtid for gtid in recent if gtid is not None)

    def state_string(self) -> str:
        """``@@gtid_binlog_state``: every GTID, by domain id (a domain's most recent last)."""
        return format_gtid_list(sorted(self.gtid_list(), key=lambda gtid: gtid.domain_id))

    def copy(self) -> BinlogState:
        state = BinlogState()
        state._domains = {domain: dict(servers) for domain, servers in self._domains.items()}
        state._last = dict(self._last)
        state._counter = dict(self._counter)
        state._domain_order = self._domain_order.copy()
        state._server_orders = {
            domain: order.copy() for domain, order in self._server_orders.items()
        }
        return state

    def __len__(self) -> int:
        return sum(len(servers) for servers in self._domains.values())

    def __eq__(self, other: object) -> bool:
        """Same GTIDs and same most recent GTID per domain (the order is not compared)."""
        if not isinstance(other, BinlogState):
            return NotImplemented
        return self._domains == other._domains and self._last == other._last

    def __repr__(self) -> str:
        return f"BinlogState({format_gtid_list(self.gtid_list())!r})"


# --- the checks of a dump by GTID (sql_repl.cc) ------------------------------------------


@dataclass(frozen=True, slots=True)
class StartPositionError:
    """A replica's start GTID the binlog does not have (always sent as ERR 1236)."""

    gtid: Gtid
    # True: the binlog has higher sequence numbers in the domain (the replica diverged).
    diverged: bool

    @property
    def message(self) -> str:
        text = (
            f"Error: connecting slave requested to start from GTID {self.gtid}, "
            "which is not in the master's binlog"
        )
        if self.diverged:
            text += (
                ". Since the master's binlog contains GTIDs with higher sequence numbers, it "
                "probably means that the slave has diverged due to executing extra erroneous "
                "transactions"
            )
        return text


def missing_start_error(gtid: Gtid, binlog_state: BinlogState) -> StartPositionError:
    recent = binlog_state.most_recent(gtid.domain_id)
    return StartPositionError(gtid, recent is not None and recent.seq_no >= gtid.seq_no)


def check_start_position(
    position: GtidPosition,
    binlog_state: BinlogState,
    *,
    ignore_duplicates: bool = False,
    until: GtidPosition | None = None,
) -> tuple[StartPositionError | None, frozenset[int]]:
    """Whether the binlog can serve a replica starting after ``position``.

    Returns (error, empty domains): the error for the first GTID the binlog lacks, or None;
    and the domains the binlog has never seen (tolerated: another primary's domain, checked
    again if a GTID of the domain turns up while streaming). With ``ignore_duplicates`` a
    GTID beyond the binlog's end is accepted. With an UNTIL position (``until``, modified), a
    missing start is accepted when the domain's stop position is already in the binlog (or
    absent): the domain is then done, and removed from ``until``.
    """
    empty: set[int] = set()
    for gtid in position:
        logged = binlog_state.find(gtid.domain_id, gtid.server_id)
        if logged is not None and logged.seq_no >= gtid.seq_no:
            continue
        recent = binlog_state.most_recent(gtid.domain_id)
        if recent is None:
            empty.add(gtid.domain_id)
            continue
        if ignore_duplicates and recent.seq_no < gtid.seq_no:
            # Another path of a multi-source topology may have brought it to the replica.
            continue
        if until is not None:
            stop = until.find(gtid.domain_id)
            if stop is None:
                continue
            stop_logged = binlog_state.find(stop.domain_id, stop.server_id)
            if stop_logged is not None and stop_logged.seq_no >= stop.seq_no:
                until.remove(stop.domain_id)
                continue
        return missing_start_error(gtid, binlog_state), frozenset(empty)
    return None, frozenset(empty)


def contains_all(position: GtidPosition, gtid_list: Sequence[Gtid]) -> bool:
    """Whether a binlog file whose GTID_LIST is ``gtid_list`` (the state before it) holds, or
    follows right after, every GTID the replica asks to start after."""
    for index, listed in enumerate(gtid_list):
        wanted = position.find(listed.domain_id)
        if wanted is None:
            # The replica needs the domain from its very beginning: an earlier file.
            return False
        if wanted.server_id == listed.server_id and wanted.seq_no <= listed.seq_no:
            if wanted.seq_no < listed.seq_no:
                return False
            # Equal is fine only if it is the domain's most recent GTID before this file.
            following = gtid_list[index + 1] if index + 1 < len(gtid_list) else None
            if following is not None and following.domain_id == listed.domain_id:
                return False
    return True


def find_start_file(
    position: GtidPosition,
    files: Sequence[tuple[str, Sequence[Gtid] | None]],
    until: GtidPosition | None = None,
) -> str | None:
    """The binlog file a dump by GTID starts with: the newest file whose GTID_LIST comes
    before every requested GTID (``files`` oldest first, with their GTID_LIST, None for a file
    without one). Domains whose requested GTID is exactly the file's starting point are
    removed from ``position`` (nothing of theirs is skipped), and UNTIL stop positions already
    passed before the file from ``until``. None: no such file (purged).
    """
    for name, gtid_list in reversed(files):
        if gtid_list is None:
            return name
        if contains_all(position, gtid_list):
            for listed in gtid_list:
                wanted = position.find(listed.domain_id)
                if (
                    wanted is not None
                    and wanted.server_id == listed.server_id
                    and wanted.seq_no == listed.seq_no
                ):
                    position.remove(listed.domain_id)
                stop = until.find(listed.domain_id) if until is not None else None
                if (
                    until is not None
                    and stop is not None
                    and stop.server_id == listed.server_id
                    and stop.seq_no <= listed.seq_no
                ):
                    until.remove(listed.domain_id)
            return name
    return None


PURGED_MESSAGE = (
    "Could not find GTID state requested by slave in any binlog files. Probably the slave "
    "state is too old and required binlog files have been purged."
)


def strict_hole_message(gtid: Gtid) -> str:
    return (
        f"The binlog on the master is missing the GTID {gtid} requested by the slave (even "
        "though both a prior and a subsequent sequence number does exist), and GTID strict "
        "mode is enabled"
    )
