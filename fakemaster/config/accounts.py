"""Accounts and privileges, as a MariaDB 10.11 primary checks them.

:class:`Privilege` has MariaDB's global privilege bits in MariaDB's order (``privilege_t`` in
``sql/privilege.h``): an "Access denied; you need (at least one of) the ... privilege(s)" error
names the accepted privileges in that order, with the names GRANT and SHOW GRANTS use.

An :class:`Account` is what ``CREATE USER`` + ``GRANT ... ON *.*`` make: a name, a password, the
host pattern it was created for (what access-denied messages name), global privileges, and the
databases granted on their own (``GRANT ... ON db.*``). Two kinds are ready-made:
:meth:`Account.replication` (``GRANT REPLICATION SLAVE, REPLICATION CLIENT ON *.*``, what
replication setups create) and :meth:`Account.admin` (``GRANT ALL PRIVILEGES ON *.* WITH GRANT
OPTION``, what ``root`` has).
"""

from __future__ import annotations

import functools
import hashlib
import operator
from dataclasses import dataclass
from enum import Flag

__all__ = [
    "ALL_PRIVILEGES",
    "DATABASE_PRIVILEGES",
    "INFORMATION_SCHEMA",
    "NO_PRIVILEGES",
    "REPLICATION_PRIVILEGES",
    "Account",
    "Privilege",
    "native_password_hash",
    "privilege_names",
]


class Privilege(Flag):
    """MariaDB 10.11's global privileges; the bit of each is MariaDB's own."""

    SELECT = 1 << 0
    INSERT = 1 << 1
    UPDATE = 1 << 2
    DELETE = 1 << 3
    CREATE = 1 << 4
    DROP = 1 << 5
    RELOAD = 1 << 6
    SHUTDOWN = 1 << 7
    PROCESS = 1 << 8
    FILE = 1 << 9
    GRANT_OPTION = 1 << 10
    REFERENCES = 1 << 11
    INDEX = 1 << 12
    ALTER = 1 << 13
    SHOW_DATABASES = 1 << 14
    SUPER = 1 << 15
    CREATE_TEMPORARY_TABLES = 1 << 16
    LOCK_TABLES = 1 << 17
    EXECUTE = 1 << 18
    REPLICATION_SLAVE = 1 << 19
    # REPLICATION CLIENT is this privilege's old name (before 10.5.2); GRANT still takes it.
    BINLOG_MONITOR = 1 << 20
    CREATE_VIEW = 1 << 21
    SHOW_VIEW = 1 << 22
    CREATE_ROUTINE = 1 << 23
    ALTER_ROUTINE = 1 << 24
    CREATE_USER = 1 << 25
    EVENT = 1 << 26
    TRIGGER = 1 << 27
    CREATE_TABLESPACE = 1 << 28
    DELETE_HISTORY = 1 << 29
    SET_USER = 1 << 30
    FEDERATED_ADMIN = 1 << 31
    CONNECTION_ADMIN = 1 << 32
    READ_ONLY_ADMIN = 1 << 33
    REPLICATION_SLAVE_ADMIN = 1 << 34
    REPLICATION_MASTER_ADMIN = 1 << 35
    BINLOG_ADMIN = 1 << 36
    BINLOG_REPLAY = 1 << 37
    SLAVE_MONITOR = 1 << 38

    @property
    def sql_name(self) -> str:
        """The name GRANT and the error messages use (one privilege only)."""
        name = self.name
        assert name is not None and "|" not in name, "a single privilege has one name"
        return _SQL_NAMES.get(name, name.replace("_", " "))


# Where MariaDB's name is not the member name with spaces.
_SQL_NAMES = {"GRANT_OPTION": "GRANT", "READ_ONLY_ADMIN": "READ_ONLY ADMIN"}

