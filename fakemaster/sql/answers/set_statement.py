"""SET: user variables, system variables (scope, privileges, values checked as MariaDB
10.11 checks them), SET NAMES, SET CHARACTER SET and SET TRANSACTION.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from decimal import Decimal

from fakemaster.config.variables import (
    CHARSET_VARIABLES,
    COLLATION_VARIABLES,
    SQL_MODE_COMBINATIONS,
    SYSTEM_VARIABLES,
    SystemVariable,
    Value,
    VarKind,
    lookup,
    show_text,
)
from fakemaster.protocol.charsets import UTF8MB3_GENERAL_CI, charset_default, collation_by_name
from fakemaster.protocol.resultset import SessionTrack, session_state_entry, sql_error
from fakemaster.sql.expressions import evaluate, stored_user_value
from fakemaster.sql.outcome import Context, OkResult, Response
from fakemaster.sql.sqltext import DefaultValue, Expr, Parser, Tok, Word
from fakemaster.sql.sqlvalue import SqlValue, UKind
from fakemaster.sql.state import SessionState
from fakemaster.vocabulary.errcodes import (
    ER_CANT_CHANGE_TX_CHARACTERISTICS,
    ER_COLLATION_CHARSET_MISMATCH,
    ER_GLOBAL_VARIABLE,
    ER_INCORRECT_GLOBAL_LOCAL_VAR,
    ER_LOCAL_VARIABLE,
    ER_UNKNOWN_CHARACTER_SET,
    ER_UNKNOWN_COLLATION,
    ER_UNKNOWN_STRUCTURED_VARIABLE,
    ER_UNKNOWN_SYSTEM_VARIABLE,
    ER_UNKNOWN_TIME_ZONE,
    ER_VARIABLE_IS_READONLY,
    ER_WRONG_TYPE_FOR_VAR,
    ER_WRONG_VALUE_FOR_VAR,
)

__all__ = ["set_type_value", "set_statement"]


@dataclass(slots=True)
class _Assignment:
    apply: Callable[[], None]
    tracked: list[tuple[str, Value]] = field(default_factory=list)


def set_statement(ctx: Context) -> Response:
    parser = ctx.parser(1)
    session = ctx.session
    assignments: list[_Assignment] = []
    default_scope = ""
    scope_word = parser.accept_word("GLOBAL", "SESSION", "LOCAL")
    if scope_word is not None and parser.peek.is_word("TRANSACTION"):
        return _set_transaction(parser, session, scope_word.text.lower())
    if scope_word is None and parser.peek.is_word("TRANSACTION"):
        return _set_transaction(parser, session, "")
    if scope_word is not None:
        default_scope = scope_word.text.lower()
    while True:
        assignments.append(_set_item(parser, session, default_scope))
        if not parser.accept_op(","):
            break
    parser.expect_end()
    warnings = 0
    state: list[bytes] = []
    tracked_names = _tracked_variables(session)
    for assignment in assignments:
        assignment.apply()
        for name, value in assignment.tracked:
            if name in tracked_names:
                state.append(
                    session_state_entry(
                        SessionTrack.SYSTEM_VARIABLES,
                        name.encode(),
                        show_text(SYSTEM_VARIABLES[name].kind, value).encode(),
                    )
                )
    return OkResult(session_state=state, warnings=warnings)


def _tracked_variables(session: SessionState) -> set[str]:
    listed = str(session.variables.get("session_track_system_variables") or "")
    return {name.strip().lower() for name in listed.split(",") if name.strip()}


def _set_transaction(parser: Parser, session: SessionState, scope: str) -> Response:
    parser.expect_word("TRANSACTION")
    changes: dict[str, Value] = {}
    while True:
        if parser.accept_word("ISOLATION"):
            parser.expect_word("LEVEL")
            if parser.accept_word("READ"):
                level = "READ-" + parser.expect_word("COMMITTED", "UNCOMMITTED").text.upper()
            elif parser.accept_word("REPEATABLE"):
                parser.expect_word("READ")
                level = "REPEATABLE-READ"
            else:
                parser.expect_word("SERIALIZABLE")
                level = "SERIALIZABLE"
            changes["tx_isolation"] = level
        elif parser.accept_word("READ"):
            changes["tx_read_only"] = parser.expect_word("ONLY", "WRITE").text.upper() == "ONLY"
        else:
            raise parser.error()
        if not parser.accept_op(","):
            break
    parser.expect_end()
    if scope == "global":
        for name in changes:
            session.require(SYSTEM_VARIABLES[name].global_privileges)
    if session.in_transaction and scope == "":
        raise sql_error(ER_CANT_CHANGE_TX_CHARACTERISTICS)
    if scope == "global":
        session.server.globals.update(changes)
    elif scope in ("session", "local"):
        session.variables.update(changes)
    return OkResult()


def _set_item(parser: Parser, session: SessionState, default_scope: str) -> _Assignment:
    token = parser.peek
    if token.kind is Tok.USER_VAR:
        parser.next()
        parser.expect_op("=", ":=")
        expr = parser.expression()
        name = token.text.lower()
        value = _assignable_value(expr, session, name)
        return _Assignment(lambda: session.user_variables.__setitem__(name, value))
    if token.is_word("NAMES"):
        parser.next()
        return _set_names(parser, session)
    if token.is_word("CHARACTER", "CHARSET"):
        parser.next()
        if token.text.upper() == "CHARACTER":
            parser.expect_word("SET")
        return _set_character_set(parser, session)
    scope = default_scope
    if token.kind is Tok.SYS_VAR:
        parser.next()
        name = token.text
        scope = token.extra or scope
        if "." in name:
            raise sql_error(ER_UNKNOWN_STRUCTURED_VARIABLE, name.split(".", 1)[0])
    else:
        word = parser.accept_word("GLOBAL", "SESSION", "LOCAL")
        if word is not None:
            scope = word.text.lower()
        name_token = parser.next()
        if name_token.kind not in (Tok.WORD, Tok.QUOTED_IDENT):
            raise parser.error(name_token)
        name = name_token.text
        if parser.peek.is_op(".") and name_token.kind is Tok.WORD:
            raise sql_error(ER_UNKNOWN_STRUCTURED_VARIABLE, name)
    parser.expect_op("=", ":=")
    expr = parser.expression()
    return _set_system_variable(session, name, scope, expr)


def _assignable_value(expr: Expr, session: SessionState, name: str) -> SqlValue:
    return stored_user_value(evaluate(expr, "", session, "SET").value, session, name)


def _set_names(parser: Parser, session: SessionState) -> _Assignment:
    if parser.accept_word("DEFAULT"):
        charset = charset_default(str(session.server.globals["character_set_client"]))
        collation = charset
    else:
        name = parser.name()
        charset = charset_default(name)
        if charset is None:
            raise sql_error(ER_UNKNOWN_CHARACTER_SET, name)
        collation = charset
        if parser.accept_word("COLLATE"):
            collation_name = parser.name()
            collation = collation_by_name(collation_name)
            if collation is None:
                raise sql_error(ER_UNKNOWN_COLLATION, collation_name)
            if collation.charset != charset.charset:
                raise sql_error(ER_COLLATION_CHARSET_MISMATCH, collation.name, charset.charset)
    assert charset is not None and collation is not None
    chosen_charset, chosen_collation = charset.charset, collation.name

    def apply() -> None:
        session.variables["character_set_client"] = chosen_charset
        session.variables["character_set_connection"] = chosen_charset
        session.set_results_charset(chosen_charset, collation)
        session.variables["collation_connection"] = chosen_collation

    tracked: list[tuple[str, Value]] = [
        ("character_set_connection", chosen_charset),
        ("character_set_client", chosen_charset),
        ("character_set_results", chosen_charset),
    ]
    return _Assignment(apply, tracked)


def _set_character_set(parser: Parser, session: SessionState) -> _Assignment:
    if parser.accept_word("DEFAULT"):
        charset = charset_default(str(session.server.globals["character_set_client"]))
    else:
        name = parser.name()
        charset = charset_default(name)
        if charset is None:
            raise sql_error(ER_UNKNOWN_CHARACTER_SET, name)
    assert charset is not None
    database_charset = str(session.variables["character_set_database"])
    database_collation = str(session.variables["collation_database"])
    chosen = charset.charset

    def apply() -> None:
        session.variables["character_set_client"] = chosen
        session.set_results_charset(chosen)
        session.variables["character_set_connection"] = database_charset
        session.variables["collation_connection"] = database_collation

    tracked: list[tuple[str, Value]] = [
        ("character_set_connection", database_charset),
        ("character_set_client", chosen),
        ("character_set_results", chosen),
    ]
    return _Assignment(apply, tracked)


def _set_system_variable(
    session: SessionState, written_name: str, scope: str, expr: Expr
) -> _Assignment:
    var = lookup(written_name)
    if var is None:
        raise sql_error(ER_UNKNOWN_SYSTEM_VARIABLE, written_name)
    name = var.name
    is_global = scope == "global"
    if var.read_only:
        raise sql_error(ER_INCORRECT_GLOBAL_LOCAL_VAR, name, "read only")
    if is_global and not var.allows_global():
        raise sql_error(ER_LOCAL_VARIABLE, name)
    if not is_global and not var.allows_session():
        raise sql_error(ER_GLOBAL_VARIABLE, name)
    if not is_global and var.session_read_only:
        raise sql_error(ER_VARIABLE_IS_READONLY, "SESSION", name, "GLOBAL")
    # After the scope checks, before the value is looked at (a bad value by a user without
    # the privilege is still 1227), as MariaDB orders them.
    session.require(var.global_privileges if is_global else var.session_privileges)
    if isinstance(expr, DefaultValue):
        value = (
            var.default if is_global or not var.allows_global() else session.server.globals[name]
        )
    else:
        value = _system_value(var, expr, session)

    def apply() -> None:
        if is_global:
            session.server.globals[name] = value
            return
        session.variables[name] = value
        if name == "character_set_results":
            session.set_results_charset(value)
        if name == "autocommit" and value:
            session.in_transaction = False
        if name == "collation_connection" and isinstance(value, str):
            collation = collation_by_name(value)
            if collation is not None:
                session.variables["character_set_connection"] = collation.charset
        if name == "character_set_connection" and isinstance(value, str):
            charset = charset_default(value)
            if charset is not None:
                session.variables["collation_connection"] = charset.name

    return _Assignment(apply, [] if is_global else [(name, value)])


def _system_value(var: SystemVariable, expr: Expr, session: SessionState) -> Value:
    """The value ``SET [scope] var = expr`` stores, checked and converted as MariaDB does for
    the variable's kind."""
    if isinstance(expr, Word):  # SET var = word: the word is the value (ON, utf8mb4, ...)
        raw: SqlValue = SqlValue(UKind.STRING, expr.name, collation=UTF8MB3_GENERAL_CI)
    else:
        raw = evaluate(expr, "", session, "SET").value
    value = raw.value
    if isinstance(value, bytes):
        value = value.decode("utf-8", "surrogateescape")
    kind = var.kind
    if kind is VarKind.BOOL:
        return _bool_value(var.name, value)
    if kind in (VarKind.UINT, VarKind.INT):
        if not isinstance(value, int):
            raise sql_error(ER_WRONG_TYPE_FOR_VAR, var.name)
        return max(value, 0) if kind is VarKind.UINT else value
    if kind is VarKind.DOUBLE:
        if isinstance(value, int | Decimal | float):
            return float(value)
        raise sql_error(ER_WRONG_TYPE_FOR_VAR, var.name)
    # strings, enums, sets, character sets, collations
    return _text_value(var, raw.value, value)


