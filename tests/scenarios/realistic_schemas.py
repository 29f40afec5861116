"""Realistic schemas for the table grammar: each CREATE as people, ORMs and dump tools write it
(for tests/scenarios/test_table_grammar.py, which runs them on a real MariaDB 10.11)."""

from __future__ import annotations

# (database, CREATE TABLE text), in an order that satisfies the foreign keys.
SCHEMAS: tuple[tuple[str, str], ...] = (
    # --- a shop ------------------------------------------------------------------------
    (
        "shop",
        """CREATE TABLE IF NOT EXISTS customers (
            id INT UNSIGNED NOT NULL AUTO_INCREMENT,
            email VARCHAR(190) NOT NULL COMMENT 'login',
            name VARCHAR(100) NOT NULL DEFAULT '',
            is_active BOOLEAN NOT NULL DEFAULT TRUE,
            created_at TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP,
            updated_at TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP ON UPDATE CURRENT_TIMESTAMP,
            PRIMARY KEY (id),
            UNIQUE KEY uq_email (email),
            KEY idx_name (name(20))
        ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COMMENT='shop customers'""",
    ),
    (
        "shop",
        """CREATE TABLE products (
            id INTEGER NOT NULL AUTO_INCREMENT PRIMARY KEY,
            sku CHAR(12) NOT NULL,
            title VARCHAR(200) NOT NULL,
            description TEXT,
            price DECIMAL(10,2) NOT NULL CHECK (price >= 0),
            weight REAL,
            stock SMALLINT UNSIGNED NOT NULL DEFAULT 0,
            UNIQUE INDEX (sku),
            FULLTEXT KEY ft_text (title, description)
        ) ENGINE=InnoDB AUTO_INCREMENT=1000 DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci""",
    ),
    (
        "shop",
        """CREATE TABLE orders (
            id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT,
            customer_id INT UNSIGNED NOT NULL,
            status ENUM('new','paid','shipped','cancelled') NOT NULL DEFAULT 'new',
            total DECIMAL(12,2) NOT NULL DEFAULT 0.00,
            placed_at DATETIME(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
            note VARCHAR(255) DEFAULT NULL,
            PRIMARY KEY (id),
            KEY idx_customer (customer_id) USING BTREE,
            KEY idx_status_placed (status, placed_at),
            CONSTRAINT fk_orders_customer FOREIGN KEY (customer_id) REFERENCES customers (id)
                ON DELETE CASCADE ON UPDATE CASCADE,
            CONSTRAINT chk_total CHECK (total >= 0)
        ) ENGINE=InnoDB ROW_FORMAT=DYNAMIC""",
    ),
    (
        "shop",
        """CREATE TABLE order_items (
            order_id BIGINT UNSIGNED NOT NULL,
            product_id INT NOT NULL,
            quantity INT NOT NULL DEFAULT 1,
            unit_price DECIMAL(10,2) NOT NULL,
            PRIMARY KEY (order_id, product_id),
            KEY product_id (product_id),
            FOREIGN KEY (order_id) REFERENCES orders (id),
            FOREIGN KEY (product_id) REFERENCES products (id) ON DELETE RESTRICT
        ) ENGINE=InnoDB""",
    ),
    (
        "shop",
        """CREATE TABLE payments (
            id SERIAL,
            order_id BIGINT UNSIGNED NOT NULL,
            amount DECIMAL(12,2) NOT NULL,
            method VARCHAR(20) CHARACTER SET ascii NOT NULL,
            paid_at TIMESTAMP NULL DEFAULT NULL,
            KEY (order_id)
        ) ENGINE=InnoDB DEFAULT CHARSET=utf8 ROW_FORMAT=COMPRESSED KEY_BLOCK_SIZE=8""",
    ),
    (
        "shop",
        """CREATE TABLE reviews (
            id INT AUTO_INCREMENT PRIMARY KEY,
            product_id INT NOT NULL,
            rating TINYINT NOT NULL CHECK (rating BETWEEN 1 AND 5),
            body TEXT CHARACTER SET utf8mb4 COLLATE utf8mb4_bin,
            KEY idx_product (product_id) COMMENT 'lookups by product'
        ) ENGINE=InnoDB PAGE_COMPRESSED=1 COMMENT='moderated' ROW_FORMAT=DYNAMIC""",
    ),
    (
        "shop",
        """CREATE TABLE cart_items (
            cart_id BIGINT UNSIGNED NOT NULL,
            line SMALLINT UNSIGNED NOT NULL,
            sku CHAR(12) NOT NULL,
            quantity INT NOT NULL DEFAULT 1,
            unit_price DECIMAL(10,2) NOT NULL,
            discount_pct TINYINT NOT NULL DEFAULT 0,
            line_total DECIMAL(12,2) AS (quantity * unit_price * (100 - discount_pct) / 100)
                PERSISTENT,
            label VARCHAR(40) GENERATED ALWAYS AS (concat(sku, ' x', quantity)) VIRTUAL,
            added_by VARCHAR(30) INVISIBLE DEFAULT 'web',
            PRIMARY KEY (cart_id, line),
            KEY idx_line_total (line_total)
        ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4""",
    ),
    (
        "shop",
        """CREATE TABLE sales_by_month (
            id INT NOT NULL AUTO_INCREMENT,
            month_no INT NOT NULL,
            revenue DECIMAL(14,2) NOT NULL DEFAULT (0.00 + 0),
            orders INT UNSIGNED NOT NULL DEFAULT (2 * 0),
            avg_order DECIMAL(12,4) AS (revenue / (orders + 1)) VIRTUAL,
            PRIMARY KEY (id, month_no)
        ) ENGINE=InnoDB
        PARTITION BY RANGE (month_no) (
            PARTITION p2023 VALUES LESS THAN (202401),
            PARTITION p2024 VALUES LESS THAN (202501),
            PARTITION pmax VALUES LESS THAN MAXVALUE
        )""",
    ),
    # --- a rental store ----------------------------------------------------------------
    (
        "rental",
        """CREATE TABLE actor (
            actor_id SMALLINT UNSIGNED NOT NULL AUTO_INCREMENT,
            first_name VARCHAR(45) NOT NULL,
            last_name VARCHAR(45) NOT NULL,
            last_update TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP ON UPDATE CURRENT_TIMESTAMP,
            PRIMARY KEY (actor_id),
            KEY idx_actor_last_name (last_name)
        ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4""",
    ),
    (
        "rental",
        """CREATE TABLE film (
            film_id SMALLINT UNSIGNED NOT NULL AUTO_INCREMENT,
            title VARCHAR(128) NOT NULL,
            description TEXT DEFAULT NULL,
            release_year YEAR DEFAULT NULL,
            rental_duration TINYINT UNSIGNED NOT NULL DEFAULT 3,
            rental_rate DECIMAL(4,2) NOT NULL DEFAULT 4.99,
            length SMALLINT UNSIGNED DEFAULT NULL,
            rating ENUM('G','PG','PG-13','R','NC-17') DEFAULT 'G',
            special_features SET('Trailers','Commentaries','Deleted Scenes','Behind the Scenes'),
            last_update TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP ON UPDATE CURRENT_TIMESTAMP,
            PRIMARY KEY (film_id),
            KEY idx_title (title)
        ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4""",
    ),
    (
        "rental",
        """CREATE TABLE film_actor (
            actor_id SMALLINT UNSIGNED NOT NULL,
            film_id SMALLINT UNSIGNED NOT NULL,
            last_update TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP ON UPDATE CURRENT_TIMESTAMP,
            PRIMARY KEY (actor_id, film_id),
            KEY idx_fk_film_id (film_id),
            CONSTRAINT fk_film_actor_actor FOREIGN KEY (actor_id) REFERENCES actor (actor_id)
                ON UPDATE CASCADE,
            CONSTRAINT fk_film_actor_film FOREIGN KEY (film_id) REFERENCES film (film_id)
                ON UPDATE CASCADE
        ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4""",
    ),
    (
        "rental",
        """CREATE TABLE inventory (
            inventory_id MEDIUMINT UNSIGNED NOT NULL AUTO_INCREMENT,
            film_id SMALLINT UNSIGNED NOT NULL,
            store_id TINYINT UNSIGNED NOT NULL,
            last_update TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP ON UPDATE CURRENT_TIMESTAMP,
            PRIMARY KEY (inventory_id),
            KEY idx_fk_film_id (film_id),
            KEY idx_store_id_film_id (store_id, film_id),
            CONSTRAINT fk_inventory_film FOREIGN KEY (film_id) REFERENCES film (film_id)
                ON UPDATE CASCADE
        ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4""",
    ),
    (
        "rental",
        """CREATE TABLE rental (
            rental_id INT NOT NULL AUTO_INCREMENT,
            rental_date DATETIME NOT NULL,
            inventory_id MEDIUMINT UNSIGNED NOT NULL,
            customer_id SMALLINT UNSIGNED NOT NULL,
            return_date DATETIME DEFAULT NULL,
            staff_id TINYINT UNSIGNED NOT NULL,
            last_update TIMESTAMP NOT NULL DEFAULT now() ON UPDATE now(),
            PRIMARY KEY (rental_id),
            UNIQUE KEY (rental_date, inventory_id, customer_id),
            KEY idx_fk_inventory_id (inventory_id),
            CONSTRAINT fk_rental_inventory FOREIGN KEY (inventory_id)
                REFERENCES inventory (inventory_id) ON UPDATE CASCADE
        ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4""",
    ),
    (
        "rental",
        """CREATE TABLE address (
            address_id SMALLINT UNSIGNED NOT NULL AUTO_INCREMENT,
            address VARCHAR(50) NOT NULL,
            district VARCHAR(20) NOT NULL,
            postal_code VARCHAR(10) DEFAULT NULL,
            phone VARCHAR(20) NOT NULL,
            PRIMARY KEY (address_id),
            KEY idx_postal (postal_code) USING HASH
        ) ENGINE=MyISAM DEFAULT CHARSET=latin1""",
    ),
    (
        "rental",
        """CREATE TABLE customer (
            customer_id SMALLINT UNSIGNED NOT NULL AUTO_INCREMENT,
            store_id TINYINT UNSIGNED NOT NULL,
            first_name VARCHAR(45) NOT NULL,
            last_name VARCHAR(45) NOT NULL,
            full_name VARCHAR(91) AS (concat(first_name, ' ', last_name)) VIRTUAL,
            email VARCHAR(50) DEFAULT NULL,
            active BOOLEAN NOT NULL DEFAULT TRUE,
            create_date DATETIME NOT NULL DEFAULT '2006-02-14 22:04:36',
            last_update TIMESTAMP NULL DEFAULT CURRENT_TIMESTAMP ON UPDATE CURRENT_TIMESTAMP,
            PRIMARY KEY (customer_id),
            KEY idx_fk_store_id (store_id),
            KEY idx_last_name (last_name),
            KEY idx_full_name (full_name(20))
        ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4""",
    ),
    (
        "rental",
        """CREATE TABLE staff (
            staff_id TINYINT UNSIGNED NOT NULL AUTO_INCREMENT,
            username VARCHAR(16) NOT NULL,
            password VARCHAR(40) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin INVISIBLE
                DEFAULT NULL,
            store_id TINYINT UNSIGNED NOT NULL,
            active BOOLEAN NOT NULL DEFAULT TRUE,
            last_update TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP ON UPDATE CURRENT_TIMESTAMP,
            PRIMARY KEY (staff_id)
        ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4""",
    ),
    (
        "rental",
        """CREATE TABLE payment (
            payment_id SMALLINT UNSIGNED NOT NULL AUTO_INCREMENT,
            customer_id SMALLINT UNSIGNED NOT NULL,
            staff_id TINYINT UNSIGNED NOT NULL,
            rental_id INT DEFAULT NULL,
            amount DECIMAL(5,2) NOT NULL,
            amount_cents INT AS (amount * 100) STORED,
            payment_date DATETIME NOT NULL,
            last_update TIMESTAMP NULL DEFAULT CURRENT_TIMESTAMP ON UPDATE CURRENT_TIMESTAMP,
            PRIMARY KEY (payment_id),
            KEY idx_fk_staff_id (staff_id),
            KEY idx_fk_customer_id (customer_id)
        ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4""",
    ),
    # --- a multi-tenant SaaS -----------------------------------------------------------
    (
        "saas",
        """CREATE TABLE tenants (
            id BIGINT NOT NULL AUTO_INCREMENT,
            slug VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
            plan ENUM('free','pro','enterprise') NOT NULL DEFAULT 'free',
            settings JSON,
            created_at DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
            PRIMARY KEY (id),
            UNIQUE KEY uq_slug (slug)
        ) ENGINE=InnoDB AUTO_INCREMENT=42 DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_general_ci""",
    ),
    (
        "saas",
        """CREATE TABLE users (
            tenant_id BIGINT NOT NULL,
            id BIGINT NOT NULL AUTO_INCREMENT,
            email VARCHAR(255) NOT NULL,
            password_hash BINARY(32) NOT NULL,
            role VARCHAR(16) NOT NULL DEFAULT 'member' COMMENT 'owner, admin or member',
            last_login_at TIMESTAMP(6) NULL,
            PRIMARY KEY (id),
            UNIQUE KEY uq_tenant_email (tenant_id, email(191)),
            CONSTRAINT fk_users_tenant FOREIGN KEY (tenant_id) REFERENCES tenants (id)
                ON DELETE CASCADE
        ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4""",
    ),
    (
        "saas",
        """CREATE TABLE api_keys (
            id INT UNSIGNED NOT NULL AUTO_INCREMENT,
            tenant_id BIGINT NOT NULL,
            token VARBINARY(64) NOT NULL,
            scopes SET('read','write','admin') NOT NULL DEFAULT 'read',
            revoked BOOL NOT NULL DEFAULT 0,
            expires_on DATE DEFAULT NULL,
            PRIMARY KEY (id),
            UNIQUE KEY uq_token (token),
            KEY idx_tenant (tenant_id, revoked)
        ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 ROW_FORMAT=DYNAMIC COMMENT='hashed API keys'""",
    ),
    (
        "saas",
        """CREATE TABLE audit_log (
            id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT,
            tenant_id BIGINT NOT NULL,
            actor VARCHAR(100) DEFAULT NULL,
            action VARCHAR(50) NOT NULL,
            payload LONGTEXT,
            at TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
            PRIMARY KEY (id, tenant_id),
            KEY idx_tenant_at (tenant_id, at DESC)
        ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 ROW_FORMAT=COMPACT""",
    ),
    (
        "saas",
        """CREATE TABLE invoices (
            id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT,
            tenant_id BIGINT NOT NULL,
            number VARCHAR(20) NOT NULL,
            amount_cents BIGINT NOT NULL DEFAULT 0,
            tax_cents BIGINT NOT NULL DEFAULT 0,
            total_cents BIGINT AS (amount_cents + tax_cents) PERSISTENT,
            currency CHAR(3) NOT NULL DEFAULT 'EUR',
            issued_on DATE NOT NULL DEFAULT '2024-01-01',
            PRIMARY KEY (id, tenant_id),
            KEY idx_total (total_cents) USING BTREE
        ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4
        PARTITION BY KEY (tenant_id) PARTITIONS 4""",
    ),
    (
        "saas",
        """CREATE TABLE events (
            id BIGINT NOT NULL AUTO_INCREMENT,
            tenant_id BIGINT NOT NULL,
            kind VARCHAR(40) NOT NULL,
            body MEDIUMTEXT,
            at DATETIME(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6),
            PRIMARY KEY (id),
            FULLTEXT KEY ft_body (body)
        ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4
        PARTITION BY HASH (id) PARTITIONS 3""",
    ),
    (
        "saas",
        """CREATE TABLE feature_flags (
            id INTEGER NOT NULL AUTO_INCREMENT,
            name VARCHAR(64) CHARACTER SET utf8 NOT NULL,
            enabled BOOLEAN NOT NULL DEFAULT FALSE,
            rollout REAL NOT NULL DEFAULT 0,
            weight DECIMAL(6,3) NOT NULL DEFAULT (1 / 8),
            rules JSON,
            PRIMARY KEY (id),
            UNIQUE KEY uq_name (name) USING BTREE
        ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4""",
    ),
    # --- ORM-style DDL -----------------------------------------------------------------
    (
        "orm",
        """CREATE TABLE `django_migrations` (
            `id` bigint(20) NOT NULL AUTO_INCREMENT,
            `app` varchar(255) NOT NULL,
            `name` varchar(255) NOT NULL,
            `applied` datetime(6) NOT NULL,
            PRIMARY KEY (`id`)
        ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci""",
    ),
    (
        "orm",
        """CREATE TABLE `auth_user` (
            `id` int(11) NOT NULL AUTO_INCREMENT,
            `password` varchar(128) NOT NULL,
            `last_login` datetime(6) DEFAULT NULL,
            `is_superuser` tinyint(1) NOT NULL,
            `username` varchar(150) NOT NULL,
            `email` varchar(254) NOT NULL,
            `date_joined` datetime(6) NOT NULL,
            PRIMARY KEY (`id`),
            UNIQUE KEY `username` (`username`)
        ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci""",
    ),
    (
        "orm",
        """CREATE TABLE `posts` (
            `id` INT NOT NULL AUTO_INCREMENT,
            `author_id` INT NOT NULL,
            `title` VARCHAR(255) NOT NULL,
            `slug` VARCHAR(255) NOT NULL,
            `published` TINYINT(1) NOT NULL DEFAULT '0',
            `views` INT UNSIGNED NOT NULL DEFAULT '0',
            `createdAt` DATETIME NOT NULL,
            `updatedAt` DATETIME NOT NULL,
            PRIMARY KEY (`id`),
            UNIQUE INDEX `posts_slug_unique` (`slug`),
            INDEX `posts_author_id_foreign` (`author_id`),
            CONSTRAINT `posts_author_id_foreign` FOREIGN KEY (`author_id`)
                REFERENCES `auth_user` (`id`) ON DELETE CASCADE
        ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci""",
    ),
    (
        "orm",
        """CREATE TABLE `users` (
            `id` bigint unsigned NOT NULL AUTO_INCREMENT,
            `name` varchar(255) NOT NULL,
            `email` varchar(255) NOT NULL,
            `email_verified_at` timestamp NULL DEFAULT NULL,
            `password` varchar(255) NOT NULL,
            `remember_token` varchar(100) DEFAULT NULL,
            `created_at` timestamp NULL DEFAULT NULL,
            `updated_at` timestamp NULL DEFAULT NULL,
            PRIMARY KEY (`id`),
            UNIQUE KEY `users_email_unique` (`email`)
        ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci""",
    ),
    (
        "orm",
        """CREATE TABLE `schema_migrations` (
            `version` varchar(255) NOT NULL,
            PRIMARY KEY (`version`)
        ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_general_ci""",
    ),
    (
        "orm",
        """CREATE TABLE `ar_internal_metadata` (
            `key` varchar(255) NOT NULL,
            `value` varchar(255) DEFAULT NULL,
            `created_at` datetime(6) NOT NULL,
            `updated_at` datetime(6) NOT NULL,
            PRIMARY KEY (`key`)
        ) ENGINE=InnoDB""",
    ),
    (
        "orm",
        """CREATE TABLE `hibernate_sequence` (`next_val` bigint(20) DEFAULT NULL)
        ENGINE=InnoDB""",
    ),
)
