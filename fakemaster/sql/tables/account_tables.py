"""``mysql.user``: the server's accounts as MariaDB 10.11's view of that name shows them.

Audit tools list the accounts from it (pt-show-grants: ``SELECT DISTINCT User, Host FROM
mysql.user``; pt-mysql-summary counts them) before asking SHOW GRANTS of each. Its rows are
the fake's accounts as they are now (declared, then changed by CREATE USER, GRANT ...), each
as ``CREATE USER`` + ``GRANT`` leave it on a real server: a ``Y`` per global privilege held,
the mysql_native_password plugin with the password's hash (empty without a password), no
TLS requirement, no limits. The columns, their types and collations are the 10.11 view's
(``SHOW COLUMNS FROM mysql.user``, information_schema.COLUMNS of 10.11.19).

The table answers SELECTs only: it is not listed (SHOW TABLES, information_schema.TABLES), as
the other privilege tables are not (:mod:`fakemaster.sql.tables.system_tables` says why: a dump
carrying them would overwrite the accounts of the server it is loaded into). The server's own
``mariadb.sys@localhost`` (the definer of the real view, which cannot log in) is not an account
of the fake and has no row.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace

from fakemaster.config.accounts import Account, Privilege, native_password_hash
from fakemaster.protocol.charsets import collation_by_name
from fakemaster.protocol.resultset import Column, ColumnFlag
from fakemaster.sql.tables.catalogue import PART_KEY_FLAG, CellValue
from fakemaster.sql.tables.system_tables import SYSTEM_DATABASE
from fakemaster.vocabulary.constants import ColumnType

__all__ = ["USER_CHARSETS", "USER_COLUMNS", "USER_TABLE", "is_account_table", "user_rows"]

USER_TABLE = "user"

# The view's privilege columns, in its order, each with the global privilege it shows.
_PRIVILEGE_COLUMNS: tuple[tuple[str, Privilege], ...] = (
    ("Select_priv", Privilege.SELECT),
    ("Insert_priv", Privilege.INSERT),
    ("Update_priv", Privilege.UPDATE),
    ("Delete_priv", Privilege.DELETE),
    ("Create_priv", Privilege.CREATE),
    ("Drop_priv", Privilege.DROP),
    ("Reload_priv", Privilege.RELOAD),
    ("Shutdown_priv", Privilege.SHUTDOWN),
    ("Process_priv", Privilege.PROCESS),
    ("File_priv", Privilege.FILE),
    ("Grant_priv", Privilege.GRANT_OPTION),
    ("References_priv", Privilege.REFERENCES),
    ("Index_priv", Privilege.INDEX),
    ("Alter_priv", Privilege.ALTER),
    ("Show_db_priv", Privilege.SHOW_DATABASES),
    ("Super_priv", Privilege.SUPER),
    ("Create_tmp_table_priv", Privilege.CREATE_TEMPORARY_TABLES),
    ("Lock_tables_priv", Privilege.LOCK_TABLES),
    ("Execute_priv", Privilege.EXECUTE),
    ("Repl_slave_priv", Privilege.REPLICATION_SLAVE),
    ("Repl_client_priv", Privilege.BINLOG_MONITOR),
    ("Create_view_priv", Privilege.CREATE_VIEW),
    ("Show_view_priv", Privilege.SHOW_VIEW),
    ("Create_routine_priv", Privilege.CREATE_ROUTINE),
    ("Alter_routine_priv", Privilege.ALTER_ROUTINE),
    ("Create_user_priv", Privilege.CREATE_USER),
    ("Event_priv", Privilege.EVENT),
    ("Trigger_priv", Privilege.TRIGGER),
    ("Create_tablespace_priv", Privilege.CREATE_TABLESPACE),
    ("Delete_history_priv", Privilege.DELETE_HISTORY),
)


def _collation(name: str) -> int:
    found = collation_by_name(name)
    assert found is not None, name
    return found.id


_NAME = _collation("utf8mb3_bin")  # Host, User: global_priv's own columns
_TEXT = _collation("utf8mb4_bin")  # JSON_VALUE(Priv, ...) results
_FLAG = _collation("latin1_swedish_ci")  # IF(..., 'Y', 'N') and the like
# What the view's expressions send: a definition with no schema and 39 decimals.
_NOT_FIXED_DEC = 39
_LONG = 0xFFFFFFFF


def _in_view(column: Column) -> Column:
    return replace(column, table=USER_TABLE, org_table=USER_TABLE, org_name=column.name)


def _key(name: str, chars: int) -> Column:
    flags = ColumnFlag.NOT_NULL | ColumnFlag.PRI_KEY | PART_KEY_FLAG
    return _in_view(
        Column(
            name,
            ColumnType.STRING,
            flags=flags,
            text_chars=chars,
            collation=_NAME,
            schema=SYSTEM_DATABASE,
        )
    )


def _text(name: str, *, nullable: bool = False) -> Column:
    flags = 0 if nullable else ColumnFlag.NOT_NULL
    return _in_view(
        Column(
            name,
            ColumnType.LONG_BLOB,
            flags=flags,
            decimals=_NOT_FIXED_DEC,
            text_chars=_LONG,
            collation=_TEXT,
        )
    )


def _flag(name: str, chars: int = 1, *, nullable: bool = True) -> Column:
    flags = 0 if nullable else ColumnFlag.NOT_NULL
    return _in_view(
        Column(
            name,
            ColumnType.VAR_STRING,
            flags=flags,
            decimals=_NOT_FIXED_DEC,
            text_chars=chars,
            collation=_FLAG,
        )
    )


def _limit(name: str, *, unsigned: bool = True) -> Column:
    flags = ColumnFlag.NOT_NULL | ColumnFlag.BINARY
    if unsigned:
        flags |= ColumnFlag.UNSIGNED
    length = 20 if unsigned else 21
    return _in_view(Column(name, ColumnType.LONGLONG, length=length, flags=flags))


# The column definitions a 10.11.19 server sends for ``SELECT * FROM mysql.user`` (captured).
USER_COLUMNS: tuple[Column, ...] = (
    _key("Host", 255),
    _key("User", 128),
    _text("Password", nullable=True),
    *(_flag(name) for name, _ in _PRIVILEGE_COLUMNS),
    _flag("ssl_type", 9),
    _text("ssl_cipher"),
    _text("x509_issuer"),
    _text("x509_subject"),
    _limit("max_questions"),
    _limit("max_updates"),
    _limit("max_connections"),
    _limit("max_user_connections", unsigned=False),
    _text("plugin"),
    _text("authentication_string"),
    _flag("password_expired", nullable=False),
    _flag("is_role"),
    _text("default_role"),
    _in_view(
        Column(
            "max_statement_time",
            ColumnType.NEWDECIMAL,
            length=14,
            decimals=6,
            flags=ColumnFlag.NOT_NULL | ColumnFlag.BINARY,
        )
    ),
)
_CHARSET_OF = {_NAME: "utf8mb3", _TEXT: "utf8mb4", _FLAG: "latin1"}
# The character set each column's text is in (None: a number).
USER_CHARSETS: tuple[str | None, ...] = tuple(
    None if column.text_chars is None else _CHARSET_OF[column.collation or _TEXT]
    for column in USER_COLUMNS
)


def is_account_table(database: str, name: str) -> bool:
    """Whether ``database.name`` is ``mysql.user`` (names are case-sensitive, as on Linux)."""
    return database == SYSTEM_DATABASE and name == USER_TABLE


def _row(account: Account) -> tuple[CellValue, ...]:
    hashed = native_password_hash(account.password) if account.password else ""
    flags = tuple("Y" if account.privileges & held else "N" for _, held in _PRIVILEGE_COLUMNS)
    return (
        account.host,
        account.user,
        hashed,
        *flags,
        "",  # ssl_type: no TLS requirement
        "",
        "",
        "",
        "0",
        "0",
        "0",
        "0",
        "mysql_native_password",
        hashed,
        "N",  # password_expired
        "N",  # is_role
        "",
        "0.000000",
    )


def user_rows(accounts: Iterable[Account]) -> list[Sequence[CellValue]]:
    """The rows of ``mysql.user`` for ``accounts``, in the order they were created: a real
    server reads its (Aria) ``mysql.global_priv`` in that order, until a dropped account's
    place is reused."""
    return [_row(account) for account in accounts]