def _bool_value(name: str, value: int | Decimal | float | str | None) -> bool:
    """ON/OFF/TRUE/FALSE (any case) or 0/1."""
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    if isinstance(value, str) and value.upper() in ("ON", "OFF", "TRUE", "FALSE"):
        return value.upper() in ("ON", "TRUE")
    if isinstance(value, Decimal | float):
        raise sql_error(ER_WRONG_TYPE_FOR_VAR, name)
    shown = "NULL" if value is None else str(value)
    raise sql_error(ER_WRONG_VALUE_FOR_VAR, name, shown)


def _text_value(
    var: SystemVariable, raw: object, value: int | Decimal | float | str | None
) -> str | None:
    """A string-like variable's value: NULL where the variable allows it, a character set's or
    collation's own name, a time zone, one of the variable's choices, or the text itself."""
    name = var.name
    if value is None:
        if name == "character_set_results" or var.default is None:
            return None
        raise sql_error(ER_WRONG_VALUE_FOR_VAR, name, "NULL")
    text = str(value)
    if name in CHARSET_VARIABLES:
        charset = charset_default(text)
        if charset is None:
            raise sql_error(ER_UNKNOWN_CHARACTER_SET, text)
        return charset.charset
    if name in COLLATION_VARIABLES:
        collation = collation_by_name(text)
        if collation is None:
            raise sql_error(ER_UNKNOWN_COLLATION, text)
        return collation.name
    if name == "time_zone":
        return _time_zone(text)
    if var.choices is not None:
        if var.is_set:
            return set_type_value(var, name, raw, text)
        by_upper = {choice.upper(): choice for choice in var.choices}
        if text.upper() not in by_upper:
            raise sql_error(ER_WRONG_VALUE_FOR_VAR, name, text)
        return by_upper[text.upper()]
    return text