NO_PRIVILEGES = Privilege(0)
ALL_PRIVILEGES: Privilege = functools.reduce(operator.or_, Privilege, NO_PRIVILEGES)
# GRANT REPLICATION SLAVE, REPLICATION CLIENT ON *.*
REPLICATION_PRIVILEGES = Privilege.REPLICATION_SLAVE | Privilege.BINLOG_MONITOR
# Privileges that, held globally, open every database to USE (MariaDB's DB_ACLS).
DATABASE_PRIVILEGES = (
    Privilege.SELECT
    | Privilege.INSERT
    | Privilege.UPDATE
    | Privilege.DELETE
    | Privilege.CREATE
    | Privilege.DROP
    | Privilege.GRANT_OPTION
    | Privilege.REFERENCES
    | Privilege.INDEX
    | Privilege.ALTER
    | Privilege.CREATE_TEMPORARY_TABLES
    | Privilege.LOCK_TABLES
    | Privilege.EXECUTE
    | Privilege.CREATE_VIEW
    | Privilege.SHOW_VIEW
    | Privilege.CREATE_ROUTINE
    | Privilege.ALTER_ROUTINE
    | Privilege.EVENT
    | Privilege.TRIGGER
    | Privilege.DELETE_HISTORY
)
# Every account may use it, whatever its grants (and its name is not case-sensitive).
INFORMATION_SCHEMA = "information_schema"


def privilege_names(privileges: Privilege) -> str:
    """The privileges as an access-denied message lists them: in bit order, comma-separated."""
    return ", ".join(member.sql_name for member in Privilege if member.value & privileges.value)


def native_password_hash(password: str) -> str:
    """``PASSWORD(password)`` as mysql_native_password stores it: ``*`` and SHA1(SHA1(password))
    in upper-case hex (what SHOW GRANTS and mysql.user show)."""
    stage = hashlib.sha1(password.encode()).digest()
    return "*" + hashlib.sha1(stage).hexdigest().upper()


@dataclass(frozen=True, kw_only=True)
class Account:
    """One login: ``user`` with ``password`` (empty: none), its privileges on ``*.*`` and the
    databases granted to it one by one."""

    user: str
    password: str = ""
    privileges: Privilege = NO_PRIVILEGES
    # The host part of the account ('repl'@'%'): access-denied messages name it.
    host: str = "%"
    databases: frozenset[str] = frozenset()
    # GRANT ... ON `db`.*: each database's own privileges, in the order they were granted.
    database_privileges: tuple[tuple[str, Privilege], ...] = ()

    @classmethod
    def replication(cls, user: str, password: str = "", *, host: str = "%") -> Account:
        """``GRANT REPLICATION SLAVE, REPLICATION CLIENT ON *.*``: may dump the binlog and read
        its status, nothing else."""
        return cls(user=user, password=password, privileges=REPLICATION_PRIVILEGES, host=host)

    @classmethod
    def admin(cls, user: str, password: str = "", *, host: str = "%") -> Account:
        """``GRANT ALL PRIVILEGES ON *.* WITH GRANT OPTION`` (what ``root`` has)."""
        return cls(user=user, password=password, privileges=ALL_PRIVILEGES, host=host)

    def has_any(self, accepted: Privilege) -> bool:
        """True when the account holds one of ``accepted`` (nothing required: True)."""
        return not accepted or bool(self.privileges & accepted)

    def may_use(self, database: str) -> bool:
        """Whether ``USE database`` passes the privilege check (it may still not exist).

        Database names are case-sensitive, as on a Linux server (lower_case_table_names=0).
        """
        if database.lower() == INFORMATION_SCHEMA:
            return True
        if self.privileges & DATABASE_PRIVILEGES or database in self.databases:
            return True
        return bool(self.privileges_on(database) & DATABASE_PRIVILEGES)

    def privileges_on(self, database: str) -> Privilege:
        """What the account may do in ``database``: its global privileges and that database's
        own (a database granted by name only, ``databases``, counts as SELECT)."""
        held = self.privileges
        if database in self.databases:
            held |= Privilege.SELECT
        for name, privileges in self.database_privileges:
            if name == database:
                held |= privileges
        return held
