"""A ``PARTITION BY`` clause as MariaDB 10.11's ``SHOW CREATE TABLE`` prints it.

The model keeps the clause, it does not simulate partitions (a partitioned table logs its rows
as any other). Written forms it can read are printed in the server's spelling (checked on
10.11): ``[LINEAR] HASH (expr)``, ``[LINEAR] KEY [ALGORITHM=n] (columns)``, ``RANGE (expr)``,
``RANGE COLUMNS (columns)``, ``LIST (expr)``, ``LIST COLUMNS (columns)``, ``PARTITIONS n``,
``SUBPARTITION BY [LINEAR] HASH|KEY ... [SUBPARTITIONS n]`` and partition definitions
``PARTITION p VALUES LESS THAN (values)|MAXVALUE``, ``VALUES IN (values)``, ``DEFAULT``, with
``[STORAGE] ENGINE``; expressions in :mod:`scenarios.expressions`' language. Any other clause
(the server's own text among them: it reads back as itself) is kept as written.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from scenarios.errors import SchemaError
from scenarios.expressions import parse_expression, show

__all__ = ["partition_text"]


def _quote(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


class _Unread(Exception):
    """A form this module does not spell as the server does: keep the text as written."""


class _Reader:
    def __init__(self, tokens: list[Any]) -> None:
        self.tokens = tokens
        self.pos = 0

    def peek(self) -> Any:
        return self.tokens[self.pos] if self.pos < len(self.tokens) else None

    def take(self) -> Any:
        token = self.peek()
        if token is None:
            raise _Unread
        self.pos += 1
        return token

    def accept(self, *words: str) -> bool:
        token = self.peek()
        if token is not None and token.kind == "word" and token.upper in words:
            self.pos += 1
            return True
        return False

    def expect(self, *words: str) -> None:
        if not self.accept(*words):
            raise _Unread

    def is_punct(self, char: str) -> bool:
        token = self.peek()
        return token is not None and token.kind == "punct" and token.text == char

    def punct(self, char: str) -> None:
        if not self.is_punct(char):
            raise _Unread
        self.pos += 1

    def integer(self) -> int:
        token = self.take()
        if token.kind != "number" or not token.text.isdigit():
            raise _Unread
        return int(token.text)

    def parenthesised(self) -> list[Any]:
        self.punct("(")
        start = self.pos
        depth = 1
        while depth:
            token = self.take()
            if token.kind == "punct" and token.text in "()":
                depth += 1 if token.text == "(" else -1
        return self.tokens[start : self.pos - 1]

    def names(self) -> str:
        self.punct("(")
        found: list[str] = []
        while not self.is_punct(")"):
            token = self.take()
            if token.kind not in ("word", "quoted"):
                raise _Unread
            found.append(_quote(token.text))
            if not self.is_punct(")"):
                self.punct(",")
        self.punct(")")
        return ",".join(found)

    def expression(self) -> str:
        try:
            return show(parse_expression(self.parenthesised(), "PARTITION BY"))
        except SchemaError:
            raise _Unread from None

    def method(self, sub: bool) -> str:
        """[LINEAR] HASH (expr) | [LINEAR] KEY [ALGORITHM=n] (columns) | RANGE/LIST ..."""
        linear = "LINEAR " if self.accept("LINEAR") else ""
        if self.accept("HASH"):
            return f"{linear}HASH ({self.expression()})"
        if self.accept("KEY"):
            if self.accept("ALGORITHM"):
                self.accept_equals()
                self.integer()
            return f"{linear}KEY ({self.names()})"
        if linear or sub:
            raise _Unread
        kind = "RANGE" if self.accept("RANGE") else "LIST" if self.accept("LIST") else None
        if kind is None:
            raise _Unread
        if self.accept("COLUMNS"):
            return f"{kind}  COLUMNS({self.names()})"
        return f"{kind} ({self.expression()})"

    def accept_equals(self) -> None:
        token = self.peek()
        if token is not None and token.kind == "punct" and token.text == "=":
            self.pos += 1

    def value(self) -> tuple[Any, str]:
        token = self.take()
        if token.kind == "number":
            body = token.text.lstrip("+")
            if "e" in body.lower():
                raise _Unread
            number = int(body) if body.lstrip("-").isdigit() else Decimal(body)
            return number, str(number)
        if token.kind == "string":
            return token.text, "'" + token.text.replace("\\", "\\\\").replace("'", "\\'") + "'"
        if token.kind == "word" and token.upper in ("NULL", "MAXVALUE"):
            return None if token.upper == "NULL" else token.upper, token.upper
        raise _Unread

    def values(self, sort: bool) -> str:
        self.punct("(")
        found = [self.value()]
        while self.is_punct(","):
            self.pos += 1
            found.append(self.value())
        self.punct(")")
        if sort:  # VALUES IN of LIST: NULL first, the others as written (as 10.11 prints)
            found.sort(key=lambda item: item[0] is not None)
        return ",".join(text for _, text in found)

    def definition(self, sort_values: bool, engine: str) -> str:
        self.expect("PARTITION")
        token = self.take()
        if token.kind not in ("word", "quoted"):
            raise _Unread
        text = f"PARTITION {_quote(token.text)}"
        if self.accept("VALUES"):
            if self.accept("LESS"):
                self.expect("THAN")
                if self.accept("MAXVALUE"):
                    text += " VALUES LESS THAN MAXVALUE"
                else:
                    text += f" VALUES LESS THAN ({self.values(False)})"
            else:
                self.expect("IN")
                text += f" VALUES IN ({self.values(sort_values)})"
        elif self.accept("DEFAULT"):
            text += " DEFAULT"
        if self.accept("STORAGE"):
            self.expect("ENGINE")
            self.accept_equals()
            self.take()
        elif self.accept("ENGINE"):
            self.accept_equals()
            self.take()
        return f"{text} ENGINE = {engine}"


def partition_text(tokens: list[Any], written: str, engine: str) -> str:
    """The clause of ``tokens`` (from ``PARTITION`` on) as the server prints it, or
    ``written`` (its text as written) for a form not read here."""
    reader = _Reader(tokens)
    try:
        reader.expect("PARTITION")
        reader.expect("BY")
        method = reader.method(False)
        lines = [f"PARTITION BY {method}"]
        if reader.accept("PARTITIONS"):
            lines.append(f"PARTITIONS {reader.integer()}")
        if reader.accept("SUBPARTITION"):
            reader.expect("BY")
            lines.append(f"SUBPARTITION BY {reader.method(True)}")
            if reader.accept("SUBPARTITIONS"):
                lines.append(f"SUBPARTITIONS {reader.integer()}")
        if reader.is_punct("("):
            reader.pos += 1
            sort_values = method.startswith("LIST (")
            definitions = [reader.definition(sort_values, engine)]
            while reader.is_punct(","):
                reader.pos += 1
                definitions.append(reader.definition(sort_values, engine))
            reader.punct(")")
            lines = [line for line in lines if not line.startswith("PARTITIONS ")]  # the list
            lines.append("(" + ",\n ".join(definitions) + ")")
        if reader.peek() is not None and not reader.is_punct(";"):
            raise _Unread
        return "\n".join(lines)
    except _Unread:
        return written
