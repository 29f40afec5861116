"""``USER[@HOST]:PASSWORD[:GRANTS]`` and GRANTS texts: what each says, and each way to get one
wrong refused with a message naming it. (What the accounts print and may do is compared with a
real MariaDB 10.11 in tests/integration/test_cdc_account.py.)"""

from __future__ import annotations

import pytest

from fakemaster.config.account_spec import AccountSpecError, parse_account, parse_grants
from fakemaster.config.accounts import Account, Privilege

CDC = (
    Privilege.SELECT
    | Privilege.RELOAD
    | Privilege.SHOW_DATABASES
    | Privilege.REPLICATION_SLAVE
    | Privilege.BINLOG_MONITOR
)


def test_the_documented_cdc_grants() -> None:
    account = parse_account(
        "cdc:pw:SELECT, RELOAD, SHOW DATABASES, REPLICATION SLAVE, REPLICATION CLIENT"
    )
    assert account == Account(user="cdc", password="pw", privileges=CDC)
    # 10.5+ spelling, any case and spacing
    same = parse_account(
        "cdc:pw:select,reload ,  show   databases,replication slave,binlog monitor"
    )
    assert same == account


def test_without_grants_a_replication_account() -> None:
    assert parse_account("repl:secret") == Account.replication("repl", "secret")
    assert parse_account("repl@10.0.0.%:") == Account.replication("repl", "", host="10.0.0.%")


def test_database_grants_host_and_a_password_with_colons() -> None:
    account = parse_account(
        "d@localhost:a:b:RELOAD; SELECT, LOCK TABLES ON `sh``op`.*; SHOW VIEW ON x.*"
    )
    assert account.user == "d" and account.host == "localhost" and account.password == "a:b"
    assert account.privileges == Privilege.RELOAD
    assert account.database_privileges == (
        ("sh`op", Privilege.SELECT | Privilege.LOCK_TABLES),
        ("x", Privilege.SHOW_VIEW),
    )
    assert account.may_use("x") and not account.may_use("y")
    assert account.privileges_on("x") == Privilege.RELOAD | Privilege.SHOW_VIEW


def test_all_usage_and_grant_option() -> None:
    everything, _ = parse_grants("ALL PRIVILEGES WITH GRANT OPTION")
    assert everything == Account.admin("root").privileges
    assert parse_grants("ALL")[0] == everything & ~Privilege.GRANT_OPTION
    assert parse_grants("USAGE") == (Privilege(0), ())
    _, databases = parse_grants("ALL ON shop.* WITH GRANT OPTION")
    ((name, held),) = databases
    assert name == "shop" and Privilege.GRANT_OPTION in held and Privilege.RELOAD not in held


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("cdc", "expected USER[@HOST]:PASSWORD[:GRANTS]"),
        (":pw", "needs a user name"),
        ("cdc@:pw", "empty host"),
        ("cdc:pw:SELECT, FLY", "unknown privilege 'FLY'"),
        ("cdc:pw:SELECT,,RELOAD", "an empty privilege name"),
        ("cdc:pw:GRANT", "unknown privilege 'GRANT'"),
        ("cdc:pw:SELECT ON shop.orders", "ON *.* or ON db.*"),
        ("cdc:pw:RELOAD, SELECT ON shop.*", "RELOAD cannot be granted ON shop.*"),
        ("cdc:pw:", "an empty grant"),
        ("cdc:pw:SELECT;", "an empty grant"),
        ("cdc:pw:SELECT, ALL", "ALL PRIVILEGES stands alone"),
    ],
)
def test_a_bad_account_is_refused_with_its_reason(text: str, message: str) -> None:
    with pytest.raises(AccountSpecError, match=".*") as caught:
        parse_account(text)
    assert message in str(caught.value)
