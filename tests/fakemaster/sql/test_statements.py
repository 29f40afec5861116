"""COM_QUERY answers against what a real MariaDB 10.11 sent for the same statements.

``tests/golden/mariadb_10_11_queries.json`` holds transcripts captured from a real 10.11.19
primary: the peer sessions of ``shared/reference/peer-sessions`` (beside the repository) (replicas,
mariadb-binlog, python-mysql-replication), the setup statements of go-mysql, pymysql and
mysql-binlog-connector-java, user-variable types, literals, errors, character sets and session
tracking. Each statement is replayed through a fake-master session configured like that server
and the response compared byte for byte (column definitions only where the values are clocks,
thread ids or binlog positions).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from decoder.packets import parse_err, parse_ok
from fakemaster.config.accounts import Account
from fakemaster.config.server_config import ServerConfig
from fakemaster.config.variables import SYSTEM_VARIABLES
from fakemaster.core.session import ServerSession
from fakemaster.protocol.charsets import COLLATIONS_BY_ID, client_collation
from fakemaster.protocol.handshake import Capability
from fakemaster.protocol.resultset import (
    ClientProtocol,
    ColumnDefinition,
    ResultSet,
    SqlError,
    read_result_set,
)
from fakemaster.sql.like import LikePattern
from fakemaster.sql.sqltext import lex, tokenize
from fakemaster.sql.state import ServerState, SessionState
from fakemaster.sql.statements import STATEMENTS, Answer, execute
from tests.budget import examples
from tests.support.catalogue import shop_catalogue
from tests.support.peer_statements import REPLICA_BY_POSITION
from tests.support.wire import BASE_CAPABILITIES, SessionDriver
from tests.test_layering import loaded_after_importing

GOLDEN = Path(__file__).resolve().parents[2] / "golden" / "mariadb_10_11_queries.json"
TRANSCRIPTS = json.loads(GOLDEN.read_text())


class GoldenPositions:
    """The binlog state of the server the transcripts were captured from."""

    def binary_logs(self) -> Sequence[tuple[str, int]]:
        return [("mysql-bin.000001", 1014)]

    def gtid_binlog_pos(self) -> str:
        return "0-1-7"

    def gtid_binlog_state(self) -> str:
        return "0-1-7"

    def binlog_gtid_pos(self, file_name: str, position: int) -> str | None:
        return "" if (file_name, position) == ("mysql-bin.000001", 4) else None


def golden_config() -> ServerConfig:
    server = TRANSCRIPTS["server"]
    # The transcripts' account: repl@'%' with ALL PRIVILEGES (server["account"]).
    return ServerConfig(
        user="repl",
        password="secret",
        accounts=(Account.admin("repl", "secret"),),
        version=server["version"],
        version_comment=server["version_comment"],
        hostname="vm",
        variables=server["global_variables"],
    )


def _steps() -> list[tuple[str, int]]:
    return [
        (f"session{index}-step{number}", index)
        for index, session in enumerate(TRANSCRIPTS["sessions"])
        for number in range(len(session["steps"]))
    ]


def _result_columns(payloads: list[bytes]) -> list[bytes]:
    """The column count and definitions of a result set (everything for OK/ERR)."""
    if payloads[0][:1] in (b"\x00", b"\xff"):
        return payloads
    return payloads[: 1 + payloads[0][0]]


@pytest.mark.parametrize("index", range(len(TRANSCRIPTS["sessions"])))
def test_transcript_replays_byte_for_byte(index: int) -> None:
    session_doc = TRANSCRIPTS["sessions"][index]
    server = ServerState(golden_config(), GoldenPositions())
    client = SessionDriver(ServerSession(server))
    login = client.login(capabilities=session_doc["capabilities"], charset=session_doc["charset"])
    assert login.payloads == [bytes.fromhex("00000002000000")]
    mismatches = []
    for step in session_doc["steps"]:
        got = client.query(step["sql"]).payloads
        want = [bytes.fromhex(payload) for payload in step["response"]]
        if not step["exact"]:
            got, want = _result_columns(got), _result_columns(want)
        if got != want:
            mismatches.append((step["sql"], got, want))
    assert not mismatches, mismatches[:3]


def test_transcripts_cover_the_peer_sessions() -> None:
    """Every statement real clients sent in the recorded peer sessions has a golden answer."""
    recorded = {step["sql"] for session in TRANSCRIPTS["sessions"] for step in session["steps"]}
    peers = {
        *REPLICA_BY_POSITION,
        "SELECT @@GLOBAL.gtid_domain_id",
        "SET @slave_connect_state=''",
        "SET @slave_gtid_strict_mode=0",
        "SET @slave_gtid_ignore_duplicates=0",
        "SHOW VARIABLES LIKE 'rpl_semi_sync_master_enabled'",
        "SET @rpl_semi_sync_slave= 1",
        "SELECT VERSION()",
        "SET NAMES utf8",
        "SET AUTOCOMMIT = 0",
        "SHOW GLOBAL VARIABLES LIKE 'BINLOG_CHECKSUM'",
        "SHOW VARIABLES LIKE 'BINLOG_ROW_METADATA';",
    }
    assert peers <= recorded


# --- semantics beyond the transcripts -------------------------------------------------------


# The account of the transcripts (ALL PRIVILEGES): these tests are about what statements do.
ADMIN = Account.admin("repl", "secret")


def make_session(**config: object) -> tuple[ServerState, SessionState]:
    server = ServerState(
        ServerConfig(**config),  # type: ignore[arg-type]
        GoldenPositions(),
        tables=shop_catalogue(),  # what the snapshot statements' examples read
    )
    info = server.open_connection("127.0.0.1")
    return server, SessionState.create(server, info.thread_id, "repl", "127.0.0.1", 45, ADMIN)


def single_result(session: SessionState, sql: str) -> ResultSet:
    outcome = execute(session, sql)
    assert len(outcome.responses) == 1
    response = outcome.responses[0]
    assert isinstance(response, ResultSet), response
    return response


def values(session: SessionState, sql: str) -> list[list[bytes | None]]:
    return [list(row) for row in single_result(session, sql).rows]


def error_of(session: SessionState, sql: str) -> SqlError:
    response = execute(session, sql).responses[-1]
    assert isinstance(response, SqlError), response
    return response


def test_set_master_binlog_checksum_stores_the_global_value() -> None:
    _, session = make_session(binlog_checksum="NONE")
    execute(session, "SET @master_binlog_checksum= @@global.binlog_checksum")
    assert values(session, "SELECT @master_binlog_checksum") == [[b"NONE"]]


def test_set_global_changes_what_other_sessions_see() -> None:
    server, first = make_session()
    second = SessionState.create(server, 99, "repl", "127.0.0.1", 45, ADMIN)
    execute(first, "SET GLOBAL rpl_semi_sync_master_enabled=1")
    assert values(second, "SHOW VARIABLES LIKE 'rpl_semi_sync_master_enabled'") == [
        [b"rpl_semi_sync_master_enabled", b"ON"]
    ]


def test_multi_variable_set_is_all_or_nothing() -> None:
    _, session = make_session()
    error = error_of(session, "SET @kept=1, autocommit='bad'")
    assert error.errno == 1231
    assert values(session, "SELECT @kept") == [[None]]


@pytest.mark.parametrize(
    ("config", "name", "value"),
    [
        ({"server_id": 77}, "server_id", b"77"),
        ({"gtid_domain_id": 3}, "gtid_domain_id", b"3"),
        ({"binlog_checksum": "NONE"}, "binlog_checksum", b"NONE"),
        ({"semi_sync_enabled": True}, "rpl_semi_sync_master_enabled", b"ON"),
        ({"variables": {"binlog_row_metadata": "FULL"}}, "binlog_row_metadata", b"FULL"),
    ],
)
def test_global_variables_come_from_the_config(
    config: dict[str, object], name: str, value: bytes
) -> None:
    _, session = make_session(**config)
    assert values(session, f"SHOW GLOBAL VARIABLES LIKE '{name}'") == [[name.encode(), value]]


def test_binary_logs_and_master_status_come_from_the_catalog() -> None:
    _, session = make_session()
    assert values(session, "SHOW BINARY LOGS") == [[b"mysql-bin.000001", b"1014"]]
    assert values(session, "SHOW MASTER STATUS") == [[b"mysql-bin.000001", b"1014", b"", b""]]
    assert values(session, "SELECT binlog_gtid_pos('mysql-bin.000001', 4)") == [[b""]]
    assert values(session, "SELECT binlog_gtid_pos('mysql-bin.000001', 5)") == [[None]]
    assert values(session, "SELECT @@gtid_binlog_pos, @@global.gtid_current_pos") == [
        [b"0-1-7", b"0-1-7"]
    ]


def test_multi_statements_need_the_capability() -> None:
    _, session = make_session()
    assert error_of(session, "SELECT 1; SELECT 2").errno == 1064
    session.capabilities |= Capability.MULTI_STATEMENTS
    outcome = execute(session, "SELECT 1; SET @a=2; SELECT @a")
    assert [type(r).__name__ for r in outcome.responses] == ["ResultSet", "OkResult", "ResultSet"]
    last = outcome.responses[-1]
    assert isinstance(last, ResultSet) and list(last.rows[0]) == [b"2"]


def test_multi_statement_status_flags_on_the_wire() -> None:
    server = ServerState(golden_config(), GoldenPositions())
    client = SessionDriver(ServerSession(server))
    client.login(capabilities=BASE_CAPABILITIES | Capability.MULTI_STATEMENTS)
    payloads = client.query("SET @a=1; SELECT @a").payloads
    ok = parse_ok(payloads[0])
    assert ok.status_flags & 0x0008  # SERVER_MORE_RESULTS_EXISTS
    result = read_result_set(iter(payloads[1:]), ClientProtocol(BASE_CAPABILITIES))
    assert not result.status & 0x0008
    assert result.rows == ((b"1",),)


def test_kill_of_another_thread_is_a_request_and_of_self_an_error() -> None:
    server, session = make_session()
    other = server.open_connection("127.0.0.1")
    outcome = execute(session, f"KILL {other.thread_id}")
    assert [(k.thread_id, k.query_only) for k in outcome.kills] == [(other.thread_id, False)]
    outcome = execute(session, f"KILL QUERY {other.thread_id}")
    assert [(k.thread_id, k.query_only) for k in outcome.kills] == [(other.thread_id, True)]
    outcome = execute(session, f"KILL {session.thread_id}")
    assert outcome.close_connection
    response = outcome.responses[0]
    assert isinstance(response, SqlError) and response.errno == 1927


def test_show_warnings_shows_the_last_error() -> None:
    _, session = make_session()
    error_of(session, "SELECT @@nonexistent")
    assert values(session, "SHOW WARNINGS") == [
        [b"Error", b"1193", b"Unknown system variable 'nonexistent'"]
    ]
    assert values(session, "SHOW WARNINGS") == [
        [b"Error", b"1193", b"Unknown system variable 'nonexistent'"]
    ]
    assert values(session, "SELECT @@error_count") == [[b"1"]]
    execute(session, "SELECT 1")
    assert values(session, "SHOW WARNINGS") == []


def test_lenient_mode_accepts_statements_nobody_emulates() -> None:
    _, strict = make_session()
    assert error_of(strict, "FLUSH STATUS").errno == 1235
    _, lenient = make_session(strict_queries=False)
    assert type(execute(lenient, "FLUSH STATUS").responses[0]).__name__ == "OkResult"
    # A statement no MariaDB knows stays a syntax error in both modes.
    assert error_of(lenient, "FOOBAR").errno == 1064


@pytest.mark.parametrize(
    ("example", "handler"),
    [(example, row.handler.__name__) for row in STATEMENTS for example in row.examples],
)
def test_each_table_row_answers_its_examples(example: str, handler: str) -> None:
    server, session = make_session(strict_queries=handler != "not_supported")
    server.open_connection("127.0.0.1")  # thread 12 exists for the KILL examples
    for _ in range(10):
        server.open_connection("127.0.0.1")
    plain = lex(example).plain  # the table's patterns read the text with comments blanked
    matching = [row for row in STATEMENTS if row.pattern.match(plain)]
    assert matching and matching[0].handler.__name__ == handler
    for setup in () if handler in ("create_database", "not_supported") else CLIENT_TABLE:
        execute(session, setup)  # the examples writing in a client's table need it first
    response = execute(session, example).responses[0]
    assert not isinstance(response, SqlError), (example, response)


CLIENT_TABLE = (
    "CREATE DATABASE percona",
    "CREATE TABLE percona.checksums (db CHAR(64) NOT NULL, tbl CHAR(64) NOT NULL, chunk INT"
    " NOT NULL, master_cnt INT NULL, PRIMARY KEY (db, tbl, chunk))",
)


# --- SHOW VARIABLES LIKE: patterns ----------------------------------------------------------

NAMES = sorted(SYSTEM_VARIABLES)


def reference_like(pattern: str, name: str) -> bool:
    """LIKE by dynamic programming, independent of the regex translation."""
    pattern, name = pattern.lower(), name.lower()
    tokens: list[str] = []
    index = 0
    while index < len(pattern):
        if pattern[index] == "\\" and index + 1 < len(pattern):
            tokens.append("=" + pattern[index + 1])
            index += 2
        else:
            tokens.append(pattern[index])
            index += 1
    matches = [[False] * (len(name) + 1) for _ in range(len(tokens) + 1)]
    matches[0][0] = True
    for i, token in enumerate(tokens, 1):
        if token == "%":
            matches[i][0] = matches[i - 1][0]
        for j in range(1, len(name) + 1):
            if token == "%":
                matches[i][j] = matches[i - 1][j] or matches[i][j - 1]
            elif token == "_":
                matches[i][j] = matches[i - 1][j - 1]
            else:
                literal = token[1:] if token.startswith("=") and len(token) == 2 else token
                matches[i][j] = matches[i - 1][j - 1] and literal == name[j - 1]
    return matches[len(tokens)][len(name)]


patterns = st.lists(
    st.one_of(
        st.sampled_from(["%", "_", "\\_", "\\%"]),
        st.sampled_from(NAMES).flatmap(
            lambda name: st.tuples(st.integers(0, len(name)), st.integers(0, len(name))).map(
                lambda bounds: name[min(bounds) : max(bounds)]
            )
        ),
        st.sampled_from(["GTID", "Server", "ID", "log"]),
    ),
    max_size=5,
).map("".join)


@settings(max_examples=examples(2), deadline=None)
@given(pattern=patterns)
def test_show_variables_like_matches_sql_like(pattern: str) -> None:
    _, session = make_session()
    quoted = pattern.replace("\\", "\\\\").replace("'", "''")
    shown = [row[0] for row in values(session, f"SHOW VARIABLES LIKE '{quoted}'")]
    expected = [name.encode() for name in NAMES if reference_like(pattern, name)]
    assert shown == expected


@given(pattern=patterns, name=st.sampled_from(NAMES))
def test_like_pattern_agrees_with_reference(pattern: str, name: str) -> None:
    assert LikePattern.compile(pattern).matches(name) == reference_like(pattern, name)


class CountingPositions(GoldenPositions):
    """GoldenPositions counting the reads of the GTID positions (computed from the binlog)."""

    def __init__(self) -> None:
        self.reads = 0

    def gtid_binlog_pos(self) -> str:
        self.reads += 1
        return super().gtid_binlog_pos()

    def gtid_binlog_state(self) -> str:
        self.reads += 1
        return super().gtid_binlog_state()


def test_show_variables_like_computes_only_the_values_it_shows() -> None:
    """A LIKE selects by name: the other variables' values are never computed. Some are read
    from the served binlog: a replica's SHOW VARIABLES LIKE 'SERVER_ID' computed all 202, about
    5 ms of the event loop (bench/README.md)."""
    positions = CountingPositions()
    server = ServerState(ServerConfig(), positions)
    info = server.open_connection("127.0.0.1")
    session = SessionState.create(server, info.thread_id, "repl", "127.0.0.1", 45, ADMIN)
    assert [row[0] for row in values(session, "SHOW VARIABLES LIKE 'SERVER_ID'")] == [b"server_id"]
    assert [row[0] for row in values(session, "SHOW GLOBAL VARIABLES LIKE 'port'")] == [b"port"]
    assert positions.reads == 0
    assert values(session, "SHOW VARIABLES LIKE 'gtid_binlog_pos'") == [
        [b"gtid_binlog_pos", b"0-1-7"]
    ]
    assert positions.reads == 1
    # A WHERE may test the values: each is computed (both GTID positions and the state).
    values(session, "SHOW GLOBAL VARIABLES WHERE Value = 'x'")
    assert positions.reads == 4


def test_show_variables_where_forms() -> None:
    _, session = make_session()
    assert values(
        session,
        "SHOW VARIABLES WHERE (Variable_name LIKE 'gtid_s%' OR Variable_name='port') "
        "AND NOT Value=''",
    ) == [[b"gtid_seq_no", b"0"], [b"gtid_strict_mode", b"OFF"], [b"port", b"0"]]
    assert values(session, "SHOW VARIABLES WHERE Variable_name NOT IN ('a') AND Value='CRC32'") == [
        [b"binlog_checksum", b"CRC32"]
    ]
    assert error_of(session, "SHOW VARIABLES WHERE Nope = 1").errno == 1054


# --- character sets -------------------------------------------------------------------------


@pytest.mark.parametrize("collation_id", sorted(COLLATIONS_BY_ID)[:40] + [0, 255, 1000])
def test_text_columns_follow_the_connection_character_set(collation_id: int) -> None:
    server = ServerState(golden_config(), GoldenPositions())
    client = SessionDriver(ServerSession(server))
    client.login(charset=collation_id & 0xFF)
    chosen = client_collation(collation_id & 0xFF) or COLLATIONS_BY_ID[45]
    payloads = client.query("SELECT @@version").payloads
    column = ColumnDefinition.decode(payloads[1])
    version = TRANSCRIPTS["server"]["version"]
    assert column.charset == chosen.id
    assert column.length == len(version) * chosen.mbmaxlen


# --- robustness -----------------------------------------------------------------------------


sql_fragments = st.lists(
    st.sampled_from(
        [
            "SELECT",
            "SET",
            "SHOW",
            "VARIABLES",
            "LIKE",
            "WHERE",
            "@@",
            "@",
            "global.",
            "'",
            '"',
            "`",
            "(",
            ")",
            ",",
            ";",
            "=",
            ":=",
            "1",
            "1.5",
            "1e3",
            "0x4",
            "x'",
            "NULL",
            "NAMES",
            "utf8",
            "COLLATE",
            "KILL",
            "USE",
            "AS",
            "FROM",
            "LIMIT",
            "--",
            "#",
            "/*",
            "*/",
            "/*!",
            "\\",
            "\n",
            " ",
            "version",
            "server_id",
            "_latin1",
            "DEFAULT",
            "IN",
            "NOT",
            "AND",
            "OR",
            "STATEMENT",
            "FOR",
            "TRANSACTION",
            "*",
            "-",
            "\x00",
            "é",
        ]
    ),
    max_size=12,
).map(" ".join)


@settings(max_examples=examples(3), deadline=None)
@given(sql=st.one_of(sql_fragments, st.text(max_size=60)))
def test_any_text_gets_an_answer_never_an_exception(sql: str) -> None:
    _, session = make_session()
    session.capabilities |= Capability.MULTI_STATEMENTS
    outcome = execute(session, sql)
    assert outcome.responses
    for response in outcome.responses[:-1]:
        assert not isinstance(response, SqlError)


@given(sql=st.text(max_size=80))
def test_tokenizer_raises_only_syntax_errors(sql: str) -> None:
    try:
        tokens = tokenize(sql)
    except SqlError as error:
        assert error.errno == 1064
        return
    assert tokens[-1].kind.value == "end"
    assert all(0 <= t.start <= t.end <= len(sql) for t in tokens)


def test_error_packets_carry_sqlstate() -> None:
    server = ServerState(golden_config(), GoldenPositions())
    client = SessionDriver(ServerSession(server))
    client.login()
    err = parse_err(client.query("SELECT @@GLOBAL.GTID_MODE").payloads[0])
    assert (err.errno, err.sqlstate, err.message) == (
        1193,
        "HY000",
        "Unknown system variable 'GTID_MODE'",
    )
    assert re.fullmatch(r"[0-9A-Z]{5}", err.sqlstate or "")


def test_an_overflowing_double_literal_is_the_servers_error_not_a_crash() -> None:
    _, session = make_session()
    error = error_of(session, "SELECT 1e999")
    assert (error.errno, error.sqlstate, error.message) == (
        1367,
        "22007",
        "Illegal double '1e999' value found during parsing",
    )
    assert values(session, "SELECT 1") == [[b"1"]]


def test_each_row_names_a_function_of_its_answer_module() -> None:
    """The table names an answer by its module and function, imported when a statement first
    needs it: each is found, and goes by the name of the function (the Com_ counters do)."""
    answers = [row.handler for row in STATEMENTS if isinstance(row.handler, Answer)]
    assert len(answers) == len(STATEMENTS) - 2  # all but SET STATEMENT and SELECT's dispatch
    for answer in answers:
        function = answer.resolve()
        assert (function.__module__, function.__name__) == (answer.module, answer.__name__)
        assert answer.module.startswith("fakemaster.sql.answers.")


def test_the_table_loads_no_answer_module_before_a_statement_needs_it() -> None:
    loaded = loaded_after_importing(["fakemaster.sql.statements"])
    assert [name for name in loaded if name.startswith("fakemaster.sql.answers.")] == []
