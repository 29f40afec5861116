"""A CHECK constraint's condition as MariaDB 10.11's ``SHOW CREATE TABLE`` prints it.

The model keeps CHECK constraints without evaluating them. A condition written in the language
of :mod:`scenarios.expressions` with comparisons (``= <> != < <= > >=``), ``IS [NOT] NULL``,
``[NOT] BETWEEN``, ``[NOT] IN (...)``, ``[NOT] LIKE``, ``AND``/``&&``, ``OR``/``||``, ``XOR``,
``NOT`` of a comparison, and ``json_valid()`` is printed in the server's spelling (checked on
10.11: `` `a` >= 0``, ``between 1 and 5``, ``!=`` as ``<>``, ``NOT (e < 0)`` as `` `e` >= 0``,
operator words in lowercase, parentheses only where precedence needs them); any other is kept
as written (the server's own text then reads back as itself).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from scenarios.errors import SchemaError
from scenarios.expressions import Call, Expression, Literal, Operation, _Reader, show

__all__ = ["condition_text"]

_NEGATED = {"=": "<>", "<>": "=", "<": ">=", ">=": "<", ">": "<=", "<=": ">"}
_LEVEL = {"or": 1, "xor": 2, "and": 3}


@dataclass(frozen=True, slots=True)
class _Logic:
    operator: str  # or, xor, and
    parts: tuple[Any, ...]


@dataclass(frozen=True, slots=True)
class _Predicate:
    """A comparison or another predicate, already spelled (its operands are expressions)."""

    text: str
    negation: str | None  # the text of NOT (this), None when not modelled


class _Unread(Exception):
    pass


def _is_expression(node: Any) -> bool:
    return not isinstance(node, _Logic | _Predicate)


class _ConditionReader(_Reader):
    """The expression reader with the boolean layer on top."""

    def condition(self) -> Any:
        return self._logic("or", self._xor, ("OR",), "||")

    def _xor(self) -> Any:
        return self._logic("xor", self._and, ("XOR",), None)

    def _and(self) -> Any:
        return self._logic("and", self._not, ("AND",), "&&")

    def _logic(self, name: str, lower: Any, words: tuple[str, ...], doubled: str | None) -> Any:
        parts = [lower()]
        while self._word(*words) or doubled is not None and self._doubled(doubled):
            parts.append(lower())
        if len(parts) == 1:
            return parts[0]
        flat: list[Any] = []
        for part in parts:  # a chain of one operator is one list (as the server keeps it)
            if isinstance(part, _Logic) and part.operator == name and name != "xor":
                flat.extend(part.parts)
            else:
                flat.append(part)
        return _Logic(name, tuple(flat))

    def _word(self, *words: str) -> bool:
        token = self.peek()
        if token is not None and token.kind == "word" and token.upper in words:
            self.take()
            return True
        return False

    def _doubled(self, pair: str) -> bool:
        first = self.peek()
        if first is None or first.kind != "op" or first.text != pair[0]:
            return False
        following = self.tokens[self.pos + 1] if self.pos + 1 < len(self.tokens) else None
        if following is None or following.text != pair[1] or following.at != first.at + 1:
            return False
        self.take()
        self.take()
        return True

    def _not(self) -> Any:
        if self._word("NOT"):
            inner = self._not()
            if not isinstance(inner, _Predicate) or inner.negation is None:
                raise _Unread
            return _Predicate(inner.negation, inner.text)
        return self._predicate()

    def _predicate(self) -> Any:
        left = self.expression()
        if not _is_expression(left):
            return left
        spelled = _arithmetic(left)
        operator = self._comparison()
        if operator is not None:
            right = _arithmetic(self.expression())
            text = f"{spelled} {operator} {right}"
            return _Predicate(text, f"{spelled} {_NEGATED[operator]} {right}")
        if self._word("IS"):
            negated = self._word("NOT")
            if not self._word("NULL"):
                raise _Unread
            return _Predicate(f"{spelled} is {'not ' if negated else ''}null", None)
        negated = self._word("NOT")
        if self._word("BETWEEN"):
            low = _arithmetic(self.term_chain())
            if not self._word("AND"):
                raise _Unread
            high = _arithmetic(self.term_chain())
            text = f"between {low} and {high}"
        elif self._word("IN"):
            self.punct_or_unread("(")
            items = [_arithmetic(self.expression())]
            while self.is_punct(","):
                self.take()
                items.append(_arithmetic(self.expression()))
            self.punct_or_unread(")")
            text = f"in ({','.join(items)})"
        elif self._word("LIKE"):
            text = f"like {_arithmetic(self.expression())}"
        elif negated:
            raise _Unread
        else:
            return left  # a value: in parentheses inside arithmetic, or json_valid(...)
        # (NOT of these is not flipped here: not checked against the server)
        return _Predicate(f"{spelled} {'not ' if negated else ''}{text}", None)

    def term_chain(self) -> Expression:
        """BETWEEN's bounds: an expression without AND (AND closes the first bound)."""
        return self.expression()

    def punct_or_unread(self, char: str) -> None:
        if not self.is_punct(char):
            raise _Unread
        self.take()

    def _comparison(self) -> str | None:
        token = self.peek()
        if token is None:
            return None
        following = self.tokens[self.pos + 1] if self.pos + 1 < len(self.tokens) else None
        joined = following is not None and following.at == token.at + 1
        if token.kind == "punct" and token.text == "=":
            self.take()
            return "="
        if token.kind != "op" or token.text not in "<>!":
            return None
        self.take()
        second = following.text if joined and following is not None else ""
        if token.text == "!" and second == "=":
            self.take()
            return "<>"
        if token.text == "<" and second in ("=", ">"):
            self.take()
            return "<=" if second == "=" else "<>"
        if token.text == ">" and second == "=":
            self.take()
            return ">="
        if token.text in "<>":
            return token.text
        raise _Unread

    def primary(self) -> Expression:
        token = self.peek()
        if token is not None and token.kind == "punct" and token.text == "(":
            self.take()
            inner = self.condition()
            if not self.is_punct(")"):
                raise _Unread
            self.take()
            return inner  # type: ignore[no-any-return]
        if token is not None and token.kind == "word" and token.text.lower() == "json_valid":
            self.take()
            self.punct_or_unread("(")
            argument = self.expression()
            self.punct_or_unread(")")
            return Call("json_valid", (argument,))
        return super().primary()


