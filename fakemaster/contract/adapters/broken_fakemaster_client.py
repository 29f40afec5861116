"""Deliberately broken clients for the contract tests: the project's own client
(:mod:`fakemaster.contract.adapters.fakemaster_client`) with exactly one flaw each, so that each
verdict of ``fakemaster check`` is seen failing with its reason::

    python -m fakemaster.contract.adapters.broken_fakemaster_client FLAW HOST PORT OUT

=================  =====================================================  ====================
FLAW               what the client does wrong                             the verdict it fails
=================  =====================================================  ====================
``null-value``     reports NULL for the last non-NULL column of every      changes as served
                   after image but the first (and applies it so)
``key-order``      delivers its first key-changing update (the first       per-key order
                   column changes) after the next change of the same
                   table touching the old or the new key
``lose-last``      never writes the last change it receives to its log     no loss
``duplicate-last`` writes the last change it receives twice, still         no duplicates
                   declaring exactly-once
``partial-image``  leaves the last column out of every before image        changes as served
                   (claiming the full image the binlog carried)
``ignore-ddl``     does not follow DDL: its tables keep their old          changes as served,
                   columns                                                 final tables
``xa-early``       hands an XA transaction's rows over at its XA PREPARE   no loss, changes as
                   (with that group's GTID), not at its XA COMMIT          served
=================  =====================================================  ====================

Everything else is the correct client's.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

from fakemaster.contract.adapters.fakemaster_client import Cells, Flaw, Reported, Write
from fakemaster.contract.adapters.fakemaster_client import main as _main

if TYPE_CHECKING:
    from fakemaster.client import ChangeStream
    from fakemaster.client.changes import ChangeEvent
    from fakemaster.client.position import CommittedGroup

__all__ = ["FLAWS", "main"]


class NullValue(Flaw):
    def images(
        self, op: str, before: Cells | None, after: Cells | None
    ) -> tuple[Cells | None, Cells | None]:
        if after is None:
            return before, after
        names = [name for name, value in list(after.items())[1:] if value is not None]
        return before, ({**after, names[-1]: None} if names else after)


class KeyOrder(Flaw):
    def __init__(self) -> None:
        self.held: Reported | None = None
        self.done = False

    @staticmethod
    def _first(image: Cells | None) -> tuple[str | None, ...]:
        return tuple(list(image.values())[:1]) if image else ()

    def deliver(self, change: Reported, write: Write) -> None:
        held = self.held
        if held is not None:
            keys = {self._first(held.before), self._first(held.after)}
            if change.table == held.table and keys & {
                self._first(change.before),
                self._first(change.after),
            }:
                write(change)  # the later change first,
                write(held)  # then the key change that committed before it
                self.held = None
                return
        elif (
            not self.done
            and change.op == "update"
            and self._first(change.before) != self._first(change.after)
        ):
            self.held, self.done = change, True
            return
        write(change)

    def finish(self, write: Write) -> None:
        if self.held is not None:
            write(self.held)


class LoseLast(Flaw):
    def __init__(self) -> None:
        self.held: Reported | None = None

    def deliver(self, change: Reported, write: Write) -> None:
        if self.held is not None:
            write(self.held)
        self.held = change

    def finish(self, write: Write) -> None:
        """The last change is never written."""


class DuplicateLast(LoseLast):
    def finish(self, write: Write) -> None:
        if self.held is not None:
            write(self.held)
            write(self.held)


class PartialImage(Flaw):
    def images(
        self, op: str, before: Cells | None, after: Cells | None
    ) -> tuple[Cells | None, Cells | None]:
        if before is None or len(before) < 2:
            return before, after
        return dict(list(before.items())[:-1]), after


class IgnoreDdl(Flaw):
    follows_ddl = False


class XaEarly(Flaw):
    def stream(self, stream: ChangeStream) -> ChangeStream:
        feed = stream.feed

        def early(group: CommittedGroup) -> list[ChangeEvent]:
            prepared = set(stream.prepared)
            out = feed(group)
            for xid in set(stream.prepared) - prepared:  # just prepared: hand it over now
                out += stream.prepared.pop(xid)
            return out

        stream.feed = early  # type: ignore[method-assign]
        return stream


FLAWS: dict[str, type[Flaw]] = {
    "null-value": NullValue,
    "key-order": KeyOrder,
    "lose-last": LoseLast,
    "duplicate-last": DuplicateLast,
    "partial-image": PartialImage,
    "ignore-ddl": IgnoreDdl,
    "xa-early": XaEarly,
}


def main(argv: Sequence[str] | None = None) -> int:
    words = list(sys.argv[1:] if argv is None else argv)
    if not words or words[0] not in FLAWS:
        print(
            f"usage: broken_fakemaster_client FLAW HOST PORT OUT; FLAW is one of {', '.join(FLAWS)}",
            file=sys.stderr,
        )
        return 2
    return _main(words[1:], flaw=FLAWS[words[0]]())


if __name__ == "__main__":
    sys.exit(main())
