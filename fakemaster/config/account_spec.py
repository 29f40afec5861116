"""Accounts declared as text: ``serve --account``, a scenario file's ``[[accounts]]``, the pytest
plugin's ``--fakemaster-account``.

An account is ``USER[@HOST]:PASSWORD[:GRANTS]`` (:func:`parse_account`). GRANTS is what a GRANT
statement lists, one grant or several separated by ``;``::

    SELECT, RELOAD, SHOW DATABASES, REPLICATION SLAVE, REPLICATION CLIENT
    RELOAD; SELECT, LOCK TABLES ON shop.*
    ALL PRIVILEGES WITH GRANT OPTION

Each grant is ``PRIVILEGE, ... [ON *.* | ON db.*] [WITH GRANT OPTION]`` (``ON *.*`` when left
out). Privilege names are MariaDB's, case-insensitive, with its aliases (``REPLICATION CLIENT``
is ``BINLOG MONITOR``, ``ALL`` is ``ALL PRIVILEGES``, ``USAGE`` is none). A database grant may
only name privileges MariaDB grants on a database (RELOAD ON shop.* is refused, as the server
refuses it with 1221). Without GRANTS the account is a replication account (REPLICATION SLAVE,
REPLICATION CLIENT), as ``--user`` other than root is. The password runs to the last ``:`` when
GRANTS follow, so a password with a colon is written with its grants.
"""

from __future__ import annotations

import re

from fakemaster.config.accounts import (
    ALL_PRIVILEGES,
    DATABASE_PRIVILEGES,
    NO_PRIVILEGES,
    REPLICATION_PRIVILEGES,
    Account,
    Privilege,
    privilege_names,
)

__all__ = ["AccountSpecError", "PRIVILEGE_NAMES", "parse_account", "parse_grants"]


class AccountSpecError(ValueError):
    """An account or grant text that does not say what MariaDB would accept."""


# Every name GRANT takes for a privilege (upper case, single spaces) -> the privilege.
PRIVILEGE_NAMES: dict[str, Privilege] = {member.sql_name: member for member in Privilege}
PRIVILEGE_NAMES.update(
    {
        "REPLICATION CLIENT": Privilege.BINLOG_MONITOR,
        "REPLICA MONITOR": Privilege.SLAVE_MONITOR,
        "REPLICATION REPLICA": Privilege.REPLICATION_SLAVE,
        "REPLICATION REPLICA ADMIN": Privilege.REPLICATION_SLAVE_ADMIN,
        "GRANT OPTION": Privilege.GRANT_OPTION,
        "USAGE": NO_PRIVILEGES,
        "ALL": ALL_PRIVILEGES & ~Privilege.GRANT_OPTION,
        "ALL PRIVILEGES": ALL_PRIVILEGES & ~Privilege.GRANT_OPTION,
    }
)
del PRIVILEGE_NAMES["GRANT"]  # GRANT alone is no privilege name in a GRANT statement

_TARGET = re.compile(r"^(?:\*|`((?:[^`]|``)+)`|([A-Za-z0-9_$]+))\.\*$")
_WITH_GRANT = re.compile(r"\s+WITH\s+GRANT\s+OPTION\s*$", re.IGNORECASE)
_ON = re.compile(r"\s+ON\s+", re.IGNORECASE)


_ALL = ("ALL", "ALL PRIVILEGES")


def _privileges(names: str, where: str, *, on_database: bool) -> Privilege:
    listed = names.split(",")
    if len(listed) > 1 and any(" ".join(raw.split()).upper() in _ALL for raw in listed):
        raise AccountSpecError(f"{where}: ALL PRIVILEGES stands alone, not in {names!r}")
    if on_database and " ".join(names.split()).upper() in _ALL:
        return DATABASE_PRIVILEGES & ~Privilege.GRANT_OPTION  # ALL of a database's
    held = NO_PRIVILEGES
    for raw in listed:
        name = " ".join(raw.split()).upper()
        if not name:
            raise AccountSpecError(f"{where}: an empty privilege name in {names!r}")
        found = PRIVILEGE_NAMES.get(name)
        if found is None:
            raise AccountSpecError(f"{where}: unknown privilege {raw.strip()!r}")
        held |= found
    return held


def _target(text: str, where: str) -> str | None:
    """The database of ``db.*`` (None for ``*.*``)."""
    match = _TARGET.match(text.strip())
    if match is None:
        raise AccountSpecError(f"{where}: grants go ON *.* or ON db.*, not ON {text.strip()!r}")
    if match.group(1) is not None:
        return match.group(1).replace("``", "`")
    return match.group(2)


def parse_grants(
    text: str, *, where: str = "grants"
) -> tuple[Privilege, tuple[tuple[str, Privilege], ...]]:
    """The global privileges and each database's of a GRANTS text (see the module docstring)."""
    global_privileges = NO_PRIVILEGES
    databases: dict[str, Privilege] = {}
    for grant in text.split(";"):
        if not grant.strip():
            raise AccountSpecError(f"{where}: an empty grant in {text!r}")
        grant_option = _WITH_GRANT.search(grant) is not None
        body = _WITH_GRANT.sub("", grant)
        names, *target = _ON.split(body, maxsplit=1)
        database = _target(target[0], where) if target else None
        privileges = _privileges(names, where, on_database=database is not None)
        if grant_option:
            privileges |= Privilege.GRANT_OPTION
        if database is None:
            global_privileges |= privileges
            continue
        stray = privileges & ~DATABASE_PRIVILEGES
        if stray:
            raise AccountSpecError(
                f"{where}: {privilege_names(stray)} cannot be granted ON {database}.* (a global"
                " privilege: grant it ON *.*)"
            )
        databases[database] = databases.get(database, NO_PRIVILEGES) | privileges
    return global_privileges, tuple(databases.items())


def parse_account(text: str) -> Account:
    """The account of ``USER[@HOST]:PASSWORD[:GRANTS]`` (see the module docstring)."""
    login, sep, rest = text.partition(":")
    if not sep:
        raise AccountSpecError(f"expected USER[@HOST]:PASSWORD[:GRANTS], got {text!r}")
    user, at, host = login.partition("@")
    if not user:
        raise AccountSpecError(f"an account needs a user name: {text!r}")
    if at and not host:
        raise AccountSpecError(f"an empty host after '@' in {text!r}")
    password, sep, grants = rest.rpartition(":")
    if not sep:
        password = rest
        return Account(
            user=user, password=password, privileges=REPLICATION_PRIVILEGES, host=host or "%"
        )
    privileges, databases = parse_grants(grants, where=f"account {user}")
    return Account(
        user=user,
        password=password,
        privileges=privileges,
        host=host or "%",
        database_privileges=databases,
    )
