"""A real MariaDB 10.11 capture of the realistic schemas (tests/scenarios/realistic_schemas.py)
under an application-like workload, for issue #20 must-show 2: every CREATE in the binlog (the
server starts empty), inserts that leave keys to AUTO_INCREMENT and values to default
expressions, updates that fire ``ON UPDATE current_timestamp``, generated columns, UUID/INET
columns, triggers writing an audit table, a bulk load as multi-row INSERTs (with
``binlog_annotate_row_events``), deletes, and an ``ALTER TABLE ... ADD COLUMN ... NOT NULL
DEFAULT 'x', ADD INDEX`` between rows."""

from __future__ import annotations

from pathlib import Path

from scenarios.sql import quote_name
from tests.peers.mariadb import MariaDBServer
from tests.scenarios.realistic_schemas import SCHEMAS

__all__ = ["CAPTURE_OPTIONS", "EXTRA_SCHEMAS", "capture_realistic", "workload"]

CAPTURE_OPTIONS = {
    "binlog_format": "ROW",
    "binlog_row_metadata": "FULL",
    "binlog_annotate_row_events": "ON",
}

# MariaDB's own types are not in the realistic schemas; a table of sessions has them.
EXTRA_SCHEMAS: tuple[tuple[str, str], ...] = (
    (
        "saas",
        """CREATE TABLE sessions (
            id UUID NOT NULL DEFAULT uuid(),
            user_id BIGINT NOT NULL,
            client_ip INET6 NOT NULL,
            proxy_ip INET4 DEFAULT NULL,
            started_at TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP,
            PRIMARY KEY (id),
            KEY idx_user (user_id)
        ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4""",
    ),
)

# Triggers as applications write them: an audit trail of order changes in saas.audit_log
# (its rows are logged in the same rows events group as the order's), and a BEFORE trigger
# that rewrites a value (the logged image carries the rewritten one).
TRIGGERS = (
    """CREATE TRIGGER shop.orders_audit_insert AFTER INSERT ON shop.orders FOR EACH ROW
       INSERT INTO saas.audit_log (tenant_id, actor, action, payload)
       VALUES (0, 'trigger', 'order.created', concat('{"order":', NEW.id, '}'))""",
    """CREATE TRIGGER shop.orders_audit_update AFTER UPDATE ON shop.orders FOR EACH ROW
       INSERT INTO saas.audit_log (tenant_id, actor, action, payload)
       VALUES (0, 'trigger', concat('order.', NEW.status),
               concat('{"order":', NEW.id, ',"from":"', OLD.status, '"}'))""",
    """CREATE TRIGGER shop.customers_lower_email BEFORE INSERT ON shop.customers FOR EACH ROW
       SET NEW.email = lower(NEW.email)""",
)

# Rows of each bulk statement and statements per bulk table: small enough for the CI budget,
# several rows events per statement (the annotation precedes all of them).
BULK_ROWS = 400
BULK_STATEMENTS = 3

ALTER = (
    "ALTER TABLE rental.film ADD COLUMN audience VARCHAR(10) NOT NULL DEFAULT 'x',"
    " ADD INDEX idx_audience (audience)"
)


def _bulk_films(start: int) -> str:
    rows = ",".join(
        f"('FILM {i:05d} {'ABCDEFGHIJ' * 3}','A film of {i} minutes about the number {i}.',"
        f" {2000 + i % 25}, {60 + i % 120}, '{('G', 'PG', 'PG-13', 'R', 'NC-17')[i % 5]}',"
        f" '{('Trailers', 'Commentaries,Deleted Scenes', '')[i % 3]}')"
        for i in range(start, start + BULK_ROWS)
    )
    return (
        "INSERT INTO rental.film (title, description, release_year, length, rating,"
        f" special_features) VALUES {rows}"
    )


def _bulk_events(start: int) -> str:
    rows = ",".join(
        f'({42 + i % 3}, \'page.view\', \'{{"path": "/p/{i}", "n": {i}}}\')'
        for i in range(start, start + BULK_ROWS)
    )
    return f"INSERT INTO saas.events (tenant_id, kind, body) VALUES {rows}"


