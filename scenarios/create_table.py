"""``CREATE TABLE`` text to a :class:`~scenarios.schema.Table`.

A hand-written tokenizer and recursive-descent parser, linear in the text (no regular expression
ever sees user input). It takes what MariaDB 10.11's ``SHOW CREATE TABLE`` prints and the forms
people, ORMs and dump tools write: every type the codec carries (integers with display width
and UNSIGNED, DECIMAL(p,s), FLOAT, DOUBLE, BIT(n), YEAR, DATE, TIME/DATETIME/TIMESTAMP(fsp),
CHAR/VARCHAR/BINARY/VARBINARY(n), the TEXT and BLOB types, JSON, ENUM and SET; the aliases
BOOLEAN, INTEGER, REAL, SERIAL...), column options (NULL / NOT NULL, DEFAULT literal or
current_timestamp(fsp)/now(), ON UPDATE, AUTO_INCREMENT, CHARACTER SET / CHARSET, COLLATE,
PRIMARY KEY, UNIQUE [KEY], COMMENT, CHECK), keys (PRIMARY, UNIQUE, KEY/INDEX, FULLTEXT, SPATIAL,
with prefix lengths, DESC, USING, COMMENT), [CONSTRAINT name] FOREIGN KEY / CHECK, and table
options (ENGINE, AUTO_INCREMENT, [DEFAULT] CHARSET, COLLATE, COMMENT, ROW_FORMAT,
KEY_BLOCK_SIZE, InnoDB's PAGE_COMPRESSED...). What the model keeps without simulating it is
listed in README.md; anything else is a :class:`~scenarios.errors.SchemaError` naming the
clause or where.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from decimal import Decimal
from typing import Any

from scenarios.columns import make_column, resolve_collation
from scenarios.conditions import condition_text
from scenarios.ddl import (
    AddColumn,
    AddIndex,
    Alteration,
    AlterConstraint,
    AlterDefault,
    AlterTable,
    ChangeColumn,
    CreateTable,
    DdlStatement,
    DropColumn,
    DropIndex,
    DropTable,
    ModifyColumn,
    RenameColumn,
    RenameTable,
    TableOptions,
    TruncateTable,
    foreign_key_indexes,
    refuse_hashed_unique,
    server_key_order,
)
from scenarios.errors import HistoryError, SchemaError, did_you_mean
from scenarios.expressions import (
    Call,
    ColumnRef,
    Literal,
    Operation,
    evaluate,
    fit,
    parse_expression,
    referenced_columns,
    show_default,
)
from scenarios.generated import check_references
from scenarios.partitions import partition_text
from scenarios.schema import (
    DEFAULT_COLLATION,
    INTEGER_RANGES,
    NO_DEFAULT,
    TYPE_ALIASES,
    TYPE_NAMES,
    Column,
    ForeignKey,
    Index,
    Table,
)
from scenarios.table_options import ENGINE_TABLE_OPTIONS, PLAIN_TABLE_OPTIONS, in_server_order
from scenarios.values import float32
from scenarios.versioning import versioned_table

__all__ = ["Token", "parse_column_type", "parse_create_table", "parse_ddl", "tokenize"]

_WORD_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_$")
_PUNCT = frozenset("(),.=;")
_OPERATOR_CHARS = frozenset("<>!*/%&|^~:?@")
_ESCAPES = {"0": "\0", "n": "\n", "r": "\r", "t": "\t", "Z": "\x1a", "b": "\b"}


@dataclass(frozen=True, slots=True)
class Token:
    kind: str  # "word", "quoted" (a `name`), "string", "number", "punct", "op"
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
            tokens.append(Token("op" if word in ("+", "-") else "number", word, start))
        elif ch in _OPERATOR_CHARS:  # inside CHECK expressions
            tokens.append(Token("op", ch, pos))
            pos += 1
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
    def __init__(self, text: str, tables: Mapping[str, Table] | None = None) -> None:
        self.text = text
        self.tokens = tokenize(text)
        self.pos = 0
        self.tables = tables  # by qualified name, for CREATE TABLE ... LIKE
        self.like: tuple[str, str] | None = None  # the source of a CREATE TABLE ... LIKE

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
        names = [self.name()]
        while self.accept_punct(","):
            names.append(self.name())
        self.punct(")")
        return tuple(names)

    def key_parts(self) -> tuple[tuple[str, int | None, bool], ...]:
        self.punct("(")
        parts = [self._key_part()]
        while self.accept_punct(","):
            parts.append(self._key_part())
        self.punct(")")
        return tuple(parts)

    def _key_part(self) -> tuple[str, int | None, bool]:
        name = self.name()
        prefix = None
        if self.accept_punct("("):
            prefix = self.integer()
            self.punct(")")
        self.accept("ASC")
        return name, prefix, self.accept("DESC")

    def check_condition(self) -> str:
        """A CHECK's condition in the server's spelling (scenarios.conditions), or as
        written."""
        opening = self.peek()
        tokens = self.parenthesised_tokens()
        assert opening is not None
        written = self.text[opening.at + 1 : self.tokens[self.pos - 1].at].strip()
        return condition_text(tokens, written)

    def parenthesised_tokens(self) -> list[Token]:
        """The tokens between balanced parentheses (an expression's)."""
        self.punct("(")
        start = self.pos
        depth = 1
        while depth:
            token = self.take()
            if token.kind == "punct" and token.text in "()":
                depth += 1 if token.text == "(" else -1
        return self.tokens[start : self.pos - 1]

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
            table = self.create_table(database)
            return CreateTable(table, self.like)
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
        start = self.peek()
        found = self._alteration(table)
        if isinstance(found, AlterDefault | AlterConstraint | TableOptions):
            following = self.peek()
            end = len(self.text) if following is None else following.at
            written = self.text[start.at if start else 0 : end].strip()
            found = replace(found, text=written)
        return found

    def _alteration(self, table: str) -> Alteration:
        if self.accept("ADD"):
            return self._add(table)
        if self.accept("DROP"):
            return self._drop()
        if self.accept("MODIFY"):
            self.accept("COLUMN")
            column = self._column_definition(table)
            first, after = self._place()
            return ModifyColumn(column, first, after)
        if self.accept("CHANGE"):
            self.accept("COLUMN")
            old = self.name()
            column = self._column_definition(table)
            first, after = self._place()
            return ChangeColumn(old, column, first, after)
        if self.accept("RENAME"):
            if not self.accept("COLUMN"):
                raise self.fail("RENAME COLUMN (RENAME TO, RENAME INDEX are not modelled)")
            old = self.name()
            self.expect("TO")
            return RenameColumn(old, self.name())
        if self.accept("ALTER"):
            self.accept("COLUMN")
            name = self.name()
            if self.accept("DROP"):
                self.expect("DEFAULT")
                return AlterDefault(name, NO_DEFAULT)
            self.expect("SET")
            self.expect("DEFAULT")
            given = self._default()
            if set(given) != {"default"}:
                raise self.fail("a literal (SET DEFAULT of an expression is not modelled)")
            return AlterDefault(name, given["default"])
        if self.is_word(*_ALTER_OPTIONS):
            return self._alter_options()
        raise self.fail(
            "ADD, DROP, MODIFY, CHANGE, RENAME or ALTER [COLUMN], a key, a constraint or a"
            " table option"
        )

    def _add(self, table: str) -> Alteration:
        if self.accept("UNIQUE"):
            self.accept("KEY", "INDEX")
            return AddIndex(self._index("UNIQUE"))
        if self.accept("KEY", "INDEX"):
            return AddIndex(self._index("KEY"))
        if self.accept("FULLTEXT", "SPATIAL"):
            kind = self.tokens[self.pos - 1].upper
            self.accept("KEY", "INDEX")
            return AddIndex(self._index(kind))
        if self.is_word("CONSTRAINT", "FOREIGN", "CHECK"):
            name = None
            if self.accept("CONSTRAINT") and not self.is_word(
                "PRIMARY", "UNIQUE", "FOREIGN", "CHECK"
            ):
                name = self.name()
            if self.is_word("PRIMARY"):
                raise self.fail("a constraint (ADD PRIMARY KEY is not modelled)")
            kind, value = self._constraint(name)
            if kind == "index":
                return AddIndex(value)
            if kind == "check":
                return AlterConstraint("check", value[0], check=value[1])
            name, columns, database, referenced_table, referenced, actions = value
            return AlterConstraint(
                "foreign",
                name,
                foreign=ForeignKey(
                    name or "",
                    columns,
                    referenced_table,
                    referenced,
                    _shown_action(actions.get("on_delete")),
                    _shown_action(actions.get("on_update")),
                    database,
                ),
            )
        if self.is_word("PRIMARY", "PERIOD", "PARTITION"):
            raise self.fail(f"ADD COLUMN or ADD KEY ({self.take().upper} is not modelled)")
        self.accept("COLUMN")
        column = self._column_definition(table)
        first, after = self._place()
        return AddColumn(column, first, after)

    def _drop(self) -> Alteration:
        if self.accept("INDEX", "KEY"):
            return DropIndex(self.name())
        if self.accept("FOREIGN"):
            self.expect("KEY")
            return AlterConstraint("drop foreign", self.name())
        if self.accept("CONSTRAINT", "CHECK"):
            return AlterConstraint("drop constraint", self.name())
        if self.is_word("PRIMARY", "PARTITION", "PERIOD", "SYSTEM"):
            raise self.fail(f"DROP COLUMN or DROP INDEX ({self.take().upper} is not modelled)")
        self.accept("COLUMN")
        return DropColumn(self.name())

    def _alter_options(self) -> TableOptions:
        """Table options (several may follow each other without commas)."""
        found: list[tuple[str, Any]] = []
        while self.is_word(*_ALTER_OPTIONS):
            word = self.take().upper
            self.accept_punct("=")
            if word in ("ENGINE", "ALGORITHM", "LOCK"):
                found.append((word, self.name()))
            elif word == "COMMENT":
                found.append((word, self._string()))
            elif word == "AUTO_INCREMENT":
                found.append((word, self.integer()))
            elif word in ENGINE_TABLE_OPTIONS:
                found.append((f"`{word}`", self._option_value(quoted=True)))
            else:
                found.append((word, self._option_value()))
        return TableOptions(tuple(found))

    # --- CREATE TABLE --------------------------------------------------------------------

    def create_table(self, database: str | None) -> Table:
        self.expect("CREATE")
        if self.accept("OR"):
            self.expect("REPLACE")
        if self.is_word("TEMPORARY"):
            raise self.fail("TABLE (CREATE TEMPORARY TABLE is not modelled)")
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
        if self.is_word("LIKE") or self.is_punct("(") and self.is_word("LIKE", offset=1):
            return self._like(database, bare)
        if self.is_word("AS", "SELECT"):
            raise self.fail(f"a column list (CREATE TABLE ... {self.take().upper} is not modelled)")
        self.punct("(")
        elements: list[tuple[str, Any]] = []
        while True:
            elements.append(self.element())
            if self.accept_punct(")"):
                break
            self.punct(",")
        options = self.table_options()
        self.accept_punct(";")
        if self.peek() is not None:
            raise self.fail("the end of the statement")
        return _assemble(database, bare, elements, options)

    def _like(self, database: str, bare: str) -> Table:
        """CREATE TABLE name LIKE source (or ``(LIKE source)``): the source's copy as the
        server makes it (checked on 10.11): everything but the foreign keys (the keys made
        for them stay) and the AUTO_INCREMENT table option."""
        parenthesised = self.accept_punct("(")
        self.expect("LIKE")
        source_database, source = self.table_name(database)
        if parenthesised:
            self.punct(")")
        self._end()
        found = (self.tables or {}).get(f"{source_database}.{source}")
        if found is None:
            if self.tables is None:
                raise SchemaError(
                    f"CREATE TABLE {bare} LIKE: the source table is needed (give the statement"
                    " to Scenario.ddl or Scenario.create_table, which know the tables)"
                )
            raise SchemaError(f"CREATE TABLE {bare} LIKE: no table {source_database}.{source}")
        self.like = (source_database, source)
        return replace(
            found,
            database=database,
            name=bare,
            foreign_keys=(),
            auto_increment=None,
            _index={},
        )

    def element(self) -> tuple[str, Any]:
        if self.accept("CONSTRAINT"):
            name = None if self.is_word("PRIMARY", "UNIQUE", "FOREIGN", "CHECK") else self.name()
            return self._constraint(name)
        if self.is_word("PRIMARY", "UNIQUE", "FOREIGN", "CHECK"):
            return self._constraint(None)
        if self.accept("KEY", "INDEX"):
            return ("index", self._index("KEY"))
        if self.accept("FULLTEXT", "SPATIAL"):
            kind = self.tokens[self.pos - 1].upper
            self.accept("KEY", "INDEX")
            return ("index", self._index(kind))
        if self.is_word("PERIOD"):
            raise self.fail("a column or key (PERIOD FOR is not modelled)")
        name = self.name()
        fields = self.column_type()
        options = self.column_options()
        if fields.pop("serial", False):
            # SERIAL: BIGINT UNSIGNED NOT NULL AUTO_INCREMENT UNIQUE.
            options.update(nullable=False, auto_increment=True, unique=True)
        return ("column", (name, fields, options))

    def _constraint(self, name: str | None) -> tuple[str, Any]:
        if self.accept("PRIMARY"):
            self.expect("KEY")
            return ("index", self._index("PRIMARY", "PRIMARY"))
        if self.accept("UNIQUE"):
            self.accept("KEY", "INDEX")
            return ("index", self._index("UNIQUE", name))
        if self.accept("CHECK"):
            return ("check", (name, self.check_condition()))
        self.expect("FOREIGN")
        self.expect("KEY")
        if not self.is_punct("("):
            name = name or self.name()
        columns = self.name_list()
        self.expect("REFERENCES")
        first = self.name()
        database = None
        if self.accept_punct("."):
            database, first = first, self.name()
        referenced = self.name_list()
        actions: dict[str, str] = {}
        while self.accept("ON"):
            event = "on_delete" if self.accept("DELETE") else "on_update"
            if event == "on_update":
                self.expect("UPDATE")
            actions[event] = self._reference_option()
        if self.is_word("MATCH"):
            raise self.fail("ON DELETE/UPDATE (MATCH is not modelled)")
        return ("foreign", (name, columns, database, first, referenced, actions))

    def _reference_option(self) -> str:
        if self.accept("SET"):
            word = self.take().upper
            if word not in ("NULL", "DEFAULT"):
                raise self.fail("SET NULL or SET DEFAULT")
            return f"SET {word}"
        if self.accept("NO"):
            self.expect("ACTION")
            return "NO ACTION"
        self.expect("CASCADE", "RESTRICT")
        return self.tokens[self.pos - 1].upper

    def _index(self, kind: str, name: str | None = None) -> Index:
        if not self.is_punct("(") and not self.is_word("USING"):
            given = self.name()
            name = name or given
        using = self._using()
        parts = self.key_parts()
        comment = ""
        while True:
            if self.is_word("USING"):
                using = self._using()
            elif self.accept("COMMENT"):
                comment = self._string()
            elif self.is_word("KEY_BLOCK_SIZE", "WITH", "VISIBLE", "INVISIBLE", "IGNORED"):
                raise self.fail(f"the end of the key ({self.take().text} is not modelled)")
            else:
                break
        return Index(kind, name or "", parts, using, comment)

    def _using(self) -> str | None:
        if not self.accept("USING"):
            return None
        self.expect("BTREE", "HASH", "RTREE")
        return self.tokens[self.pos - 1].upper

    def column_type(self) -> dict[str, Any]:
        token = self.take()
        if token.kind != "word":
            raise SchemaError(f"CREATE TABLE: expected a type at {token.at} ({token.text!r})")
        word = token.text.lower()
        if word in ("bool", "boolean"):
            return {"type": "tinyint", "width": 1}
        if word == "serial":
            return {"type": "bigint", "unsigned": True, "serial": True}
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
            hint = did_you_mean(word, [*TYPE_NAMES, *TYPE_ALIASES])
            raise SchemaError(
                f"CREATE TABLE: type {token.text!r} is not supported by the model{hint}"
                f" (at {token.at})"
            )
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
                options.update(self._default())
            elif self.accept("ON"):
                self.expect("UPDATE")
                options["on_update"] = self._current_timestamp("ON UPDATE")
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
            elif self.accept("AUTO_INCREMENT"):
                options["auto_increment"] = True
            elif self.accept("COMMENT"):
                options["comment"] = self._string()
            elif self.accept("CHECK"):
                options["check"] = self.check_condition()
            elif self.accept("INVISIBLE"):
                options["invisible"] = True
            elif self.is_word("GENERATED", "AS"):
                options.update(self._generated())
            elif self.is_word(*_UNMODELLED_COLUMN_OPTIONS):
                word = self.take().upper
                raise SchemaError(
                    f"CREATE TABLE: column option {word} at {self.tokens[self.pos - 1].at} is"
                    " not modelled"
                )
            else:
                return options

    def _generated(self) -> dict[str, Any]:
        """[GENERATED ALWAYS] AS (expression) [VIRTUAL | PERSISTENT | STORED]."""
        at = self.peek()
        if self.accept("GENERATED"):
            self.expect("ALWAYS")
        self.expect("AS")
        expression = parse_expression(
            self.parenthesised_tokens(), f"the generated column at {at.at if at else 0}"
        )
        stored = self.accept("PERSISTENT", "STORED")
        if not stored:
            self.accept("VIRTUAL")
        return {"generated": expression, "stored": stored}

    def _default(self) -> dict[str, Any]:
        if self.is_word(*_NOW_WORDS):
            return {"default_expression": self._current_timestamp("DEFAULT")}
        if self.is_word(*_DRAWN_DEFAULTS):
            return {"default_expression": self._drawn_default()}
        token = self.peek()
        following = self.peek(1)
        call = (
            token is not None
            and token.kind == "word"
            and following is not None
            and following.kind == "punct"
            and following.text == "("
            and following.at == token.at + len(token.text)
        )
        if self.is_punct("(") or call:
            return self._default_expression()
        return {"default": self.literal()}

    def _default_expression(self) -> dict[str, Any]:
        """DEFAULT (expression) or DEFAULT function(...): a constant one, evaluated now
        (its value is every row's); one naming a column is refused."""
        start = self.pos
        if self.is_punct("("):
            tokens = self.parenthesised_tokens()
        else:
            self.pos += 1
            self.parenthesised_tokens()
            tokens = self.tokens[start : self.pos]
        where = f"DEFAULT at {self.tokens[start].at}"
        expression = parse_expression(tokens, where)
        if referenced_columns(expression):
            raise SchemaError(f"CREATE TABLE: {where}: a DEFAULT naming a column is not modelled")
        if isinstance(expression, Operation) and isinstance(expression.right, Literal):
            if expression.left is None:  # DEFAULT (-5): a literal to the server
                return {"default": -expression.right.value}  # type: ignore[operator]
        if isinstance(expression, Literal):
            return {"default": expression.value}
        try:
            value = evaluate(expression, {})
        except HistoryError as exc:
            raise SchemaError(f"CREATE TABLE: {where}: {exc}") from None
        return {"default": value, "default_constant": show_default(expression)}

    def _drawn_default(self) -> str:
        """DEFAULT uuid() (uuid_short(), sys_guid()): kept and printed as the server prints
        it; each row's value is the server's draw, never the model's (an insert that leaves
        the column out is refused by the history)."""
        name = self.take().text.lower()
        self.punct("(")
        self.punct(")")
        return f"{name}()"

    def _current_timestamp(self, clause: str) -> str:
        """CURRENT_TIMESTAMP [(fsp)] and its synonyms, as the server prints it."""
        if not self.accept(*_NOW_WORDS):
            raise self.fail(f"current_timestamp() after {clause}")
        word = self.tokens[self.pos - 1].upper
        fsp = 0
        if self.accept_punct("("):
            if not self.is_punct(")"):
                fsp = self.integer()
            self.punct(")")
        elif word == "NOW":
            raise self.fail("'(' after NOW")
        return f"current_timestamp({fsp or ''})"

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
        if token.upper in ("TRUE", "FALSE"):
            return int(token.upper == "TRUE")
        raise SchemaError(
            f"CREATE TABLE: DEFAULT {token.text!r} at {token.at}: only literal defaults are "
            "modelled"
        )

    def table_options(self) -> dict[str, Any]:
        found: dict[str, Any] = {"engine": "InnoDB", "options": []}
        charset: str | None = None
        collation: str | None = None
        while self.peek() is not None and not self.is_punct(";"):
            self.accept_punct(",")
            token = self.peek()
            if token is None or token.kind not in ("word", "quoted"):
                raise self.fail("a table option")
            word = token.text.upper()
            self.pos += 1
            if word == "DEFAULT":
                continue
            if word == "CHARACTER":
                self.expect("SET")
                word = "CHARSET"
            if word == "PARTITION":
                # Kept (in the server's spelling when scenarios.partitions reads it, else as
                # written) and printed on its own line after the options; not simulated.
                written = self.text[token.at :].rstrip().rstrip(";").rstrip()
                found["partition"] = partition_text(
                    self.tokens[self.pos - 1 :], written, found["engine"]
                )
                self.pos = len(self.tokens)
                break
            if word == "WITH" and self.is_word("SYSTEM") and self.is_word("VERSIONING", offset=1):
                self.pos += 2
                found["versioning"] = True
                continue
            if word in ("WITH", "UNION", "DATA", "INDEX", "TABLESPACE"):
                raise SchemaError(
                    f"CREATE TABLE: table option {word} at {token.at} is not modelled"
                )
            self.accept_punct("=")
            if word == "ENGINE":
                found["engine"] = self.name()
            elif word == "CHARSET":
                charset = self.name()
            elif word == "COLLATE":
                collation = self.name()
            elif word == "COMMENT":
                found["comment"] = self._string()
            elif word == "AUTO_INCREMENT":
                found["auto_increment"] = self.integer()
            elif word in PLAIN_TABLE_OPTIONS:
                found["options"].append((word, self._option_value()))
            elif word in ENGINE_TABLE_OPTIONS:
                found["options"].append((f"`{word}`", self._option_value(quoted=True)))
            else:
                raise SchemaError(
                    f"CREATE TABLE: table option {word} at {token.at} is not modelled"
                )
        if charset is None and collation is None:
            found["collation"] = DEFAULT_COLLATION
        else:
            found["collation"] = resolve_collation("(table)", charset, collation, DEFAULT_COLLATION)
        found["options"] = in_server_order(found["options"])
        return found

    def _option_value(self, quoted: bool = False) -> str:
        token = self.take()
        if token.kind not in ("word", "number", "string"):
            raise SchemaError(f"CREATE TABLE: expected an option value at {token.at}")
        text = token.text if token.kind != "word" else token.text.upper()
        return "'" + text.replace("'", "''") + "'" if quoted else text

    def _then(self, word: str) -> bool:
        self.expect(word)
        return True


def _assemble(
    database: str, bare: str, elements: list[tuple[str, Any]], options: dict[str, Any]
) -> Table:
    """The table of a parsed CREATE TABLE: columns resolved, keys named and ordered as the
    server names and orders them."""
    table_collation: str = options["collation"]
    columns: list[Column] = []
    indexes: list[Index] = []
    checks: list[tuple[str | None, str]] = []
    foreign: list[Any] = []
    for kind, value in elements:
        if kind == "column":
            name, fields, column_options = value
            columns.append(
                _column(name, fields, column_options, table_collation, f"{database}.{bare}")
            )
            if column_options.get("primary"):
                indexes.append(Index("PRIMARY", "PRIMARY", ((name, None, False),)))
            if column_options.get("unique"):
                indexes.append(Index("UNIQUE", "", ((name, None, False),)))
        elif kind == "index":
            indexes.append(value)
        elif kind == "check":
            checks.append(value)
        else:
            foreign.append(value)
    check_references(columns, f"CREATE TABLE {bare}")
    refuse_hashed_unique(indexes, columns, f"CREATE TABLE {bare}")
    _check_keyed_generated(columns, indexes, bare)
    primaries = [index for index in indexes if index.kind == "PRIMARY"]
    if len(primaries) > 1:
        raise SchemaError(f"CREATE TABLE {bare}: multiple primary keys defined")
    # A PRIMARY KEY makes its columns NOT NULL (as the server does).
    primary = primaries[0].columns if primaries else ()
    primary_names = {name.lower() for name in primary}
    columns = [
        replace(item, nullable=False) if item.name.lower() in primary_names else item
        for item in columns
    ]
    foreign_keys = _foreign_keys(foreign, bare)
    keys = server_key_order(
        foreign_key_indexes(
            _named_keys(indexes, bare), foreign_keys, {entry[0] for entry in foreign}
        ),
        columns,
    )
    unique = tuple(
        index.columns for index in keys if index.kind == "UNIQUE" and not index.has_prefix
    )
    table = Table(
        database,
        bare,
        tuple(columns),
        primary_key=primary,
        unique_keys=unique,
        engine=options["engine"],
        indexes=keys,
        foreign_keys=foreign_keys,
        checks=_named_checks(checks),
        collation=table_collation,
        auto_increment=options.get("auto_increment"),
        options=options["options"],
        comment=options.get("comment", ""),
        partition=options.get("partition"),
    )
    if options.get("versioning"):
        if any(name in ("row_start", "row_end") for name in table.column_names):
            raise SchemaError(
                f"CREATE TABLE {bare}: declared period columns (AS ROW START/END) are not"
                " modelled: only the implicit row_start/row_end"
            )
        table = versioned_table(table)
    return table


def _named_keys(indexes: list[Index], table: str) -> list[Index]:
    """Unnamed keys take their first column's name (``_2``, ``_3``... when taken)."""
    taken = {index.name.lower() for index in indexes if index.name}
    named = []
    for index in indexes:
        if not index.name:
            base = index.parts[0][0]
            name, suffix = base, 2
            while name.lower() in taken:
                name, suffix = f"{base}_{suffix}", suffix + 1
            taken.add(name.lower())
            index = replace(index, name=name)
        elif index.kind != "PRIMARY" and index.name.upper() == "PRIMARY":
            raise SchemaError(f"CREATE TABLE {table}: a key named PRIMARY that is not the primary")
        named.append(index)
    seen: set[str] = set()
    for index in named:
        if index.name.lower() in seen:
            raise SchemaError(f"CREATE TABLE {table}: duplicate key name {index.name!r}")
        seen.add(index.name.lower())
    return named


def _foreign_keys(found: list[Any], table: str) -> tuple[ForeignKey, ...]:
    """Foreign keys, an unnamed one named ``<table>_ibfk_<n>`` as InnoDB names it."""
    keys = []
    for number, (name, columns, database, referenced_table, referenced, actions) in enumerate(
        found, 1
    ):
        if len(columns) != len(referenced):
            raise SchemaError(f"CREATE TABLE {table}: a foreign key's column counts differ")
        keys.append(
            ForeignKey(
                name or f"{table}_ibfk_{number}",
                columns,
                referenced_table,
                referenced,
                _shown_action(actions.get("on_delete")),
                _shown_action(actions.get("on_update")),
                database,
            )
        )
    return tuple(keys)


def _shown_action(action: str | None) -> str | None:
    """RESTRICT is InnoDB's default: SHOW CREATE TABLE prints no clause for it (10.11)."""
    return None if action == "RESTRICT" else action


def _named_checks(checks: list[tuple[str | None, str]]) -> tuple[tuple[str, str], ...]:
    """Table CHECK constraints, an unnamed one named ``CONSTRAINT_<n>`` as the server names it."""
    named = []
    number = 0
    for name, expression in checks:
        if name is None:
            number += 1  # the unnamed ones only (a named one takes no number: 10.11)
        named.append((name or f"CONSTRAINT_{number}", expression))
    return tuple(named)


_FSP_TYPES = ("time", "datetime", "timestamp")
_NOW_WORDS = ("CURRENT_TIMESTAMP", "NOW", "LOCALTIME", "LOCALTIMESTAMP")
# Default functions whose values the server draws per row (not the history's clock).
_DRAWN_DEFAULTS = ("UUID", "UUID_SHORT", "SYS_GUID")
# Column options the model refuses by name (rather than at the next token).
_UNMODELLED_COLUMN_OPTIONS = (
    "VIRTUAL",
    "PERSISTENT",
    "STORED",
    "REFERENCES",
    "WITH",
    "WITHOUT",
    "COMPRESSED",
    "SERIAL",
)


def _sizes(
    fields: dict[str, Any], kind: str, first: int | None, second: int | None, token: Token
) -> None:
    """Put the parenthesised numbers of a type into ``fields`` (checked against MariaDB's
    limits)."""
    where = f"{token.text} at {token.at}"
    if kind in INTEGER_RANGES or kind == "year":
        if second is not None:
            raise SchemaError(f"CREATE TABLE: {where} takes one number (a display width)")
        if kind in INTEGER_RANGES and first is not None:
            fields["width"] = first  # shown by SHOW CREATE TABLE, not in the binlog
        return
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
    if "generated" in options:
        _check_generated(name, fields, options)
    if "default_constant" in options:
        default = _constant_default(name, fields, options, table_collation, table_name)
    if fields["type"] in ("float", "double"):
        default = _approximate(default, fields["type"] == "float")
    elif fields["type"] in (*INTEGER_RANGES, "year") and isinstance(default, str):
        default = _integer_text(default)
    made = _declared_column(
        name, fields, options, table_collation, table_name, nullable=nullable, default=default
    )
    kept = {key: options[key] for key in _KEPT_COLUMN_OPTIONS if key in options}
    if made.nullable and made.default is None:
        kept["default"] = NO_DEFAULT  # DEFAULT NULL of a NULL-able column: as if none given
    quoted = "`" + name.replace("`", "``") + "`"
    if (made.type, made.collation, kept.get("check")) == (
        "longtext",
        "utf8mb4_bin",
        f"json_valid({quoted})",
    ):
        # JSON as SHOW CREATE TABLE prints it: LONGTEXT utf8mb4_bin with its CHECK.
        kept.update(type="json", check=None)
    return replace(made, **kept) if kept else made


# Table options an ALTER TABLE may give (ALGORITHM and LOCK: how, not what).
_ALTER_OPTIONS = (
    "ENGINE",
    "COMMENT",
    "AUTO_INCREMENT",
    "ALGORITHM",
    "LOCK",
    *PLAIN_TABLE_OPTIONS,
    *ENGINE_TABLE_OPTIONS,
)

# The types a generated column's value is modelled in (scenarios.expressions.fit).
_GENERATED_TYPES = frozenset(
    {*INTEGER_RANGES, "decimal", "char", "varchar", "tinytext", "text", "mediumtext", "longtext"}
)


def _check_generated(name: str, fields: dict[str, Any], options: dict[str, Any]) -> None:
    clashing = [
        word
        for key, word in (
            ("default", "DEFAULT"),
            ("default_expression", "DEFAULT"),
            ("on_update", "ON UPDATE"),
            ("auto_increment", "AUTO_INCREMENT"),
            ("primary", "PRIMARY KEY"),
        )
        if key in options
    ]
    if options.get("nullable") is False:
        clashing.append("NOT NULL")
    if clashing:
        raise SchemaError(f"CREATE TABLE: generated column {name} with {clashing[0]}")
    if fields["type"] not in _GENERATED_TYPES:
        raise SchemaError(
            f"CREATE TABLE: generated column {name}: a {fields['type'].upper()} value is not"
            " modelled"
        )


def _constant_default(
    name: str,
    fields: dict[str, Any],
    options: dict[str, Any],
    table_collation: str,
    table_name: str,
) -> Any:
    """The value of a constant DEFAULT expression as the column stores it."""
    plain = {key: value for key, value in fields.items() if key != "length_hint"}
    bare = _declared_column(
        name, plain, options, table_collation, table_name, nullable=True, default=NO_DEFAULT
    )
    try:
        return fit(bare, options["default"])
    except HistoryError as exc:
        raise SchemaError(f"CREATE TABLE: DEFAULT of {name}: {exc}") from None


def _declared_column(
    name: str,
    fields: dict[str, Any],
    options: dict[str, Any],
    table_collation: str,
    table_name: str,
    *,
    nullable: bool,
    default: Any,
) -> Column:
    """The column a definition declares, its CHARACTER SET and COLLATE taken from its
    options."""
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


def _unsigned(expression: Any, unsigned: set[str]) -> bool:
    if isinstance(expression, ColumnRef):
        return expression.name.lower() in unsigned
    if isinstance(expression, Operation) and expression.left is not None:
        return _unsigned(expression.left, unsigned) or _unsigned(expression.right, unsigned)
    return False


def _subtracts_unsigned(expression: Any, unsigned: set[str]) -> bool:
    if isinstance(expression, Operation):
        if expression.left is None:
            return _subtracts_unsigned(expression.right, unsigned)
        if expression.operator == "-" and (
            _unsigned(expression.left, unsigned) or _unsigned(expression.right, unsigned)
        ):
            return True
        return _subtracts_unsigned(expression.left, unsigned) or _subtracts_unsigned(
            expression.right, unsigned
        )
    return isinstance(expression, Call) and any(
        _subtracts_unsigned(argument, unsigned) for argument in expression.arguments
    )


def _check_keyed_generated(columns: list[Column], indexes: list[Index], table: str) -> None:
    """A STORED or keyed generated column may not subtract with an UNSIGNED operand (its
    value would follow the session's sql_mode NO_UNSIGNED_SUBTRACTION): the server refuses
    the table (ERROR 1901, checked on 10.11)."""
    keyed = {name.lower() for index in indexes for name in index.columns}
    unsigned = {item.name.lower() for item in columns if item.unsigned}
    for item in columns:
        if item.generated is None or not (item.stored or item.name.lower() in keyed):
            continue
        if _subtracts_unsigned(item.generated, unsigned):
            raise SchemaError(
                f"CREATE TABLE {table}: generated column {item.name} subtracts an UNSIGNED"
                " value (the server refuses it in a STORED or keyed column: ERROR 1901)"
            )


# Column options kept on the Column as they are (see scenarios.schema.Column).
_KEPT_COLUMN_OPTIONS = (
    "auto_increment",
    "default_expression",
    "on_update",
    "comment",
    "check",
    "generated",
    "stored",
    "invisible",
    "default_constant",
)


def _integer_text(text: str) -> Any:
    """A quoted DEFAULT of an integer column (``DEFAULT '0'``, as ORMs write it): the number
    it spells, else the text (refused by the column's conversion)."""
    stripped = text.strip()
    body = stripped[1:] if stripped[:1] in "+-" else stripped
    return int(stripped) if body.isdigit() else text


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


def parse_ddl(
    text: str, database: str | None = None, tables: Mapping[str, Table] | None = None
) -> DdlStatement:
    """The statement ``text`` is (CREATE TABLE, ALTER TABLE with ADD/DROP/MODIFY [COLUMN] and
    FIRST/AFTER, ADD [UNIQUE|FULLTEXT|SPATIAL] KEY and DROP INDEX, DROP TABLE, TRUNCATE [TABLE], RENAME TABLE a TO b); ``database`` for
    unqualified names. A column an ALTER adds or modifies without a character set takes
    utf8mb4_general_ci (the table's own default is not known from the table)."""
    return _Parser(text, tables).ddl(database)
