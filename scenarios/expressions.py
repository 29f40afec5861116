"""The expressions of generated columns and of constant DEFAULT expressions: parsed from
``CREATE TABLE`` tokens, printed as MariaDB 10.11 prints them in ``SHOW CREATE TABLE``, and
evaluated as the server evaluates them.

The subset modelled (each spelling checked against a real 10.11): numbers, strings, column
names, ``+ - * /``, ``DIV``, ``MOD``/``%``, unary minus, parentheses, and the functions
``concat``, ``concat_ws``, ``upper``/``ucase``, ``lower``/``lcase``, ``ifnull``, ``coalesce``,
``abs``, ``char_length``, ``length``/``octet_length`` and ``left``. Values are integers, exact
decimals (``/`` gives the dividend's scale plus 4, ``div_precision_increment``, rounded half
away from zero) and text; NULL propagates as the server's does (``concat_ws`` skips it). A
column of another type in an expression, another function or operator is an error naming it.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal, localcontext
from typing import Any, Protocol

from scenarios.errors import HistoryError, SchemaError
from scenarios.schema import INTEGER_RANGES, Column
from scenarios.values import python_codec

__all__ = [
    "Call",
    "ColumnRef",
    "Expression",
    "Literal",
    "Operation",
    "evaluate",
    "fit",
    "parse_expression",
    "referenced_columns",
    "show",
    "show_default",
]


class TokenLike(Protocol):
    @property
    def kind(self) -> str: ...
    @property
    def text(self) -> str: ...
    @property
    def at(self) -> int: ...
    @property
    def upper(self) -> str: ...


@dataclass(frozen=True, slots=True)
class Literal:
    value: int | Decimal | str
    text: str  # as the server prints it


@dataclass(frozen=True, slots=True)
class ColumnRef:
    name: str


@dataclass(frozen=True, slots=True)
class Operation:
    """A binary operator (``left`` and ``right``) or unary minus (``left`` None)."""

    operator: str  # + - * / DIV MOD
    left: Expression | None
    right: Expression


@dataclass(frozen=True, slots=True)
class Call:
    function: str  # the server's own name (ucase for upper...)
    arguments: tuple[Expression, ...]


Expression = Literal | ColumnRef | Operation | Call

# Function spellings -> (the name the server prints, argument counts allowed).
_FUNCTIONS: dict[str, tuple[str, tuple[int, int]]] = {
    "concat": ("concat", (1, 255)),
    "concat_ws": ("concat_ws", (2, 255)),
    "upper": ("ucase", (1, 1)),
    "ucase": ("ucase", (1, 1)),
    "lower": ("lcase", (1, 1)),
    "lcase": ("lcase", (1, 1)),
    "ifnull": ("ifnull", (2, 2)),
    "coalesce": ("coalesce", (1, 255)),
    "abs": ("abs", (1, 1)),
    "char_length": ("char_length", (1, 1)),
    "character_length": ("char_length", (1, 1)),
    "length": ("octet_length", (1, 1)),
    "octet_length": ("octet_length", (1, 1)),
    "left": ("left", (2, 2)),
}
_ADDITIVE = ("+", "-")
_MULTIPLICATIVE = ("*", "/", "DIV", "MOD")
_PRECEDENCE = {"+": 1, "-": 1, "*": 2, "/": 2, "DIV": 2, "MOD": 2}


class _Reader:
    def __init__(self, tokens: list[TokenLike], what: str) -> None:
        self.tokens = tokens
        self.pos = 0
        self.what = what
        self.split: TokenLike | None = None  # the number left of a sign taken as an operator

    def fail(self, expected: str) -> SchemaError:
        token = self.peek()
        where = "at the end" if token is None else f"at {token.at} ({token.text!r})"
        return SchemaError(f"CREATE TABLE: {self.what}: expected {expected} {where}")

    def peek(self) -> TokenLike | None:
        if self.split is not None:
            return self.split
        return self.tokens[self.pos] if self.pos < len(self.tokens) else None

    def take(self) -> TokenLike:
        token = self.peek()
        if token is None:
            raise self.fail("more")
        if self.split is not None:
            self.split = None
        else:
            self.pos += 1
        return token

    def is_punct(self, char: str) -> bool:
        token = self.peek()
        return token is not None and token.kind == "punct" and token.text == char

    def operator(self, choices: tuple[str, ...]) -> str | None:
        """The operator next among ``choices``, taken; a signed number after an operand
        (``a+1`` is ``a``, ``+1`` to the tokenizer) is split into the sign and the number."""
        token = self.peek()
        if token is None:
            return None
        if token.kind == "number" and token.text[:1] in "+-" and token.text[:1] in choices:
            self.take()
            self.split = _Split("number", token.text[1:], token.at + 1)
            return token.text[:1]
        if token.kind == "op" and token.text in choices:
            self.take()
            return token.text
        if token.kind == "op" and token.text == "%" and "MOD" in choices:
            self.take()
            return "MOD"
        if token.kind == "word" and token.upper in choices:
            self.take()
            return token.upper
        return None

    def expression(self) -> Expression:
        left = self.term()
        while (operator := self.operator(_ADDITIVE)) is not None:
            left = Operation(operator, left, self.term())
        return left

    def term(self) -> Expression:
        left = self.unary()
        while (operator := self.operator(_MULTIPLICATIVE)) is not None:
            left = Operation(operator, left, self.unary())
        return left

    def unary(self) -> Expression:
        token = self.peek()
        if token is not None and token.kind == "op" and token.text == "-":
            self.take()
            return Operation("-", None, self.unary())
        return self.primary()

    def primary(self) -> Expression:
        token = self.take()
        if token.kind == "punct" and token.text == "(":
            inner = self.expression()
            if not self.is_punct(")"):
                raise self.fail("')'")
            self.take()
            return inner
        if token.kind == "number":
            return _number(token.text)
        if token.kind == "string":
            return Literal(token.text, _string_text(token.text))
        if token.kind == "word" and self.is_punct("("):
            return self.call(token)
        if token.kind in ("word", "quoted") and token.upper not in ("NULL", "TRUE", "FALSE"):
            return ColumnRef(token.text)
        raise SchemaError(
            f"CREATE TABLE: {self.what}: {token.text!r} at {token.at} is not modelled in an"
            " expression"
        )

    def call(self, token: TokenLike) -> Call:
        known = _FUNCTIONS.get(token.text.lower())
        if known is None:
            raise SchemaError(
                f"CREATE TABLE: {self.what}: function {token.text}() at {token.at} is not modelled"
            )
        self.take()  # (
        arguments = [self.expression()]
        while self.is_punct(","):
            self.take()
            arguments.append(self.expression())
        if not self.is_punct(")"):
            raise self.fail("')'")
        self.take()
        name, (least, most) = known
        if not least <= len(arguments) <= most:
            raise SchemaError(
                f"CREATE TABLE: {self.what}: {token.text}() at {token.at} takes"
                f" {least if least == most else f'{least} or more'} arguments"
            )
        return Call(name, tuple(arguments))


@dataclass(frozen=True, slots=True)
class _Split:
    kind: str
    text: str
    at: int

    @property
    def upper(self) -> str:
        return ""


def _number(text: str) -> Literal:
    if "e" in text.lower():
        raise SchemaError(f"CREATE TABLE: the approximate number {text} is not modelled")
    negative = text.startswith("-")
    body = text.lstrip("+-")
    value: int | Decimal = int(body) if body.isdigit() else Decimal(body)
    value = -value if negative else value
    return Literal(
        value, str(value) if isinstance(value, int) else ("-" if negative else "") + body
    )


def _string_text(text: str) -> str:
    # As the server prints a string in an expression: backslash and quote escaped.
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def parse_expression(tokens: list[Any], what: str) -> Expression:
    """The expression of ``tokens`` (inside the parentheses); ``what`` names it in errors."""
    if sum(1 for token in tokens if token.kind == "punct" and token.text == "(") > _MAX_NESTING:
        raise SchemaError(f"CREATE TABLE: {what}: more than {_MAX_NESTING} parentheses")
    reader = _Reader(tokens, what)
    try:
        found = reader.expression()
    except RecursionError:  # (a long chain of unary minus)
        raise SchemaError(f"CREATE TABLE: {what}: nested too deeply") from None
    if reader.peek() is not None:
        raise reader.fail("an operator or the end of the expression")
    return found


# Parentheses an expression may hold (the parser recurses into each: bounded well below
# Python's recursion limit).
_MAX_NESTING = 100


def _quote(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def show(expression: Expression) -> str:
    """``expression`` as SHOW CREATE TABLE prints it (operators spaced, names quoted,
    parentheses only where precedence needs them)."""
    if isinstance(expression, Literal):
        return expression.text
    if isinstance(expression, ColumnRef):
        return _quote(expression.name)
    if isinstance(expression, Call):
        return f"{expression.function}({','.join(map(show, expression.arguments))})"
    if expression.left is None:
        return "-" + _operand(expression.right, 3, False)
    level = _PRECEDENCE[expression.operator]
    left = _operand(expression.left, level, False)
    return f"{left} {expression.operator} {_operand(expression.right, level, True)}"


def _operand(expression: Expression, level: int, right: bool) -> str:
    text = show(expression)
    if isinstance(expression, Operation) and expression.left is not None:
        inner = _PRECEDENCE[expression.operator]
        if inner < level or right and inner == level:
            return f"({text})"
    return text


def show_default(expression: Expression) -> str:
    """A DEFAULT expression as the server prints it: an operation in parentheses, a function
    call or a literal bare."""
    if isinstance(expression, Operation) and expression.left is not None:
        return f"({show(expression)})"
    return show(expression)


def referenced_columns(expression: Expression) -> list[str]:
    if isinstance(expression, ColumnRef):
        return [expression.name]
    if isinstance(expression, Operation):
        found = [] if expression.left is None else referenced_columns(expression.left)
        return found + referenced_columns(expression.right)
    if isinstance(expression, Call):
        return [name for argument in expression.arguments for name in referenced_columns(argument)]
    return []


# --- evaluation -------------------------------------------------------------------------

Value = int | Decimal | str | None


def evaluate(expression: Expression, row: dict[str, tuple[Column, Any]]) -> Value:
    """The value of ``expression`` over ``row`` (lowercase column name -> the column and its
    model value)."""
    if isinstance(expression, Literal):
        return expression.value
    if isinstance(expression, ColumnRef):
        column, value = row[expression.name.lower()]
        return _sql_value(column, value)
    if isinstance(expression, Call):
        return _call(expression, row)
    right = evaluate(expression.right, row)
    if expression.left is None:
        return None if right is None else -_number_of(right)
    left = evaluate(expression.left, row)
    if left is None or right is None:
        return None
    return _arithmetic(expression.operator, _number_of(left), _number_of(right))


def _sql_value(column: Column, value: Any) -> Value:
    if value is None or isinstance(value, int | Decimal) and column.type != "bit":
        return value
    if column.is_text and isinstance(value, bytes):
        return value.decode(python_codec(column.charset) or "latin-1")
    raise HistoryError(f"column {column.name} ({column.type}) in an expression is not modelled")


def _number_of(value: int | Decimal | str) -> int | Decimal:
    if isinstance(value, str):
        raise HistoryError(f"text {value!r} in arithmetic is not modelled")
    return value


def _arithmetic(operator: str, left: int | Decimal, right: int | Decimal) -> Value:
    with localcontext() as context:
        context.prec = 100
        if operator == "+":
            return left + right
        if operator == "-":
            return left - right
        if operator == "*":
            return left * right
        if not right:
            raise HistoryError("a division by zero in an expression (the server refuses it)")
        if operator == "/":
            exponent = Decimal(left).as_tuple().exponent
            scale = max(-exponent, 0) if isinstance(exponent, int) else 0
            quotient = Decimal(left) / Decimal(right)
            return quotient.quantize(Decimal(1).scaleb(-(scale + 4)), rounding=ROUND_HALF_UP)
        if operator == "DIV":
            whole = abs(Decimal(left) / Decimal(right)).to_integral_value(rounding="ROUND_DOWN")
            return int(whole) * (1 if (left < 0) == (right < 0) else -1)
        if isinstance(left, int) and isinstance(right, int):
            remainder = abs(left) % abs(right)  # MOD: the dividend's sign
            return remainder if left >= 0 else -remainder
        return Decimal(left) % Decimal(right)  # a Decimal's remainder: the dividend's sign


def _text_of(value: int | Decimal | str) -> str:
    return value if isinstance(value, str) else str(value)


def _call(call: Call, row: dict[str, tuple[Column, Any]]) -> Value:
    values = [evaluate(argument, row) for argument in call.arguments]
    name = call.function
    if name in ("coalesce", "ifnull"):
        found: Value = next((value for value in values if value is not None), None)
        return found
    if name == "concat_ws":
        if values[0] is None:
            return None
        separator = _text_of(values[0])
        return separator.join(_text_of(value) for value in values[1:] if value is not None)
    if any(value is None for value in values):
        return None
    present = [value for value in values if value is not None]
    if name == "concat":
        return "".join(map(_text_of, present))
    if name == "abs":
        number = _number_of(present[0])
        return -number if number < 0 else number
    if name == "left":
        count = _number_of(present[1])
        return _text_of(present[0])[: max(int(count), 0)]
    text = _text_of(present[0])
    if name == "ucase":
        return text.upper()
    if name == "lcase":
        return text.lower()
    if name == "char_length":
        return len(text)
    return len(text.encode("utf-8"))  # octet_length (of utf8mb4 text)


def fit(column: Column, value: Value) -> Any:
    """``value`` as ``column`` stores it: a number rounded half away from zero to an integer
    column or to a DECIMAL's scale, a number written as text in a character column."""
    if value is None:
        return None
    if column.type in INTEGER_RANGES:
        if isinstance(value, str):
            raise HistoryError(f"column {column.name}: text {value!r} to an integer")
        return int(Decimal(value).to_integral_value(rounding=ROUND_HALF_UP))
    if column.type == "decimal":
        if isinstance(value, str):
            raise HistoryError(f"column {column.name}: text {value!r} to a decimal")
        exponent = Decimal(1).scaleb(-(column.scale or 0))
        return Decimal(value).quantize(exponent, rounding=ROUND_HALF_UP)
    text = _text_of(value)
    return text.rstrip(" ") if column.type == "char" else text