def workload() -> list[str]:
    """The statements, in order, from an empty server."""
    statements = [f"CREATE DATABASE {quote_name(d)}" for d in dict.fromkeys(d for d, _ in SCHEMAS)]
    for database, text in (*SCHEMAS, *EXTRA_SCHEMAS):
        statements += [f"USE {quote_name(database)}", text]
    statements += ["USE shop", *TRIGGERS]
    statements += [
        # --- the shop: keys and timestamps left to the server ---
        "INSERT INTO shop.customers (email, name) VALUES ('Ann@Example.com', 'Ann'),"
        " ('bob@example.com', 'Bob'), ('CAROL@example.com', 'Carol')",
        "INSERT INTO shop.products (sku, title, description, price, weight, stock) VALUES"
        " ('SKU-0001', 'Kettle', 'A steel kettle', 29.90, 1.25, 10),"
        " ('SKU-0002', 'Teapot', NULL, 19.00, 0.8, 3), ('SKU-0003', 'Mug', 'Blue', 4.50, NULL, 100)",
        "INSERT INTO shop.orders (customer_id, total) VALUES (1, 34.40), (2, 19.00)",
        "INSERT INTO shop.orders (customer_id, total, note) VALUES (1, 4.50, 'gift')",
        "INSERT INTO shop.order_items VALUES (1, 1000, 1, 29.90), (1, 1002, 1, 4.50),"
        " (2, 1001, 1, 19.00), (3, 1002, 1, 4.50)",
        "INSERT INTO shop.payments (order_id, amount, method) VALUES (1, 34.40, 'card')",
        "UPDATE shop.orders SET status = 'paid' WHERE id = 1",
        "UPDATE shop.payments SET paid_at = '2024-05-06 07:08:09' WHERE order_id = 1",
        "INSERT INTO shop.reviews (product_id, rating, body) VALUES (1000, 5, 'Très bien ☕'),"
        " (1001, 3, NULL)",
        "INSERT INTO shop.cart_items (cart_id, line, sku, quantity, unit_price, discount_pct)"
        " VALUES (7, 1, 'SKU-0001', 2, 29.90, 10), (7, 2, 'SKU-0003', 4, 4.50, 0)",
        "INSERT INTO shop.cart_items (cart_id, line, sku, unit_price, added_by)"
        " VALUES (8, 1, 'SKU-0002', 19.00, 'app')",
        "UPDATE shop.cart_items SET quantity = quantity + 1 WHERE cart_id = 7",
        "INSERT INTO shop.sales_by_month (month_no, revenue, orders) VALUES (202312, 100.50, 3),"
        " (202406, 2500.00, 40), (202601, 0, 0)",
        "INSERT INTO shop.sales_by_month (month_no) VALUES (202407)",
        "UPDATE shop.customers SET name = 'Bobby' WHERE id = 2",
        "UPDATE shop.products SET stock = stock - 1 WHERE sku IN ('SKU-0001', 'SKU-0003')",
        # --- the rental store: a bulk load, then everyday changes ---
        "INSERT INTO rental.actor (first_name, last_name) VALUES ('PENELOPE', 'GUINESS'),"
        " ('NICK', 'WAHLBERG'), ('ED', 'CHASE')",
        *(_bulk_films(1 + n * BULK_ROWS) for n in range(BULK_STATEMENTS)),
        "INSERT INTO rental.film_actor (actor_id, film_id) VALUES (1, 1), (1, 2), (2, 1), (3, 3)",
        "INSERT INTO rental.inventory (film_id, store_id) SELECT film_id, 1 + film_id % 2"
        " FROM rental.film WHERE film_id <= 20",
        "INSERT INTO rental.address (address, district, postal_code, phone) VALUES"
        " ('47 MySakila Drive', 'Alberta', NULL, '555-0100'),"
        " ('28 MySQL Boulevard', 'QLD', '4000', '555-0101')",
        "INSERT INTO rental.staff (username, password, store_id) VALUES ('Mike', 'secret', 1),"
        " ('Jon', NULL, 2)",
        "INSERT INTO rental.customer (store_id, first_name, last_name, email) VALUES"
        " (1, 'MARY', 'SMITH', 'mary@example.org'), (2, 'PATRICIA', 'JOHNSON', NULL)",
        "INSERT INTO rental.rental (rental_date, inventory_id, customer_id, staff_id) VALUES"
        " ('2005-05-24 22:53:30', 1, 1, 1), ('2005-05-24 22:54:33', 2, 2, 2),"
        " ('2005-05-25 01:02:03', 3, 1, 1)",
        "INSERT INTO rental.payment (customer_id, staff_id, rental_id, amount, payment_date)"
        " VALUES (1, 1, 1, 2.99, '2005-05-25 11:30:37'), (2, 2, 2, 0.99, '2005-05-28 10:35:23')",
        "UPDATE rental.rental SET return_date = '2005-05-26 22:04:30' WHERE rental_id = 1",
        "UPDATE rental.film SET rental_rate = 2.99 WHERE film_id % 7 = 0",
        "DELETE FROM rental.film_actor WHERE actor_id = 3",
        ALTER,
        "INSERT INTO rental.film (title, audience) VALUES ('AFTER THE ALTER', 'adults')",
        "INSERT INTO rental.film (title) VALUES ('DEFAULT AUDIENCE')",
        "UPDATE rental.film SET audience = 'kids' WHERE rating = 'G' AND film_id < 50",
        "DELETE FROM rental.film WHERE film_id BETWEEN 900 AND 950",
        # --- the SaaS: UUID/INET, JSON, bulk events ---
        "INSERT INTO saas.tenants (slug, plan, settings) VALUES ('acme', 'pro', '{\"seats\": 10}'),"
        " ('globex', DEFAULT, NULL), ('initech', 'enterprise', '{}')",
        "INSERT INTO saas.users (tenant_id, email, password_hash, last_login_at) VALUES"
        " (42, 'a@acme.test', unhex(sha2('a', 256)), '2024-01-02 03:04:05.123456'),"
        " (43, 'b@globex.test', unhex(sha2('b', 256)), NULL)",
        "INSERT INTO saas.api_keys (tenant_id, token, scopes, expires_on) VALUES"
        " (42, x'00ff10', 'read,write', '2030-01-01'), (43, x'abcdef', DEFAULT, NULL)",
        "UPDATE saas.api_keys SET revoked = 1 WHERE tenant_id = 43",
        "INSERT INTO saas.invoices (tenant_id, number, amount_cents, tax_cents) VALUES"
        " (42, 'INV-1', 10000, 2000), (43, 'INV-2', 500, 0), (44, 'INV-3', 0, 0)",
        "UPDATE saas.invoices SET tax_cents = 2100 WHERE number = 'INV-1'",
        *(_bulk_events(n * BULK_ROWS) for n in range(BULK_STATEMENTS)),
        "DELETE FROM saas.events WHERE id % 10 = 3",
        "INSERT INTO saas.feature_flags (name, enabled, rollout, rules) VALUES"
        " ('new-ui', TRUE, 0.25, '[1, 2]'), ('beta', DEFAULT, DEFAULT, NULL)",
        "INSERT INTO saas.sessions (user_id, client_ip, proxy_ip) VALUES"
        " (1, '2001:db8::1', '192.0.2.1'), (2, '::ffff:198.51.100.7', NULL)",
        "INSERT INTO saas.sessions VALUES"
        " ('6ccd780c-baba-1026-9564-5b8c656024db', 1, '::1', '10.0.0.1', DEFAULT)",
        "UPDATE saas.sessions SET proxy_ip = '203.0.113.9' WHERE user_id = 2",
        # --- the ORM tables ---
        "INSERT INTO orm.django_migrations (app, name, applied) VALUES"
        " ('auth', '0001_initial', '2024-01-01 00:00:00.000001')",
        "INSERT INTO orm.auth_user (password, is_superuser, username, email, date_joined) VALUES"
        " ('pbkdf2$x', 1, 'admin', 'admin@example.com', '2024-01-01 00:00:00')",
        "INSERT INTO orm.posts (author_id, title, slug, createdAt, updatedAt) VALUES"
        " (1, 'Hello', 'hello', '2024-01-01', '2024-01-02')",
        "UPDATE orm.posts SET views = views + 10, published = 1 WHERE slug = 'hello'",
        "INSERT INTO orm.users (name, email, password, created_at) VALUES"
        " ('Ann', 'ann@example.com', 'h', '2024-02-03 04:05:06')",
        "INSERT INTO orm.schema_migrations VALUES ('20240101000000'), ('20240102000000')",
        "DELETE FROM orm.schema_migrations WHERE version = '20240101000000'",
        "INSERT INTO orm.ar_internal_metadata VALUES ('environment', 'test', NOW(6), NOW(6))",
        "INSERT INTO orm.hibernate_sequence VALUES (1)",
        "UPDATE orm.hibernate_sequence SET next_val = next_val + 50",
    ]
    return statements


def capture_realistic(server: MariaDBServer) -> list[Path]:
    """Run :func:`workload` on ``server`` (started empty with :data:`CAPTURE_OPTIONS`) from a
    fresh binlog and return its binlog files (the last one closed)."""
    connection = server.connect(autocommit=True)
    try:
        cursor = connection.cursor()
        cursor.execute("RESET MASTER")
        for statement in workload():
            cursor.execute(statement)
        cursor.execute("FLUSH BINARY LOGS")
    finally:
        connection.close()
    return server.binlog_files()
