"""Just enough SQL lexing and expression parsing for the statements a fake master answers.

Tokens keep their offsets in the original text: a result column is named after the text of its
expression as the client wrote it, and a syntax error quotes the statement from the first
rejected token, as MariaDB does.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from decimal import Decimal
from enum import Enum

from fakemaster.protocol.resultset import (
    SqlError,
    parser_stack_exhausted,
    sql_error,
    syntax_error,
)
from fakemaster.vocabulary.errcodes import ER_BAD_FIELD_ERROR

__all__ = [
    "COMPARISON_OPS",
    "MAX_NESTING",
    "RESERVED",
    "DEFAULT_VERSION_ID",
    "Comparison",
    "DefaultValue",
    "Expr",
    "FunctionCall",
    "LexedText",
    "Literal",
    "IntervalShift",
    "Negation",
    "Parser",
    "StatementText",
    "SysVarRef",
    "Tok",
    "Token",
    "UserVarAssignment",
    "UserVarRef",
    "Word",
    "lex",
    "line_of",
    "split_statements",
    "tokenize",
    "unknown_column",
    "version_id",
    "without_cuts",
]


class Tok(Enum):
    WORD = "word"  # identifier or keyword
    QUOTED_IDENT = "quoted identifier"
    STRING = "string"
    NUMBER = "number"
    HEX = "hex"
    USER_VAR = "user variable"
    SYS_VAR = "system variable"
    OP = "operator"
    END = "end"


# Not frozen: a frozen dataclass sets each field through object.__setattr__, which made
# building a token cost 7x more, per token of every statement (nothing changes a token).
@dataclass(slots=True, unsafe_hash=True)
class Token:
    kind: Tok
    text: str  # the token's value: name, unquoted string, operator...
    start: int
    end: int
    # STRING: the character set introducer (_latin1'x'), lower-case, if any.
    # SYS_VAR: the scope written before the name (global/session/local), lower-case, or "".
    extra: str = ""
    raw: bytes = b""  # HEX: the bytes

    def is_word(self, *words: str) -> bool:
        return self.kind is Tok.WORD and self.text.upper() in words

    def is_op(self, *ops: str) -> bool:
        return self.kind is Tok.OP and self.text in ops


# Blanks and line comments: "-- " needs a blank or control character (or the end) after the
# dashes, "#" does not; both run to the end of the line.
_BLANK = re.compile(r"\s+|--(?=[\x00-\x20\x7f]|\Z)[^\n]*\n?|#[^\n]*\n?")
# An executable comment's marker: "/*!" or "/*M!", then (for a version) exactly 5 or 6 digits.
_EXECUTABLE = re.compile(r"/\*(M?)!(\d{5}\d?)?")
# MySQL 5.7 and later versions MariaDB does not follow: /*!NNNNN in this range is a comment
# (but /*M!NNNNN is not), as sql_lex.cc reads it.
_MYSQL_ONLY_VERSIONS = range(50700, 100000)
# Word characters: ASCII letters and digits, "_", "$" and every character beyond ASCII. Each
# class here is written as the ASCII characters it leaves out: the same set (compared with the
# written-out one in tests/fakemaster/sql/test_sqltext_patterns.py), but a class with a range up
# to U+10FFFF takes re about 4 ms to compile, three of them on the first client's first query.
_WORD_CHAR = r"[^\x00-\x23\x25-\x2f\x3a-\x40\x5b-\x5e\x60\x7b-\x7f]"
# A word character or a quote (a word followed by a quote is a character set introducer).
_WORD_CHAR_OR_QUOTE = r"[^\x00-\x21\x23\x25\x26\x28-\x2f\x3a-\x40\x5b-\x5e\x60\x7b-\x7f]"
# A word character or "." (a variable's name: @@global.x).
_VAR_NAME_CHAR = r"[^\x00-\x23\x25-\x2d\x2f\x3a-\x40\x5b-\x5e\x60\x7b-\x7f]"
_WORD = re.compile(_WORD_CHAR + "+")
_NUMBER = re.compile(r"(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")
_HEX = re.compile(r"0x([0-9A-Fa-f]+)|[xX]'([0-9A-Fa-f]*)'")
_OPERATORS = (
    ":=",
    "<=>",
    "<>",
    "!=",
    "<=",
    ">=",
    "||",
    "&&",
    "=",
    "<",
    ">",
    "(",
    ")",
    ",",
    ";",
    ".",
    "+",
    "-",
    "*",
    "/",
    "%",
    "!",
    "~",
    "^",
    "&",
    "|",
)
# The tokens nearly every statement is made of (words, numbers, hex, operators), after plain
# blanks, in one match: the other cases (quotes, comments, variables, a word before a quote,
# a "-", "/" or "*" that may start or end a comment, the end) go the long way in lex(). Each
# alternative reads what the long way would: a number is one only when no word character
# follows it (atomic: no shorter number is tried), hex comes before numbers; blanks are taken
# whole (possessive: a blank is never read as a word character).
_FAST_TOKEN = re.compile(
    r"\s*+(?:"
    r"(?P<hex>0x([0-9A-Fa-f]+))"
    rf"|(?P<number>(?>(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?))(?!{_WORD_CHAR})"
    rf"|(?P<word>{_WORD_CHAR}+)(?!{_WORD_CHAR_OR_QUOTE})"
    r"|(?P<op>:=|<=>|<>|!=|<=|>=|\|\||&&|[=<>(),;.+%!~^&|]|-(?!-)|/(?!\*)|\*(?!/))"
    r")"
)
_VAR_NAME = re.compile(_VAR_NAME_CHAR + "+")
_SCOPES = ("global", "session", "local")


@dataclass(frozen=True, slots=True)
class LexedText:
    """A query's tokens and the two views of its text the server's lexer gives.

    ``plain`` is the text with every comment, and every executable comment's markers, turned
    into blanks (same length, same offsets): what the statement table's patterns read, so that
    ``SHOW /*!50002 FULL*/ TABLES`` is ``SHOW FULL TABLES``. ``cuts`` are the spans MariaDB's
    preprocessed text leaves out (executable markers, comments for a later version): a
    column named after its expression is named without them, plain comments kept."""

    tokens: list[Token]
    plain: str
    cuts: list[tuple[int, int]]
    found_comment: bool  # a comment of any kind: a query of comments only is OK, not empty


# The version a statement's executable comments are read for when none is given: the default
# served version (10.11.19).
DEFAULT_VERSION_ID = 101119


def version_id(version: str) -> int:
    """MYSQL_VERSION_ID of a version string: "10.11.19-MariaDB-log" is 101119."""
    match = re.match(r"(\d+)\.(\d+)\.(\d+)", version)
    if match is None:
        return DEFAULT_VERSION_ID
    major, minor, patch = (int(part) for part in match.groups())
    return major * 10000 + minor * 100 + patch


class _Comments:
    """Skips blanks and comments as sql_lex.cc does, one place for every kind of comment.

    Each character is looked at a bounded number of times (``str.find`` and anchored
    patterns that stop at the comment's end): linear in the text however many comments,
    unterminated ones included."""

    def __init__(self, text: str, served_version: int) -> None:
        self.text = text
        self.version = served_version
        self.executing = False  # inside a /*! comment whose content is SQL
        self.blanks: list[tuple[int, int]] = []
        self.cuts: list[tuple[int, int]] = []
        self.found_comment = False

    def skip(self, pos: int) -> int:
        """The offset of the next token at or after ``pos`` (or the end of the text)."""
        text = self.text
        while True:
            match = _BLANK.match(text, pos)
            if match:
                if text[pos] in "-#":
                    self.found_comment = True
                    self.blanks.append((pos, match.end()))
                pos = match.end()
                continue
            if text.startswith("/*", pos):
                pos = self._long_comment(pos)
                continue
            if self.executing and text.startswith("*/", pos):
                self.executing = False
                self._cut(pos, pos + 2)
                pos += 2
                continue
            if pos >= len(text) and self.executing:
                # An executable comment left open: MariaDB rejects the query at its end.
                raise syntax_error("", line_of(text, pos))
            return pos

    def _long_comment(self, pos: int) -> int:
        text = self.text
        self.found_comment = True
        marker = _EXECUTABLE.match(text, pos)
        if marker is None:  # a plain comment: up to the first "*/", no nesting
            close = text.find("*/", pos + 2)
            if close < 0:
                raise syntax_error(text[pos:], line_of(text, pos))
            self.blanks.append((pos, close + 2))
            return close + 2
        digits = marker.group(2)
        if digits is not None:
            version = int(digits)
            mariadb_only = bool(marker.group(1))
            if version > self.version or (version in _MYSQL_ONLY_VERSIONS and not mariadb_only):
                end = self._dropped_comment_end(marker.end())
                if end < 0:
                    raise syntax_error(text[pos:], line_of(text, pos))
                self._cut(pos, end)
                return end
        # Its content is SQL: only the marker goes (digits that are no version stay).
        self.executing = True
        self._cut(pos, marker.end())
        return marker.end()

    def _dropped_comment_end(self, pos: int) -> int:
        """The end of a comment for a later version, which may hold plain comments one level
        deep (``/*!99999 a /* b */ c */``); -1 when it is not closed."""
        text = self.text
        opening = text.find("/*", pos)
        while True:
            close = text.find("*/", pos)
            if close < 0:
                return -1
            if 0 <= opening < close:
                inner = text.find("*/", opening + 2)
                if inner < 0:
                    return -1
                pos = inner + 2
                opening = text.find("/*", pos)
                continue
            return close + 2

    def _cut(self, start: int, end: int) -> None:
        self.blanks.append((start, end))
        self.cuts.append((start, end))

    def plain(self) -> str:
        """The text with every blanked span made of spaces."""
        if not self.blanks:
            return self.text
        pieces: list[str] = []
        done = 0
        for start, end in self.blanks:
            pieces.append(self.text[done:start])
            pieces.append(" " * (end - start))
            done = end
        pieces.append(self.text[done:])
        return "".join(pieces)


def tokenize(text: str, served_version: int = DEFAULT_VERSION_ID) -> list[Token]:
    """Tokens of ``text`` ending with an END token; ER_PARSE_ERROR on an unterminated quote or
    comment."""
    return lex(text, served_version).tokens


def lex(text: str, served_version: int = DEFAULT_VERSION_ID) -> LexedText:
    """``text`` read as a server of ``served_version`` (MYSQL_VERSION_ID) reads it."""
    return _lex(text, served_version, _FAST_TOKEN.match)


def _never(text: str, pos: int) -> None:
    return None


def _lex(
    text: str, served_version: int, fast: Callable[[str, int], re.Match[str] | None]
) -> LexedText:
    """lex(), ``fast`` reading the common tokens in one match (_never: every token the long
    way, which the tests compare the one-match way with)."""
    tokens: list[Token] = []
    comments = _Comments(text, served_version)
    pos = 0
    length = len(text)
    append = tokens.append
    while True:
        match = fast(text, pos)
        if match is not None:
            kind: str = match.lastgroup  # type: ignore[assignment]  # one always matched
            start = match.start(kind)
            end = match.end()
            if kind == "word":
                append(Token(Tok.WORD, match.group(kind), start, end))
            elif kind == "number":
                append(Token(Tok.NUMBER, match.group(kind), start, end))
            elif kind == "op":
                append(Token(Tok.OP, match.group(kind), start, end))
            else:
                append(Token(Tok.HEX, match.group(kind), start, end, raw=_hex_bytes(match[2])))
            pos = end
            continue
        pos = comments.skip(pos)
        if pos >= length:
            tokens.append(Token(Tok.END, "", length, length))
            return LexedText(tokens, comments.plain(), comments.cuts, comments.found_comment)
        char = text[pos]
        if char in "'\"":
            value, end = _quoted(text, pos)
            tokens.append(Token(Tok.STRING, value, pos, end))
            pos = end
            continue
        if char == "`":
            value, end = _quoted(text, pos)
            tokens.append(Token(Tok.QUOTED_IDENT, value, pos, end))
            pos = end
            continue
        hex_match = _HEX.match(text, pos)
        if hex_match:
            digits = hex_match.group(1) if hex_match.group(1) is not None else hex_match.group(2)
            tokens.append(
                Token(Tok.HEX, hex_match.group(0), pos, hex_match.end(), raw=_hex_bytes(digits))
            )
            pos = hex_match.end()
            continue
        if char == "@":
            token = _variable(text, pos)
            tokens.append(token)
            pos = token.end
            continue
        number = _NUMBER.match(text, pos)
        if number and not _WORD.match(text, number.end()):
            tokens.append(Token(Tok.NUMBER, number.group(0), pos, number.end()))
            pos = number.end()
            continue
        word = _WORD.match(text, pos)
        if word:
            value = word.group(0)
            end = word.end()
            if value.startswith("_") and end < length and text[end] in "'\"":
                string, string_end = _quoted(text, end)
                tokens.append(Token(Tok.STRING, string, pos, string_end, extra=value[1:].lower()))
                pos = string_end
                continue
            tokens.append(Token(Tok.WORD, value, pos, end))
            pos = end
            continue
        for op in _OPERATORS:
            if text.startswith(op, pos):
                tokens.append(Token(Tok.OP, op, pos, pos + len(op)))
                pos += len(op)
                break
        else:
            raise syntax_error(text[pos:], line_of(text, pos))


def _hex_bytes(digits: str) -> bytes:
    return bytes.fromhex("0" + digits if len(digits) % 2 else digits)


def line_of(text: str, pos: int) -> int:
    return text.count("\n", 0, pos) + 1


# Inside quotes, the longest run of characters that need no attention: scanned by the regex
# engine in one go, so a 16 MiB literal is not a Python loop over its characters.
# At most 64 KiB a match: one regex call holds the GIL, and a 16 MiB literal read in one would
# hold it for tens of milliseconds against every other thread.
_QUOTED_RUN = {
    "'": re.compile(r"[^'\\]{1,65536}"),
    '"': re.compile(r'[^"\\]{1,65536}'),
    "`": re.compile(r"[^`]{1,65536}"),  # no backslash escapes in a quoted identifier
}


def _quoted(text: str, start: int) -> tuple[str, int]:
    quote = text[start]
    run = _QUOTED_RUN[quote]
    out: list[str] = []
    pos = start + 1
    length = len(text)
    while pos < length:
        chunk = run.match(text, pos)
        if chunk:
            out.append(chunk.group())
            pos = chunk.end()
            continue
        char = text[pos]
        if char == quote:
            if text.startswith(quote * 2, pos):
                out.append(quote)
                pos += 2
                continue
            return "".join(out), pos + 1
        if pos + 1 < length:  # a backslash escaping the next character
            out.append(_ESCAPES.get(text[pos + 1], text[pos + 1]))
            pos += 2
            continue
        break
    raise syntax_error(text[start:], line_of(text, start))


# As MariaDB reads a string literal: ``\%`` and ``\_`` keep their backslash (so that LIKE
# patterns can escape their wildcards: ``SHOW TABLES LIKE '%\_log'`` is headed by that text).
_ESCAPES = {
    "0": "\0",
    "b": "\b",
    "n": "\n",
    "r": "\r",
    "t": "\t",
    "Z": "\x1a",
    "%": "\\%",
    "_": "\\_",
}


def _variable(text: str, start: int) -> Token:
    if text.startswith("@@", start):
        pos = start + 2
        scope = ""
        lowered = text[pos : pos + 8].lower()
        for candidate in _SCOPES:
            if lowered.startswith(candidate + "."):
                scope = candidate
                pos += len(candidate) + 1
                break
        name, end = _var_name(text, pos)
        if not name:
            raise syntax_error(text[start:], line_of(text, start))
        return Token(Tok.SYS_VAR, name, start, end, extra=scope)
    name, end = _var_name(text, start + 1)
    return Token(Tok.USER_VAR, name, start, end)


def _var_name(text: str, pos: int) -> tuple[str, int]:
    if pos < len(text) and text[pos] in "`'\"":
        return _quoted(text, pos)
    match = _VAR_NAME.match(text, pos)
    if not match:
        return "", pos
    return match.group(0), match.end()


@dataclass(frozen=True, slots=True)
class StatementText:
    start: int  # offset of the first token in the whole query
    text: str  # from the first token to the ';' or the end
    tokens: list[Token]  # re-based on ``text``, ending with END
    plain: str = ""  # ``text`` with its comments blanked (see :class:`LexedText`)
    cuts: tuple[tuple[int, int], ...] = ()  # re-based on ``text``
    # The line of the whole query ``text`` starts on, as MariaDB counts for its errors: from
    # the start of the query for the first statement, from the first non-blank after the ';'
    # for the others (comments before the statement count).
    first_line: int = 1


_NOT_BLANK = re.compile(r"[^ \t\n\r\v\f]")


def split_statements(text: str, lexed: LexedText) -> list[StatementText]:
    """The statements of a multi-statement query, empty ones (";;") left out."""
    statements: list[StatementText] = []
    tokens = lexed.tokens
    cuts = lexed.cuts
    next_cut = 0  # the cuts are in text order, and so are the statements
    begin = 0  # where MariaDB starts counting the lines of the next statement
    first = 0  # index of the current statement's first token
    ends = [i for i, t in enumerate(tokens) if t.kind is Tok.OP and t.text == ";"]
    ends.append(len(tokens) - 1)  # the END token
    for last in ends:
        token = tokens[last]
        if last > first:
            start = tokens[first].start
            lines_before = text.count("\n", begin, start)
            piece = text[start : token.start]
            while next_cut < len(cuts) and cuts[next_cut][1] <= start:
                next_cut += 1
            mine: list[tuple[int, int]] = []
            while next_cut < len(cuts) and cuts[next_cut][0] < token.start:
                cut_start, cut_end = cuts[next_cut]
                mine.append((max(cut_start, start) - start, min(cut_end, token.start) - start))
                next_cut += 1
            statements.append(
                StatementText(
                    start,
                    piece,
                    _rebase(tokens[first:last], start, len(piece)),
                    lexed.plain[start : token.start],
                    tuple(mine),
                    1 + lines_before,
                )
            )
        first = last + 1
        blank = _NOT_BLANK.search(text, token.end)
        begin = blank.start() if blank else len(text)
    return statements


def _rebase(tokens: list[Token], base: int, length: int) -> list[Token]:
    # Nearly every query's (first) statement starts at its offset 0: its tokens are its own.
    if base:
        tokens = [
            Token(t.kind, t.text, t.start - base, t.end - base, t.extra, t.raw) for t in tokens
        ]
    tokens.append(Token(Tok.END, "", length, length))
    return tokens


def without_cuts(text: str, start: int, end: int, cuts: Sequence[tuple[int, int]]) -> str:
    """``text[start:end]`` without the spans in ``cuts`` (sorted, not overlapping): the
    expression as MariaDB's preprocessed text has it."""
    first = bisect_right(cuts, (start, -1))
    if first > 0 and cuts[first - 1][1] > start:
        first -= 1
    pieces: list[str] = []
    pos = start
    for cut_start, cut_end in cuts[first:]:
        if cut_start >= end:
            break
        pieces.append(text[pos : max(pos, cut_start)])
        pos = max(pos, min(cut_end, end))
    pieces.append(text[pos:end])
    return "".join(pieces)


# --- expressions ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Literal:
    value: int | Decimal | float | str | bytes | None
    text: str
    collation_hint: str = ""  # introducer of a string literal
    is_bool: bool = False


@dataclass(frozen=True, slots=True)
class UserVarRef:
    name: str


@dataclass(frozen=True, slots=True)
class SysVarRef:
    name: str
    scope: str  # "", "global", "session", "local"


@dataclass(frozen=True, slots=True)
class FunctionCall:
    name: str  # upper-case
    args: tuple[Expr, ...]


@dataclass(frozen=True, slots=True)
class Word:
    """A bare identifier: a column in SQL, a value in ``SET sysvar = ON``."""

    name: str
    quoted: bool = False


@dataclass(frozen=True, slots=True)
class Comparison:
    op: str
    left: Expr
    right: Expr


@dataclass(frozen=True, slots=True)
class Negation:
    operand: Expr


@dataclass(frozen=True, slots=True)
class IntervalShift:
    """``moment + INTERVAL amount UNIT`` or ``moment - INTERVAL ...`` (``sign`` 1 or -1)."""

    moment: Expr
    sign: int
    amount: Expr
    unit: str  # upper-case: SECOND, MINUTE, HOUR, DAY, WEEK, MICROSECOND


@dataclass(frozen=True, slots=True)
class DefaultValue:
    pass


@dataclass(frozen=True, slots=True)
class UserVarAssignment:
    """``@name := expr`` inside an expression."""

    name: str
    value: Expr


Expr = (
    Literal
    | UserVarRef
    | SysVarRef
    | FunctionCall
    | Word
    | Comparison
    | Negation
    | IntervalShift
    | DefaultValue
    | UserVarAssignment
)

COMPARISON_OPS = ("=", "<=>", "<>", "!=", "<", ">", "<=", ">=")
INTERVAL_UNITS = ("MICROSECOND", "SECOND", "MINUTE", "HOUR", "DAY", "WEEK")
# Words that end an expression or cannot name a column alias.
RESERVED = frozenset(
    "FROM WHERE LIMIT GROUP ORDER HAVING INTO FOR UNION AS AND OR NOT LIKE IN IS ESCAPE "
    "OFFSET PROCEDURE LOCK WINDOW COLLATE".split()
)


# How deep expressions may nest (parentheses, NOT, unary minus, function arguments). MariaDB's
# parser takes about 32,000 levels; the recursive descent here runs on Python's stack, which the
# whole server shares, so it stops much earlier, with the error MariaDB gives when it stops.
MAX_NESTING = 128


class Parser:
    """A cursor over a statement's tokens; errors quote the statement from the cursor."""

    def __init__(
        self,
        text: str,
        tokens: list[Token],
        quote_text: str | None = None,
        cuts: Sequence[tuple[int, int]] = (),
        first_line: int = 1,
    ) -> None:
        self.text = text
        self.first_line = first_line  # the query's line ``text`` starts on
        self.cuts = cuts  # executable comment markers and dropped comments in ``text``
        self.tokens = tokens
        self.index = 0
        # A syntax error quotes from the bad token to the end of the whole query, which goes on
        # after this statement in a multi-statement query.
        self.quote_text = text if quote_text is None else quote_text
        self.depth = 0  # expressions being parsed, one inside the other

    @property
    def peek(self) -> Token:
        return self.tokens[self.index]

    def next(self) -> Token:
        token = self.tokens[self.index]
        if token.kind is not Tok.END:
            self.index += 1
        return token

    def at_end(self) -> bool:
        return self.peek.kind is Tok.END

    def error(self, token: Token | None = None) -> SqlError:
        token = token or self.peek
        return syntax_error(self.quote_text[token.start :], self.line(token))

    def line(self, token: Token) -> int:
        """The line of the query ``token`` is on, as MariaDB's errors number it."""
        return line_of(self.quote_text, token.start) + self.first_line - 1

    @contextmanager
    def nested(self) -> Iterator[None]:
        """One more level of nesting; past :data:`MAX_NESTING` the error MariaDB gives when its
        parser's stack is full, quoting from the token that did not fit."""
        if self.depth >= MAX_NESTING:
            token = self.peek
            raise parser_stack_exhausted(self.quote_text[token.start :], self.line(token))
        self.depth += 1
        try:
            yield
        finally:
            self.depth -= 1

    # accept_word and accept_op are asked several times per token of every statement: inlined
    # (a WORD or OP token is never the END, after which the cursor would stay).
    def accept_word(self, *words: str) -> Token | None:
        token = self.tokens[self.index]
        if token.kind is Tok.WORD and token.text.upper() in words:
            self.index += 1
            return token
        return None

    def expect_word(self, *words: str) -> Token:
        token = self.accept_word(*words)
        if token is None:
            raise self.error()
        return token

    def accept_op(self, *ops: str) -> Token | None:
        token = self.tokens[self.index]
        if token.kind is Tok.OP and token.text in ops:
            self.index += 1
            return token
        return None

    def expect_op(self, *ops: str) -> Token:
        token = self.accept_op(*ops)
        if token is None:
            raise self.error()
        return token

    def expect_end(self) -> None:
        if not self.at_end():
            raise self.error()

    def source(self, start: Token, end_index: int) -> str:
        """The original text from ``start`` to the token before ``end_index``."""
        last = self.tokens[end_index - 1]
        return without_cuts(self.text, start.start, last.end, self.cuts)

    def name(self) -> str:
        """An identifier, quoted or not, or a string (where SQL allows one for a name)."""
        token = self.next()
        if token.kind in (Tok.WORD, Tok.QUOTED_IDENT, Tok.STRING):
            return token.text
        raise self.error(token)

    def integer(self) -> int:
        token = self.next()
        if token.kind is Tok.NUMBER and token.text.isdigit():
            return int(token.text)
        raise self.error(token)

    # expressions

    def expression(self) -> Expr:
        left = self._shifted(self.operand())
        token = self.peek
        if token.kind is Tok.OP and token.text in COMPARISON_OPS:
            self.next()
            right = self.operand()
            return Comparison(token.text, left, right)
        return left

    def _shifted(self, moment: Expr) -> Expr:
        """``moment`` with each ``+ INTERVAL n UNIT`` / ``- INTERVAL n UNIT`` that follows (the
        only arithmetic answered: tools put it in their queries, pt-mysql-summary's
        ``NOW() - INTERVAL n SECOND``)."""
        while self.peek.is_op("+", "-") and self.tokens[self.index + 1].is_word("INTERVAL"):
            sign = 1 if self.next().text == "+" else -1
            self.next()
            amount = self.operand()
            unit = self.expect_word(*INTERVAL_UNITS).text.upper()
            moment = IntervalShift(moment, sign, amount, unit)
        return moment

    def operand(self) -> Expr:
        with self.nested():
            return self._operand()

    def _operand(self) -> Expr:
        token = self.next()
        kind = token.kind
        if kind is Tok.NUMBER:
            return _number(token.text)
        if kind is Tok.STRING:
            return self._string_literal(token)
        if kind is Tok.HEX:
            return Literal(token.raw, token.text)
        if kind is Tok.USER_VAR:
            if self.accept_op(":="):
                return UserVarAssignment(token.text, self.expression())
            return UserVarRef(token.text)
        if kind is Tok.SYS_VAR:
            return SysVarRef(token.text, token.extra)
        if kind is Tok.OP:
            return self._operator_operand(token)
        if kind is Tok.QUOTED_IDENT:
            return Word(token.text, quoted=True)
        if kind is Tok.WORD:
            return self._word_operand(token)
        raise self.error(token)

    def _string_literal(self, first: Token) -> Literal:
        # Adjacent string literals concatenate ('a' 'b' is 'ab'), joined once.
        parts = [first.text]
        while self.peek.kind is Tok.STRING and not self.peek.extra:
            parts.append(self.next().text)
        value = "".join(parts)
        return Literal(value, value, collation_hint=first.extra)

    def _operator_operand(self, token: Token) -> Expr:
        """An operand that starts with an operator: ``( expression )`` or a minus."""
        if token.text == "(":
            inner = self.expression()
            self.expect_op(")")
            return inner
        if token.text == "-":
            following = self.peek
            if following.kind is Tok.NUMBER:
                self.next()
                number = _number(following.text)
                assert isinstance(number.value, int | Decimal | float)
                return Literal(-number.value, "-" + following.text)
            return Negation(self.operand())
        raise self.error(token)

    def _word_operand(self, token: Token) -> Expr:
        """NULL, TRUE, FALSE, DEFAULT, a function call or a name."""
        upper = token.text.upper()
        if upper == "NULL":
            return Literal(None, token.text)
        if upper in ("TRUE", "FALSE"):
            return Literal(1 if upper == "TRUE" else 0, token.text, is_bool=True)
        if upper == "DEFAULT" and not self.peek.is_op("("):
            return DefaultValue()
        if upper in RESERVED:
            raise self.error(token)
        if self.accept_op("("):
            if upper in ("CONVERT", "CAST"):
                return self._conversion(upper)
            if upper == "COUNT" and self.peek.is_op("*"):
                self.next()
                self.expect_op(")")
                return FunctionCall(upper, (Word("*"),))
            return FunctionCall(upper, self._call_arguments())
        return Word(token.text)

    def _conversion(self, upper: str) -> Expr:
        """``CONVERT(expr USING charset)`` and ``CAST(expr AS type)`` (pt-table-checksum's
        forms) as calls whose last argument is the character set or type, upper-case;
        ``CONVERT(expr, type)`` is CAST's other spelling."""
        value = self.expression()
        if upper == "CONVERT" and self.accept_word("USING"):
            target = self.name()
            self.expect_op(")")
            return FunctionCall("CONVERT_USING", (value, Literal(target.upper(), target)))
        if upper == "CAST":
            self.expect_word("AS")
        else:
            self.expect_op(",")
        words = [self.name().upper()]
        while self.peek.kind is Tok.WORD:
            words.append(self.next().text.upper())
        self.expect_op(")")
        kind = " ".join(words)
        return FunctionCall("CAST", (value, Literal(kind, kind)))

    def _call_arguments(self) -> tuple[Expr, ...]:
        """The arguments of a function call, after its ``(``, through the ``)``."""
        args: list[Expr] = []
        if not self.accept_op(")"):
            args.append(self.expression())
            while self.accept_op(","):
                args.append(self.expression())
            self.expect_op(")")
        return tuple(args)


def _number(text: str) -> Literal:
    if "e" in text or "E" in text:
        return Literal(float(text), text)
    if "." in text:
        return Literal(Decimal(text), text)
    return Literal(int(text), text)


def unknown_column(name: str, clause: str) -> SqlError:
    return sql_error(ER_BAD_FIELD_ERROR, name, clause)