def _time_zone(text: str) -> str:
    """SYSTEM or an offset from UTC such as ``+02:00`` (the forms taken here)."""
    if text.upper() == "SYSTEM":
        return "SYSTEM"
    if not re.fullmatch(r"[+-]\d{1,2}:\d{2}", text.strip()):
        raise sql_error(ER_UNKNOWN_TIME_ZONE, text)
    return text.strip()


def set_type_value(var: SystemVariable, name: str, value: object, text: str) -> str:
    """A SET-type value: flags (or a bit mask) in any order and case, combination modes
    expanded, shown in the variable's own order like the server does."""
    choices = var.choices or ()
    if isinstance(value, int):
        if value < 0 or value >= 1 << len(choices):
            raise sql_error(ER_WRONG_VALUE_FOR_VAR, name, text)
        chosen = {choice for bit, choice in enumerate(choices) if value >> bit & 1}
    else:
        by_upper = {choice.upper(): choice for choice in choices}
        chosen = set()
        for part in (part.strip().upper() for part in text.split(",")):
            if not part:
                continue
            if part not in by_upper:
                raise sql_error(ER_WRONG_VALUE_FOR_VAR, name, text)
            chosen.add(by_upper[part])
    if name == "sql_mode":
        for combination in [mode for mode in chosen if mode in SQL_MODE_COMBINATIONS]:
            chosen.update(SQL_MODE_COMBINATIONS[combination].split(","))
    return ",".join(choice for choice in choices if choice in chosen)