def _arithmetic(node: Any) -> str:
    """An operand, spelled; a condition inside arithmetic is not modelled."""
    if not _is_expression(node) or not _plain(node):
        raise _Unread
    return show(node)


def _plain(node: Any) -> bool:
    if isinstance(node, Operation):
        return (node.left is None or _plain(node.left)) and _plain(node.right)
    if isinstance(node, Call):
        return all(_plain(argument) for argument in node.arguments)
    return _is_expression(node)


def _spell(node: Any, level: int) -> str:
    if isinstance(node, _Predicate):
        return node.text
    if isinstance(node, _Logic):
        own = _LEVEL[node.operator]
        text = f" {node.operator} ".join(_spell(part, own + 1) for part in node.parts)
        return f"({text})" if own < level else text
    if isinstance(node, Literal) or not _plain(node):
        raise _Unread  # a constant condition: not checked against the server
    return show(node)


def condition_text(tokens: list[Any], written: str) -> str:
    """The condition of ``tokens`` (inside CHECK's parentheses) as the server prints it, or
    ``written`` for a form not read here."""
    if sum(1 for token in tokens if token.kind == "punct" and token.text == "(") > 100:
        return written  # (the reader recurses into each parenthesis)
    reader = _ConditionReader(tokens, "CHECK")
    try:
        found = reader.condition()
        if reader.peek() is not None:
            return written
        return _spell(found, 0)
    except (_Unread, SchemaError, RecursionError):  # (RecursionError: a long NOT NOT ... chain)
        return written
