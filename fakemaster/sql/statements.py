"""COM_QUERY: the table of statements a fake master answers, and :func:`execute`.

:data:`STATEMENTS` is the one table: a pattern on the statement text and the function that
answers it. The patterns read the text with its comments blanked
(:func:`~fakemaster.sql.sqltext.lex`: the one place comments are handled, as MariaDB's lexer
does, executable ones by the served version), so they never deal with comments themselves. Every answer (column definitions, values, status bits, error texts) copies what a
MariaDB 10.11 primary sends for the same statement (transcripts captured from one are in
``tests/golden/mariadb_10_11_queries.json``).

The handlers live in modules of one job each: :mod:`~fakemaster.sql.answers.select`,
:mod:`~fakemaster.sql.answers.set_statement`, :mod:`~fakemaster.sql.answers.show`,
:mod:`~fakemaster.sql.answers.connection_statements` (KILL, USE, transactions),
:mod:`~fakemaster.sql.answers.replication_show` (SHOW SLAVE STATUS),
:mod:`~fakemaster.sql.answers.flush_logs`, :mod:`~fakemaster.sql.answers.explain`,
:mod:`~fakemaster.sql.answers.grants_show`,
:mod:`~fakemaster.sql.answers.account_statements` (CREATE/DROP USER, GRANT, REVOKE) and :mod:`~fakemaster.sql.answers.unsupported`; the state they read and change is in
:mod:`~fakemaster.sql.state`, what they return in :mod:`~fakemaster.sql.outcome`.
The table names each by module and function (:class:`Answer`): a module is imported when a
statement first needs it, so a client loads only the answers it asks for.
Executing a statement returns an :class:`~fakemaster.sql.outcome.Outcome`; side effects
that need the network (killing another connection) are described in it for the session to
carry out. ``SET STATEMENT ... FOR`` is answered here: it dispatches its inner statement.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable

from fakemaster.config.server_config import DEFAULT_VERSION
from fakemaster.config.variables import lookup
from fakemaster.protocol.handshake import Capability
from fakemaster.protocol.resultset import ResultSet, SqlError, sql_error, syntax_error
from fakemaster.sql.outcome import Context, Handler, OkResult, Outcome, Response
from fakemaster.sql.release import release_deferred, release_in_slices
from fakemaster.sql.sqltext import (
    Parser,
    StatementText,
    Tok,
    Token,
    lex,
    line_of,
    split_statements,
    version_id,
)
from fakemaster.sql.state import SessionState
from fakemaster.sql.status_variables import PARSE_TIME_ERRORS, com_variable
from fakemaster.vocabulary.errcodes import ER_EMPTY_QUERY

__all__ = ["STATEMENTS", "Answer", "Statement", "execute", "set_statement_for"]


def set_statement_for(ctx: Context) -> Response:
    """SET STATEMENT var=value[, ...] FOR <statement>: the settings only last for the inner
    statement, which is all that is answered here, once the session may set them.

    The statement is cut at the token level, each nested ``SET STATEMENT ... FOR`` in turn (a
    real server takes them), in one pass: no pattern on the text, which would backtrack over a
    long run of spaces, and no recursion however deep the nesting."""
    tokens = ctx.tokens
    parser = Parser(ctx.text, tokens, ctx.quote_text, ctx.cuts, ctx.first_line)
    start = 0  # the SET of the current level
    while tokens[start].is_word("SET") and tokens[start + 1].is_word("STATEMENT"):
        settings = start + 2
        index = next(
            (i for i in range(settings, len(tokens)) if tokens[i].is_word("FOR")), len(tokens) - 1
        )
        if index == settings or tokens[index].kind is Tok.END:
            raise parser.error(tokens[index])
        if tokens[index + 1].kind is Tok.END:
            raise parser.error(tokens[index + 1])
        _check_statement_settings(ctx.session, tokens[settings:index])
        start = index + 1
    base = tokens[start].start
    rebased = [
        Token(t.kind, t.text, t.start - base, t.end - base, t.extra, t.raw) for t in tokens[start:]
    ]
    inner = StatementText(
        base,
        ctx.text[base:],
        rebased,
        ctx.plain[base:],
        tuple((max(a, base) - base, b - base) for a, b in ctx.cuts if b > base),
        ctx.first_line + ctx.text.count("\n", 0, base),
    )
    return _dispatch(ctx.session, inner, ctx.outcome, ctx.quote_text[base:])


def _check_statement_settings(session: SessionState, tokens: list[Token]) -> None:
    """ER_SPECIFIC_ACCESS_DENIED_ERROR for the first variable SET STATEMENT names that the
    session may not set (the settings are session ones)."""
    for token, following in zip(tokens, tokens[1:], strict=False):
        if token.kind is Tok.WORD and following.is_op("=", ":="):
            var = lookup(token.text)
            if var is not None:
                session.require(var.session_privileges)


# ---------------------------------------------------------------------------------------------
# The table


class Answer:
    """The function ``name`` of ``fakemaster.sql.answers.<module>``, imported the first time a
    statement calls it: a client loads the answers it asks for (a replica: SET, SELECT, SHOW
    VARIABLES), not every module of the table, about 35 on the first client's path before
    (issue #25: what a first dump after a start pays). Named as the function it stands for
    (the Com_ counters and the tests go by the name)."""

    __slots__ = ("module", "name", "_function")

    def __init__(self, module: str, name: str) -> None:
        self.module = f"fakemaster.sql.answers.{module}"
        self.name = name
        self._function: Handler | None = None

    @property
    def __name__(self) -> str:
        return self.name

    def resolve(self) -> Handler:
        """The function itself (imported now if no statement needed it yet)."""
        function = self._function
        if function is None:
            function = getattr(importlib.import_module(self.module), self.name)
            self._function = function
        return function

    def __call__(self, ctx: Context) -> Response:
        return self.resolve()(ctx)

    def __repr__(self) -> str:
        return f"Answer({self.module}.{self.name})"


_SELECT = Answer("select", "select")
_SELECT_FROM_TABLE = Answer("table_select", "select_from_table")
_AGGREGATE_SELECT = Answer("aggregate_select", "aggregate_select")


def select_any(ctx: Context) -> Response:
    """SELECT from a table (:mod:`~fakemaster.sql.answers.table_select`) or without one."""
    # Only a SELECT with the word FROM can read a table: a replica's SELECT @@var or
    # UNIX_TIMESTAMP() is answered without loading the table answers (catalogue, schemas).
    if any(token.is_word("FROM") for token in ctx.tokens):
        from fakemaster.sql.answers.aggregate_select import is_row_aggregate
        from fakemaster.sql.answers.table_select import from_table

        if from_table(ctx):
            if is_row_aggregate(ctx):
                return _AGGREGATE_SELECT(ctx)
            return _SELECT_FROM_TABLE(ctx)
    return _SELECT(ctx)


class Statement:
    """A row of the table: the pattern a statement's text matches, its answer, and statements
    real clients send that the row answers.

    The pattern is compiled when a statement first reaches the row (the table is read in
    order): a replica's SET, SELECT and SHOW VARIABLES compile four of the 46 patterns, not
    all of them at its first query (issue #25)."""

    __slots__ = ("source", "handler", "examples", "match", "_pattern")

    def __init__(self, source: str, handler: Handler, examples: tuple[str, ...]) -> None:
        self.source = source
        self.handler = handler
        self.examples = examples
        self._pattern: re.Pattern[str] | None = None
        # The pattern's match once compiled: every statement tries the rows before its own,
        # so the dispatch calls it directly (no property on the way).
        self.match: Callable[[str], re.Match[str] | None] = self._compile_and_match

    @property
    def pattern(self) -> re.Pattern[str]:
        pattern = self._pattern
        if pattern is None:
            pattern = self._pattern = re.compile(self.source, re.I | re.S)
        return pattern

    def _compile_and_match(self, text: str) -> re.Match[str] | None:
        self.match = self.pattern.match
        return self.match(text)

    def __repr__(self) -> str:
        return f"Statement({self.source!r}, {self.handler!r})"


def _statement(pattern: str, handler: Handler, *examples: str) -> Statement:
    return Statement(pattern, handler, examples)


# fmt: off
STATEMENTS: tuple[Statement, ...] = (
    _statement(r"SET\s+STATEMENT\b", set_statement_for,
               "SET STATEMENT max_statement_time=1 FOR SELECT 1"),
    _statement(r"SELECT\b", select_any,
               "SELECT UNIX_TIMESTAMP()", "SELECT @@GLOBAL.gtid_domain_id",
               "SELECT @master_binlog_checksum", "SELECT VERSION()",
               "SELECT @@version_comment LIMIT 1", "SELECT binlog_gtid_pos('mysql-bin.000001',4)",
               "SELECT @rpl_semi_sync_slave=1", "select @@server_id",
               "SELECT @@GLOBAL.gtid_binlog_pos", "SELECT @@GLOBAL.gtid_current_pos",
               "SELECT DISTINCT User, Host FROM mysql.user  ORDER BY User, Host"),
    _statement(r"SET\b", Answer("set_statement", "set_statement"),
               "SET @master_binlog_checksum= @@global.binlog_checksum",
               "SET @master_heartbeat_period= 1000000000", "SET @mariadb_slave_capability=4",
               "SET @slave_connect_state=''", "SET @slave_gtid_strict_mode=0",
               "SET @slave_gtid_ignore_duplicates=0", "SET @slave_until_gtid='0-1-5'",
               "SET @rpl_semi_sync_slave= 1", "SET skip_replication=1", "SET NAMES utf8",
               "SET AUTOCOMMIT = 0",
               "SET @master_binlog_checksum='NONE', @source_binlog_checksum='NONE'",
               "set net_write_timeout=600"),
    _statement(r"SHOW\s+(?:(?P<scope>GLOBAL|SESSION|LOCAL)\s+)?VARIABLES\b",
               Answer("show", "show_variables"),
               "SHOW VARIABLES LIKE 'SERVER_ID'", "SHOW GLOBAL VARIABLES LIKE 'BINLOG_CHECKSUM'",
               "SHOW VARIABLES LIKE 'rpl_semi_sync_master_enabled'",
               "SHOW VARIABLES WHERE Variable_name IN ('rpl_semi_sync_master_enabled', "
               "'rpl_semi_sync_source_enabled')"),
    _statement(r"SHOW\s+(?:(?P<scope>GLOBAL|SESSION|LOCAL)\s+)?STATUS\b",
               Answer("show", "show_status"),
               "SHOW STATUS LIKE 'Uptime'"),
    _statement(r"SHOW\s+(?:MASTER|BINLOG)\s+STATUS\b", Answer("show", "show_master_status"),
               "SHOW MASTER STATUS"),
    _statement(r"SHOW\s+(?:DATABASES|SCHEMAS)\b", Answer("schema_show", "show_databases"),
               "SHOW DATABASES"),
    _statement(r"SHOW\s+CREATE\s+(?:DATABASE|SCHEMA)\b",
               Answer("schema_show", "show_create_database"),
               "SHOW CREATE DATABASE IF NOT EXISTS `shop`"),
    _statement(r"SHOW\s+CREATE\s+TABLE\b", Answer("schema_show", "show_create_table"),
               "show create table `shop`.`t`"),
    _statement(r"SHOW\s+(?P<full>FULL\s+)?TABLES\b", Answer("schema_show", "show_tables"),
               "SHOW FULL TABLES FROM `shop`",
               "SHOW FULL TABLES IN `shop` where Table_Type = 'BASE TABLE'"),
    _statement(r"SHOW\s+TABLE\s+STATUS\b", Answer("schema_show", "show_table_status"),
               "SHOW TABLE STATUS FROM `shop` LIKE 't'"),
    _statement(r"SHOW\s+(?P<full>FULL\s+)?(?:COLUMNS|FIELDS)\s+(?:FROM|IN)\b",
               Answer("schema_show", "show_columns"),
               "SHOW FULL COLUMNS FROM `t` FROM `shop`", "show fields from `shop`.`t`"),
    _statement(r"SHOW\s+(?:INDEX|INDEXES|KEYS)\s+(?:FROM|IN)\b",
               Answer("schema_show", "show_index"),
               "SHOW INDEX FROM `shop`.`t`"),
    _statement(r"SHOW\s+EVENTS\b", Answer("schema_show", "show_events"), "SHOW EVENTS FROM `shop`"),
    _statement(r"SHOW\s+(?:FUNCTION|PROCEDURE|PACKAGE(?:\s+BODY)?)\s+STATUS\b",
               Answer("schema_show", "show_routine_status"),
               "SHOW FUNCTION STATUS WHERE Db = 'shop'",
               "SHOW PACKAGE BODY STATUS LIKE 'p%'"),
    _statement(r"FLUSH\b(?:\s|LOCAL\b|NO_WRITE_TO_BINLOG\b)*TABLES?\s*"
               r"(?:WITH\s+READ\s+LOCK\s*)?$",
               Answer("snapshot", "flush_tables"),
               "FLUSH TABLES WITH READ LOCK", "FLUSH /*!40101 LOCAL */ TABLES"),
    _statement(r"UNLOCK\s+TABLES\s*$", Answer("snapshot", "unlock_tables"), "UNLOCK TABLES"),
    _statement(r"LOCK\s+TABLES?\b", Answer("snapshot", "lock_tables"),
               "LOCK TABLES `shop`.`t` READ /*!32311 LOCAL */", "LOCK TABLE `shop`.`t` AS a WRITE"),
    _statement(r"(?:SAVEPOINT|RELEASE\s+SAVEPOINT|ROLLBACK\s+(?:WORK\s+)?TO)\b",
               Answer("snapshot", "savepoint"),
               "SAVEPOINT sp"),
    _statement(r"START\s+TRANSACTION\b.*\bWITH\s+CONSISTENT\s+SNAPSHOT\b",
               Answer("snapshot", "start_consistent_snapshot"),
               "START TRANSACTION /*!40100 WITH CONSISTENT SNAPSHOT */"),
    _statement(r"SHOW\s+(?:BINARY|MASTER)\s+LOGS\b", Answer("show", "show_binary_logs"),
               "SHOW BINARY LOGS"),
    _statement(r"SHOW\s+(?:SLAVE|REPLICA)\s+HOSTS\b", Answer("show", "show_slave_hosts"),
               "SHOW SLAVE HOSTS"),
    _statement(r"SHOW\s+(?:ALL\s+)?(?:SLAVE|REPLICA)S?\b",
               Answer("replication_show", "show_slave_status"),
               "SHOW SLAVE STATUS",
               "SHOW ALL SLAVES STATUS", "SHOW REPLICA STATUS", "SHOW SLAVE '' STATUS"),
    _statement(r"SHOW\s+(?P<full>FULL\s+)?PROCESSLIST\b", Answer("processlist", "show_processlist"),
               "SHOW PROCESSLIST",
               "SHOW FULL PROCESSLIST"),
    _statement(r"SHOW\s+GRANTS\b", Answer("grants_show", "show_grants"),
               "SHOW GRANTS", "SHOW GRANTS FOR CURRENT_USER()"),
    _statement(r"CREATE\s+(?:OR\s+REPLACE\s+)?USER\b", Answer("account_statements", "create_user"),
               "CREATE USER IF NOT EXISTS cdc@'%' IDENTIFIED BY 'pw'"),
    _statement(r"DROP\s+USER\b", Answer("account_statements", "drop_user"),
               "DROP USER IF EXISTS cdc@'%'"),
    _statement(r"GRANT\b", Answer("account_statements", "grant"),
               "GRANT SELECT, LOCK TABLES ON shop.* TO root@'%'"),
    _statement(r"REVOKE\b", Answer("account_statements", "revoke"),
               "REVOKE RELOAD ON *.* FROM root@'%'"),
    _statement(r"SHOW\s+(?:STORAGE\s+)?ENGINES\b", Answer("show", "show_engines"), "SHOW ENGINES"),
    _statement(r"SHOW\s+ENGINE\b", Answer("engine_show", "show_engine"),
               "SHOW ENGINE MyISAM STATUS"),
    _statement(r"SHOW\s+PLUGINS\b", Answer("schema_show", "show_plugins"), "SHOW PLUGINS"),
    _statement(r"SHOW\s+TRIGGERS\b", Answer("schema_show", "show_triggers"),
               "SHOW TRIGGERS FROM `shop` LIKE 't'"),
    _statement(r"FLUSH\b(?:\s|LOCAL\b|NO_WRITE_TO_BINLOG\b)*"
               r"(?:(?:BINARY|ENGINE|ERROR|GENERAL|SLOW|RELAY)\s+)?LOGS\b",
               Answer("flush_logs", "flush_logs"),
               "FLUSH LOGS", "FLUSH /*!40101 LOCAL */ BINARY LOGS",
               "FLUSH BINARY LOGS, ENGINE LOGS"),
    _statement(r"SHOW\s+(?P<what>WARNINGS|ERRORS)\b", Answer("show", "show_warnings"),
               "SHOW WARNINGS"),
    _statement(r"(?:EXPLAIN|DESCRIBE|DESC)\s+SELECT\b", Answer("explain", "explain"),
               "EXPLAIN SELECT `id` FROM `shop`.`t`", "EXPLAIN SELECT 1"),
    _statement(r"KILL(?:\s+(?P<what>CONNECTION|QUERY))?\b", Answer("connection_statements", "kill"),
               "KILL 12", "KILL QUERY 12"),
    _statement(r"USE\b", Answer("connection_statements", "use_database"), "USE information_schema"),
    _statement(r"(?:BEGIN(?:\s+WORK)?|START\s+TRANSACTION\b.*)\s*$",
               Answer("connection_statements", "begin"),
               "BEGIN", "START TRANSACTION"),
    _statement(r"(?:COMMIT|ROLLBACK)(?:\s+WORK)?\s*$",
               Answer("connection_statements", "end_transaction"),
               "COMMIT", "ROLLBACK"),
    _statement(r"CREATE\s+(?:DATABASE|SCHEMA)\b", Answer("client_writes", "create_database"),
               "CREATE DATABASE IF NOT EXISTS `percona` /* pt-table-checksum */"),
    _statement(r"CREATE\s+TABLE\b", Answer("client_writes", "create_table"),
               "CREATE TABLE IF NOT EXISTS `percona`.`checksums` (db CHAR(64) NOT NULL)"),
    _statement(r"(?:INSERT|REPLACE)\b", Answer("client_writes", "insert"),
               "REPLACE INTO `percona`.`checksums` (db, tbl, chunk) SELECT 'k', 't', '1'"),
    _statement(r"UPDATE\b", Answer("client_writes", "update"),
               "UPDATE `percona`.`checksums` SET master_cnt = '60' WHERE db = 'k'"),
    _statement(r"DELETE\b", Answer("client_writes", "delete"),
               "DELETE FROM `percona`.`checksums` WHERE db = 'keys' AND tbl = 'many'"),
    # Statements a real server knows but a fake master does not emulate: ER_NOT_SUPPORTED_YET
    # (or OK when the config is lenient), never a misleading syntax error.
    _statement(
        r"(?:ALTER|ANALYZE|BINLOG|CALL|CHANGE|CHECK|CHECKSUM|CREATE|DEALLOCATE|DELETE|DESC|"
        r"DESCRIBE|DO|DROP|EXECUTE|EXPLAIN|FLUSH|GRANT|HANDLER|HELP|INSERT|INSTALL|LOAD|LOCK|"
        r"OPTIMIZE|PREPARE|PURGE|RENAME|REPAIR|REPLACE|RESET|REVOKE|SAVEPOINT|SHOW|SHUTDOWN|"
        r"START|STOP|TRUNCATE|UNINSTALL|UNLOCK|UPDATE|WITH|XA)\b",
        Answer("unsupported", "not_supported"),
        "FLUSH STATUS", "PURGE BINARY LOGS TO 'mysql-bin.000002'", "SHOW OPEN TABLES",
    ),
)
# fmt: on


# ---------------------------------------------------------------------------------------------
# Entry point


def execute(session: SessionState, text: str) -> Outcome:
    """Answer one COM_QUERY. Several statements separated by ';' need CLIENT_MULTI_STATEMENTS,
    as on a real server; the answers stop at the first error."""
    outcome = Outcome()
    # As MariaDB's alloc_query: blanks before, blanks and ';' after the query are not part of
    # it (errors quote and number lines without them).
    text = text.lstrip(_BLANKS).rstrip(_BLANKS + ";")
    if text.endswith("\0"):
        # The lexer takes a NUL as the end of the query when it is the last character, and
        # rejects one anywhere else (MariaDB 10.11: "SELECT 1\0" is SELECT 1).
        text = text[:-1].rstrip(_BLANKS + ";")
    try:
        lexed = lex(text, version_id(session.server.config.version or DEFAULT_VERSION))
    except SqlError as lexing_error:
        return _fail(session, outcome, lexing_error)
    statements = split_statements(text, lexed)
    if not statements:
        if lexed.found_comment:
            # Comments and nothing else: MariaDB's parser sees no statement and answers OK.
            outcome.responses.append(OkResult())
            _note_state(session, outcome)
            _record(session, outcome.responses[-1])
            return outcome
        return _fail(session, outcome, sql_error(ER_EMPTY_QUERY))
    if len(statements) > 1 and not session.capabilities & Capability.MULTI_STATEMENTS:
        second = statements[1].start
        return _fail(session, outcome, syntax_error(text[second:], line_of(text, second)))
    for statement in statements:
        outcome.keep_diagnostics = False
        session.count("Questions")  # each statement from the client, as MariaDB counts them
        session.count("Queries")
        response = _dispatch(session, statement, outcome, text[statement.start :])
        outcome.responses.append(response)
        _note_state(session, outcome)
        if not outcome.keep_diagnostics:
            _record(session, response)
        if _failed(response) is not None or outcome.close_connection:
            break
    for statement in statements:
        release_in_slices(statement.tokens)
    release_in_slices(lexed.tokens)
    release_deferred()
    return outcome


_BLANKS = " \t\n\r\v\f"


def _fail(session: SessionState, outcome: Outcome, error: SqlError) -> Outcome:
    error = error.with_traceback(None)  # as in _dispatch
    _record(session, error)
    outcome.responses.append(error)
    _note_state(session, outcome)
    return outcome


def _note_state(session: SessionState, outcome: Outcome) -> None:
    outcome.statuses.append(session.status())
    outcome.collations.append((session.results_collation(), session.connection_collation()))


def _dispatch(
    session: SessionState, statement_text: StatementText, outcome: Outcome, quote_text: str
) -> Response:
    """Answer one statement: the table's patterns read it with its comments blanked."""
    for statement in STATEMENTS:
        match = statement.match(statement_text.plain)
        if match is None:
            continue
        counter = com_variable(statement.handler.__name__, statement_text.plain)
        if counter is not None:
            session.count(counter)
        context = Context(
            session,
            statement_text.text,
            statement_text.tokens,
            outcome,
            match,
            quote_text,
            statement_text.plain,
            statement_text.cuts,
            statement_text.first_line,
        )
        try:
            return statement.handler(context)
        except SqlError as error:
            if counter is not None and error.errno in PARSE_TIME_ERRORS:
                session.count(counter, -1)  # MariaDB counts a statement once it parsed it
            # Without its traceback: it goes into the outcome, which the frames in it hold,
            # a cycle only the garbage collector frees, keeping every token of the statement.
            return error.with_traceback(None)
    return syntax_error(quote_text, statement_text.first_line)


def _failed(response: Response) -> SqlError | None:
    """The statement's error: an ERR, or one sent after a result set's column definitions."""
    if isinstance(response, SqlError):
        return response
    if isinstance(response, ResultSet):
        return response.error
    return None


def _record(session: SessionState, response: Response) -> None:
    error = _failed(response)
    if error is not None:
        session.diagnostics = [("Error", error.errno, error.message)]
    else:
        session.diagnostics = []


def check_syntax(session: SessionState, text: str) -> SqlError | None:
    """The error a statement's text gets before any statement runs (COM_STMT_PREPARE checks a
    statement without executing it): a lexing error, or no statement of the table reading it.
    None when a statement of the table would answer it (and then find its own errors)."""
    text = text.lstrip(_BLANKS).rstrip(_BLANKS + ";")
    try:
        lexed = lex(text, version_id(session.server.config.version or DEFAULT_VERSION))
    except SqlError as lexing_error:
        return lexing_error
    statements = split_statements(text, lexed)
    if not statements:
        return None if lexed.found_comment else sql_error(ER_EMPTY_QUERY)
    if len(statements) > 1:
        second = statements[1].start
        return syntax_error(text[second:], line_of(text, second))
    statement_text = statements[0]
    if any(statement.match(statement_text.plain) for statement in STATEMENTS):
        return None
    return syntax_error(text[statement_text.start :], statement_text.first_line)
