"""MariaDB sequences (``CREATE SEQUENCE``): the table a sequence is, and the rows ``NEXTVAL``,
``SETVAL`` and ``ALTER SEQUENCE ... RESTART`` make the server log.

A sequence is an 8-column table (``SHOW CREATE TABLE`` prints it with ``SEQUENCE=1``) holding one
row. The server logs that row only when it moves the *reserved* block (``cache`` values at a
time): a NEXTVAL that finds the block used up writes the row with ``next_not_cached_value``
moved past the new block, as a WRITE_ROWS event in a non-transactional group (GTID without the
transactional flag, closed by a ``COMMIT`` Query event), the other NEXTVALs log nothing. What a
real MariaDB 10.11 logs (tests/golden/table_kinds, tests/scenarios/test_sequences.py):

* ``CREATE SEQUENCE s1`` then NEXTVAL: 1, logging ``(1001, 1, 9223372036854775806, 1, 1, 1000,
  0, 0)``; the next NEXTVAL 2, logging nothing;
* a block that would pass ``maxvalue`` ends at ``maxvalue + 1``; past it a ``CYCLE`` sequence
  starts again at ``minvalue`` with ``cycle_count`` + 1, a ``NOCYCLE`` one fails (ER 4084);
* ``SETVAL(s, n)`` makes the next value n + increment; past the reserved block it logs the row
  with ``next_not_cached_value = n + increment`` (the next NEXTVAL reserves a block again), inside
  it nothing; a value whose successor is not beyond the next value changes nothing (SETVAL
  returns NULL);
* ``ALTER SEQUENCE s RESTART WITH n`` is a Query event; the next NEXTVAL is n, reserving a block.

This module models a sequence's state and those rows; :meth:`scenarios.history.Scenario.
create_sequence`, ``nextval`` and ``setval`` put them in a history.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from scenarios.errors import SchemaError
from scenarios.schema import Column, Table

__all__ = [
    "SEQUENCE_COLUMNS",
    "Sequence",
    "SequenceRunOut",
    "SequenceState",
    "is_create_sequence",
    "parse_create_sequence",
]

BIGINT_MAX = (1 << 63) - 1
# MariaDB's defaults: an ascending sequence ends at LONGLONG_MAX - 1, a descending one starts
# at -1 and ends at LONGLONG_MIN + 1.
_ASCENDING_MAX = BIGINT_MAX - 1
_DESCENDING_MIN = -BIGINT_MAX
_DEFAULT_CACHE = 1000

_START_COMMENT = "start value when sequences is created or value if RESTART is used"
_CYCLE_COMMENT = (
    "0 if no cycles are allowed, 1 if the sequence should begin a new cycle when maximum_value"
    " is passed"
)
# (name, unsigned, comment) of the sequence table's columns, as SHOW CREATE TABLE prints them.
_COLUMNS = (
    ("next_not_cached_value", False, ""),
    ("minimum_value", False, ""),
    ("maximum_value", False, ""),
    ("start_value", False, _START_COMMENT),
    ("increment", False, "increment value"),
    ("cache_size", True, ""),
    ("cycle_option", True, _CYCLE_COMMENT),
    ("cycle_count", False, "How many cycles have been done"),
)

# The columns of every sequence's table, in order.
SEQUENCE_COLUMNS = tuple(name for name, _, _ in _COLUMNS)
_CREATE_SEQUENCE = re.compile(r"\s*CREATE\s+(?:OR\s+REPLACE\s+)?SEQUENCE\b", re.IGNORECASE)


def is_create_sequence(text: str) -> bool:
    """Whether ``text`` is a CREATE SEQUENCE statement."""
    return _CREATE_SEQUENCE.match(text) is not None


class SequenceRunOut(SchemaError):
    """NEXTVAL of a NOCYCLE sequence past its end (the server's ER_SEQUENCE_RUN_OUT, 4084)."""


@dataclass(frozen=True, slots=True)
class Sequence:
    """A sequence's definition (what CREATE SEQUENCE says, defaults filled in)."""

    database: str
    name: str
    start: int
    minimum: int
    maximum: int
    increment: int
    cache: int
    cycle: bool
    engine: str = "InnoDB"

    def table(self) -> Table:
        """The sequence's table as the binlog's TABLE_MAP describes it."""
        columns = tuple(
            Column(
                name=name,
                type="tinyint" if name == "cycle_option" else "bigint",
                nullable=False,
                unsigned=unsigned,
                width=1 if name == "cycle_option" else 21,
                comment=comment,
            )
            for name, unsigned, comment in _COLUMNS
        )
        return Table(self.database, self.name, columns, engine=self.engine, sequence=True)

    def show_create_sequence(self) -> str:
        return (
            f"CREATE SEQUENCE {_quote(self.name)} start with {self.start} minvalue {self.minimum}"
            f" maxvalue {self.maximum} increment by {self.increment} cache {self.cache}"
            f" {'cycle' if self.cycle else 'nocycle'} ENGINE={self.engine}"
        )

    def create_sql(self) -> str:
        """The CREATE SEQUENCE statement that makes it (every option spelled out)."""
        return (
            f"CREATE SEQUENCE {_quote(self.database)}.{_quote(self.name)} START WITH"
            f" {self.start} MINVALUE {self.minimum} MAXVALUE {self.maximum} INCREMENT BY"
            f" {self.increment} CACHE {self.cache} {'CYCLE' if self.cycle else 'NOCYCLE'}"
            f" ENGINE={self.engine}"
        )

    def show_create_table(self) -> str:
        lines = []
        for name, unsigned, comment in _COLUMNS:
            kind = "tinyint(1)" if name == "cycle_option" else "bigint(21)"
            text = f"  {_quote(name)} {kind}{' unsigned' if unsigned else ''} NOT NULL"
            if comment:
                text += " COMMENT '" + comment.replace("'", "''") + "'"
            lines.append(text)
        body = ",\n".join(lines)
        return f"CREATE TABLE {_quote(self.name)} (\n{body}\n) ENGINE={self.engine} SEQUENCE=1"

    def start_state(self) -> SequenceState:
        return SequenceState(self, next_free=self.start, reserved=self.start, rounds=0)


@dataclass(frozen=True, slots=True)
class SequenceState:
    """The sequence's row: ``next_free`` the value the next NEXTVAL gives, ``reserved`` the
    logged ``next_not_cached_value`` (the end of the block in use), ``rounds`` its cycles."""

    sequence: Sequence
    next_free: int
    reserved: int
    rounds: int

    def row(self) -> tuple[int, ...]:
        """The row the server logs (the 8 columns, in order)."""
        s = self.sequence
        return (
            self.reserved,
            s.minimum,
            s.maximum,
            s.start,
            s.increment,
            s.cache,
            int(s.cycle),
            self.rounds,
        )

    def nextval(self) -> tuple[int, SequenceState, tuple[int, ...] | None]:
        """(the value, the state after, the row logged or None)."""
        s = self.sequence
        state = self
        if not s.minimum <= state.next_free <= s.maximum:
            if not s.cycle:
                raise SequenceRunOut(
                    f"Sequence '{s.database}.{s.name}' has run out (ER_SEQUENCE_RUN_OUT)"
                )
            first = s.minimum if s.increment > 0 else s.maximum
            state = replace(state, next_free=first, reserved=first, rounds=state.rounds + 1)
        value = state.next_free
        logged = None
        if (value >= state.reserved) if s.increment > 0 else (value <= state.reserved):
            # The block moves on from its old end (a SETVAL inside it left the values off the
            # start's grid: the end stays on it).
            end = state.reserved + max(s.cache, 1) * s.increment
            end = min(end, s.maximum + 1) if s.increment > 0 else max(end, s.minimum - 1)
            state = replace(state, reserved=end)
            logged = state.row()
        state = replace(state, next_free=value + s.increment)
        return value, state, logged

    def setval(self, value: int) -> tuple[SequenceState, tuple[int, ...] | None]:
        """SETVAL(s, value): the state after and the row logged (None: nothing logged)."""
        s = self.sequence
        after = value + s.increment
        passed = after <= self.next_free if s.increment > 0 else after >= self.next_free
        if passed:
            return self, None
        beyond = after > self.reserved if s.increment > 0 else after < self.reserved
        if not beyond:  # inside the reserved block: the row stays as it is, nothing logged
            return replace(self, next_free=after), None
        # The block's end stays within one step of the range (a value beyond it is logged as
        # maxvalue + 1, minvalue - 1 descending).
        end = min(after, s.maximum + 1) if s.increment > 0 else max(after, s.minimum - 1)
        state = replace(self, next_free=after, reserved=end)
        return state, state.row()

    def restart(self, value: int | None = None) -> SequenceState:
        """ALTER SEQUENCE ... RESTART [WITH value] (logged as its Query: no row)."""
        first = self.sequence.start if value is None else value
        return replace(self, next_free=first, reserved=first)


_TOKEN = re.compile(r"\s*(?:(`(?:[^`]|``)+`)|('(?:[^'\\]|\\.|'')*')|([-+]?\d+)|(\w+)|(=)|(\.))")


def _tokens(text: str) -> list[str]:
    out, pos = [], 0
    text = text.strip().rstrip(";")
    while pos < len(text):
        found = _TOKEN.match(text, pos)
        if found is None:
            rest = text[pos:].lstrip()
            if rest:
                at = len(text) - len(rest)
                raise SchemaError(f"CREATE SEQUENCE: unexpected {rest[:10]!r} at {at}")
            break
        out.append(next(group for group in found.groups() if group is not None))
        pos = found.end()
    return out


def _quote(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def _unquote(token: str) -> str:
    return token[1:-1].replace("``", "`") if token.startswith("`") else token


class _Reader:
    def __init__(self, tokens: list[str]) -> None:
        self.tokens = tokens
        self.pos = 0

    def peek(self) -> str:
        return self.tokens[self.pos].upper() if self.pos < len(self.tokens) else ""

    def take(self) -> str:
        if self.pos >= len(self.tokens):
            raise SchemaError("CREATE SEQUENCE: the statement ends early")
        self.pos += 1
        return self.tokens[self.pos - 1]

    def accept(self, *words: str) -> bool:
        if self.peek() in words:
            self.pos += 1
            return True
        return False

    def number(self, clause: str) -> int:
        self.accept("=")
        token = self.take()
        try:
            return int(token)
        except ValueError:
            raise SchemaError(f"CREATE SEQUENCE: {clause} takes a number, not {token!r}") from None


def _options(reader: _Reader) -> tuple[dict[str, int | bool | None], str]:
    found: dict[str, int | bool | None] = {}
    engine = "InnoDB"
    while reader.peek():
        word = reader.take().upper()
        if word == "START":
            reader.accept("WITH")
            found["start"] = reader.number("START")
        elif word in ("MINVALUE", "MAXVALUE"):
            found[word.lower()] = reader.number(word)
        elif word in ("NOMINVALUE", "NOMAXVALUE"):
            found[word[2:].lower()] = None
        elif word == "NO" and reader.peek() in ("MINVALUE", "MAXVALUE", "CYCLE"):
            kind = reader.take().lower()
            found[kind] = False if kind == "cycle" else None
        elif word == "INCREMENT":
            reader.accept("BY")
            found["increment"] = reader.number("INCREMENT")
        elif word == "CACHE":
            found["cache"] = reader.number("CACHE")
        elif word == "NOCACHE":
            found["cache"] = 0
        elif word in ("CYCLE", "NOCYCLE"):
            found["cycle"] = word == "CYCLE"
        elif word == "ENGINE":
            reader.accept("=")
            engine = _unquote(reader.take())
            engine = {"innodb": "InnoDB", "myisam": "MyISAM", "aria": "Aria"}.get(
                engine.lower(), engine
            )
        else:
            raise SchemaError(f"CREATE SEQUENCE: {word} is not modelled")
    return found, engine


def parse_create_sequence(text: str, database: str | None = None) -> Sequence:
    """The sequence ``CREATE SEQUENCE`` text declares (``database`` for an unqualified name);
    a SchemaError names the clause it does not take."""
    reader = _Reader(_tokens(text))
    if not (reader.accept("CREATE") and (reader.accept("SEQUENCE") or _or_replace(reader))):
        raise SchemaError("CREATE SEQUENCE: expected CREATE [OR REPLACE] SEQUENCE")
    if reader.accept("IF"):
        if not (reader.accept("NOT") and reader.accept("EXISTS")):
            raise SchemaError("CREATE SEQUENCE: expected IF NOT EXISTS")
    name = _unquote(reader.take())
    if reader.accept("."):
        database, name = name, _unquote(reader.take())
    if not database:
        raise SchemaError(f"CREATE SEQUENCE {name}: no database")
    found, engine = _options(reader)
    increment = int(found.get("increment") or 1) if found.get("increment") != 0 else 0
    if increment == 0:
        raise SchemaError(
            "CREATE SEQUENCE: INCREMENT BY 0 (auto_increment_increment) is not modelled"
        )
    ascending = increment > 0
    minimum = found.get("minvalue")
    maximum = found.get("maxvalue")
    low = int(minimum) if minimum is not None else (1 if ascending else _DESCENDING_MIN)
    high = int(maximum) if maximum is not None else (_ASCENDING_MAX if ascending else -1)
    start_given = found.get("start")
    start = int(start_given) if start_given is not None else (low if ascending else high)
    cache = found.get("cache")
    sequence = Sequence(
        database=database,
        name=name,
        start=start,
        minimum=low,
        maximum=high,
        increment=increment,
        cache=_DEFAULT_CACHE if cache is None else int(cache),
        cycle=bool(found.get("cycle", False)),
        engine=engine,
    )
    if not low <= start <= high or low >= high or sequence.cache < 0:
        raise SchemaError(
            f"CREATE SEQUENCE {name}: start {start}, minvalue {low}, maxvalue {high}, cache"
            f" {sequence.cache} (the server answers ER_SEQUENCE_INVALID_DATA)"
        )
    return sequence


def _or_replace(reader: _Reader) -> bool:
    return reader.accept("OR") and reader.accept("REPLACE") and reader.accept("SEQUENCE")
