"""``CREATE TABLE`` text to a :class:`~scenarios.schema.Table`.

A hand-written tokenizer and recursive-descent parser, linear in the text (no regular expression
ever sees user input). The subset is the column list of every type the codec carries
(integers with UNSIGNED, DECIMAL(p,s), FLOAT, DOUBLE, BIT(n), YEAR, DATE, TIME/DATETIME/
TIMESTAMP(fsp), CHAR/VARCHAR/BINARY/VARBINARY(n), the TEXT and BLOB types, JSON, ENUM and SET),
column options (NULL / NOT NULL, DEFAULT literal, CHARACTER SET / CHARSET, COLLATE, PRIMARY KEY,
UNIQUE [KEY], COMMENT), table keys (PRIMARY KEY, UNIQUE [KEY|INDEX] [name], KEY/INDEX [name]:
accepted, not needed by the model) and table options (ENGINE, [DEFAULT] CHARSET / CHARACTER SET,
COLLATE, COMMENT). Anything else is a :class:`~scenarios.errors.SchemaError` naming where.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from scenarios.columns import make_column, resolve_collation
from scenarios.ddl import (
    AddColumn,
    Alteration,
    AlterTable,
    CreateTable,
    DdlStatement,
    DropColumn,
    DropTable,
    ModifyColumn,
    RenameTable,
    TruncateTable,
)
from scenarios.errors import SchemaError
from scenarios.schema import (
    DEFAULT_COLLATION,
    INTEGER_RANGES,
    NO_DEFAULT,
    TYPE_ALIASES,
    TYPE_NAMES,
    Column,
    Table,
)
from scenarios.values import float32

__all__ = ["Token", "parse_column_type", "parse_create_table", "parse_ddl", "tokenize"]

_WORD_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_$")
_PUNCT = frozenset("(),.=;")
_ESCAPES = {"0": "\0", "n": "\n", "r": "\r", "t": "\t", "Z": "\x1a", "b": "\b"}


@dataclass(frozen=True, slots=True)
class Token:
    kind: str  # "word", "quoted" (a `name`), "string", "number", "punct"
    text: str
    at: int

    @property
    def upper(self) -> str:
        return self.text.upper() if self.kind == "word" else ""


def tokenize(text: str) -> list[Token]:
    """The tokens of ``text``, comments dropped; one pass over the characters."""
    tokens: list[Token] = []
    pos = 0
    end = len(text)
    while pos < end:
        ch = text[pos]
        if ch.isspace():
            pos += 1
        elif (
            ch == "#" or text.startswith("--", pos) and (pos + 2 >= end or text[pos + 2].isspace())
        ):
            newline = text.find("\n", pos)
            pos = end if newline < 0 else newline + 1
        elif text.startswith("/*", pos):
            close = text.find("*/", pos + 2)
            if close < 0:
                raise SchemaError(f"unterminated comment at {pos}")
            pos = close + 2
        elif ch in ("'", '"'):
            token, pos = _string(text, pos)
            tokens.append(token)
        elif ch == "`":
            token, pos = _quoted_name(text, pos)
            tokens.append(token)
        elif ch in _PUNCT:
            tokens.append(Token("punct", ch, pos))
            pos += 1
        elif ch in "+-" or ch.isdigit() or ch == "." and text[pos + 1 : pos + 2].isdigit():
            start = pos
            pos = _number_end(text, pos)
            if pos < end and text[pos] in _WORD_CHARS and text[start].isdigit():
                while pos < end and text[pos] in _WORD_CHARS:  # a name like 1st
                    pos += 1
                tokens.append(Token("word", text[start:pos], start))
                continue
            word = text[start:pos]
            if word in ("+", "-"):
                raise SchemaError(f"unexpected {word!r} at {start}")
            tokens.append(Token("number", word, start))
        elif ch in _WORD_CHARS:
            start = pos
            while pos < end and text[pos] in _WORD_CHARS:
                pos += 1
            tokens.append(Token("word", text[start:pos], start))
        else:
            raise SchemaError(f"unexpected character {ch!r} at {pos}")
    return tokens


def _string(text: str, start: int) -> tuple[Token, int]:
    """The string literal opening at ``start`` (quote doubled or backslash-escaped inside) and
    the position after it."""
    quote = text[start]
    end = len(text)
    pos = start + 1
    parts: list[str] = []
    while True:
        if pos >= end:
            raise SchemaError(f"unterminated string at {start}")
        c = text[pos]
        if c == "\\" and pos + 1 < end:
            parts.append(_ESCAPES.get(text[pos + 1], text[pos + 1]))
            pos += 2
        elif c == quote:
            if not text.startswith(quote, pos + 1):
                return Token("string", "".join(parts), start), pos + 1
            parts.append(quote)
            pos += 2
        else:
            parts.append(c)
            pos += 1


def _quoted_name(text: str, start: int) -> tuple[Token, int]:
    """The backquoted name opening at ``start`` (a doubled backquote inside is one) and the
    position after it."""
    pos = start + 1
    parts: list[str] = []
    while True:
        close = text.find("`", pos)
        if close < 0:
            raise SchemaError(f"unterminated quoted name at {start}")
        parts.append(text[pos:close])
        if not text.startswith("`", close + 1):
            return Token("quoted", "".join(parts), start), close + 1
        parts.append("`")
        pos = close + 2


def _digits_end(text: str, pos: int) -> int:
    while pos < len(text) and text[pos].isdigit():
        pos += 1
    return pos


def _number_end(text: str, pos: int) -> int:
    """The end of a number at ``pos``: [sign] digits [. digits] [e [sign] digits]."""
    if text[pos] in "+-":
        pos += 1
    pos = _digits_end(text, pos)
    if text[pos : pos + 1] == "." and text[pos + 1 : pos + 2] != ".":
        pos = _digits_end(text, pos + 1)
    if text[pos : pos + 1] in ("e", "E"):
        after = pos + 1
        if text[after : after + 1] in ("+", "-"):
            after += 1
        if text[after : after + 1].isdigit():
            pos = _digits_end(text, after)
    return pos


class _Parser:
    def __init__(self, text: str) -> None:
        self.tokens = tokenize(text)
        self.pos = 0

    # --- tokens --------------------------------------------------------------------------

    def peek(self, offset: int = 0) -> Token | None:
        index = self.pos + offset
        return self.tokens[index] if index < len(self.tokens) else None

    def where(self) -> str:
        token = self.peek()
        return "at the end" if token is None else f"at {token.at} ({token.text!r})"

    def fail(self, what: str) -> SchemaError:
        return SchemaError(f"CREATE TABLE: expected {what} {self.where()}")

    def take(self) -> Token:
        token = self.peek()
        if token is None:
            raise self.fail("more")
        self.pos += 1
        return token

    def is_word(self, *words: str, offset: int = 0) -> bool:
        token = self.peek(offset)
        return token is not None and token.upper in words

    def accept(self, *words: str) -> bool:
        if self.is_word(*words):
            self.pos += 1
            return True
        return False

    def expect(self, *words: str) -> None:
        if not self.accept(*words):
            raise self.fail(" ".join(words))

    def is_punct(self, char: str) -> bool:
        token = self.peek()
        return token is not None and token.kind == "punct" and token.text == char

    def punct(self, char: str) -> None:
        if not self.is_punct(char):
            raise self.fail(repr(char))
        self.pos += 1

    def accept_punct(self, char: str) -> bool:
        if self.is_punct(char):
            self.pos += 1
            return True
        return False

    def name(self) -> str:
        token = self.peek()
        if token is None or token.kind not in ("word", "quoted"):
            raise self.fail("a name")
        self.pos += 1
        return token.text

    def integer(self) -> int:
        token = self.peek()
        if token is None or token.kind != "number" or not token.text.isdigit():
            raise self.fail("a number")
        self.pos += 1
        return int(token.text)

    def name_list(self) -> tuple[str, ...]:
        self.punct("(")
        names = [self._key_part()]
        while self.accept_punct(","):
            names.append(self._key_part())
        self.punct(")")
        return tuple(names)

    def _key_part(self) -> str:
        name = self.name()
        if self.is_punct("("):
            raise self.fail("a whole column (key prefixes are not modelled)")
        self.accept("ASC", "DESC")
        return name

    # --- DDL statements ------------------------------------------------------------------

    def table_name(self, database: str | None) -> tuple[str, str]:
        first = self.name()
        if self.accept_punct("."):
            return first, self.name()
        if database is None:
            raise SchemaError(f"table {first}: no database (qualify the name or give one)")
        return database, first

    def _end(self) -> None:
        self.accept_punct(";")
        if self.peek() is not None:
            raise self.fail("the end of the statement")

    def ddl(self, database: str | None) -> DdlStatement:
        if self.is_word("CREATE"):
            return CreateTable(self.create_table(database))
        if self.accept("ALTER"):
            self.expect("TABLE")
            db, name = self.table_name(database)
            alterations = [self.alteration(f"{db}.{name}")]
            while self.accept_punct(","):
                alterations.append(self.alteration(f"{db}.{name}"))
            self._end()
            return AlterTable(db, name, tuple(alterations))
        if self.accept("DROP"):
            self.expect("TABLE")
            db, name = self.table_name(database)
            self._end()
            return DropTable(db, name)
        if self.accept("TRUNCATE"):
            self.accept("TABLE")
            db, name = self.table_name(database)
            self._end()
            return TruncateTable(db, name)
        if self.accept("RENAME"):
            self.expect("TABLE")
            db, name = self.table_name(database)
            self.expect("TO")
            new_db, new_name = self.table_name(database)
            self._end()
            return RenameTable(db, name, new_db, new_name)
        raise self.fail("CREATE TABLE, ALTER TABLE, DROP TABLE, TRUNCATE or RENAME TABLE")

    def _place(self) -> tuple[bool, str | None]:
        if self.accept("FIRST"):
            return True, None
        if self.accept("AFTER"):
            return False, self.name()
        return False, None

    def _column_definition(self, table: str) -> Column:
        name = self.name()
        fields = self.column_type()
        options = self.column_options()
        if options.get("primary") or options.get("unique"):
            raise SchemaError(f"ALTER TABLE {table}: {name}: keys are not altered")
        return _column(name, fields, options, DEFAULT_COLLATION, table)

    def alteration(self, table: str) -> Alteration:
        if self.accept("ADD"):
            self.accept("COLUMN")
            column = self._column_definition(table)
            first, after = self._place()
            return AddColumn(column, first, after)
        if self.accept("DROP"):
            self.accept("COLUMN")
            return DropColumn(self.name())
        if self.accept("MODIFY"):
            self.accept("COLUMN")
            column = self._column_definition(table)
            first, after = self._place()
            return ModifyColumn(column, first, after)
        raise self.fail("ADD, DROP or MODIFY [COLUMN]")

    # --- CREATE TABLE --------------------------------------------------------------------

    def create_table(self, database: str | None) -> Table:
        self.expect("CREATE")
        if self.accept("OR"):
            self.expect("REPLACE")
        self.expect("TABLE")
        if self.accept("IF"):
            self.expect("NOT")
            self.expect("EXISTS")
        first = self.name()
        if self.accept_punct("."):
            database, bare = first, self.name()
        else:
            bare = first
        if database is None:
            raise SchemaError(f"CREATE TABLE {bare}: no database (qualify the name or give one)")
        self.punct("(")
        elements: list[tuple[str, Any]] = []
        while True:
            elements.append(self.element())
            if self.accept_punct(")"):
                break
            self.punct(",")
        engine, table_collation = self.table_options()
        self.accept_punct(";")
        if self.peek() is not None:
            raise self.fail("the end of the statement")
        columns: list[Column] = []
        primary: tuple[str, ...] = ()
        unique: list[tuple[str, ...]] = []
        for kind, value in elements:
            if kind == "column":
                name, fields, options = value
                columns.append(
                    _column(name, fields, options, table_collation, f"{database}.{bare}")
                )
                if options.get("primary"):
                    primary = _once(primary, (name,), bare)
                if options.get("unique"):
                    unique.append((name,))
            elif kind == "primary":
                primary = _once(primary, value, bare)
            elif kind == "unique":
                unique.append(value)
        # A PRIMARY KEY makes its columns NOT NULL (as the server does).
        primary_names = {name.lower() for name in primary}
        columns = [
            _not_null(item) if item.name.lower() in primary_names else item for item in columns
        ]
        return Table(
            database,
            bare,
            tuple(columns),
            primary_key=primary,
            unique_keys=tuple(unique),
            engine=engine,
        )

    def element(self) -> tuple[str, Any]:
        if self.accept("PRIMARY"):
            self.expect("KEY")
            self._index_name()
            return ("primary", self.name_list())
        if self.accept("UNIQUE"):
            self.accept("KEY", "INDEX")
            self._index_name()
            return ("unique", self.name_list())
        if self.accept("KEY", "INDEX"):
            self._index_name()
            return ("index", self.name_list())
        if self.is_word("CONSTRAINT"):
            raise self.fail("a column or key (constraints are not modelled)")
        name = self.name()
        fields = self.column_type()
        return ("column", (name, fields, self.column_options()))

    def _index_name(self) -> None:
        if not self.is_punct("("):
            self.name()
        if self.accept("USING"):
            self.expect("BTREE", "HASH")

    def column_type(self) -> dict[str, Any]:
        token = self.take()
        if token.kind != "word":
            raise SchemaError(f"CREATE TABLE: expected a type at {token.at} ({token.text!r})")
        word = token.text.lower()
        if word in ("bool", "boolean"):
            return {"type": "tinyint", "length_hint": 1}
        if word == "double" and self.accept("PRECISION"):
            pass
        if word == "long":
            word = "mediumtext"
            if self.accept("VARCHAR", "VARBINARY"):
                pass
        if word in ("national", "nchar", "nvarchar"):
            raise SchemaError(f"CREATE TABLE: NATIONAL types are not modelled ({token.at})")
        if word == "character":
            word = "varchar" if self.accept("VARYING") else "char"
        kind = TYPE_ALIASES.get(word, word)
        if kind not in TYPE_NAMES:
            raise SchemaError(f"CREATE TABLE: type {token.text!r} is not modelled (at {token.at})")
        fields: dict[str, Any] = {"type": kind}
        if kind in ("enum", "set"):
            self.punct("(")
            members = [self._string()]
            while self.accept_punct(","):
                members.append(self._string())
            self.punct(")")
            fields["members"] = tuple(members)
        elif self.accept_punct("("):
            first = self.integer()
            second = None
            if self.accept_punct(","):
                second = self.integer()
            self.punct(")")
            _sizes(fields, kind, first, second, token)
        else:
            _sizes(fields, kind, None, None, token)
        while True:
            if self.accept("UNSIGNED"):
                if kind not in (*INTEGER_RANGES, "decimal", "float", "double"):
                    raise SchemaError(f"CREATE TABLE: {kind} cannot be UNSIGNED")
                fields["unsigned"] = True
            elif self.accept("SIGNED"):
                pass
            elif self.is_word("ZEROFILL"):
                raise self.fail("no ZEROFILL (not modelled)")
            elif self.accept("BINARY") and kind in ("char", "varchar", "text"):
                raise SchemaError("CREATE TABLE: the BINARY attribute is not modelled")
            else:
                break
        return fields

    def _string(self) -> str:
        token = self.take()
        if token.kind != "string":
            raise SchemaError(f"CREATE TABLE: expected a string at {token.at} ({token.text!r})")
        return token.text

    def column_options(self) -> dict[str, Any]:
        options: dict[str, Any] = {}
        while True:
            if self.accept("NOT"):
                self.expect("NULL")
                options["nullable"] = False
            elif self.accept("NULL"):
                options["nullable"] = True
            elif self.accept("DEFAULT"):
                options["default"] = self.literal()
            elif self.accept("CHARACTER"):
                self.expect("SET")
                options["charset"] = self.name()
            elif self.accept("CHARSET"):
                options["charset"] = self.name()
            elif self.accept("COLLATE"):
                options["collation"] = self.name()
            elif self.accept("PRIMARY"):
                self.expect("KEY")
                options["primary"] = True
            elif self.accept("UNIQUE"):
                self.accept("KEY")
                options["unique"] = True
            elif self.accept("KEY"):
                options["primary"] = True
            elif self.accept("COMMENT"):
                self._string()
            else:
                return options

    def literal(self) -> Any:
        token = self.take()
        if token.kind == "string":
            return token.text
        if token.kind == "number":
            text = token.text
            if text.lstrip("+-").isdigit():
                return int(text)
            return float(text) if "e" in text.lower() else Decimal(text)
        following = self.peek()
        if token.upper in ("X", "B") and following is not None and following.kind == "string":
            self.pos += 1
            if following.at != token.at + 1:
                raise SchemaError(f"CREATE TABLE: a space inside {token.text}'...' at {token.at}")
            try:
                if token.upper == "X":
                    return bytes.fromhex(following.text)
                return int(following.text or "0", 2)
            except ValueError:
                raise SchemaError(
                    f"CREATE TABLE: a bad {token.text}'...' literal at {token.at}"
                ) from None
        if token.upper == "NULL":
            return None
        raise SchemaError(
            f"CREATE TABLE: DEFAULT {token.text!r} at {token.at}: only literal defaults are "
            "modelled"
        )

    def table_options(self) -> tuple[str, str]:
        engine = "InnoDB"
        charset: str | None = None
        collation: str | None = None
        while self.peek() is not None and not self.is_punct(";"):
            self.accept_punct(",")
            if self.accept("ENGINE"):
                self.accept_punct("=")
                engine = self.name()
            elif self.accept("DEFAULT"):
                continue
            elif self.accept("CHARSET") or self.accept("CHARACTER") and self._then("SET"):
                self.accept_punct("=")
                charset = self.name()
            elif self.accept("COLLATE"):
                self.accept_punct("=")
                collation = self.name()
            elif self.accept("COMMENT"):
                self.accept_punct("=")
                self._string()
            else:
                raise self.fail("a table option (ENGINE, CHARSET, COLLATE, COMMENT)")
        if charset is None and collation is None:
            return engine, DEFAULT_COLLATION
        return engine, resolve_collation("(table)", charset, collation, DEFAULT_COLLATION)

    def _then(self, word: str) -> bool:
        self.expect(word)
        return True


def _once(current: tuple[str, ...], new: tuple[str, ...], table: str) -> tuple[str, ...]:
    if current:
        raise SchemaError(f"CREATE TABLE {table}: multiple primary keys defined")
    return new


def _not_null(item: Column) -> Column:
    from dataclasses import replace

    return replace(item, nullable=False)


_FSP_TYPES = ("time", "datetime", "timestamp")


def _sizes(
    fields: dict[str, Any], kind: str, first: int | None, second: int | None, token: Token
) -> None:
    """Put the parenthesised numbers of a type into ``fields`` (checked against MariaDB's
    limits)."""
    where = f"{token.text} at {token.at}"
    if kind in INTEGER_RANGES or kind == "year":
        if second is not None:
            raise SchemaError(f"CREATE TABLE: {where} takes one number (a display width)")
        return  # a display width: not stored in the binlog
    if kind == "decimal":
        precision = 10 if first is None else first
        scale = 0 if second is None else second
        if not 1 <= precision <= 65 or not 0 <= scale <= 38 or scale > precision:
            raise SchemaError(f"CREATE TABLE: {where}: DECIMAL({precision},{scale}) is invalid")
        fields.update(precision=precision, scale=scale)
        return
    if kind in ("float", "double"):
        if first is not None:
            raise SchemaError(f"CREATE TABLE: {where}: FLOAT(M,D)/DOUBLE(M,D) are not modelled")
        return
    if kind in _FSP_TYPES:
        fsp = 0 if first is None else first
        if second is not None or not 0 <= fsp <= 6:
            raise SchemaError(f"CREATE TABLE: {where}: fractional-second precision is 0 to 6")
        fields["fsp"] = fsp
        return
    limits = {"char": 255, "binary": 255, "varchar": 65532, "varbinary": 65532, "bit": 64}
    if kind in limits:
        if second is not None:
            raise SchemaError(f"CREATE TABLE: {where} takes one length")
        if first is None:
            if kind in ("varchar", "varbinary"):
                raise SchemaError(f"CREATE TABLE: {where} needs a length")
            first = 1
        low = 1 if kind == "bit" else 0
        if not low <= first <= limits[kind]:
            raise SchemaError(f"CREATE TABLE: {where}: length {first} is out of range")
        fields["length"] = first
        return
    if first is not None:
        raise SchemaError(f"CREATE TABLE: {where}: a length is not modelled for {kind.upper()}")


def _column(
    name: str,
    fields: dict[str, Any],
    options: dict[str, Any],
    table_collation: str,
    table_name: str,
) -> Column:
    fields = dict(fields)
    fields.pop("length_hint", None)
    primary = bool(options.get("primary"))
    nullable = options.get("nullable", not primary)
    if nullable and primary:
        raise SchemaError(f"column {name}: a PRIMARY KEY column cannot be NULL")
    default = options.get("default", NO_DEFAULT)
    if fields["type"] in ("float", "double"):
        default = _approximate(default, fields["type"] == "float")
    return make_column(
        name,
        fields,
        nullable=nullable,
        default=default,
        charset=options.get("charset"),
        collation=options.get("collation"),
        table_collation=table_collation,
        table_name=table_name,
    )


def _approximate(default: Any, single: bool) -> Any:
    """A number literal DEFAULT of a FLOAT/DOUBLE as the server keeps it: the nearest double,
    then for a FLOAT the nearest float32 (a value beyond a float32's range is left to be
    refused as out of range)."""
    if isinstance(default, bool) or not isinstance(default, int | float | Decimal):
        return default
    try:
        number = float(default)
        return float32(number) if single else number
    except OverflowError:
        return default


def parse_create_table(text: str, database: str | None = None) -> Table:
    """The table ``text`` (one CREATE TABLE statement) declares; ``database`` for an unqualified
    name."""
    return _Parser(text).create_table(database)


def parse_column_type(text: str) -> dict[str, Any]:
    """The fields of a column type spelled as SQL, with CHARACTER SET / COLLATE if given."""
    parser = _Parser(text)
    fields = parser.column_type()
    options = parser.column_options()
    if parser.peek() is not None:
        raise parser.fail("the end of the type")
    extra = set(options) - {"charset", "collation"}
    if extra:
        raise SchemaError(f"type {text!r}: give {sorted(extra)} as keyword arguments")
    fields.pop("length_hint", None)
    return {**fields, **options}


def parse_ddl(text: str, database: str | None = None) -> DdlStatement:
    """The statement ``text`` is (CREATE TABLE, ALTER TABLE with ADD/DROP/MODIFY [COLUMN] and
    FIRST/AFTER, DROP TABLE, TRUNCATE [TABLE], RENAME TABLE a TO b); ``database`` for
    unqualified names. A column an ALTER adds or modifies without a character set takes
    utf8mb4_general_ci (the table's own default is not known from the table)."""
    return _Parser(text).ddl(database)
